"""What an incremental run reads besides its change: a change that plans no flow on any datapath
(an address set's addresses) does not read every SB Datapath_Binding row, which is milliseconds
a run at 100 nodes; a change that does (a new port's flows) reads them.  The run's debug record
says which (``dp_scan``)."""

from __future__ import annotations

from typing import Any

from ovn_northd_py.devtools.servers import OurNorthd


def _runs(d: OurNorthd) -> list[dict[str, Any]]:
    return [r for r in d.log_records() if r.get("event") == "engine run"]


def _network(env: Any) -> None:
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "lsp-set-addresses", "p1",
              "00:00:00:00:00:01 10.0.0.1", "--", "lr-add", "r0", "--", "lrp-add", "r0", "r0-sw0",
              "00:00:00:00:01:00", "10.0.0.254/24", "--", "lsp-add", "sw0", "sw0-r0", "--",
              "lsp-set-type", "sw0-r0", "router", "--", "lsp-set-options", "sw0-r0", "router-port=r0-sw0",
              "--", "create", "Address_Set", "name=as1", "addresses=10.0.0.1")


def _synced_daemon(env: Any, started: list[OurNorthd]) -> tuple[OurNorthd, int]:
    """Ours (debug log) on the small network, synced; with its engine runs so far."""
    _network(env)
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, extra_args=["-v"]).start()
    started.append(d)
    env.sync()
    return d, len(_runs(d))


def test_address_set_update_does_not_read_every_datapath_binding(env: Any, started: list[OurNorthd]) -> None:
    d, seen = _synced_daemon(env, started)
    env.nbctl("--wait=sb", "add", "Address_Set", "as1", "addresses", "10.0.0.2")
    runs = _runs(d)[seen:]
    assert runs, "no engine run for the address-set change"
    assert [r["dp_scan"] for r in runs] == [False] * len(runs)
    assert env.sb_get("Address_Set", "name=as1", "addresses") in ('"10.0.0.1" "10.0.0.2"', "10.0.0.1 10.0.0.2")


def test_port_add_reads_the_datapath_bindings_for_its_flows(env: Any, started: list[OurNorthd]) -> None:
    d, seen = _synced_daemon(env, started)
    env.nbctl("--wait=sb", "lsp-add", "sw0", "p2", "--", "lsp-set-addresses", "p2", "00:00:00:00:00:02 10.0.0.2")
    assert any(r["dp_scan"] for r in _runs(d)[seen:])
