"""Create, update and delete of switches, routers and ports are reflected in SB."""

from __future__ import annotations

import json
import re
import time

from ovn_northd_py.devtools.servers import OurNorthd


def dp_names(env) -> dict[str, dict]:
    return {r["external_ids"][1][0][1] if False else dict(r["external_ids"][1])["name"]: r
            for r in env.sb_rows("Datapath_Binding")}


def pb_by_name(env) -> dict[str, dict]:
    return {r["logical_port"]: r for r in env.sb_rows("Port_Binding")}


def test_switch_and_router_get_datapath_bindings(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lr-add", "lr0", wait="sb")
    dps = dp_names(env)
    assert set(dps) == {"sw0", "lr0"}
    ids = dict(dps["sw0"]["external_ids"][1])
    sw_uuid = env.nbctl("get", "logical_switch", "sw0", "_uuid").strip()
    assert ids == {"logical-switch": sw_uuid, "name": "sw0"}
    assert "logical-router" in dict(dps["lr0"]["external_ids"][1])
    keys = {r["tunnel_key"] for r in dps.values()}
    assert len(keys) == 2 and all(k > 0 for k in keys)


def test_port_add_update_delete(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--",
              "lsp-set-addresses", "p1", "00:00:00:00:00:01 10.0.0.1", wait="sb")
    pb = pb_by_name(env)["p1"]
    assert pb["mac"] == "00:00:00:00:00:01 10.0.0.1"
    assert pb["type"] == ""
    env.nbctl("lsp-set-addresses", "p1", "00:00:00:00:00:02 10.0.0.2", wait="sb")
    assert pb_by_name(env)["p1"]["mac"] == "00:00:00:00:00:02 10.0.0.2"
    env.nbctl("lsp-set-type", "p1", "localport", wait="sb")
    assert pb_by_name(env)["p1"]["type"] == "localport"
    env.nbctl("lsp-del", "p1", wait="sb")
    assert "p1" not in pb_by_name(env)


def test_switch_delete_removes_its_bindings_and_groups(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "ls-add", "sw1", "--",
              "lsp-add", "sw1", "p2", wait="sb")
    assert len(env.sb_rows("Multicast_Group")) == 4  # _MC_flood and _MC_flood_l2 on each
    env.nbctl("ls-del", "sw0", wait="sb")
    assert set(dp_names(env)) == {"sw1"}
    assert set(pb_by_name(env)) == {"p2"}
    assert len(env.sb_rows("Multicast_Group")) == 2
    assert len(env.sb_rows("IP_Multicast")) == 1


def test_router_ports_become_patch_ports_with_peers(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lr-add", "lr0", "--",
              "lrp-add", "lr0", "lr0-sw0", "00:00:00:00:ff:01", "10.0.0.1/24", "--",
              "lsp-add", "sw0", "sw0-lr0", "--", "lsp-set-type", "sw0-lr0", "router", "--",
              "lsp-set-options", "sw0-lr0", "router-port=lr0-sw0", wait="sb")
    pbs = pb_by_name(env)
    assert pbs["lr0-sw0"]["type"] == "patch"
    assert dict(pbs["lr0-sw0"]["options"][1]) == {"peer": "sw0-lr0"}
    assert pbs["lr0-sw0"]["mac"] == "00:00:00:00:ff:01 10.0.0.1/24"
    assert dict(pbs["sw0-lr0"]["options"][1]) == {"peer": "lr0-sw0"}
    assert env.nbctl("get", "logical_switch_port", "sw0-lr0", "up").strip() == "true"


def test_gateway_chassis_creates_chassisredirect_port_and_ha_group(env, ours):
    env.nbctl("lr-add", "lr0", "--", "lrp-add", "lr0", "ext", "00:00:00:00:ff:02", "172.16.0.1/24", "--",
              "lrp-set-gateway-chassis", "ext", "hv1", "20", "--",
              "lrp-set-gateway-chassis", "ext", "hv2", "10", wait="sb")
    cr = pb_by_name(env)["cr-ext"]
    assert cr["type"] == "chassisredirect"
    assert dict(cr["options"][1]) == {"distributed-port": "ext", "always-redirect": "true"}
    groups = env.sb_rows("HA_Chassis_Group")
    assert [g["name"] for g in groups] == ["ext"]
    ha = {dict(h["external_ids"][1])["chassis-name"]: h["priority"] for h in env.sb_rows("HA_Chassis")}
    assert ha == {"hv1": 20, "hv2": 10}
    env.nbctl("lrp-del-gateway-chassis", "ext", "hv1", "--", "lrp-del-gateway-chassis", "ext", "hv2", wait="sb")
    assert "cr-ext" not in pb_by_name(env)
    assert env.sb_rows("HA_Chassis_Group") == []


def test_wait_sb_returns_and_sb_cfg_follows_nb_cfg(env, ours):
    env.nbctl("ls-add", "sw0", wait="sb")
    nb_cfg = int(env.nbctl("get", "nb_global", ".", "nb_cfg").strip())
    assert nb_cfg >= 1
    assert int(env.nbctl("get", "nb_global", ".", "sb_cfg").strip()) == nb_cfg
    assert int(env.sbctl("get", "sb_global", ".", "nb_cfg").strip()) == nb_cfg


def test_nb_cfg_and_sb_cfg_timestamps_for_print_wait_time(env, ours):
    """As the reference, northd stamps NB_Global nb_cfg_timestamp when it copies nb_cfg to SB and
    sb_cfg_timestamp once SB has it, so ``ovn-nbctl --print-wait-time`` reports both figures."""
    env.nbctl("ls-add", "sw0", wait="sb")
    before = int(time.time() * 1000)
    out = env.nbctl("--print-wait-time", "ls-add", "sw1", wait="sb")
    after = int(time.time() * 1000)
    figures = dict(re.findall(r"ovn-northd (delay before processing|completion):\s*(-?\d+)\s*ms", out))
    assert set(figures) == {"delay before processing", "completion"}, out
    assert 0 <= int(figures["delay before processing"]) <= int(figures["completion"]) <= after - before + 1000, out
    stamps = [int(env.nbctl("get", "nb_global", ".", col).strip()) for col in ("nb_cfg_timestamp", "sb_cfg_timestamp")]
    assert before - 1000 <= stamps[0] <= stamps[1] <= after + 1000


def _nb_global_commits(env) -> list[dict]:
    """NB_Global's changed columns in each committed NB transaction touching it, oldest first."""
    out = []
    for line in env.nb.db_path.read_bytes().split(b"\n"):
        if line.startswith(b"{"):
            rec = json.loads(line)
            if "_date" in rec and isinstance(rec.get("NB_Global"), dict):
                out.append({c for row in rec["NB_Global"].values() if row for c in row})
    return out


def test_a_change_costs_one_nb_transaction_carrying_all_three_cfg_columns(env, ours):
    """A change that makes the daemon write nothing else into NB: sb_cfg, sb_cfg_timestamp and the
    nb_cfg_timestamp of the run that copied nb_cfg go in one NB transaction, once SB has
    committed (the reference writes nb_cfg_timestamp in a transaction of its own first: one
    commit and one round of notifications more on every ``--wait=sb``)."""
    env.nbctl("ls-add", "sw0", wait="sb")
    before = len(_nb_global_commits(env))
    env.nbctl("create", "Address_Set", "name=as1", 'addresses="10.0.0.1"', wait="sb")
    later = _nb_global_commits(env)[before:]
    ours_ = [cols for cols in later if "nb_cfg" not in cols]  # (nbctl's own commit bumps nb_cfg)
    assert len(ours_) == 1, later
    # (hv_cfg too: without chassis it follows sb_cfg)
    assert {"sb_cfg", "sb_cfg_timestamp", "nb_cfg_timestamp"} <= ours_[0] <= {
        "sb_cfg", "sb_cfg_timestamp", "nb_cfg_timestamp", "hv_cfg", "hv_cfg_timestamp"}, later
    stamps = [int(env.nbctl("get", "nb_global", ".", c).strip()) for c in ("nb_cfg_timestamp", "sb_cfg_timestamp")]
    assert 0 < stamps[0] <= stamps[1]


def test_wait_hv_follows_chassis_private(env, ours):
    env.nbctl("ls-add", "sw0", wait="sb")
    env.sbctl("--", "--id=@c", "create", "chassis_private", "name=hv1", "nb_cfg=0")
    env.nbctl("sync", wait="sb")
    assert int(env.nbctl("get", "nb_global", ".", "hv_cfg").strip()) == 0
    nb_cfg = int(env.nbctl("get", "nb_global", ".", "nb_cfg").strip())
    env.sbctl("set", "chassis_private", "hv1", f"nb_cfg={nb_cfg}", "nb_cfg_timestamp=12345")
    env.nbctl("sync", wait="sb")
    nb_cfg2 = int(env.nbctl("get", "nb_global", ".", "nb_cfg").strip())
    env.sbctl("set", "chassis_private", "hv1", f"nb_cfg={nb_cfg2}", "nb_cfg_timestamp=23456")
    env.nbctl("sync", wait="sb")
    assert int(env.nbctl("get", "nb_global", ".", "hv_cfg").strip()) >= nb_cfg2


def test_restart_leaves_the_cfg_counters_and_their_stamps_alone(env, started):
    """We do not monitor the NB_Global columns we write (sb_cfg, hv_cfg, their stamps): a new
    instance does not know what they hold, and writes each only where it differs, so a restart
    with nothing new moves no timestamp."""
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
    started.append(d)
    env.nbctl("ls-add", "sw0", wait="sb")
    cols = ("sb_cfg", "sb_cfg_timestamp", "hv_cfg", "nb_cfg_timestamp")
    before = {c: env.nbctl("get", "nb_global", ".", c).strip() for c in cols}
    d.stop()
    started.append(OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name="ours2").start())
    env.nbctl("ls-add", "sw1")  # (no --wait: nb_cfg stays)
    deadline = time.monotonic() + 20
    while not any(dict(r["external_ids"][1]).get("name") == "sw1" for r in env.sb_rows("Datapath_Binding")):
        assert time.monotonic() < deadline, "the new instance never wrote sw1"
        time.sleep(0.05)
    time.sleep(0.3)  # (its cfg write goes out right after that run)
    assert {c: env.nbctl("get", "nb_global", ".", c).strip() for c in cols} == before


