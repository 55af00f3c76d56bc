"""Dynamic routing handled incrementally (25.03 and the 26.03 draft, servers with the release's
schemas): SB Learned_Route rows (written here as ovn-controller would) become and stop being
routing flows without a recompute of the northd or flow nodes; SB Advertised_Route follows NB
changes (ports, static routes, NAT, router-port options); a deleted router port takes its learned
routes with it.  Each run is checked by the daemon's ``--check-incremental=1`` against a full
recompute."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ovn_northd_py.devtools.servers import OvsdbServer, nbctl, sbctl
from ovn_northd_py.devtools.testing import checked_daemon, mismatches, node_runs, run_batch
from ovn_northd_py.release import RELEASES


class Env:
    def __init__(self, workdir: Path, nb: OvsdbServer, sb: OvsdbServer) -> None:
        self.workdir, self.nb, self.sb = workdir, nb, sb

    def nbctl(self, *args: str, wait: str | None = None, timeout: int = 30) -> str:
        return nbctl(self.nb.remote, *args, wait=wait, timeout=timeout)

    def sync(self, timeout: int = 30) -> None:
        self.nbctl("sync", wait="sb", timeout=timeout)

    def sb_transact(self, *ops: dict[str, Any]) -> list[Any]:
        out = subprocess.run(["ovsdb-client", "transact", self.sb.remote, json.dumps(["OVN_Southbound", *ops])],
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)

    def sb_select(self, table: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.sb_transact({"op": "select", "table": table, "where": []})[0]["rows"]
        return rows

    def uuid_of(self, table: str, column: str, value: str) -> str:
        out = sbctl(self.sb.remote, "--bare", "--columns=_uuid", "find", table, f"{column}={value}").strip()
        assert out, f"no SB {table} row with {column}={value}"
        return out

    def flows(self, stage: str) -> list[str]:
        out = sbctl(self.sb.remote, "--bare", "--columns=priority,match,actions", "find", "Logical_Flow",
                    f"external_ids:stage-name={stage}")
        return [" ".join(block.split("\n")) for block in out.strip().split("\n\n") if block]

    def advertised(self) -> set[tuple[str, str, str]]:
        """(port, prefix, tracked port) of the Advertised_Route rows."""
        names = {r["_uuid"][1]: r["logical_port"] for r in self.sb_select("Port_Binding")}
        out = set()
        for r in self.sb_select("Advertised_Route"):
            tracked = r["tracked_port"]
            t = names[tracked[1]] if tracked[0] == "uuid" else ""
            out.add((names[r["logical_port"][1]], r["ip_prefix"], t))
        return out


@pytest.fixture(params=["25.03", "26.03"])
def env(request, tmp_path: Path) -> Iterator[Env]:
    rel = RELEASES[request.param]
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    try:
        yield Env(tmp_path, nb, sb)
    finally:
        sb.stop()
        nb.stop()


def _router(env: Env) -> None:
    env.nbctl("lr-add", "lr0", "--", "set", "logical_router", "lr0", "options:dynamic-routing=true",
              'options:dynamic-routing-redistribute="connected,static"',
              "--", "lrp-add", "lr0", "lr0-sw0", "00:00:00:00:ff:01", "10.0.0.1/24",
              "--", "lrp-add", "lr0", "lr0-sw1", "00:00:00:00:ff:02", "10.0.1.1/24", "2001:db8::1/64")


def _recomputes(port: int) -> dict[str, float]:
    return {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}


def _eventually(check: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _learn(env: Env, port: str, prefix: str, nexthop: str) -> None:
    env.sb_transact({"op": "insert", "table": "Learned_Route", "row": {
        "datapath": ["uuid", env.uuid_of("Datapath_Binding", "external_ids:name", "lr0")],
        "logical_port": ["uuid", env.uuid_of("Port_Binding", "logical_port", port)],
        "ip_prefix": prefix, "nexthop": nexthop}})


def _routing_has(env: Env, text: str) -> bool:
    return any(text in f for f in env.flows("lr_in_ip_routing"))


def test_learned_routes_are_routing_flows_without_recompute(env):
    _router(env)
    with checked_daemon(env) as (_, d, port):
        before = _recomputes(port)
        _learn(env, "lr0-sw0", "172.16.0.0/24", "10.0.0.11")
        _eventually(lambda: _routing_has(env, "ip4.dst == 172.16.0.0/24"), "the learned route's flow")
        assert any(f.startswith("194 ") and "reg0 = 10.0.0.11; reg5 = 10.0.0.1;" in f
                   for f in env.flows("lr_in_ip_routing"))
        # A second next hop of the same prefix on the other port: an ECMP group of two.
        _learn(env, "lr0-sw1", "172.16.0.0/24", "10.0.1.11")
        _eventually(lambda: _routing_has(env, "select(1, 2)"), "the learned ECMP group")
        assert len([f for f in env.flows("lr_in_ip_routing_ecmp") if f.startswith("100 ")]) == 2
        env.sb_transact({"op": "delete", "table": "Learned_Route", "where": []})
        _eventually(lambda: not _routing_has(env, "172.16.0.0/24"), "the learned routes' flows to go")
        env.sync()
        assert _recomputes(port) == before
        assert not mismatches(d)


def test_advertised_routes_follow_nb_changes(env):
    _router(env)
    with checked_daemon(env) as (_, d, _port):
        assert env.advertised() == {("lr0-sw0", "10.0.0.0/24", ""), ("lr0-sw1", "10.0.1.0/24", ""),
                                    ("lr0-sw1", "2001:db8::/64", "")}
        env.nbctl("lr-route-add", "lr0", "192.168.0.0/24", "10.0.0.10", wait="sb")
        assert ("lr0-sw0", "192.168.0.0/24", "") in env.advertised()
        env.nbctl("set", "logical_router_port", "lr0-sw1", 'options:dynamic-routing-redistribute="nat"',
                  wait="sb")
        assert not any(p == "lr0-sw1" for p, _, _ in env.advertised())
        env.nbctl("lr-nat-add", "lr0", "dnat_and_snat", "172.16.1.10", "10.0.1.10", wait="sb")
        assert ("lr0-sw1", "172.16.1.10", "") in env.advertised()
        run_batch(env, [["lrp-add", "lr0", "lr0-sw2", "00:00:00:00:ff:03", "10.0.2.1/24"]])
        assert ("lr0-sw2", "10.0.2.0/24", "") in env.advertised()
        env.nbctl("lr-route-del", "lr0", "192.168.0.0/24", wait="sb")
        assert ("lr0-sw0", "192.168.0.0/24", "") not in env.advertised()
        assert not mismatches(d)


def test_a_deleted_router_port_takes_its_learned_routes(env):
    _router(env)
    with checked_daemon(env) as (_, d, _port):
        _learn(env, "lr0-sw0", "172.16.0.0/24", "10.0.0.11")
        _learn(env, "lr0-sw1", "172.16.1.0/24", "10.0.1.11")
        _eventually(lambda: _routing_has(env, "172.16.1.0/24"), "the learned routes' flows")
        env.nbctl("lrp-del", "lr0-sw1", wait="sb")
        rows = env.sb_select("Learned_Route")
        assert [r["ip_prefix"] for r in rows] == ["172.16.0.0/24"]
        assert not _routing_has(env, "172.16.1.0/24")
        assert not mismatches(d)


def test_a_deleted_router_takes_its_advertised_routes_and_the_daemon_goes_on(env):
    # (The routes name the router's datapath and ports, which the same transaction deletes.  The
    # case of OVN's ovn-northd.at "dynamic-routing - LB sync to sb", where lr-del never returned
    # -- a route read while its port was already deleted, sync.rows.dangling -- is checked by that
    # test in tests/conformance.)
    _router(env)
    env.nbctl("lr-add", "lr1", "--", "set", "logical_router", "lr1", "options:dynamic-routing=true",
              'options:dynamic-routing-redistribute="connected"',
              "--", "lrp-add", "lr1", "lr1-sw0", "00:00:00:00:fe:01", "10.9.0.1/24",
              # (a switch port left naming a router port that goes: the deletion is a recompute)
              "--", "ls-add", "ls0", "--", "lsp-add", "ls0", "ls0-lr0", "--", "lsp-set-type", "ls0-lr0", "router",
              "--", "lsp-set-options", "ls0-lr0", "router-port=lr0-sw0", "--", "lsp-set-addresses", "ls0-lr0", "router")
    with checked_daemon(env) as (_, d, _port):
        assert ("lr0-sw0", "10.0.0.0/24", "") in env.advertised()
        env.nbctl("lr-del", "lr0", wait="sb", timeout=15)
        assert env.advertised() == {("lr1-sw0", "10.9.0.0/24", "")}
        env.nbctl("lrp-add", "lr1", "lr1-sw1", "00:00:00:00:fe:02", "10.9.1.1/24", wait="sb", timeout=15)
        assert ("lr1-sw1", "10.9.1.0/24", "") in env.advertised()
        assert not mismatches(d)


def test_deleted_advertised_routes_are_put_back(env):
    _router(env)
    with checked_daemon(env) as (_, d, _port):
        want = env.advertised()
        assert len(want) == 3
        env.sb_transact({"op": "delete", "table": "Advertised_Route", "where": []})
        _eventually(lambda: env.advertised() == want, "the Advertised_Route rows to come back")
        assert not mismatches(d)


@pytest.fixture
def env2603(tmp_path: Path) -> Iterator[Env]:
    rel = RELEASES["26.03"]
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    try:
        yield Env(tmp_path, nb, sb)
    finally:
        sb.stop()
        nb.stop()


def _mac_bindings(env: Env) -> set[tuple[str, str, str]]:
    names = {r["_uuid"][1]: r["logical_port"] for r in env.sb_select("Port_Binding")}
    return {(names[r["logical_port"][1]], r["ip"], r["mac"]) for r in env.sb_select("Advertised_MAC_Binding")}


def test_evpn_mac_bindings_follow_switch_ports(env2603):
    """26.03: an EVPN switch redistributing ``ip`` announces its VIFs' bindings; new, changed and
    deleted ports are handled without a recompute."""
    env = env2603
    env.nbctl("ls-add", "sw0", "--", "set", "logical_switch", "sw0", "other_config:dynamic-routing-vni=100",
              'other_config:dynamic-routing-redistribute="ip"',
              "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:11 10.0.0.11")
    with checked_daemon(env) as (_, d, port):
        assert _mac_bindings(env) == {("vm1", "10.0.0.11", "00:00:00:00:00:11")}
        before = _recomputes(port)
        run_batch(env, [["lsp-add", "sw0", "vm2"], ["lsp-set-addresses", "vm2", "00:00:00:00:00:22 10.0.0.22"]])
        assert ("vm2", "10.0.0.22", "00:00:00:00:00:22") in _mac_bindings(env)
        env.nbctl("lsp-set-addresses", "vm1", "00:00:00:00:00:12 10.0.0.12", wait="sb")
        env.nbctl("lsp-del", "vm2", wait="sb")
        assert _mac_bindings(env) == {("vm1", "10.0.0.12", "00:00:00:00:00:12")}
        assert any("from_evpn_vtep" in f for f in env.flows("ls_in_pre_lb"))
        assert not any("evpn" in f for f in env.flows("ls_out_pre_acl"))
        env.nbctl("acl-add", "sw0", "from-lport", "100", "ip", "allow-related", wait="sb")
        assert any("to_evpn_vtep next;" in f for f in env.flows("ls_out_pre_acl"))
        assert any("to_evpn_vtep next;" in f for f in env.flows("ls_out_pre_lb"))
        assert _recomputes(port)["lflow"] == before["lflow"]
        assert not mismatches(d)


def test_a_learned_next_hop_reached_by_a_new_network(env):
    """A learned route whose next hop none of its port's networks holds (25.03: no flow; 26.03: from
    the port's first address) takes the new network's address once the port gets one."""
    _router(env)
    with checked_daemon(env) as (_, d, _port):
        _learn(env, "lr0-sw1", "172.16.9.0/24", "10.0.5.9")
        env.sync()
        env.nbctl("set", "logical_router_port", "lr0-sw1", 'networks="10.0.1.1/24" "10.0.5.1/24" "2001:db8::1/64"',
                  wait="sb")
        _eventually(lambda: _routing_has(env, "reg0 = 10.0.5.9; reg5 = 10.0.5.1;"), "the learned route's flow")
        assert not mismatches(d)
