"""Parity corners found by OVN's own ovn-northd.at (scripts/conformance.sh), one test per fix.

- ``gateway_mtu`` on a router port whose switch has a localnet port with a VLAN given only as
  ``tag_request`` (``lsp-set-type ... localnet`` then ``set ... tag_request=2``, no parent_name):
  ``check_pkt_larger(MTU + 18)`` (ovn-northd.at "gateway mtu check pkt larger flows").
- ``--ecmp-symmetric-reply`` routes to a host prefix (/32): the reply flows match the bare address
  (``ip4.src == 1.0.0.1``; ovn-northd.at "static routes flows").
- ``--add-route`` DNAT rules seen by a neighbour router whose port has no IPv4 network (25.03 on:
  routed from its IPv6 link-local address; ovn-northd.at "ovn -- NAT and Load Balancer flows").
- A switch with ``other_config:ic-vxlan_mode`` (any value; 25.03 on): datapath keys 1..1023 and
  SB_Global ``max_tunid`` 1023, VXLAN chassis or not (ovn-northd.at "check VXLAN encap in IC-mode").
- A router port whose ``options:requested-chassis`` is a remote chassis (25.03 on): a ``remote``
  Port_Binding bound there, its router's ARP replies / NAs ``flood_remote`` (ovn-northd.at
  "Transit router - remote ports").
"""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.servers import nbctl, sbctl
from ovn_northd_py.parity.harness import assert_parity, nbctl_commands


def test_gateway_mtu_with_vlan_localnet_by_tag_request(parity_run) -> None:
    r = parity_run(nbctl_commands(
        ["ls-add", "public"], ["lr-add", "lr0"],
        ["lrp-add", "lr0", "lr0-public", "00:00:20:20:12:13", "172.168.0.100/24"],
        ["lsp-add", "public", "public-lr0"], ["lsp-set-type", "public-lr0", "router"],
        ["lsp-set-addresses", "public-lr0", "router"], ["lsp-set-options", "public-lr0", "router-port=lr0-public"],
        ["lrp-set-gateway-chassis", "lr0-public", "ch1"],
        ["set", "logical_router_port", "lr0-public", "options:gateway_mtu=1500"],
        ["lsp-add", "public", "ext-port"], ["lsp-set-addresses", "ext-port", "unknown"],
        ["lsp-set-type", "ext-port", "localnet"], ["set", "Logical_Switch_Port", "ext-port", "tag_request=2"],
    ), tables=("Logical_Flow",))
    assert_parity(r)


def test_symmetric_ecmp_host_route(parity_run) -> None:
    r = parity_run(nbctl_commands(
        ["lr-add", "lr0"], ["set", "logical_router", "lr0", "options:chassis=ch1"],
        ["lrp-add", "lr0", "lr0-public", "00:00:20:20:12:13", "192.168.0.1/24"],
        ["--ecmp-symmetric-reply", "lr-route-add", "lr0", "1.0.0.1", "192.168.0.10"],
        ["--ecmp-symmetric-reply", "lr-route-add", "lr0", "1.0.0.1", "192.168.0.20"],
        ["--ecmp-symmetric-reply", "lr-route-add", "lr0", "fd00::1", "fd00:10::10"],
        ["--ecmp-symmetric-reply", "lr-route-add", "lr0", "fd00::1", "fd00:10::20"],
        ["lrp-add", "lr0", "lr0-v6", "00:00:20:20:12:14", "fd00:10::1/64"],
    ), tables=("Logical_Flow",))
    assert_parity(r)


