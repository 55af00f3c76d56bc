"""SB Meter (with its Meter_Band rows): the NB meters, plus one copy of a fair meter per ACL using it.

Observed on the reference (23.03): every NB Meter is copied (name, unit, bands with
action, rate and burst_size); an NB Meter with ``fair=true`` also gets one copy per
ACL whose ``meter`` names it, called ``<meter>__<acl uuid>`` (whether or not the ACL
logs, whatever switch or port group it is on), which that ACL's ``log()`` uses.
25.03 (profile behaviour ``fair_meter_logged_acls``): only ACLs with ``log=true`` get the copy.
"""

from __future__ import annotations

from typing import Any

from ..flows.acl_rules import fair_meter_name
from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..ovsdb.columns import opt
from .rows import SyncStats, insert_row

Band = tuple[str, int, int]  # (action, rate, burst_size)
MeterSpec = tuple[str, tuple[Band, ...]]  # (unit, bands sorted)


def meter_spec(meter: Any) -> MeterSpec:
    bands = sorted((b.action, b.rate, opt(b.burst_size) or 0) for b in meter.bands)
    return (meter.unit, tuple(bands))


def nb_meter_specs(nb: Any) -> dict[str, tuple[MeterSpec, bool]]:
    """NB meter name -> (spec, fair)."""
    return {m.name: (meter_spec(m), opt(m.fair) is True) for m in nb.rows("Meter").values()}


def acl_fair_meter(acl: Any, meters: dict[str, tuple[MeterSpec, bool]],
                   profile: FlowProfile = DEFAULT_PROFILE) -> tuple[str, MeterSpec] | None:
    """The SB copy of the fair meter ACL ``acl`` names, if it names one (and, in a release with
    ``fair_meter_logged_acls``, logs)."""
    if profile.has("fair_meter_logged_acls") and not acl.log:
        return None
    name = opt(acl.meter)
    found = meters.get(name) if name else None
    if found is None or not found[1]:
        return None
    return fair_meter_name(name, str(acl.uuid)), found[0]


def desired_meters(nb: Any, profile: FlowProfile = DEFAULT_PROFILE) -> dict[str, MeterSpec]:
    meters = nb_meter_specs(nb)
    out: dict[str, MeterSpec] = {name: spec for name, (spec, _fair) in meters.items()}
    for acl in nb.rows("ACL").values():
        fair = acl_fair_meter(acl, meters, profile)
        if fair is not None:
            out[fair[0]] = fair[1]
    return out


def _row_spec(row: Any) -> MeterSpec:
    return (row.unit, tuple(sorted((b.action, b.rate, b.burst_size) for b in row.bands)))


def sync_meter(txn: Any, row: Any | None, name: str, spec: MeterSpec | None, stats: SyncStats) -> Any | None:
    """Make SB Meter ``name`` (``row``, None if absent) match ``spec`` (None: delete it)."""
    if spec is None:
        if row is not None:
            row.delete()
            stats.bump(stats.deleted, "Meter")
        return None
    if row is not None and _row_spec(row) == spec:
        return row
    # (Rows with our own uuids, so their echo is known as ours; the bands first: a transaction
    # may not name a row with a given uuid before the operation inserting it.)
    bands = []
    for action, rate, burst in spec[1]:
        band = insert_row(txn, "Meter_Band")
        band.action, band.rate, band.burst_size = action, rate, burst
        bands.append(band)
    if row is None:
        row = insert_row(txn, "Meter")
        row.name = name
        stats.bump(stats.inserted, "Meter")
    else:
        stats.bump(stats.updated, "Meter")
    row.unit = spec[0]
    row.bands = bands
    return row


def sync_meters(txn: Any, sb: Any, meters: dict[str, MeterSpec], stats: SyncStats) -> None:
    seen: set[str] = set()
    for row in list(sb.rows("Meter").values()):
        name = row.name
        if name in seen:
            row.delete()
            stats.bump(stats.deleted, "Meter")
            continue
        seen.add(name)
        sync_meter(txn, row, name, meters.get(name), stats)
    for name, spec in meters.items():
        if name not in seen:
            sync_meter(txn, None, name, spec, stats)
