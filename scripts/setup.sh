#!/usr/bin/env bash
# Install what ovn-northd-py needs on Debian 12 (idempotent): OVN/OVS packages and a venv in .venv.
# The venv uses Debian's python3 with system site-packages, so python-ovs comes from
# python3-openvswitch, which ships the C JSON parser (the PyPI wheel does not).
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(openvswitch-common ovn-common ovn-central python3-openvswitch python3-venv python3-dev
      # the dataplane suite (tests/dataplane): real OVS + ovn-controller, tools run in netns
      openvswitch-switch ovn-host iproute2 iputils-ping tcpdump busybox netcat-openbsd socat
      isc-dhcp-client ethtool procps)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# For the operator tests, without their recommends: systemd-analyze (verify/security of the unit)
# and promtool (`promtool check metrics`; the prometheus package, ~19 MB, is not started); for the
# container build and smoke test (scripts/container.sh, tests/functional/test_container.py):
# buildah and podman with runc (runs as root, --network=host: no slirp4netns, no fuse-overlayfs),
# debootstrap for the local base image.
TOOLS=(systemd prometheus buildah podman runc debootstrap)
missing_tools=()
for p in "${TOOLS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_tools+=("$p")
done
if ((${#missing[@]} + ${#missing_tools[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "installing Debian packages: ${missing[*]} ${missing_tools[*]}" >&2
  $SUDO apt-get update -qq
  # openvswitch-switch / ovn-host would start their services on install: forbid that (the tests
  # run their own daemons by PID).  policy-rc.d is removed again whatever happens.
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    trap '$SUDO rm -f "$policy"' EXIT
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
  fi
  if ((${#missing[@]})); then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  if ((${#missing_tools[@]})); then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing_tools[@]}" >/dev/null
  fi
  if trap -p EXIT | grep -q policy; then $SUDO rm -f "$policy"; trap - EXIT; fi
fi
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import ovn_northd_py, numpy, structlog, pytest' 2>/dev/null; then
  /usr/bin/python3 -m venv --system-site-packages .venv
  .venv/bin/pip install -q --disable-pip-version-check -e '.[test]'
fi
# Byte-compiled as a package install is (an editable install is not; PYTHONDONTWRITEBYTECODE
# would then have every daemon start compile its modules again).
.venv/bin/python -m compileall -q ovn_northd_py >/dev/null
