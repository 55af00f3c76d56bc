"""Architecture rules of ``ovn_northd_py/engine`` (issue 11):

* no module-level mutable state in ``engine/``, ``flows/``, ``lflow/`` and ``sync/``: every module
  global is a constant (str, number, frozenset, tuple, read-only mapping, enum member...), a
  function, a class or a module -- state lives in the nodes and the feature objects of a graph
  (:func:`ovn_northd_py.engine.graph.build_graph`) and in the flow context of a build;
* no import cycle between engine modules, no feature module imports another, and the generic
  nodes (``engine/nodes/``) import no feature module;
* two graphs share no state.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import importlib
import importlib.util
import inspect
import pkgutil
import re
import types
import typing
from pathlib import Path, PurePath

import numpy as np
import pytest

import ovn_northd_py.engine as engine_pkg

ENGINE = Path(engine_pkg.__file__).parent
_IMMUTABLE = (str, bytes, int, float, complex, bool, type(None), frozenset, range, types.MappingProxyType)


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages([str(ENGINE)], "ovn_northd_py.engine."))


_ALL = set(_modules())


def _immutable(v: object) -> bool:
    if isinstance(v, (*_IMMUTABLE, enum.Enum, re.Pattern, PurePath, np.generic)):
        return True
    if isinstance(v, tuple):
        return all(_immutable(x) for x in v)
    if isinstance(v, np.ndarray):
        return not v.flags.writeable
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        # A frozen dataclass whose fields are constants too.
        params = getattr(v, "__dataclass_params__", None)
        return bool(params and params.frozen) and all(
            _immutable(getattr(v, f.name)) for f in dataclasses.fields(v))
    if inspect.ismodule(v) or inspect.isclass(v) or inspect.isroutine(v):
        return True
    # typing constructs (type aliases such as ``Handler = Callable[...]``)
    return type(v).__module__ in ("typing", "types", "collections.abc") and not isinstance(v, (list, dict, set))


def _assigned_names(path: Path) -> set[str]:
    """Names a module binds at top level by assignment (imports of other packages' names excluded)."""
    out: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign | ast.AugAssign) else []
        for t in targets:
            out |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    return out


STATELESS_PACKAGES = ("engine", "flows", "lflow", "sync")


def _package_modules(pkg: str) -> list[str]:
    root = ENGINE.parent / pkg
    return sorted(m.name for m in pkgutil.walk_packages([str(root)], f"ovn_northd_py.{pkg}."))


@pytest.mark.parametrize("pkg", STATELESS_PACKAGES)
def test_no_module_level_mutable_state(pkg: str) -> None:
    bad = []
    for name in _package_modules(pkg):
        mod = importlib.import_module(name)
        assert mod.__file__ is not None
        assigned = _assigned_names(Path(mod.__file__))
        for k, v in vars(mod).items():
            if k.startswith("__") or k == "annotations":
                continue
            if k not in assigned and not (inspect.isclass(v) or inspect.isroutine(v) or inspect.ismodule(v)):
                continue  # a name imported from another module
            if not _immutable(v):
                bad.append(f"{name}.{k}: {type(v).__name__}")
            if inspect.isclass(v) and v.__module__ == name:  # class attributes are module state too
                for ck, cv in vars(v).items():
                    if isinstance(cv, (list, dict, set, bytearray)) and not ck.startswith("_"):
                        bad.append(f"{name}.{k}.{ck}: {type(cv).__name__}")
    assert not bad, f"module-level mutable state in {pkg}/: " + ", ".join(bad)


def _engine_imports(path: Path, modname: str) -> set[str]:
    """Engine modules ``path`` imports (relative or absolute), TYPE_CHECKING-only imports included."""
    pkg = modname if path.name == "__init__.py" else modname.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names]
            out |= {t for t in [target, *names] if t in _ALL}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("ovn_northd_py.engine.")}
    return out


def _import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name in _modules():
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        graph[name] = _engine_imports(Path(spec.origin), name) - {name, "ovn_northd_py.engine.nodes"}
    return graph


def test_no_import_cycle_in_engine() -> None:
    graph = _import_graph()
    cycles: list[list[str]] = []

    def visit(n: str, stack: list[str], done: set[str]) -> None:
        if n in stack:
            cycles.append([*stack[stack.index(n):], n])
            return
        if n in done:
            return
        for m in sorted(graph.get(n, ())):
            visit(m, [*stack, n], done)
        done.add(n)

    done: set[str] = set()
    for n in graph:
        visit(n, [], done)
    assert not cycles, "import cycles in engine/: " + "; ".join(" -> ".join(c) for c in cycles)


def test_features_and_generic_nodes_import_no_feature() -> None:
    graph = _import_graph()
    bad = []
    for name, deps in graph.items():
        short = name.rsplit(".", 1)[1]
        if not (short.startswith("feature_") or ".nodes." in name):
            continue
        for d in deps:
            if d.rsplit(".", 1)[1].startswith("feature_"):
                bad.append(f"{name} imports {d}")
    assert not bad, "; ".join(bad)


def test_two_graphs_share_no_feature_state() -> None:
    from ovn_northd_py.engine.graph import _NoRows, build_graph
    from ovn_northd_py.ovsdb.connection import DbConnection

    none = typing.cast(DbConnection, _NoRows())
    a, b = build_graph(none, none), build_graph(none, none)
    for fa, fb in zip(a.features, b.features, strict=True):
        for hook in ("on_nb_sb", "sync_sb", "on_northd_sb", "on_sb"):
            ha, hb = getattr(fa, hook), getattr(fb, hook)
            owner_a, owner_b = getattr(ha, "__self__", None), getattr(hb, "__self__", None)
            if owner_a is not None:
                assert owner_a is not owner_b, f"{fa.name}.{hook}: one state object for two graphs"
