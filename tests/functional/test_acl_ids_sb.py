"""SB ACL_ID (25.03; NB 7.11 / SB 20.41 servers, the 25.03 draft profile): across a restart of the
daemon ids stay with their ACLs and the id of an ACL deleted meanwhile goes to the next new one;
rows others insert or delete are put back."""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

from ovn_northd_py.devtools.nb_json import NbOps
from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.release import RELEASES


def _persist_acl(ops: NbOps, tag: str, priority: int) -> list[str]:
    return ops.insert("ACL", {"direction": "to-lport", "priority": priority, "match": "tcp", "action": "allow-related",
                              "options": ops.map({"persist-established": "true"}),
                              "external_ids": ops.map({"tag": tag})})


def _ids(nb: OvsdbServer, sb: OvsdbServer) -> dict[str, int]:
    """NB ACL tag -> its SB ACL_ID id."""
    def select(remote: str, db: str, table: str) -> list[dict[str, Any]]:
        out = subprocess.run(["ovsdb-client", "transact", remote,
                              json.dumps([db, {"op": "select", "table": table, "where": []}])],
                             check=True, capture_output=True, text=True).stdout
        rows: list[dict[str, Any]] = json.loads(out)[0]["rows"]
        return rows

    tags = {r["_uuid"][1]: dict(r["external_ids"][1])["tag"] for r in select(nb.remote, "OVN_Northbound", "ACL")}
    return {tags.get(r["_uuid"][1], "?"): r["id"] for r in select(sb.remote, "OVN_Southbound", "ACL_ID")}


def test_acl_ids_survive_a_restart_and_a_freed_id_is_reused(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")
    rel = RELEASES["25.03"]
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


def _sb_transact(sb: OvsdbServer, *ops: dict[str, Any]) -> None:
    subprocess.run(["ovsdb-client", "transact", sb.remote, json.dumps(["OVN_Southbound", *ops])],
                   check=True, capture_output=True, text=True)


def test_acl_id_rows_others_insert_or_delete_are_put_back(tmp_path, monkeypatch) -> None:
    """As the reference: a foreign ACL_ID row goes, a deleted one comes back (the ACL still asks for
    an id: the lowest free one)."""
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")
    rel = RELEASES["25.03"]
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
        _sb_transact(sb, {"op": "insert", "table": "ACL_ID", "row": {"id": 77}},
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
