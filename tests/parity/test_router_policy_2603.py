"""Parity with the 26.03 reference (sid's ovn-northd, from its chroot) for ``Logical_Router_Policy``
``output_port`` (NB 7.18): a one-hop reroute leaves through the named port, from its address in
the next hop's network or else its first of the family (IPv4 and IPv6, a port of another router
included); ECMP reroutes naming one are left out and take no ECMP group id.  Skipped without the
sid chroot."""

from __future__ import annotations

from test_network_function_2603 import _parity_2603

from ovn_northd_py.devtools.nb_json import NbOps, select
from ovn_northd_py.devtools.servers import nbctl


def build_policy_output_port_nb(remote: str) -> None:
    nbctl(remote, "lr-add", "lr0", "--", "lrp-add", "lr0", "lrp1", "00:00:00:00:01:01", "10.0.0.1/24", "20.0.0.1/24", "fd00::1/64",
          "--", "lrp-add", "lr0", "lrp2", "00:00:00:00:01:02", "30.0.0.1/24",
          "--", "lr-add", "lr1", "--", "lrp-add", "lr1", "other", "00:00:00:00:02:01", "40.0.0.1/24")
    lrps = {r["name"]: ["uuid", r["_uuid"][1]] for r in select(remote, "Logical_Router_Port", ["_uuid", "name"])}
    ops = NbOps()
    pols = []

    def pol(prio: int, match: str, hops: list[str], port: str | None = None) -> None:
        row = {"priority": prio, "match": match, "action": "reroute", "nexthops": ops.set(*hops)}
        if port:
            row["output_port"] = lrps[port]
        pols.append(ops.insert("Logical_Router_Policy", row))

    pol(100, "ip4.src == 1.1.1.1", ["30.0.0.5"], "lrp1")  # not in lrp1's networks: its first address
    pol(101, "ip4.src == 1.1.1.2", ["20.0.0.5"], "lrp1")  # in its second network
    pol(102, "ip4.src == 1.1.1.3", ["10.0.0.9"])
    pol(104, "ip6.src == ::1", ["fd01::5"], "lrp1")
    pol(105, "ip4.src == 1.1.1.5", ["40.0.0.5"], "other")  # another router's port
    pol(106, "ip4.src == 1.1.1.7", ["99.0.0.6"], "lrp2")
    pol(107, "ip6.src == ::2", ["fd01::6"], "lrp2")  # no IPv6 address on the port
    # ECMP: those with an output port are left out, taking no group id (one without: its id is 1;
    # with several, the reference's numbering varies from run to run).
    for k in range(3):
        pol(200 + k, f"ip4.src == 2.2.2.{k}", ["10.0.0.8", "10.0.0.9"], "lrp1" if k else None)
    ops.add_to("Logical_Router", "lr0", "policies", *pols)
    ops.transact(remote)


def test_26_03_policy_output_port_equals_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_policy_output_port_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()
