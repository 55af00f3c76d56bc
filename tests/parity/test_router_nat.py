"""Parity with the reference ovn-northd for router NAT and load-balancer VIP flows (:mod:`.lr_nat`).

Small NBs: a gateway router and a router with a distributed gateway port, each with snat, dnat and
dnat_and_snat rules and a TCP load balancer; floating IPs (``external_mac`` + ``logical_port``); NAT-only
and LB-only gateway routers.  The ``$_rtr_lb_*`` ARP replies of VIPs inside a port's networks are not
built yet (they need the router's VIP address sets): they are the only differences allowed.
"""

from __future__ import annotations

from collections.abc import Callable

from test_router_basics import Cmd, rport, vif

from ovn_northd_py.parity.harness import ParityResult, nbctl_commands, workload

NAT_STAGES = (
    "lr_in_admission", "lr_in_ip_input", "lr_in_unsnat", "lr_in_defrag", "lr_in_lb_aff_check", "lr_in_dnat",
    "lr_in_lb_aff_learn", "lr_in_arp_resolve", "lr_in_gw_redirect", "lr_out_chk_dnat_local", "lr_out_undnat",
    "lr_out_post_undnat", "lr_out_snat", "lr_out_post_snat", "lr_out_egr_loop",
)


def _nat_rules(router: str, ext: str, inner: str) -> list[Cmd]:
    return [
        ["lr-nat-add", router, "dnat", f"{ext}.100", f"{inner}.10"],
        ["lr-nat-add", router, "snat", f"{ext}.101", f"{inner}.0/24"],
        ["lr-nat-add", router, "dnat_and_snat", f"{ext}.102", f"{inner}.12"],
    ]


def gateway_router_nb() -> Callable[[str], None]:
    """A gateway router with snat/dnat/dnat_and_snat and a TCP LB; a NAT-only and an LB-only one."""
    return nbctl_commands(
        ["ls-add", "pub"], ["ls-add", "int"],
        ["lr-add", "g1"], ["set", "logical_router", "g1", "options:chassis=hv1"],
        ["lrp-add", "g1", "g1-pub", "02:00:00:00:10:01", "172.16.0.10/24"],
        ["lrp-add", "g1", "g1-int", "02:00:00:00:10:02", "10.1.0.1/24"],
        *rport("pub", "pub-g1", "g1-pub"), *rport("int", "int-g1", "g1-int"),
        *_nat_rules("g1", "172.16.1", "10.1.0"),
        ["lb-add", "lb1", "172.16.5.1:80", "10.1.0.21:8080,10.1.0.22:8080", "tcp"], ["lr-lb-add", "g1", "lb1"],
        ["lr-add", "g2"], ["set", "logical_router", "g2", "options:chassis=hv2"],
        ["lrp-add", "g2", "g2-pub", "02:00:00:00:11:01", "172.16.0.11/24"],
        *rport("pub", "pub-g2", "g2-pub"),
        ["lr-nat-add", "g2", "snat", "172.16.0.111", "10.9.0.0/16"],
        ["lr-add", "g3"], ["set", "logical_router", "g3", "options:chassis=hv3"],
        ["lrp-add", "g3", "g3-pub", "02:00:00:00:12:01", "172.16.0.12/24"],
        *rport("pub", "pub-g3", "g3-pub"),
        ["lb-add", "lb3", "172.16.6.1:53", "10.3.0.5:53", "udp"], ["lr-lb-add", "g3", "lb3"],
    )


def distributed_router_nb() -> Callable[[str], None]:
    """A router with a distributed gateway port: snat, dnat, dnat_and_snat, floating IPs, a TCP LB."""
    return nbctl_commands(
        ["ls-add", "pub"], ["ls-add", "int"],
        *vif("pub", "ln", "unknown", type="localnet", options=["network_name=phys"]),
        ["lr-add", "d1"],
        ["lrp-add", "d1", "d1-pub", "02:00:00:00:20:01", "172.16.0.20/24"],
        ["lrp-set-gateway-chassis", "d1-pub", "hv1", "20"],
        ["lrp-add", "d1", "d1-int", "02:00:00:00:20:02", "10.2.0.1/24"],
        *rport("pub", "pub-d1", "d1-pub"), *rport("int", "int-d1", "d1-int"),
        *vif("int", "vm1", "0a:00:00:00:00:01 10.2.0.31"), *vif("int", "vm2", "0a:00:00:00:00:02 10.2.0.32"),
        *_nat_rules("d1", "172.16.2", "10.2.0"),
        ["lr-nat-add", "d1", "snat", "172.16.2.103", "10.2.0.128/25"],
        ["lr-nat-add", "d1", "dnat_and_snat", "172.16.2.131", "10.2.0.31", "vm1", "0a:00:00:00:99:01"],
        ["lr-nat-add", "d1", "dnat_and_snat", "172.16.2.132", "10.2.0.32", "vm2", "0a:00:00:00:99:02"],
        ["lb-add", "lb1", "172.16.7.1:80", "10.2.0.21:8080,10.2.0.22:8080", "tcp"], ["lr-lb-add", "d1", "lb1"],
    )


def assert_nat_stages(result: ParityResult) -> None:
    assert result.reference.settled and result.ours.settled, result.report()
    flows = result.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in NAT_STAGES:
        s = by_stage.get(name)
        assert s is not None, f"{name}: no flows on either side"
        missing = [f for f in s.missing if "$_rtr_lb" not in f[4]]
        assert not missing and not s.extra, result.report()
    assert flows.extra == 0, result.report()


def test_gateway_router_nat_and_lb(parity_run):
    r = parity_run(gateway_router_nb(), tables=("Logical_Flow",))
    assert_nat_stages(r)
    by_stage = {s.stage: s for s in r.flows.stages}
    assert by_stage["lr_in_dnat"].ref_count >= 10 and by_stage["lr_out_snat"].ref_count >= 4


def test_distributed_router_nat_floating_ips_and_lb(parity_run):
    r = parity_run(distributed_router_nb(), tables=("Logical_Flow",))
    assert_nat_stages(r)
    by_stage = {s.stage: s for s in r.flows.stages}
    assert by_stage["lr_in_gw_redirect"].ref_count >= 4  # two floating IPs sent from their chassis
    assert by_stage["lr_out_egr_loop"].ref_count >= 6


def test_router_nat_and_lb_on_mixed_10(parity_run):
    r = parity_run(workload("mixed", 10, 10, 10), tables=("Logical_Flow",), settle_timeout=120)
    assert_nat_stages(r)
    assert r.flows.missing == 0, r.report()
