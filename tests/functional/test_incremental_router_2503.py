"""25.03's router features handled incrementally (draft profile, servers with the 25.03 schemas):
NAT ``match`` / ``priority``, policy chains and DHCP relay; each change is checked by the
daemon's ``--check-incremental=1`` against a full recompute, and needs no flow recompute."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ovn_northd_py.devtools import nb_json
from ovn_northd_py.devtools.servers import OvsdbServer, nbctl, sbctl
from ovn_northd_py.devtools.testing import checked_daemon, mismatches, node_runs, run_batch

# 26.03 runs wherever 25.03 does (the same features, its own profile).
pytestmark = pytest.mark.releases("25.03", "26.03")


class Env2503:
    def __init__(self, workdir: Path, nb: OvsdbServer, sb: OvsdbServer) -> None:
        self.workdir, self.nb, self.sb = workdir, nb, sb

    def nbctl(self, *args: str, wait: str | None = None, timeout: int = 30) -> str:
        return nbctl(self.nb.remote, *args, wait=wait, timeout=timeout)

    def sync(self, timeout: int = 30) -> None:
        self.nbctl("sync", wait="sb", timeout=timeout)

    def json(self, *ops: nb_json.Op) -> None:
        """25.03 columns (the host's ovn-nbctl does not know them), then wait for SB."""
        nb_json.transact(self.nb.remote, list(ops))
        self.sync()

    def sb_select(self, table: str) -> list[dict]:
        """Rows of an SB table as OVSDB JSON (every column of the 25.03 schema)."""
        txn = json.dumps(["OVN_Southbound", {"op": "select", "table": table, "where": []}])
        out = subprocess.run(["ovsdb-client", "transact", self.sb.remote, txn], check=True, capture_output=True,
                             text=True).stdout
        return json.loads(out)[0]["rows"]

    def flows(self, stage: str) -> list[str]:
        out = sbctl(self.sb.remote, "--bare", "--columns=priority,match,actions", "find", "Logical_Flow",
                    f"external_ids:stage-name={stage}")
        return [" ".join(block.split("\n")) for block in out.strip().split("\n\n") if block]


@pytest.fixture
def env2503(tmp_path: Path, ovn_release) -> Iterator[Env2503]:
    rel = ovn_release
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    try:
        yield Env2503(tmp_path, nb, sb)
    finally:
        sb.stop()
        nb.stop()


def _setup(env: Env2503, batch: list[list[str]]) -> None:
    """NB commands before the daemon runs (nothing to wait for)."""
    args: list[str] = []
    for i, cmd in enumerate(batch):
        args += (["--"] if i else []) + cmd
    env.nbctl(*args)


def _routers(env: Env2503) -> None:
    _setup(env, [
        ["ls-add", "pub"], ["ls-add", "int"],
        ["lr-add", "g1"], ["set", "logical_router", "g1", "options:chassis=hv1"],
        ["lrp-add", "g1", "g1-pub", "02:00:00:00:01:01", "172.16.0.1/24"],
        ["lrp-add", "g1", "g1-int", "02:00:00:00:01:02", "10.1.0.1/24"],
        ["lr-add", "d1"],
        ["lrp-add", "d1", "d1-pub", "02:00:00:00:02:01", "172.16.0.2/24"],
        ["lrp-add", "d1", "d1-int", "02:00:00:00:02:02", "10.2.0.1/24"],
        ["lrp-set-gateway-chassis", "d1-pub", "hv1", "20"],
    ])


def _recomputes(port: int) -> dict[str, float]:
    return {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}


def test_nat_match_and_priority_changes_are_incremental(env2503):
    env = env2503
    _routers(env)
    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        for r in ("g1", "d1"):
            run_batch(env, [["--id=@n", "create", "NAT", "type=snat", "external_ip=172.16.1.1",
                             "logical_ip=10.0.0.0/8", f"external_ids:tag={r}"],
                            ["add", "logical_router", r, "nat", "@n"]])
            env.json(nb_json.update("NAT", {"match": "tcp", "priority": 5}, ids=("tag", r)))
        snat = env.flows("lr_out_snat")
        assert sum(f.startswith("305 ") and "(tcp)" in f and "ct_snat(" in f for f in snat) == 2, snat
        for r in ("g1", "d1"):
            env.json(nb_json.update("NAT", {"priority": 9}, ids=("tag", r)))
            env.json(nb_json.update("NAT", {"match": ""}, ids=("tag", r)))
        snat = env.flows("lr_out_snat")
        assert not any("(tcp)" in f for f in snat), snat
        assert _recomputes(port) == before
        assert not mismatches(d)


def _policy(env: Env2503, router: str, tag: str, prio: int, match: str) -> None:
    run_batch(env, [["--id=@p", "create", "Logical_Router_Policy", f"priority={prio}", f'match="{match}"',
                     "action=allow", f"external_ids:tag={tag}"],
                    ["add", "logical_router", router, "policies", "@p"]])


def test_policy_chain_changes_are_incremental(env2503):
    env = env2503
    _routers(env)
    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        _policy(env, "d1", "jump", 100, "ip4.src == 10.2.0.0/24")
        _policy(env, "d1", "in-c1", 50, "tcp")
        env.json(nb_json.update("Logical_Router_Policy", {"chain": "c1"}, ids=("tag", "in-c1")))
        env.json(nb_json.update("Logical_Router_Policy", {"action": "jump", "jump_chain": "c1"}, ids=("tag", "jump")))
        flows = env.flows("lr_in_policy")
        assert any("reg9[16..31]=1; next(pipeline=ingress, table=" in f for f in flows), flows
        assert any("reg9[16..31] == 1 && (tcp)" in f for f in flows), flows
        # Leaving the chain: the router has no chain any more, its matches lose the prefix.
        env.json(nb_json.update("Logical_Router_Policy", {"chain": ""}, ids=("tag", "in-c1")))
        flows = env.flows("lr_in_policy")
        assert not any("reg9[16..31]" in f for f in flows), flows
        assert _recomputes(port) == before
        assert not mismatches(d)


def test_policy_deprecated_nexthop_and_nexthops_changes_are_incremental(env2503, ovn_release):
    """A reroute policy with only the deprecated ``nexthop`` column: ignored by 26.03 (behaviour
    ``policy_nexthop_ignored``: no flow, no place in the ECMP numbering), used by 25.03; then
    given ``nexthops``, and an ECMP policy numbered after it."""
    env = env2503
    _routers(env)
    ignored = ovn_release.profile.has("policy_nexthop_ignored")
    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        run_batch(env, [["--id=@p", "create", "Logical_Router_Policy", "priority=200", 'match="ip4.src == 10.2.0.9"',
                         "action=reroute", 'nexthop="10.2.0.5"', "external_ids:tag=old"],
                        ["add", "logical_router", "d1", "policies", "@p"]])
        run_batch(env, [["--id=@p", "create", "Logical_Router_Policy", "priority=201", 'match="ip4.src == 10.2.0.8"',
                         "action=reroute", 'nexthops="10.2.0.6","10.2.0.7"', "external_ids:tag=ecmp"],
                        ["add", "logical_router", "d1", "policies", "@p"]])
        flows = env.flows("lr_in_policy")
        assert any(f.startswith("201 ") and "select(1, 2)" in f for f in flows), flows
        assert any(f.startswith("200 ") for f in flows) != ignored, flows
        env.json(nb_json.update("Logical_Router_Policy", {"nexthops": ["set", ["10.2.0.5"]]}, ids=("tag", "old")))
        flows = env.flows("lr_in_policy")
        assert any(f.startswith("200 ") and "reg0 = 10.2.0.5;" in f for f in flows), flows
        env.json(nb_json.update("Logical_Router_Policy", {"nexthops": ["set", []]}, ids=("tag", "old")))
        flows = env.flows("lr_in_policy")
        assert any(f.startswith("200 ") for f in flows) != ignored, flows
        assert _recomputes(port) == before
        assert not mismatches(d)


def test_policy_jumping_to_a_chain_no_policy_is_in_is_warned_once_and_builds_no_flow(env2503):
    """A ``jump`` to a chain no policy of the router is in builds nothing and is warned once,
    naming the policy, in the reference's words (``Logical router: R, policy action 'jump' follows
    to non-existent chain C``, which ovn-northd.at's "Router policies - chains" greps in the log)."""
    env = env2503
    _routers(env)
    with checked_daemon(env) as (_, d, _port):
        _policy(env, "d1", "nochain", 112, "ip4.src == 10.0.0.0/24")
        env.json(nb_json.update("Logical_Router_Policy", {"action": "jump", "jump_chain": "nochain"},
                                ids=("tag", "nochain")))
        _policy(env, "d1", "in-c1", 50, "tcp")
        env.json(nb_json.update("Logical_Router_Policy", {"chain": "c1"}, ids=("tag", "in-c1")))
        uuid = env.nbctl("--bare", "--columns=_uuid", "find", "Logical_Router_Policy", "priority=112").strip()
        got = [(r["table"], r["row"], r["reason"]) for r in d.log_records() if r.get("event") == "policy_jump_no_chain"]
        assert got == [("Logical_Router_Policy", uuid,
                        "Logical router: d1, policy action 'jump' follows to non-existent chain nochain")]
        flows = env.flows("lr_in_policy")
        assert not any(f.startswith("112 ") for f in flows) and any("reg9[16..31] == 1 && (tcp)" in f for f in flows)
        assert not mismatches(d)



def test_route_selection_fields_changes_are_incremental(env2503):
    """An ECMP group's select() follows its routes' selection_fields (the fields they share)."""
    env = env2503
    _routers(env)
    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        for k in (1, 2):
            run_batch(env, [["--id=@r", "create", "Logical_Router_Static_Route", 'ip_prefix="172.30.0.0/16"',
                             f'nexthop="10.2.0.{10 + k}"', f"external_ids:tag=sel{k}"],
                            ["add", "logical_router", "d1", "static_routes", "@r"]])

        def selects() -> list[str]:
            return [f for f in env.flows("lr_in_ip_routing") if "172.30.0.0/16" in f]

        assert any("select(1, 2)" in f for f in selects()), selects()
        for k in (1, 2):
            env.json(nb_json.update("Logical_Router_Static_Route", {"selection_fields": ["set", ["ip_src", "tp_dst"]]},
                                    ids=("tag", f"sel{k}")))
        flows = selects()
        assert any('hash_fields="ip_proto,ip_src,tcp_dst"' in f for f in flows) and len(flows) == 4, flows
        env.json(nb_json.update("Logical_Router_Static_Route", {"selection_fields": ["set", ["ip_dst"]]},
                                ids=("tag", "sel2")))
        assert [f for f in selects() if "select(1, 2)" in f] and len(selects()) == 1, selects()
        assert _recomputes(port) == before
        assert not mismatches(d)



def test_route_over_a_next_hop_of_the_other_family_is_incremental(env2503):
    """An IPv4 route over an IPv6 next hop (``route_mixed_family``), added and removed."""
    env = env2503
    _routers(env)
    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        env.nbctl("set", "logical_router_port", "g1-int", 'networks="10.1.0.1/24","fd01::1/64"')
        env.sync()
        before = _recomputes(port)
        run_batch(env, [["--id=@r", "create", "Logical_Router_Static_Route", 'ip_prefix="11.0.0.0/24"',
                         'nexthop="fd01::10"', "external_ids:tag=mixed"],
                        ["add", "logical_router", "g1", "static_routes", "@r"]])
        flows = [f for f in env.flows("lr_in_ip_routing") if "11.0.0.0/24" in f]
        assert len(flows) == 1 and "xxreg0 = fd01::10" in flows[0] and "reg9[9] = 0" in flows[0], flows
        uuid = env.nbctl("--bare", "--columns=_uuid", "find", "Logical_Router_Static_Route", "external_ids:tag=mixed")
        env.nbctl("remove", "logical_router", "g1", "static_routes", uuid.strip(), wait="sb")
        assert not [f for f in env.flows("lr_in_ip_routing") if "11.0.0.0/24" in f]
        assert _recomputes(port) == before
        assert not mismatches(d)



def test_router_port_peers_follow_both_sides(env2503):
    """``lrp_peer_checks``: a router port names a peer that does not name it back: no peering
    (Port_Binding options:peer absent) until it does; a switch port naming a peered router port
    stays unconnected and is warned."""
    env = env2503
    env.nbctl("lr-add", "a", "--", "lr-add", "b", "--", "lrp-add", "a", "a0", "00:00:00:02:ff:01", "10.10.0.1/24",
              "--", "lrp-add", "b", "b0", "00:00:00:02:ff:02", "10.10.0.2/24")
    with checked_daemon(env) as (_, d, _port):
        def peer(name: str) -> str | None:
            rows = [r for r in env.sb_select("Port_Binding") if r["logical_port"] == name]
            return dict(rows[0]["options"][1]).get("peer")

        env.nbctl("set", "logical_router_port", "a0", "peer=b0", wait="sb")
        assert peer("a0") is None and peer("b0") is None
        env.nbctl("set", "logical_router_port", "b0", "peer=a0", wait="sb")
        assert peer("a0") == "b0" and peer("b0") == "a0"
        env.nbctl("ls-add", "ls", "--", "lsp-add", "ls", "ls-b0", "--", "lsp-set-type", "ls-b0", "router", "--",
                  "lsp-set-options", "ls-b0", "router-port=b0", "--", "lsp-set-addresses", "ls-b0", "router",
                  wait="sb")
        assert peer("b0") == "a0"
        got = [r for r in d.log_records() if r.get("event") == "lsp_router_port_peered"]
        assert len(got) == 1 and "has its own peer configuration: 'a0'" in got[0]["reason"]
        env.nbctl("clear", "logical_router_port", "b0", "peer", wait="sb")
        assert peer("a0") is None and peer("b0") == "ls-b0"
        assert not mismatches(d)



def test_routing_protocol_redirect_follows_options_and_target_port(env2503):
    """``routing_protocol_redirect``: the flows come with both options, go with the target port,
    come back with it and go with the options."""
    env = env2503
    env.nbctl("lr-add", "lr", "--", "lrp-add", "lr", "lr-ls", "02:ac:10:01:00:01", "172.16.1.1/24",
              "--", "ls-add", "ls", "--", "lsp-add", "ls", "ls-lr", "--", "lsp-set-type", "ls-lr", "router",
              "--", "lsp-set-addresses", "ls-lr", "router", "--", "lsp-set-options", "ls-lr", "router-port=lr-ls")
    with checked_daemon(env) as (_, d, _port):
        def redirects() -> int:
            return sum("tcp.dst == 179" in f for f in env.flows("ls_in_l2_lkup"))

        env.nbctl("lsp-add", "ls", "bgp", "--", "lsp-set-addresses", "bgp", "unknown", wait="sb")
        env.nbctl("set", "logical_router_port", "lr-ls", "options:routing-protocol-redirect=bgp",
                  "options:routing-protocols=BGP", wait="sb")
        assert redirects() == 2
        env.nbctl("lsp-del", "bgp", wait="sb")
        assert redirects() == 0
        env.nbctl("lsp-add", "ls", "bgp", wait="sb")
        assert redirects() == 2
        env.nbctl("remove", "logical_router_port", "lr-ls", "options", "routing-protocols", wait="sb")
        assert redirects() == 0
        assert not mismatches(d)


def test_routing_protocol_redirect_follows_the_ports_bfd_sessions(env2503, ovn_release):
    """BFD redirected: a static route with ``--bfd`` over the port makes 26.03 clone the BFD traffic
    to the target and let it go on to the router (``routing_redirect_bfd_clone``); deleting the
    route and its BFD row sends it to the target alone again."""
    env = env2503
    env.nbctl("lr-add", "lr", "--", "lrp-add", "lr", "lr-ls", "02:ac:10:01:00:01", "172.16.1.1/24",
              "--", "ls-add", "ls", "--", "lsp-add", "ls", "ls-lr", "--", "lsp-set-type", "ls-lr", "router",
              "--", "lsp-set-addresses", "ls-lr", "router", "--", "lsp-set-options", "ls-lr", "router-port=lr-ls",
              "--", "lsp-add", "ls", "bgp", "--", "lsp-set-addresses", "bgp", "unknown")
    with checked_daemon(env) as (_, d, _port):
        def cloned() -> int:
            return sum("udp.dst == 3784" in f and "clone" in f for f in env.flows("ls_in_l2_lkup"))

        env.nbctl("set", "logical_router_port", "lr-ls", "options:routing-protocol-redirect=bgp",
                  "options:routing-protocols=BGP,BFD", wait="sb")
        assert cloned() == 0
        env.nbctl("--bfd", "lr-route-add", "lr", "100.0.0.0/8", "172.16.1.2", "lr-ls", wait="sb")
        assert cloned() == (2 if ovn_release.profile.has("routing_redirect_bfd_clone") else 0)  # (LLA too)
        env.nbctl("lr-route-del", "lr", "100.0.0.0/8", "--", "--all", "destroy", "bfd", wait="sb")
        assert cloned() == 0
        assert not mismatches(d)



def test_dhcp_relay_changes_are_incremental(env2503):
    env = env2503
    _setup(env, [
        ["ls-add", "s1"], ["lr-add", "r1"],
        ["lrp-add", "r1", "r1-s1", "02:00:00:00:01:11", "10.1.0.1/24"],
        ["lsp-add", "s1", "s1-r1"], ["lsp-set-type", "s1-r1", "router"], ["lsp-set-addresses", "s1-r1", "router"],
        ["lsp-set-options", "s1-r1", "router-port=r1-s1"],
        ["lsp-add", "s1", "vm1"], ["lsp-set-addresses", "vm1", "0a:00:00:00:00:01"],
        ["set", "logical_switch", "s1", "other_config:dhcp_relay_port=s1-r1"],
    ])
    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        assert not any("DHCP_RELAY" in f for f in env.flows("lr_in_dhcp_relay_req"))
        env.json(nb_json.insert("DHCP_Relay", {"name": "relay", "servers": "172.16.0.254"}, "relay"),
                 nb_json.update("Logical_Router_Port", {"dhcp_relay": ["named-uuid", "relay"]}, name="r1-s1"))
        assert any("ip4.dst = 172.16.0.254" in f for f in env.flows("lr_in_dhcp_relay_req"))
        env.json(nb_json.update("DHCP_Relay", {"servers": "172.16.0.253"}, name="relay"))
        assert any("ip4.dst = 172.16.0.253" in f for f in env.flows("lr_in_dhcp_relay_req"))
        # A new VIF on the switch gets its request flow.
        run_batch(env, [["lsp-add", "s1", "vm2"], ["lsp-set-addresses", "vm2", "0a:00:00:00:00:02"]])
        assert sum("DHCP_RELAY_REQ" in f for f in env.flows("ls_in_l2_lkup")) == 2
        env.json(nb_json.update("Logical_Router_Port", {"dhcp_relay": ["set", []]}, name="r1-s1"))
        assert not any("DHCP_RELAY" in f for f in env.flows("lr_in_dhcp_relay_req"))
        assert not any("DHCP_RELAY_REQ" in f for f in env.flows("ls_in_l2_lkup"))
        assert _recomputes(port) == before
        assert not mismatches(d)


def test_sb_dns_rows_keyed_by_nb_uuid_incrementally(env2503):
    """(Not a router feature, but 25.03's SB DNS rows, found by the random networks.)"""
    env = env2503
    _setup(env, [["ls-add", "s1"], ["ls-add", "s2"]])
    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        nb_uuid = env.nbctl("create", "DNS", 'records={"vm1.example.org"="10.0.0.1"}').strip()
        run_batch(env, [["add", "logical_switch", "s1", "dns_records", nb_uuid]])
        run_batch(env, [["set", "DNS", nb_uuid, 'records={"vm2.example.org"="10.0.0.2"}']])
        run_batch(env, [["add", "logical_switch", "s2", "dns_records", nb_uuid]])
        rows = env.sb_select("DNS")
        assert len(rows) == 1, rows
        assert rows[0]["_uuid"] == ["uuid", nb_uuid], rows
        assert rows[0]["records"] == ["map", [["vm2.example.org", "10.0.0.2"]]], rows
        assert rows[0]["options"] == ["map", [["ovn-owned", "false"]]] and rows[0]["external_ids"] == ["map", []]
        run_batch(env, [["clear", "logical_switch", "s1", "dns_records"], ["clear", "logical_switch", "s2", "dns_records"]])
        assert not env.sb_select("DNS")
        assert _recomputes(port) == before
        assert not mismatches(d)


def test_qos_queue_changes_match_a_recompute(env2503):
    """(25.03's queue ids come from one pool: a change to a port with QoS recomputes the model;
    --check-incremental must still find nothing to repair.)"""
    env = env2503
    _setup(env, [["ls-add", "s1"], ["lsp-add", "s1", "ln1"], ["lsp-set-type", "ln1", "localnet"],
                 ["lsp-set-addresses", "ln1", "unknown"], ["lsp-set-options", "ln1", "network_name=phys1"]])
    with checked_daemon(env) as (_, d, _port):
        run_batch(env, [["lsp-add", "s1", "vm1"], ["lsp-set-addresses", "vm1", "0a:00:00:00:00:01"],
                        ["lsp-set-options", "vm1", "qos_max_rate=1000"]])
        run_batch(env, [["lsp-add", "s1", "vm2"], ["lsp-set-addresses", "vm2", "0a:00:00:00:00:02"],
                        ["lsp-set-options", "vm2", "qos_burst=1000"]])
        flows = env.flows("ls_out_apply_port_sec")
        assert any('inport == "vm1"' in f and "set_queue(1)" in f for f in flows), flows
        assert any('inport == "vm2"' in f and "set_queue(2)" in f for f in flows), flows
        run_batch(env, [["lsp-del", "vm1"]])
        run_batch(env, [["lsp-set-options", "vm2"]])
        assert not any("set_queue" in f for f in env.flows("ls_out_apply_port_sec"))
        assert not mismatches(d)


def test_ecmp_nexthop_rows_follow_routes_and_are_repaired(env2503):
    env = env2503
    _routers(env)
    _setup(env, [["set", "nb_global", ".", "options:ecmp_nexthop_monitor_enable=true"]])
    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        run_batch(env, [["--ecmp-symmetric-reply", "lr-route-add", "g1", "172.19.0.0/16", "172.16.0.19"]])
        run_batch(env, [["--ecmp-symmetric-reply", "lr-route-add", "g1", "172.19.0.0/16", "172.16.0.20"]])
        assert sorted(r["nexthop"] for r in env.sb_select("ECMP_Nexthop")) == ["172.16.0.19", "172.16.0.20"]
        # Someone else deletes a row: it is put back.
        row = env.sb_select("ECMP_Nexthop")[0]
        txn = json.dumps(["OVN_Southbound", {"op": "delete", "table": "ECMP_Nexthop",
                                             "where": [["_uuid", "==", row["_uuid"]]]}])
        subprocess.run(["ovsdb-client", "transact", env.sb.remote, txn], check=True, capture_output=True)
        env.sync()
        assert len(env.sb_select("ECMP_Nexthop")) == 2
        run_batch(env, [["lr-route-del", "g1", "172.19.0.0/16"]])
        assert not env.sb_select("ECMP_Nexthop")
        assert _recomputes(port) == before
        assert not mismatches(d)


def test_nat_rules_25_03_rejects_follow_their_changes_incrementally(env2503):
    # 25.03 (behaviour nat_rejects_invalid) drops a rule with a malformed external MAC, or a DNAT
    # rule to a network, as a whole: its ARP reply goes, its DGP gets always-redirect back.
    env = env2503
    _routers(env)
    _setup(env, [["lsp-add", "pub", "pub-d1"], ["lsp-set-type", "pub-d1", "router"],
                 ["lsp-set-addresses", "pub-d1", "router"], ["lsp-set-options", "pub-d1", "router-port=d1-pub"],
                 ["lsp-add", "int", "vm"], ["lsp-set-addresses", "vm", "0a:00:00:00:00:01 10.2.0.11"]])

    def arp_for_rule() -> bool:
        return any("arp.tpa == 172.16.0.100" in f for f in env.flows("lr_in_ip_input"))

    def always_redirect() -> str:
        return sbctl(env.sb.remote, "--bare", "--columns=options", "find", "Port_Binding",
                     "logical_port=cr-d1-pub")

    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        run_batch(env, [["--id=@n", "create", "NAT", "type=dnat_and_snat", "external_ip=172.16.0.100",
                         "logical_ip=10.2.0.11", "logical_port=vm", 'external_mac="0a:00:00:00:00:aa"',
                         "external_ids:tag=n"], ["add", "logical_router", "d1", "nat", "@n"]])
        assert arp_for_rule() and "always-redirect" not in always_redirect()
        env.nbctl("set", "NAT", _nat_uuid(env), 'external_mac="bad-mac"', wait="sb")
        assert not arp_for_rule() and "always-redirect=true" in always_redirect()
        env.nbctl("set", "NAT", _nat_uuid(env), 'external_mac="0a:00:00:00:00:aa"', wait="sb")
        assert arp_for_rule() and "always-redirect" not in always_redirect()
        env.nbctl("set", "NAT", _nat_uuid(env), "logical_ip=10.2.0.0/24", wait="sb")
        assert not arp_for_rule()
        env.nbctl("set", "NAT", _nat_uuid(env), "logical_ip=10.2.0.11", wait="sb")
        assert arp_for_rule()
        # A gateway_port that is not a DGP of the router: rejected too.
        env.nbctl("--id=@p", "get", "logical_router_port", "d1-int", "--", "set", "NAT", _nat_uuid(env),
                  "gateway_port=@p", wait="sb")
        assert not arp_for_rule()
        env.nbctl("clear", "NAT", _nat_uuid(env), "gateway_port", wait="sb")
        assert arp_for_rule()
        assert _recomputes(port) == before
        assert not mismatches(d)


def _nat_uuid(env: Env2503) -> str:
    return env.nbctl("--bare", "--columns=_uuid", "find", "NAT", "external_ids:tag=n").strip()


def test_prefix_delegation_port_changes_are_incremental(env2503):
    # 25.03: handle_dhcpv6_reply flows only on a port with options:prefix_delegation=true; the
    # delegated prefixes (ipv6_prefix) join ipv6_ra_prefixes with options:prefix=true.  (On a
    # router without a DGP: a DGP's router ports recompute under 25.03, centralized_dgp_peer.)
    env = env2503
    _routers(env)
    _setup(env, [["lsp-add", "int", "int-g1"], ["lsp-set-type", "int-g1", "router"],
                 ["lsp-set-addresses", "int-g1", "router"], ["lsp-set-options", "int-g1", "router-port=g1-int"],
                 ["set", "logical_router_port", "g1-int", 'networks="10.1.0.1/24","fd02::1/64"',
                  "ipv6_ra_configs:address_mode=slaac", "ipv6_ra_configs:send_periodic=true"]])

    def dhcpv6_replies() -> int:
        return sum("handle_dhcpv6_reply" in f for f in env.flows("lr_in_ip_input"))

    def ra_prefixes() -> str:
        return sbctl(env.sb.remote, "get", "Port_Binding", "g1-int", "options:ipv6_ra_prefixes").strip('"\n')

    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        assert dhcpv6_replies() == 0
        env.nbctl("set", "logical_router_port", "g1-int", "options:prefix_delegation=true", wait="sb")
        assert dhcpv6_replies() == 2  # fd02::1 and the link-local address
        env.nbctl("set", "logical_router_port", "g1-int", "options:prefix=true", 'ipv6_prefix="fd99::/64"',
                  wait="sb")
        assert ra_prefixes() == "fd02::/64 fd99::/64"
        env.nbctl("remove", "logical_router_port", "g1-int", "options", "prefix_delegation", "prefix", wait="sb")
        assert dhcpv6_replies() == 0 and ra_prefixes() == "fd02::/64"
        assert _recomputes(port) == before
        assert not mismatches(d)


def test_ecmp_numbering_follows_other_routers_incrementally(env2503):
    # 25.03 (ecmp_route_chain_order): a router's ECMP group / member ids count the routes of the
    # routers before it, so route and port changes of one router renumber the others' groups.
    env = env2503
    _routers(env)
    _setup(env, [["lr-add", "r3"], ["lrp-add", "r3", "r3-a", "02:00:00:00:03:01", "10.3.0.1/24"],
                 *[["--ecmp", "lr-route-add", r, "172.30.0.0/16", f"{net}.{h}"]
                   for r, net in (("g1", "10.1.0"), ("r3", "10.3.0")) for h in (11, 12, 13)]])
    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        for h in (14, 15, 16):
            env.nbctl("--ecmp", "lr-route-add", "g1", "172.30.0.0/16", f"10.1.0.{h}", wait="sb")
            env.nbctl("--ecmp", "lr-route-add", "r3", "172.31.0.0/16", f"10.3.0.{h}", wait="sb")
        for n in range(2, 5):
            env.nbctl("lrp-add", "r3", f"r3-p{n}", f"02:00:00:00:03:0{n}", f"10.3.{n}.1/24", wait="sb")
        env.nbctl("lr-route-del", "g1", "172.30.0.0/16", "10.1.0.11", wait="sb")
        assert sum("select(" in f for f in env.flows("lr_in_ip_routing")) == 3, env.flows("lr_in_ip_routing")
        assert _recomputes(port) == before
        assert not mismatches(d)