def _wait_lsp_up(env, name: str, want: str) -> None:
    import time

    deadline = time.monotonic() + 10
    while env.nbctl("get", "logical_switch_port", name, "up").strip() != want:
        assert time.monotonic() < deadline, f"LSP {name} up is not {want}"
        time.sleep(0.05)
        env.nbctl("sync", wait="sb")


def test_port_up_is_copied_back_to_nb(env, ours):
    # As the C daemon: a bound port whose chassis reports port-up-notif is up when Port_Binding.up
    # says so; an unbound one is down whatever Port_Binding.up says.
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", wait="sb")
    assert env.nbctl("get", "logical_switch_port", "p1", "up").strip() == "false"
    env.sbctl("set", "port_binding", "p1", "up=true")
    env.nbctl("sync", wait="sb")
    assert env.nbctl("get", "logical_switch_port", "p1", "up").strip() == "false"
    env.sbctl("chassis-add", "hv1", "geneve", "127.0.0.1", "--", "set", "chassis", "hv1",
              "other_config:port-up-notif=true")
    env.sbctl("lsp-bind", "p1", "hv1")
    _wait_lsp_up(env, "p1", "true")
    env.sbctl("set", "port_binding", "p1", "up=false")
    _wait_lsp_up(env, "p1", "false")


