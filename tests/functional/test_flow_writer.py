"""The lean SB flow writer (Logical_Flow, Logical_DP_Group, Load_Balancer) against real ovsdb-servers.

What is checked here is what the writer promises in ``sync/lflows.py``: it writes
the fewest rows (nothing when nothing changed), resizes datapath groups in place,
never shares a group between flows and load balancers (as the reference: each kind
is deduplicated by datapath set among its own groups), and re-reads its cache after
a reconnect.  Row changes are observed with an OVSDB
``monitor`` of our own (no initial contents), row identity and ``_version`` with
``select``, and the daemon's raw transactions with its
``ovn_northd_py_sb_commits_total{status="flow-success"}`` counter.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import signal
import socket
import threading
import time
import urllib.request
import zlib
from collections import Counter
from collections.abc import Iterator
from typing import Any, Self

import pytest
from prometheus_client.parser import text_string_to_metric_families

from ovn_northd_py.devtools.servers import OurNorthd
from ovn_northd_py.devtools.testing import free_port, wait_until

FLOW_TABLES = ("Logical_Flow", "Logical_DP_Group", "Load_Balancer")
WATCHED = (*FLOW_TABLES, "Datapath_Binding", "Port_Binding", "Multicast_Group", "IP_Multicast", "SB_Global")
FLOW_COMMITS = "ovn_northd_py_sb_commits_total"

Row = dict[str, Any]

# --------------------------------------------------------------------------- helpers


class JsonStream:
    """JSON-RPC messages over a unix socket (ovsdb-server sends them back to back)."""

    def __init__(self, remote: str) -> None:
        assert remote.startswith("unix:"), remote
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(remote[len("unix:"):])
        self._text = ""
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._dec = json.JSONDecoder()

    def send(self, msg: dict[str, Any]) -> None:
        self.sock.sendall(json.dumps(msg).encode())

    def recv(self) -> dict[str, Any] | None:
        """The next message; None when the connection is closed."""
        while True:
            text = self._text.lstrip()
            if text:
                try:
                    msg, end = self._dec.raw_decode(text)
                except json.JSONDecodeError:
                    pass
                else:
                    self._text = text[end:]
                    if msg.get("method") == "echo":
                        self.send({"id": msg["id"], "result": msg["params"], "error": None})
                        continue
                    return dict(msg)
            try:
                data = self.sock.recv(65536)
            except OSError:
                return None
            if not data:
                return None
            self._text = text + self._utf8.decode(data)

    def call(self, method: str, params: list[Any]) -> Any:
        self.send({"id": 1, "method": method, "params": params})
        while True:
            msg = self.recv()
            if msg is None:
                raise ConnectionError("connection closed")
            if msg.get("id") == 1:
                if msg.get("error"):
                    raise RuntimeError(msg["error"])
                return msg["result"]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def select(remote: str, table: str) -> dict[str, Row]:
    """All rows of an SB table with all columns, _version included, by row uuid."""
    c = JsonStream(remote)
    try:
        res = c.call("transact", ["OVN_Southbound", {"op": "select", "table": table, "where": []}])
    finally:
        c.close()
    assert "error" not in res[0], res
    return {r["_uuid"][1]: r for r in res[0]["rows"]}


def snapshot(env: Any) -> dict[str, dict[str, Row]]:
    return {t: select(env.sb.remote, t) for t in FLOW_TABLES}


def unversioned(snap: dict[str, dict[str, Row]]) -> dict[str, dict[str, Row]]:
    return {t: {u: {c: v for c, v in r.items() if c != "_version"} for u, r in rows.items()}
            for t, rows in snap.items()}


def uuid_set(v: Any) -> frozenset[str]:
    """An OVSDB JSON uuid set (a set of one may come as the bare atom)."""
    if isinstance(v, list) and v and v[0] == "uuid":
        return frozenset([v[1]])
    if isinstance(v, list) and v and v[0] == "set":
        return frozenset(u[1] for u in v[1])
    return frozenset()


def one_uuid(v: Any) -> str | None:
    s = uuid_set(v)
    assert len(s) <= 1, v
    return next(iter(s)) if s else None


def omap(v: Any) -> dict[str, str]:
    return dict(v[1]) if isinstance(v, list) and v and v[0] == "map" else {}


class SbWatch:
    """Row changes in SB tables from a monitor of our own (no initial contents), counted per table."""

    def __init__(self, remote: str, tables: tuple[str, ...] = WATCHED) -> None:
        self.stream = JsonStream(remote)
        self.events: list[tuple[str, str, str]] = []  # (table, row uuid, insert|delete|modify)
        self.last = time.monotonic()
        self._lock = threading.Lock()
        mon = {t: {"select": {"initial": False}} for t in tables}
        self.stream.call("monitor", ["OVN_Southbound", "test-watch", mon])
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (msg := self.stream.recv()) is not None:
            if msg.get("method") != "update":
                continue
            with self._lock:
                for table, rows in msg["params"][1].items():
                    for u, ch in rows.items():
                        kind = ("modify" if "new" in ch else "delete") if "old" in ch else "insert"
                        self.events.append((table, u, kind))
                self.last = time.monotonic()

    def settle(self, quiet: float = 0.6, timeout: float = 15.0) -> None:
        """Wait until nothing has changed for ``quiet`` seconds."""
        wait_until(lambda: time.monotonic() - self.last >= quiet, timeout, "SB to stop changing")

    def counts(self) -> Counter[tuple[str, str]]:
        with self._lock:
            return Counter((t, k) for t, _, k in self.events)

    def rows(self, table: str, kind: str) -> set[str]:
        with self._lock:
            return {u for t, u, k in self.events if t == table and k == kind}

    def close(self) -> None:
        self.stream.close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Northd:
    """Our daemon with its metrics endpoint."""

    def __init__(self, env: Any) -> None:
        self.port = free_port()
        self.d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote,
                           extra_args=[f"--metrics-address=127.0.0.1:{self.port}"]).start()

    @property
    def pid(self) -> int:
        assert self.d.pid is not None
        return self.d.pid

    def samples(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=2) as r:
            text = r.read().decode()
        out = {}
        for fam in text_string_to_metric_families(text):
            for s in fam.samples:
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
        return out

    def metric(self, name: str, **labels: str) -> float | None:
        return self.samples().get((name, tuple(sorted(labels.items()))))

    def flow_commits(self) -> int:
        return int(self.metric(FLOW_COMMITS, status="flow-success") or 0)

    def sb_commits(self) -> int:
        """Committed SB writes of either path: the engine's flow writer and pass-through writes
        (an idle daemon copies an nb_cfg-only NB change straight into SB_Global)."""
        passed = int(self.metric(FLOW_COMMITS, status="passthrough-success") or 0)
        return self.flow_commits() + passed

    def flow_errors(self) -> int:
        return int(self.metric(FLOW_COMMITS, status="flow-error") or 0)

    def recomputes_logged(self) -> int:
        return sum(1 for r in self.d.log_records() if r.get("event") == "recompute requested")

    def alive(self) -> bool:
        return self.d.proc is not None and self.d.proc.poll() is None

    def stop(self) -> None:
        self.d.stop()


@pytest.fixture
def northd(env: Any) -> Iterator[Northd]:
    d = Northd(env)
    try:
        wait_until(lambda: _serving(d), 15, "the metrics endpoint")
        yield d
    finally:
        d.stop()


def _serving(d: Northd) -> bool:
    try:
        d.samples()
        return True
    except OSError:
        return False


def quiesce(env: Any, d: Northd) -> None:
    """Sync, then wait until the daemon's flow commits stop (e.g. deferred datapath deletions)."""
    env.sync()
    last = (d.flow_commits(), len(select(env.sb.remote, "Datapath_Binding")))
    stable_since = time.monotonic()
    deadline = stable_since + 15
    while time.monotonic() - stable_since < 0.6:
        assert time.monotonic() < deadline, "the daemon keeps writing"
        time.sleep(0.1)
        now = (d.flow_commits(), len(select(env.sb.remote, "Datapath_Binding")))
        if now != last:
            last, stable_since = now, time.monotonic()


