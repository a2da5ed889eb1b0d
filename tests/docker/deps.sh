#!/usr/bin/env bash
# Installs the Debian packages `make test-docker` needs that this machine lacks:
# a daemonless container engine (podman, with runc as its OCI runtime),
# podman-compose, debootstrap (builds the debian:bookworm base image locally
# when no registry is reachable) and curl (the test's REST calls).
# Idempotent: installs nothing when all are present.  Uses sudo only when not
# root.  Node.js, for the WebSocket probe, comes from scripts/deps.sh build.
#   tests/docker/deps.sh docker    (the only mode, and the default)
set -euo pipefail
what=${1:-docker}
case "$what" in
  docker) pkgs=(podman podman-compose runc debootstrap curl ca-certificates) ;;
  *) echo "usage: $0 [docker]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
