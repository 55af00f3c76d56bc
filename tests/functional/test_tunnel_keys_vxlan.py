"""A VXLAN chassis appearing narrows the port tunnel-key range: existing ports keep their keys.

OVN's ovn-northd.at "check port tunnel ids exhaustion; vxlan chassis pops up midflight": with
2,048 ports on a switch (keys 1..2048), a VXLAN chassis lowers the port key range to 1..2047; the
port holding key 2048 keeps it and its Port_Binding (as the reference does: an existing key is
never renumbered), and only a port added afterwards finds the range exhausted.
"""

from __future__ import annotations

import time
from typing import Any

from ovn_northd_py.devtools.servers import OurNorthd

N = 2048


def _pb_keys(env: Any) -> dict[str, int]:
    return {r["logical_port"]: r["tunnel_key"] for r in env.sb_rows("Port_Binding")}


def _full_switch_then_vxlan(env: Any) -> dict[str, int]:
    """A switch with N ports (keys 1..N), then a VXLAN chassis; the port keys before it."""
    cmd = ["ls-add", "lsw"]
    for i in range(1, N + 1):
        cmd += ["--", "lsp-add", "lsw", f"lsp-{i}"]
    env.nbctl(*cmd, wait="sb", timeout=120)
    before = _pb_keys(env)
    assert len(before) == N and max(before.values()) == N
    env.sbctl("--id=@e", "create", "encap", "chassis_name=hv1", "ip=192.168.0.1", "type=vxlan",
              "--", "--id=@c", "create", "chassis", "name=hv1", "encaps=@e")
    return before


def test_existing_port_keys_outside_a_narrowed_vxlan_range_are_kept(env: Any, ours: OurNorthd) -> None:
    before = _full_switch_then_vxlan(env)
    # (The chassis first: a port added before the daemon has seen it gets key 2049 and keeps it.)
    env.sync()
    env.nbctl("lsp-add", "lsw", "lsp-exhausted")
    deadline = time.monotonic() + 30
    while "all port tunnel ids exhausted" not in ours.log_file.read_text():
        assert time.monotonic() < deadline, "no exhaustion warning"
        time.sleep(0.2)
    env.sync()
    assert _pb_keys(env) == before


def test_a_vxlan_chassis_seen_on_its_own_changes_no_key(env: Any, ours: OurNorthd) -> None:
    before = _full_switch_then_vxlan(env)
    time.sleep(1.0)  # (the daemon handles the chassis on its own first)
    env.sync()
    assert _pb_keys(env) == before
