"""SB_Global and the options northd keeps in NB_Global; nb_cfg / sb_cfg / hv_cfg propagation."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from ..flows.chassis_features import chassis_features
from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..northd.tnlkeys import dp_key_max
from .rows import insert_row

# The version string ovn-controller may check (ovn-match-northd-version): the
# reference release we reproduce, the SB schema, and the internal flow version (23.03's; each
# release's is its profile's ``northd_internal_version``).
NORTHD_INTERNAL_VERSION = DEFAULT_PROFILE.northd_internal_version
# SB_Global options of a release with the ``sb_feature_options`` behaviour (25.03).
SB_FEATURE_OPTIONS: tuple[tuple[str, str], ...] = (("arp_ns_explicit_output", "true"),
                                                   ("register_consolidation", "true"))

_MAC3 = re.compile(r"^[0-9a-fA-F]{2}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}$")
_MAC6 = re.compile(r"^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$")


def _random_mac_bytes(n: int) -> list[int]:
    b = [random.randrange(256) for _ in range(n)]
    b[0] = (b[0] & 0xFE) | 0x02  # unicast, locally administered
    return b


@dataclass(slots=True)
class GlobalOptions:
    """The options northd adds to NB_Global and copies to SB_Global."""

    mac_prefix: str
    svc_monitor_mac: str
    max_tunid: int
    internal_version: str = NORTHD_INTERNAL_VERSION
    sb_only: tuple[tuple[str, str], ...] = ()  # options SB_Global has and NB_Global does not
    profile: FlowProfile = DEFAULT_PROFILE  # the release's (chassis features it still reads)
    # Behaviour "svc_monitor_mac_dst" (26.03): the destination MAC of service monitors' probes
    # (NB_Global options:svc_monitor_mac_dst, else random like svc_monitor_mac); "": none.
    svc_monitor_mac_dst: str = ""
    # 25.03 (behaviour "sb_hairpin_ct_mark_copied"): NB_Global options:lb_hairpin_use_ct_mark is
    # copied like any option, and no chassis feature overrides it.
    hairpin_ct_mark_copied: bool = False

    def as_dict(self) -> dict[str, str]:
        out = {
            "mac_prefix": self.mac_prefix,
            "svc_monitor_mac": self.svc_monitor_mac,
            "max_tunid": str(self.max_tunid),
            "northd_internal_version": self.internal_version,
        }
        if self.svc_monitor_mac_dst:
            out["svc_monitor_mac_dst"] = self.svc_monitor_mac_dst
        return out

    @property
    def svc_monitor_macs(self) -> list[str]:
        """The SB Address_Set ``svc_monitor_mac``'s addresses."""
        return [self.svc_monitor_mac, *([self.svc_monitor_mac_dst] if self.svc_monitor_mac_dst else [])]


def global_options(nb_global: Any, vxlan: bool, profile: FlowProfile = DEFAULT_PROFILE,
                   max_tunid: int | None = None) -> GlobalOptions:
    """The options northd adds (``max_tunid``: the datapath key range's top, by default the one of
    ``vxlan``'s mode)."""
    o = nb_global.options if nb_global is not None else {}
    mp = o.get("mac_prefix", "")
    if not _MAC3.match(mp) or mp == "00:00:00":
        mp = ":".join(f"{x:02x}" for x in _random_mac_bytes(3))
    sm = o.get("svc_monitor_mac", "")
    if not _MAC6.match(sm):
        sm = ":".join(f"{x:02x}" for x in _random_mac_bytes(6))
    dst = ""
    if profile.has("svc_monitor_mac_dst"):
        dst = o.get("svc_monitor_mac_dst", "")
        if not _MAC6.match(dst):
            dst = ":".join(f"{x:02x}" for x in _random_mac_bytes(6))
    if max_tunid is None:
        max_tunid = dp_key_max(vxlan)
    return GlobalOptions(mp.lower(), sm.lower(), max_tunid,
                         profile.northd_internal_version,
                         SB_FEATURE_OPTIONS if profile.has("sb_feature_options") else (), profile,
                         svc_monitor_mac_dst=dst.lower(), hairpin_ct_mark_copied=profile.has("sb_hairpin_ct_mark_copied"))


