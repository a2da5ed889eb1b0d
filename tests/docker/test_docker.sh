#!/usr/bin/env bash
# tests/docker/test_docker.sh - the container test (`make test-docker`).
#
# Builds docker/Dockerfile with podman (no Docker daemon or registry needed),
# starts it with podman-compose from docker/compose.yaml on a free host port
# and checks it from outside: health check, static client files, REST
# (load a scene, pause, step, stats), the WebSocket stream (hello, frames),
# a clean stop on SIGTERM that saves the world to the named volume, and the
# restore of that world after `down` and `up`, then the same over TLS with a
# certificate and key from a mounted directory (docker/compose.tls.yaml):
# https, the health check, wss; then the compose profile `fleet`
# (tests/docker/test_fleet.sh: a NATS cluster, 3 sim nodes, 2 relays, a
# node and a broker killed).  Cleans up (containers, pod,
# volume) even when a check fails.  One line per check, "ok - ..." or
# "not ok - ...", then "N passed, N failed" as the last line; exit status 1
# on any failure.
#
# Runs as root, as CI does (rootful podman; debootstrap needs root too); run
# by another user it runs itself again under sudo.  Installs what it lacks
# (scripts/deps.sh docker).  When docker.io/library/debian:bookworm is not in
# podman's storage it builds it once with debootstrap (and
# debian:bookworm-slim from it); the images stay there for the next run.
#
# Environment: BUILD (build), logs go to $BUILD/docker/; FLUID_TEST_IMAGE
# (localhost/fluid-server:test); DEBIAN_MIRROR (http://deb.debian.org/debian).
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1
if [ "$(id -u)" -ne 0 ]; then
  exec sudo --preserve-env=BUILD,FLUID_TEST_IMAGE,DEBIAN_MIRROR,NODE_EXTRA_CA_CERTS,PATH bash "$0" "$@"
fi
BUILD=${BUILD:-build}
logdir="$repo/$BUILD/docker"
mkdir -p "$logdir"
IMAGE=${FLUID_TEST_IMAGE:-localhost/fluid-server:test}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
COMPOSE_FILE=docker/compose.yaml
PROJECT="fluidtest$$"
SERVICE=fluid
CONTAINER="${PROJECT}_${SERVICE}_1"      # podman-compose 1.0.3 naming
VOLUME="${PROJECT}_fluid-data"
export CONTAINERS_CONF="$repo/docker/containers.conf"
unset FLUID_TOKEN   # compose passes it through; the REST checks send none

# shellcheck source=tests/docker/checks.sh
. "$repo/tests/docker/checks.sh"
started=0
t0=$(date +%s)

compose() {
  podman-compose --no-ansi -p "$PROJECT" -f "$COMPOSE_FILE" "$@" >>"$logdir/compose.log" 2>&1
}

# cleanup: the project's containers, pod, volume and network (podman-compose
# 1.0.3's down leaves the network).
cleanup() {
  [ "$started" = 1 ] || return 0
  {
    compose down -t 5
    podman rm -f "$CONTAINER"
    podman pod rm -f "pod_$PROJECT"
    podman volume rm -f "$VOLUME"
    podman network rm -f "${PROJECT}_default"
  } >>"$logdir/compose.log" 2>&1
  started=0
}

finish() {
  trap - EXIT INT TERM
  cleanup
  note "$(($(date +%s) - t0)) s; logs in $logdir/"
  summary_exit
}
trap finish EXIT
trap 'not_ok "interrupted"; exit 1' INT TERM

# --- tools --------------------------------------------------------------------
bash scripts/deps.sh docker >"$logdir/deps.log" 2>&1 ||
  abort "install podman, podman-compose, runc, debootstrap, Node.js (see $logdir/deps.log)"
# ws and @msgpack/msgpack for the WebSocket probe: the server tests' modules.
make -s BUILD="$BUILD" tests/server/node_modules/.installed >>"$logdir/deps.log" 2>&1 ||
  abort "install the WebSocket probe's modules (tests/server/node_modules)"

