"""26.03's datapath groups of load-balancer flows, kept incrementally (NB 7.18 / SB 21.8 servers,
the 26.03 draft profile, ``--check-incremental=1``).

Load balancers come and go on switches and a gateway router; after each change SB must equal
what a fresh run writes from the same NB (every table, Logical_DP_Group included): the flows only
load balancers add keep groups of their own, apart from the other flows on the same datapaths.
"""

from __future__ import annotations

import json
from pathlib import Path

from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import mismatches, ovsdb_select
from ovn_northd_py.parity.faults import assert_converged
from ovn_northd_py.release import RELEASES

SWITCHES = ("sw0", "sw1", "sw2")


def test_lb_flow_groups_follow_load_balancer_changes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")
    rel = RELEASES["26.03"]
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    d: OurNorthd | None = None
    try:
        cmds = ["lr-add", "gw0", "--", "set", "logical_router", "gw0", "options:chassis=hv1"]
        for k, sw in enumerate(SWITCHES):
            cmds += ["--", "ls-add", sw, "--", "lsp-add", sw, f"{sw}-p",
                     "--", "lsp-set-addresses", f"{sw}-p", f"0a:00:00:00:00:{k:02x} 10.{k}.0.2"]
        nbctl(nb.remote, *cmds)
        d = OurNorthd(tmp_path, nb.remote, sb.remote, extra_args=["--check-incremental=1"]).start()
        steps = [
            ["lb-add", "lb0", "30.0.0.1:80", "10.0.0.2:8080", "tcp", "--", "ls-lb-add", "sw0", "lb0",
             "--", "ls-lb-add", "sw1", "lb0", "--", "ls-lb-add", "sw2", "lb0"],
            ["lb-add", "lb1", "30.0.0.2:443", "10.1.0.2:8443", "tcp", "--", "ls-lb-add", "sw0", "lb1",
             "--", "ls-lb-add", "sw1", "lb1", "--", "lr-lb-add", "gw0", "lb1",
             "--", "set", "load_balancer", "lb1", "options:skip_snat=true"],
            ["ls-lb-del", "sw2", "lb0"],
            ["lb-del", "lb1"],
        ]
        for i, step in enumerate(steps):
            nbctl(nb.remote, *step)
            assert_converged(nb.remote, sb.remote, tmp_path / f"step{i}", release=rel)
            assert not mismatches(d), mismatches(d)[0]
            if i == 0:
                # The three switches: one group for their own flows, one for lb0's flows, one for
                # the SB Load_Balancer row.  (With _uuid: ovsdb-server's select drops duplicate rows.)
                sets = [json.dumps(r["datapaths"], sort_keys=True) for r in
                        ovsdb_select(sb.remote, "OVN_Southbound", "Logical_DP_Group", ["_uuid", "datapaths"])]
                assert max(sets.count(s) for s in sets) == 3, sets
    finally:
        if d is not None:
            d.stop()
        sb.stop()
        nb.stop()
