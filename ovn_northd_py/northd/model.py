"""The northd data: datapaths and ports derived from an NB snapshot.

This is the model every later stage reads (SB sync, flow builders).  It holds
plain Python values, not IDL rows, except for ``nb`` back-references that
builders may read for feature columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LS = "ls"
LR = "lr"


@dataclass(slots=True, eq=False)
class Datapath:
    key: str  # NB row uuid, as text; the stable identity of the datapath
    kind: str  # LS or LR
    name: str
    nb: Any  # the NB IDL row
    index: int = -1  # dense index for datapath-group bitmaps
    tunnel_key: int = 0
    ports: list[Port] = field(default_factory=list)
    external_ids: dict[str, str] = field(default_factory=dict)
    # A switch's load balancers taken from the routers it is attached to (NB_Global
    # options:install_ls_lb_from_router=true; none otherwise): NB Load_Balancer rows.
    lbs_from_routers: list[Any] = field(default_factory=list)
    # The behaviours of the release's profile (``FlowProfile.behaviours``) the model reads where it
    # has only the datapath at hand (e.g. ``nat_rejects_invalid``: northd/nat_rules.py).
    behaviours: frozenset[str] = frozenset()

    @property
    def is_switch(self) -> bool:
        return self.kind == LS

    @property
    def is_router(self) -> bool:
        return self.kind == LR

    def __repr__(self) -> str:
        return f"Datapath({self.kind}:{self.name})"


@dataclass(slots=True, eq=False)
class Port:
    name: str  # logical_port in SB
    # "lsp", "lrp", "crp" (a chassisredirect port derived from a gateway LRP) or "lcrp" (one derived
    # from the switch port peering a centralized gateway LRP: northd/build.py make_switch_crp) or
    # "mirror" (26.03: the ``mp-<switch>-<sink>`` port of an lport mirror, make_mirror_ports)
    kind: str
    dp: Datapath
    nb: Any  # NB IDL row (for "crp": the LRP row)
    nb_key: str  # NB row uuid as text
    sb_type: str = ""
    options: dict[str, str] = field(default_factory=dict)
    mac: list[str] = field(default_factory=list)
    port_security: list[str] = field(default_factory=list)
    parent_port: str | None = None
    tag: int | None = None
    external_ids: dict[str, str] = field(default_factory=dict)
    nat_addresses: list[str] = field(default_factory=list)
    ha_group: str | None = None  # SB HA_Chassis_Group name
    requested_chassis: str | None = None  # chassis name or hostname
    peer: Port | None = None
    crp: Port | None = None  # on a distributed gateway port (or the switch port of an "lcrp"): its chassisredirect port
    tunnel_key: int = 0
    enabled: bool = True
    has_unknown: bool = False
    is_router_lsp: bool = False
    dynamic_addresses: str | None = None  # IPAM's "MAC [IPV4] [IPV6]" for a port asking for "dynamic"
    garp_entry: str | None = None  # the nat_addresses entry of the router port's own addresses
    mirror_port: str | None = None  # a "mirror" port: its sink, the switch port the mirror sends to

    def __repr__(self) -> str:
        return f"Port({self.kind}:{self.name})"


@dataclass(slots=True)
class HaChassis:
    chassis_name: str
    priority: int


@dataclass(slots=True)
class HaGroup:
    name: str
    chassis: list[HaChassis]
    external_ids: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Northd:
    datapaths: dict[str, Datapath] = field(default_factory=dict)  # by NB uuid text
    ports: dict[str, Port] = field(default_factory=dict)  # by logical_port name
    ha_groups: dict[str, HaGroup] = field(default_factory=dict)  # by SB group name
    by_index: list[Datapath] = field(default_factory=list)  # the datapaths (in the order they came)
    # Datapath-group bit -> datapath: ``slots[dp.index] is dp``; a deleted datapath leaves None (its
    # bit is never given to another datapath until the next full build).
    slots: list[Datapath | None] = field(default_factory=list)
    name_winners: dict[str, tuple[str, str]] = field(default_factory=dict)  # port -> (dp key, row uuid)
    behaviours: frozenset[str] = frozenset()  # the release profile's (new datapaths take them)
    # Built with NB_Global options:install_ls_lb_from_router: switches hold their routers' load
    # balancers (``Datapath.lbs_from_routers``), which only a full build keeps right.
    lbs_from_routers: bool = False

    def add_datapath(self, dp: Datapath) -> None:
        """Register ``dp`` under the next datapath-group bit."""
        dp.index = len(self.slots)
        self.slots.append(dp)
        self.by_index.append(dp)
        self.datapaths[dp.key] = dp

    def remove_datapath(self, dp: Datapath) -> None:
        """Unregister ``dp`` (its bit stays unused); its ports are the caller's business."""
        del self.datapaths[dp.key]
        self.by_index.remove(dp)
        self.slots[dp.index] = None

    def switches(self) -> list[Datapath]:
        return [d for d in self.by_index if d.kind == LS]

    def routers(self) -> list[Datapath]:
        return [d for d in self.by_index if d.kind == LR]
