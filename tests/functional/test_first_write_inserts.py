"""The first write into an empty SB goes out under a monitor without inserts (the server then
does not notify us of each of our tens of thousands of flows); rows others insert meanwhile are
still found, by a read of the raw tables' uuids once the write is done, and deleted."""

from __future__ import annotations

import time
from typing import Any

from ovn_northd_py.devtools.servers import OurNorthd
from ovn_northd_py.devtools.testing import wait_until
from ovn_northd_py.ovsdb.connection import DbConnection
from ovn_northd_py.ovsdb.raw import RawSb
from ovn_northd_py.sync.flow_writer import FlowWriter


def _run_until(conn: DbConnection, done: Any) -> Any:
    deadline = time.monotonic() + 30
    while True:
        conn.run()
        got = done()
        if got:
            return got
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _foreign_flow(env: Any) -> str:
    env.sbctl("create", "Datapath_Binding", "tunnel_key=77")
    dp = env.sb_rows("Datapath_Binding")[0]["_uuid"][1]
    return env.sbctl("create", "Logical_Flow", f"logical_datapath={dp}", "pipeline=ingress", "table_id=0",
                     "priority=65535", 'match="1"', 'actions="drop;"').strip()


def test_a_row_inserted_while_inserts_are_not_watched_is_found_after(env: Any) -> None:
    conn = DbConnection("sb", env.sb.remote, env.release.sb_schema, {"SB_Global": None})
    try:
        _run_until(conn, lambda: conn.synced)
        raw = RawSb(conn.idl, "OVN_Southbound", None)
        writer = FlowWriter()
        writer.cache.loaded = True
        writer.quiet_inserts(raw)
        assert writer.inserts_unwatched
        flow = _foreign_flow(env)
        conn.run()
        assert raw.tap.updates == []  # (not notified: no inserts watched)
        req = writer.watch_inserts_again(raw)
        assert req is not None and not writer.inserts_unwatched
        got: list[Any] = []
        _run_until(conn, lambda: (r := raw.poll(req))[0] and not got.append(r[1]))
        assert writer.unknown_rows(got[0]) == {"Logical_Flow": {flow: {"new": {}}}}
        # Watched again: the next foreign insert is notified.
        flow2 = env.sbctl("create", "Logical_Flow", "pipeline=egress", "table_id=0", "priority=1",
                          'match="1"', 'actions="drop;"').strip()
        _run_until(conn, lambda: any(flow2 in u.get("Logical_Flow", {}) for u in raw.tap.updates))
    finally:
        conn.close()


def test_a_foreign_flow_inserted_at_the_first_write_is_deleted(env: Any, started: list[OurNorthd]) -> None:
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p0", "--", "lsp-set-addresses", "p0", "00:00:00:00:00:01 10.0.0.10")
    started.append(OurNorthd(env.workdir, env.nb.remote, env.sb.remote).start())
    # As soon as the daemon's datapath is there (its first write under way), someone inserts a flow.
    wait_until(lambda: any(r["external_ids"] != ["map", []] for r in env.sb_rows("Datapath_Binding")), 30,
               "the first write")
    dp = next(r for r in env.sb_rows("Datapath_Binding") if r["external_ids"] != ["map", []])["_uuid"][1]
    env.sbctl("create", "Logical_Flow", f"logical_datapath={dp}", "pipeline=ingress", "table_id=0",
              "priority=65535", 'match="foreign"', 'actions="drop;"')
    env.sync()
    wait_until(lambda: not any(r["match"] == "foreign" for r in env.sb_rows("Logical_Flow")), 10, "foreign flow deleted")
    assert env.sb_rows("Logical_Flow")
