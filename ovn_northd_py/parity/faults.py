"""Checks for the fault tests (``tests/functional/test_faults_*.py``) and the hand measurements.

After a fault, SB must be what a fresh northd computes from the final NB, with no duplicate
Datapath_Binding / Port_Binding / Multicast_Group rows and with the tunnel keys of the rows that
existed before the fault unchanged:

* :func:`sb_state` dumps SB (one consistent snapshot) and returns its tunnel keys, failing on
  duplicate rows;
* :func:`fresh_sb` serves a backup of the final NB with an empty SB to a *fresh* daemon (ours by
  default, or the C reference) and dumps what it wrote;
* :func:`assert_converged` does both and compares the live SB with the fresh one through the parity
  harness (tunnel keys, which legitimately differ, are not compared there; SB_Global, whose nb_cfg
  counts the syncs of each side, is left out) and checks the keys.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..devtools.servers import nbctl
from ..release import DEFAULT_RELEASE, Release
from .compare import Comparison, compare_dumps
from .dump import SbDump, dump_sb
from .report import _flow_details, _table_details, _table_line
from .run import CommandDaemon, ReferenceDaemon, run_side
from .sources import unconfigured_random_options

# Compared between the live SB and a fresh one: every table except SB_Global (its nb_cfg counts
# each side's syncs).
SKIP_TABLES = frozenset({"SB_Global"})


@dataclass(slots=True)
class SbState:
    dump: SbDump
    keys: dict[str, int]  # "dp:<NB uuid>", "pb:<logical_port>", "mg:<NB uuid of datapath>/<name>" -> tunnel key

    def count(self, table: str) -> int:
        return len(self.dump.rows(table))


def _dp_key(row: dict) -> str:
    ext = row["external_ids"].as_dict()
    return str(ext.get("logical-switch") or ext.get("logical-router") or ext)


def sb_state(sb_remote: str, release: Release = DEFAULT_RELEASE) -> SbState:
    """SB's tunnel keys; AssertionError naming them if any Datapath_Binding, Port_Binding or
    Multicast_Group row is duplicated."""
    dump = dump_sb(sb_remote, release.sb_schema)
    dps = dump.rows("Datapath_Binding")
    dp_name = {u: _dp_key(r) for u, r in dps.items()}
    keys: dict[str, int] = {}
    dups: list[str] = []
    for prefix, table, name in (
        ("dp", "Datapath_Binding", lambda r: _dp_key(r)),
        ("pb", "Port_Binding", lambda r: r["logical_port"]),
        ("mg", "Multicast_Group", lambda r: f"{dp_name.get(r['datapath'].uuid, '?')}/{r['name']}"),
    ):
        rows = dump.rows(table).values()
        counts = Counter(f"{prefix}:{name(r)}" for r in rows)
        dups += [f"{table} {k} x{n}" for k, n in counts.items() if n > 1]
        keys.update({f"{prefix}:{name(r)}": int(r["tunnel_key"]) for r in rows})
    assert not dups, f"duplicate SB rows: {dups}"
    return SbState(dump, keys)


def assert_keys_kept(before: dict[str, int], after: dict[str, int], gone: set[str] | frozenset[str] = frozenset()) -> None:
    """Every key of ``before`` (except the rows in ``gone``, deleted on purpose) is in ``after``, unchanged."""
    changed = {k: (v, after.get(k)) for k, v in before.items() if k not in gone and after.get(k) != v}
    assert not changed, f"tunnel keys changed or rows lost (before, after): {changed}"


def backup(remote: str, db_name: str, dest: Path) -> Path:
    """A standalone copy of one live database (``ovsdb-client backup``; a cluster member works too)."""
    with open(dest, "wb") as out:
        subprocess.run(["ovsdb-client", "--timeout=60", "backup", remote, db_name], stdout=out, check=True)
    return dest


def fresh_sb(nb_remote: str, workdir: Path, daemon: str = "ours", timeout: float = 90.0,
             release: Release = DEFAULT_RELEASE) -> tuple[SbDump, Path]:
    """What a fresh ``daemon`` ("ours" or "c") writes into an empty SB (``release``'s schema) from a
    copy of the NB at ``nb_remote`` (one server's remote): its SB dump, and the NB copy it started
    from."""
    workdir.mkdir(parents=True, exist_ok=True)
    seed = backup(nb_remote, "OVN_Northbound", workdir / "nb-final.db")
    d = CommandDaemon() if daemon == "ours" else ReferenceDaemon()
    side, dump = run_side(f"fresh-{daemon}", d, seed, workdir / f"fresh-{daemon}", timeout, release=release)
    assert side.settled and dump is not None, f"the fresh {daemon} northd did not settle: {side.error}"
    return dump, seed


def comparison_report(cmp: Comparison, examples: int = 8) -> str:
    lines = [_table_line(t) for t in cmp.tables.values() if not t.ok]
    for t in cmp.tables.values():
        if not t.ok:
            lines += _table_details(t, examples)
    if cmp.flows is not None and not cmp.flows.ok:
        lines.append(f"  Logical_Flow: missing {cmp.flows.missing} extra {cmp.flows.extra}")
        lines += _flow_details(cmp.flows, cmp.labels, examples)
    return "\n".join(lines)


def assert_converged(nb_remote: str, sb_remote: str, workdir: Path, keys_before: dict[str, int] | None = None,
                     gone: set[str] | frozenset[str] = frozenset(), fresh: str = "ours",
                     sync_remote: str | None = None, skip: frozenset[str] = frozenset(),
                     release: Release = DEFAULT_RELEASE) -> SbState:
    """Wait for SB to catch up with NB (``--wait=sb sync`` on ``sync_remote`` or ``nb_remote``), then:
    no duplicate rows, the keys of ``keys_before`` kept (but ``gone``), and SB equal to what a fresh
    ``fresh`` northd writes from the same NB.  ``nb_remote`` and ``sb_remote`` name one server each;
    ``skip``: more SB tables not to compare (rows the test itself wrote, e.g. Connection);
    ``release``: that of the servers' schemas."""
    nbctl(sync_remote or nb_remote, "sync", wait="sb", timeout=90)
    state = sb_state(sb_remote, release)
    if keys_before is not None:
        assert_keys_kept(keys_before, state.keys, gone)
    dump, seed = fresh_sb(nb_remote, workdir / "fresh", fresh, release=release)
    tables = [t for t in dump.schema if t not in SKIP_TABLES | skip]
    cmp = compare_dumps(dump, state.dump, tables, random_options=unconfigured_random_options(seed))
    assert cmp.ok, f"SB differs from a fresh recompute by {fresh} (ref = fresh, ours = live SB):\n" + \
        comparison_report(cmp)
    assert state.count("Datapath_Binding") > 0 and state.count("Logical_Flow") > 0
    return state


# --------------------------------------------------------------------------- RAFT members' jsonrpc logs
# (members started with -vjsonrpc:file:dbg: every request and reply is in their log files)

_LOCKED_TXN = re.compile(r'received request, method="transact", params=\["OVN_\w+",\{(?:"lock":"ovn_northd","op":"assert"'
                         r'|"op":"assert","lock":"ovn_northd")')


def writes_off_leader(log_text: str) -> list[str]:
    """The northd transactions (those asserting the ``ovn_northd`` lock) a cluster member received
    while it was not the leader, following its role through its log (elections, restarts)."""
    leader = False
    bad = []
    for line in log_text.splitlines():
        if "opened log file" in line or "starting election" in line or re.search(r"server \w+ is leader for term", line):
            leader = False
        elif re.search(r"term \d+: elected leader", line):
            leader = True
        elif not leader and _LOCKED_TXN.search(line):
            bad.append(line[:200])
    return bad


def monitor_cond_since_resumes(log_text: str) -> int:
    """How many ``monitor_cond_since`` requests a member received with a last transaction id (a
    client resuming its monitor: the server sends only what changed since, if its history still
    holds that transaction)."""
    zero = "00000000-0000-0000-0000-000000000000"
    ids = re.findall(r'received request, method="monitor_cond_since", params=.*,"([0-9a-f-]{36})"\], id=', log_text)
    return sum(1 for i in ids if i != zero)


def monitor_cond_since_hits(log_text: str) -> int:
    """How many ``monitor_cond_since`` requests a member answered with found=true (it sent only
    what changed since the client's last transaction, not the whole database)."""
    return len(re.findall(r'send reply, result=\[true,"[0-9a-f-]+",', log_text))
