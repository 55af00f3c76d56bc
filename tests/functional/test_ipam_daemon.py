"""IPAM end to end with our daemon: dynamic_addresses written to NB, used by flows, kept across
restarts, and incremental runs equal to a recompute (``--check-incremental=1``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ovn_northd_py.devtools.servers import OurNorthd
from ovn_northd_py.devtools.testing import mismatches

# 26.03 visits a switch's ports in another order (behaviour ipam_port_hash_order): the same
# lifecycle, restarts and incremental runs under its profile.
pytestmark = pytest.mark.releases("23.03", "26.03")


def dyn(env, name: str) -> str:
    value = env.nbctl("get", "logical_switch_port", name, "dynamic_addresses").strip()
    return "" if value == "[]" else value.strip('"')


@pytest.fixture
def checked(env) -> Iterator[OurNorthd]:
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, extra_args=["--check-incremental=1"]).start()
    try:
        yield d
    finally:
        d.stop()


def test_dynamic_addresses_lifecycle(env, checked):
    env.nbctl("set", "NB_Global", ".", "options:mac_prefix=0a:00:00")
    env.nbctl("ls-add", "s", "--", "set", "Logical_Switch", "s", "other_config:subnet=10.0.0.0/24",
              'other_config:exclude_ips="10.0.0.2"', "--",
              "lsp-add", "s", "p1", "--", "lsp-set-addresses", "p1", "dynamic", "--",
              "lsp-add", "s", "p2", "--", "lsp-set-addresses", "p2", "dynamic", wait="sb")
    a1, a2 = dyn(env, "p1"), dyn(env, "p2")
    assert {a1, a2} == {"0a:00:00:00:00:04 10.0.0.3", "0a:00:00:00:00:05 10.0.0.4"}
    assert f"eth.dst == {a1.split()[0]}" in env.sbctl("lflow-list")
    # A port added to the switch: the next free address; the others stay.
    env.nbctl("lsp-add", "s", "p3", "--", "lsp-set-addresses", "p3", "dynamic", wait="sb")
    assert dyn(env, "p3") == "0a:00:00:00:00:06 10.0.0.5"
    assert (dyn(env, "p1"), dyn(env, "p2")) == (a1, a2)
    # A static port takes p1's address: p1 moves, keeping its MAC.
    ip1 = a1.split()[1]
    env.nbctl("lsp-add", "s", "st", "--", "set", "Logical_Switch_Port", "st",
              f'addresses="00:00:00:00:00:01 {ip1}"', wait="sb")
    assert dyn(env, "p1") == f"{a1.split()[0]} 10.0.0.6"
    # No longer dynamic: cleared.  A plain switch: nothing.
    env.nbctl("lsp-set-addresses", "p3", "00:00:00:00:00:03 10.0.0.33", wait="sb")
    assert dyn(env, "p3") == ""
    env.nbctl("ls-add", "plain", "--", "lsp-add", "plain", "q", "--", "lsp-set-addresses", "q", "dynamic",
              wait="sb")
    assert dyn(env, "q") == ""
    assert not mismatches(checked)


def test_restart_keeps_addresses(env):
    env.nbctl("ls-add", "m", "--", "set", "Logical_Switch", "m", "other_config:mac_only=true", "--",
              "lsp-add", "m", "a", "--", "lsp-set-addresses", "a", "dynamic")
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote).start()
    try:
        env.sync()
        first = dyn(env, "a")
        prefix = env.nbctl("get", "NB_Global", ".", "options:mac_prefix").strip().strip('"')
        assert first == f"{prefix}:00:00:01"
    finally:
        d.stop()
    env.nbctl("lsp-add", "m", "b", "--", "lsp-set-addresses", "b", "dynamic")
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, name="ours2").start()
    try:
        env.sync()
        assert dyn(env, "a") == first
        assert dyn(env, "b") == f"{prefix}:00:00:02"
    finally:
        d.stop()


def test_incremental_changes_around_ipam_switches(env, checked):
    env.nbctl("set", "NB_Global", ".", "options:mac_prefix=0a:00:00")
    env.nbctl("ls-add", "s", "--", "set", "Logical_Switch", "s", "other_config:subnet=10.1.0.0/28",
              "--", "ls-add", "plain", wait="sb")
    for i in range(8):  # /28: 13 addresses, fills up and frees again
        env.nbctl("lsp-add", "s", f"d{i}", "--", "lsp-set-addresses", f"d{i}", "dynamic", "--",
                  "lsp-add", "plain", f"x{i}", "--", "lsp-set-addresses", f"x{i}", f"0a:00:00:00:00:{i + 1:02x}",
                  wait="sb")
    env.nbctl("lsp-del", "d3", "--", "lsp-set-addresses", "d5", "dynamic 10.1.0.14", wait="sb")
    env.nbctl("set", "Logical_Switch_Port", "d6", 'dynamic_addresses="garbage"', wait="sb")
    env.nbctl("lsp-set-addresses", "x0", "dynamic", "--", "lsp-set-enabled", "d7", "disabled", wait="sb")
    env.sync()
    assert dyn(env, "d5") == "0a:00:00:01:00:08 10.1.0.14"
    assert dyn(env, "d6").split()[1].startswith("10.1.0.")
    assert dyn(env, "x0") == ""
    assert not mismatches(checked)


def test_static_ports_on_ipam_switch_stay_incremental_until_a_port_asks_for_dynamic(env):
    """ovn-k style: switches with other_config:subnet but only static addresses.  Adding and
    removing such ports changes no IPAM assignment, so it needs no recompute; once a port asks for
    ``dynamic``, changes on IPAM switches recompute again (and stay equal to a recompute)."""
    from ovn_northd_py.devtools.testing import free_port, node_runs, run_batch

    port = free_port()
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote,
                  extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{port}"]).start()
    try:
        env.nbctl("ls-add", "node1", "--", "set", "Logical_Switch", "node1", "other_config:subnet=10.244.0.0/24",
                  wait="sb")
        before = node_runs(port, "northd", "recompute")
        for i in range(1, 6):
            run_batch(env, [["lsp-add", "node1", f"pod{i}"],
                            ["lsp-set-addresses", f"pod{i}", f"0a:58:0a:f4:00:{i:02x} 10.244.0.{i + 2}"]])
        run_batch(env, [["lsp-del", "pod2"]])
        assert node_runs(port, "northd", "recompute") == before
        run_batch(env, [["lsp-add", "node1", "dyn1"], ["lsp-set-addresses", "dyn1", "dynamic"]])
        assert node_runs(port, "northd", "recompute") > before
        assert dyn(env, "dyn1").split()[1] not in {f"10.244.0.{i + 2}" for i in range(1, 6) if i != 2}
        run_batch(env, [["lsp-add", "node1", "pod9"], ["lsp-set-addresses", "pod9", "0a:58:0a:f4:00:09 10.244.0.50"]])
        assert not mismatches(d)
    finally:
        d.stop()
