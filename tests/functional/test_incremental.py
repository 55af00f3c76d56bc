"""Incremental processing: port changes cost no recompute, and incremental always equals recompute."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, free_port
from ovn_northd_py.devtools.testing import (
    apply_checked,
    build_mixed,
    checked_daemon,
    flows_not_of_profile,
    metric,
    mismatches,
    node_runs,
    start_checked_daemon,
)

MIXED = Path(__file__).resolve().parents[2].parent / "shared" / "workloads" / "mixed.py"


@pytest.fixture
def mixed_env(env):
    subprocess.run(["python3", str(MIXED), env.nb.remote, "5", "4", "5"], check=True, capture_output=True)
    return env


@pytest.fixture
def checked(mixed_env):
    d, port = start_checked_daemon(mixed_env)
    try:
        mixed_env.sync()
        yield mixed_env, d, port
    finally:
        d.stop()


def test_port_add_and_delete_need_no_recompute(checked):
    env, d, port = checked
    before = node_runs(port, "northd", "recompute")
    inc_before = node_runs(port, "northd", "incremental")
    env.nbctl("lsp-add", "ls1", "new1", "--", "lsp-set-addresses", "new1", "00:00:00:aa:bb:01 192.168.1.200",
              "--", "lsp-set-port-security", "new1", "00:00:00:aa:bb:01 192.168.1.200", wait="sb")
    env.nbctl("lsp-set-addresses", "new1", "00:00:00:aa:bb:02 192.168.1.201", wait="sb")
    env.nbctl("lsp-del", "new1", wait="sb")
    assert node_runs(port, "northd", "recompute") == before
    assert node_runs(port, "lflow", "recompute") == node_runs(port, "lflow", "recompute")
    assert node_runs(port, "northd", "incremental") >= inc_before + 3
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= 3
    assert not mismatches(d)
    pbs = {r["logical_port"] for r in env.sb_rows("Port_Binding")}
    assert "new1" not in pbs and "lsp1-1" in pbs


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_check_incremental_compares_with_a_recompute_of_the_served_release(env):
    """The shadow recompute of --check-incremental builds the flows of the release being served:
    with another release's, every check would differ (the served release's flows in SB)."""
    build_mixed(env, 2, 2, 1)
    with checked_daemon(env) as (_, d, port):
        env.nbctl("lsp-add", "ls1", "c1", "--", "lsp-set-addresses", "c1", "00:00:00:aa:cc:01 192.168.1.77",
                  wait="sb")
        env.nbctl("acl-add", "ls2", "to-lport", "1001", "ip4 && tcp.dst == 22", "drop", wait="sb")
        env.nbctl("lsp-del", "c1", wait="sb")
        assert metric(port, "ovn_northd_py_incremental_checks_total") >= 3
        assert metric(port, "ovn_northd_py_incremental_mismatches_total") == 0
        assert not mismatches(d)
        flows = env.sb_rows("Logical_Flow")
        assert flows and not flows_not_of_profile(flows, env.profile)


def random_batches(seed: int, total_ops: int) -> list[list[list[str]]]:
    """A seeded sequence of NB transactions over the mixed network's switches ls1..ls5."""
    rnd = random.Random(seed)
    ports: dict[str, str] = {}  # name -> switch
    switches = [f"ls{i}" for i in range(1, 6)]
    extra_switches: list[str] = []
    n = 0
    batches: list[list[list[str]]] = []
    counter = 0
    while n < total_ops:
        batch: list[list[str]] = []
        for _ in range(rnd.randint(1, 4)):
            counter += 1
            kind = rnd.choices(
                ["add", "del", "addr", "psec", "enable", "type", "addsw", "delsw"],
                weights=[30, 20, 20, 8, 8, 5, 3, 2],
            )[0]
            sws = switches + extra_switches
            if kind == "add" or (not ports and kind in ("del", "addr", "psec", "enable", "type")):
                name = f"r{counter}"
                sw = rnd.choice(sws)
                ports[name] = sw
                batch.append(["lsp-add", sw, name])
                mac = f"0a:00:{counter // 65536:02x}:{counter // 256 % 256:02x}:{counter % 256:02x}:01"
                addr = rnd.choice([f"{mac} 10.{counter // 256 % 256}.{counter % 256}.5", mac, "unknown",
                                   f"{mac} 10.9.{counter % 256}.7 fd00::{counter:x}", "router" if False else mac])
                batch.append(["lsp-set-addresses", name, addr])
            elif kind == "del":
                name = rnd.choice(sorted(ports))
                del ports[name]
                batch.append(["lsp-del", name])
            elif kind == "addr":
                name = rnd.choice(sorted(ports))
                batch.append(["lsp-set-addresses", name,
                              rnd.choice(["unknown", f"0a:bb:00:00:{counter % 256:02x}:02 10.8.{counter % 256}.9",
                                          "0a:bb:00:00:00:03"])])
            elif kind == "psec":
                name = rnd.choice(sorted(ports))
                batch.append(["lsp-set-port-security", name,
                              rnd.choice([f"0a:cc:00:00:{counter % 256:02x}:01 10.7.0.1", ""])])
            elif kind == "enable":
                name = rnd.choice(sorted(ports))
                batch.append(["lsp-set-enabled", name, rnd.choice(["enabled", "disabled"])])
            elif kind == "type":
                name = rnd.choice(sorted(ports))
                batch.append(["lsp-set-type", name, rnd.choice(["", "localport", "external", "virtual"])])
            elif kind == "addsw":
                sw = f"xs{counter}"
                extra_switches.append(sw)
                batch.append(["ls-add", sw])
            elif kind == "delsw" and extra_switches:
                sw = extra_switches.pop(rnd.randrange(len(extra_switches)))
                for p in [p for p, s in ports.items() if s == sw]:
                    del ports[p]
                batch.append(["ls-del", sw])
            n += 1
        if batch:
            batches.append(batch)
    return batches


def test_random_change_sequences_incremental_equals_recompute(checked):
    """At least 1,000 NB changes; after every transaction the daemon compares its incremental state
    with a full recompute (--check-incremental=1).  Any difference fails and prints the sequence."""
    env, d, port = checked
    seed = 20261129
    batches = random_batches(seed, 1000)
    done: list[list[list[str]]] = []
    for batch in batches:
        apply_checked(env, d, batch, done, seed)
    assert sum(len(b) for b in batches) >= 1000
    checks = metric(port, "ovn_northd_py_incremental_checks_total")
    assert checks >= len(batches) // 2, f"only {checks} checks for {len(batches)} transactions"
    assert d.proc is not None and d.proc.poll() is None



def test_the_echo_of_our_own_first_write_is_not_compared_again(mixed_env):
    """A cold sync's first transaction inserts every SB row northd owns; the server's echo of those
    rows (holding exactly what was written) needs no second full sync of the SB tables."""
    port = free_port()
    d = OurNorthd(mixed_env.workdir, mixed_env.nb.remote, mixed_env.sb.remote,
                  extra_args=[f"--metrics-address=127.0.0.1:{port}"]).start()
    try:
        mixed_env.sync()
        assert node_runs(port, "sb_sync", "recompute") == 1
        assert node_runs(port, "sb_sync", "unhandled") == 0
        assert node_runs(port, "sb_sync", "incremental") >= 1  # (the echo went through its handler)
    finally:
        d.stop()
