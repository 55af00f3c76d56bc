"""MAC learning on switch ports: ``ls_in_lookup_fdb`` and ``ls_in_put_fdb``.

A port learns MACs when it is a plain VIF (type ``""``, child ports included), has
``unknown`` among its addresses and no usable port_security entry
(:func:`~.ls_port_security.has_port_security`: ``"bogus"`` or ``""`` alone do not count).  Observed: the flows are
added for disabled ports too, and not for localport, vtep, l2gateway, virtual or
external ports with ``unknown``; a localnet port learns under the same conditions when
its ``options:localnet_learn_fdb`` is true (any case); 25.03: a ``switch`` port too.
"""

from __future__ import annotations

from ..lflow.stages import LS_IN_LOOKUP_FDB, LS_IN_PUT_FDB
from ..lflow.table import FlowTable
from ..northd.model import Port
from .context import FlowCtx, hint
from .ls_port_security import has_port_security
from .owners import port_owner
from .registers import REGBIT_LKUP_FDB


def learns_macs(port: Port) -> bool:
    if port.kind != "lsp" or not port.has_unknown or has_port_security(port):
        return False
    if port.sb_type == "localnet":
        return str(port.nb.options.get("localnet_learn_fdb", "")).lower() == "true"
    # 25.03 (switch_peer_ports): a port of type "switch" (its Port_Binding a patch port) has an
    # implicit "unknown" and learns too (man ovn-northd, Lookup MAC learning table).
    return port.sb_type == "" or (port.nb.type == "switch" and port.sb_type == "patch")


def build_lsp_fdb_flows(port: Port, ctx: FlowCtx, table: FlowTable) -> None:
    if not learns_macs(port):
        return
    owner = port_owner(port)
    h = hint(port.nb_key)
    inport = f'inport == "{port.name}"'
    # 25.03: a localnet port's lookup does not override what a VIF learnt (flags.localnet).
    localnet = "flags.localnet = 1; " if port.sb_type == "localnet" and ctx.profile.has("fdb_localnet_flag") else ""
    table.add(
        port.dp.index,
        LS_IN_LOOKUP_FDB,
        100,
        inport,
        f"{localnet}{REGBIT_LKUP_FDB} = lookup_fdb(inport, eth.src); next;",
        hint=h,
        owner=owner,
        io_port=port.name,
    )
    table.add(
        port.dp.index,
        LS_IN_PUT_FDB,
        100,
        f"{inport} && {REGBIT_LKUP_FDB} == 0",
        "put_fdb(inport, eth.src); next;",
        hint=h,
        owner=owner,
        io_port=port.name,
    )
