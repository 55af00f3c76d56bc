"""SB ACL_ID allocation (:func:`ovn_northd_py.sync.acl_ids.desired_acl_ids`)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

from ovn_northd_py.northd.build import idl_row_order
from ovn_northd_py.sync.acl_ids import desired_acl_ids

PERSIST = {"persist-established": "true"}


def acls(*specs: tuple[str, dict[str, str]]) -> dict[uuid.UUID, SimpleNamespace]:
    out = {}
    for i, (action, options) in enumerate(specs):
        u = uuid.UUID(int=(i + 1) * 0x1111_0000_0000_0000_0000_0000_0000_0001)
        out[u] = SimpleNamespace(action=action, options=options)
    return out


def test_only_allow_related_acls_with_persist_established_get_ids() -> None:
    rows = acls(("allow-related", PERSIST), ("allow", PERSIST), ("allow-related", {}),
                ("allow-related", {"persist-established": "false"}))
    assert list(desired_acl_ids(rows, {}).values()) == [1]


def test_existing_ids_are_kept_and_new_acls_take_the_lowest_free_in_table_walk_order() -> None:
    rows = acls(*[("allow-related", PERSIST)] * 4)
    keys = [str(u) for u in rows]
    got = desired_acl_ids(rows, {keys[0]: 2, keys[1]: 4, "gone": 1})
    assert got[keys[0]] == 2 and got[keys[1]] == 4
    fresh = [k for k in idl_row_order(keys) if k in (keys[2], keys[3])]
    assert [got[k] for k in fresh] == [1, 3]
