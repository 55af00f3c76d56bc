"""Parity with the reference ovn-northd for load balancers on logical switches.

VIPs with and without port, IPv4/IPv6, tcp/udp/sctp, ``reject`` without backends, empty backends,
``affinity_timeout``, ``skip_snat``, ``hairpin_snat_ip``, ``selection_fields``, one VIP in two load
balancers, load balancer groups, a load balancer without VIPs: the load-balancer stages must match
the reference exactly, and nothing we write may be wrong (``flows.extra == 0``).
"""

from __future__ import annotations

from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.parity.stage_names import release_stage_names

LB_STAGES = release_stage_names((
    "ls_in_pre_lb", "ls_out_pre_lb", "ls_in_pre_stateful", "ls_out_pre_stateful", "ls_in_lb_aff_check",
    "ls_in_lb", "ls_in_lb_aff_learn", "ls_in_pre_hairpin", "ls_in_nat_hairpin", "ls_in_hairpin",
    "ls_in_acl_hint", "ls_in_acl", "ls_in_acl_after_lb", "ls_in_stateful",
))


def _uuid(remote: str, table: str, name: str) -> str:
    return nbctl(remote, "--bare", "--columns=_uuid", "find", table, f"name={name}").strip()


def build_switch_lbs_nb(remote: str) -> None:
    cmds: list[list[str]] = [["ls-add", f"s{i}"] for i in range(8)]
    cmds += [
        ["lsp-add", "s0", "p0"], ["lr-add", "r0"],
        ["lb-add", "web", "10.0.0.100:80", "10.0.0.2:80,10.0.0.3:80", "tcp"],
        ["lb-add", "dns", "10.0.0.53:53", "10.0.0.4:53", "udp"],
        ["lb-add", "sc", "10.0.0.54:99", "10.0.0.6:99", "sctp"],
        ["lb-add", "v6", "[fd00::100]:443", "[fd00::2]:443", "tcp"],
        ["lb-add", "v6np", "fd00::200", "fd00::3"],
        ["lb-add", "noport", "10.0.0.200", "10.0.0.5"],
        ["lb-add", "empty", "10.0.0.201:80", ""],
        ["lb-add", "emptyrej", "10.0.0.202:80", ""],
        ["lb-add", "aff", "10.0.0.210:80", "10.0.0.7:80,10.0.0.8:80"],
        ["lb-add", "aff6", "[fd00::210]:80", "[fd00::7]:80"],
        ["lb-add", "snat", "10.0.0.220:80", "10.0.0.9:80"],
        ["lb-add", "router-only", "20.0.0.1:80", "20.0.0.2:80"],
        ["lb-add", "affnp", "10.1.0.1", "10.1.0.2"],
        ["lb-add", "affudp", "10.1.0.3:53", "10.1.0.4:54", "udp"],
        ["lb-add", "rejudp", "10.1.0.5:53", "", "udp"],
        ["lb-add", "hsnat", "10.1.0.6:80", "10.1.0.7:80"],
        ["lb-add", "selflds", "10.1.0.8:80", "10.1.0.9:80"],
        ["lb-add", "dup", "10.0.0.100:80", "10.9.9.9:80"],
        ["lb-add", "twov", "10.1.0.10:80", "10.1.0.11:80"],
        ["lb-add", "twov", "10.1.0.12:81", "10.1.0.13:82"],
        ["ls-lb-add", "s0", "web"], ["ls-lb-add", "s1", "web"], ["ls-lb-add", "s2", "dns"],
        ["ls-lb-add", "s3", "noport"], ["lr-lb-add", "r0", "router-only"],
        ["ls-lb-add", "s4", "sc"], ["ls-lb-add", "s4", "v6np"], ["ls-lb-add", "s4", "empty"],
        ["ls-lb-add", "s4", "emptyrej"], ["ls-lb-add", "s5", "aff"], ["ls-lb-add", "s5", "aff6"],
        ["ls-lb-add", "s5", "snat"],
        ["ls-lb-add", "s6", "affnp"], ["ls-lb-add", "s6", "affudp"], ["ls-lb-add", "s6", "rejudp"],
        ["ls-lb-add", "s6", "hsnat"], ["ls-lb-add", "s6", "selflds"], ["ls-lb-add", "s6", "dup"],
        ["ls-lb-add", "s6", "web"], ["ls-lb-add", "s6", "twov"],
        ["set", "load_balancer", "web", "options:reject=true"],
        ["set", "load_balancer", "emptyrej", "options:reject=true"],
        ["set", "load_balancer", "rejudp", "options:reject=true"],
        ["set", "load_balancer", "aff", "options:affinity_timeout=60"],
        ["set", "load_balancer", "aff6", "options:affinity_timeout=30"],
        ["set", "load_balancer", "affnp", "options:affinity_timeout=10"],
        ["set", "load_balancer", "affudp", "options:affinity_timeout=10"],
        ["set", "load_balancer", "snat", "options:skip_snat=true"],
        ["set", "load_balancer", "hsnat", 'options:hairpin_snat_ip="42.42.42.42 fd42::42"'],
        ["set", "load_balancer", "selflds", "selection_fields=ip_src,tp_dst"],
        ["create", "load_balancer", "name=novips", "protocol=tcp"],
        ["create", "load_balancer_group", "name=grp"],
    ]
    for c in cmds:
        nbctl(remote, *c)
    grp = _uuid(remote, "load_balancer_group", "grp")
    for lb in ("v6", "dns"):
        nbctl(remote, "add", "load_balancer_group", grp, "load_balancer", _uuid(remote, "load_balancer", lb))
    for sw in ("s0", "s3"):
        nbctl(remote, "add", "logical_switch", sw, "load_balancer_group", grp)
    nbctl(remote, "add", "logical_switch", "s7", "load_balancer", _uuid(remote, "load_balancer", "novips"))


def test_switch_lb_stages_equal_reference(parity_run) -> None:
    r = parity_run(build_switch_lbs_nb, tables=("Load_Balancer", "Logical_Flow"))
    assert r.reference.settled and r.ours.settled, r.report()
    assert r.tables["Load_Balancer"].ok, r.report()
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in LB_STAGES:
        s = by_stage[name]
        assert not s.missing and not s.extra, f"{name}\n" + r.report()
    assert by_stage["ls_in_lb"].ref_count > 30
    assert flows.extra == 0, r.report()
