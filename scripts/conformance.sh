#!/usr/bin/env bash
# OVN's own northd test suite (tests/ovn-northd.at, run through autotest) with ovn-northd-py in
# place of the C ovn-northd, and with the C ovn-northd built from the same release as the baseline.
#
#     bash scripts/conformance.sh RELEASE [SELECT]
#
# RELEASE: an OVN release with a tarball in $UPSTREAM (default /work/shared/upstream): 23.03 (or
# 23.03.1: ovn-23.03.1.tar.xz), 25.03, 26.03.  The OVS tarball is the commit OVN's `ovs` submodule
# pins at that tag, read from the table in $UPSTREAM/README.md.
#
# SELECT (default `northd`):
#   northd        every test of ovn-northd.at once: the "parallelization=no" variant of a test
#                 that has both (97 tests in 23.03.1, 161 in 25.03.0, whose tests mostly come in
#                 the "parallelization=yes" variant only, 209 in 26.03.1)
#   northd-all    every test of ovn-northd.at
#   anything else autotest's own arguments, e.g. `963 981-989` or `-k 'check from NBDB'`
#
# Both trees are unpacked and built once per machine in
# $CONFORMANCE_CACHE/<version> (default /var/cache/ovn-northd-py/conformance/<version>):
# OVS `./boot.sh && ./configure && make -j2`, OVN `./boot.sh && ./configure --with-ovs-source=...
# && make -j2` plus the test PKI (`check_DATA`).  A `.built` stamp marks a finished build.
#
# How ours replaces the C daemon: OVN's tests start `ovn-northd` from AUTOTEST_PATH (ovn_start ->
# start_daemon ovn-northd ... --detach --pidfile --log-file -vconsole:off -vjsonrpc --ovnnb-db=...
# --ovnsb-db=...) and talk to it with `ovn-appctl -t ovn-northd`.  For our run, AUTOTEST_PATH gets
# in front a directory holding a single wrapper named `ovn-northd`:
#
#     unset PYTHONPATH     # the testsuite points it at OVS' source python/; ours uses its venv's
#     exec <repo>/.venv/bin/python -m ovn_northd_py "$@"
#
# Nothing else changes: OVN's test files and expectations are used as they are.
#
# Output: `C ovn-northd: N passed, M failed` and `ovn-northd-py: N passed, M failed` with the names
# of the failing tests.  Everything else goes to $CONFORMANCE_OUT (default
# /var/tmp/ovn-northd-py-conformance/<version>): per side the testsuite's stdout (`<side>.out`), its
# `testsuite.log` with every failing test's commands and diffs (`<side>-testsuite.log`), the test
# directories of the failures (`<side>.dir/`), and `<side>.json` ({"passed": [...], "failed":
# [...], "skipped": [...]}, as "NUMBER TITLE").
#
# Environment: CONFORMANCE_SIDES="c ours" (the default; either alone), CONFORMANCE_JOBS (autotest
# -j, default 1), UPSTREAM, CONFORMANCE_CACHE, CONFORMANCE_OUT.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
UPSTREAM=${UPSTREAM:-/work/shared/upstream}
CACHE=${CONFORMANCE_CACHE:-/var/cache/ovn-northd-py/conformance}
SIDES=${CONFORMANCE_SIDES:-c ours}
JOBS=${CONFORMANCE_JOBS:-1}

