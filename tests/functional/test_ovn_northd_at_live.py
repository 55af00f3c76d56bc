"""Incremental corners found by OVN's own ovn-northd.at (scripts/conformance.sh), against real
servers: what the C daemon does after each change, not only after a full build.

- HA_Chassis_Group.ref_chassis ("check HA_Chassis_Group propagation from NBDB to SBDB"): for a
  gateway port's group of more than one chassis, the chassis where switch ports are bound whose
  switches reach the gateway port's router (directly or through other routers and switches).
- "check reconcile stale Ha_Chassis_Group": an external port moved (deleted and re-added in one
  transaction, without its group) leaves no SB HA_Chassis_Group behind.
"""

from __future__ import annotations

import time

from ovn_northd_py.devtools.testing import wait_until


def _ref_chassis(env) -> set[str]:
    out = env.sbctl("--bare", "--columns=ref_chassis", "list", "ha_chassis_group").split()
    return set(out)


def _chassis_uuid(env, name: str) -> str:
    return env.sbctl("--bare", "--columns=_uuid", "find", "chassis", f"name={name}").strip()


def _wait_ref(env, want: set[str]) -> None:
    deadline = time.monotonic() + 15
    while _ref_chassis(env) != want:
        assert time.monotonic() < deadline, (_ref_chassis(env), want)
        env.sync()


def test_ha_group_ref_chassis_follows_bindings_and_topology(env, ours):
    for name, ip in (("ch1", "127.0.0.2"), ("ch2", "127.0.0.3"), ("comp1", "127.0.0.5"), ("comp2", "127.0.0.6")):
        env.sbctl("chassis-add", name, "geneve", ip)
    env.nbctl("lr-add", "lr0", "--", "lrp-add", "lr0", "lr0-public", "00:00:20:20:12:13", "172.168.0.100/24")
    env.nbctl("lrp-set-gateway-chassis", "lr0-public", "ch1", "20")
    env.nbctl("lrp-set-gateway-chassis", "lr0-public", "ch2", "10")
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "sw0-p1",
              "--", "lrp-add", "lr0", "lr0-sw0", "00:00:20:20:12:14", "10.0.0.1/24",
              "--", "lsp-add", "sw0", "sw0-lr0", "--", "lsp-set-type", "sw0-lr0", "router",
              "--", "lsp-set-addresses", "sw0-lr0", "router",
              "--", "lsp-set-options", "sw0-lr0", "router-port=lr0-sw0", wait="sb")
    comp1, comp2 = _chassis_uuid(env, "comp1"), _chassis_uuid(env, "comp2")
    _wait_ref(env, set())
    env.sbctl("lsp-bind", "sw0-p1", "comp1")
    _wait_ref(env, {comp1})
    env.sbctl("lsp-unbind", "sw0-p1")
    _wait_ref(env, set())
    env.sbctl("lsp-bind", "sw0-p1", "comp2")
    _wait_ref(env, {comp2})
    # sw1 behind lr1: not connected to lr0 yet, then connected through sw0.
    env.nbctl("ls-add", "sw1", "--", "lsp-add", "sw1", "sw1-p1", "--", "lr-add", "lr1",
              "--", "lrp-add", "lr1", "lr1-sw1", "00:00:20:20:12:15", "20.0.0.1/24",
              "--", "lsp-add", "sw1", "sw1-lr1", "--", "lsp-set-type", "sw1-lr1", "router",
              "--", "lsp-set-addresses", "sw1-lr1", "router",
              "--", "lsp-set-options", "sw1-lr1", "router-port=lr1-sw1", wait="sb")
    env.sbctl("lsp-bind", "sw1-p1", "comp1")
    _wait_ref(env, {comp2})
    env.nbctl("lrp-add", "lr1", "lr1-sw0", "00:00:20:20:12:16", "10.0.0.10/24",
              "--", "lsp-add", "sw0", "sw0-lr1", "--", "lsp-set-type", "sw0-lr1", "router",
              "--", "lsp-set-addresses", "sw0-lr1", "router",
              "--", "lsp-set-options", "sw0-lr1", "router-port=lr1-sw0", wait="sb")
    _wait_ref(env, {comp1, comp2})
    env.sbctl("lsp-unbind", "sw1-p1")
    _wait_ref(env, {comp2})
    # One chassis left in the group: no ref_chassis at all.
    env.nbctl("lrp-del-gateway-chassis", "lr0-public", "ch2", wait="sb")
    _wait_ref(env, set())


def test_moved_external_port_leaves_no_stale_ha_group(env, ours):
    env.nbctl("ls-add", "ls1", "--", "ls-add", "ls2", "--", "lsp-add", "ls1", "lsp1", "--", "lsp-add", "ls2", "lsp2",
              "--", "lsp-set-type", "lsp2", "external")
    env.nbctl("ha-chassis-group-add", "chg1")
    env.nbctl("ha-chassis-group-add-chassis", "chg1", "chassis-1", "30")
    chg1 = env.nbctl("--bare", "--columns=_uuid", "list", "ha_chassis_group").strip()
    env.nbctl("set", "logical_switch_port", "lsp2", f"ha_chassis_group={chg1}", wait="sb")
    assert len(env.sb_rows("HA_Chassis_Group")) == 1
    env.nbctl("lsp-del", "lsp2", "--", "lsp-add", "ls1", "lsp2", wait="sb")
    wait_until(lambda: not env.sb_rows("HA_Chassis_Group"), 10, "the stale HA_Chassis_Group to go")
