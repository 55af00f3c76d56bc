"""Parity with the 25.03 reference (Debian 13's ovn-northd, the draft profile) for router features.

Each test builds a small NB and runs the trixie reference beside our daemon under
``OVN_NORTHD_PY_DRAFT_PROFILES=1``: the corners the random networks found on 25.03 (ECMP
symmetric replies without the next-hop monitor, ARP for SNAT addresses, router-type ports'
MACs, unknown destinations), and 25.03's router features (NAT ``match`` / ``priority``,
policy chains, DHCP relay).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from test_router_basics import Cmd, rport, vif

from ovn_northd_py.devtools import nb_json
from ovn_northd_py.parity.harness import assert_parity, nbctl_commands


@pytest.fixture(autouse=True)
def _release_25_03(monkeypatch):
    monkeypatch.setenv("OVN_PARITY_RELEASE", "25.03")
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")


def _stage_flows(result, stage: str) -> int:
    assert result.flows is not None
    return next(s.ref_count for s in result.flows.stages if s.stage == stage)


def symmetric_reply_routes() -> list[Cmd]:
    """One symmetric-reply route per router, without a second member (the reference numbers the
    groups and members of a router in a hash order: not compared here), on gateway routers (IPv4
    destination, IPv4 source, IPv6) and a plain router."""
    def gw(name: str, n: int, route: list[str]) -> list[Cmd]:
        return [
            ["lr-add", name], ["set", "logical_router", name, f"options:chassis=hv{n}"],
            ["lrp-add", name, f"{name}-a", f"02:00:00:00:0{n}:01", f"10.0.{n}.1/24", f"fd0{n}::1/64"],
            ["lrp-add", name, f"{name}-b", f"02:00:00:00:0{n}:02", f"10.1.{n}.1/24", f"fd1{n}::1/64"],
            ["lr-route-add", name, "172.20.0.0/16", f"10.0.{n}.20"],
            ["--ecmp-symmetric-reply", *route],
        ]
    return [
        *gw("g1", 1, ["lr-route-add", "g1", "172.19.0.0/16", "10.0.1.19"]),
        *gw("g2", 2, ["--policy=src-ip", "lr-route-add", "g2", "172.18.0.0/16", "10.1.2.12"]),
        *gw("g3", 3, ["lr-route-add", "g3", "2001:db8::/32", "fd13::10"]),
        ["lr-add", "p1"],
        ["lrp-add", "p1", "p1-a", "02:00:00:00:05:01", "10.0.6.1/24"],
        ["--ecmp-symmetric-reply", "lr-route-add", "p1", "172.16.0.0/16", "10.0.6.10"],
    ]


def test_ecmp_symmetric_reply_without_nexthop_monitor(parity_run):
    r = parity_run(nbctl_commands(*symmetric_reply_routes()))
    assert_parity(r)
    assert _stage_flows(r, "lr_in_ecmp_stateful") > 1


def test_ecmp_nexthop_rows_with_the_nexthop_monitor(parity_run):
    """NB_Global options:ecmp_nexthop_monitor_enable=true: SB ECMP_Nexthop rows for the next hops of
    symmetric-reply routes (the flows stay as without it)."""
    cmds = [*symmetric_reply_routes(), ["set", "nb_global", ".", "options:ecmp_nexthop_monitor_enable=true"]]
    r = parity_run(nbctl_commands(*cmds))
    assert_parity(r)
    assert len(r.ref_dump.rows("ECMP_Nexthop")) == 4


def gw_router_with_snat_and_ports() -> list[Cmd]:
    return [
        ["ls-add", "ext"], ["ls-add", "int"],
        *vif("ext", "ln", "unknown", type="localnet", options=["network_name=phys"]),
        *vif("int", "vm1", "0a:00:00:00:00:01 10.1.0.11"),
        # A disabled port with unknown addresses; a "MAC dynamic" port without a subnet.
        *vif("int", "vm2", "0a:00:00:00:00:02", "unknown"),
        ["set", "logical_switch_port", "vm2", "enabled=false"],
        *vif("int", "vm3", "0a:00:00:00:00:03 dynamic"),
        ["lr-add", "r1"],
        ["lrp-add", "r1", "r1-ext", "02:00:00:00:01:01", "172.16.0.1/24"],
        ["lrp-add", "r1", "r1-int", "02:00:00:00:01:02", "10.1.0.1/24"],
        ["lrp-set-gateway-chassis", "r1-ext", "hv1", "10"],
        # Router-type ports given the router port's MAC as their address (not "router").
        *rport("ext", "ext-r1", "r1-ext", "02:00:00:00:01:01"),
        *rport("int", "int-r1", "r1-int", "02:00:00:00:01:02"),
        ["lr-nat-add", "r1", "snat", "172.16.0.100", "10.1.0.0/24"],
        ["lr-nat-add", "r1", "dnat_and_snat", "172.16.0.101", "10.1.0.11"],
    ]


def test_snat_arp_router_port_macs_and_unknown_destinations(parity_run):
    r = parity_run(nbctl_commands(*gw_router_with_snat_and_ports()))
    assert_parity(r)
    assert _stage_flows(r, "ls_in_l2_lkup") > 10


def nat_row(router: str, tag: str, *cols: str) -> list[Cmd]:
    """A NAT row created with ``create``, tagged ``external_ids:tag`` for :mod:`nb_json` updates."""
    return [["--id=@" + tag, "create", "NAT", *cols, f"external_ids:tag={tag}"],
            ["add", "logical_router", router, "nat", "@" + tag]]


def with_json(cmds: list[Cmd], ops: list[nb_json.Op]) -> Callable[[str], None]:
    """NB builder: the ovn-nbctl commands (one transaction), then the 25.03 columns as JSON ops."""
    def build(remote: str) -> None:
        nbctl_commands(*cmds)(remote)
        nb_json.transact(remote, ops)
    return build


def nat_match_priority_nb() -> Callable[[str], None]:
    """NAT rules with ``match`` (and ``priority``, which counts only with a match) on a gateway
    router and on a router with a distributed gateway port."""
    cmds: list[Cmd] = [
        ["ls-add", "pub"], ["ls-add", "int"],
        *vif("pub", "ln", "unknown", type="localnet", options=["network_name=phys"]),
        *vif("int", "vm1", "0a:00:00:00:00:01 10.1.0.11"),
        ["--id=@as1", "create", "Address_Set", "name=as1", "addresses=10.9.9.9"],
    ]
    ops: list[nb_json.Op] = []
    for name, gw, n in (("g1", True, 1), ("d1", False, 2)):
        cmds += [["lr-add", name]]
        if gw:
            cmds.append(["set", "logical_router", name, "options:chassis=hv1"])
        cmds += [
            ["lrp-add", name, f"{name}-pub", f"02:00:00:00:0{n}:01", f"172.16.0.{n}/24"],
            ["lrp-add", name, f"{name}-int", f"02:00:00:00:0{n}:02", f"10.{n}.0.1/24"],
            *rport("pub", f"pub-{name}", f"{name}-pub"), *rport("int", f"int-{name}", f"{name}-int"),
        ]
        if not gw:
            cmds.append(["lrp-set-gateway-chassis", f"{name}-pub", "hv1", "20"])
        e = f"172.16.{n}"
        rules = [
            ("snat", ".1", f"10.{n}.0.0/24", "ip4.dst == 192.168.0.0/16", 100),
            ("snat", ".2", f"10.{n}.0.0/24", "ip4.dst == 192.168.1.0/24", 200),
            ("snat", ".3", f"10.{n}.0.0/24", "", 0),
            ("dnat", ".4", f"10.{n}.0.14", "tcp.dst == 80", 10),
            ("dnat_and_snat", ".5", f"10.{n}.0.15", "ip4.src == 8.8.8.8", 0),
            ("dnat_and_snat", ".6", f"10.{n}.0.16", "", 50),
            ("dnat_and_snat", ".7", f"10.{n}.0.17", "udp", 7, "options:stateless=true"),
            ("snat", ".8", f"10.{n}.8.0/24", "tcp", 8, "allowed_ext_ips=@as1"),
        ]
        for k, (typ, ext, logical, match, prio, *more) in enumerate(rules):
            tag = f"{name}n{k}"
            cmds += nat_row(name, tag, f"type={typ}", f"external_ip={e}{ext}", f"logical_ip={logical}", *more)
            ops.append(nb_json.update("NAT", {"match": match, "priority": prio}, ids=("tag", tag)))
    return with_json(cmds, ops)


def test_nat_match_and_priority(parity_run):
    r = parity_run(nat_match_priority_nb())
    assert_parity(r)
    assert _stage_flows(r, "lr_out_snat") > 10


def policy_chains_nb() -> Callable[[str], None]:
    """Router policies in chains: jumps from the default chain and from another chain, a chain no
    rule jumps to, a jump to a chain without rules, reroutes and drops inside chains."""
    cmds: list[Cmd] = [
        ["ls-add", "int"], *vif("int", "vm1", "0a:00:00:00:00:01 10.1.0.11"),
        ["lr-add", "r1"],
        ["lrp-add", "r1", "r1-int", "02:00:00:00:01:02", "10.1.0.1/24"],
        *rport("int", "int-r1", "r1-int"),
    ]
    ops: list[nb_json.Op] = []
    rules = [
        # (priority, match, action, chain, jump_chain, nexthops)
        (100, "ip4.src == 10.1.0.0/24", "jump", "", "c1", ""),
        (90, "ip4.src == 10.2.0.0/24", "jump", "", "nochain", ""),
        (80, "ip4.src == 10.3.0.0/24", "reroute", "", "", "10.1.0.100"),
        (70, "ip4.src == 10.4.0.0/24", "reroute", "c1", "", "10.1.0.102,10.1.0.103"),
        (10, "ip4", "allow", "", "", ""),
        (50, "ip4.dst == 8.8.8.8", "drop", "c1", "", ""),
        (40, "ip4.dst == 9.9.9.9", "reroute", "c1", "", "10.1.0.101"),
        (30, "tcp", "jump", "c1", "c2", ""),
        (20, "udp", "allow", "c2", "", ""),
        (60, "ip4.dst == 7.7.7.7", "allow", "c3", "", ""),
    ]
    for k, (prio, match, action, chain, jump, hops) in enumerate(rules):
        tag = f"p{k}"
        cmds += [["--id=@" + tag, "create", "Logical_Router_Policy", f"priority={prio}", f'match="{match}"',
                  "action=allow", f"external_ids:tag={tag}"],
                 ["add", "logical_router", "r1", "policies", "@" + tag]]
        row: dict[str, object] = {"action": action}
        if chain:
            row["chain"] = chain
        if jump:
            row["jump_chain"] = jump
        if hops:
            row["nexthops"] = ["set", hops.split(",")]
        ops.append(nb_json.update("Logical_Router_Policy", row, ids=("tag", tag)))
    return with_json(cmds, ops)


def test_policy_chains(parity_run):
    r = parity_run(policy_chains_nb())
    assert_parity(r)
    assert _stage_flows(r, "lr_in_policy") > 5


def dhcp_relay_nb() -> Callable[[str], None]:
    """DHCP relay: a router port with a DHCP_Relay row whose switch names its router-type port in
    ``other_config:dhcp_relay_port``; a relay port on a switch that does not name it; a relay
    whose server is not an address; a switch naming a port that has no relay.  (A relay without
    servers crashes the 25.03 reference, and a VIF without a parsed address, e.g. ``unknown`` or no
    addresses, gets whatever its memory holds as the MAC of its flow: not here.)"""
    cmds: list[Cmd] = [
        ["ls-add", "pub"], ["ls-add", "s1"], ["ls-add", "s2"], ["ls-add", "s3"], ["ls-add", "s4"],
        *vif("pub", "ln", "unknown", type="localnet", options=["network_name=phys"]),
        *vif("s1", "vm1", "0a:00:00:00:00:01"), *vif("s2", "vm2", "0a:00:00:00:00:02"),
        *vif("s1", "vm5", "0a:00:00:00:00:05 10.1.0.5", "0a:00:00:00:00:15"),
        *vif("s1", "vm7", "0a:00:00:00:00:07"), ["set", "logical_switch_port", "vm7", "enabled=false"],
        *vif("s1", "vt1", "0a:00:00:00:00:08 10.1.0.8", type="virtual", options=["virtual-ip=10.1.0.8",
                                                                                 "virtual-parents=vm5"]),
        *vif("s3", "vm3", "0a:00:00:00:00:03"), *vif("s4", "vm4", "0a:00:00:00:00:04"),
        ["lr-add", "r1"],
        ["lrp-add", "r1", "r1-pub", "02:00:00:00:01:01", "172.16.0.1/24"],
        *rport("pub", "pub-r1", "r1-pub"),
    ]
    for n in range(1, 5):
        cmds += [["lrp-add", "r1", f"r1-s{n}", f"02:00:00:00:01:1{n}", f"10.{n}.0.1/24"],
                 *rport(f"s{n}", f"s{n}-r1", f"r1-s{n}")]
    cmds += [["set", "logical_switch", "s1", "other_config:dhcp_relay_port=s1-r1"],
             ["set", "logical_switch", "s3", "other_config:dhcp_relay_port=s3-r1"],
             ["set", "logical_switch", "s4", "other_config:dhcp_relay_port=s4-r1"]]
    ops: list[nb_json.Op] = [
        nb_json.insert("DHCP_Relay", {"name": "relay1", "servers": "172.16.0.254"}, "relay1"),
        nb_json.insert("DHCP_Relay", {"name": "bad", "servers": "172.16.0.300"}, "empty"),
        nb_json.update("Logical_Router_Port", {"dhcp_relay": ["named-uuid", "relay1"]}, name="r1-s1"),
        nb_json.update("Logical_Router_Port", {"dhcp_relay": ["named-uuid", "relay1"]}, name="r1-s2"),
        nb_json.update("Logical_Router_Port", {"dhcp_relay": ["named-uuid", "empty"]}, name="r1-s3"),
    ]
    return with_json(cmds, ops)


def test_dhcp_relay(parity_run):
    r = parity_run(dhcp_relay_nb())
    assert_parity(r)
    assert _stage_flows(r, "lr_in_dhcp_relay_req") > 2


def test_qos_queues_of_vif_and_localnet_ports(parity_run):
    """(Found by the random networks.)  A VIF with QoS on a switch with a localnet port gets a queue
    from the pool (its own qdisc_queue_id is not used) and the localnet's network name, and its
    set_queue where it leaves through the localnet port.  (One port takes an id from the pool: the
    reference takes them in an order of its own, which varies from run to run.)"""
    r = parity_run(nbctl_commands(
        ["ls-add", "s1"],
        *vif("s1", "ln1", "unknown", type="localnet",
             options=["network_name=phys1", "qdisc_queue_id=5"]),
        *vif("s1", "vm2", "0a:00:00:00:00:02 10.1.0.12"),
        ["set", "logical_switch_port", "vm2", "options:qos_burst=1000", "options:qdisc_queue_id=7"],
        *vif("s1", "vm3", "0a:00:00:00:00:03 10.1.0.13"),
    ))
    assert_parity(r)
    assert _stage_flows(r, "ls_out_apply_port_sec") >= 3