def add_switches(env: Any, names: list[str], ports: int = 1, wait: str | None = "sb") -> None:
    """Switches alike in everything but names: each with ``ports`` ports with addresses.

    Addresses derive from the port name, so that ports added by different calls never share one
    (a port's ARP responder flows name only its addresses: equal ones would be shared flows)."""
    cmd: list[str] = []
    for sw in names:
        cmd += ["--", "ls-add", sw]
        for j in range(ports):
            p = f"{sw}-p{j}"
            n = zlib.crc32(p.encode())
            a, b, c = n >> 16 & 255, n >> 8 & 255, n & 255
            addr = f"0a:00:{a:02x}:{b:02x}:{c:02x}:{j:02x} 10.{b}.{c}.{j + 10}"
            cmd += ["--", "lsp-add", sw, p, "--", "lsp-set-addresses", p, addr]
    env.nbctl(*cmd[1:], wait=wait)


def dp_uuid(env: Any, name: str) -> str | None:
    for u, r in select(env.sb.remote, "Datapath_Binding").items():
        if omap(r["external_ids"]).get("name") == name:
            return u
    return None


def dp_of(env: Any, name: str) -> str:
    u = dp_uuid(env, name)
    assert u is not None, f"no Datapath_Binding for {name}"
    return u


def flow_key(r: Row) -> tuple[Any, ...]:
    ext = omap(r["external_ids"])
    return (ext.get("stage-name"), r["pipeline"], r["table_id"], r["priority"], r["match"], r["actions"])