[ $# -ge 1 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
RELEASE=$1; shift
SELECT=${*:-northd}

# --- which tarballs --------------------------------------------------------------------------
ovn_tar=$(ls "$UPSTREAM"/ovn-"$RELEASE".tar.xz "$UPSTREAM"/ovn-"$RELEASE".[0-9]*.tar.xz 2>/dev/null \
          | sort -V | tail -n1 || true)
[ -n "$ovn_tar" ] || { echo "no OVN tarball for $RELEASE in $UPSTREAM" >&2; exit 2; }
version=$(basename "$ovn_tar" .tar.xz); version=${version#ovn-}
ovs_tar=$(grep -F "ovn-$version.tar.xz" "$UPSTREAM/README.md" | grep -oE 'ovs-[0-9a-f]+\.tar\.xz' | head -n1 || true)
[ -n "$ovs_tar" ] && [ -f "$UPSTREAM/$ovs_tar" ] \
  || { echo "no OVS tarball for ovn-$version in $UPSTREAM/README.md" >&2; exit 2; }
OUT=${CONFORMANCE_OUT:-/var/tmp/ovn-northd-py-conformance/$version}
BUILD=$CACHE/$version
OVS_DIR=$BUILD/$(basename "$ovs_tar" .tar.xz)
OVN_DIR=$BUILD/ovn-$version

# --- build (once per machine) ---------------------------------------------------------------
build_tree() {  # NAME DIR TARBALL CONFIGURE-ARGS...
  local name=$1 dir=$2 tar=$3 t0; shift 3
  if [ -f "$dir/.built" ]; then return 0; fi
  t0=$(date +%s)
  echo "building $name in $dir (log: $dir.build.log) ..." >&2
  mkdir -p "$BUILD"; rm -rf "$dir"
  tar -C "$BUILD" -xJf "$tar"
  if ! ( cd "$dir" && ./boot.sh && ./configure "$@" && make -j2 ) >"$dir.build.log" 2>&1; then
    tail -n 30 "$dir.build.log" >&2; echo "building $name failed, see $dir.build.log" >&2; exit 1
  fi
  touch "$dir/.built"
  echo "built $name in $(( $(date +%s) - t0 )) s" >&2
}
need_pkgs() {
  local missing=() p
  for p in build-essential autoconf automake libtool libssl-dev python3-dev libcap-ng-dev libunbound-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} = 0 ] && return 0
  echo "installing ${missing[*]}" >&2
  local sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}
mkdir -p "$BUILD"
exec 9>"$BUILD.lock"
flock 9  # one build per machine at a time (another run may be building the same tree)
if [ ! -f "$OVS_DIR/.built" ] || [ ! -f "$OVN_DIR/.built" ]; then need_pkgs; fi
build_tree "OVS $(basename "$ovs_tar" .tar.xz)" "$OVS_DIR" "$UPSTREAM/$ovs_tar"
if [ ! -f "$OVN_DIR/.built" ]; then
  # The testsuite, its atconfig/atlocal and the test PKI (check_DATA) come with the build.
  build_tree "OVN $version" "$OVN_DIR" "$ovn_tar" --with-ovs-source="$OVS_DIR"
  rm -f "$OVN_DIR/.built"
  ( cd "$OVN_DIR" && make -j2 tests/testsuite tests/atconfig tests/atlocal \
      $(make -s -f Makefile -f - print-check_DATA <<<$'print-%:\n\t@echo $($*)') ) \
      >>"$OVN_DIR.build.log" 2>&1 || { tail -n 30 "$OVN_DIR.build.log" >&2; exit 1; }
  touch "$OVN_DIR/.built"
fi
AUTOTEST_PATH=$(cd "$OVN_DIR" && make -s -f Makefile -f - print-AUTOTEST_PATH <<<$'print-%:\n\t@echo $($*)')
flock -u 9
exec 9>&-  # the tests and daemons started below must not inherit the lock's fd

# --- which tests ---------------------------------------------------------------------------
TESTSUITE=$OVN_DIR/tests/testsuite
list_numbers() {  # GREP-ARGS: filter "NUMBER: FILE:LINE TITLE" lines of ovn-northd.at's tests
  (cd "$OVN_DIR/tests" && "$TESTSUITE" -l) \
    | grep -E '^ *[0-9]+: ovn-northd\.at:[0-9]+ ' | grep "$@" | awk -F: '{print $1}' | tr -d ' ' | tr '\n' ' '
}
one_variant() {  # every test of ovn-northd.at once: its "parallelization=no" variant when it has both
  (cd "$OVN_DIR/tests" && "$TESTSUITE" -l) | grep -E '^ *[0-9]+: ovn-northd\.at:[0-9]+ ' \
    | awk '{ n = $1; sub(/:$/, "", n); t = $0; sub(/^ *[0-9]+: [^ ]+ +/, "", t); p = t; sub(/ -- parallelization=(yes|no)$/, "", t)
             if (!(t in pick) || p ~ /parallelization=no$/) pick[t] = n; if (!(t in seen)) { seen[t] = 1; order[++k] = t } }
           END { for (i = 1; i <= k; i++) printf "%s ", pick[order[i]] }'
}
case "$SELECT" in
  northd) read -r -a ARGS <<<"$(one_variant)" ;;
  northd-all) read -r -a ARGS <<<"$(list_numbers '')" ;;
  *) eval "ARGS=($SELECT)" ;;
