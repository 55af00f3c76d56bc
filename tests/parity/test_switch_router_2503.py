"""Parity with the 25.03 reference for smaller switch / router corners that OVN's ovn-northd.at
checks: gateway_mtu with a localnet ``tag_request`` of 0 (no VLAN without a parent), LSP
``options:force_fdb_lookup`` and ``options:pkt_clone_type``, and the ``ct-commit-nat-v2`` chassis
feature (ICMP errors' SNAT commit), QoS marks and queues."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ovn_northd_py.devtools.nb_json import NbOps
from ovn_northd_py.devtools.servers import nbctl, sbctl


def build_nb(remote: str) -> None:
    """Gateway router r0 with gateway_mtu on its ports to pub0 (localnet tag_request 0, no parent),
    pub1 (tag_request 0 with a parent), pub2 (tag_request 5); switch s1 with VIFs: unknown +
    force_fdb_lookup, force_fdb_lookup without unknown, pkt_clone_type mc_unknown (enabled,
    disabled) and a bad value; a localnet port with force_fdb_lookup."""
    cmds = ["lr-add", "r0", "--", "set", "logical_router", "r0", "options:chassis=ch1",
            "--", "lrp-add", "r0", "r0-in", "00:00:00:00:ff:01", "10.0.0.1/24",
            "--", "ls-add", "s1", "--", "lsp-add", "s1", "s1-r0", "--", "lsp-set-type", "s1-r0", "router",
            "--", "lsp-set-addresses", "s1-r0", "router", "--", "lsp-set-options", "s1-r0", "router-port=r0-in",
            "--", "lr-nat-add", "r0", "dnat_and_snat", "172.16.0.100", "10.0.0.100"]
    for n, tag in enumerate(("0", "0", "5")):
        cmds += ["--", "ls-add", f"pub{n}", "--", "lrp-add", "r0", f"r0-pub{n}", f"00:00:20:20:12:1{n}", f"172.16.{n}.1/24",
                 "--", "set", "logical_router_port", f"r0-pub{n}", "options:gateway_mtu=1500",
                 "--", "lsp-add", f"pub{n}", f"pub{n}-r0", "--", "lsp-set-type", f"pub{n}-r0", "router",
                 "--", "lsp-set-addresses", f"pub{n}-r0", "router",
                 "--", "lsp-set-options", f"pub{n}-r0", f"router-port=r0-pub{n}",
                 "--", "lsp-add", f"pub{n}", f"ln{n}", "--", "lsp-set-type", f"ln{n}", "localnet",
                 "--", "lsp-set-addresses", f"ln{n}", "unknown",
                 "--", "set", "logical_switch_port", f"ln{n}", f"tag_request={tag}"]
    cmds += ["--", "set", "logical_switch_port", "ln1", "parent_name=ext-parent"]
    for name, addrs, opts in (("f1", ["50:54:00:00:00:01 10.0.0.11", "unknown"], ["force_fdb_lookup=true"]),
                              ("f2", ["50:54:00:00:00:02 10.0.0.12"], ["force_fdb_lookup=true"]),
                              ("c1", ["50:54:00:00:00:03 10.0.0.13"], ["pkt_clone_type=mc_unknown"]),
                              ("c2", ["50:54:00:00:00:04 10.0.0.14"], ["pkt_clone_type=mc_unknown"]),
                              ("c3", ["50:54:00:00:00:05 10.0.0.15"], ["pkt_clone_type=foo"]),
                              ("u1", ["unknown"], [])):
        cmds += ["--", "lsp-add", "s1", name, "--", "lsp-set-addresses", name, *addrs,
                 "--", "lsp-set-options", name, *opts]
    # MAC bytes of more than two hex digits; ARP / ND replies disabled on a port.
    for name, addr in (("m1", "50:54:00:00:00:010 192.168.0.10 fd00::10"), ("m2", "50:54:00:00:00:0100 192.168.0.11"),
                       ("m3", "50:54:00:00:00:1ff 192.168.0.12"), ("m4", "50:54:00:00:00:0x1f 192.168.0.13")):
        cmds += ["--", "lsp-add", "s1", name, "--", "lsp-set-addresses", name, addr]
    cmds += ["--", "lsp-set-options", "m1", "disable_arp_nd_rsp=true",
             "--", "lsp-set-options", "c3", "pkt_clone_type=foo", "disable_arp_nd_rsp=false"]
    cmds += ["--", "lsp-set-enabled", "c2", "disabled",
             "--", "lsp-add", "s1", "ln-s1", "--", "lsp-set-type", "ln-s1", "localnet",
             "--", "lsp-set-addresses", "ln-s1", "unknown",
             "--", "lsp-set-options", "ln-s1", "network_name=phys", "force_fdb_lookup=true"]
    # QoS: marks (NB action:mark) and queues (a VIF's qdisc_queue_id on the localnet ports, a
    # localnet port's QoS parameters with its network_name).
    cmds += ["--", "lsp-set-options", "u1", "qdisc_queue_id=10",
             "--", "lsp-set-options", "ln0", "qos_min_rate=200000", "network_name=phys"]
    # (Not here: two localnet ports with QoS parameters -- 25.03 gives them different queue ids,
    # in an order of its own.)
    nbctl(remote, *cmds)
    ops = NbOps()  # (the host's ovn-nbctl may not know action:mark)
    ops.add_to("Logical_Switch", "s1", "qos_rules",
               ops.insert("QoS", {"direction": "from-lport", "priority": 101, "match": "ip4",
                                  "action": ops.map({"mark": 15})}),
               ops.insert("QoS", {"direction": "to-lport", "priority": 103, "match": "ip4",
                                  "action": ops.map({"dscp": 17, "mark": 18}), "bandwidth": ops.map({"rate": 100})}),
               # DSCP above 63: bad.
               ops.insert("QoS", {"direction": "from-lport", "priority": 110, "match": "ip4",
                                  "action": ops.map({"dscp": 100})}),
               ops.insert("QoS", {"direction": "from-lport", "priority": 111, "match": "ip4",
                                  "action": ops.map({"dscp": 64, "mark": 5}), "bandwidth": ops.map({"rate": 10})}),
               ops.insert("QoS", {"direction": "to-lport", "priority": 112, "match": "ip4",
                                  "action": ops.map({"dscp": 63})}))
    ops.transact(remote)


def chassis(*features: str) -> Callable[[str, str], None]:
    def add(_nb: str, sb: str) -> None:
        sbctl(sb, "chassis-add", "ch1", "geneve", "127.0.0.1", "--", "set", "chassis", "ch1",
              "other_config:is-interconn=false", *(f"other_config:{f}=true" for f in features))
    return add


@pytest.mark.parametrize("features", [("ct-commit-nat-v2",), ()], ids=["ct-commit-nat-v2", "none"])
def test_switch_router_corners_equal_reference(parity_2503, features) -> None:
    r = parity_2503(build_nb, after_settle=chassis(*features), tables=("Logical_Flow", "Port_Binding"))
    assert r.flows is not None and r.flows.ref_count > 100, r.report()
    assert r.ok, r.report()


def build_remote_ports_nb(remote: str) -> None:
    """Remote ports asking for a remote chassis, a local one, an unknown one; a VIF asking for the
    remote chassis (not bound by northd)."""
    cmds = ["ls-add", "sw0"]
    for name, typ, ch in (("r1", "remote", "remote-ch0"), ("r2", "remote", "local-ch0"), ("r3", "remote", "foo"),
                          ("v1", "", "remote-ch0")):
        cmds += ["--", "lsp-add", "sw0", name, "--", "lsp-set-options", name, f"requested-chassis={ch}"]
        if typ:
            cmds += ["--", "lsp-set-type", name, typ]
    nbctl(remote, *cmds)


def remote_and_local_chassis(_nb: str, sb: str) -> None:
    sbctl(sb, "chassis-add", "remote-ch0", "geneve", "127.0.0.1", "--", "set", "chassis", "remote-ch0",
          "other_config:is-remote=true", "--", "chassis-add", "local-ch0", "geneve", "127.0.0.2")


def test_remote_ports_bound_to_remote_chassis(parity_2503) -> None:
    r = parity_2503(build_remote_ports_nb, after_settle=remote_and_local_chassis,
                    tables=("Port_Binding",))
    assert r.ok, r.report()
