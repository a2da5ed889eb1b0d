#!/usr/bin/env bash
# tests/docker/test_bookworm.sh - the Node.js suites on stock Debian bookworm
# (`make test-bookworm`).
#
# The development machines may carry a newer Node.js than the one Debian
# ships; this runs the suites that Node runs (the server integration suite,
# the web client's unit tests and its browser tests) in a container of plain
# Debian bookworm, whose nodejs is 18.x, with nothing installed but what
# scripts/deps.sh installs there.  The tree tested is this working tree's
# tracked and unignored files (not build/ or node_modules/), copied into the
# container and built there.
#
# The container image with the packages (localhost/fluid-bookworm-deps) is
# kept between runs and made again when scripts/deps.sh changes.  Without a
# registry, the base image is made with debootstrap (tests/docker/base_images.sh).
# Runs as root (rootful podman), as CI does; run by another user it runs
# itself again under sudo.  Logs go to $BUILD/bookworm/.  Closes with the
# suites' total, "N passed, N failed, N skipped" (scripts/run-tests.sh).
#
# Environment: BUILD (build), DEBIAN_MIRROR (http://deb.debian.org/debian),
# BOOKWORM_SUITES (the suites to run: "server web-unit web-e2e").
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 1
if [ "$(id -u)" -ne 0 ]; then
  exec sudo --preserve-env=BUILD,DEBIAN_MIRROR,BOOKWORM_SUITES,NODE_EXTRA_CA_CERTS,PATH bash "$0" "$@"
fi
BUILD=${BUILD:-build}
logdir="$repo/$BUILD/bookworm"
mkdir -p "$logdir"
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITES=${BOOKWORM_SUITES:-server web-unit web-e2e}
export CONTAINERS_CONF="$repo/docker/containers.conf"
note() { echo "# $*"; }
fail() {
  echo "!!! $*"
  echo "bookworm: 0 passed, 1 failed"
  exit 1
}

bash scripts/deps.sh docker >"$logdir/deps.log" 2>&1 || fail "install podman and debootstrap (see $logdir/deps.log)"
# shellcheck source=tests/docker/base_images.sh
. "$repo/tests/docker/base_images.sh"
if ! has_base_images; then
  make_base_images || fail "build the debian:bookworm base image with debootstrap (see $logdir/debootstrap.log)"
fi

# The packages: scripts/deps.sh test on plain bookworm (it installs Debian's
# nodejs and npm there, no Node.js being present).  The image's tag carries
# the script's hash, so a change to it makes the image again.
hash=$(sha256sum scripts/deps.sh | cut -c1-12)
image=localhost/fluid-bookworm-deps:$hash
if ! podman image exists "$image"; then
  note "making $image: scripts/deps.sh test on debian:bookworm (log: $logdir/image.log)"
  name=fluid-bookworm-deps-$$
  podman rm -f "$name" >/dev/null 2>&1
  if ! podman run --name "$name" --pull=never --network=host -v "$repo/scripts/deps.sh:/deps.sh:ro" \
    docker.io/library/debian:bookworm bash -c 'bash /deps.sh test && apt-get clean' >"$logdir/image.log" 2>&1; then
    podman rm -f "$name" >/dev/null 2>&1
    fail "scripts/deps.sh test in a bookworm container (see $logdir/image.log)"
  fi
  podman commit "$name" "$image" >>"$logdir/image.log" 2>&1 || fail "podman commit (see $logdir/image.log)"
  podman rm -f "$name" >/dev/null 2>&1
  # older images of this kind (another deps.sh) are not needed any more
  podman images --format '{{.Repository}}:{{.Tag}}' | grep '^localhost/fluid-bookworm-deps:' | grep -vx "$image" |
    xargs -r podman rmi -f >/dev/null 2>&1
fi

# The tree: tracked and unignored files, as a tarball the container unpacks.
tarball="$logdir/tree.tar"
git ls-files -z --cached --others --exclude-standard | xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
  tar --null -T - -cf "$tarball" || fail "pack the working tree"

# Inside: build what the suites need, then run them through the same runner
# `make test` uses.  --privileged: the suites make network namespaces
# (unshare -n) as they do on a host; --shm-size: Chromium's shared memory.
ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
mounts=(-v "$tarball:/tree.tar:ro")
[ -r "$ca" ] && mounts+=(-v "$(readlink -f "$ca"):/run/host-ca.pem:ro")
note "running the Node suites ($SUITES) in $image (log: $logdir/run.log)"
podman run --rm --pull=never --network=host --privileged --shm-size=1g "${mounts[@]}" -e SUITES="$SUITES" \
  -e CI="${CI:-}" "$image" bash -c '
set -u
[ -r /run/host-ca.pem ] && export NODE_EXTRA_CA_CERTS=/run/host-ca.pem
mkdir -p /src && cd /src && tar -xf /tree.tar
echo "# $(. /etc/os-release && echo "$PRETTY_NAME"), node $(node --version), npm $(npm --version), $(chromium --version 2>/dev/null | head -n 1)"
make -s -j"$(nproc)" build/fluid-server build/fluid-rec \
  tests/server/node_modules/.installed web-client-build web-client-wasm tests/web/node_modules/.installed \
  >/tmp/build.log 2>&1 || { tail -n 40 /tmp/build.log; echo "!!! the build failed"; echo "bookworm: 0 passed, 1 failed"; exit 1; }
# The point here is Node 18: the sanitizer and TSan builds of the server and
# the slow readers (the behaviour of the C server, whatever runs the tests)
# run in make test on the host, and are skipped here, each with its reason.
env="FLUID_SERVER=build/fluid-server FLUID_REC=build/fluid-rec FLUID_ROOT=/src FLUID_TEST_SLOW=0"
cmds=()
for s in $SUITES; do
  only=""
  case $s in *:*) only=$(echo "${s#*:}" | tr "," " "); s=${s%%:*} ;; esac
  case $s in
    server) cmds+=("$env node tests/server/run.mjs $only") ;;
    web-unit) cmds+=("node tests/web/run.mjs unit $only") ;;
    web-e2e) cmds+=("$env node tests/web/run.mjs e2e $only") ;;
    *) echo "!!! unknown suite $s"; exit 2 ;;
  esac
done
bash scripts/run-tests.sh "${cmds[@]}"
' 2>&1 | tee "$logdir/run.log"
exit "${PIPESTATUS[0]}"
