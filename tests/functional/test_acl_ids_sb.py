"""SB ACL_ID (25.03; NB 7.11 / SB 20.41 servers, the 25.03 draft profile): across a restart of the
daemon ids stay with their ACLs and the id of an ACL deleted meanwhile goes to the next new one;
rows others insert or delete are put back; a hot standby takes the ids the active allocated."""

from __future__ import annotations

import time

import pytest

from ovn_northd_py.devtools.nb_json import NbOps
from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import free_port, metric, ovsdb_select, ovsdb_transact, wait_until

# 26.03 runs wherever 25.03 does (the same features, its own profile).
pytestmark = pytest.mark.releases("25.03", "26.03")


def _persist_acl(ops: NbOps, tag: str, priority: int) -> list[str]:
    return ops.insert("ACL", {"direction": "to-lport", "priority": priority, "match": "tcp", "action": "allow-related",
                              "options": ops.map({"persist-established": "true"}),
                              "external_ids": ops.map({"tag": tag})})


def _ids(nb: OvsdbServer, sb: OvsdbServer) -> dict[str, int]:
    """NB ACL tag -> its SB ACL_ID id."""
    tags = {r["_uuid"][1]: dict(r["external_ids"][1])["tag"] for r in ovsdb_select(nb.remote, "OVN_Northbound", "ACL")}
    return {tags.get(r["_uuid"][1], "?"): r["id"] for r in ovsdb_select(sb.remote, "OVN_Southbound", "ACL_ID")}


def test_acl_ids_survive_a_restart_and_a_freed_id_is_reused(tmp_path, ovn_release) -> None:
    rel = ovn_release
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    d = None
    try:
        nbctl(nb.remote, "ls-add", "sw0")
        ops = NbOps()
        ops.add_to("Logical_Switch", "sw0", "acls", *(_persist_acl(ops, t, p) for t, p in (("a", 1), ("b", 2), ("c", 3))))
        ops.transact(nb.remote)
        d = OurNorthd(tmp_path, nb.remote, sb.remote).start()
        nbctl(nb.remote, "sync", wait="sb")
        first = _ids(nb, sb)
        assert sorted(first.values()) == [1, 2, 3], first
        d.stop()
        d = None
        # While the daemon is down: b goes, d comes.
        b = nbctl(nb.remote, "--bare", "--columns=_uuid", "find", "ACL", "external_ids:tag=b").strip()
        nbctl(nb.remote, "remove", "Logical_Switch", "sw0", "acls", b)
        ops = NbOps()
        ops.add_to("Logical_Switch", "sw0", "acls", _persist_acl(ops, "d", 4))
        ops.transact(nb.remote)
        d = OurNorthd(tmp_path, nb.remote, sb.remote, name="again").start()
        nbctl(nb.remote, "sync", wait="sb")
        assert _ids(nb, sb) == {"a": first["a"], "c": first["c"], "d": first["b"]}
    finally:
        if d is not None:
            d.stop()
        sb.stop()
        nb.stop()


def test_acl_id_rows_others_insert_or_delete_are_put_back(tmp_path, ovn_release) -> None:
    """As the reference: a foreign ACL_ID row goes, a deleted one comes back (the ACL still asks for
    an id: the lowest free one)."""
    rel = ovn_release
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    d = None
    try:
        nbctl(nb.remote, "ls-add", "sw0")
        ops = NbOps()
        ops.add_to("Logical_Switch", "sw0", "acls", *(_persist_acl(ops, t, p) for t, p in (("a", 1), ("b", 2))))
        ops.transact(nb.remote)
        d = OurNorthd(tmp_path, nb.remote, sb.remote).start()
        nbctl(nb.remote, "sync", wait="sb")
        first = _ids(nb, sb)
        ovsdb_transact(sb.remote, "OVN_Southbound", {"op": "insert", "table": "ACL_ID", "row": {"id": 77}},
                     {"op": "delete", "table": "ACL_ID", "where": [["id", "==", first["a"]]]})
        deadline = time.monotonic() + 10
        while _ids(nb, sb) != first and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _ids(nb, sb) == first
    finally:
        if d is not None:
            d.stop()
        sb.stop()
        nb.stop()


def _acl_id_flows(sb: OvsdbServer) -> set[str]:
    """The ``reg2[16..31] = N`` ids the logical flows load."""
    return {a.split("reg2[16..31] = ")[1].split(";")[0]
            for r in ovsdb_select(sb.remote, "OVN_Southbound", "Logical_Flow", ["actions"])
            if "reg2[16..31] = " in (a := r["actions"])}


def test_hot_standby_takes_the_acl_ids_the_active_allocated(tmp_path, ovn_release) -> None:
    """A standby reads the ACL_ID rows the active writes (it allocates none): after taking over,
    its flows load the same ids."""
    rel = ovn_release
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    started: list[OurNorthd] = []
    try:
        nbctl(nb.remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "p1")
        bport = free_port()
        a = OurNorthd(tmp_path, nb.remote, sb.remote, name="a").start()
        started.append(a)
        nbctl(nb.remote, "sync", wait="sb")
        b = OurNorthd(tmp_path, nb.remote, sb.remote, name="b", extra_args=[f"--metrics-address=127.0.0.1:{bport}"]).start()
        started.append(b)
        wait_until(lambda: _standby_runs(bport) >= 1, 20, "b to compute as a standby")
        ops = NbOps()
        ops.add_to("Logical_Switch", "sw0", "acls", *(_persist_acl(ops, t, p) for t, p in (("a", 1), ("b", 2))))
        ops.transact(nb.remote)
        nbctl(nb.remote, "sync", wait="sb")
        ids = set(map(str, _ids(nb, sb).values()))
        assert ids == {"1", "2"} and _acl_id_flows(sb) == ids
        time.sleep(1.0)  # (b follows NB and SB as they change)
        a.stop()
        wait_until(lambda: metric(bport, "ovn_northd_py_sb_lock_held") == 1, 30, "b to take the lock")
        nbctl(nb.remote, "lsp-add", "sw0", "p2", wait="sb")
        assert set(map(str, _ids(nb, sb).values())) == ids
        assert _acl_id_flows(sb) == ids
    finally:
        for d in reversed(started):
            d.stop()
        sb.stop()
        nb.stop()


def _standby_runs(port: int) -> float:
    try:
        return metric(port, "ovn_northd_py_engine_runs_total", 'kind="standby-')
    except OSError:
        return 0.0
