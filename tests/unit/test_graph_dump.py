"""The engine graph (``ovn-northd-py --dump-graph``) is pinned by a golden file.

When the graph changes on purpose (a node, an edge, a handler, a feature or the tables it takes),
regenerate the golden file and review the diff:

    .venv/bin/ovn-northd-py --dump-graph > tests/unit/golden/engine_graph.txt
"""

from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

from ovn_northd_py.engine.graph import dump

GOLDEN = Path(__file__).parent / "golden" / "engine_graph.txt"
REGENERATE = "ovn-northd-py --dump-graph > tests/unit/golden/engine_graph.txt"


def test_graph_matches_golden() -> None:
    got = dump()
    want = GOLDEN.read_text()
    assert got == want, (
        "the engine graph differs from tests/unit/golden/engine_graph.txt; if the change is intended, "
        f"regenerate it with `{REGENERATE}` and review the diff"
    )


def test_dump_graph_flag_prints_it_and_exits_0() -> None:
    r = subprocess.run([sys.executable, "-c", "from ovn_northd_py.cli import main; main(['--dump-graph'])"],
                       check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == dump()


def test_every_feature_table_is_listed_once() -> None:
    text = dump()
    assert "northd.on_nb" not in text  # (handlers are named by their node class)
    assert "NorthdNode.on_nb" in text
    for line in ("ACL -> acl", "Service_Monitor -> lb_nat, network_function (watch)", "Logical_Switch.acls -> acl"):
        assert f"  {line}\n" in text


def test_graph_docstring_lists_the_declared_edges() -> None:
    """The edge list in engine/graph.py's docstring is the graph's (keep it in step when editing)."""
    import re

    from ovn_northd_py.engine import graph as graph_mod
    from ovn_northd_py.engine.graph import _NoRows, build_graph
    from ovn_northd_py.ovsdb.connection import DbConnection

    doc = graph_mod.__doc__ or ""
    documented = {(m[1], m[2], m[3]) for m in re.finditer(r"^\s+(\w+)\s+<- (\w+): (\w+)", doc, re.MULTILINE)}
    none = typing.cast(DbConnection, _NoRows())
    g = build_graph(none, none)
    declared = {(n.name, e.node.name, e.handler_name.rsplit(".", 1)[1]) for n in g.engine.nodes for e in n.inputs}
    assert documented == declared