def nb_global_row(nb: Any) -> Any:
    rows = list(nb.rows("NB_Global").values())
    return rows[0] if rows else None


def sb_global_row(sb: Any) -> Any:
    """The committed SB_Global row (not one being inserted by the transaction under construction)."""
    rows = [r for r in sb.rows("SB_Global").values() if r._data is not None]
    return rows[0] if rows else None


def sync_sb_global(txn: Any, sb: Any, nb_global: Any, gopts: GlobalOptions) -> int:
    """Write SB_Global except nb_cfg, which the flow writer sets in the same transaction as the
    flows (so that `--wait=sb` means the flows are there too).  Returns the NB nb_cfg."""
    opts = dict(nb_global.options) if nb_global is not None else {}
    opts.update(gopts.as_dict())
    opts.update(gopts.sb_only)
    if not gopts.hairpin_ct_mark_copied:
        # Observed (23.03): NB_Global options:lb_hairpin_use_ct_mark (true or false) is not copied
        # to SB_Global ...
        opts.pop("lb_hairpin_use_ct_mark", None)
        # ... but when a chassis lacks ct-no-masked-label, ovn-controller is told to use ct_label there.
        if not chassis_features(sb, gopts.profile).ct_no_masked_label:
            opts["lb_hairpin_use_ct_mark"] = "false"
    nb_cfg = nb_global.nb_cfg if nb_global is not None else 0
    ipsec = bool(nb_global.ipsec) if nb_global is not None else False
    row = sb_global_row(sb)
    if row is None:
        row = insert_row(txn, "SB_Global")
        row.options, row.ipsec = opts, ipsec
        return nb_cfg
    if dict(row.options) != opts:
        row.options = opts
    if row.ipsec != ipsec:
        row.ipsec = ipsec
    return nb_cfg


def _chassis_cfg(rows: Any) -> tuple[int, int] | None:
    """(smallest nb_cfg, newest nb_cfg_timestamp) of the Chassis_Private ``rows``; None without any."""
    cfgs = [(cp.nb_cfg, cp.nb_cfg_timestamp) for cp in rows.values()]
    if not cfgs:
        return None
    return min(c for c, _ in cfgs), max(t for _, t in cfgs)


def hv_cfg(sb: Any, sb_nb_cfg: int) -> tuple[int, int]:
    """The smallest nb_cfg every chassis has caught up with, and the newest timestamp among them
    (read again only after Chassis_Private changed: every ``--wait=sb`` reports it, and a
    deployment has a row per chassis)."""
    got = sb.table_memo("Chassis_Private", "hv_cfg", _chassis_cfg)
    return got if got is not None else (sb_nb_cfg, 0)


# NB_Global columns only northd writes (ovn-nb(5): sb_cfg and hv_cfg with their timestamps, and
# nb_cfg_timestamp): not monitored.  Monitored, every write of them comes back to us as an update,
# and the NB server composes and sends it before the update that tells ``ovn-nbctl --wait`` it is
# done (our session comes first in its list).  What they hold is known from our own writes
# (:class:`CfgReport`), and each write is conditional on the value it replaces.
NB_GLOBAL_OWN_COLUMNS = frozenset({"sb_cfg", "sb_cfg_timestamp", "hv_cfg", "hv_cfg_timestamp", "nb_cfg_timestamp"})


def nb_monitored_columns(schema_columns: Any) -> list[str]:
    """The NB_Global columns we monitor: all of the schema's but :data:`NB_GLOBAL_OWN_COLUMNS`."""
    return [c for c in schema_columns if c not in NB_GLOBAL_OWN_COLUMNS]


