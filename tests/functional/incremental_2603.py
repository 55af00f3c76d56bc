"""Helpers of the 26.03 incremental tests (test_incremental_*_2603.py): a checked daemon on the
``env`` fixture's servers, one step's check, NB uuids by name and SB flow matches."""

from __future__ import annotations

from typing import Any

from ovn_northd_py.devtools.servers import OurNorthd
from ovn_northd_py.devtools.testing import mismatches, ovsdb_select, start_checked_daemon


def start_checked(env: Any, started: list[OurNorthd]) -> tuple[OurNorthd, int]:
    """Our daemon with ``--check-incremental=1`` and a metrics port on ``env``'s servers, appended
    to ``started`` (the fixture stops it); ``(daemon, metrics port)``."""
    d, port = start_checked_daemon(env)
    started.append(d)
    return d, port


def assert_step_checked(env: Any, d: OurNorthd, i: int) -> None:
    """Wait for SB, then fail if the daemon found step ``i``'s incremental state unequal to a recompute."""
    env.sync()
    bad = mismatches(d)
    assert not bad, f"step {i}: {bad[0].get('differences')}"


def nb_uuid(remote: str, table: str, name: str) -> list[str]:
    """``["uuid", ...]`` of the NB row of ``table`` named ``name``."""
    rows = [r for r in ovsdb_select(remote, "OVN_Northbound", table, ["_uuid", "name"]) if r["name"] == name]
    return ["uuid", rows[0]["_uuid"][1]]


def flow_matches(env: Any, *conditions: str) -> list[str]:
    """The matches of the SB Logical_Flow rows meeting ``conditions`` (``ovn-sbctl find``'s)."""
    return env.sbctl("--bare", "--columns=match", "find", "Logical_Flow", *conditions, timeout=10).splitlines()
