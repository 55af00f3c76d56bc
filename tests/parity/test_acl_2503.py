"""Parity with the 25.03 reference (Debian trixie's ovn-northd, from its chroot) for the ACL features
NB 7.11 added: ``tier`` (and ``pass``), sampling (``sample_new`` / ``sample_est``, NB Sample,
Sample_Collector, Sampling_App; the ``ls_*_acl_sample`` stages) and ``options:persist-established``
with SB ``ACL_ID``.  Each NB is small; the whole SB must be equal (flows and every table).
"""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.nb_json import NbOps
from ovn_northd_py.devtools.servers import nbctl, sbctl


def _switches(remote: str) -> None:
    """sf (an allow-related ACL: stateful), sl (stateless ACLs only), lb (stateful through a load
    balancer VIP only); port group pg on sf and sl."""
    nbctl(remote, "ls-add", "sf", "--", "lsp-add", "sf", "f1", "--", "lsp-set-addresses", "f1", "00:00:00:00:00:01 10.0.0.1",
          "--", "ls-add", "sl", "--", "lsp-add", "sl", "l1", "--", "lsp-set-addresses", "l1", "00:00:00:00:01:01 10.1.0.1",
          "--", "ls-add", "lb", "--", "lsp-add", "lb", "b1",
          "--", "lb-add", "lb0", "30.0.0.1:80", "10.2.0.1:8080", "tcp", "--", "ls-lb-add", "lb", "lb0",
          "--", "pg-add", "pg", "f1", "l1",
          "--", "acl-add", "sf", "to-lport", "1", "ip4.src == 1.1.1.1", "allow-related")


def _acl(ops: NbOps, direction: str, priority: int, match: str, action: str, **cols: object) -> list[str]:
    row: dict[str, object] = {"direction": direction, "priority": priority, "match": match, "action": action}
    for k, v in cols.items():
        row[k] = ops.map(v) if isinstance(v, dict) else v
    return ops.insert("ACL", row)


def build_tiers_nb(remote: str) -> None:
    """Tiers 0..3 in the three eval stages, ``pass`` at each tier, on the three kinds of switch."""
    _switches(remote)
    ops = NbOps()
    after = {"apply-after-lb": "true"}
    for sw, base in (("sf", 100), ("sl", 200), ("lb", 300)):
        acls = [
            _acl(ops, "from-lport", base, "tcp", "pass", tier=0),
            _acl(ops, "from-lport", base + 1, "tcp.dst == 22", "drop", tier=1),
            _acl(ops, "from-lport", base + 2, "udp", "allow", tier=3),
            _acl(ops, "from-lport", base + 3, "icmp4", "reject", tier=2, options=after),
            _acl(ops, "from-lport", base + 4, "icmp6", "pass", tier=0, options=after),
            _acl(ops, "to-lport", base + 5, "tcp", "allow-related" if sw == "sf" else "allow", tier=2),
            _acl(ops, "to-lport", base + 6, "arp", "allow-stateless", tier=1),
        ]
        ops.add_to("Logical_Switch", sw, "acls", *acls)
    # Untiered ACLs of a port group join tier 0 of the switches they reach.
    ops.add_to("Port_Group", "pg", "acls", _acl(ops, "to-lport", 400, "ip6", "drop"))
    ops.transact(remote)


def build_sampling_nb(remote: str) -> None:
    """Samples of one collector (by register) and of two (per ACL), labels overriding them, every
    action, the three kinds of switch; the ``acl-est`` application missing (no est domain)."""
    _switches(remote)
    ops = NbOps()
    c1 = ops.insert("Sample_Collector", {"id": 1, "name": "c1", "probability": 65535, "set_id": 100})
    c2 = ops.insert("Sample_Collector", {"id": 7, "name": "c2", "probability": 300, "set_id": 456})
    one = ops.insert("Sample", {"collectors": ops.set(c1), "metadata": 1001})
    two = ops.insert("Sample", {"collectors": ops.set(c1, c2), "metadata": 1002})
    other = ops.insert("Sample", {"collectors": ops.set(c2), "metadata": 1003})
    none = ops.insert("Sample", {"collectors": ops.set(), "metadata": 1004})
    ops.insert("Sampling_App", {"type": "acl-new", "id": 42})
    ops.insert("Sampling_App", {"type": "drop", "id": 43})
    for sw, base in (("sf", 100), ("sl", 200), ("lb", 300)):
        acls = [
            _acl(ops, "from-lport", base, "tcp", "allow-related" if sw == "sf" else "allow",
                 sample_new=one, sample_est=two),
            _acl(ops, "from-lport", base + 1, "udp", "drop", sample_new=other, sample_est=one),
            _acl(ops, "to-lport", base + 2, "tcp.dst == 80", "allow", sample_new=two, sample_est=other),
            _acl(ops, "to-lport", base + 3, "arp", "allow-stateless", sample_new=one, sample_est=one),
            _acl(ops, "from-lport", base + 4, "icmp4", "reject", sample_new=two, options={"apply-after-lb": "true"}),
            _acl(ops, "to-lport", base + 5, "udp.dst == 53", "allow-related" if sw == "sf" else "allow",
                 label=77, sample_new=one, sample_est=two),
            _acl(ops, "from-lport", base + 6, "icmp6", "pass", sample_new=none, tier=1),
            _acl(ops, "to-lport", base + 7, "sctp", "allow-related" if sw == "sf" else "allow", sample_est=other),
        ]
        ops.add_to("Logical_Switch", sw, "acls", *acls)
    ops.add_to("Port_Group", "pg", "acls", _acl(ops, "to-lport", 500, "ip6", "drop", sample_new=one))
    ops.transact(remote)