def groups_by_set(groups: dict[str, Row]) -> dict[frozenset[str], list[str]]:
    out: dict[frozenset[str], list[str]] = {}
    for u, r in groups.items():
        out.setdefault(uuid_set(r["datapaths"]), []).append(u)
    return out


def only_sb_global_changed(counts: Counter[tuple[str, str]]) -> dict[tuple[str, str], int]:
    return {k: n for k, n in counts.items() if k[0] != "SB_Global"}


# --------------------------------------------------------------------------- no-op recompute


def test_forced_recompute_on_unchanged_nb_writes_nothing(env, northd):
    add_switches(env, ["sw0", "sw1", "sw2"], ports=2)
    env.nbctl("lb-add", "lb0", "10.0.0.100:80", "10.0.0.10:8080", "--", "ls-lb-add", "sw0", "lb0", "--",
              "ls-lb-add", "sw1", "lb0", "--", "lr-add", "lr0", "--",
              "lrp-add", "lr0", "lr0-sw0", "00:00:00:00:ff:01", "10.0.0.1/24", "--",
              "lsp-add", "sw0", "sw0-lr0", "--", "lsp-set-type", "sw0-lr0", "router", "--",
              "lsp-set-options", "sw0-lr0", "router-port=lr0-sw0", wait="sb")
    quiesce(env, northd)
    before = snapshot(env)
    assert before["Logical_Flow"] and before["Logical_DP_Group"] and before["Load_Balancer"]
    commits, recomputes = northd.sb_commits(), northd.recomputes_logged()

    with SbWatch(env.sb.remote) as w:
        os.kill(northd.pid, signal.SIGUSR1)
        wait_until(lambda: northd.recomputes_logged() > recomputes, 10, "the recompute to be logged")
        env.sync()
        w.settle()
        changed = w.counts()

    # The only write is the nb_cfg bump of `sync`, in one raw transaction of its own.
    assert only_sb_global_changed(changed) == {}, changed
    assert changed[("SB_Global", "modify")] == 1, changed
    assert northd.sb_commits() == commits + 1
    assert snapshot(env) == before  # same uuids, same _version: no row rewritten
    assert northd.flow_errors() == 0
    # The daemon's own view matches SB.
    assert northd.metric("ovn_northd_py_logical_flows") == len(before["Logical_Flow"])
    assert northd.metric("ovn_northd_py_datapath_groups") == len(before["Logical_DP_Group"])


