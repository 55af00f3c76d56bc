"""Switch ports' health checks (NB 7.18, OVN 26.03, behaviour ``lsp_health_checks``):
``Logical_Switch_Port.health_checks`` -> ``Logical_Switch_Port_Health_Check`` rows -> SB
Service_Monitor rows of type ``logical-switch-port`` (:func:`..sync.service_monitor.lsp_monitors`,
synced with the load balancers' by the lb feature's :class:`..sync.service_monitor.MonitorSync`), the
``ls_in_arp_rsp`` flows answering for their source IPs (the port's flows), and NB ``status``
written back from SB (:func:`..sync.service_monitor.sync_lsp_health_status`, the nb_sync node).

* NB ``Logical_Switch_Port_Health_Check`` changes (:func:`on_nb_flows`): the flows of every port
  naming one are rebuilt (few rows: no finer bookkeeping) and the Service_Monitor table synced
  again (the lb feature's ``on_nb_resync``).  A port's ``health_checks`` column is a port update
  (the northd node rebuilds its flows; ``MonitorSync.on_ports`` syncs the rows).
"""

from __future__ import annotations

from ..flows import build_port_flows
from ..flows.owners import port_owner
from ..ovsdb.connection import RowChange
from .features import FlowFeatureCtx, SbFeatureCtx


def on_nb_flows(_changes: list[RowChange], h: FlowFeatureCtx) -> bool:
    for p in list(h.nd.ports.values()):
        if p.kind == "lsp" and getattr(p.nb, "health_checks", None):
            h.table.remove_owner(port_owner(p))
            build_port_flows(p, h.fctx, h.table)
    return True


def monitors_synced_by_lb(_h: SbFeatureCtx) -> None:
    """``sync_sb`` of the features whose Service_Monitor rows the lb feature's full sync writes (a
    recompute syncs the table there once); declared so that their ``on_nb_sb`` is called."""
