"""Parity with the reference ovn-northd for the switch side of distributed gateway ports.

25.03 (behaviour ``centralized_dgp_peer``): the router-type switch port peering a router's only
distributed gateway port, on a switch without a localnet port, gets a chassisredirect port of its
own (``cr-<switch port>``): its Port_Binding, ``_MC_flood`` and the ``ls_in_l2_lkup`` /
``ls_in_check_port_sec`` flows that use it.  Cases: gateway chassis, an HA chassis group, explicit
addresses on the switch port, ``redirect-type=bridged``, a VTEP port on the switch; no such port
with a localnet port or with two gateway ports on the router.  Also (``l2_arp_snat_ips``): switches
send ARP for a router's snat external IPs to it.
"""

from __future__ import annotations

from ovn_northd_py.devtools.servers import nbctl

SWITCH_STAGES = ("ls_in_check_port_sec", "ls_in_l2_lkup", "ls_in_l2_unknown")


def _rport(sw: str, rtr: str, lrp: str, mac: str, net: str, addr: str = "router") -> list[list[str]]:
    lsp = f"{sw}-{rtr}"
    return [["lrp-add", rtr, lrp, mac, net], ["lsp-add", sw, lsp], ["lsp-set-type", lsp, "router"],
            ["lsp-set-addresses", lsp, addr], ["lsp-set-options", lsp, f"router-port={lrp}"]]


def _localnet(sw: str) -> list[list[str]]:
    ln = f"ln-{sw}"
    return [["lsp-add", sw, ln], ["lsp-set-type", ln, "localnet"], ["lsp-set-addresses", ln, "unknown"],
            ["lsp-set-options", ln, "network_name=phys"]]


def _txn(remote: str, cmds: list[list[str]]) -> None:
    args: list[str] = []
    for i, c in enumerate(cmds):
        args += (["--"] if i else []) + c
    nbctl(remote, *args)


def build_gateway_peers_nb(remote: str) -> None:
    cmds: list[list[str]] = []
    for i in range(1, 8):
        cmds += [["ls-add", f"s{i}"], ["lr-add", f"r{i}"], ["lsp-add", f"s{i}", f"v{i}"],
                 ["lsp-set-addresses", f"v{i}", f"00:00:00:00:0{i}:11 10.{i}.0.11"]]
    gw = "lrp-set-gateway-chassis"
    cmds += [*_rport("s1", "r1", "r1-s1", "00:00:00:00:01:01", "10.1.0.1/24"), [gw, "r1-s1", "hv1", "10"]]
    cmds += _rport("s2", "r2", "r2-s2", "00:00:00:00:02:01", "10.2.0.1/24")
    cmds += [["ha-chassis-group-add", "hg2"], ["ha-chassis-group-add-chassis", "hg2", "hv1", "10"]]
    cmds += [*_rport("s3", "r3", "r3-s3", "00:00:00:00:03:01", "10.3.0.1/24"), [gw, "r3-s3", "hv1", "10"]]
    cmds += _localnet("s3")
    cmds += [*_rport("s4", "r4", "r4-s4", "00:00:00:00:04:01", "10.4.0.1/24"), [gw, "r4-s4", "hv1", "10"]]
    cmds += [["ls-add", "s4b"], *_rport("s4b", "r4", "r4-s4b", "00:00:00:00:04:02", "10.44.0.1/24"),
             [gw, "r4-s4b", "hv2", "10"]]
    cmds += _rport("s5", "r5", "r5-s5", "00:00:00:00:05:01", "10.5.0.1/24", "00:00:00:00:05:01 10.5.0.1")
    cmds += [[gw, "r5-s5", "hv1", "10"]]
    cmds += [*_rport("s6", "r6", "r6-s6", "00:00:00:00:06:01", "10.6.0.1/24"), [gw, "r6-s6", "hv1", "10"]]
    cmds += [["set", "logical_router_port", "r6-s6", "options:redirect-type=bridged"]]
    cmds += [*_rport("s7", "r7", "r7-s7", "00:00:00:00:07:01", "10.7.0.1/24"), [gw, "r7-s7", "hv1", "10"]]
    cmds += [["lsp-add", "s7", "vt7"], ["lsp-set-type", "vt7", "vtep"],
             ["lsp-set-options", "vt7", "vtep-physical-switch=p", "vtep-logical-switch=l"]]
    _txn(remote, cmds)
    hg = nbctl(remote, "--bare", "--columns=_uuid", "find", "ha_chassis_group", "name=hg2").strip()
    nbctl(remote, "set", "logical_router_port", "r2-s2", f"ha_chassis_group={hg}")


def _assert_switch_side(r) -> None:
    assert r.reference.settled and r.ours.settled, r.report()
    bad = [t for t in ("Port_Binding", "Multicast_Group", "HA_Chassis_Group") if not r.tables[t].ok]
    assert not bad, r.report()
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in SWITCH_STAGES:
        assert by_stage[name].ok, f"{name}\n" + r.report()
    assert flows.extra == 0 and flows.missing == 0, r.report()