def test_repeated_sync_without_changes_writes_only_nb_cfg(env, northd):
    add_switches(env, ["sw0", "sw1"], ports=2)
    quiesce(env, northd)
    before, commits = snapshot(env), northd.sb_commits()
    with SbWatch(env.sb.remote) as w:
        for _ in range(3):
            env.sync()
        w.settle()
        changed = w.counts()
    assert only_sb_global_changed(changed) == {}, changed
    assert northd.sb_commits() == commits + 3
    assert snapshot(env) == before


# --------------------------------------------------------------------------- datapath groups


def test_adding_a_switch_resizes_groups_in_place(env, northd):
    add_switches(env, ["sw0", "sw1"], ports=2)
    quiesce(env, northd)
    d0, d1 = dp_of(env, "sw0"), dp_of(env, "sw1")
    before = snapshot(env)
    by_set = groups_by_set(before["Logical_DP_Group"])
    assert list(by_set) == [frozenset([d0, d1])], by_set  # the flows common to both switches
    (g_all,) = by_set[frozenset([d0, d1])]
    on_group = {u for u, r in before["Logical_Flow"].items() if one_uuid(r["logical_dp_group"]) == g_all}
    assert len(on_group) > 10

    with SbWatch(env.sb.remote) as w:
        add_switches(env, ["sw2"], ports=2)
        w.settle()
        changed = w.counts()
    d2 = dp_of(env, "sw2")
    after = snapshot(env)

    # The group row grew in place; no new group, and no flow had to be re-pointed or rewritten.
    assert set(after["Logical_DP_Group"]) == {g_all}
    assert uuid_set(after["Logical_DP_Group"][g_all]["datapaths"]) == {d0, d1, d2}
    assert changed[("Logical_DP_Group", "modify")] == 1, changed
    assert changed[("Logical_DP_Group", "insert")] == 0, changed
    assert changed[("Logical_Flow", "modify")] == 0, changed
    assert changed[("Logical_Flow", "delete")] == 0, changed
    for u, r in before["Logical_Flow"].items():
        assert after["Logical_Flow"].get(u) == r, f"flow {u} {flow_key(r)} was rewritten"
    # Only sw2's own (per-port) flows are new, all on sw2 alone.
    new = {u: r for u, r in after["Logical_Flow"].items() if u not in before["Logical_Flow"]}
    assert new and changed[("Logical_Flow", "insert")] == len(new)
    assert {one_uuid(r["logical_datapath"]) for r in new.values()} == {d2}
    assert all(r["logical_dp_group"] == ["set", []] for r in new.values())


def test_deleting_a_switch_removes_its_flows_and_then_its_datapath(env, northd):
    add_switches(env, ["sw0", "sw1", "sw2"], ports=2)
    quiesce(env, northd)
    d0, d1, d2 = dp_of(env, "sw0"), dp_of(env, "sw1"), dp_of(env, "sw2")
    before = snapshot(env)
    (g_all,) = groups_by_set(before["Logical_DP_Group"])[frozenset([d0, d1, d2])]
    own = {u for u, r in before["Logical_Flow"].items() if one_uuid(r["logical_datapath"]) == d2}
    assert own

    env.nbctl("ls-del", "sw2", wait="sb")
    flows = select(env.sb.remote, "Logical_Flow")
    assert not own & set(flows), "sw2's flows are still there after --wait=sb"
    assert not any(one_uuid(r["logical_datapath"]) == d2 for r in flows.values())
    groups = select(env.sb.remote, "Logical_DP_Group")
    assert not any(d2 in uuid_set(r["datapaths"]) for r in groups.values())
    # The "all switches" group shrank in place and its flows kept their rows.
    assert uuid_set(groups[g_all]["datapaths"]) == {d0, d1}
    kept = {u for u, r in before["Logical_Flow"].items() if one_uuid(r["logical_dp_group"]) == g_all}
    assert kept <= set(flows)
    # The datapath goes in a later transaction, once nothing references it.
    wait_until(lambda: dp_uuid(env, "sw2") is None, 10, "sw2's Datapath_Binding to be deleted")
    ports = {r["logical_port"] for r in select(env.sb.remote, "Port_Binding").values()}
    assert not {"sw2-p0", "sw2-p1"} & ports
    quiesce(env, northd)
    assert dp_uuid(env, "sw2") is None
    assert {dp_uuid(env, "sw0"), dp_uuid(env, "sw1")} == {d0, d1}
    assert northd.flow_errors() == 0
    assert northd.alive()