def build_persist_nb(remote: str) -> None:
    """persist-established on allow-related ACLs (ids), on allow (no id), set to false, after LB, on a
    port group; with labels and samples."""
    _switches(remote)
    ops = NbOps()
    persist = {"persist-established": "true"}
    c1 = ops.insert("Sample_Collector", {"id": 3, "name": "c1", "probability": 100, "set_id": 9})
    s = ops.insert("Sample", {"collectors": ops.set(c1), "metadata": 5})
    ops.insert("Sampling_App", {"type": "acl-est", "id": 2})
    ops.add_to("Logical_Switch", "sf", "acls",
               _acl(ops, "from-lport", 100, "tcp", "allow-related", options=persist),
               _acl(ops, "to-lport", 101, "udp", "allow-related", options=persist, label=12),
               _acl(ops, "from-lport", 102, "icmp4", "allow-related", options={**persist, "apply-after-lb": "true"},
                    sample_est=s),
               _acl(ops, "to-lport", 103, "tcp.dst == 1", "allow", options=persist),
               _acl(ops, "to-lport", 104, "tcp.dst == 2", "allow-related", options={"persist-established": "false"}))
    ops.add_to("Logical_Switch", "lb", "acls", _acl(ops, "to-lport", 105, "tcp.dst == 3", "allow-related",
                                                    options=persist, tier=1))
    ops.add_to("Port_Group", "pg", "acls", _acl(ops, "from-lport", 106, "udp.dst == 4", "allow-related",
                                                options=persist))
    ops.transact(remote)


@pytest.mark.parametrize("builder", [build_tiers_nb, build_sampling_nb, build_persist_nb],
                         ids=["tiers", "sampling", "persist-established"])
def test_acl_2503_feature_equals_reference(parity_2503, builder) -> None:
    r = parity_2503(builder)
    assert r.reference.settled and r.ours.settled, r.report()
    assert r.flows is not None and r.flows.ref_count > 100, r.report()
    assert r.ok, r.report()



def build_router_port_acl_nb(remote: str) -> None:
    """Router ports of a stateful switch: peers that are distributed gateway ports with and without
    ``enable_router_port_acl``, a plain router peer with it (ignored there)."""
    cmds: list[str] = ["ls-add", "sw0", "--", "lsp-add", "sw0", "p1",
                       "--", "acl-add", "sw0", "to-lport", "100", "tcp", "allow-related"]
    for r, (gw, acl) in enumerate(((True, True), (True, False), (False, True))):
        cmds += ["--", "lr-add", f"r{r}", "--", "lrp-add", f"r{r}", f"r{r}-sw0", f"00:00:00:00:ff:0{r}", f"10.0.0.{250 + r}/24",
                 "--", "lsp-add", "sw0", f"sw0-r{r}", "--", "lsp-set-type", f"sw0-r{r}", "router",
                 "--", "lsp-set-addresses", f"sw0-r{r}", "router",
                 "--", "lsp-set-options", f"sw0-r{r}", f"router-port=r{r}-sw0",
                 *([f"enable_router_port_acl={str(acl).lower()}"])]
        if gw:
            cmds += ["--", "lrp-set-gateway-chassis", f"r{r}-sw0", "hv1", "10"]
    nbctl(remote, *cmds)


def test_router_port_acl_keeps_dgp_peers_in_conntrack(parity_2503) -> None:
    """(Other stages differ: 25.03 gives a switch port peering a router's only DGP a chassisredirect
    port of its own, which is not built yet.)"""
    r = parity_2503(build_router_port_acl_nb)
    assert r.flows is not None, r.report()
    by_stage = {s.stage: s for s in r.flows.stages}
    for name in ("ls_in_pre_acl", "ls_out_pre_acl", "ls_in_pre_lb", "ls_out_pre_lb"):
        assert by_stage[name].ok and by_stage[name].ref_count > 5, r.report()


def chassis_without_features(_nb: str, sb: str) -> None:
    """A chassis announcing no feature at all (``other_config`` without feature keys)."""
    sbctl(sb, "chassis-add", "hv1", "geneve", "127.0.0.1")


def build_sampling_and_persist_nb(remote: str) -> None:
    build_sampling_nb(remote)
    ops = NbOps()
    ops.add_to("Logical_Switch", "sf", "acls", _acl(ops, "from-lport", 600, "tcp.dst == 6", "allow-related",
                                                    options={"persist-established": "true"}))
    ops.transact(remote)


def test_old_chassis_get_per_acl_samples_no_acl_ids_in_flows_and_ct_mark_still(parity_2503) -> None:
    """Without ``ovn-sample-with-registers`` every Sample is sampled per ACL, without
    ``ct-label-flush`` no ACL id is committed; 25.03 no longer reads ``ct-no-masked-label`` /
    ``ovn-ct-lb-related`` (ct_mark flags, no SB_Global lb_hairpin_use_ct_mark).  (SB Load_Balancer
    differs: ``ls-dpg-column`` is not read yet.)"""
    r = parity_2503(build_sampling_and_persist_nb, after_settle=chassis_without_features,
                    tables=("Logical_Flow", "ACL_ID", "SB_Global"))
    assert r.flows is not None and r.flows.ref_count > 100, r.report()
    assert r.ok, r.report()
