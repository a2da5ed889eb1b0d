#!/usr/bin/env bash
# tests/docker/test_fleet.sh - the compose profile `fleet` (docker/compose.fleet.yaml)
# from outside: 3 NATS servers in a cluster with JetStream, 3 sim nodes, 2
# relays, each with its own broker user (docker/fleet/nats.conf).
#
# Brings the fleet up on the image test_docker.sh built (it builds nothing),
# then checks: every node and relay sees the 3 nodes; the bucket and the
# snapshots' stream are kept in 3 copies; the broker refuses a relay's write
# to the bucket or on another relay's subject, and a node's write of another
# node's record; 3 rooms made through a relay (POST /api/rooms, with the
# administrator's token; refused without it) are spread over the nodes; a
# viewer through a relay gets frames that decode; `podman kill` of the
# node that holds a room: another node holds it (a new claim) and a viewer
# through a relay gets its frames again; `podman kill` of a NATS server that
# leads neither stream: no room moves, every room steps on and is saved
# again; brought back, that server is a current replica of both streams.
# Invites: every node signs with the one key the test makes (the compose
# file's secret `fleet_secret`); an owner's invite made through relay 1
# grants its role through relay 2 (REST and WebSocket) and through a node
# that does not hold its room (a forged one is refused), after its room's
# holder is killed, and after its room's holder is drained (the room moves
# to another node).
# Nothing is timed: each state is waited for, a deadline only turns a hang
# into a failure (the wall times are printed as notes).  Tears everything
# down (containers, their volumes, the pod, the network) even when a check
# fails.  One line per check, "ok - ..." or "not ok - ...", then
# "N passed, N failed" as the last line; exit status 1 on any failure.
#
# Run by test_docker.sh (`make test-docker`) after its own checks; alone:
#   sudo FLUID_TEST_IMAGE=localhost/fluid-server:test bash tests/docker/test_fleet.sh
# Environment: BUILD (build), logs go to $BUILD/docker/fleet-*.log;
# FLUID_TEST_IMAGE (localhost/fluid-server:test), which must exist.
# Needs openssl (the invites' key).
# shellcheck disable=SC2016 # a NATS subject's $ is not the shell's
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1
if [ "$(id -u)" -ne 0 ]; then
  exec sudo --preserve-env=BUILD,FLUID_TEST_IMAGE,PATH bash "$0" "$@"
fi
BUILD=${BUILD:-build}
logdir="$repo/$BUILD/docker"
mkdir -p "$logdir"
IMAGE=${FLUID_TEST_IMAGE:-localhost/fluid-server:test}
COMPOSE_FILE=docker/compose.fleet.yaml
PROJECT="fluidfleet$$"
export CONTAINERS_CONF="$repo/docker/containers.conf"
WAIT=60 # s: the deadline of each wait

# shellcheck source=tests/docker/checks.sh
. "$repo/tests/docker/checks.sh"
started=0
keydir=
t0=$(date +%s)
# until_ok SECONDS COMMAND...: runs COMMAND every half second until it
# succeeds (0) or SECONDS have passed (1).
until_ok() {
  local end=$(($(date +%s) + $1))
  shift
  while :; do
    "$@" && return 0
    [ "$(date +%s)" -ge "$end" ] && return 1
    sleep 0.5
  done
}

compose() {
  podman-compose --no-ansi -p "$PROJECT" -f "$COMPOSE_FILE" "$@" >>"$logdir/fleet-compose.log" 2>&1
}
container() { echo "${PROJECT}_$1_1"; } # podman-compose 1.0.3 naming