# json FIELD: prints FIELD of the JSON document on stdin (nothing if absent).
json() {
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let v;try{v=JSON.parse(s)}catch{process.exit(1)}
for(const k of process.argv[1].split("."))v=v==null?undefined:v[k];
if(v!==undefined)console.log(typeof v==="object"?JSON.stringify(v):String(v))})' "$1"
}
# api METHOD PATH [BODY]: the response body (stdout) of a request to the
# published port; fails on a non-2xx status.
api() {
  local body=()
  [ $# -ge 3 ] && body=(-H 'content-type: application/json' --data "$3")
  curl -sS --fail --max-time 15 -X "$1" "${body[@]}" "http://127.0.0.1:$HOST_PORT$2"
}

# --- base images ----------------------------------------------------------------
# shellcheck source=tests/docker/base_images.sh
. "$repo/tests/docker/base_images.sh"
if has_base_images; then
  ok "base images debian:bookworm and debian:bookworm-slim present (cached)"
else
  make_base_images || abort "build debian:bookworm base images with debootstrap (see $logdir/debootstrap.log)"
  ok "base images debian:bookworm and debian:bookworm-slim built with debootstrap"
fi

# --- the image ------------------------------------------------------------------
# --format docker: the OCI image format has no HEALTHCHECK.  The host's CA
# bundle goes to npm in the build stage (NODE_EXTRA_CA_CERTS, see the
# Dockerfile): on machines whose HTTPS goes through an intercepting proxy the
# host trusts the proxy's CA, a fresh Debian image does not.
build_args=(--pull=never --isolation=chroot --network=host --format docker)
ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
if [ -r "$ca" ]; then
  build_args+=(-v "$(readlink -f "$ca"):/run/host-ca.pem:ro" --build-arg NODE_EXTRA_CA_CERTS=/run/host-ca.pem)
fi
note "building $IMAGE (log: $logdir/build.log)"
tb=$(date +%s)
if podman build "${build_args[@]}" -t "$IMAGE" -f docker/Dockerfile . >"$logdir/build.log" 2>&1; then
  ok "podman build -f docker/Dockerfile . ($(($(date +%s) - tb)) s)"
else
  tail -n 30 "$logdir/build.log" | sed 's/^/# /'
  abort "podman build -f docker/Dockerfile . (see $logdir/build.log)"
fi
# The build stage is tagged too (every step is cached: a second), so that
# pruning the images earlier runs left untagged keeps this run's layer cache.
podman build "${build_args[@]}" --target build -t "${IMAGE%:*}-build:${IMAGE##*:}" -f docker/Dockerfile . \
  >>"$logdir/build.log" 2>&1 && podman image prune -f >>"$logdir/build.log" 2>&1
note "image size: $(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.1f MB", $1 / 1e6}')"

inspect=$(podman image inspect "$IMAGE")
user=$(json 0.Config.User <<<"$inspect")
check "image runs as a non-root user ($user)" test -n "$user" -a "${user%%:*}" != 0 -a "${user%%:*}" != root
hc=$(json 0.Healthcheck.Test <<<"$inspect")
[ -n "$hc" ] || hc=$(json 0.Config.Healthcheck.Test <<<"$inspect")
check "image has a HEALTHCHECK (fluid-server --health-check: GET /api/health)" grep -q -- --health-check <<<"$hc"
check "image exposes 8080/tcp and declares the /data volume" \
  test -n "$(json 0.Config.ExposedPorts.8080/tcp <<<"$inspect")" -a -n "$(json 0.Config.Volumes./data <<<"$inspect")"