esac
[ ${#ARGS[@]} -gt 0 ] || { echo "no test selected by: $SELECT" >&2; exit 2; }

# --- our wrapper ---------------------------------------------------------------------------
[ -x "$REPO/.venv/bin/python" ] || bash "$REPO/scripts/setup.sh" >&2
mkdir -p "$OUT"
WRAP=$OUT/ours-bin
mkdir -p "$WRAP"
cat >"$WRAP/ovn-northd" <<EOF
#!/bin/sh
# ovn-northd-py in place of ovn-northd for OVN's testsuite (scripts/conformance.sh): same arguments.
# The testsuite sets PYTHONPATH to OVS' source python/; ours runs on its own venv's python-ovs.
unset PYTHONPATH
exec "$REPO/.venv/bin/python" -m ovn_northd_py "\$@"
EOF
chmod 755 "$WRAP/ovn-northd"

# --- run -----------------------------------------------------------------------------------
run_side() {  # SIDE
  local side=$1 path=$AUTOTEST_PATH label t0 run
  case $side in
    c) label="C ovn-northd" ;;
    ours) label="ovn-northd-py"; path=$WRAP:$AUTOTEST_PATH ;;
    *) echo "unknown side $side (c|ours)" >&2; exit 2 ;;
  esac
  # Each side runs in a directory of its own, with the build's atconfig/atlocal.
  run=$OUT/$side.run
  rm -rf "$run" "$OUT/$side.dir"; mkdir -p "$run"
  cp "$OVN_DIR/tests/atconfig" "$OVN_DIR/tests/atlocal" "$run/"
  # atconfig's relative directories are relative to tests/: make them absolute.
  sed -i "s|^at_srcdir=.*|at_srcdir='$OVN_DIR/tests'|; s|^at_top_srcdir=.*|at_top_srcdir='$OVN_DIR'|;
          s|^at_top_build_prefix=.*|at_top_build_prefix='$OVN_DIR/'|" "$run/atconfig"
  t0=$(date +%s)
  echo "running ${#ARGS[@]} test selection(s) with $label ..." >&2
  # OVN's `make check` exports ovs_srcdir / ovs_builddir to the testsuite: the tests that start
  # simulated hypervisors (sim_add: ovsdb-tool create ... $ovs_srcdir/vswitchd/vswitch.ovsschema)
  # need them.
  ( cd "$OVN_DIR" && ovs_srcdir=$OVS_DIR ovs_builddir=$OVS_DIR \
      "$TESTSUITE" -C "$run" AUTOTEST_PATH="$path" -j"$JOBS" "${ARGS[@]}" ) \
    >"$OUT/$side.out" 2>&1 || true
  [ -f "$run/testsuite.log" ] && cp "$run/testsuite.log" "$OUT/$side-testsuite.log"
  [ -d "$run/testsuite.dir" ] && mv "$run/testsuite.dir" "$OUT/$side.dir"
  python3 - "$OUT/$side.out" "$OUT/$side.json" "$label" "$(( $(date +%s) - t0 ))" <<'PY'
import json, re, sys
out, dest, label, secs = sys.argv[1:]
res = {"passed": [], "failed": [], "skipped": []}
for line in open(out, errors="replace"):
    m = re.match(r"^\s*(\d+): (.*?)\s+(ok|skipped|FAILED|expected failure|UNEXPECTED PASS)\b", line)
    if not m:
        continue
    key = {"ok": "passed", "skipped": "skipped", "expected failure": "passed"}.get(m.group(3), "failed")
    res[key].append(f"{m.group(1)} {m.group(2)}")
res["seconds"] = int(secs)
json.dump(res, open(dest, "w"), indent=1)
print(f"{label}: {len(res['passed'])} passed, {len(res['failed'])} failed"
      + (f", {len(res['skipped'])} skipped" if res["skipped"] else "") + f" ({secs} s)")
for t in res["failed"]:
    print(f"  FAILED {t}")
PY
}
for side in $SIDES; do run_side "$side"; done
echo "logs, diffs and per-test directories: $OUT"