def test_deleted_switch_datapath_is_gone_when_wait_sb_returns(env, northd):
    """ovn-northd deletes the datapath in the same transaction; `--wait=sb` callers rely on it."""
    add_switches(env, ["sw0", "sw1"], ports=1)
    quiesce(env, northd)
    env.nbctl("ls-del", "sw1", wait="sb")
    assert dp_uuid(env, "sw1") is None


# --------------------------------------------------------------------------- load balancers


def test_load_balancer_on_two_switches_gets_a_group_not_shared_with_flows(env, northd):
    """As the reference does: a load balancer's group is never a flow's, even for the same set."""
    add_switches(env, ["sw0", "sw1", "sw2"], ports=1)
    env.nbctl("lb-add", "lb0", "10.0.0.100:80", "10.0.0.10:8080,10.0.0.11:8080", "--",
              "ls-lb-add", "sw0", "lb0", "--", "ls-lb-add", "sw1", "lb0", wait="sb")
    quiesce(env, northd)
    d0, d1 = dp_of(env, "sw0"), dp_of(env, "sw1")
    snap = snapshot(env)
    (lb,) = snap["Load_Balancer"].values()
    assert lb["name"] == "lb0"
    assert uuid_set(lb["datapaths"]) == frozenset(), "the datapaths column must stay empty"
    g = one_uuid(lb["datapath_group"])
    assert g is not None, "no datapath_group"
    assert uuid_set(snap["Logical_DP_Group"][g]["datapaths"]) == {d0, d1}
    by_set = groups_by_set(snap["Logical_DP_Group"])
    assert len(by_set[frozenset([d0, d1])]) == 2, by_set  # the load balancer's, and the flows'
    assert all(len(us) <= 2 for us in by_set.values()), by_set
    assert not [u for u, r in snap["Logical_Flow"].items() if one_uuid(r["logical_dp_group"]) == g]
    flow_groups = {one_uuid(r["logical_dp_group"]) for r in snap["Logical_Flow"].values()} - {None}
    assert set(by_set[frozenset([d0, d1])]) == {g} | (flow_groups & set(by_set[frozenset([d0, d1])]))


def test_load_balancer_alone_on_its_set_gets_its_own_group(env, northd):
    add_switches(env, ["sw0", "sw1"], ports=1)
    env.nbctl("lb-add", "lb0", "10.0.0.100:80", "10.0.0.10:8080", "--", "ls-lb-add", "sw0", "lb0",
              "--", "ls-lb-add", "sw1", "lb0", "--", "lb-add", "lb1", "10.0.0.101:80", "10.0.0.11:8080", "--",
              "ls-lb-add", "sw1", "lb1", wait="sb")
    quiesce(env, northd)
    d0, d1 = dp_of(env, "sw0"), dp_of(env, "sw1")
    snap = snapshot(env)
    lbs = {r["name"]: r for r in snap["Load_Balancer"].values()}
    g0, g1 = one_uuid(lbs["lb0"]["datapath_group"]), one_uuid(lbs["lb1"]["datapath_group"])
    assert g0 and g1 and g0 != g1
    assert uuid_set(snap["Logical_DP_Group"][g1]["datapaths"]) == {d1}
    assert uuid_set(snap["Logical_DP_Group"][g0]["datapaths"]) == {d0, d1}
    # Removing lb0 from sw0: it now wants {sw1}, which lb1's group already is: re-pointed, not a new row.
    env.nbctl("ls-lb-del", "sw0", "lb0", wait="sb")
    quiesce(env, northd)
    after = snapshot(env)
    lbs = {r["name"]: r for r in after["Load_Balancer"].values()}
    assert one_uuid(lbs["lb0"]["datapath_group"]) == one_uuid(lbs["lb1"]["datapath_group"]) == g1
    assert {u for u, r in after["Load_Balancer"].items()} == set(snap["Load_Balancer"])


