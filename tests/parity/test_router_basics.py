"""Parity with the reference ovn-northd for the router L3 basics (issue: "logical router pipeline").

Small NBs exercise one area each; the mixed workload checks the stages at scale.  The NAT
and load-balancer flows of these stages are later work: they are the only differences
allowed, and only where the NB has NAT rules (see :func:`nat_specific`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from ovn_northd_py.parity.harness import FlowKey, ParityResult, nbctl_commands, workload

ROUTER_STAGES = (
    "lr_in_admission", "lr_in_lookup_neighbor", "lr_in_learn_neighbor", "lr_in_ip_input",
    "lr_in_nd_ra_options", "lr_in_nd_ra_response", "lr_in_ip_routing_pre", "lr_in_ip_routing",
    "lr_in_ip_routing_ecmp", "lr_in_policy", "lr_in_policy_ecmp", "lr_in_arp_resolve", "lr_in_chk_pkt_len",
    "lr_in_larger_pkts", "lr_in_gw_redirect", "lr_in_arp_request", "lr_out_delivery",
)

Cmd = list[str]


def rport(sw: str, name: str, lrp: str, *addresses: str) -> list[Cmd]:
    """A router-type switch port ``name`` on ``sw`` for router port ``lrp`` (addresses default "router")."""
    cmds = [["lsp-add", sw, name], ["lsp-set-type", name, "router"]]
    addrs = list(addresses) if addresses else ["router"]
    if addrs != [""]:
        cmds.append(["lsp-set-addresses", name, *addrs])
    return [*cmds, ["lsp-set-options", name, f"router-port={lrp}"]]


def vif(sw: str, name: str, *addresses: str, type: str = "", options: Sequence[str] = ()) -> list[Cmd]:
    """A switch port; addresses are written with ``set`` so that malformed ones get through."""
    value = ",".join(f'"{a}"' for a in addresses) if addresses else "[]"
    cmds = [["lsp-add", sw, name], ["set", "logical_switch_port", name, f"addresses={value}"]]
    if type:
        cmds.append(["lsp-set-type", name, type])
    if options:
        cmds.append(["lsp-set-options", name, *options])
    return cmds


_ROW_IDS = itertools.count(1)


def create(table: str, router: str, column: str, *cols: str) -> list[Cmd]:
    """A row created in ``table`` and added to the router's ``column`` (bypassing nbctl's checks)."""
    ref = f"@row{next(_ROW_IDS)}"
    return [["--id=" + ref, "create", table, *cols], ["add", "Logical_Router", router, column, ref]]


def peered_routers_nb() -> Callable[[str], None]:
    """Two routers peered directly, switches with routers and VIFs of every kind, IPv6, /32, disabled ports."""
    return nbctl_commands(
        ["lr-add", "r1"], ["lr-add", "r2"], ["lr-add", "r3"],
        ["lrp-add", "r1", "r1-r2", "02:00:00:00:01:01", "10.0.12.1/24", "10.0.13.1/24", "2001:db8:12::1/64",
         "peer=r2-r1"],
        ["lrp-add", "r2", "r2-r1", "02:00:00:00:02:01", "10.0.12.2/24", "10.0.13.2/24", "peer=r1-r2"],
        ["lrp-add", "r1", "r1-sw1", "02:00:00:00:01:02", "192.168.1.1/24", "192.168.11.1/24", "fd01::1/64",
         "fec0::1/64"],
        ["lrp-add", "r2", "r2-sw2", "02:00:00:00:02:02", "192.168.2.1/32"],
        ["lrp-add", "r2", "r2-off", "02:00:00:00:02:03", "192.168.3.1/24"],
        ["set", "logical_router_port", "r2-off", "enabled=false"],
        ["lrp-add", "r2", "r2-sw1", "02:00:00:00:02:04", "192.168.1.2/24"],
        ["lrp-add", "r3", "r3-sw1", "02:00:00:00:03:01", "192.168.1.3/24", "10.99.0.3/24"],
        ["set", "logical_router_port", "r3-sw1", "enabled=false"],
        ["ls-add", "sw1"], ["ls-add", "sw2"],
        ["set", "logical_switch", "sw1", "other_config:subnet=192.168.1.0/24"],
        *rport("sw1", "sw1-r1", "r1-sw1"), *rport("sw1", "sw1-r2", "r2-sw1", "02:00:00:00:02:04 192.168.1.2"),
        *rport("sw1", "sw1-r3", "r3-sw1", ""), *rport("sw2", "sw2-r2", "r2-sw2"),
        *vif("sw1", "vm1", "0a:00:00:00:00:01 192.168.1.10 fd01::10 fec0::10 fd99::10"),
        *vif("sw1", "vm2", "0a:00:00:00:00:02 192.168.11.20"),
        *vif("sw1", "vm3", "0a:00:00:00:00:03 10.99.0.3"),
        *vif("sw1", "vm4", "unknown"),
        *vif("sw1", "vm5", "0a:00:00:00:00:05 192.168.1.50"), ["lsp-set-enabled", "vm5", "disabled"],
        *vif("sw1", "vm6", "0a:00:00:00:00:06 192.168.1.60", "0a:00:00:00:01:06 192.168.1.61 192.168.1.62"),
        *vif("sw1", "vm7", "0a:00:00:00:00:07 192.168.1.70 junk 192.168.1.71", "unknown"),
        *vif("sw1", "vm8", "0a:00:00:00:00:08 192.168.1.80", type="localport"),
        *vif("sw1", "vm9", "dynamic"), *vif("sw1", "vm10", "0a:00:00:00:00:0a dynamic"),
        *vif("sw1", "ext", "0a:00:00:00:00:0b 192.168.1.11", type="external"),
        *vif("sw1", "virt", "0a:00:00:00:00:0c 192.168.1.12", type="virtual",
             options=["virtual-ip=192.168.1.100", "virtual-parents=vm1"]),
        *vif("sw1", "ln", "0a:00:00:00:00:0d 192.168.1.13", type="localnet", options=["network_name=phys"]),
        *vif("sw1", "l2gw", "0a:00:00:00:00:0e 192.168.1.14", type="l2gateway"),
        *vif("sw1", "bcast", "0a:00:00:00:00:0f 192.168.1.255 192.168.1.0/24"),
        *vif("sw1", "rtr", "router"),
        *vif("sw2", "vm21", "0a:00:00:00:02:01 192.168.2.10"),
        *vif("sw2", "vm22", "0a:00:00:00:02:02 192.168.2.1"),
    )


def static_routes_nb() -> Callable[[str], None]:
    """Static routes: dst/src policy, ECMP (an unreachable member, two tables), route tables, discard,
    output_port (in and out of its networks, disabled, unknown), IPv6, bad rows."""
    return nbctl_commands(
        ["lr-add", "r1"],
        ["lrp-add", "r1", "r1-a", "02:00:00:00:01:01", "10.0.1.1/24", "fd01::1/64"],
        ["lrp-add", "r1", "r1-b", "02:00:00:00:01:02", "10.0.2.1/24", "10.0.22.1/24", "fd02::1/64"],
        ["lrp-add", "r1", "r1-c", "02:00:00:00:01:03", "10.0.3.1/24"],
        ["lrp-add", "r1", "r1-d", "02:00:00:00:01:04", "10.0.4.1/24"],
        ["set", "logical_router_port", "r1-d", "enabled=false"],
        ["lrp-set-options", "r1-a", "route_table=zeta"], ["lrp-set-options", "r1-b", "route_table=alpha"],
        ["lrp-set-options", "r1-c", "route_table=zeta"],
        ["lr-route-add", "r1", "0.0.0.0/0", "10.0.1.254"],
        ["lr-route-add", "r1", "192.168.0.0/16", "10.0.2.254"],
        ["lr-route-add", "r1", "192.168.5.0/24", "10.0.22.5", "r1-b"],
        ["lr-route-add", "r1", "13.0.0.0/8", "10.0.1.13", "r1-b"],
        ["lr-route-add", "r1", "15.0.0.0/8", "10.0.1.15", "r1-d"],
        ["lr-route-add", "r1", "14.0.0.0/8", "10.0.4.14"],
        ["--policy=src-ip", "lr-route-add", "r1", "10.0.2.0/24", "10.0.1.253"],
        ["--policy=src-ip", "--route-table=alpha", "lr-route-add", "r1", "10.5.0.0/16", "10.0.2.5"],
        ["--ecmp", "lr-route-add", "r1", "172.16.0.0/16", "10.0.1.10"],
        ["--ecmp", "lr-route-add", "r1", "172.16.0.0/16", "10.77.1.11"],
        ["--ecmp", "lr-route-add", "r1", "172.16.0.0/16", "10.0.2.12"],
        ["--ecmp", "lr-route-add", "r1", "172.16.0.0/16", "10.0.1.13"],
        ["--ecmp", "--route-table=alpha", "lr-route-add", "r1", "172.16.0.0/16", "10.0.2.20"],
        ["--ecmp", "--route-table=alpha", "lr-route-add", "r1", "172.16.0.0/16", "10.0.2.21"],
        ["--ecmp", "lr-route-add", "r1", "172.17.0.0/16", "10.0.1.20"],
        ["--ecmp", "lr-route-add", "r1", "172.17.0.0/16", "10.0.1.21"],
        ["--ecmp", "--policy=src-ip", "lr-route-add", "r1", "fd03::/64", "fd01::10"],
        ["--ecmp", "--policy=src-ip", "lr-route-add", "r1", "fd03::/64", "fd01::11"],
        ["lr-route-add", "r1", "2001:db8::/32", "fd01::fe"],
        ["lr-route-add", "r1", "::/0", "fd02::fe"],
        ["lr-route-add", "r1", "2001:db9::/32", "fd99::1"],
        ["lr-route-add", "r1", "8.8.8.8", "10.0.1.8"],
        ["lr-route-add", "r1", "9.9.9.0/24", "discard"],
        ["--route-table=mid", "lr-route-add", "r1", "11.0.0.0/8", "10.0.2.11"],
        ["--route-table=zzz", "lr-route-add", "r1", "12.0.0.0/8", "10.0.2.12"],
        ["lr-route-add", "r1", "20.0.0.0/8", "10.99.0.1"],
        ["lr-route-add", "r1", "10.0.1.0/24", "10.0.2.100"],
        ["lr-route-add", "r1", "10.0.3.128/25", "10.0.1.3"],
        ["lr-route-add", "r1", "16.0.0.1/8", "10.0.1.16"],
        *create("Logical_Router_Static_Route", "r1", "static_routes", "ip_prefix=17.0.0.0/8",
                'nexthop="fd01::17"'),
        *create("Logical_Router_Static_Route", "r1", "static_routes", "ip_prefix=18.0.0.0/8",
                "nexthop=10.0.1.18", "output_port=nonexist"),
    )


def policies_nb() -> Callable[[str], None]:
    """Router policies: allow, drop, reroute (one and several next hops, unreachable, bad, mixed families),
    pkt_mark, the deprecated ``nexthop`` column."""
    cmds: list[Cmd] = [
        ["lr-add", "r1"],
        ["lrp-add", "r1", "r1-a", "02:00:00:00:01:01", "10.0.1.1/24", "fd01::1/64"],
        ["lrp-add", "r1", "r1-b", "02:00:00:00:01:02", "10.0.2.1/24", "10.0.22.1/24", "fd02::1/64"],
        ["lr-policy-add", "r1", "100", "ip4.src == 10.0.1.0/24", "allow"],
        ["lr-policy-add", "r1", "200", "ip4.dst == 1.1.1.1", "drop"],
        ["lr-policy-add", "r1", "300", "ip4.src == 10.0.2.5", "reroute", "10.0.1.100"],
        ["lr-policy-add", "r1", "301", "ip4.src == 10.0.2.6", "reroute", "10.0.1.100,10.0.22.7,10.0.1.102"],
        ["lr-policy-add", "r1", "302", "ip6.src == fd02::5", "reroute", "fd01::100"],
        ["lr-policy-add", "r1", "303", "ip6.src == fd02::6", "reroute", "fd01::100,fd02::101"],
        ["lr-policy-add", "r1", "304", "ip4.src == 10.0.2.7", "reroute", "10.99.0.1"],
        ["lr-policy-add", "r1", "305", "ip4.src == 10.0.2.8", "allow", "pkt_mark=42"],
        ["lr-policy-add", "r1", "306", "ip4.src == 10.0.2.9", "reroute", "10.0.1.100", "pkt_mark=7"],
        ["lr-policy-add", "r1", "307", "ip4.src == 10.0.2.10", "drop", "pkt_mark=7"],
        ["lr-policy-add", "r1", "308", "ip4.src == 10.0.2.11", "reroute", "10.0.1.100,10.0.1.101", "pkt_mark=9"],
        ["lr-policy-add", "r1", "309", "ip4.src == 10.0.2.12", "reroute", "10.0.1.100,10.99.1.1"],
        ["lr-policy-add", "r1", "310", "ip4.src == 10.0.2.13", "allow", "pkt_mark=abc"],
        ["lr-policy-add", "r1", "311", "ip4.src == 10.0.2.14", "reroute", "1.2.3.4,10.0.1.100"],
    ]
    bad = {"mixed": '"10.0.1.100","fd01::100"', "bogus": '"10.0.1.100","bogus"', "zero": '"010.0.1.100"'}
    for prio, (name, hops) in enumerate(bad.items(), start=400):
        cmds += create("Logical_Router_Policy", "r1", "policies", f"priority={prio}", f'match="ip4 && {name}"',
                       "action=reroute", f"nexthops={hops}")
    cmds += create("Logical_Router_Policy", "r1", "policies", "priority=410", 'match="ip4"', "action=reroute",
                   'nexthop="10.0.1.104"')
    cmds += create("Logical_Router_Policy", "r1", "policies", "priority=411", 'match="ip4"', "action=allow",
                   "options:pkt_mark=4294967295")
    return nbctl_commands(*cmds)


def gateways_nb() -> Callable[[str], None]:
    """Distributed gateway ports (gateway chassis, two on one router, reside-on-redirect-chassis), localnet
    switches, gateway routers, gateway_mtu (+ bypass), neighbour-learning options and IPv6 RAs."""
    return nbctl_commands(
        ["ls-add", "pub"], ["ls-add", "int1"], ["ls-add", "int2"], ["ls-add", "int3"], ["ls-add", "int4"],
        *vif("pub", "ln", "unknown", type="localnet", options=["network_name=phys"]),
        *vif("pub", "ext1", "0a:00:00:00:10:01 172.16.0.200"),
        *vif("int4", "ln4", "unknown", type="localnet", options=["network_name=phys"]),
        # A router with a DGP on a localnet switch, gateway_mtu with bypass, reside-on-redirect ports.
        ["lr-add", "d1"], ["set", "logical_router", "d1", "options:always_learn_from_arp_request=false"],
        ["lrp-add", "d1", "d1-pub", "02:00:00:00:20:01", "172.16.0.20/24", "2001:db8::20/64"],
        ["lrp-set-gateway-chassis", "d1-pub", "hv1", "20"], ["lrp-set-gateway-chassis", "d1-pub", "hv2", "10"],
        ["set", "logical_router_port", "d1-pub", "options:gateway_mtu=1400", 'options:gateway_mtu_bypass="tcp"'],
        ["lrp-add", "d1", "d1-int", "02:00:00:00:20:02", "10.2.0.1/24", "fd02::1/64"],
        ["set", "logical_router_port", "d1-int", "ipv6_ra_configs:address_mode=slaac",
         "ipv6_ra_configs:mtu=1300", "ipv6_ra_configs:send_periodic=true"],
        ["lrp-add", "d1", "d1-int3", "02:00:00:00:20:03", "10.3.0.1/24"],
        ["set", "logical_router_port", "d1-int3", "options:reside-on-redirect-chassis=true"],
        ["lrp-add", "d1", "d1-int4", "02:00:00:00:20:04", "10.4.0.1/24", "fd04::1/64"],
        ["set", "logical_router_port", "d1-int4", "options:reside-on-redirect-chassis=true",
         "ipv6_ra_configs:address_mode=dhcpv6_stateful", "ipv6_ra_configs:router_preference=HIGH",
         'ipv6_ra_configs:rdnss="fd04::53"', 'ipv6_ra_configs:dnssl="example.com"'],
        ["lrp-add", "d1", "d1-off", "02:00:00:00:20:05", "10.5.0.1/24"],
        ["set", "logical_router_port", "d1-off", "enabled=false"],
        *rport("pub", "pub-d1", "d1-pub"), *rport("int2", "int2-d1", "d1-int"),
        *rport("int3", "int3-d1", "d1-int3"), *rport("int4", "int4-d1", "d1-int4"),
        *vif("int2", "vm21", "0a:00:00:00:21:01 10.2.0.11 fd02::11"),
        # A router with two DGPs, one of them on a switch without localnet.
        ["lr-add", "d2"], ["set", "logical_router", "d2", "options:dynamic_neigh_routers=true"],
        ["lrp-add", "d2", "d2-pub", "02:00:00:00:30:01", "172.16.0.30/24"],
        ["lrp-set-gateway-chassis", "d2-pub", "hv1", "10"],
        ["lrp-add", "d2", "d2-int1", "02:00:00:00:30:02", "10.1.0.2/24"],
        ["lrp-set-gateway-chassis", "d2-int1", "hv2", "10"],
        *rport("pub", "pub-d2", "d2-pub"), *rport("int1", "int1-d2", "d2-int1"),
        # Gateway routers, one with gateway_mtu on a port without IPv6 configured.
        ["lr-add", "g1"], ["set", "logical_router", "g1", "options:chassis=hv1"],
        ["lrp-add", "g1", "g1-pub", "02:00:00:00:10:01", "172.16.0.10/24", "2001:db8::10/64"],
        ["lrp-add", "g1", "g1-int", "02:00:00:00:10:02", "10.1.0.1/24"],
        ["set", "logical_router_port", "g1-pub", "options:gateway_mtu=1300"],
        *rport("pub", "pub-g1", "g1-pub"), *rport("int1", "int1-g1", "g1-int"),
        *vif("int1", "vm11", "0a:00:00:00:11:01 10.1.0.11"),
        # A plain router with gateway_mtu.
        ["lr-add", "p1"],
        ["lrp-add", "p1", "p1-pub", "02:00:00:00:40:01", "172.16.0.40/24"],
        ["lrp-add", "p1", "p1-x", "02:00:00:00:40:02", "fd40::1/64"],
        ["set", "logical_router_port", "p1-pub", "options:gateway_mtu=1500"],
        *rport("pub", "pub-p1", "p1-pub"),
    )


def multicast_and_symmetric_ecmp_nb() -> Callable[[str], None]:
    """Multicast relay with and without flood ports; ECMP symmetric reply on a gateway and a plain router."""
    return nbctl_commands(
        ["ls-add", "s1"], ["ls-add", "s2"],
        ["lr-add", "m1"], ["set", "logical_router", "m1", "options:mcast_relay=true"],
        ["lrp-add", "m1", "m1-s1", "02:00:00:00:01:01", "10.0.1.1/24", "fd01::1/64"],
        ["lrp-add", "m1", "m1-s2", "02:00:00:00:01:02", "10.0.2.1/24"],
        ["set", "logical_router_port", "m1-s2", "options:mcast_flood=true"],
        *rport("s1", "s1-m1", "m1-s1"), *rport("s2", "s2-m1", "m1-s2"),
        ["lr-add", "m2"], ["set", "logical_router", "m2", "options:mcast_relay=true"],
        ["lrp-add", "m2", "m2-s1", "02:00:00:00:02:01", "10.0.1.2/24"],
        ["lrp-add", "m2", "m2-x", "02:00:00:00:02:02", "10.0.3.2/24"],
        ["set", "logical_router_port", "m2-x", "enabled=false"],
        *rport("s1", "s1-m2", "m2-s1"),
        ["lr-add", "m3"],
        ["lrp-add", "m3", "m3-s2", "02:00:00:00:03:01", "10.0.2.3/24"],
        ["set", "logical_router_port", "m3-s2", "options:mcast_flood=true"],
        *rport("s2", "s2-m3", "m3-s2"),
        ["lr-add", "g1"], ["set", "logical_router", "g1", "options:chassis=hv1"],
        ["lrp-add", "g1", "g1-a", "02:00:00:00:04:01", "10.0.4.1/24", "fd04::1/64"],
        ["lrp-add", "g1", "g1-b", "02:00:00:00:04:02", "10.0.5.1/24", "fd05::1/64"],
        ["--ecmp-symmetric-reply", "lr-route-add", "g1", "172.16.0.0/16", "10.0.4.10"],
        ["--ecmp-symmetric-reply", "lr-route-add", "g1", "172.16.0.0/16", "10.0.5.10"],
        ["--ecmp-symmetric-reply", "lr-route-add", "g1", "172.16.0.0/16", "10.0.4.11"],
        ["--ecmp-symmetric-reply", "--policy=src-ip", "lr-route-add", "g1", "172.18.0.0/16", "10.0.4.12"],
        ["--ecmp-symmetric-reply", "--policy=src-ip", "lr-route-add", "g1", "172.18.0.0/16", "10.0.5.12"],
        ["--ecmp-symmetric-reply", "lr-route-add", "g1", "2001:db8::/32", "fd04::10"],
        ["--ecmp-symmetric-reply", "lr-route-add", "g1", "2001:db8::/32", "fd05::10"],
        ["--ecmp-symmetric-reply", "lr-route-add", "g1", "172.19.0.0/16", "10.0.4.19"],
        ["--ecmp", "lr-route-add", "g1", "172.17.0.0/16", "10.0.4.10"],
        ["--ecmp-symmetric-reply", "lr-route-add", "g1", "172.17.0.0/16", "10.0.5.10"],
        ["lr-add", "p1"],
        ["lrp-add", "p1", "p1-a", "02:00:00:00:05:01", "10.0.6.1/24"],
        ["--ecmp-symmetric-reply", "lr-route-add", "p1", "172.16.0.0/16", "10.0.6.10"],
        ["--ecmp-symmetric-reply", "lr-route-add", "p1", "172.16.0.0/16", "10.0.6.11"],
    )


def nat_exclusions_nb() -> Callable[[str], None]:
    """Router IPs that are SNAT external IPs or LB VIPs are not dropped by ip_input (dnat ones are)."""
    return nbctl_commands(
        ["lb-add", "lb1", "172.16.2.1:80", "10.1.0.7:80"],
        ["lr-add", "g1"], ["set", "logical_router", "g1", "options:chassis=hv1"],
        ["lrp-add", "g1", "g1-a", "02:00:00:00:10:01", "172.16.0.1/24", "172.16.1.1/24", "172.16.2.1/24",
         "172.16.3.1/24", "fd00::1/64", "fd00::2/64"],
        ["lrp-add", "g1", "g1-b", "02:00:00:00:10:02", "172.17.0.1/24"],
        ["lr-nat-add", "g1", "dnat", "172.16.0.1", "10.1.0.5"],
        ["lr-nat-add", "g1", "dnat_and_snat", "172.16.1.1", "10.1.0.6"],
        ["lr-lb-add", "g1", "lb1"],
        ["lr-nat-add", "g1", "snat", "fd00::1", "fd10::/64"],
        ["lr-nat-add", "g1", "snat", "172.16.3.1", "10.3.0.0/24"],
        ["lr-nat-add", "g1", "snat", "172.17.0.1", "10.4.0.0/24"],
    )


# --------------------------------------------------------------------------- checks


def nat_specific(flow: FlowKey, nat_ips: Sequence[str]) -> bool:
    """A flow of these stages that exists only for a NAT rule or a load balancer (not built yet)."""
    stage, prio, match, actions = flow[7], flow[3], flow[4], flow[5]
    if "$_rtr_lb" in match:
        return True
    for ip in nat_ips:
        if stage == "lr_in_ip_input" and prio in (90, 91, 92):
            if f"arp.tpa == {ip}" in match and "arp.spa" not in match:
                return True  # ARP for a NAT external IP
            if f"nd.target == {ip}" in match and actions.startswith("nd_na {"):
                return True  # ND for a NAT external IP
        if stage == "lr_in_ip_input" and prio == 120 and f"ip4.src == {ip}" in match:
            return True  # east-west SNAT on a distributed router
        if stage == "lr_in_arp_resolve" and prio in (100, 150) and match.endswith(f"== {ip}"):
            return True  # NAT external IP bindings on a distributed gateway port
    return False


def assert_router_stages(
    result: ParityResult, nat_ips: Sequence[str] = (), extra_stages: Sequence[str] = ()
) -> None:
    assert result.reference.settled and result.ours.settled, result.report()
    flows = result.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in (*ROUTER_STAGES, *extra_stages):
        s = by_stage.get(name)
        assert s is not None, f"{name}: no flows on either side"
        missing = [f for f in s.missing if not nat_specific(f, nat_ips)]
        assert not missing and not s.extra, result.report()
    assert flows.extra == 0, result.report()


def assert_stage_has_flows(result: ParityResult, *stages: str, minimum: int = 1) -> None:
    """The NB exercises these stages beyond their fallback flows."""
    assert result.flows is not None
    by_stage = {s.stage: s for s in result.flows.stages}
    for name in stages:
        assert by_stage[name].ref_count > minimum, f"{name}: the reference wrote (almost) nothing here"


# --------------------------------------------------------------------------- tests


def test_peered_routers_switches_and_port_kinds(parity_run):
    r = parity_run(peered_routers_nb(), tables=("Logical_Flow",))
    assert_router_stages(r)
    assert_stage_has_flows(r, "lr_in_arp_resolve", "lr_in_ip_input", "lr_in_ip_routing", minimum=20)


def test_static_routes_ecmp_and_route_tables(parity_run):
    r = parity_run(static_routes_nb(), tables=("Logical_Flow",))
    assert_router_stages(r)
    assert_stage_has_flows(r, "lr_in_ip_routing_pre", "lr_in_ip_routing_ecmp", "lr_in_arp_request")


def test_router_policies(parity_run):
    r = parity_run(policies_nb(), tables=("Logical_Flow",))
    assert_router_stages(r)
    assert_stage_has_flows(r, "lr_in_policy", "lr_in_policy_ecmp", minimum=5)


def test_gateway_ports_mtu_neighbor_options_and_ra(parity_run):
    r = parity_run(gateways_nb(), tables=("Logical_Flow",))
    assert_router_stages(r)
    assert_stage_has_flows(r, "lr_in_gw_redirect", "lr_in_chk_pkt_len", "lr_in_larger_pkts",
                           "lr_in_nd_ra_options", "lr_in_nd_ra_response")


def test_multicast_relay_and_symmetric_ecmp(parity_run):
    r = parity_run(multicast_and_symmetric_ecmp_nb(), tables=("Logical_Flow",))
    assert_router_stages(r, extra_stages=("lr_in_defrag", "lr_in_ecmp_stateful"))
    assert_stage_has_flows(r, "lr_in_ecmp_stateful", minimum=10)


def test_nat_owned_router_ips(parity_run):
    r = parity_run(nat_exclusions_nb(), tables=("Logical_Flow",))
    assert_router_stages(r, nat_ips=("172.16.0.1", "172.16.1.1", "172.16.3.1", "172.17.0.1", "fd00::1"))


def test_router_stages_on_mixed_10(parity_run):
    r = parity_run(workload("mixed", 10, 10, 10), tables=("Logical_Flow",), settle_timeout=120)
    nat_ips = [f"50.0.0.{i}" for i in range(1, 11)]
    assert_router_stages(r, nat_ips=nat_ips)
    by_stage = {s.stage: s for s in r.flows.stages}
    # The gateway routers' NAT flows are built too (tests/parity/test_router_nat.py).
    assert not by_stage["lr_in_ip_input"].missing and not by_stage["lr_in_arp_resolve"].missing