env_list=$(json 0.Config.Env <<<"$inspect")
sets_env() {
  local v
  for v in FLUID_BIND=0.0.0.0 FLUID_PORT=8080 FLUID_WEB_ROOT=/ FLUID_DATA_DIR=/data; do
    grep -q "\"$v" <<<"$env_list" || return 1
  done
}
check "image sets FLUID_BIND, FLUID_PORT, FLUID_WEB_ROOT, FLUID_DATA_DIR" sets_env
files=$(podman run --rm --pull=never --no-healthcheck --entrypoint bash "$IMAGE" -c \
  'cd "$FLUID_WEB_ROOT" && ls index.html vendor/msgpack/index.mjs src/app.js &&
   ! find / -xdev -name node_modules -print -quit | grep . && stat -c "%u %a" /data' 2>&1)
check "image holds the client files, vendored msgpack, no node_modules; /data owned by the user" \
  grep -qx "${user%%:*} 750" <<<"$files"

# --- up -------------------------------------------------------------------------
HOST_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
RELAY_A_PORT=$(free_port) RELAY_B_PORT=$(free_port)
# podman-compose 1.0.3 ignores `profiles:` and starts the scale profile's
# services with every `up`; their host ports are free ones here too.
export FLUID_HOST_PORT=$HOST_PORT FLUID_IMAGE=$IMAGE FLUID_RELAY_A_PORT=$RELAY_A_PORT FLUID_RELAY_B_PORT=$RELAY_B_PORT
: >"$logdir/compose.log"
started=1
check "podman-compose up (project $PROJECT, host port $HOST_PORT)" compose up -d --no-build

# wait_healthy: polls /api/health through the published port (60 s).
wait_healthy() {
  local _
  for _ in $(seq 1 120); do
    api GET /api/health 2>/dev/null | grep '"ok": *true' >/dev/null && return 0
    sleep 0.5
  done
  return 1
}
if wait_healthy; then
  ok "GET /api/health through the published port"
else
  podman logs "$CONTAINER" 2>&1 | tail -n 20 | sed 's/^/# /'
  abort "GET /api/health through the published port within 60 s"
fi
# The image's HEALTHCHECK, run inside the container by podman (podman runs it
# on a timer only under systemd, so it is triggered here).
check "podman healthcheck run (the image's HEALTHCHECK) passes" podman healthcheck run "$CONTAINER"
status=$(podman inspect --format '{{.State.Health.Status}}' "$CONTAINER" 2>/dev/null ||
  podman inspect --format '{{.State.Healthcheck.Status}}' "$CONTAINER" 2>/dev/null)
check "podman inspect: health status is healthy ($status)" test "$status" = healthy
ids=$(podman exec "$CONTAINER" sh -c 'id -u; cat /proc/1/comm' 2>&1 | tr '\n' ' ')
pid1_not_root() { [[ $ids =~ ^([0-9]+)\ fluid-server\ $ ]] && [ "${BASH_REMATCH[1]}" != 0 ]; }
check "server is PID 1 and not root (uid, PID 1: $ids)" pid1_not_root
serves_client() { curl -sS --fail --max-time 15 "http://127.0.0.1:$HOST_PORT/" | grep -i "<html" >/dev/null; }
check "GET / serves the web client" serves_client
check "GET /vendor/msgpack/index.mjs serves the vendored module" \
  curl -sS --fail --max-time 15 -o /dev/null "http://127.0.0.1:$HOST_PORT/vendor/msgpack/index.mjs"

# --- REST and the stream --------------------------------------------------------
SCENE=floating
r=$(api POST /api/scene "{\"name\": \"$SCENE\", \"particles\": 3000}")
particles=$(json particles <<<"$r")
check "POST /api/scene loads $SCENE ($particles particles)" \
  test "$(json ok <<<"$r")" = true -a "$(json scene <<<"$r")" = "$SCENE" -a -n "$particles"
probe=$(node tests/docker/ws_probe.mjs "ws://127.0.0.1:$HOST_PORT/" 5 15000)
note "ws: $probe"
check "WebSocket (fluid.v2): hello, then binary msgpack frames of the $SCENE scene that decode" \
  test "$(json ok <<<"$probe")" = true -a "$(json hello.scene <<<"$probe")" = "$SCENE" -a "$(json n <<<"$probe")" = "$particles"
r=$(api POST /api/pause)
check "POST /api/pause" test "$(json ok <<<"$r")" = true
r=$(api POST /api/step '{"steps": 7}')
tick=$(json tick <<<"$r")
check "POST /api/step runs 7 steps (tick $tick)" test "$(json ok <<<"$r")" = true -a -n "$tick"
stats=$(api GET /api/stats)
check "GET /api/stats: scene $SCENE, paused, tick $tick, $particles particles" \
  test "$(json scene <<<"$stats")" = "$SCENE" -a "$(json paused <<<"$stats")" = true \
  -a "$(json tick <<<"$stats")" = "$tick" -a "$(json particles <<<"$stats")" = "$particles"

# --- stop (SIGTERM saves the world), down, up: restored -------------------------
ts=$(date +%s)
compose stop -t 30
code=$(podman inspect --format '{{.State.ExitCode}}' "$CONTAINER" 2>/dev/null)
check "SIGTERM (podman-compose stop): server exited with status 0 in $(($(date +%s) - ts)) s" test "$code" = 0
snap=$(podman run --rm --pull=never --no-healthcheck -v "$VOLUME:/data" --entrypoint stat "$IMAGE" \
  -c '%U %s' /data/world.snapshot 2>/dev/null)
saved() { [[ $snap =~ ^fluid\ [1-9][0-9]*$ ]]; }
check "world saved to the named volume ($VOLUME: /data/world.snapshot, owner and bytes: $snap)" saved
check "podman-compose down (keeps the volume)" compose down -t 30
check "podman-compose up again" compose up -d --no-build
if wait_healthy; then
  ok "healthy again after restart"
else
  podman logs "$CONTAINER" 2>&1 | tail -n 20 | sed 's/^/# /'
  abort "healthy again after restart within 60 s"
fi
stats=$(api GET /api/stats)
r_scene=$(json scene <<<"$stats") r_tick=$(json tick <<<"$stats")
r_paused=$(json paused <<<"$stats") r_particles=$(json particles <<<"$stats")
note "after restart: scene $r_scene, tick $r_tick, paused $r_paused, particles $r_particles"
# The world comes back as it was saved: same scene and particles, paused at
# the same tick (restored running, it can only have moved on from there).
restored() {
  [ "$r_scene" = "$SCENE" ] && [ "$r_particles" = "$particles" ] && [ -n "$r_tick" ] || return 1
  if [ "$r_paused" = true ]; then [ "$r_tick" = "$tick" ]; else [ "$r_tick" -ge "$tick" ]; fi
}
check "world restored from the volume after down/up (scene $SCENE, tick $tick, $particles particles)" restored

# --- The scale profile: a NATS broker, the sim node publishing to it, two relays --
# (docker/compose.yaml; `--profile scale` where the compose tool knows profiles,
# podman-compose 1.0.3 starts every service anyway).  The relays serve the
# restored world's stream, and a REST write through a relay reaches the sim node.
scale_args=()
podman-compose --help 2>&1 | grep -q -- '--profile' && scale_args=(--profile scale)
relay_api() { curl -sS --fail --max-time 15 -X "$2" "http://127.0.0.1:$1$3"; }
check "podman-compose down (before the scale profile)" compose down -t 30
check "podman-compose ${scale_args[*]} up with FLUID_NATS=nats://nats:4222 (relays on ports $RELAY_A_PORT, $RELAY_B_PORT)" \
  env FLUID_NATS=nats://nats:4222 podman-compose --no-ansi -p "$PROJECT" -f "$COMPOSE_FILE" "${scale_args[@]}" up -d --no-build
bus_up() {
  local _
  for _ in $(seq 1 120); do
    api GET /metrics 2>/dev/null | grep '^fluid_bus_connected 1' >/dev/null &&
      relay_api "$RELAY_A_PORT" GET /metrics 2>/dev/null | grep '^fluid_bus_connected 1' >/dev/null &&
      relay_api "$RELAY_B_PORT" GET /metrics 2>/dev/null | grep '^fluid_bus_connected 1' >/dev/null && return 0
    sleep 0.5
  done
  return 1
}
if bus_up; then
  ok "the sim node and both relays connected to the broker (by its service name, nats)"
  for port in "$RELAY_A_PORT" "$RELAY_B_PORT"; do
    probe=$(node tests/docker/ws_probe.mjs "ws://127.0.0.1:$port/" 3 15000)
    note "relay on $port: $probe"
    check "WebSocket through the relay on port $port: hello, then frames of the restored $SCENE scene that decode" \
      test "$(json ok <<<"$probe")" = true -a "$(json hello.scene <<<"$probe")" = "$SCENE"
  done
  r=$(relay_api "$RELAY_B_PORT" POST /api/resume)
  resumed() { test "$(json ok <<<"$r")" = true && test "$(json paused <<<"$(api GET /api/stats)")" = false; }
  sleep 1.5 # the sim node publishes its statistics about once a second
  check "POST /api/resume through a relay reaches the sim node" resumed
else
  for c in fluid nats relay-a; do podman logs "${PROJECT}_${c}_1" 2>&1 | tail -n 5 | sed "s/^/# $c: /"; done
  not_ok "the sim node and both relays connected to the broker within 60 s"
fi
check "podman-compose down (scale)" compose down -t 30

# --- TLS: certificate and key from a host directory mounted at /certs ----------
# A CA and a server certificate for 127.0.0.1 made here; docker/compose.tls.yaml
# mounts the directory read-only and sets FLUID_TLS_CERT/FLUID_TLS_KEY.  The
# clients verify the server against the CA (curl --cacert, NODE_EXTRA_CA_CERTS).
certs="$logdir/certs"
make_certs() {
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
  rm -rf "$certs" && mkdir -p "$certs" &&
    openssl req -x509 "${ec[@]}" -keyout "$certs/ca.key" -out "$certs/ca.pem" -days 2 -subj "/CN=fluid docker test CA" &&
    openssl req "${ec[@]}" -keyout "$certs/privkey.pem" -out "$certs/server.csr" -subj "/CN=localhost" &&
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
      >"$certs/ext.cnf" &&
    openssl x509 -req -in "$certs/server.csr" -CA "$certs/ca.pem" -CAkey "$certs/ca.key" -CAcreateserial \
      -out "$certs/fullchain.pem" -days 2 -extfile "$certs/ext.cnf" &&
    chmod 0644 "$certs/privkey.pem" # a throwaway key; the container's user (uid 10001) must read it
} >>"$logdir/certs.log" 2>&1
tls_compose() {
  FLUID_CERT_DIR="$certs" podman-compose --no-ansi -p "$PROJECT" -f "$COMPOSE_FILE" -f docker/compose.tls.yaml "$@" \
    >>"$logdir/compose.log" 2>&1
}
tls_api() { curl -sS --fail --max-time 15 --cacert "$certs/ca.pem" "https://127.0.0.1:$HOST_PORT$1"; }
make_certs || abort "make a CA and a server certificate with openssl (see $logdir/certs.log)"
check "podman-compose down (before TLS)" compose down -t 30
check "podman-compose up with docker/compose.tls.yaml (certificate and key from $certs at /certs)" \
  tls_compose up -d --no-build
tls_healthy() {
  local _
  for _ in $(seq 1 120); do
    tls_api /api/health 2>/dev/null | grep '"ok": *true' >/dev/null && return 0
    sleep 0.5
  done
  return 1
}
if tls_healthy; then
  ok "GET https://…/api/health through the published port, certificate verified against the test CA"
else
  podman logs "$CONTAINER" 2>&1 | tail -n 20 | sed 's/^/# /'
  abort "GET https://…/api/health within 60 s"
fi
check "podman healthcheck run (the image's HEALTHCHECK, over https) passes" podman healthcheck run "$CONTAINER"
serves_client_tls() { tls_api / | grep -i "<html" >/dev/null; }  # not grep -q: it exits at the first match and curl fails writing (pipefail)
check "GET https://…/ serves the web client" serves_client_tls
refused_without_ca() { ! curl -sS --max-time 10 -o /dev/null "https://127.0.0.1:$HOST_PORT/api/health" 2>/dev/null; }
check "a client without the test CA is refused" refused_without_ca
no_plain_http() { ! curl -sS --max-time 10 -o /dev/null "http://127.0.0.1:$HOST_PORT/api/health" 2>/dev/null; }
check "plain http on the TLS port gets no answer" no_plain_http
probe=$(NODE_EXTRA_CA_CERTS="$certs/ca.pem" node tests/docker/ws_probe.mjs "wss://127.0.0.1:$HOST_PORT/" 3 15000)
note "wss: $probe"
check "wss:// stream (certificate verified): hello, then frames of the restored $SCENE scene" \
  test "$(json ok <<<"$probe")" = true -a "$(json hello.scene <<<"$probe")" = "$SCENE"
check "podman-compose down (TLS)" tls_compose down -t 30
rm -rf "$certs"

# down -v: removes the container, the pod and the volume (the EXIT trap
# does the same if anything above stopped the test early).
check "podman-compose down -v" compose down -t 30 -v
volume_gone() { ! podman volume exists "$VOLUME"; }
check "volume removed" volume_gone

# --- The compose profile `fleet` (docker/compose.fleet.yaml) --------------------
# 3 NATS servers with JetStream, 3 sim nodes, 2 relays, on the image built
# above: tests/docker/test_fleet.sh, whose checks count here.
note "the fleet (tests/docker/test_fleet.sh)"
BUILD="$BUILD" FLUID_TEST_IMAGE="$IMAGE" bash tests/docker/test_fleet.sh 2>&1 | tee "$logdir/fleet.out" |
  grep --line-buffered -v -E '^[0-9]+ passed, [0-9]+ failed$'
fleet_status=${PIPESTATUS[0]}
passed=$((passed + $(grep -c '^ok - ' "$logdir/fleet.out")))
failed=$((failed + $(grep -c '^not ok - ' "$logdir/fleet.out")))
[ "$fleet_status" = 0 ] || grep -q '^not ok - ' "$logdir/fleet.out" ||
  not_ok "tests/docker/test_fleet.sh exited with status $fleet_status"
