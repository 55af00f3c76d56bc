"""NB write-back of network functions (NB 7.18, OVN 26.03, behaviour ``network_function``):
``Network_Function_Group.network_function_active`` names the network function the group's
traffic goes to (``man ovn-nb``: "populated by northd based on health monitoring status").

Observed on the reference (sid's ovn-northd 26.03.1), without health checks: the first of the
group's ``network_function`` set in uuid order, for every group (named by an ACL or not); empty
for a group without network functions (:func:`~ovn_northd_py.flows.ls_network_function.active_nf`).
"""

from __future__ import annotations

from typing import Any

from ..flows.lb_health import nf_online_pairs
from ..flows.ls_network_function import active_nf


def sync_nf_active(nb: Any, sb: Any) -> None:
    """Set every Network_Function_Group's ``network_function_active`` to its active network function
    (health: SB ``sb``'s Service_Monitor rows)."""
    online = nf_online_pairs(sb)
    for g in nb.rows("Network_Function_Group").values():
        nf = active_nf(g, online)
        want = [nf] if nf is not None else []
        have = list(g.network_function_active)
        if [r.uuid for r in have] != [r.uuid for r in want]:
            g.network_function_active = want
