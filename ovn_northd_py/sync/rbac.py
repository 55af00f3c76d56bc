"""SB RBAC_Role 'ovn-controller' and its permissions, as northd sets them up."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from .rows import SyncStats, insert_row, norm

ROLE = "ovn-controller"

# table -> (authorization, insert_delete, update columns)
PERMISSIONS_2303: Mapping[str, tuple[list[str], bool, list[str]]] = MappingProxyType({
    "Chassis": (["name"], True, ["nb_cfg", "external_ids", "encaps", "vtep_logical_switches", "other_config",
                                 "transport_zones"]),
    "Chassis_Private": (["name"], True, ["nb_cfg", "nb_cfg_timestamp", "chassis", "external_ids"]),
    "Encap": (["chassis_name"], True, ["type", "options", "ip"]),
    "Port_Binding": ([""], False, ["chassis", "additional_chassis", "encap", "additional_encap", "up",
                                   "virtual_parent", "options"]),
    "MAC_Binding": ([""], True, ["logical_port", "ip", "mac", "datapath", "timestamp"]),
    "Service_Monitor": ([""], False, ["status"]),
    "IGMP_Group": ([""], True, ["address", "chassis", "datapath", "ports"]),
    "Controller_Event": ([""], True, ["chassis", "event_info", "event_type", "seq_num"]),
    "FDB": ([""], True, ["dp_key", "mac", "port_key"]),
    "BFD": ([""], False, ["status"]),
})


# ... in a release with the ``rbac_2503`` behaviour (25.03, observed).
PERMISSIONS_2503: Mapping[str, tuple[list[str], bool, list[str]]] = MappingProxyType({
    **PERMISSIONS_2303,
    "Service_Monitor": (["chassis_name"], False, ["status"]),
    "IGMP_Group": (["chassis_name"], True, ["address", "chassis", "datapath", "ports", "protocol"]),
    "FDB": ([""], True, ["dp_key", "mac", "port_key", "timestamp"]),
    "BFD": (["chassis_name"], False, ["status"]),
})


# ... with the ``rbac_learned_route`` behaviour too (26.03, observed): ovn-controller writes the
# routes it learns.
PERMISSIONS_2603: Mapping[str, tuple[list[str], bool, list[str]]] = MappingProxyType({
    **PERMISSIONS_2503,
    "Learned_Route": ([""], True, ["datapath", "logical_port", "ip_prefix", "nexthop", "external_ids"]),
})


def sync_rbac(txn: Any, sb: Any, stats: SyncStats, profile: FlowProfile = DEFAULT_PROFILE) -> None:
    wanted = PERMISSIONS_2503 if profile.has("rbac_2503") else PERMISSIONS_2303
    if profile.has("rbac_learned_route"):
        wanted = PERMISSIONS_2603
    roles = [r for r in sb.rows("RBAC_Role").values() if r.name == ROLE]
    perms = sb.rows("RBAC_Permission")
    ok = False
    if len(roles) == 1:
        role = roles[0]
        have = role.permissions
        ok = set(have) == set(wanted) and all(
            norm(have[t].authorization) == norm(a) and have[t].insert_delete == d and norm(have[t].update) == norm(u)
            for t, (a, d, u) in wanted.items()
        )
    if ok:
        return
    for r in roles:
        r.delete()
    # Permissions are roots: remove the ones the old role used.
    for p in list(perms.values()):
        if p.table in wanted:
            p.delete()
    # (Rows with our own uuids, so their echo is known as ours; the referenced rows first: a
    # transaction may not name a row with a given uuid before the operation inserting it.)
    new = {}
    for t, (a, d, u) in wanted.items():
        p = insert_row(txn, "RBAC_Permission")
        p.table = t
        p.authorization = a
        p.insert_delete = d
        p.update = u
        new[t] = p
    role = insert_row(txn, "RBAC_Role")
    role.name = ROLE
    role.permissions = new
    stats.bump(stats.inserted, "RBAC_Role")
