#!/usr/bin/env bash
# Build the container image with Debian's buildah, without a registry or a docker engine:
#
#     bash scripts/container.sh [--base-only] [--tag IMAGE]     (default IMAGE: localhost/ovn-northd-py:latest)
#
# 1. The base image localhost/debian:bookworm-minbase, made here from `debootstrap --variant=minbase
#    bookworm` (the host's Debian mirror; sources for bookworm, -updates and -security), once per
#    machine: the tree is cached in $OVN_NORTHD_PY_CACHE/container/bookworm-minbase (default
#    /var/cache/ovn-northd-py), complete when it holds ovn-northd-py.base, and imported into
#    containers-storage when the image is not there.
# 2. The project's image from ./Dockerfile: `buildah bud --isolation=chroot --network=host
#    --pull=never --format=docker` (docker format: OCI images have no HEALTHCHECK) with
#    DEBIAN=localhost/debian:bookworm-minbase.  The host's CA bundle is a build secret (`cacert`):
#    pip trusts it in the build stage (HTTPS through a TLS-intercepting proxy works), and it is not
#    in any layer of the image.
#
# Needs root (re-runs itself with sudo); installs buildah, runc and debootstrap when missing
# (scripts/setup.sh installs them too).  Prints the image id on stdout, progress on stderr.
set -euo pipefail
[ "$(id -u)" = 0 ] || exec sudo -E bash "$0" "$@"
cd "$(dirname "$0")/.."

CACHE="${OVN_NORTHD_PY_CACHE:-/var/cache/ovn-northd-py}/container"
BASE_IMAGE=localhost/debian:bookworm-minbase
BASE_DIR="$CACHE/bookworm-minbase"
MARK=ovn-northd-py.base
TAG=localhost/ovn-northd-py:latest
BASE_ONLY=0
CA_BUNDLE="${OVN_NORTHD_PY_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"

while (($#)); do
  case "$1" in
    --base-only) BASE_ONLY=1 ;;
    --tag) TAG=$2; shift ;;
    --tag=*) TAG=${1#--tag=} ;;
    *) echo "usage: $0 [--base-only] [--tag IMAGE]" >&2; exit 2 ;;
  esac
  shift
done

need() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

mirror() {
  # The Debian mirror this machine's apt uses (as scripts/chroots.sh), else deb.debian.org.
  if [ -n "${OVN_NORTHD_PY_MIRROR:-}" ]; then echo "$OVN_NORTHD_PY_MIRROR"; return; fi
  local m
  m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null \
      | grep -oE '(https?|file)://[^ ]+/debian/?( |$)' | grep -v -- '-security' | head -n1 | tr -d ' ' || true)
  echo "${m:-http://deb.debian.org/debian}"
}

umount_under() {
  local dir m
  dir=$(readlink -f "$1")
  awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done
}

base_tree() {
  # debootstrap minbase, trimmed like Debian's official images (no docs, man pages, apt lists).
  [ -s "$BASE_DIR/$MARK" ] && return 0
  local tmp="$CACHE/.bookworm-minbase.tmp" m t0
  m=$(mirror)
  umount_under "$tmp"
  rm -rf "$tmp" "$BASE_DIR"
  mkdir -p "$tmp"
  t0=$(date +%s)
  echo "base: debootstrap --variant=minbase bookworm from $m ..." >&2
  if ! debootstrap --variant=minbase bookworm "$tmp" "$m" >"$CACHE/bookworm-minbase.debootstrap.log" 2>&1; then
    umount_under "$tmp"
    echo "base: debootstrap failed, see $CACHE/bookworm-minbase.debootstrap.log" >&2
    tail -n 20 "$CACHE/bookworm-minbase.debootstrap.log" >&2
    return 1
  fi
  umount_under "$tmp"
  rm -f "$tmp/etc/apt/sources.list" "$tmp/etc/resolv.conf" "$tmp/etc/hostname"
  local sec="${m%/debian*}/debian-security"
  case "$m" in http://deb.debian.org/*|https://deb.debian.org/*) ;; *) sec=http://deb.debian.org/debian-security ;; esac
  cat >"$tmp/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $m
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $sec
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # Services never start in a container build; no docs, man pages or translations.
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
  chmod 755 "$tmp/usr/sbin/policy-rc.d"
  cat >"$tmp/etc/dpkg/dpkg.cfg.d/ovn-northd-py-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  find "$tmp/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete 2>/dev/null || true
  rm -rf "$tmp"/usr/share/man/* "$tmp"/usr/share/info/* "$tmp"/var/lib/apt/lists/* \
         "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/cache/apt/*.bin "$tmp"/var/log/*.log \
         "$tmp"/var/cache/debconf/*-old "$tmp"/var/lib/dpkg/*-old
  echo "bookworm minbase from $m, $(date -u +%F)" >"$tmp/$MARK"
  mv "$tmp" "$BASE_DIR"
  echo "base: tree in $(( $(date +%s) - t0 )) s, $(du -sh "$BASE_DIR" | cut -f1)" >&2
}

base_image() {
  if buildah inspect --type image "$BASE_IMAGE" >/dev/null 2>&1; then
    echo "base: $BASE_IMAGE (present)" >&2
    return 0
  fi
  base_tree
  echo "base: importing $BASE_DIR as $BASE_IMAGE" >&2
  # The marker stays out of the image; numeric owners as they are in the tree.
  tar --numeric-owner --exclude="./$MARK" -C "$BASE_DIR" -c . \
    | podman import --quiet --change 'CMD ["/bin/bash"]' - "$BASE_IMAGE" >/dev/null
}

main() {
  need buildah podman runc debootstrap uidmap
  mkdir -p "$CACHE"
  # One builder at a time per machine (several checkouts may build at once).
  exec 9>"$CACHE/.lock"
  flock 9
  local t0 old new secret=()
  t0=$(date +%s)
  base_image
  ((BASE_ONLY)) && return 0
  if [ -s "$CA_BUNDLE" ]; then
    secret=(--secret "id=cacert,src=$CA_BUNDLE")
  fi
  old=$(podman image inspect --format '{{.Id}}' "$TAG" 2>/dev/null || true)
  echo "image: buildah bud -t $TAG (from $BASE_IMAGE) ..." >&2
  # --layers: steps whose inputs did not change come from the cache (a change to the code only
  # re-runs the project's own pip install).
  buildah bud --isolation=chroot --network=host --pull=never --format=docker --layers \
    --build-arg "DEBIAN=$BASE_IMAGE" "${secret[@]}" -t "$TAG" . >"$CACHE/build.log" 2>&1 \
    || { echo "image: build failed, see $CACHE/build.log" >&2; tail -n 30 "$CACHE/build.log" >&2; return 1; }
  new=$(podman image inspect --format '{{.Id}}' "$TAG")
  # The image this tag named before, unless a container still uses it.
  if [ -n "$old" ] && [ "$old" != "$new" ]; then podman rmi "$old" >/dev/null 2>&1 || true; fi
  echo "image: $TAG ${new:0:12} in $(( $(date +%s) - t0 )) s" >&2
  echo "$new"
}

main