def test_health_checked_backend_on_a_disabled_port(parity_run) -> None:
    # ovn-northd.at "Load balancer health check and Service Monitor sync": a backend whose
    # mapped port is disabled has no Service_Monitor row and is not balanced to.
    def build(remote: str) -> None:
        from ovn_northd_py.devtools.servers import nbctl

        for c in (["ls-add", "sw0"], ["ls-add", "sw1"],
                  ["lsp-add", "sw0", "sw0-p1"], ["lsp-set-addresses", "sw0-p1", "00:00:00:00:00:03 10.0.0.3"],
                  ["lsp-add", "sw1", "sw1-p1"], ["lsp-set-addresses", "sw1-p1", "02:00:00:00:00:03 20.0.0.3"],
                  ["lb-add", "lb1", "10.0.0.10:80", "10.0.0.3:80,20.0.0.3:80"], ["ls-lb-add", "sw0", "lb1"],
                  ["set", "load_balancer", "lb1", "ip_port_mappings:10.0.0.3=sw0-p1:10.0.0.2",
                   "ip_port_mappings:20.0.0.3=sw1-p1:20.0.0.2"],
                  ["lsp-set-enabled", "sw0-p1", "disabled"]):
            nbctl(remote, *c)
        nbctl(remote, "--id=@hc", "create", "load_balancer_health_check", 'vip="10.0.0.10:80"',
              "--", "add", "load_balancer", "lb1", "health_check", "@hc")

    r = parity_run(build, tables=("Logical_Flow", "Service_Monitor"))
    assert_parity(r)
    assert r.tables["Service_Monitor"].ref_count == 1, r.report()


def test_route_to_an_output_port_without_next_hop(parity_run) -> None:
    # ovn-northd.at "static routes flows": ``lr-route-add lr0 2.0.0.0/24 lr0-public`` (nexthop "",
    # output_port set): ``reg0 = ip4.dst``.  Without an output port, or without an address of the
    # family on it, no route.
    r = parity_run(nbctl_commands(
        ["lr-add", "lr0"],
        ["lrp-add", "lr0", "lr0-public", "00:00:20:20:12:13", "192.168.0.1/24", "fd00::1/64"],
        ["lrp-add", "lr0", "lr0-v4", "00:00:20:20:12:14", "192.168.1.1/24"],
        ["lr-route-add", "lr0", "2.0.0.0/24", "lr0-public"],
        ["lr-route-add", "lr0", "fd02::/64", "lr0-public"],
        ["lr-route-add", "lr0", "fd03::/64", "lr0-v4"],
        ["--ecmp", "lr-route-add", "lr0", "3.0.0.0/24", "lr0-public"],
        ["--ecmp", "lr-route-add", "lr0", "3.0.0.0/24", "192.168.1.5"],
    ), tables=("Logical_Flow",))
    assert_parity(r)


def test_distributed_gateway_port_with_a_vtep_port_on_its_switch(parity_run) -> None:
    # ovn-northd.at "lrp with chassis-redirect and ls with vtep lport": no lr_in_gw_redirect flow
    # (and no is_chassis_resident in the admission) for the gateway port.
    r = parity_run(nbctl_commands(
        ["lr-add", "lr1"], ["lrp-add", "lr1", "lrp1", "00:00:00:00:00:01", "10.0.0.1/24"],
        ["ls-add", "ls1"], ["lsp-add", "ls1", "lsp1"], ["lsp-set-addresses", "lsp1", "router"],
        ["lsp-set-type", "lsp1", "router"], ["lsp-set-options", "lsp1", "router-port=lrp1"],
        ["lrp-set-gateway-chassis", "lrp1", "ch1"],
        ["lsp-add", "ls1", "lsp-vtep"], ["lsp-set-type", "lsp-vtep", "vtep"],
    ), tables=("Logical_Flow", "Port_Binding"))
    assert_parity(r)


