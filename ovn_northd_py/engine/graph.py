"""The engine graph, declared in one place.

    nb ─┬──────────────► northd ──┬──► sb_sync   (SB tables except flows, through the IDL)
    sb ─┴─(Chassis/Encap)─┘       ├──► nb_sync   (NB_Global cfg/options, LSP.up)
    nb ───────────────────────────┴──► lflow     (FlowTable; written by the lean flow writer)
    sb ──(Service_Monitor status, Port_Binding up)──► lflow  (health-checked LB backends)

The flow writer (sync/flow_writer.py) plans the flow/group/load-balancer changes
of the same run, and the daemon attaches them to that run's SB IDL transaction:
one run, one SB transaction.  New Datapath_Binding rows are inserted with a
uuid that is final at once (``sync/rows.insert_row``), so flows on them can go
in the same transaction.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ovsdb.connection import DbConnection
from . import feature_acl, feature_lb, feature_qos, feature_routes, feature_services  # noqa: F401  (register the features first)
from .engine import Engine
from .feature_bfd import BFD  # noqa: F401  (registers the feature)
from .feature_mirror import MIRROR  # noqa: F401  (registers the feature)
from .feature_static_mac import STATIC_MAC  # noqa: F401  (registers the feature)
from .feature_template_vars import TEMPLATE_VARS  # noqa: F401  (registers the feature)
from .nodes.inputs import DbInput
from .nodes.lflow import LflowNode
from .nodes.nb_sync import NbSyncNode
from .nodes.northd import NorthdNode
from .nodes.sb_sync import SbSyncNode


@dataclass(slots=True)
class Graph:
    engine: Engine
    nb_in: DbInput
    sb_in: DbInput
    northd: NorthdNode
    sb_sync: SbSyncNode
    nb_sync: NbSyncNode
    lflow: LflowNode


def build_graph(nb: DbConnection, sb: DbConnection, engine_cls: type[Engine] = Engine) -> Graph:
    nb_in = DbInput("nb", nb)
    sb_in = DbInput("sb", sb)
    northd = NorthdNode(nb_in, sb_in)
    sb_sync = SbSyncNode(northd, sb_in, nb_in)
    nb_sync = NbSyncNode(northd, sb_in, nb_in)
    lflow = LflowNode(northd, nb_in, sb_in)
    engine = engine_cls([nb_in, sb_in, northd, sb_sync, nb_sync, lflow])
    return Graph(engine, nb_in, sb_in, northd, sb_sync, nb_sync, lflow)
