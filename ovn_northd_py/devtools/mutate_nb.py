"""Random mutations of a Northbound database, to check incremental processing against recomputes.

    python -m ovn_northd_py.devtools.mutate_nb --release 25.03 --seeds 1-10 [--steps 150] [--size 5]

For each seed: NB and SB ``ovsdb-server``s of the release's schemas, our daemon with
``--check-incremental=1`` (each incremental run compared with a full recompute), the random network
of that seed (``gen_random``) built on the synced daemon, then ``--steps`` single-row
transactions, each waited for with ``--wait=sb``, stopping at the first difference.  A mutation
takes a random row of a random NB table and either gives one of its columns the value another row
of the table has (a name, an option map, a list of references: so rows end up shared by two
parents, ports move, options swap), a random value of the column's type (a bounded integer such
as an ACL tier, an enum, a boolean), empties an optional column, or deletes a row of a root
table.
Transactions the server refuses (constraints, references) are skipped.

Exit status 0: no difference; 1: a difference (the operation and the daemon's differences
printed); 2: the tool could not run.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..release import DRAFT_ENV, RELEASES, Release
from .gen_random import build_random_nb
from .servers import OurNorthd, OvsdbServer, nbctl
from .testing import free_port, mismatches

# Tables the mutations leave alone: the daemon's own write-backs and the server's configuration.
SKIP_TABLES = frozenset({"NB_Global", "Connection", "SSL"})

Rows = dict[str, list[dict[str, Any]]]


def _no_uuids(datum: Any) -> Any:
    if isinstance(datum, list):
        if len(datum) == 2 and datum[0] == "uuid":
            return "uuid"
        return [_no_uuids(x) for x in datum]
    return datum


def _stable_key(row: dict[str, Any]) -> str:
    """A row's order in its table that does not depend on the uuids the server drew (so a seed
    gives the same mutations every time)."""
    return json.dumps({c: _no_uuids(v) for c, v in row.items() if not c.startswith("_")}, sort_keys=True)


def dump_nb(remote: str) -> Rows:
    """Every row of every NB table, as {column: OVSDB JSON datum} (``ovsdb-client dump``), in a
    stable order."""
    out = subprocess.run(["ovsdb-client", "dump", "--format=json", remote, "OVN_Northbound"],
                         check=True, capture_output=True, text=True).stdout
    rows: Rows = {}
    for line in out.splitlines():
        if line.strip():
            tbl = json.loads(line)
            table = [dict(zip(tbl["headings"], r, strict=True)) for r in tbl["data"]]
            rows[tbl["caption"].split()[0]] = sorted(table, key=_stable_key)
    return rows


def random_mutation(rnd: random.Random, rows: Rows, schema: dict[str, Any]) -> dict[str, Any] | None:
    """One OVSDB operation changing one row (None: nothing to do this time)."""
    tables = sorted(t for t, rs in rows.items() if rs and t not in SKIP_TABLES)
    if not tables:
        return None
    t = rnd.choice(tables)
    ts = schema["tables"][t]
    row = rnd.choice(rows[t])
    where = [["_uuid", "==", row["_uuid"]]]
    k = rnd.random()
    if k < 0.1 and ts.get("isRoot"):
        return {"op": "delete", "table": t, "where": where}
    col = rnd.choice(sorted(c for c in row if not c.startswith("_")))
    if k < 0.25:
        ctype = ts["columns"][col]["type"]
        if not isinstance(ctype, dict) or ctype.get("min", 1) != 0:
            return None
        value: Any = ["map", []] if "value" in ctype else ["set", []]
    elif k < 0.4 and (drawn := _random_atom(rnd, ts["columns"][col]["type"])) is not None:
        value = drawn
    else:
        value = rnd.choice(rows[t])[col]
    return {"op": "update", "table": t, "where": where, "row": {col: value}}


def _random_atom(rnd: random.Random, ctype: Any) -> Any:
    """A random value of a scalar column of a bounded type (None for other columns)."""
    if not isinstance(ctype, dict) or "value" in ctype or ctype.get("max", 1) != 1:
        return None
    key = ctype["key"]
    if key == "boolean" or (isinstance(key, dict) and key.get("type") == "boolean"):
        return rnd.random() < 0.5
    if not isinstance(key, dict):
        return None
    if "enum" in key:
        choices = key["enum"][1] if isinstance(key["enum"], list) and key["enum"][0] == "set" else [key["enum"]]
        return rnd.choice(choices)
    if key.get("type") == "integer" and "maxInteger" in key and key["maxInteger"] - key.get("minInteger", 0) < 100000:
        return rnd.randint(key.get("minInteger", 0), key["maxInteger"])
    return None


def transact(remote: str, op: dict[str, Any]) -> bool:
    """Apply ``op``; False when the server refuses it."""
    proc = subprocess.run(["ovsdb-client", "transact", remote, json.dumps(["OVN_Northbound", op])],
                          capture_output=True, text=True, check=False)
    return proc.returncode == 0 and '"error"' not in proc.stdout


def mutate_checked(nb_remote: str, daemon: OurNorthd, release: Release, seed: int, steps: int) -> list[str]:
    """``steps`` random mutations of the NB at ``nb_remote``, each synced; the first difference
    ``daemon`` (running with ``--check-incremental=1``) reports, as lines naming the operation."""
    schema = json.loads(release.nb_schema.read_text())
    rnd = random.Random(seed)
    for step in range(steps):
        op = random_mutation(rnd, dump_nb(nb_remote), schema)
        if op is None or not transact(nb_remote, op):
            continue
        nbctl(nb_remote, "sync", wait="sb")
        bad = mismatches(daemon)
        if bad:
            return [f"seed {seed} step {step}: {json.dumps(op)}", *map(str, bad[0].get("differences") or [])]
    return []


def run_seed(release: Release, seed: int, steps: int, size: int, workdir: Path) -> list[str]:
    """One seed on fresh servers: the differences found (empty: none)."""
    nb = OvsdbServer(workdir, "nb", release.nb_schema).start()
    sb = OvsdbServer(workdir, "sb", release.sb_schema).start()
    d = OurNorthd(workdir, nb.remote, sb.remote,
                  extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{free_port()}"]).start()
    try:
        nbctl(nb.remote, "sync", wait="sb")
        build_random_nb(nb.remote, seed, size)
        nbctl(nb.remote, "sync", wait="sb")
        bad = mismatches(d)
        if bad:
            return [f"seed {seed}: building the network", *map(str, bad[0].get("differences") or [])]
        return mutate_checked(nb.remote, d, release, seed, steps)
    finally:
        d.stop()
        sb.stop()
        nb.stop()


def _seeds(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--release", default="23.03", choices=tuple(RELEASES))
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--size", type=int, default=5)
    args = ap.parse_args(argv)
    release = RELEASES[args.release]
    if release.flow_profile is None and release.draft_profile is not None:
        import os

        os.environ[DRAFT_ENV] = "1"  # (our daemon inherits it)
    failed = 0
    for seed in _seeds(args.seeds):
        with tempfile.TemporaryDirectory(prefix=f"mutate-{release.name}-{seed}-") as wd:
            diffs = run_seed(release, seed, args.steps, args.size, Path(wd))
        if diffs:
            failed += 1
            print("\n".join(diffs[:12]))
        else:
            print(f"seed {seed}: {args.steps} mutations, incremental == recompute")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