# cleanup: every container of the project with its volumes, the pod, the
# named volumes and the network (podman-compose 1.0.3's down leaves the
# network, and the anonymous volumes of containers it removes).
cleanup() {
  [ "$started" = 1 ] || return 0
  {
    for s in nats-1 nats-2 nats-3 node-1 node-2 node-3 relay-1 relay-2; do podman logs "$(container "$s")" >"$logdir/fleet-$s.log" 2>&1; done
    # killed at once (the test needs no graceful stop), then compose's down
    # for the named volumes
    podman ps -aq --filter "label=io.podman.compose.project=$PROJECT" | xargs -r podman rm -f -v -t 0
    compose down -t 0 -v
    podman pod rm -f "pod_$PROJECT"
    podman volume ls -q --filter "name=^${PROJECT}_" | xargs -r podman volume rm -f
    podman network rm -f "${PROJECT}_default"
  } >>"$logdir/fleet-compose.log" 2>&1
  started=0
}

finish() {
  trap - EXIT INT TERM
  cleanup
  [ -n "$keydir" ] && rm -rf "$keydir"
  note "fleet: $(($(date +%s) - t0)) s; logs in $logdir/fleet-*.log"
  summary_exit
}
trap finish EXIT
trap 'not_ok "interrupted"; exit 1' INT TERM

# json FIELD: prints FIELD of the JSON document on stdin (nothing if absent).
json() {
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let v;try{v=JSON.parse(s)}catch{process.exit(1)}
for(const k of process.argv[1].split("."))v=v==null?undefined:v[k];
if(v!==undefined)console.log(typeof v==="object"?JSON.stringify(v):String(v))})' "$1"
}
# jsq EXPR: evaluates EXPR with d the JSON document on stdin, prints the
# result (a string as it is, anything else as JSON); fails when it throws or
# is false, null or undefined.
jsq() {
  node -e 'let s="";process.stdin.on("data",x=>s+=x).on("end",()=>{let v;try{const d=JSON.parse(s);v=eval(process.argv[1])}catch{process.exit(1)}
if(v===undefined||v===null||v===false)process.exit(1);console.log(typeof v==="string"?v:JSON.stringify(v))})' "$1"
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# a letter first: the brokers read each password as a config value
# (docker/fleet/nats.conf), and hex that begins "6e1..." parses as a number
secret() { printf 'p%s' "$(openssl rand -hex 16)"; }
quiet() { "$@" >/dev/null 2>&1; }

podman image exists "$IMAGE" || abort "the image $IMAGE exists (make test-docker builds it)"
command -v podman-compose >/dev/null || abort "podman-compose is installed (scripts/deps.sh docker)"
[ -d tests/server/node_modules ] || abort "the WebSocket probe's modules are installed (make tests/server/node_modules/.installed)"
command -v openssl >/dev/null || abort "openssl is installed (the invites' key)"

# --- up -------------------------------------------------------------------------
TOKEN=$(secret)
export FLUID_IMAGE=$IMAGE FLUID_TOKEN=$TOKEN
for user in NODE1 NODE2 NODE3 RELAY1 RELAY2; do
  export "FLUID_NATS_${user}_PASS=$(secret)"
done
# The nodes' one invite key, made as the compose file's header says: 64 hex
# digits, mode 0400, owned by the server's user (uid 10001).
keydir=$(mktemp -d)
(umask 077 && openssl rand -hex 32 >"$keydir/fleet-secret.key") || abort "openssl rand makes the invites' key"
if ! chown 10001:10001 "$keydir/fleet-secret.key" || ! chmod 0400 "$keydir/fleet-secret.key"; then
  abort "the invites' key is the server's user's (uid 10001), mode 0400"