def test_install_ls_lb_from_router(parity_run) -> None:
    # ovn-northd.at "check install_ls_lb_from_router option": the router's load balancers (its own
    # and its groups') are installed on the switches attached to it, and their SB rows name them.
    def build(remote: str) -> None:
        from ovn_northd_py.devtools.servers import nbctl

        for c in (["lr-add", "R1"], ["set", "logical_router", "R1", "options:chassis=hv1"],
                  ["lrp-add", "R1", "R1-S0", "02:ac:10:01:00:01", "10.0.0.1/24"],
                  ["lrp-add", "R1", "R1-S1", "02:ac:10:01:01:01", "20.0.0.1/24"],
                  ["lrp-add", "R1", "R1-PUB", "02:ac:20:01:01:01", "172.16.0.1/24"],
                  ["ls-add", "S0"], ["lsp-add", "S0", "S0-R1"], ["lsp-set-type", "S0-R1", "router"],
                  ["lsp-set-addresses", "S0-R1", "02:ac:10:01:00:01"], ["lsp-set-options", "S0-R1", "router-port=R1-S0"],
                  ["ls-add", "S1"], ["lsp-add", "S1", "S1-R1"], ["lsp-set-type", "S1-R1", "router"],
                  ["lsp-set-addresses", "S1-R1", "02:ac:10:01:01:01"], ["lsp-set-options", "S1-R1", "router-port=R1-S1"],
                  ["ls-add", "S2"], ["lb-add", "lbs", "172.16.0.12:80", "10.0.0.3:80"], ["ls-lb-add", "S0", "lbs"],
                  ["lb-add", "lb0", "172.16.0.10:80", "10.0.0.2:80"], ["lr-lb-add", "R1", "lb0"],
                  ["lb-add", "lb1", "172.16.0.11:8080", "10.0.0.2:8080"],
                  ["set", "nb_global", ".", "options:install_ls_lb_from_router=true"]):
            nbctl(remote, *c)
        lb1 = nbctl(remote, "--bare", "--columns=_uuid", "find", "load_balancer", "name=lb1").strip()
        lbg = nbctl(remote, "create", "load_balancer_group", "name=lbg").strip()
        nbctl(remote, "add", "load_balancer_group", lbg, "load_balancer", lb1)
        nbctl(remote, "add", "logical_router", "R1", "load_balancer_group", lbg)

    r = parity_run(build, tables=("Logical_Flow", "Load_Balancer"))
    assert_parity(r)


def test_logical_flow_tags_in_out_port(parity_run) -> None:
    # ovn-northd.at "Add tags to logical flows": flows about one port carry
    # tags:in_out_port=PORT (ovn-controller skips them where the port is not bound); the parity
    # harness compares tags with the controller meter.
    r = parity_run(nbctl_commands(
        ["ls-add", "sw0"], ["lb-add", "lb0", "10.0.0.10:80", "10.0.0.4:8080"], ["ls-lb-add", "sw0", "lb0"],
        ["lsp-add", "sw0", "lsp0"], ["lsp-set-addresses", "lsp0", "00:00:00:00:ff:01 1.2.3.4"],
        ["lsp-set-port-security", "lsp0", "00:00:00:00:ff:01 1.2.3.4"],
        ["lsp-add", "sw0", "off"], ["lsp-set-addresses", "off", "00:00:00:00:ff:02 1.2.3.5"],
        ["lsp-set-enabled", "off", "disabled"],
        ["lsp-add", "sw0", "unk"], ["lsp-set-addresses", "unk", "unknown"],
        ["lsp-add", "sw0", "ln"], ["lsp-set-type", "ln", "localnet"], ["lsp-set-addresses", "ln", "unknown"],
        ["lsp-set-options", "ln", "network_name=phys", "qos_max_rate=1000"],
        ["lsp-add", "sw0", "vt"], ["lsp-set-type", "vt", "vtep"],
    ), tables=("Logical_Flow",))
    assert_parity(r)


def test_nat_add_route_to_a_neighbour_without_ipv4(parity_run) -> None:
    # ro3's port on the shared switch has only an IPv6 network: 23.03 routes nothing there, 25.03
    # and 26.03 route both rules' external IPs from its link-local address (xxreg1, reg9[9] = 0).
    cmds: list[list[str]] = [["ls-add", "sw"]]
    for n, (net, ext, inside) in enumerate((("10.0.0.1/24", "10.0.0.100", "192.168.1.100"),
                                            ("20.0.0.1/24", "20.0.0.100", "192.168.2.100"),
                                            ("fd00::3/64", None, None)), start=1):
        cmds += [["lr-add", f"ro{n}"], ["lrp-add", f"ro{n}", f"ro{n}-sw", f"00:00:00:00:00:0{n}", net],
                 ["lsp-add", "sw", f"sw-ro{n}"], ["lsp-set-type", f"sw-ro{n}", "router"],
                 ["lsp-set-addresses", f"sw-ro{n}", "router"],
                 ["lsp-set-options", f"sw-ro{n}", f"router-port=ro{n}-sw"]]
        if ext is not None:
            cmds += [["lrp-set-gateway-chassis", f"ro{n}-sw", f"hv{n}", "100"],
                     ["--add-route", "lr-nat-add", f"ro{n}", "dnat", ext, inside]]
    r = parity_run(nbctl_commands(*cmds), tables=("Logical_Flow",))
    assert_parity(r)


