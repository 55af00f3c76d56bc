"""The names of the SB row indexes (``RowIndex``, :mod:`ovn_northd_py.engine.nodes.inputs`) the
engine keeps on its SB input: one name, one (table, key) everywhere it is added or looked up.

Added by the SB sync node (and the NB sync node, which shares the Port_Binding one), by
``MonitorSync`` and by the features that register ``sb_indexes`` (their key functions are theirs).
"""

from __future__ import annotations

from typing import Final

PB_BY_NAME: Final = "pb_by_name"  # Port_Binding by logical_port
DP_BY_NB_KEY: Final = "dp_by_nb_key"  # Datapath_Binding by its NB switch / router uuid
MC_BY_KEY: Final = "mc_by_key"  # Multicast_Group by (datapath, name)
SM_BY_KEY: Final = "sm_by_key"  # Service_Monitor by (logical_port, ip, port, protocol)
ADDRESS_SET_BY_NAME: Final = "acl:sb_address_set"  # Address_Set by name (ACL feature)
PORT_GROUP_BY_NAME: Final = "acl:sb_port_group"  # Port_Group by name (ACL feature)
METER_BY_NAME: Final = "acl:sb_meter"  # Meter by name (ACL feature)
DNS_BY_ID: Final = "dns_by_id"  # DNS by external_ids:dns_id (services feature)
MIRROR_BY_NAME: Final = "mirror_by_name"  # Mirror by name (mirror feature)
SMB_BY_KEY: Final = "smb_by_key"  # Static_MAC_Binding by (logical_port, ip) (static MAC feature)
CTV_BY_CHASSIS: Final = "ctv_by_chassis"  # Chassis_Template_Var by chassis (template vars feature)