# --------------------------------------------------------------------------- reconnects and outside writers


def test_sb_restart_rereads_flows_and_writes_nothing(env, northd):
    add_switches(env, ["sw0", "sw1", "sw2"], ports=2)
    env.nbctl("lb-add", "lb0", "10.0.0.100:80", "10.0.0.10:8080", "--", "ls-lb-add", "sw0", "lb0", "--",
              "ls-lb-add", "sw1", "lb0", wait="sb")
    quiesce(env, northd)
    before = unversioned(snapshot(env))
    commits = northd.sb_commits()
    env.sb.stop()
    env.sb.start()  # same database file (ovsdb-server gives every row a new _version when it reads it)
    wait_until(lambda: northd.metric("ovn_northd_py_db_connected", db="sb") == 1, 15, "the SB reconnection")
    with SbWatch(env.sb.remote) as w:
        env.sync(timeout=20)
        w.settle()
        changed = w.counts()
    assert only_sb_global_changed(changed) == {}, changed
    assert unversioned(snapshot(env)) == before
    # Since before the restart: one raw transaction (the nb_cfg of `sync`); nothing re-written after
    # re-reading.
    assert northd.sb_commits() == commits + 1
    assert northd.flow_errors() == 0
    # And the writer still works incrementally from the re-read cache.
    add_switches(env, ["sw3"], ports=1)
    after = snapshot(env)
    assert set(before["Logical_DP_Group"]) <= set(after["Logical_DP_Group"])
    assert set(before["Logical_Flow"]) <= set(after["Logical_Flow"])
    assert northd.alive()


def test_flow_deleted_behind_our_back_is_restored_by_forced_recompute(env, northd):
    add_switches(env, ["sw0", "sw1"], ports=2)
    quiesce(env, northd)
    flows = select(env.sb.remote, "Logical_Flow")
    victim, row = next((u, r) for u, r in flows.items() if one_uuid(r["logical_dp_group"]) is None)
    env.sbctl("destroy", "Logical_Flow", victim)
    assert victim not in select(env.sb.remote, "Logical_Flow")

    recomputes = northd.recomputes_logged()
    os.kill(northd.pid, signal.SIGUSR1)
    wait_until(lambda: northd.recomputes_logged() > recomputes, 10, "the recompute to be logged")
    env.sync()
    keys = {flow_key(r): u for u, r in select(env.sb.remote, "Logical_Flow").items()}
    assert flow_key(row) in keys, "a flow deleted by someone else is not restored by a forced recompute"
    assert len(keys) == len(flows)


def test_flow_deleted_behind_our_back_is_restored_after_sb_reconnect(env, northd):
    add_switches(env, ["sw0", "sw1"], ports=2)
    quiesce(env, northd)
    flows = select(env.sb.remote, "Logical_Flow")
    victim, row = next((u, r) for u, r in flows.items() if one_uuid(r["logical_dp_group"]) is None)
    env.sb.stop()
    env.sb.start()
    env.sbctl("destroy", "Logical_Flow", victim)
    env.sync(timeout=20)
    keys = {flow_key(r) for r in select(env.sb.remote, "Logical_Flow").values()}
    assert flow_key(row) in keys
    assert len(keys) == len(flows)