def test_switch_port_of_a_lone_gateway_port_gets_a_chassisredirect_port(parity_run, parity_profile) -> None:
    r = parity_run(build_gateway_peers_nb,
                   tables=("Port_Binding", "Multicast_Group", "HA_Chassis_Group", "Logical_Flow"))
    _assert_switch_side(r)
    assert r.ref_dump is not None
    names = {str(row["logical_port"]) for row in r.ref_dump.rows("Port_Binding").values()}
    want = {"cr-s1-r1", "cr-s2-r2", "cr-s5-r5", "cr-s6-r6", "cr-s7-r7"}
    if parity_profile.has("centralized_dgp_peer"):
        assert want <= names and not {"cr-s3-r3", "cr-s4-r4", "cr-s4b-r4"} & names
    else:
        assert not want & names


def build_snat_nb(remote: str) -> None:
    """A gateway port on a localnet switch and an internal switch; snat (one on the router's own
    IP), dnat_and_snat."""
    cmds: list[list[str]] = [["ls-add", "pub"], ["ls-add", "in"], ["lr-add", "r"], *_localnet("pub"),
                             ["lsp-add", "in", "vm"], ["lsp-set-addresses", "vm", "00:00:00:00:0a:11 192.168.0.5"]]
    cmds += [*_rport("pub", "r", "r-pub", "00:00:00:00:0a:01", "172.16.0.1/24"), ["lrp-set-gateway-chassis", "r-pub", "hv1", "10"]]
    cmds += _rport("in", "r", "r-in", "00:00:00:00:0a:02", "192.168.0.1/24")
    cmds += [["lr-nat-add", "r", "snat", "172.16.0.100", "192.168.0.0/24"],
             ["lr-nat-add", "r", "snat", "172.16.0.1", "192.168.1.0/24"],
             ["lr-nat-add", "r", "dnat_and_snat", "172.16.0.50", "192.168.0.5"]]
    _txn(remote, cmds)


def test_switches_send_arp_for_snat_ips_to_the_router(parity_run) -> None:
    r = parity_run(build_snat_nb, tables=("Logical_Flow",))
    assert r.reference.settled and r.ours.settled, r.report()
    flows = r.flows
    assert flows is not None
    l2 = {s.stage: s for s in flows.stages}["ls_in_l2_lkup"]
    assert l2.ok and l2.ref_count > 10, r.report()


def build_floating_ip_nb(remote: str) -> None:
    """Two routers, each with one gateway port and a floating IP (``dnat_and_snat`` with a logical
    port and an external MAC) beside a plain one and a snat: ``pub1`` has no localnet port (25.03:
    the switch port gets its chassisredirect port), ``pub2`` has one."""
    cmds: list[list[str]] = []
    for i in (1, 2):
        pub, sw, r = f"pub{i}", f"in{i}", f"r{i}"
        cmds += [["ls-add", pub], ["ls-add", sw], ["lr-add", r], ["lsp-add", sw, f"vm{i}"],
                 ["lsp-set-addresses", f"vm{i}", f"00:00:00:00:0{i}:11 10.{i}.0.3"]]
        cmds += _rport(pub, r, f"{r}-{pub}", f"00:00:00:00:0{i}:01", f"172.16.{i}.10/24")
        cmds += [["lrp-set-gateway-chassis", f"{r}-{pub}", "hv1", "10"]]
        cmds += _rport(sw, r, f"{r}-{sw}", f"00:00:00:00:0{i}:02", f"10.{i}.0.1/24")
        cmds += [["lr-nat-add", r, "dnat_and_snat", f"172.16.{i}.110", f"10.{i}.0.3", f"vm{i}", f"30:54:00:00:0{i}:03"],
                 ["lr-nat-add", r, "dnat_and_snat", f"172.16.{i}.120", f"10.{i}.0.4"],
                 ["lr-nat-add", r, "snat", f"172.16.{i}.100", f"10.{i}.0.0/24"]]
    cmds += _localnet("pub2")
    _txn(remote, cmds)


def test_floating_ips_of_a_gateway_port_whose_switch_has_no_localnet_port(parity_run, parity_profile) -> None:
    """25.03 (``centralized_dgp_peer``): a floating IP of a gateway port whose switch port has its
    own chassisredirect port is centralized like the router's other NAT rules (no admission flow
    for its external MAC, the gateway's residence); with a localnet port it stays distributed."""
    r = parity_run(build_floating_ip_nb, tables=("Port_Binding", "Logical_Flow"))
    assert r.reference.settled and r.ours.settled, r.report()
    flows = r.flows
    assert flows is not None
    assert flows.extra == 0 and flows.missing == 0, r.report()
    assert r.ref_dump is not None
    admits = [str(f["match"]) for f in r.ref_dump.rows("Logical_Flow").values()
              if f["external_ids"].as_dict().get("stage-name") == "lr_in_admission" and "30:54" in str(f["match"])]
    assert any("30:54:00:00:02:03" in m for m in admits)
    assert any("30:54:00:00:01:03" in m for m in admits) is not parity_profile.has("centralized_dgp_peer")
