#!/bin/sh
# Dam break through the REST API with curl (and sed/awk): loads the dam break
# paused, steps it 120 ticks, fetches every particle and prints how far the
# surge front has run.
#   sh examples/dam_break_front.sh [SERVER] [TICKS]      (default http://127.0.0.1:8080 120)
# With a token: FLUID_TOKEN=secret sh examples/dam_break_front.sh
set -eu
S=${1:-http://127.0.0.1:8080}
TICKS=${2:-120}
AUTH=""
[ -n "${FLUID_TOKEN:-}" ] && AUTH="Authorization: Bearer $FLUID_TOKEN"

post() { # path json
  curl -sS --fail-with-body -X POST -H "Content-Type: application/json" ${AUTH:+-H "$AUTH"} -d "$2" "$S$1"
  echo
}

# x of every particle, one per line, 10000 per request
xs() {
  off=0
  while :; do
    page=$(curl -sS --fail-with-body "$S/api/particles?offset=$off&limit=10000")
    count=$(printf '%s' "$page" | sed 's/.*"count":\([0-9]*\).*/\1/')
    total=$(printf '%s' "$page" | sed 's/.*"total":\([0-9]*\).*/\1/')
    printf '%s' "$page" | sed -e 's/.*"positions":\[\[//' -e 's/\]\].*//' -e 's/\],\[/\n/g' | cut -d, -f1
    off=$((off + count))
    [ "$count" -eq 0 ] || [ "$off" -ge "$total" ] && break
  done
}

# the farthest x reached by at least 0.5% of the water, from the wall at x0
front() { # x0
  sort -g | awk -v x0="$1" '{ x[NR] = $1 } END { print x[int(0.995 * (NR - 1)) + 1] - x0 }'
}

post /api/pause '{}' >/dev/null
post /api/scene '{"name": "dam_break"}'
x0=$(xs | sort -g | head -n 1)
a=$(xs | front "$x0")
left=$TICKS
while [ "$left" -gt 0 ]; do
  n=$left; [ "$n" -gt 1000 ] && n=1000
  post /api/step "{\"steps\": $n}" >/dev/null
  left=$((left - n))
done
x=$(xs | front "$x0")
t=$(curl -sS "$S/api/stats" | sed 's/.*"sim_time":\([0-9.e+-]*\).*/\1/')
awk -v a="$a" -v x="$x" -v t="$t" -v n="$TICKS" 'BEGIN {
  printf "column width a = %.3f m\n", a
  printf "after %d ticks (t = %.3f s): front at x = %.3f m\n", n, t, x
  printf "x/a = %.2f at T = t*sqrt(2g/a) = %.2f\n", x / a, t * sqrt(2 * 9.81 / a)
}'
