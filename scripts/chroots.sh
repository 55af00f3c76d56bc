#!/usr/bin/env bash
# Build the Debian chroots that hold each OVN release's reference binaries (ovsdb-server,
# ovn-northd, ovn-nbctl, ovn-sbctl, ovsdb-client, ovsdb-tool), once per machine:
#
#     bash scripts/chroots.sh [bookworm|trixie|sid|23.03|25.03|26.03 ...]   (default: trixie)
#     bash scripts/chroots.sh --for-tests   # what the test suite needs: trixie, sid, and bookworm
#                                           # when the host's own OVN is not 23.03 (all --with-host)
#     bash scripts/chroots.sh --with-host trixie sid   # also a chassis: ovn-host, openvswitch-switch
#
# bookworm = OVN 23.03, trixie = 25.03, sid = 26.03.  Each goes to $OVN_NORTHD_PY_CHROOTS/SUITE
# (default /var/cache/ovn-northd-py/chroots/SUITE) and is reused when it is complete: a complete
# chroot has the file ovn-northd-py.version at its root, holding the exact ovn-central package
# version (`dpkg-query -W ovn-central` inside it).  Nothing is mounted once the build is over;
# the reference runs its daemons on unix sockets in a work dir inside the chroot tree
# (see ovn_northd_py/devtools/tools.py).  Needs root (re-runs itself with sudo) and installs
# debootstrap when it is missing.
#
# --with-host adds what the dataplane suite runs as the release's chassis (tests/dataplane
# --release): ovn-host and openvswitch-switch, pinned to the chroot's own ovn-central and
# openvswitch-common versions (nothing already there is upgraded), installed with apt-get inside
# the chroot behind a policy-rc.d that forbids starting any service, and /dev/net/tun (the
# userspace datapath's taps; still no mount).  A chroot that has them has the file
# ovn-northd-py.host-version (one "package version" a line); it is reused, and added to a chroot
# built earlier without it.
set -euo pipefail
[ "$(id -u)" = 0 ] || exec sudo -E bash "$0" "$@"

ROOT="${OVN_NORTHD_PY_CHROOTS:-/var/cache/ovn-northd-py/chroots}"
VERSION_FILE="ovn-northd-py.version"
HOST_VERSION_FILE="ovn-northd-py.host-version"
PKGS="ovn-central,ovn-common,openvswitch-common"
HOST_PKGS="ovn-host openvswitch-switch"

mirror() {
  # The Debian mirror this machine's apt uses (deb822 or one-line sources), else deb.debian.org.
  if [ -n "${OVN_NORTHD_PY_MIRROR:-}" ]; then echo "$OVN_NORTHD_PY_MIRROR"; return; fi
  local m
  m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null \
      | grep -oE '(https?|file)://[^ ]+/debian/?( |$)' | grep -v -- '-security' | head -n1 | tr -d ' ' || true)
  echo "${m:-http://deb.debian.org/debian}"
}

suite_of() {
  case "$1" in
    bookworm|23.03) echo bookworm ;;
    trixie|25.03) echo trixie ;;
    sid|unstable|26.03) echo sid ;;
    *) echo "unknown suite or release: $1 (bookworm|trixie|sid or 23.03|25.03|26.03)" >&2; return 1 ;;
  esac
}

umount_under() {
  # Anything debootstrap left mounted under $1 (it mounts proc/sys while it runs).
  local dir m
  dir=$(readlink -f "$1")
  awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done
}

build() {
  local suite=$1 dir="$ROOT/$1" tmp t0
  if [ -s "$dir/$VERSION_FILE" ]; then
    echo "chroot $suite: $(cat "$dir/$VERSION_FILE") (cached in $dir)" >&2
    return 0
  fi
  if ! command -v debootstrap >/dev/null; then
    echo "installing debootstrap" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  tmp="$ROOT/.$suite.tmp"
  umount_under "$tmp"
  rm -rf "$tmp" "$dir"
  mkdir -p "$tmp"
  t0=$(date +%s)
  echo "chroot $suite: debootstrap from $(mirror) into $dir ..." >&2
  if ! debootstrap --variant=minbase --include="$PKGS" "$suite" "$tmp" "$(mirror)" \
      >"$ROOT/$suite.debootstrap.log" 2>&1; then
    umount_under "$tmp"
    echo "chroot $suite: debootstrap failed, see $ROOT/$suite.debootstrap.log" >&2
    tail -n 20 "$ROOT/$suite.debootstrap.log" >&2
    return 1
  fi
  umount_under "$tmp"
  # Nothing installed later (apt-get install inside) may start a service.
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
  chmod 755 "$tmp/usr/sbin/policy-rc.d"
  if [ "$suite" = sid ]; then
    echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99ovn-northd-py"
  fi
  # OVS's resolver reads /etc/hosts (minbase has none).
  [ -e "$tmp/etc/hosts" ] || printf '127.0.0.1 localhost\n::1 localhost\n' >"$tmp/etc/hosts"
  rm -f "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/cache/apt/*.bin
  # The binaries must run in the chroot as the reference will run them.
  chroot "$tmp" ovn-northd --version >/dev/null
  chroot "$tmp" ovsdb-server --version >/dev/null
  chroot "$tmp" dpkg-query -W -f='${Version}\n' ovn-central >"$tmp/$VERSION_FILE.new"
  mv "$tmp/$VERSION_FILE.new" "$tmp/$VERSION_FILE"
  mv "$tmp" "$dir"
  echo "chroot $suite: ovn-central $(cat "$dir/$VERSION_FILE") in $(( $(date +%s) - t0 )) s," \
       "$(du -sh "$dir" | cut -f1)" >&2
}

