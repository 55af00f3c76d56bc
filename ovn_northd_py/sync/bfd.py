"""SB ``BFD``: one row per NB BFD row, and the session status written back to NB ``BFD.status``.

Observed on the reference (23.03):

* every NB BFD row has an SB row keyed by (``logical_port``, ``dst_ip``), also for unknown
  ports; ``min_tx`` / ``min_rx`` default to 1000, ``detect_mult`` to 5; NB ``options`` and
  ``external_ids`` are not copied (a new row has none; edits to them in SB are left alone);
  edits to the other configured columns in SB are repaired;
* ``src_port``: a new row takes the lowest port from 49152 not used by any SB BFD row present
  when the run starts (a row replaced in the same run keeps its port busy); existing rows keep
  theirs, and an SB row deleted by someone is recreated with the lowest free port.  Several new
  rows in one run are numbered in the reference's hash-table order, which we do not reproduce
  (we use NB uuid order): the set of ports is the same, not which row has which;
* ``disc``: random, nonzero, kept while the row lives;
* ``status``: :func:`~ovn_northd_py.flows.lr_bfd.effective_status`, with "used" meaning some
  static route of an enabled router resolves and names the row in ``bfd`` with ``dst_ip`` equal
  to its next hop (:func:`used_bfds`); the same value goes to NB ``BFD.status``
  (:func:`sync_nb_bfd_status`).  Only an SB status of ``admin_down`` (or any status of an unused
  row) is overwritten; other values are ovn-controller's.

Both syncs are full passes over the BFD rows and the routes naming one (cheap; nothing at all
when there is no BFD row).
"""

from __future__ import annotations

import random
from typing import Any

from ..flows import datapath_enabled
from ..flows.context import FlowCtx
from ..flows.lr_bfd import effective_status, route_bfd_row
from ..flows.lr_routing import route_resolves
from ..northd.model import Northd
from ..ovsdb.columns import opt
from .rows import SyncStats, update_row

TABLE = "BFD"
NB_TABLE = "BFD"
SRC_PORT_MIN, SRC_PORT_MAX = 49152, 65535
DEFAULT_MIN_TX = DEFAULT_MIN_RX = 1000
DEFAULT_DETECT_MULT = 5


def bfd_key(row: Any) -> tuple[str, str]:
    return (str(row.logical_port), str(row.dst_ip))


def used_bfds(nb: Any, nd: Northd) -> set[str]:
    """The NB BFD rows (uuid text) a resolving static route of an enabled router uses."""
    if not nb.rows(NB_TABLE):
        return set()
    ctx = FlowCtx(nd)
    used: set[str] = set()
    for router in nd.routers():
        if not datapath_enabled(router):
            continue
        for row in router.nb.static_routes:
            bfd = route_bfd_row(row)
            if bfd is not None and str(bfd.uuid) not in used and route_resolves(router, ctx, row):
                used.add(str(bfd.uuid))
    return used


def _config(nb_row: Any) -> dict[str, Any]:
    min_tx, min_rx, mult = opt(nb_row.min_tx), opt(nb_row.min_rx), opt(nb_row.detect_mult)
    return {
        "min_tx": DEFAULT_MIN_TX if min_tx is None else min_tx,
        "min_rx": DEFAULT_MIN_RX if min_rx is None else min_rx,
        "detect_mult": DEFAULT_DETECT_MULT if mult is None else mult,
    }


def _new_disc(used: set[int], rng: random.Random) -> int:
    while True:
        disc = rng.randrange(1, 1 << 32)
        if disc not in used:
            used.add(disc)
            return disc


def _new_src_port(used: set[int]) -> int | None:
    for port in range(SRC_PORT_MIN, SRC_PORT_MAX + 1):
        if port not in used:
            used.add(port)
            return port
    return None


def sync_sb_bfd(txn: Any, nb: Any, sb: Any, nd: Northd, stats: SyncStats, rng: random.Random | None = None) -> None:
    """Full sync of SB BFD (idempotent within one transaction); ``rng`` draws source ports (default:
    the system's)."""
    rng = rng if rng is not None else random.SystemRandom()
    nb_rows = sorted(nb.rows(NB_TABLE).values(), key=lambda r: str(r.uuid))
    sb_rows = list(sb.rows(TABLE).values())
    if not nb_rows and not sb_rows:
        return
    used = used_bfds(nb, nd)
    keep: dict[tuple[str, str], Any] = {}
    stale: list[Any] = []
    for row in sb_rows:
        k = bfd_key(row)
        if k in keep:
            stale.append(row)  # a duplicate
        else:
            keep[k] = row
    ports = {int(r.src_port) for r in sb_rows}
    discs = {int(r.disc) for r in sb_rows}
    wanted: set[tuple[str, str]] = set()
    for n in nb_rows:
        k = bfd_key(n)
        if k in wanted:
            continue  # NB indexes the key: cannot happen
        wanted.add(k)
        row = keep.get(k)
        want = _config(n)
        want["status"] = effective_status(opt(n.status), row.status if row is not None else None,
                                          str(n.uuid) in used)
        if row is not None:
            if update_row(row, want):
                stats.bump(stats.updated, TABLE)
            continue
        src_port = _new_src_port(ports)
        if src_port is None:
            continue  # every UDP source port is taken
        row = txn.insert(txn.idl.tables[TABLE])
        row.logical_port, row.dst_ip = k
        row.src_port, row.disc = src_port, _new_disc(discs, rng)
        for col, val in want.items():
            setattr(row, col, val)
        stats.bump(stats.inserted, TABLE)
    for k, row in keep.items():
        if k not in wanted:
            stale.append(row)
    for row in stale:
        row.delete()
        stats.bump(stats.deleted, TABLE)


def sync_nb_bfd_status(nb: Any, sb: Any, nd: Northd) -> None:
    """NB ``BFD.status`` := the effective status (read against the SB rows committed so far)."""
    nb_rows = nb.rows(NB_TABLE)
    if not nb_rows:
        return
    used = used_bfds(nb, nd)
    sb_status = {bfd_key(r): r.status for r in sb.rows(TABLE).values() if r._data is not None}
    for n in nb_rows.values():
        cur = opt(n.status)
        want = effective_status(cur, sb_status.get(bfd_key(n)), str(n.uuid) in used)
        if cur != want:
            n.status = [want]


__all__ = ["NB_TABLE", "TABLE", "bfd_key", "sync_nb_bfd_status", "sync_sb_bfd", "used_bfds"]
