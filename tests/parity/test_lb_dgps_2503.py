"""Parity with the 25.03 reference for load balancers on a router with several distributed gateway
ports (``man ovn-nb`` Logical_Router ``load_balancer``, Load_Balancer ``options:use_stateless_nat``):
the flows of each VIP once per DGP, stateless NAT rules with ``use_stateless_nat``."""

from __future__ import annotations

from ovn_northd_py.devtools.servers import nbctl


def build_lb_dgps_nb(remote: str) -> None:
    """Router lr1 with DGPs ts1 / ts2 / pub (chassis 2, 3, 1) and an inside port to s1; lr2 with one
    DGP.  Load balancers: stateless (v4 without port, v6 with a port, skip_snat), stateful with
    ports (udp, reject without backends), on both routers and on s1."""
    cmds = ["ls-add", "s1", "--", "ls-add", "pub", "--", "lr-add", "lr1", "--", "lr-add", "lr2"]
    for name, mac, net, ch in (("lr1-ts1", "00:00:01:02:03:04", "172.16.10.1/24 2001:db8:10::1/64", "ch2"),
                               ("lr1-ts2", "00:00:01:02:03:05", "172.16.20.1/24 2001:db8:20::1/64", "ch3"),
                               ("lr1-pub", "00:de:ad:ff:00:01", "173.16.0.1/16 2001:db8:30::1/64", "ch1")):
        cmds += ["--", "lrp-add", "lr1", name, mac, *net.split(), "--", "lrp-set-gateway-chassis", name, ch,
                 "--", "lsp-add", "pub", f"pub-{name}", "--", "lsp-set-type", f"pub-{name}", "router",
                 "--", "lsp-set-addresses", f"pub-{name}", "router",
                 "--", "lsp-set-options", f"pub-{name}", f"router-port={name}", "nat-addresses=router"]
    cmds += ["--", "lrp-add", "lr1", "lr1-s1", "00:de:ad:fe:00:02", "172.16.0.1/24", "2001:db8:aaaa:3::1/64",
             "--", "lsp-add", "s1", "s1-lr1", "--", "lsp-set-type", "s1-lr1", "router",
             "--", "lsp-set-addresses", "s1-lr1", "router", "--", "lsp-set-options", "s1-lr1", "router-port=lr1-s1",
             "--", "lrp-add", "lr2", "lr2-pub", "00:de:ad:ff:00:09", "174.16.0.1/16",
             "--", "lrp-set-gateway-chassis", "lr2-pub", "ch1",
             "--", "lb-add", "lb1", "30.0.0.1", "172.16.0.103,172.16.0.102,172.16.0.101",
             "--", "lb-add", "lb6", "[2001:db8:cccc::1]:80", "[2001:db8:aaaa:3::103]:8080,[2001:db8:aaaa:3::102]:8080",
             "--", "lb-add", "lbu", "30.0.0.2:53", "172.16.0.101:5353", "udp",
             "--", "lb-add", "lbr", "30.0.0.3:80", "", "tcp",
             "--", "set", "load_balancer", "lb1", "options:use_stateless_nat=true",
             "--", "set", "load_balancer", "lb6", "options:use_stateless_nat=true", "options:skip_snat=true",
             "--", "set", "load_balancer", "lbr", "options:reject=true"]
    for lb in ("lb1", "lb6", "lbu", "lbr"):
        cmds += ["--", "lr-lb-add", "lr1", lb, "--", "ls-lb-add", "s1", lb]
    cmds += ["--", "lr-lb-add", "lr2", "lb1"]
    nbctl(remote, *cmds)


def test_lb_on_several_dgps_equals_reference(parity_2503) -> None:
    r = parity_2503(build_lb_dgps_nb, tables=("Logical_Flow",))
    assert r.flows is not None and r.flows.ref_count > 100, r.report()
    assert r.ok, r.report()


def build_ls_lb_from_router_nb(remote: str) -> None:
    """NB_Global options:install_ls_lb_from_router: gateway router R1's load balancers (its own and
    its group's) on the switches S0 / S1 peering it."""
    cmds = ["set", "NB_Global", ".", "options:install_ls_lb_from_router=true",
            "--", "lr-add", "R1", "--", "set", "logical_router", "R1", "options:chassis=hv1",
            "--", "lb-add", "lb0", "172.16.0.10:80", "10.0.0.2:80", "--", "lr-lb-add", "R1", "lb0",
            "--", "lb-add", "lb1", "172.16.0.11:8080", "10.0.0.2:8080"]
    for n, mac in ((0, "02:ac:10:01:00:01"), (1, "02:ac:10:01:01:01")):
        cmds += ["--", "lrp-add", "R1", f"R1-S{n}", mac, f"{10 + 10 * n}.0.0.1/24", "--", "ls-add", f"S{n}",
                 "--", "lsp-add", f"S{n}", f"S{n}-R1", "--", "lsp-set-type", f"S{n}-R1", "router",
                 "--", "lsp-set-addresses", f"S{n}-R1", mac, "--", "lsp-set-options", f"S{n}-R1", f"router-port=R1-S{n}"]
    nbctl(remote, *cmds)
    lb1 = nbctl(remote, "get", "load_balancer", "lb1", "_uuid").strip()
    nbctl(remote, "--id=@g", "create", "load_balancer_group", "name=lbg", f"load_balancer={lb1}",
          "--", "add", "logical_router", "R1", "load_balancer_group", "@g")


def test_ls_lb_from_router_equals_reference(parity_2503) -> None:
    r = parity_2503(build_ls_lb_from_router_nb, tables=("Logical_Flow", "Load_Balancer", "Logical_DP_Group"))
    assert r.flows is not None and r.flows.ref_count > 100, r.report()
    assert r.ok, r.report()
