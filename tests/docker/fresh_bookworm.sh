#!/usr/bin/env bash
# tests/docker/fresh_bookworm.sh - the README's two commands as a new user on
# stock Debian bookworm runs them (`make test-fresh-bookworm`; not in CI: it
# installs everything and runs the whole suite, about 30 minutes).
#
# A container of plain bookworm with build-essential, git, curl,
# ca-certificates, nodejs, npm and python3 from Debian and nothing else gets
# a clone of this repository's HEAD; there `make run` must serve the page and
# the REST API (checked with curl, then stopped), and `make test` must pass.
# Root and rootful podman, as tests/docker/test_bookworm.sh.  Logs go to
# $BUILD/fresh-bookworm/.  Closes with make test's own total line.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1
if [ "$(id -u)" -ne 0 ]; then
  exec sudo --preserve-env=BUILD,DEBIAN_MIRROR,PATH bash "$0" "$@"
fi
BUILD=${BUILD:-build}
logdir="$repo/$BUILD/fresh-bookworm"
mkdir -p "$logdir"
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
export CONTAINERS_CONF="$repo/docker/containers.conf"
note() { echo "# $*"; }
bash scripts/deps.sh docker >"$logdir/deps.log" 2>&1 || { echo "!!! install podman (see $logdir/deps.log)"; exit 1; }
# shellcheck source=tests/docker/base_images.sh
. "$repo/tests/docker/base_images.sh"
has_base_images || make_base_images || { echo "!!! debootstrap failed (see $logdir/debootstrap.log)"; exit 1; }

bundle="$logdir/repo.bundle"
git bundle create "$bundle" HEAD >/dev/null 2>&1 || { echo "!!! git bundle"; exit 1; }
note "HEAD $(git rev-parse --short HEAD) in a fresh debian:bookworm container (log: $logdir/run.log)"
# Behind a TLS-intercepting proxy npm needs the host's CA bundle (as in
# test_docker.sh); a user's machine on an open network does not.
ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
mounts=(-v "$bundle:/repo.bundle:ro")
[ -r "$ca" ] && mounts+=(-v "$(readlink -f "$ca"):/run/host-ca.pem:ro")
podman run --rm --pull=never --network=host --privileged --shm-size=1g "${mounts[@]}" \
  docker.io/library/debian:bookworm bash -c '
set -u
[ -r /run/host-ca.pem ] && export NODE_EXTRA_CA_CERTS=/run/host-ca.pem
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq && apt-get install -y -qq --no-install-recommends build-essential git curl ca-certificates \
  nodejs npm python3 >/dev/null || { echo "!!! apt-get"; exit 1; }
echo "# $(. /etc/os-release && echo "$PRETTY_NAME"), node $(node --version), npm $(npm --version)"
git clone -q /repo.bundle /src && cd /src || exit 1
t0=$(date +%s)
setsid make run >/tmp/run.log 2>&1 &
pid=$!  # make run, the leader of its own process group (the server is its child)
served=0
for _ in $(seq 1 600); do
  if curl -sf http://127.0.0.1:8080/ | grep -qi "<html" && curl -sf http://127.0.0.1:8080/api/stats | grep -q "\"tick\""; then
    served=1; break
  fi
  kill -0 $pid 2>/dev/null || break
  sleep 1
done
if [ $served = 1 ]; then
  echo "ok - make run serves the page and /api/stats after $(( $(date +%s) - t0 )) s"
else
  tail -n 30 /tmp/run.log; echo "not ok - make run did not serve"
fi
kill -TERM -- -$pid 2>/dev/null; wait $pid 2>/dev/null
[ $served = 1 ] || exit 1
make test
' 2>&1 | tee "$logdir/run.log"
exit "${PIPESTATUS[0]}"
