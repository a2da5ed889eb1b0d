#!/usr/bin/env bash
# Installs the Debian packages the project needs that this machine lacks.
# Used by `make deps` (and so by `make`, `make test`, `make run`) and by the
# Dockerfile's build stage.  Idempotent: installs nothing when all are present.
#   scripts/deps.sh build    compiler, libraries, Node.js (default)
#   scripts/deps.sh test     build + what the tests need (valgrind, chromium)
#   scripts/deps.sh docker   what `make test-docker` needs besides build: a
#                            daemonless engine (podman, runc), podman-compose,
#                            debootstrap (the base image when no registry is
#                            reachable), curl, openssl (the TLS phase's
#                            certificates), and Node.js (its WebSocket probe)
set -euo pipefail
what=${1:-build}
case "$what" in
  # clang, lld, wasi-libc, libclang-rt-14-dev-wasm32: the web client's frame
  # decoder as WebAssembly (web-client/client.mk, web-client-wasm)
  # libassimp-dev: reading uploaded meshes (server/wire/mesh_load.c; Assimp 5.2's C API)
  build|test) pkgs=(gcc make pkg-config libc6-dev libwebsockets-dev libcjson-dev libmsgpack-dev libnats-dev
                    libjwt-dev libassimp-dev
                    clang lld wasi-libc libclang-rt-14-dev-wasm32) ;;
  # golang-github-containernetworking-plugin-dnsname: CNI's dnsname plugin, so
  # that compose services find each other by name (the scale profile's relays
  # reach "nats"); podman 4.3 on CNI has no DNS without it
  docker) pkgs=(podman podman-compose runc debootstrap curl ca-certificates openssl
                golang-github-containernetworking-plugin-dnsname) ;;
  *) echo "usage: $0 [build|test|docker]" >&2; exit 2 ;;
esac
if [ "$what" = test ]; then
  # chromium: the web client's browser tests (tests/web); python3, curl: examples/;
  # openssl: the TLS tests' CA and certificates; libnss3-tools (certutil): the CA trusted by Chromium
  pkgs+=(valgrind chromium python3 curl openssl libnss3-tools)
  pkgs+=(clang libclang-rt-dev)           # tests/fuzz: libFuzzer (its runtime is libclang-rt-dev, only a Recommends of clang)
  pkgs+=(libzstd-dev)   # bench-codec: zstd, measured against the frame codec's range coder
  pkgs+=(clang-format)  # make format, make check-format: .clang-format (clang-format 14 on bookworm)
  pkgs+=(python3-meshio python3-matplotlib)  # tests/server/export.test.mjs reads the exports; the examples plot
  pkgs+=(libssl-dev python3-jwt)  # tests/server/test_invite.c: HMAC for hand-made tokens; PyJWT reads and makes tokens
  pkgs+=(nats-server)   # tests/server/relay.test.mjs: a sim node and two relays on a loopback broker
  pkgs+=(python3-numpy python3-pytest python3-setuptools python3-pip python3-venv)  # tests/python: the Python client (clients/python), pytest, and its install into a clean venv
  pkgs+=(jupyter-nbconvert python3-ipykernel)  # tests/python/test_notebook.py: examples/dam_break_front.ipynb run by `jupyter nbconvert --execute`
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js (npm builds the web client's vendored modules and runs the JS
# tests): any install that provides both commands will do (some machines
# carry a nodejs build that bundles npm and conflicts with Debian's npm).
if ! { command -v node && command -v npm; } >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi
# The JavaScript suites and the build's npm steps need Node.js 18.15 or newer
# (node:test's --test-reporter); Debian bookworm ships 18.19/18.20, trixie 20.x.
node_ok() {
  local v
  v=$(node -p 'process.versions.node' 2>/dev/null) || return 1
  awk -v v="$v" 'BEGIN { split(v, a, "."); exit !(a[1] > 18 || (a[1] == 18 && a[2] >= 15)) }'
}
if command -v node >/dev/null 2>&1 && ! node_ok; then
  echo "deps: Node.js $(node --version 2>/dev/null) at $(command -v node) is too old: the tests need 18.15 or newer" >&2
  echo "deps: (Debian bookworm's nodejs is 18.19 or newer: apt-get install nodejs npm, or remove the old one)" >&2
  exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
