"""Incremental handling of QoS rules (NB ``QoS`` and ``Logical_Switch.qos_rules``).

The flows of a QoS row on a switch are owned by ``("qos", qos uuid, switch key)``
(:mod:`ovn_northd_py.flows.ls_qos`).  QoS rows change no datapath or port, so they
never recompute the northd node; a change rebuilds exactly the (QoS row, switch)
pairs it affects:

* a QoS row updated or deleted: its pairs (from the index of built pairs);
* a switch's ``qos_rules`` changed: the rows added to or removed from it (a new QoS
  row reaches a switch this way: QoS rows are not root rows, a switch references
  them in the same transaction; a row dropped from its last switch is deleted).
"""

from __future__ import annotations

import uuid

from ..flows.ls_qos import build_qos_flows, qos_index, remove_qos_flows, switch_qos_keys
from ..ovsdb.connection import RowChange
from .features import FlowFeatureCtx

QOS_TABLE = "QoS"


def on_nb_flows(changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    fctx, nd = h.fctx, h.nd
    # Validate before changing anything.
    for c in changes:
        if c.table == "Logical_Switch":
            dp = nd.datapaths.get(str(c.uuid))
            if (dp is None or not dp.is_switch) and str(c.uuid) not in h.deleted:
                return False
    idx = qos_index(fctx)
    refresh: set[tuple[str, str]] = set()  # (QoS uuid, switch key)
    lists: dict[str, frozenset[str]] = {}  # switch key -> its QoS uuids now
    for c in changes:
        if c.table == QOS_TABLE:
            key = str(c.uuid)
            fctx.forget(key)  # its memoised flows are stale
            refresh.update((key, d) for d in idx.built.get(key, ()))
        elif str(c.uuid) in h.deleted:  # its QoS flows go
            refresh.update((q, str(c.uuid)) for q in idx.dp_built.get(str(c.uuid), set()))
        else:
            dp = nd.datapaths[str(c.uuid)]
            new = lists[dp.key] = switch_qos_keys(dp)
            refresh.update((q, dp.key) for q in new ^ idx.dp_built.get(dp.key, set()))
    rows = h.nb.rows(QOS_TABLE)
    for q, d in refresh:
        remove_qos_flows(q, d, fctx, h.table)
        dp = nd.datapaths.get(d)
        if dp is None:
            continue
        if d not in lists:
            lists[d] = switch_qos_keys(dp)
        row = rows.get(uuid.UUID(q))
        if row is not None and q in lists[d]:
            build_qos_flows(row, dp, fctx, h.table)
    return True
