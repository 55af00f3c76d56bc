"""Multicast group names and tunnel keys used by ovn-northd (OVN 23.03).

Multicast_Group.tunnel_key lives in 32768..65535 (``man ovn-sb``), above the
logical port keys (1..32767), so an egress port key can name either.

The reserved groups below have fixed keys.  They were verified against the
reference ovn-northd 23.03.1 (Debian 12) by building a network that makes each
one appear and reading ``ovn-sbctl list Multicast_Group``:

==================  =====  ==============================================
name                key    members (enabled ports only; a group with no
                           member is not written)
==================  =====  ==============================================
_MC_flood           32768  switch: every port
_MC_unknown         32769  switch: ports whose addresses include "unknown"
_MC_mrouter_flood   32770  switch: ports with
                           options:mcast_flood_reports=true and
                           router-type ports whose (enabled) router has
                           options:mcast_relay=true (with or without
                           mcast_snoop on the switch)
_MC_static          32771  switch: ports with options:mcast_flood=true
                           (any type); router: router ports with
                           options:mcast_flood=true (with or without
                           options:mcast_relay)
_MC_flood_l2        32772  switch: every port except router-type ports
                           (present with or without mcast_snoop)
==================  =====  ==============================================

There is no ``_MC_mrouter_static`` group in 23.03 (it existed in older OVN
releases); the only ``_MC_*`` names in the 23.03 binary are the five above.

Groups learnt by IGMP/MLD snooping (SB IGMP_Group rows) are named after the
multicast address (e.g. ``"239.1.1.1"``) and get dynamic keys above the
reserved ones.  The reference starts its search *after* 32773: on a fresh
switch the first learnt group got 32774, the second 32775; after deleting the
32774 group and adding two more, they got 32774 and 32776 (free keys are reused,
the search restarts from 32773 on every run and is not advanced by keys already
in use).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

MCAST_KEY_MIN: Final = 32768
MCAST_KEY_MAX: Final = 65535

MC_FLOOD: Final = "_MC_flood"
MC_UNKNOWN: Final = "_MC_unknown"
MC_MROUTER_FLOOD: Final = "_MC_mrouter_flood"
MC_STATIC: Final = "_MC_static"
MC_FLOOD_L2: Final = "_MC_flood_l2"

MC_FLOOD_KEY: Final = 32768
MC_UNKNOWN_KEY: Final = 32769
MC_MROUTER_FLOOD_KEY: Final = 32770
MC_STATIC_KEY: Final = 32771
MC_FLOOD_L2_KEY: Final = 32772

RESERVED_MULTICAST_GROUPS: Final[Mapping[str, int]] = MappingProxyType(
    {
        MC_FLOOD: MC_FLOOD_KEY,
        MC_UNKNOWN: MC_UNKNOWN_KEY,
        MC_MROUTER_FLOOD: MC_MROUTER_FLOOD_KEY,
        MC_STATIC: MC_STATIC_KEY,
        MC_FLOOD_L2: MC_FLOOD_L2_KEY,
    }
)

# Dynamic (IGMP/MLD learnt) groups.  The pool's search hint starts at
# IP_MCAST_KEY_MIN, so the first key handed out is IP_MCAST_KEY_MIN + 1.
IP_MCAST_KEY_MIN: Final = 32773
IP_MCAST_KEY_MAX: Final = MCAST_KEY_MAX
IP_MCAST_FIRST_KEY: Final = IP_MCAST_KEY_MIN + 1


def reserved_key(name: str) -> int | None:
    """The fixed tunnel key of a reserved ``_MC_*`` group, or None."""
    return RESERVED_MULTICAST_GROUPS.get(name)


def is_reserved_key(key: int) -> bool:
    return MC_FLOOD_KEY <= key <= MC_FLOOD_L2_KEY
