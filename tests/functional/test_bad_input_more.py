"""More bad NB input (issue 10, point 6): warned once naming the row, skipped, the rest written.

* an NB Address_Set named like a port group's own set (``pgx_ip4`` beside port group ``pgx``):
  the port group's set keeps the port group's addresses.  The reference tries to insert a second
  SB Address_Set of that name, fails every SB transaction on the name index from then on, and SB
  keeps the port group's set (observed: ``ovn-nbctl --wait=sb`` never returns);
* a static route with prefix ``300.0.0.0/33``: no flow (the reference logs ``bad 'ip_prefix'
  300.0.0.0/33 in static route <uuid>`` and writes none either);
* a load balancer with VIP ``not-an-ip:80`` that no switch or router uses (the reference logs
  ``Failed to initialize LB VIP: not-an-ip:80 ...``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from ovn_northd_py.devtools.servers import (
    NB_SCHEMA,
    SB_SCHEMA,
    OurNorthd,
    OvsdbServer,
    ReferenceNorthd,
    nbctl,
    sbctl,
)
from ovn_northd_py.devtools.testing import wait_until


def warnings(ours: OurNorthd, kind: str, row: str | None = None) -> list[dict]:
    return [r for r in ours.log_records()
            if r.get("level") == "warning" and r.get("event") == kind and (row is None or r.get("row") == row)]


def the_warning(ours: OurNorthd, kind: str, row: str, table: str) -> dict:
    got = warnings(ours, kind, row)
    assert len(got) == 1, f"expected one {kind!r} warning for {row}, got {got!r}"
    assert got[0]["table"] == table and got[0].get("reason")
    return got[0]


def uuid_of(env, table: str, record: str) -> str:
    return env.nbctl("get", table, record, "_uuid").strip()


def sb_sets(env) -> dict[str, list[str]]:
    out = {}
    for r in env.sb_rows("Address_Set"):
        a = r["addresses"]
        out[r["name"]] = sorted(a[1]) if isinstance(a, list) and a[0] == "set" else [a]
    return out


def more_runs(env, n: int = 2) -> None:
    for i in range(n):
        env.nbctl("ls-add", f"unrelated{i}", wait="sb")


def recompute(env, ours: OurNorthd) -> None:
    assert ours.pid is not None
    os.kill(ours.pid, signal.SIGUSR1)
    time.sleep(0.5)
    env.sync()


PG_TOPOLOGY = ["ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--",
               "lsp-set-addresses", "p1", "00:00:00:00:00:01 10.0.0.1 fd00::1", "--",
               "lsp-add", "sw0", "p2", "--", "lsp-set-addresses", "p2", "00:00:00:00:00:02 10.0.0.2",
               "--", "pg-add", "pgx", "p1"]


def test_address_set_named_like_a_port_group_set_keeps_the_port_groups_addresses(env, ours):
    env.nbctl(*PG_TOPOLOGY, "--", "acl-add", "pgx", "to-lport", "1001", "ip4.src == $pgx_ip4", "drop", wait="sb")
    assert sb_sets(env)["pgx_ip4"] == ["10.0.0.1"]
    env.nbctl("create", "address_set", "name=pgx_ip4", 'addresses="9.9.9.9"', wait="sb")
    clash = uuid_of(env, "address_set", "pgx_ip4")
    w = the_warning(ours, "address_set_name_clash", clash, "Address_Set")
    assert "pgx" in w["reason"]
    assert sb_sets(env)["pgx_ip4"] == ["10.0.0.1"]
    assert sb_sets(env)["pgx_ip6"] == ["fd00::1"]
    # The port group's membership still drives its set; the NB set's edits do not.
    env.nbctl("pg-set-ports", "pgx", "p1", "p2", wait="sb")
    assert sb_sets(env)["pgx_ip4"] == ["10.0.0.1", "10.0.0.2"]
    env.nbctl("set", "address_set", clash, 'addresses="8.8.8.8"', wait="sb")
    assert sb_sets(env)["pgx_ip4"] == ["10.0.0.1", "10.0.0.2"]
    recompute(env, ours)
    assert sb_sets(env)["pgx_ip4"] == ["10.0.0.1", "10.0.0.2"]
    more_runs(env)
    assert len(warnings(ours, "address_set_name_clash", clash)) == 1
    # The other order: NB set first, then a port group of that name.
    env.nbctl("create", "address_set", "name=pgy_ip6", 'addresses="fd00::99"', wait="sb")
    assert sb_sets(env)["pgy_ip6"] == ["fd00::99"]
    env.nbctl("pg-add", "pgy", "p1", wait="sb")
    the_warning(ours, "address_set_name_clash", uuid_of(env, "address_set", "pgy_ip6"), "Address_Set")
    assert sb_sets(env)["pgy_ip6"] == ["fd00::1"]
    # Without the port group, the NB set is an ordinary set again.
    env.nbctl("pg-del", "pgy", wait="sb")
    assert sb_sets(env)["pgy_ip6"] == ["fd00::99"]
    assert any("$pgx_ip4" in r["match"] for r in env.sb_rows("Logical_Flow"))
    assert ours.proc is not None and ours.proc.poll() is None


def test_reference_keeps_the_port_groups_set_too(tmp_path: Path):
    """What the reference leaves in SB in the same case (its transactions fail from then on)."""
    nb = OvsdbServer(tmp_path, "nb", NB_SCHEMA).start()
    sb = OvsdbServer(tmp_path, "sb", SB_SCHEMA).start()
    ref = ReferenceNorthd(tmp_path, nb.remote, sb.remote).start()
    try:
        nbctl(nb.remote, *PG_TOPOLOGY, wait="sb")
        nbctl(nb.remote, "create", "address_set", "name=pgx_ip4", 'addresses="9.9.9.9"')
        wait_until(lambda: "constraint violation" in (tmp_path / "ref-northd.log").read_text(), 10,
                   "the reference's failed transaction")
        got = sbctl(sb.remote, "--bare", "--columns=addresses", "find", "address_set", "name=pgx_ip4").strip()
        assert got == "10.0.0.1"
    finally:
        ref.stop()
        sb.stop()
        nb.stop()


def routing_matches(rows: list[dict], text: str) -> list[str]:
    return sorted(r["match"] for r in rows if text in r["match"])


def test_static_route_with_bad_prefix_is_warned_and_skipped(env, ours, tmp_path):
    cmds = ["lr-add", "lr0", "--", "lrp-add", "lr0", "lrp0", "00:00:00:00:ff:01", "10.0.0.254/24"]
    env.nbctl(*cmds, wait="sb")
    env.nbctl("--", "--id=@r", "create", "logical_router_static_route", 'ip_prefix="300.0.0.0/33"',
              'nexthop="10.0.0.1"', "--", "add", "logical_router", "lr0", "static_routes", "@r", wait="sb")
    env.nbctl("lr-route-add", "lr0", "20.0.0.0/8", "10.0.0.1", wait="sb")
    bad = env.nbctl("--bare", "--columns=_uuid", "find", "logical_router_static_route",
                    'ip_prefix="300.0.0.0/33"').strip()
    w = the_warning(ours, "route_bad_prefix", bad, "Logical_Router_Static_Route")
    assert "300.0.0.0/33" in w["reason"]
    flows = env.sb_rows("Logical_Flow")
    assert routing_matches(flows, "300.0.0.0") == []
    good = routing_matches(flows, "20.0.0.0/8")
    assert good
    more_runs(env)
    assert len(warnings(ours, "route_bad_prefix", bad)) == 1
    # The reference writes the same routing flows (none for the bad prefix).
    nb = OvsdbServer(tmp_path / "ref", "nb", NB_SCHEMA).start()
    sb = OvsdbServer(tmp_path / "ref", "sb", SB_SCHEMA).start()
    ref = ReferenceNorthd(tmp_path / "ref", nb.remote, sb.remote).start()
    try:
        nbctl(nb.remote, *cmds, wait="sb")
        nbctl(nb.remote, "--", "--id=@r", "create", "logical_router_static_route", 'ip_prefix="300.0.0.0/33"',
              'nexthop="10.0.0.1"', "--", "add", "logical_router", "lr0", "static_routes", "@r", wait="sb")
        nbctl(nb.remote, "lr-route-add", "lr0", "20.0.0.0/8", "10.0.0.1", wait="sb")
        out = subprocess.run(["ovsdb-client", "dump", "--format=json", sb.remote, "OVN_Southbound", "Logical_Flow"],
                             check=True, capture_output=True, text=True).stdout
        doc = json.loads(out)
        tbl = doc[0] if isinstance(doc, list) else doc
        ref_flows = [dict(zip(tbl["headings"], r, strict=True)) for r in tbl["data"]]
        assert routing_matches(ref_flows, "300.0.0.0") == []
        assert routing_matches(ref_flows, "20.0.0.0/8") == good
    finally:
        ref.stop()
        sb.stop()
        nb.stop()


def test_unattached_load_balancer_with_bad_vip_is_warned(env, ours):
    env.nbctl("ls-add", "sw0", wait="sb")
    env.nbctl("create", "load_balancer", "name=lbbad", 'vips:"not-an-ip:80"="10.0.0.1:80"', "protocol=tcp",
              wait="sb")
    env.nbctl("lb-add", "lbgood", "10.9.0.1:80", "10.0.0.1:80", wait="sb")
    bad = uuid_of(env, "load_balancer", "lbbad")
    w = the_warning(ours, "lb_bad_vip", bad, "Load_Balancer")
    assert "not-an-ip" in w["reason"] or w.get("vip") == "not-an-ip:80"
    assert warnings(ours, "lb_bad_vip", uuid_of(env, "load_balancer", "lbgood")) == []
    assert env.sb_rows("Load_Balancer") == []  # neither is used anywhere
    # Still one warning after a recompute and after it is attached (its good VIPs would be written).
    recompute(env, ours)
    env.nbctl("ls-lb-add", "sw0", "lbbad", wait="sb")
    more_runs(env)
    assert len(warnings(ours, "lb_bad_vip", bad)) == 1
    assert ours.proc is not None and ours.proc.poll() is None
