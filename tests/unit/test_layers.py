"""The package's import graph: no import cycle, and layers that point one way.

Computed from the source with :mod:`ast` (every ``import`` / ``from ... import``, including the
lazy ones inside functions, which cycle just the same at run time), leaving out the imports under
``if TYPE_CHECKING:`` (annotations only, never executed).

Layers, lowest first: a module may import its own package and the packages of lower or equal
layers, never a higher one.  ``ovsdb/`` <- ``northd/`` (the model; ``lflow/``, the stage and flow
tables, beside it) <- ``flows/`` (builders) <- ``sync/`` <- ``engine/`` <- the daemon and its
front ends; ``devtools/`` and ``parity/`` (tests and tooling) sit on top and nothing below imports
them.
"""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import ovn_northd_py

ROOT = Path(ovn_northd_py.__file__).resolve().parent
TOP = ROOT.name

# Layer of each top-level package or module of ovn_northd_py ("" is ovn_northd_py/__init__.py).
LAYERS: dict[str, int] = {
    "": 0,
    "ovsdb": 0,
    "log": 0,
    "memtrim": 0,
    "metrics": 0,
    "opmetrics": 0,
    "txn_failures": 0,
    "daemonize": 0,
    "schemas": 0,
    "release": 1,
    "northd": 1,
    "lflow": 1,
    "flows": 2,
    "sync": 3,
    "engine": 4,
    "daemon": 5,
    "control": 6,
    "cli": 7,
    "__main__": 8,
    "devtools": 9,
    "parity": 9,
}

# No cycle is allowed (the list stays, empty, for a reasoned exception; the test warns when an
# entry is unused).
ALLOWED_CYCLES: list[frozenset[str]] = []


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = (TOP, *path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of ``tree`` outside ``if TYPE_CHECKING:`` bodies."""
    out: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                walk(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        for child in ast.iter_child_nodes(node):
            walk(child)

    walk(tree)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ovn_northd_py it imports."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    prefix = ".".join([*base, node.module] if node.module else base)
                else:
                    prefix = node.module or ""
                # ``from pkg import sub`` imports the submodule ``pkg.sub``; else the module ``pkg``.
                targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in mods else prefix for a in node.names]
            for target in targets:
                while target and target not in mods and "." in target:
                    target = target.rpartition(".")[0]  # ``import a.b.c``: the deepest module we have
                if target in mods and target != mod:
                    graph[mod].add(target)
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp: set[str] = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(comp)
    return out


def _layer_of(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_package_has_a_layer() -> None:
    missing = sorted({_layer_of(m) for m in _modules()} - set(LAYERS))
    assert not missing, f"give these parts of {TOP} a layer in LAYERS: {missing}"


def test_no_import_cycle() -> None:
    cycles = strongly_connected(import_graph())
    unexpected = [sorted(c) for c in cycles if frozenset(c) not in ALLOWED_CYCLES]
    assert not unexpected, "import cycles (outside TYPE_CHECKING):\n" + "\n".join(
        " <-> ".join(c) for c in unexpected
    )
    unused = [sorted(a) for a in ALLOWED_CYCLES if a not in {frozenset(c) for c in cycles}]
    if unused:
        warnings.warn(f"ALLOWED_CYCLES lists cycles that no longer exist: {unused}", stacklevel=1)


def test_layers_point_one_way() -> None:
    bad = []
    for mod, targets in sorted(import_graph().items()):
        src = LAYERS.get(_layer_of(mod), 0)
        for target in sorted(targets):
            dst = LAYERS.get(_layer_of(target), 0)
            if dst > src:
                bad.append(f"{mod} (layer {src}) imports {target} (layer {dst})")
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_the_checks_see_cycles_and_upward_imports() -> None:
    """The graph helpers themselves, on a made-up graph."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(graph) == [{"a", "b", "c"}]
    real = import_graph()
    assert f"{TOP}.northd.model" in real[f"{TOP}.northd.build"]
    assert f"{TOP}.ovsdb.columns" in real[f"{TOP}.flows.copp"]
