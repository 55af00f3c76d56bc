"""The engine graph, declared in one place: every node, every input edge with its handler, every
feature with the NB/SB tables and columns it takes.  Nothing registers itself at import; each
:func:`build_graph` call makes a new graph with its own node data and feature state (the
``--check-incremental`` shadow builds its own).  ``ovn-northd-py --dump-graph`` prints it
(:func:`dump`); ``tests/unit/golden/engine_graph.txt`` pins that print.

The edges (``node <- input: handler``)::

    northd  <- nb: on_nb       (datapaths, ports, tunnel keys; the features' tables are skipped)
    northd  <- sb: on_sb       (Chassis / Encap recompute; another northd's tunnel keys win)
    sb_sync <- northd: on_northd   (Port_Binding / Multicast_Group of what changed; features' on_northd_sb)
    sb_sync <- sb: on_sb       (our SB rows changed: checked and repaired; features' on_sb)
    sb_sync <- nb: on_nb       (the features' on_nb_sb: Port_Group, Address_Set, Meter, ...)
    nb_sync <- northd: on_northd   (NB_Global, Logical_Switch_Port up / tag / dynamic_addresses)
    nb_sync <- sb: on_sb       (Port_Binding up, SB_Global nb_cfg)
    nb_sync <- nb: on_nb       (NB_Global options)
    lflow   <- northd: on_northd   (flows of the ports / switches / routers that changed)
    lflow   <- nb: on_nb       (the features' on_nb_flows)
    lflow   <- sb: on_sb       (the features' on_sb_flows: health-checked load-balancer backends)

The flow writer (sync/flow_writer.py) plans the flow/group/load-balancer changes
of the same run, and the daemon attaches them to that run's SB IDL transaction:
one run, one SB transaction.  New Datapath_Binding rows are inserted with a
uuid that is final at once (``sync/rows.insert_row``), so flows on them can go
in the same transaction.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, cast

from ..ovsdb.connection import DbConnection
from ..sync.dns import dns_key
from ..sync.indexes import (
    ADDRESS_SET_BY_NAME,
    CTV_BY_CHASSIS,
    DNS_BY_ID,
    METER_BY_NAME,
    MIRROR_BY_NAME,
    PORT_GROUP_BY_NAME,
    SMB_BY_KEY,
)
from ..sync.mirrors import mirror_key
from ..sync.service_monitor import MonitorSync
from ..sync.static_mac_bindings import smb_key
from ..sync.template_vars import ctv_key
from . import (
    feature_acl,
    feature_bfd,
    feature_dhcp_relay,
    feature_dynamic_routing,
    feature_fdb,
    feature_lb,
    feature_lsp_health,
    feature_mirror,
    feature_network_function,
    feature_qos,
    feature_routes,
    feature_services,
    feature_static_mac,
    feature_template_vars,
)
from .engine import Engine, InputNode
from .features import Feature, FeatureSet, no_flows
from .nodes.inputs import DbInput
from .nodes.lflow import LflowNode
from .nodes.nb_sync import NbSyncNode
from .nodes.northd import NorthdNode
from .nodes.sb_sync import SbSyncNode


def _name(row: Any) -> Hashable | None:
    name: str = row.name
    return name


def build_features(monitors: MonitorSync) -> FeatureSet:
    """The features of one graph, in the order their hooks run, each with fresh state.

    (Over 100 lines on purpose: it is the graph's declaration, one literal entry per feature, kept
    in one list so that the whole set reads -- and is reviewed -- in one place.)"""
    acl_sb = feature_acl.AclSb()
    lb_sb = feature_lb.LbMonitors(monitors)
    mirrors = feature_mirror.Mirrors()
    smb = feature_static_mac.StaticMacBindings()
    ctv = feature_template_vars.TemplateVars()
    return FeatureSet([
        Feature(
            "acl",
            # (Sample, Sample_Collector, Sampling_App and SB ACL_ID: 25.03's schemas only.)
            nb_tables=frozenset({"ACL", "Port_Group", "Address_Set", "Meter", "Meter_Band", "Sample",
                                 "Sample_Collector", "Sampling_App"}),
            nb_columns={"Logical_Switch": frozenset({"acls"})},
            sb_tables=frozenset({"Address_Set", "Port_Group", "Meter", "Meter_Band", "ACL_ID"}),
            sb_indexes={
                ADDRESS_SET_BY_NAME: ("Address_Set", _name),
                PORT_GROUP_BY_NAME: ("Port_Group", _name),
                METER_BY_NAME: ("Meter", _name),
            },
            on_nb_flows=feature_acl.on_nb_flows,
            on_sb_flows=feature_acl.on_acl_id_sb,
            on_nb_sb=acl_sb.on_nb_sb,
            sync_sb=acl_sb.sync_sb,
            on_northd_sb=acl_sb.on_northd_sb,
            on_sb=acl_sb.on_sb,
            # (SB Address_Set holds an NB set's addresses verbatim; flows only name the set.)
            passthrough_columns={"Address_Set": frozenset({"addresses"})},
            passthrough=acl_sb.passthrough,
        ),
        Feature(
            "lb_nat",
            nb_tables=frozenset({"Load_Balancer", "Load_Balancer_Group", "Load_Balancer_Health_Check", "NAT"}),
            nb_columns={
                "Logical_Switch": frozenset({"load_balancer", "load_balancer_group"}),
                "Logical_Router": frozenset({"load_balancer", "load_balancer_group", "nat"}),
            },
            sb_tables=frozenset({"Service_Monitor"}),
            sb_watch=frozenset({"Port_Binding"}),  # ``up`` of health-checked backends
            on_nb_flows=feature_lb.on_nb_flows,
            on_northd_flows=feature_lb.on_mapped_ports,
            on_sb_flows=feature_lb.on_health_sb,
            on_flows_recomputed=feature_lb.warn_unused_lbs,
            on_nb_sb=lb_sb.on_nb_sb,
            sync_sb=lb_sb.sync_sb,
            on_northd_sb=lb_sb.on_northd_sb,
            on_sb=lb_sb.on_sb,
        ),
        Feature(
            "network_function",  # (26.03's schema: the tables are absent from older ones)
            nb_tables=feature_network_function.NF_TABLES,
            sb_watch=frozenset({"Service_Monitor"}),  # health checks decide the active network function
            on_nb_flows=feature_network_function.on_nb_flows,
            on_northd_flows=feature_network_function.on_northd_flows,
            on_sb_flows=feature_network_function.on_sb_flows,
            on_nb_sb=lb_sb.on_nb_resync,  # (their Service_Monitor rows)
            sync_sb=feature_lsp_health.monitors_synced_by_lb,
        ),
        Feature(
            "lsp_health_check",  # (26.03's schema)
            nb_tables=frozenset({"Logical_Switch_Port_Health_Check"}),
            on_nb_flows=feature_lsp_health.on_nb_flows,
            on_nb_sb=lb_sb.on_nb_resync,  # (their Service_Monitor rows)
            sync_sb=feature_lsp_health.monitors_synced_by_lb,
        ),
        Feature(
            "qos",
            nb_tables=frozenset({"QoS"}),
            nb_columns={"Logical_Switch": frozenset({"qos_rules"})},
            on_nb_flows=feature_qos.on_nb_flows,
        ),
        Feature(
            "routes",
            nb_tables=frozenset({"Logical_Router_Static_Route", "Logical_Router_Policy"}),
            nb_columns={"Logical_Router": frozenset({"static_routes", "policies"})},
            sb_tables=frozenset({"ECMP_Nexthop"}),  # (25.03's SB schema on)
            on_nb_flows=feature_routes.on_nb_flows,
            on_nb_sb=feature_routes.on_ecmp_nexthop_changes,
            sync_sb=feature_routes.sync_ecmp_nexthops,
            on_northd_sb=feature_routes.on_ecmp_nexthop_changes,
            on_sb=feature_routes.on_ecmp_nexthop_changes,
        ),
        Feature(
            "dynamic_routing",  # (25.03's SB schema on: Advertised_Route, Learned_Route)
            nb_tables=frozenset(),
            sb_tables=frozenset({"Advertised_Route", "Advertised_MAC_Binding"}),  # (26.03: the latter)
            sb_watch=frozenset({"Learned_Route"}),  # ovn-controller's learned routes: routing flows
            follows=("routes", "lb_nat"),  # static routes, NAT and load balancers are advertised
            on_sb_flows=feature_dynamic_routing.on_learned_routes,
            on_nb_sb=feature_dynamic_routing.on_advertised_route_changes,
            sync_sb=feature_dynamic_routing.sync_advertised_routes,
            on_northd_sb=feature_dynamic_routing.on_advertised_route_changes,
            on_sb=feature_dynamic_routing.on_advertised_route_changes,
        ),
        Feature(
            "dhcp",
            nb_tables=frozenset({"DHCP_Options"}),
            on_nb_flows=feature_services.on_dhcp_flows,
        ),
        Feature(
            "dhcp_relay",  # (25.03's schema: the table and column are absent from 23.03's)
            nb_tables=frozenset({"DHCP_Relay"}),
            nb_columns={"Logical_Router_Port": frozenset({"dhcp_relay"})},
            on_nb_flows=feature_dhcp_relay.on_nb_flows,
            on_northd_flows=feature_dhcp_relay.on_northd_flows,
        ),
        Feature(
            "dns",
            nb_tables=frozenset({"DNS"}),
            nb_columns={"Logical_Switch": frozenset({"dns_records"})},
            sb_tables=frozenset({"DNS"}),
            sb_indexes={DNS_BY_ID: ("DNS", dns_key)},
            on_nb_flows=feature_services.on_dns_flows,
            on_nb_sb=feature_services.on_dns_nb_sb,
            sync_sb=feature_services.sync_dns,
            on_sb=feature_services.on_dns_sb,
        ),
        Feature(
            "bfd",
            nb_tables=frozenset({"BFD"}),
            sb_tables=frozenset({"BFD"}),
            follows=("routes",),  # routes decide which BFD sessions are used (their status)
            on_nb_flows=feature_bfd.on_nb_flows,
            on_nb_sb=feature_bfd.on_nb_sb,
            sync_sb=feature_bfd.sync_sb,
            on_northd_sb=feature_bfd.on_northd_sb,
            on_sb=feature_bfd.on_sb,
        ),
        Feature(
            "mirror",
            nb_tables=frozenset({"Mirror", "Mirror_Rule"}),  # (Mirror_Rule: 26.03's schema)
            nb_columns={"Logical_Switch_Port": frozenset({"mirror_rules"})},
            sb_tables=frozenset({"Mirror"}),
            sb_indexes={MIRROR_BY_NAME: ("Mirror", mirror_key)},
            on_nb_flows=feature_mirror.on_nb_flows,  # (no logical flow before 26.03's lport mirrors)
            on_nb_sb=mirrors.on_nb_sb,
            sync_sb=mirrors.sync_sb,
            sync_sb_first=True,  # Port_Binding.mirror_rules names the rows
            on_sb=feature_mirror.on_sb,
        ),
        Feature(
            "static_mac_binding",
            nb_tables=frozenset({"Static_MAC_Binding"}),
            sb_tables=frozenset({"Static_MAC_Binding"}),
            sb_indexes={SMB_BY_KEY: ("Static_MAC_Binding", smb_key)},
            on_nb_flows=no_flows,  # (ovn-controller reads the SB rows; no logical flow in 23.03)
            on_nb_sb=smb.on_nb_sb,
            sync_sb=smb.sync_sb,
            on_northd_sb=smb.on_northd_sb,
            on_sb=feature_static_mac.on_sb,
        ),
        Feature(
            "chassis_template_var",
            nb_tables=frozenset({"Chassis_Template_Var"}),
            sb_tables=frozenset({"Chassis_Template_Var"}),
            sb_indexes={CTV_BY_CHASSIS: ("Chassis_Template_Var", ctv_key)},
            on_nb_flows=no_flows,  # (ovn-controller reads the SB rows; no logical flow in 23.03)
            on_nb_sb=ctv.on_nb_sb,
            sync_sb=ctv.sync_sb,
            on_sb=feature_template_vars.on_sb,
        ),
        Feature(
            "fdb",
            nb_tables=frozenset(),
            sb_watch=frozenset({"FDB"}),  # ovn-controller's rows: the stale ones are deleted
            sync_sb=feature_fdb.sync_sb,
            on_sb=feature_fdb.on_sb,
        ),
    ])


@dataclass(slots=True)
class Graph:
    engine: Engine
    nb_in: DbInput
    sb_in: DbInput
    northd: NorthdNode
    sb_sync: SbSyncNode
    nb_sync: NbSyncNode
    lflow: LflowNode
    features: FeatureSet


def build_graph(nb: DbConnection, sb: DbConnection, engine_cls: type[Engine] = Engine) -> Graph:
    nb_in = DbInput("nb", nb)
    sb_in = DbInput("sb", sb)
    features = build_features(MonitorSync(sb_in))
    northd = NorthdNode(nb_in, sb_in, features)
    northd.add_input(nb_in, northd.on_nb)
    northd.add_input(sb_in, northd.on_sb)
    sb_sync = SbSyncNode(northd, sb_in, nb_in, features)
    sb_sync.add_input(northd, sb_sync.on_northd)
    sb_sync.add_input(sb_in, sb_sync.on_sb)
    sb_sync.add_input(nb_in, sb_sync.on_nb)
    nb_sync = NbSyncNode(northd, sb_in, nb_in)
    nb_sync.add_input(northd, nb_sync.on_northd)
    nb_sync.add_input(sb_in, nb_sync.on_sb)
    nb_sync.add_input(nb_in, nb_sync.on_nb)
    lflow = LflowNode(northd, nb_in, sb_in, features)
    lflow.add_input(northd, lflow.on_northd)
    lflow.add_input(nb_in, lflow.on_nb)
    lflow.add_input(sb_in, lflow.on_sb)
    engine = engine_cls([nb_in, sb_in, northd, sb_sync, nb_sync, lflow])
    return Graph(engine, nb_in, sb_in, northd, sb_sync, nb_sync, lflow, features)


# --------------------------------------------------------------------------- --dump-graph

_HOOKS = ("on_nb_flows", "on_northd_flows", "on_sb_flows", "on_flows_recomputed",
          "on_nb_sb", "sync_sb", "on_northd_sb", "on_sb")


class _NoRows:
    """A stand-in connection with no rows, to build a graph only to print it."""

    def rows(self, _table: str) -> dict[Any, Any]:
        return {}


def dump(graph: Graph | None = None) -> str:
    """The graph as text: nodes in run order with their input edges and handlers, the features
    with their tables, columns and hooks, and the NB/SB table (column) -> feature map."""
    if graph is None:
        none = cast(DbConnection, _NoRows())
        graph = build_graph(none, none)
    out = ["nodes (in run order):"]
    for n in graph.engine.nodes:
        out.append(f"  {n.name}" + ("  (input)" if isinstance(n, InputNode) else ""))
        for e in n.inputs:
            out.append(f"    <- {e.node.name}: {e.handler_name}")
    out.append("edges:")
    for n in graph.engine.nodes:
        for e in n.inputs:
            out.append(f"  {e.node.name} -> {n.name} [{e.handler_name}]")
    out.append("features (in hook order):")
    nb_map: dict[str, str] = {}
    sb_map: dict[str, list[str]] = {}
    for f in graph.features:
        out.append(f"  {f.name}")
        out.append(f"    nb tables: {', '.join(sorted(f.nb_tables)) or '-'}")
        cols = [f"{t}.{c}" for t, cs in sorted(f.nb_columns.items()) for c in sorted(cs)]
        out.append(f"    nb columns: {', '.join(cols) or '-'}")
        out.append(f"    sb tables: {', '.join(sorted(f.sb_tables)) or '-'}")
        if f.sb_watch:
            out.append(f"    sb watched: {', '.join(sorted(f.sb_watch))}")
        if f.sb_indexes:
            idx = [f"{name} ({table})" for name, (table, _k) in sorted(f.sb_indexes.items())]
            out.append(f"    sb indexes: {', '.join(idx)}")
        if f.follows:
            out.append(f"    follows: {', '.join(f.follows)}")
        if f.passthrough is not None:
            cols = [f"{t}.{c}" for t, cs in sorted(f.passthrough_columns.items()) for c in sorted(cs)]
            out.append(f"    passes through: {', '.join(cols)}")
        hooks = [h for h in _HOOKS if getattr(f, h) is not None]
        out.append(f"    hooks: {', '.join(hooks)}" + (" (sync_sb first)" if f.sync_sb_first else ""))
        for t in f.nb_tables:
            nb_map[t] = f.name
        for t, cs in f.nb_columns.items():
            for c in cs:
                nb_map[f"{t}.{c}"] = f.name
        for t in f.sb_tables:
            sb_map.setdefault(t, []).append(f.name)
        for t in f.sb_watch:
            sb_map.setdefault(t, []).append(f"{f.name} (watch)")
    out.append("NB table -> feature:")
    out += [f"  {t} -> {nb_map[t]}" for t in sorted(nb_map)]
    out.append("SB table -> feature:")
    out += [f"  {t} -> {', '.join(sb_map[t])}" for t in sorted(sb_map)]
    return "\n".join(out) + "\n"
