"""Static MAC bindings, chassis template variables and mirrors are synced incrementally (no recompute),
and incremental equals recompute, also when router ports come and go and someone edits the SB rows."""

from __future__ import annotations

import random

import pytest

from ovn_northd_py.devtools.testing import (
    apply_checked,
    build_mixed,
    checked_daemon,
    metric,
    mismatches,
    node_runs,
    run_batch,
    wait_until,
)


@pytest.fixture
def mixed(env):
    build_mixed(env, 3, 2, 2)
    with checked_daemon(env) as ctx:
        yield ctx


PORTS = ["lr1-ls1", "lr2-join", "lrp-lrgw1", "lsp1-1", "nope"]


def next_batch(env, rnd: random.Random, n: int, state: dict[str, set]) -> list[list[str]]:
    """One random NB transaction; NB rows are named by uuid (ovn-nbctl refuses bindings on unknown ports)."""
    smbs, ctvs, extra = state["smb"], state["ctv"], state["ports"]

    def smb_uuid(p: str, ip: str) -> str:
        return env.nbctl("--bare", "--columns=_uuid", "find", "static_mac_binding", f"logical_port={p}", f"ip={ip}").strip()

    k = rnd.random()
    if k < 0.25:
        p, ip = rnd.choice(PORTS + sorted(extra)), f"10.{n % 3}.0.{rnd.randrange(1, 6)}"
        mac = f'mac="00:00:00:00:{n % 256:02x}:{rnd.randrange(256):02x}"'
        if (p, ip) in smbs:
            return [["set", "static_mac_binding", smb_uuid(p, ip), mac, f"override_dynamic_mac={rnd.random() < 0.5}".lower()]]
        smbs.add((p, ip))
        return [["create", "static_mac_binding", f"logical_port={p}", f"ip={ip}", mac]]
    if k < 0.45 and smbs:
        p, ip = rnd.choice(sorted(smbs))
        smbs.discard((p, ip))
        return [["destroy", "static_mac_binding", smb_uuid(p, ip)]]
    if k < 0.55 and smbs:  # re-key a binding
        p, ip = rnd.choice(sorted(smbs))
        ip2 = f"10.9.{n % 256}.1"
        smbs.discard((p, ip))
        smbs.add((p, ip2))
        return [["set", "static_mac_binding", smb_uuid(p, ip), f"ip={ip2}"]]
    if k < 0.7:
        ch = f"hv{rnd.randrange(4)}"
        if ch in ctvs and rnd.random() < 0.4:
            ctvs.discard(ch)
            return [["destroy", "chassis_template_var", ch]]
        if ch in ctvs:
            return [["set", "chassis_template_var", ch, f"variables:v{n % 3}=10.0.0.{n % 250}"]]
        ctvs.add(ch)
        return [["create", "chassis_template_var", f"chassis={ch}", f"variables:vip=10.1.0.{n % 250}"]]
    if k < 0.78:
        return _mirror_op(env, rnd, n, state["mirror"])
    if k < 0.88 or not extra:
        p = f"lr3-x{n}"
        extra.add(p)
        return [["lrp-add", "lr3", p, f"02:00:00:00:aa:{n % 256:02x}", f"10.{200 + n % 50}.0.1/24"]]
    p = rnd.choice(sorted(extra))
    extra.discard(p)
    return [["lrp-del", p]]


MIRROR_PORTS = ["lsp1-1", "lsp1-2", "lsp2-1", "ls1-lr1"]


def _mirror_op(env, rnd: random.Random, n: int, mirrors: set[str]) -> list[list[str]]:
    name = f"m{rnd.randrange(4)}"
    k = rnd.random()
    if name not in mirrors:
        mirrors.add(name)
        cmd = ["--id=@m", "create", "mirror", f"name={name}", "type=gre", f"index={n}", "filter=to-lport",
               f"sink=10.0.0.{n % 250}"]
        if k < 0.5:  # created and attached in one transaction
            return [cmd, ["add", "logical_switch_port", rnd.choice(MIRROR_PORTS), "mirror_rules", "@m"]]
        return [cmd]
    uuid = env.nbctl("--bare", "--columns=_uuid", "find", "mirror", f"name={name}").strip()
    if k < 0.2:
        mirrors.discard(name)
        return [["destroy", "mirror", uuid]]
    if k < 0.35:
        return [["set", "mirror", uuid, f"sink=10.1.0.{n % 250}", "filter=from-lport", "type=erspan"]]
    if k < 0.45:  # renamed
        mirrors.discard(name)
        new = f"m{4 + n}"
        mirrors.add(new)
        return [["set", "mirror", uuid, f"name={new}"]]
    if k < 0.75:
        return [["add", "logical_switch_port", rnd.choice(MIRROR_PORTS), "mirror_rules", uuid]]
    return [["remove", "logical_switch_port", rnd.choice(MIRROR_PORTS), "mirror_rules", uuid]]


