"""Parity with the 25.03 reference for ECMP static routes with ``selection_fields`` (behaviour
``route_selection_fields``): the group's ``select()`` hashes the named fields, with one flow per
Layer 4 protocol for ``tp_src`` / ``tp_dst``.  One ECMP group per router (the reference numbers the
groups and members of a router in a hash order): the ``lr_in_ip_routing`` flows are compared.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from test_router_2503 import with_json
from test_router_basics import Cmd

from ovn_northd_py.devtools import nb_json


@pytest.fixture(autouse=True)
def _release_25_03(monkeypatch):
    monkeypatch.setenv("OVN_PARITY_RELEASE", "25.03")
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")


# router -> (family, selection fields of its two routes)
GROUPS: dict[str, tuple[int, tuple[str, ...], tuple[str, ...]]] = {
    "r1": (4, ("ip_proto", "ip_src", "ip_dst"), ("ip_proto", "ip_src", "ip_dst")),
    "r2": (4, ("ip_src", "ip_dst", "tp_src", "tp_dst"), ("ip_src", "ip_dst", "tp_src", "tp_dst")),
    "r3": (6, ("ipv6_src", "ipv6_dst", "eth_src"), ("ipv6_src", "ipv6_dst", "eth_src")),
    "r4": (4, ("tp_dst",), ("tp_dst",)),
    "r5": (4, (), ()),
    "r6": (4, ("ip_src",), ("ip_dst",)),
    "r7": (4, ("ip_src", "ip_dst"), ("ip_src",)),
}


def selection_fields_nb() -> Callable[[str], None]:
    cmds: list[Cmd] = []
    ops: list[nb_json.Op] = []
    for n, (router, (fam, f1, f2)) in enumerate(GROUPS.items(), start=1):
        cmds += [["lr-add", router],
                 ["lrp-add", router, f"{router}-a", f"02:00:00:00:0{n}:01", f"10.0.{n}.1/24", f"fd0{n}::1/64"]]
        prefix = "172.16.0.0/16" if fam == 4 else "2001:db8::/32"
        for k, fields in enumerate((f1, f2), start=1):
            tag = f"{router}-{k}"
            hop = f"10.0.{n}.{10 + k}" if fam == 4 else f"fd0{n}::{10 + k}"
            cmds += [["--id=@" + tag.replace("-", "_"), "create", "Logical_Router_Static_Route", f"ip_prefix=\"{prefix}\"",
                      f"nexthop=\"{hop}\"", f"external_ids:tag={tag}"],
                     ["add", "logical_router", router, "static_routes", "@" + tag.replace("-", "_")]]
            if fields:
                ops.append(nb_json.update("Logical_Router_Static_Route", {"selection_fields": ["set", list(fields)]},
                                          ids=("tag", tag)))
    return with_json(cmds, ops)


def test_ecmp_route_selection_fields(parity_run):
    r = parity_run(selection_fields_nb(), tables=("Logical_Flow",))
    assert r.reference.settled and r.ours.settled, r.report()
    assert r.flows is not None
    routing = next(s for s in r.flows.stages if s.stage == "lr_in_ip_routing")
    assert routing.ok and routing.ref_count > 20, r.report()
    assert r.ref_dump is not None
    hashed = [str(f["actions"]) for f in r.ref_dump.rows("Logical_Flow").values() if "hash_fields" in str(f["actions"])]
    # (r1's flow and r2's base flow are one row: the same match and actions on two routers)
    assert len(hashed) >= 1 + 3 + 1 + 4, "\n".join(sorted(hashed))