fi
export FLUID_FLEET_SECRET_FILE=$keydir/fleet-secret.key
# Small worlds, one simulation thread each (three nodes share the machine);
# an unwatched room steps on (the NATS server's kill is checked on its ticks).
export FLUID_PARTICLES=1000 FLUID_THREADS=1 FLUID_ROOM_IDLE_S=0
unset FLUID_SCENE FLUID_STEP_BUDGET FLUID_FLEET_SAVE_S FLUID_ALLOW_ORIGIN FLUID_RELAYS
declare -A NODE_PORT
R1=$(free_port) R2=$(free_port)
NODE_PORT[1]=$(free_port) NODE_PORT[2]=$(free_port) NODE_PORT[3]=$(free_port)
export FLUID_FLEET_RELAY1_PORT=$R1 FLUID_FLEET_RELAY2_PORT=$R2 FLUID_FLEET_BIND=127.0.0.1
export FLUID_FLEET_NODE1_PORT=${NODE_PORT[1]} FLUID_FLEET_NODE2_PORT=${NODE_PORT[2]} FLUID_FLEET_NODE3_PORT=${NODE_PORT[3]}
profile=()
podman-compose --help 2>&1 | grep -q -- '--profile' && profile=(--profile fleet)
: >"$logdir/fleet-compose.log"
started=1
tu=$(date +%s)
check "podman-compose -f $COMPOSE_FILE${profile[*]:+ ${profile[*]}} up (project $PROJECT; relays on $R1, $R2; nodes on ${NODE_PORT[1]}, ${NODE_PORT[2]}, ${NODE_PORT[3]})" \
  compose "${profile[@]}" up -d --no-build

# get PORT PATH: the body of a GET on a host port (fails on a non-2xx status).
get() { curl -sS --fail --max-time 15 "http://127.0.0.1:$1$2"; }
# fleet PORT: GET /api/fleet there.
fleet() { get "$1" /api/fleet; }
three_live() { fleet "$1" 2>/dev/null | jsq 'd.connected && d.nodes.filter((n) => n.live).length === 3' >/dev/null; }
all_see_three() {
  local p
  for p in "$R1" "$R2" "${NODE_PORT[1]}" "${NODE_PORT[2]}" "${NODE_PORT[3]}"; do three_live "$p" || return 1; done
}
if until_ok 120 all_see_three; then
  ok "every node and relay is connected and sees the 3 live nodes ($(($(date +%s) - tu)) s after up)"
else
  for s in nats-1 node-1 relay-1; do podman logs "$(container "$s")" 2>&1 | tail -n 5 | sed "s/^/# $s: /"; done
  abort "every node and relay is connected and sees the 3 live nodes within 120 s"
fi
keyed() {
  local i
  for i in 1 2 3; do
    # not grep -q: it would stop reading at the first match, and podman logs fail writing (pipefail)
    podman logs "$(container "node-$i")" 2>&1 | grep 'invites: signed with the key in /run/secrets/fleet_secret' >/dev/null ||
      return 1
  done
}
check "every node signs invites with the fleet's key (/run/secrets/fleet_secret, from $FLUID_FLEET_SECRET_FILE)" keyed

# --- the broker: JetStream's copies, the users' permissions ----------------------
# jsz SERVER: the server's JetStream report (/jsz, on its loopback only).
jsz() {
  podman exec "$(container "$1")" bash -c 'exec 3<>/dev/tcp/127.0.0.1/8222
    printf "GET /jsz?accounts=true&streams=true HTTP/1.0\r\n\r\n" >&3; timeout 5 cat <&3' 2>/dev/null | sed '1,/^\r$/d'
}
# stream_of SERVER NAME: the stream's detail in that server's report.
stream_of() { jsz "$1" | jsq "(d.account_details || []).flatMap((a) => a.stream_detail || []).find((s) => s.name === '$2')"; }
# three_copies NAME: the stream's leader and, in the leader's own report
# (another server's may be behind), its 2 replicas, both current.
three_copies() {
  local l
  l=$(stream_of nats-1 "$1" | json cluster.leader) && [ -n "$l" ] || return 1
  stream_of "$l" "$1" | jsq 'd.cluster.replicas.length === 2 && d.cluster.replicas.every((r) => r.current)' >/dev/null
}
check "the fleet's bucket (stream KV_fluid_fleet) is kept on the 3 servers" until_ok "$WAIT" three_copies KV_fluid_fleet
check "the rooms' snapshots (stream FLUID_fleet_SNAP) are kept on the 3 servers" until_ok "$WAIT" three_copies FLUID_fleet_SNAP