@dataclass(slots=True)
class CfgReport:
    """The cfg counters we report into NB_Global (sb_cfg, hv_cfg), which we do not monitor
    (:data:`NB_GLOBAL_OWN_COLUMNS`).  ``known``: what NB holds as far as our writes say, column ->
    value; set when a write is sent (one at a time), forgotten when it fails or the NB connection
    goes.  A counter is written when it differs from what is known (nothing known: every time),
    each in an operation of its own that changes the row only where the column differs, so the
    counter's timestamp moves only with it and a value NB already holds is not written again."""

    known: dict[str, int] = field(default_factory=dict)

    def forget(self) -> None:
        self.known.clear()

    def columns(self, sb_cfg: int | None, hv: tuple[int, int] | None, now_ms: int) -> dict[str, dict[str, int]]:
        """The counters to write, counter -> the columns its write sets: sb_cfg (stamped
        ``now_ms``), hv_cfg with its timestamp (the newest of the chassis')."""
        out: dict[str, dict[str, int]] = {}
        if sb_cfg is not None and self.known.get("sb_cfg") != sb_cfg:
            out["sb_cfg"] = {"sb_cfg": sb_cfg, "sb_cfg_timestamp": now_ms}
        if hv is not None and self.known.get("hv_cfg") != hv[0]:
            out["hv_cfg"] = {"hv_cfg": hv[0], "hv_cfg_timestamp": hv[1]}
        return out

    def ops(self, row_uuid: str, sb_cfg: int | None, hv: tuple[int, int] | None, now_ms: int,
            nb_cfg_timestamp: int | None = None) -> list[dict[str, Any]]:
        """The operations writing what :meth:`columns` says into NB_Global row ``row_uuid`` (and
        ``nb_cfg_timestamp``, unconditionally), recorded as known.  Empty: nothing to write."""
        where: list[Any] = [["_uuid", "==", ["uuid", row_uuid]]]
        ops: list[dict[str, Any]] = []
        for counter, cols in self.columns(sb_cfg, hv, now_ms).items():
            ops.append({"op": "update", "table": "NB_Global", "row": cols,
                        "where": [*where, [counter, "!=", cols[counter]]]})
            self.known[counter] = cols[counter]
        if nb_cfg_timestamp is not None:
            ops.append({"op": "update", "table": "NB_Global", "row": {"nb_cfg_timestamp": nb_cfg_timestamp},
                        "where": where})
        return ops


def sb_counters(sb: Any, sb_cfg: int | None = None) -> tuple[int | None, tuple[int, int] | None]:
    """(sb_cfg: ``sb_cfg``, else SB_Global's committed nb_cfg as the SB IDL holds it; hv_cfg and
    its timestamp: what every chassis has caught up with).  ``sb_cfg`` is what the echo or reply
    of our write that set it says committed, so ``ovn-nbctl --wait=sb`` returns only once our SB
    write is durable."""
    if sb_cfg is None:
        sbg = sb_global_row(sb)
        sb_cfg = sbg.nb_cfg if sbg is not None else None
    return sb_cfg, hv_cfg(sb, sb_cfg) if sb_cfg is not None else None


def sync_nb_options(nb: Any, gopts: GlobalOptions) -> bool:
    """Write northd's options into NB_Global (the cfg counters go in a write of their own:
    :class:`CfgReport`).  True if anything was written."""
    row = nb_global_row(nb)
    if row is None:
        return False
    opts = dict(row.options)
    want = dict(opts)
    want.update(gopts.as_dict())
    if want == opts:
        return False
    row.options = want
    return True


_INT_TEXT = re.compile(r"^[ \t\n\v\f\r]*([+-]?[0-9]+)$")


def northd_probe_interval(options: Any, default: int) -> int:
    """The probe interval (ms) NB_Global ``options:northd_probe_interval`` asks for, for both the
    NB and the SB connections.  Observed on the reference: an unset or unparsable value (``bogus``,
    ``1500abc``) means the default; leading blanks and a sign are accepted (``" 2000"``); 0 disables
    probes; any other value below 1000 (``300``, ``-5``) means 1000."""
    text = options.get("northd_probe_interval") if options else None
    m = _INT_TEXT.match(text) if isinstance(text, str) else None
    if m is None:
        return default
    value = int(m.group(1))
    if not -(1 << 31) <= value < 1 << 31:
        return default
    return 0 if value == 0 else max(1000, value)
