"""Parity with the 25.03 reference for Logical_Router ``options:ct-commit-all`` (``man ovn-nb``;
``man ovn-northd`` POST USNAT, DEFRAG, DNAT, POST UNDNAT, SNAT): gateway routers and routers with a
distributed gateway port, with stateful and stateless NAT and load balancers, and chassis with and
without the ``ct-commit-to-zone`` / ``ct-next-zone`` features."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ovn_northd_py.devtools.servers import nbctl, sbctl


def build_ct_commit_all_nb(remote: str) -> None:
    """Routers with ct-commit-all: d1 (DGP, snat), d2 (DGP, load balancer only), d3 (DGP, stateless
    dnat_and_snat only), d4 (DGP, nothing), g1 (gateway, dnat), g2 (gateway, nothing), p1 (plain,
    load balancer), d5 (DGP, snat, ct-commit-all=false), d6 (two DGPs, snat on the second)."""
    cmds: list[str] = ["lb-add", "lb0", "172.168.0.100:8082", "10.0.0.50:82,10.0.0.60:82"]
    for i, r in enumerate(("d1", "d2", "d3", "d4", "g1", "g2", "p1", "d5", "d6")):
        cmds += ["--", "lr-add", r, "--", "set", "logical_router", r,
                 f"options:ct-commit-all={'false' if r == 'd5' else 'true'}",
                 "--", "lrp-add", r, f"{r}-in", f"00:00:00:00:{i:02x}:01", f"10.{i}.0.1/24",
                 "--", "lrp-add", r, f"{r}-out", f"00:00:00:00:{i:02x}:02", f"172.{i}.0.10/24", f"2001:db8:{i}::10/64"]
        if r.startswith("d"):
            cmds += ["--", "lrp-set-gateway-chassis", f"{r}-out", "gw1"]
        elif r.startswith("g"):
            cmds += ["--", "set", "logical_router", r, "options:chassis=gw1"]
    cmds += ["--", "lrp-add", "d6", "d6-out2", "00:00:00:00:08:03", "173.8.0.10/24",
             "--", "lrp-set-gateway-chassis", "d6-out2", "gw1",
             "--", "lr-nat-add", "d6", "snat", "173.8.0.10", "10.8.0.0/24"]
    cmds += ["--", "lr-nat-add", "d1", "snat", "172.1.0.10", "10.0.0.0/24",
             "--", "lr-nat-add", "d5", "snat", "172.7.0.10", "10.7.0.0/24",
             "--", "lr-lb-add", "d2", "lb0", "--", "lr-lb-add", "p1", "lb0",
             "--", "--stateless", "lr-nat-add", "d3", "dnat_and_snat", "172.2.0.20", "10.2.0.20",
             "--", "lr-nat-add", "g1", "dnat", "172.4.0.20", "10.4.0.20"]
    nbctl(remote, *cmds)


def chassis_with(*features: str) -> Callable[[str, str], None]:
    def add(_nb: str, sb: str) -> None:
        sbctl(sb, "chassis-add", "gw1", "geneve", "127.0.0.1", "--", "set", "chassis", "gw1",
              "other_config:is-interconn=false", *(f"other_config:{f}=true" for f in features))
    return add


@pytest.mark.parametrize("features", [("ct-commit-to-zone", "ct-next-zone"), ("ct-commit-to-zone",), ("ct-next-zone",), ()],
                         ids=["features", "no-ct-next-zone", "no-ct-commit-to-zone", "none"])
def test_ct_commit_all_equals_reference(parity_2503, features) -> None:
    r = parity_2503(build_ct_commit_all_nb, after_settle=chassis_with(*features), tables=("Logical_Flow",))
    assert r.flows is not None and r.flows.ref_count > 100, r.report()
    assert r.ok, r.report()