# as USER PASSWORD_VARIABLE LINES: connects to nats-1 as USER (its password
# read from the server's own environment) and sends LINES (NATS protocol,
# \r\n-separated), then PING; prints what the server answers up to its PONG.
as() {
  podman exec -e "U=$1" -e "PV=$2" -e "L=$3" "$(container nats-1)" bash -c '
    exec 3<>/dev/tcp/127.0.0.1/4222
    printf "CONNECT {\"user\":\"%s\",\"pass\":\"%s\",\"verbose\":false}\r\n%bPING\r\n" "$U" "${!PV}" "$L" >&3
    while IFS= read -r -t 5 line <&3; do echo "$line"; [[ $line == PONG* ]] && break; done' 2>&1
}
refused() { [[ $1 == *"Permissions Violation for Publish to \"$2\""* ]]; }
out=$(as relay1 FLUID_NATS_RELAY1_PASS 'PUB $KV.fluid_fleet.room.x 2\r\n{}\r\n')
check "the broker refuses relay 1's write of a room's key (\$KV.fluid_fleet.room.x)" refused "$out" '$KV.fluid_fleet.room.x'
out=$(as relay1 FLUID_NATS_RELAY1_PASS 'PUB fluid.fleet.r.x.cmd.2 0\r\n\r\n')
check "the broker refuses relay 1's message on relay 2's command subject (fluid.fleet.r.x.cmd.2)" refused "$out" fluid.fleet.r.x.cmd.2
out=$(as node1 FLUID_NATS_NODE1_PASS 'PUB $KV.fluid_fleet.node.2 2\r\n{}\r\n')
check "the broker refuses node 1's write of node 2's record (\$KV.fluid_fleet.node.2)" refused "$out" '$KV.fluid_fleet.node.2'
out=$(as node1 FLUID_NATS_NODE1_PASS 'PUB $JS.API.STREAM.DELETE.KV_fluid_fleet 0\r\n\r\n')
check "the broker refuses node 1's request to delete the bucket's stream" refused "$out" '$JS.API.STREAM.DELETE.KV_fluid_fleet'
out=$(as node1 FLUID_NATS_NODE1_PASS 'PUB fluid.fleet.alive.2 2\r\n1\n\r\n')
check "the broker refuses node 1's heartbeat as node 2 (fluid.fleet.alive.2)" refused "$out" fluid.fleet.alive.2
out=$(as node1 FLUID_NATS_NODE1_PASS 'PUB fluid.fleet.ack.3.2 1\r\n1\r\n')
check "the broker refuses node 1's acknowledgement as node 2 (fluid.fleet.ack.3.2)" refused "$out" fluid.fleet.ack.3.2
out=$(as relay1 FLUID_NATS_NODE1_PASS '')
check "the broker refuses relay 1's user with node 1's password" grep -q "Authorization Violation" <<<"$out"
out=$(as relay1 FLUID_NATS_RELAY1_PASS 'SUB fluid.fleet.reply.1 1\r\n')
allowed() { [[ $out == *PONG* && $out != *-ERR* ]]; }
check "the broker lets relay 1 read its own replies (fluid.fleet.reply.1)" allowed
out=$(as relay1 FLUID_NATS_RELAY1_PASS 'SUB fluid.fleet.inbox.relay2.> 1\r\n')
check "the broker refuses relay 1 the REST answers sent to relay 2 (fluid.fleet.inbox.relay2.>)" \
  grep -q 'Permissions Violation for Subscription to "fluid.fleet.inbox.relay2.>"' <<<"$out"
out=$(as relay1 FLUID_NATS_RELAY1_PASS 'SUB _INBOX.node1.> 1\r\n')
check "the broker refuses relay 1 node 1's inboxes (_INBOX.node1.>)" \
  grep -q 'Permissions Violation for Subscription to "_INBOX.node1.>"' <<<"$out"

