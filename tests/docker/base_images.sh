#!/usr/bin/env bash
# tests/docker/base_images.sh - the Debian bookworm base images podman needs,
# made locally with debootstrap when no container registry is reachable.
# Sourced by tests/docker/test_docker.sh and tests/docker/test_bookworm.sh;
# expects MIRROR (a Debian mirror URL) and logdir (a folder for logs) to be set.
# has_base_images: both images are in podman's storage.
has_base_images() {
  podman image exists docker.io/library/debian:bookworm &&
    podman image exists docker.io/library/debian:bookworm-slim
}

# The Dockerfile starts FROM debian:bookworm (build stage) and
# debian:bookworm-slim (runtime stage).  Without a registry both are made
# here from one debootstrap minbase root (about 40 s): "bookworm" as is
# (minus apt's caches), "bookworm-slim" without documentation, manual pages
# and translations, and dpkg told to keep leaving them out, as Debian's slim
# images do.
make_base_images() {
  local root="$logdir/rootfs"
  rm -rf "$root"
  note "building debian:bookworm with debootstrap ($MIRROR)"
  debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$logdir/debootstrap.log" 2>&1 || return 1
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # Builds in containers: no translations to download, no fsync per file.
  echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/90container-languages"
  echo 'force-unsafe-io' >"$root/etc/dpkg/dpkg.cfg.d/90container-unsafe-io"
  tar -C "$root" -c . | podman import --change 'CMD ["bash"]' - docker.io/library/debian:bookworm \
    >>"$logdir/debootstrap.log" 2>&1 || return 1

  cat >"$root/etc/dpkg/dpkg.cfg.d/90container-slim" <<'EOF'
# slim image: no documentation, manual pages or translations
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  find "$root/usr/share/doc" -mindepth 1 \( -type f -o -type l \) ! -name copyright -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/groff/* "$root"/usr/share/lintian/*
  find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  tar -C "$root" -c . | podman import --change 'CMD ["bash"]' - docker.io/library/debian:bookworm-slim \
    >>"$logdir/debootstrap.log" 2>&1 || return 1
  rm -rf "$root"
}

