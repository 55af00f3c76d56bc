"""Last in the session: no ovn-controller of this session met a logical flow it could not parse,
and none died.

A flow that names an address set or port group missing from SB (or any other malformed flow) is
logged by ovn-controller ("Syntax error ...", "expecting address set name", lflow warnings) and
left out of OpenFlow.  Each module's chassis log is kept until the session ends and checked here
(but a chassis of an older release than the northd, ``test_dp_old_chassis``: it cannot read every
newer flow, whichever the northd).
"""

from __future__ import annotations

from pathlib import Path

from ovn_northd_py.devtools import dataplane as dp


def test_no_parse_errors_in_ovn_controller_logs(dataplane_session: None) -> None:
    checked = 0
    found: list[str] = []
    for st in dp.ALL_STACKS:
        if st.chassis is None or st.older_chassis:
            continue
        checked += 1
        for line in st.chassis.log_errors():
            found.append(f"{st.chassis.controller_log}: {line}")
    assert not found, f"{len(found)} parse errors in ovn-controller logs of {checked} chassis:\n" + "\n".join(
        found[:20])


def test_no_incremental_run_differed_from_a_full_recompute(dataplane_session: None) -> None:
    """With ``DATAPLANE_NORTHD_ARGS=--check-incremental=1``: no comparison of ours found a difference
    (without it there is no comparison, and nothing to find)."""
    found = []
    for st in dp.ALL_STACKS:
        if isinstance(st.northd_log, Path) and st.northd_kind != "c" and st.northd_log.exists():
            found += [f"{st.northd_log}: {ln[:600]}" for ln in st.northd_log.read_text(errors="replace").splitlines()
                      if "incremental state differs from a full recompute" in ln]
    assert not found, "\n".join(found[:10])


def test_no_chassis_daemon_died(dataplane_session: None) -> None:
    dead = {str(st.chassis.rundir): st.chassis.died for st in dp.ALL_STACKS if st.chassis and st.chassis.died}
    running = [st for st in dp.ALL_STACKS if st.chassis is not None and st.chassis.pids]
    for st in running:
        assert st.chassis is not None
        gone = [n for n in st.chassis.pids if not st.chassis.alive(n)]
        if gone:
            dead[str(st.chassis.rundir)] = gone
    assert not dead, f"chassis daemons died during the session (rundir: daemons): {dead}"
