"""The cheaper Datum parsing and serialisation give what python-ovs's own code gives, errors included,
for every column type of the NB and SB schemas."""

from __future__ import annotations

import json
import random
import sys
import uuid
from typing import Any

import ovs.db.error
import ovs.db.schema
import pytest

from ovn_northd_py.ovsdb import fastdatum
from ovn_northd_py.release import RELEASES

SCHEMAS = {f"{r.name} {p.name}": p for r in RELEASES.values() for p in (r.nb_schema, r.sb_schema)}


def _column_types(path: Any) -> list[tuple[str, Any]]:
    """(table.column, its type) of every column of a schema."""
    schema = ovs.db.schema.DbSchema.from_json(json.loads(path.read_text()))
    return [(f"{t}.{c}", col.type) for t, table in schema.tables.items() for c, col in table.columns.items()]
U1, U2 = uuid.UUID(int=1), uuid.UUID(int=0xABCDEF)


def _atoms(base: Any, rng: random.Random) -> list[Any]:
    """Valid JSON atoms of ``base`` and some that are not."""
    t = base.type
    good: list[Any]
    if base.enum is not None:
        good = [a.value for a in base.enum.values]
    elif t is ovs.db.types.StringType:
        good = ["", "a", "x" * 40, "é ü"]
    elif t is ovs.db.types.IntegerType:
        lo = base.min if base.min is not None else -5
        hi = base.max if base.max is not None else 70000
        good = [lo, hi, (lo + hi) // 2]
    elif t is ovs.db.types.RealType:
        good = [0, 1.5, 2.0]
    elif t is ovs.db.types.BooleanType:
        good = [True, False]
    else:
        good = [["uuid", str(U1)], ["uuid", str(U2)]]
    bad = ["str", 3, 2.0, True, -1, 10**9, ["uuid", "nope"], ["named-uuid", "x"], None, [], {}]
    if t is ovs.db.types.StringType:
        bad.append("y" * 300)
    rng.shuffle(bad)
    return good + bad[:4]


def _outcome(type_: Any, j: Any, parse: Any) -> tuple[str, Any]:
    try:
        d = parse(type_, j)
    except ovs.db.error.Error as e:
        return "error", str(e)
    return "ok", (sorted(((k.value, k.type.name), (v.value if v is not None else None)) for k, v in d.values.items()),
                  _ORIG_TO_JSON(d), _ORIG_IS_DEFAULT(d))


_ORIG_TO_JSON = fastdatum._ORIG_TO_JSON
_ORIG_IS_DEFAULT = fastdatum._ORIG_IS_DEFAULT
_ORIG_FROM_JSON = fastdatum._ORIG_FROM_JSON


def _jsons(type_: Any, rng: random.Random) -> list[Any]:
    keys = _atoms(type_.key, rng)
    out: list[Any] = list(keys)
    if type_.is_map():
        vals = _atoms(type_.value, rng)
        out += [["map", []], ["map", [[keys[0], vals[0]]]], ["map", [[k, rng.choice(vals)] for k in keys]],
                ["map", [[keys[0], vals[0]], [keys[0], vals[-1]]]], ["map", [keys[0]]], ["set", []], "map"]
    else:
        out += [["set", []], ["set", keys[:1]], ["set", keys], ["set", [keys[0], keys[0]]], ["set", keys[:3]], ["set"]]
    return out


@pytest.mark.parametrize("schema", SCHEMAS)
def test_from_json_gives_python_ovs_result_or_error(schema: str) -> None:
    for name, type_ in _column_types(SCHEMAS[schema]):
        rng = random.Random(name)
        for j in _jsons(type_, rng):
            assert _outcome(type_, j, fastdatum._fast_from_json) == _outcome(type_, j, _ORIG_FROM_JSON), (name, j)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_to_json_and_is_default_give_python_ovs_results(schema: str) -> None:
    for name, type_ in _column_types(SCHEMAS[schema]):
        rng = random.Random(name)
        for j in _jsons(type_, rng):
            try:
                d = _ORIG_FROM_JSON(type_, j)
            except ovs.db.error.Error:
                continue
            assert fastdatum._fast_to_json(d) == _ORIG_TO_JSON(d), (name, j)
            assert fastdatum._fast_is_default(d) == _ORIG_IS_DEFAULT(d), (name, j)
        default = ovs.db.data.Datum.default(type_)
        assert fastdatum._fast_is_default(default) and _ORIG_IS_DEFAULT(default), name


def test_named_uuids_go_to_python_ovs_with_the_symbol_table() -> None:
    ref = ovs.db.types.Type(ovs.db.types.BaseType(ovs.db.types.UuidType, ref_table_name="T"))
    symtab: dict[str, Any] = {"other": U2}
    d = fastdatum._fast_from_json(ref, ["named-uuid", "row1"], symtab)
    assert next(iter(d.values)).value == symtab["row1"]


def test_uuid_sets_serialise_sorted_as_python_ovs_does() -> None:
    ref = ovs.db.types.Type(ovs.db.types.BaseType(ovs.db.types.UuidType), n_min=0, n_max=sys.maxsize)
    ids = [uuid.UUID(int=i * 7919) for i in range(50)]
    d = _ORIG_FROM_JSON(ref, ["set", [["uuid", str(u)] for u in reversed(ids)]])
    assert fastdatum._fast_to_json(d) == ["set", [["uuid", str(u)] for u in sorted(ids)]]


def test_equal_values_from_two_messages_share_one_atom() -> None:
    smap = ovs.db.types.Type(ovs.db.types.BaseType(ovs.db.types.StringType),
                             ovs.db.types.BaseType(ovs.db.types.StringType), n_min=0, n_max=sys.maxsize)
    # (json.loads: fresh string objects, as each server message brings)
    a = fastdatum._fast_from_json(smap, json.loads('["map", [["k8s.ovn.org/kind", "Service"]]]'))
    b = fastdatum._fast_from_json(smap, json.loads('["map", [["k8s.ovn.org/kind", "Service"]]]'))
    (ka, va), = a.values.items()
    (kb, vb), = b.values.items()
    assert ka is kb and va is vb
    assert ka.value == "k8s.ovn.org/kind" and va.value == "Service"
    ref = ovs.db.types.Type(ovs.db.types.BaseType(ovs.db.types.UuidType, ref_table_name="T"), n_min=0, n_max=9)
    ua = fastdatum._fast_from_json(ref, json.loads(f'["set", [["uuid", "{U2}"]]]'))
    ub = fastdatum._fast_from_json(ref, json.loads(f'["uuid", "{U2}"]'))
    assert next(iter(ua.values)) is next(iter(ub.values))


def test_a_scalar_value_is_one_shared_datum_that_an_update_diff_leaves_unchanged() -> None:
    S = ovs.db.types.BaseType(ovs.db.types.StringType)
    optional = ovs.db.types.Type(S, n_min=0, n_max=1)
    a = fastdatum._fast_from_json(optional, json.loads('"router"'))
    b = fastdatum._fast_from_json(optional, json.loads('"router"'))
    assert a is b
    # An update2 diff of a scalar gives the new value as a new datum, even to clear it.
    for new in ('"patch"', '["set", []]'):
        after = a.diff(fastdatum._fast_from_json(optional, json.loads(new)))
        assert after is not a
        assert [k.value for k in a.values] == ["router"]
    # Sets are not shared (their diffs change them in place), nor are integers.
    strings = ovs.db.types.Type(S, n_min=0, n_max=sys.maxsize)
    assert fastdatum._fast_from_json(strings, "x") is not fastdatum._fast_from_json(strings, "x")
    ints = ovs.db.types.Type(ovs.db.types.BaseType(ovs.db.types.IntegerType))
    assert fastdatum._fast_from_json(ints, 7) is not fastdatum._fast_from_json(ints, 7)


def test_atom_pool_is_emptied_past_its_limit_and_values_stay_right() -> None:
    pool = fastdatum._AtomPool(2)
    a, b = pool.string("a"), pool.string("b")
    assert pool.string("a") is a
    c = pool.string("c")  # (the third value: the table is emptied first)
    assert pool.string("a") is not a and pool.string("a").value == "a"
    assert c.value == "c" and b.value == "b"
    assert pool.uuid(str(U1)).value == U1
    with pytest.raises(fastdatum._Slow):
        pool.uuid("not-a-uuid")



def _pys(type_: Any, rng: random.Random) -> list[Any]:
    """Python values (``Row.__setattr__``'s) for ``type_``: valid ones and some that are not."""
    def py(j: Any) -> Any:
        if isinstance(j, list) and len(j) == 2 and j[0] == "uuid" and j[1] in (str(U1), str(U2)):
            return uuid.UUID(j[1])
        return j
    keys = [py(a) for a in _atoms(type_.key, rng)]
    out: list[Any] = [*keys, [], keys[:1], keys, [keys[0], keys[0]], tuple(keys[:2]), set(keys[:1]) if
                      all(isinstance(k, (str, int, uuid.UUID)) for k in keys[:1]) else [], 2.5, None]
    if type_.is_map():
        vals = [py(a) for a in _atoms(type_.value, rng)]
        out += [{}, {keys[0]: vals[0]}, {k: rng.choice(vals) for k in keys if isinstance(k, (str, int, bool, uuid.UUID))}]
    return out


def _py_outcome(type_: Any, value: Any, make: Any) -> tuple[str, Any]:
    try:
        d = make(type_, value, lambda v: v)
    except ovs.db.error.Error as e:
        return "error", str(e)
    except (TypeError, AttributeError) as e:  # (python-ovs' own, for a value of no form it knows)
        return "raised", type(e).__name__
    try:
        j = _ORIG_TO_JSON(d)
    except AttributeError:  # (python-ovs takes a list for a map: its values are None)
        j = "unserialisable"
    return "ok", (sorted(((k.value, k.type.name), (v.value if v is not None else None)) for k, v in d.values.items()), j)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_from_python_gives_python_ovs_result_or_error(schema: str) -> None:
    for name, type_ in _column_types(SCHEMAS[schema]):
        rng = random.Random(name)
        for v in _pys(type_, rng):
            assert _py_outcome(type_, v, fastdatum._fast_from_python) == \
                _py_outcome(type_, v, fastdatum._ORIG_FROM_PYTHON), (name, v)
