"""The schema-derived list of others' rows that reference ours, and the referential-integrity error parser."""

from __future__ import annotations

import json

from ovn_northd_py.sync.foreign import (
    OWNED_TABLES,
    SB_SCHEMA,
    STRONG_REFERRERS,
    referential_integrity_rows,
    referrer_cleanup_ops,
    strong_referrers,
)


def test_strong_referrers_come_from_the_schema_and_skip_owned_tables():
    schema = json.loads(SB_SCHEMA.read_text())
    assert strong_referrers(schema) == STRONG_REFERRERS
    assert ("MAC_Binding", "datapath", False) in STRONG_REFERRERS["Datapath_Binding"]
    for refs in STRONG_REFERRERS.values():
        for table, col, _ in refs:
            assert table not in OWNED_TABLES
            assert schema["tables"][table]["columns"][col]["type"]["key"].get("refType", "strong") == "strong"
    # Weak references (IGMP_Group.datapath) are not referential-integrity hazards.
    assert all(t != "IGMP_Group" for refs in STRONG_REFERRERS.values() for t, _, _ in refs)
    # Treating a table as ours removes it from the list.
    assert "Datapath_Binding" not in strong_referrers(schema, OWNED_TABLES | {"MAC_Binding"})


def test_referential_integrity_error_names_the_rows_and_yields_deletes():
    err = ('{"details":"cannot delete Datapath_Binding row cf029278-3ce2-4270-ac68-601801390cc5 because of '
           '3 remaining reference(s)","error":"referential integrity violation"}')
    rows = referential_integrity_rows(err)
    assert rows == [("Datapath_Binding", "cf029278-3ce2-4270-ac68-601801390cc5")]
    ops = referrer_cleanup_ops(*rows[0])
    assert {"op": "delete", "table": "MAC_Binding",
            "where": [["datapath", "==", ["uuid", "cf029278-3ce2-4270-ac68-601801390cc5"]]]} in ops
    assert referential_integrity_rows("constraint violation: something else") == []
    assert referrer_cleanup_ops("Address_Set", "cf029278-3ce2-4270-ac68-601801390cc5") == []