@pytest.mark.parametrize(("encap", "ic_options"), [
    ("vxlan", ["other_config:interconn-ts=LS", "other_config:ic-vxlan_mode=true"]),
    ("vxlan", ["other_config:interconn-ts=LS"]),
    ("geneve", ["other_config:ic-vxlan_mode=false"]),
], ids=["vxlan-ic", "vxlan-ts-only", "geneve-ic-false"])
def test_ic_vxlan_mode_key_range(parity_run, encap, ic_options) -> None:
    def chassis(_nb: str, sb: str) -> None:
        sbctl(sb, "chassis-add", "hv1", encap, "192.168.0.1")

    r = parity_run(nbctl_commands(
        ["ls-add", "LS"], ["set", "logical_switch", "LS", *ic_options],
        ["ls-add", "big"], ["set", "logical_switch", "big", "other_config:requested-tnl-key=2000"],
        ["lsp-add", "LS", "p1"], ["lsp-set-options", "p1", "requested-tnl-key=1500"], ["lr-add", "lr"],
    ), after_settle=chassis, tables=("SB_Global", "Datapath_Binding", "Port_Binding"))
    assert_parity(r)


def test_ic_vxlan_mode_datapath_keys_run_out_at_1023(parity_run) -> None:
    def build(remote: str) -> None:
        cmds = ["ls-add", "LS", "--", "set", "logical_switch", "LS", "other_config:ic-vxlan_mode=true"]
        for i in range(1030):
            cmds += ["--", "ls-add", f"s{i}"]
        nbctl(remote, *cmds)

    r = parity_run(build, tables=("SB_Global", "Datapath_Binding"))
    assert_parity(r)
    keys = [int(d["tunnel_key"]) for d in r.ref_dump.rows("Datapath_Binding").values()]
    assert max(keys) == (1023 if r.release != "23.03" else 1031), r.report()


@pytest.mark.parametrize("always_learn", ["true", "false"])
def test_transit_router_remote_ports(parity_run, always_learn) -> None:
    def chassis(_nb: str, sb: str) -> None:
        for n, remote in ((2, True), (3, True), (4, False)):
            sbctl(sb, "chassis-add", f"hv{n}", "geneve", f"192.168.0.1{n}",
                  *(["--", "set", "chassis", f"hv{n}", "other_config:is-remote=true"] if remote else []))

    cmds: list[list[str]] = [["lr-add", "tr"], ["lrp-add", "tr", "tr-local", "00:00:00:00:30:01", "192.168.100.1/31"],
                             ["lrp-set-gateway-chassis", "tr-local", "hv4"],
                             ["set", "logical_router", "tr", f"options:always_learn_from_arp_request={always_learn}"]]
    for n in (2, 3, 4):
        cmds += [["lrp-add", "tr", f"tr-az{n}", f"00:00:00:00:30:0{n + 1}", f"192.168.100.{2 * n}/31"],
                 ["set", "Logical_Router_Port", f"tr-az{n}", f"options:requested-chassis=hv{n}"]]
    cmds += [["ls-add", "ls"], ["lsp-add", "ls", "ls-tr"], ["lsp-set-type", "ls-tr", "router"],
             ["lsp-set-addresses", "ls-tr", "router"], ["lsp-set-options", "ls-tr", "router-port=tr-az2"]]
    r = parity_run(nbctl_commands(*cmds), after_settle=chassis,
                   tables=("Port_Binding", "Logical_Flow", "Datapath_Binding"))
    assert_parity(r)
    types = {str(pb["logical_port"]): str(pb["type"]) for pb in r.ref_dump.rows("Port_Binding").values()}
    assert types["tr-az4"] == "patch"
    assert types["tr-az2"] == types["tr-az3"] == ("patch" if r.release == "23.03" else "remote")