with_host() {
  # ovn-host and openvswitch-switch in the complete chroot $1, at the versions of its ovn-central
  # and openvswitch-common; recorded in $HOST_VERSION_FILE.
  local suite=$1 dir="$ROOT/$1" ovn ovs t0 pkg
  if [ -s "$dir/$HOST_VERSION_FILE" ]; then
    echo "chroot $suite: host packages $(tr '\n' ' ' <"$dir/$HOST_VERSION_FILE")(cached)" >&2
    return 0
  fi
  t0=$(date +%s)
  ovn=$(chroot "$dir" dpkg-query -W -f='${Version}' ovn-central)
  ovs=$(chroot "$dir" dpkg-query -W -f='${Version}' openvswitch-common)
  [ -x "$dir/usr/sbin/policy-rc.d" ] || { printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"; chmod 755 "$dir/usr/sbin/policy-rc.d"; }
  echo "chroot $suite: installing ovn-host=$ovn openvswitch-switch=$ovs ..." >&2
  if ! { chroot "$dir" apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive chroot "$dir" apt-get install -y -qq --no-install-recommends \
           "ovn-host=$ovn" "openvswitch-switch=$ovs"; } >"$ROOT/$suite.host.log" 2>&1; then
    echo "chroot $suite: installing the host packages failed, see $ROOT/$suite.host.log" >&2
    tail -n 20 "$ROOT/$suite.host.log" >&2
    return 1
  fi
  mkdir -p "$dir/dev/net"
  [ -c "$dir/dev/net/tun" ] || mknod -m 666 "$dir/dev/net/tun" c 10 200
  rm -f "$dir"/var/cache/apt/archives/*.deb "$dir"/var/cache/apt/*.bin
  chroot "$dir" ovs-vswitchd --version >/dev/null
  chroot "$dir" ovn-controller --version >/dev/null
  for pkg in $HOST_PKGS; do
    chroot "$dir" dpkg-query -W -f='${Package} ${Version}\n' "$pkg"
  done >"$dir/$HOST_VERSION_FILE.new"
  mv "$dir/$HOST_VERSION_FILE.new" "$dir/$HOST_VERSION_FILE"
  echo "chroot $suite: $(tr '\n' ' ' <"$dir/$HOST_VERSION_FILE")in $(( $(date +%s) - t0 )) s" >&2
}

for_tests() {
  # trixie: the release plumbing tests, the 25.03 parity and dataplane suites; sid: the 26.03
  # ones; bookworm: the 23.03 reference and dataplane suite unless the host's OVN is 23.03.
  # All with the host packages.
  echo trixie
  echo sid
  case "$(dpkg-query -W -f='${Version}' ovn-central 2>/dev/null || true)" in
    23.03.*) ;;
    *) echo bookworm ;;
  esac
}

main() {
  local suites=() ft=() s host=() all_host=0
  while (($#)); do
    case "$1" in
      --for-tests) mapfile -t ft < <(for_tests); suites+=("${ft[@]}"); host+=("${ft[@]}") ;;
      --with-host) all_host=1 ;;
      *) suites+=("$(suite_of "$1")") ;;
    esac
    shift
  done
  ((${#suites[@]})) || suites=(trixie)
  ((all_host)) && host+=("${suites[@]}")
  mkdir -p "$ROOT"
  # One builder at a time per machine (setup.sh may run from several checkouts at once).
  exec 9>"$ROOT/.lock"
  flock 9
  for s in "${suites[@]}"; do
    build "$s"
  done
  for s in $(printf '%s\n' "${host[@]}" | sort -u); do
    with_host "$s"
  done
}

main "$@"