# --- rooms through a relay --------------------------------------------------------
# post PORT PATH BODY [TOKEN]: prints "STATUS BODY".
post() {
  local auth=()
  [ -n "${4:-}" ] && auth=(-H "Authorization: Bearer $4")
  curl -sS --max-time 130 -o "$logdir/fleet-post.out" -w '%{http_code}' "${auth[@]}" \
    -H 'content-type: application/json' --data "$3" "http://127.0.0.1:$1$2"
  echo " $(cat "$logdir/fleet-post.out" 2>/dev/null)"
}
r=$(post "$R2" /api/rooms '{"name": "nobody", "particles": 1000}')
check "POST /api/rooms through relay 2 without the administrator's token: 403 (${r%% *})" test "${r%% *}" = 403
ROOMS=(alpha beta gamma)
for room in "${ROOMS[@]}"; do
  r=$(post "$R1" /api/rooms "{\"name\": \"$room\", \"particles\": 1000}" "$TOKEN")
  check "POST /api/rooms '$room' through relay 1 with the token: 201, placed on node $(json node <<<"${r#* }")" \
    test "${r%% *}" = 201 -a -n "$(json node <<<"${r#* }")"
done
# held_all PORT: every room claimed (node and claim set) in that server's view.
held_all() {
  fleet "$1" 2>/dev/null | jsq "['alpha', 'beta', 'gamma'].every((n) => d.rooms.some((r) => r.name === n && r.node > 0 && r.claim > 0 && !r.orphaned))" >/dev/null
}
check "GET /api/fleet through relay 2: the 3 rooms are held" until_ok "$WAIT" held_all "$R2"
doc=$(fleet "$R2")
spread=$(jsq "d.rooms.map((r) => r.name + ':' + r.node).sort().join(' ')" <<<"$doc")
note "placement: $spread"
spread_ok() { jsq "(() => { const c = {}; for (const r of d.rooms) c[r.node] = (c[r.node] || 0) + 1; const v = Object.values(c); return v.length >= 2 && Math.max(...v) <= 2; })()" <<<"$doc" >/dev/null; }
check "the rooms are spread: at least 2 nodes hold them, none more than 2 ($spread)" spread_ok
# holder ROOM [PORT]: the id of the node that holds ROOM (relay 1's view).
holder() { fleet "${2:-$R1}" | jsq "d.rooms.find((r) => r.name === '$1').node"; }
claim() { fleet "${2:-$R1}" | jsq "d.rooms.find((r) => r.name === '$1').claim"; }
# tick ROOM: the room's tick at its holder (its own GET /api/rooms/ROOM).
tick() {
  local h
  h=$(holder "$1") && get "${NODE_PORT[$h]}" "/api/rooms/$1" | json tick
}

# code PORT PATH [CREDENTIAL]: the status of a GET there.
code() {
  local auth=()
  [ -n "${3:-}" ] && auth=(-H "Authorization: Bearer $3")
  curl -sS --max-time 30 -o /dev/null -w '%{http_code}' "${auth[@]}" "http://127.0.0.1:$1$2"
}
# answers STATUS PORT PATH [CREDENTIAL]: a GET there answers STATUS (the
# status it answered is left in $got).
answers() {
  got=$(code "$2" "$3" "${4:-}")
  [ "$got" = "$1" ]
}
# expect DESCRIPTION STATUS PORT PATH [CREDENTIAL]: one check line, waited
# for: a server's view of a room that just moved may say for a moment that
# no node holds it (503).
expect() {
  local what=$1
  shift
  if until_ok "$WAIT" answers "$@"; then ok "$what: $got"; else not_ok "$what: $got, not $1"; fi
}
# invite ROOM: an owner's invite of ROOM made through relay 1 with the
# administrator's token (its token; fails unless 201, and says what came).
invite() {
  local r
  r=$(post "$R1" "/api/rooms/$1/invites" '{"role": "owner", "ttl_s": 3600}' "$TOKEN")
  [ "${r%% *}" = 201 ] && json token <<<"${r#* }" && return
  note "an invite of room $1 through relay 1: $r" >&2
  return 1
}
# forged TOKEN: TOKEN with one character of its signature changed (one in
# the middle: the last one's low bits are not the MAC's).
forged() {
  local sig=${1##*.} c
  c=A
  [ "${sig:20:1}" = A ] && c=B
  echo "${1%.*}.${sig:0:20}$c${sig:21}"
}

probe=$(node tests/docker/ws_probe.mjs "ws://127.0.0.1:$R2/r/alpha/" 3 15000)
note "relay 2, room alpha: $probe"
# particles ROOM: the room's particle count at its holder.
particles() {
  local h
  h=$(holder "$1") && get "${NODE_PORT[$h]}" "/api/rooms/$1" | json particles
}
n=$(particles alpha)
check "a viewer of room alpha through relay 2: hello, then frames that decode (its $n particles)" \
  test "$(json ok <<<"$probe")" = true -a -n "$n" -a "$(json n <<<"$probe")" = "$n"

note "$(($(date +%s) - t0)) s"
# --- a sim node killed ------------------------------------------------------------
inv_alpha=$(invite alpha)
check "an owner's invite of room alpha made through relay 1 (its holder signs it)" test -n "$inv_alpha"
victim=$(holder alpha) c0=$(claim alpha)
tk=$(date +%s.%N)
check "podman kill node-$victim (holds room alpha, claim $c0)" quiet podman kill "$(container "node-$victim")"
moved() { fleet "$R1" 2>/dev/null | jsq "d.rooms.some((r) => r.name === 'alpha' && r.node > 0 && r.node !== $victim && r.claim > $c0 && !r.orphaned)" >/dev/null; }
if until_ok "$WAIT" moved; then
  ok "room alpha is held by node $(holder alpha) (claim $(claim alpha)), seen $(node -e "console.log((Date.now() / 1000 - $tk).toFixed(1))") s after the kill (polled)"
else
  not_ok "room alpha is held by another node within $WAIT s of the kill"
fi
dead() { fleet "$R1" | jsq "d.nodes.some((n) => n.id === $victim && !n.live)" >/dev/null; }
check "GET /api/fleet: node $victim is not live" until_ok "$WAIT" dead
probe=$(node tests/docker/ws_probe.mjs "ws://127.0.0.1:$R1/r/alpha/" 3 15000)
note "relay 1, room alpha: $probe"
check "a viewer of room alpha through relay 1 gets frames from its new holder ($n particles, tick $(json tick <<<"$probe"))" \
  test "$(json ok <<<"$probe")" = true -a "$(json n <<<"$probe")" = "$n"
check "every room is held after the kill" until_ok "$WAIT" held_all "$R1"
expect "room alpha's invite, made before the kill, lists its clients (an owner's route) through relay 2 at its new holder" \
  200 "$R2" /api/rooms/alpha/clients "$inv_alpha"

note "$(($(date +%s) - t0)) s"
# --- a NATS server killed ---------------------------------------------------------
# A server that leads neither stream: the leader's death is a known gap (its
# election outlasts the 3 s lease; docs/fleet.md, "A broker that is a cluster").
leaders=$(for s in KV_fluid_fleet FLUID_fleet_SNAP; do stream_of nats-1 "$s" | json cluster.leader; done | tr '\n' ' ')
spare=
for s in nats-1 nats-2 nats-3; do [[ " $leaders " == *" $s "* ]] || spare=$s; done
note "stream leaders (KV_fluid_fleet, FLUID_fleet_SNAP): $leaders"
[ -n "$spare" ] || abort "a NATS server that leads neither stream (leaders: $leaders)"
live=nats-1
[ "$spare" = nats-1 ] && live=nats-2
declare -A T0 H0 C0
for room in "${ROOMS[@]}"; do
  H0[$room]=$(holder "$room") C0[$room]=$(claim "$room") T0[$room]=$(tick "$room")
  [ -n "${T0[$room]}" ] || abort "room $room's tick at its holder (node ${H0[$room]})"
done
s0=$(fleet "$R1" | jsq "Math.max(...d.rooms.map((r) => r.snap.save))")
tks=$(date +%s)
check "podman kill $spare (leads neither stream)" quiet podman kill "$(container "$spare")"
# steps_on: every room's tick at its holder a simulated second past the one
# before the kill, and every room saved twice since.
steps_on() {
  local room t
  for room in "${ROOMS[@]}"; do
    t=$(tick "$room" 2>/dev/null) && [ -n "$t" ] && [ "$t" -gt $((T0[$room] + 60)) ] || return 1
  done
  fleet "$R1" 2>/dev/null | jsq "d.rooms.every((r) => r.snap.save > $s0 + 1)" >/dev/null
}
check "with $spare dead every room steps on at its holder and is saved again to JetStream" until_ok "$WAIT" steps_on
stayed() {
  local room
  for room in "${ROOMS[@]}"; do
    [ "$(holder "$room")" = "${H0[$room]}" ] && [ "$(claim "$room")" = "${C0[$room]}" ] || return 1
  done
}
check "no room changed holder or claim" stayed
probe=$(node tests/docker/ws_probe.mjs "ws://127.0.0.1:$R2/r/beta/" 3 15000)
check "a viewer of room beta through relay 2 gets frames with $spare dead" test "$(json ok <<<"$probe")" = true
check "podman start $spare" quiet podman start "$(container "$spare")"
# rejoined: each stream's leader lists the server as a current replica.
rejoined() {
  local s l
  for s in KV_fluid_fleet FLUID_fleet_SNAP; do
    l=$(stream_of "$live" "$s" | json cluster.leader) && [ -n "$l" ] || return 1
    stream_of "$l" "$s" | jsq "d.cluster.replicas.some((r) => r.name === '$spare' && r.current)" >/dev/null || return 1
  done
}
check "$spare rejoins: a current replica of both streams again" until_ok "$WAIT" rejoined
check "no room changed holder or claim after $spare rejoined" stayed

note "$(($(date +%s) - t0)) s"
# --- an invite across the fleet, and a drain ----------------------------------------
# A server whose bucket watch was served by the NATS server killed above
# sees the bucket's changes again only once its watch is made anew: a room
# placed before then on a node that does not see it is refused (503, not
# claimed within 5 s).  So first every live node's and relay's view of the
# rooms is current (all held, none orphaned), however long that took.
current_views() {
  local p
  for p in "$R1" "$R2" "${NODE_PORT[@]}"; do
    [ "$p" = "${NODE_PORT[$victim]}" ] || held_all "$p" || return 1
  done
}
check "every live node's and relay's view of the rooms is current again (all held, none orphaned)" until_ok "$WAIT" current_views
note "every view current $(($(date +%s) - tks)) s after $spare was killed"
r=$(post "$R1" /api/rooms '{"name": "delta", "particles": 1000}' "$TOKEN")
check "POST /api/rooms 'delta' through relay 1: 201, placed on node $(json node <<<"${r#* }")" test "${r%% *}" = 201
held_delta() { fleet "$1" 2>/dev/null | jsq "d.rooms.some((r) => r.name === 'delta' && r.node > 0 && r.claim > 0 && !r.orphaned)" >/dev/null; }
check "room delta is held (relay 2's view)" until_ok "$WAIT" held_delta "$R2"
inv=$(invite delta)
check "an owner's invite of room delta made through relay 1" test -n "$inv"
h=$(holder delta) c0=$(claim delta)
# other: a live node that does not hold room delta
other=$(fleet "$R1" | jsq "d.nodes.filter((n) => n.live && n.id !== $h)[0].id")
if [ -z "$h" ] || [ -z "$other" ]; then
  abort "room delta's holder and another live node (holder '$h', other '$other')"
fi
note "room delta: held by node $h (claim $c0); node $other does not hold it"
clients=/api/rooms/delta/clients
expect "GET $clients through relay 2 without a credential (the public role, player): refused" 403 "$R2" "$clients"
expect "GET $clients through relay 2 with a forged invite: refused" 401 "$R2" "$clients" "$(forged "$inv")"
expect "GET $clients through relay 2 with the invite" 200 "$R2" "$clients" "$inv"
expect "GET $clients through node $other (which does not hold it) with the invite" 200 "${NODE_PORT[$other]}" "$clients" "$inv"
expect "GET $clients at its holder, node $h, with the invite" 200 "${NODE_PORT[$h]}" "$clients" "$inv"
# role_is PORT ROLE: a viewer of room delta with the invite in its URL (as
# the invite's link has it) through that relay is told ROLE in its hello.
role_is() {
  probe=$(node tests/docker/ws_probe.mjs "ws://127.0.0.1:$1/r/delta/?invite=$inv" 2 15000)
  [ "$(json ok <<<"$probe")" = true ] && [ "$(json hello.role <<<"$probe")" = "$2" ]
}
check "a viewer of room delta through relay 2 with the invite's link: role owner in its hello, frames" role_is "$R2" owner
r=$(post "${NODE_PORT[$other]}" "/api/fleet/nodes/$h/drain" '{}' "$TOKEN")
check "POST /api/fleet/nodes/$h/drain at node $other (room delta's holder drained): 202" test "${r%% *}" = 202
moved_delta() { fleet "$R2" 2>/dev/null | jsq "d.rooms.some((r) => r.name === 'delta' && r.node > 0 && r.node !== $h && r.claim > $c0 && !r.orphaned)" >/dev/null; }
check "room delta moves off node $h" until_ok "$WAIT" moved_delta
h2=$(holder delta "$R2")
note "room delta: held by node $h2 (claim $(claim delta "$R2")) after the drain"
expect "after the move, GET $clients through relay 2 with the same invite" 200 "$R2" "$clients" "$inv"
expect "after the move, GET $clients through relay 1 with the same invite" 200 "$R1" "$clients" "$inv"
expect "after the move, GET $clients through node $h (drained, holds it no more) with the same invite" 200 "${NODE_PORT[$h]}" "$clients" "$inv"
expect "after the move, GET $clients at its new holder, node $h2, with the same invite" 200 "${NODE_PORT[$h2]}" "$clients" "$inv"
expect "after the move, a forged invite is still refused (relay 2)" 401 "$R2" "$clients" "$(forged "$inv")"
check "after the move, a viewer through relay 1 with the invite's link: role owner in its hello, frames" \
  until_ok "$WAIT" role_is "$R1" owner
r=$(curl -sS --max-time 15 -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $TOKEN" \
  "http://127.0.0.1:${NODE_PORT[$other]}/api/fleet/nodes/$h/drain")
check "DELETE /api/fleet/nodes/$h/drain (the drain cancelled): 202" test "$r" = 202

# The brokers' logs: no permission refused to a node or a relay at work,
# only the 6 publishes and 2 subscriptions refused on purpose above.
violations=$(for s in nats-1 nats-2 nats-3; do podman logs "$(container "$s")" 2>&1; done |
  grep -E '(Publish|Subscription) Violation' |
  grep -v -F -e '"$KV.fluid_fleet.room.x"' -e '"fluid.fleet.r.x.cmd.2"' -e '"$KV.fluid_fleet.node.2"' \
    -e '"$JS.API.STREAM.DELETE.KV_fluid_fleet"' -e '"fluid.fleet.inbox.relay2.>"' -e '"_INBOX.node1.>"' \
    -e '"fluid.fleet.alive.2"' -e '"fluid.fleet.ack.3.2"')
[ -z "$violations" ] || head -n 10 <<<"$violations" | sed 's/^/# /'
check "the NATS servers refused no publish or subscription of a node or relay at work" test -z "$violations"

note "$(($(date +%s) - t0)) s"
cleanup
note "$(($(date +%s) - t0)) s"
gone() { [ -z "$(podman ps -aq --filter "label=io.podman.compose.project=$PROJECT")" ] && [ -z "$(podman volume ls -q --filter "name=^${PROJECT}_")" ]; }
check "podman-compose down -v: no container or volume of the fleet left" gone