def test_port_bound_on_an_older_controller_is_up(env, ours):
    # ovn-northd.at "Port_Binding.up backwards compatibility": a chassis without port-up-notif
    # never writes Port_Binding.up, so bound means up; once it reports port-up-notif, up follows
    # Port_Binding.up again.
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", wait="sb")
    env.sbctl("chassis-add", "hv1", "geneve", "127.0.0.1")
    env.sbctl("lsp-bind", "p1", "hv1", "--", "set", "port_binding", "p1", "up=false")
    _wait_lsp_up(env, "p1", "true")
    env.sbctl("set", "chassis", "hv1", "other_config:port-up-notif=true")
    _wait_lsp_up(env, "p1", "false")


def test_global_options_are_written_to_nb_and_sb(env, ours):
    env.nbctl("set", "nb_global", ".", "options:foo=bar", wait="sb")
    sb_opts = env.sbctl("get", "sb_global", ".", "options")
    nb_opts = env.nbctl("get", "nb_global", ".", "options")
    for k in ("mac_prefix", "svc_monitor_mac", "max_tunid", "northd_internal_version", "foo"):
        assert k in sb_opts and k in nb_opts
    mac_prefix = env.nbctl("get", "nb_global", ".", "options:mac_prefix").strip()
    assert mac_prefix in sb_opts


def test_restart_keeps_tunnel_keys(env):
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
    try:
        cmds: list[str] = []
        for i in range(5):
            cmds += ["--", "ls-add", f"sw{i}"] + [x for j in range(4) for x in ("--", "lsp-add", f"sw{i}", f"p{i}-{j}")]
        env.nbctl(*cmds[1:], wait="sb")
        before_dp = {dict(r["external_ids"][1])["name"]: r["tunnel_key"] for r in env.sb_rows("Datapath_Binding")}
        before_pb = {r["logical_port"]: r["tunnel_key"] for r in env.sb_rows("Port_Binding")}
        env.nbctl("lsp-del", "p0-1", "--", "ls-del", "sw2", wait="sb")
    finally:
        d.stop()
    env.nbctl("lsp-add", "sw4", "late")
    d2 = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name="ours2").start()
    try:
        env.sync()
        after_dp = {dict(r["external_ids"][1])["name"]: r["tunnel_key"] for r in env.sb_rows("Datapath_Binding")}
        after_pb = {r["logical_port"]: r["tunnel_key"] for r in env.sb_rows("Port_Binding")}
    finally:
        d2.stop()
    for name, key in after_dp.items():
        assert before_dp[name] == key
    for name, key in after_pb.items():
        if name != "late":
            assert before_pb[name] == key
    assert "late" in after_pb and "sw2" not in after_dp
