"""Which NB update messages pass through (engine/passthrough.py ``plan``), and the SB write they make:
only modifies of the columns a hook declared, plus NB_Global's nb_cfg, copied last to SB_Global."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import pytest

from ovn_northd_py.engine.graph import build_features
from ovn_northd_py.engine.passthrough import PassCtx, PassHook, plan, set_atoms

U1 = "6f1c4b3e-0000-4000-8000-000000000001"
U2 = "6f1c4b3e-0000-4000-8000-000000000002"
G = "6f1c4b3e-0000-4000-8000-00000000000a"
SBG = "6f1c4b3e-0000-4000-8000-0000000000ff"
CTX = cast(PassCtx, None)  # (the hook below reads nothing from it)


def _hook(table: str, u: str, modify: Mapping[str, Any], _ctx: PassCtx) -> list[dict[str, Any]] | None:
    """A stand-in hook: refuses U2, else one operation naming what it got."""
    if u == U2:
        return None
    return [{"op": "mutate", "table": table, "uuid": u, "diff": dict(modify)}]


HOOKS: dict[str, tuple[frozenset[str], PassHook]] = {"Address_Set": (frozenset({"addresses"}), _hook)}


def _as(u: str = U1, **cols: Any) -> dict[str, Any]:
    return {"Address_Set": {u: {"modify": cols or {"addresses": "10.0.0.9"}}}}


def test_an_address_set_change_with_nb_cfg_passes_and_copies_nb_cfg_last() -> None:
    got = plan(HOOKS, {**_as(), "NB_Global": {G: {"modify": {"nb_cfg": 7}}}}, CTX, SBG)
    assert got is not None and got.nb_cfg == 7
    assert got.ops == [
        {"op": "mutate", "table": "Address_Set", "uuid": U1, "diff": {"addresses": "10.0.0.9"}},
        {"op": "update", "table": "SB_Global", "row": {"nb_cfg": 7}, "where": [["_uuid", "==", ["uuid", SBG]]]}]


def test_a_change_without_nb_cfg_passes_alone() -> None:
    got = plan(HOOKS, _as(), CTX, SBG)
    assert got is not None and got.nb_cfg is None and len(got.ops) == 1


@pytest.mark.parametrize("updates", [
    pytest.param(_as(name="other"), id="another column"),
    pytest.param(_as(addresses="10.0.0.9", name="x"), id="a column more"),
    pytest.param({"Address_Set": {U1: {"insert": {"name": "as9"}}}}, id="an insert"),
    pytest.param({"Address_Set": {U1: {"delete": None}}}, id="a delete"),
    pytest.param({"Port_Group": {U1: {"modify": {"ports": ["uuid", U2]}}}}, id="a table without a hook"),
    pytest.param({**_as(), "NB_Global": {G: {"modify": {"options": ["map", []]}}}}, id="NB_Global options"),
    pytest.param({**_as(), "NB_Global": {G: {"modify": {"nb_cfg": 7, "options": ["map", []]}}}},
                 id="NB_Global nb_cfg and options"),
    pytest.param({**_as(), **_as(U2)}, id="(one) row the hook refuses"),
    pytest.param({"Address_Set": {U1: {"modify": {"addresses": "a"}}, U2: {"modify": {"addresses": "b"}}}},
                 id="two rows, one refused"),
    pytest.param({}, id="nothing"),
])
def test_anything_else_in_the_message_leaves_it_to_the_engine(updates: dict[str, Any]) -> None:
    assert plan(HOOKS, updates, CTX, SBG) is None


def test_nb_cfg_alone_passes_as_the_copy_of_nb_cfg() -> None:
    got = plan(HOOKS, {"NB_Global": {G: {"modify": {"nb_cfg": 8}}}}, CTX, SBG)
    assert got is not None and got.nb_cfg == 8 and [op["table"] for op in got.ops] == ["SB_Global"]


def test_nothing_passes_before_sb_global_exists() -> None:
    assert plan(HOOKS, {**_as(), "NB_Global": {G: {"modify": {"nb_cfg": 7}}}}, CTX, None) is None


def test_set_atoms_reads_one_atom_or_a_set_and_refuses_references_and_maps() -> None:
    assert set_atoms("10.0.0.1") == ["10.0.0.1"]
    assert set_atoms(["set", ["10.0.0.1", "10.0.0.2"]]) == ["10.0.0.1", "10.0.0.2"]
    assert set_atoms(["uuid", U1]) is None
    assert set_atoms(["set", [["uuid", U1]]]) is None
    assert set_atoms(["map", [["k", "v"]]]) is None


def test_only_the_address_sets_addresses_pass_through_in_the_graph() -> None:
    hooks = build_features(cast(Any, None)).passthrough_hooks()
    assert {t: cols for t, (cols, _fn) in hooks.items()} == {"Address_Set": frozenset({"addresses"})}