def test_static_mac_template_var_and_mirror_changes_need_no_recompute(mixed):
    env, d, port = mixed
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow", "sb_sync")}
    run_batch(env, [["static-mac-binding-add", "lr1-ls1", "10.0.0.9", "00:00:00:00:00:09"]])
    run_batch(env, [["create", "chassis_template_var", "chassis=hv1", "variables:vip=1.1.1.1"]])
    assert env.sb_get("Static_MAC_Binding", "ip=10.0.0.9", "mac") == "00:00:00:00:00:09"
    assert env.sb_get("Chassis_Template_Var", "chassis=hv1", "variables") == "vip=1.1.1.1"
    run_batch(env, [["--id=@m", "create", "mirror", "name=m1", "type=gre", "index=1", "filter=to-lport", "sink=1.1.1.1"],
                    ["add", "logical_switch_port", "lsp1-1", "mirror_rules", "@m"]])
    assert env.sb_get("Port_Binding", "logical_port=lsp1-1", "mirror_rules") == env.sb_get("Mirror", "name=m1", "_uuid")
    run_batch(env, [["destroy", "mirror", env.nbctl("--bare", "--columns=_uuid", "find", "mirror", "name=m1").strip()]])
    assert not env.sb_rows("Mirror") and env.sb_get("Port_Binding", "logical_port=lsp1-1", "mirror_rules") == ""
    run_batch(env, [["static-mac-binding-del", "lr1-ls1", "10.0.0.9"]])
    run_batch(env, [["destroy", "chassis_template_var", "hv1"]])
    assert not env.sb_rows("Static_MAC_Binding") and not env.sb_rows("Chassis_Template_Var")
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    assert not mismatches(d)


def test_sb_edits_are_repaired(mixed):
    env, d, port = mixed
    run_batch(env, [["static-mac-binding-add", "lr1-ls1", "10.0.0.9", "00:00:00:00:00:09"],
                    ["create", "chassis_template_var", "chassis=hv1", "variables:vip=1.1.1.1"],
                    ["--id=@m", "create", "mirror", "name=m1", "type=gre", "index=1", "filter=to-lport", "sink=1.1.1.1"],
                    ["add", "logical_switch_port", "lsp1-1", "mirror_rules", "@m"]])
    assert env.sb_get("Port_Binding", "logical_port=lsp1-1", "mirror_rules") == env.sb_get("Mirror", "name=m1", "_uuid")
    before = node_runs(port, "sb_sync", "recompute")
    env.sbctl("set", "static_mac_binding", env.sb_get("Static_MAC_Binding", "ip=10.0.0.9", "_uuid"),
              "mac=\"11:11:11:11:11:11\"")
    env.sbctl("destroy", "chassis_template_var", env.sb_get("Chassis_Template_Var", "chassis=hv1", "_uuid"))
    env.sbctl("create", "chassis_template_var", "chassis=stray")
    env.sbctl("destroy", "mirror", env.sb_get("Mirror", "name=m1", "_uuid"))
    wait_until(lambda: env.sb_get("Static_MAC_Binding", "ip=10.0.0.9", "mac") == "00:00:00:00:00:09", 10, "SMB repaired")
    wait_until(lambda: sorted(r["chassis"] for r in env.sb_rows("Chassis_Template_Var")) == ["hv1"], 10, "CTV repaired")
    wait_until(lambda: env.sb_get("Port_Binding", "logical_port=lsp1-1", "mirror_rules")
               == env.sb_get("Mirror", "name=m1", "_uuid") != "", 10, "mirror repaired")
    assert node_runs(port, "sb_sync", "recompute") == before
    assert not mismatches(d)


def test_random_changes_incremental_equals_recompute(mixed):
    env, d, port = mixed
    seed = 20261201
    rnd = random.Random(seed)
    sb_before = node_runs(port, "sb_sync", "recompute")
    state: dict[str, set] = {"smb": set(), "ctv": set(), "ports": set(), "mirror": set()}
    done: list[list[list[str]]] = []
    for n in range(120):
        apply_checked(env, d, next_batch(env, rnd, n, state), done, seed)
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= 60
    assert node_runs(port, "northd", "recompute") <= 1
    assert node_runs(port, "lflow", "recompute") <= 1
    assert node_runs(port, "sb_sync", "recompute") == sb_before
