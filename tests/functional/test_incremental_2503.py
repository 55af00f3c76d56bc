"""The 25.03 draft profile's model-changing behaviours under incremental runs: every NB change
below is checked by ``--check-incremental=1`` (each incremental run compared with a full
recompute) and its effect on SB read back.

* ``centralized_dgp_peer``: the switch port peering a router's only gateway port gets
  ``cr-<port>`` while its switch has no localnet port and the router one gateway port;
* ``qos_queues_global``: queue ids from one pool, kept by the ports that have them, and
  ``qos_physical_network`` following the switch's first localnet port.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import mismatches

# 26.03 runs wherever 25.03 does (the same features, its own profile).
pytestmark = pytest.mark.releases("25.03", "26.03")


@pytest.fixture
def draft(tmp_path: Path, ovn_release) -> Iterator[tuple[OvsdbServer, OvsdbServer, OurNorthd]]:
    rel = ovn_release
    nb = OvsdbServer(tmp_path, "nb", rel.nb_schema).start()
    sb = OvsdbServer(tmp_path, "sb", rel.sb_schema).start()
    d = OurNorthd(tmp_path, nb.remote, sb.remote, name="ours", extra_args=["--check-incremental=1"]).start()
    try:
        yield nb, sb, d
    finally:
        d.stop()
        nb.stop()
        sb.stop()


def _bindings(sb: OvsdbServer) -> dict[str, dict[str, str]]:
    out = subprocess.run(["ovsdb-client", "dump", "--format=json", sb.remote, "OVN_Southbound", "Port_Binding",
                          "logical_port", "options"], check=True, capture_output=True, text=True).stdout
    doc = json.loads(out)
    doc = doc[0] if isinstance(doc, list) else doc
    return {name: dict(opts[1]) for name, opts in doc["data"]}


def test_switch_chassisredirect_port_follows_localnet_ports_and_gateway_ports(draft) -> None:
    nb, sb, d = draft

    def n(*args: str) -> None:
        nbctl(nb.remote, *args, wait="sb")

    def has_cr() -> bool:
        return "cr-pub-r" in _bindings(sb)

    n("ls-add", "pub", "--", "lr-add", "r", "--", "lrp-add", "r", "r-pub", "00:00:00:00:00:01", "10.0.0.1/24",
      "--", "lsp-add", "pub", "pub-r", "--", "lsp-set-type", "pub-r", "router", "--", "lsp-set-addresses", "pub-r",
      "router", "--", "lsp-set-options", "pub-r", "router-port=r-pub")
    steps = [
        (["lrp-set-gateway-chassis", "r-pub", "hv1", "10"], True),
        (["lsp-add", "pub", "ln", "--", "lsp-set-type", "ln", "localnet", "--", "lsp-set-addresses", "ln", "unknown",
          "--", "lsp-set-options", "ln", "network_name=p"], False),
        (["lsp-del", "ln"], True),
        (["ls-add", "s2", "--", "lrp-add", "r", "r-s2", "00:00:00:00:00:02", "10.2.0.1/24", "--", "lsp-add", "s2",
          "s2-r", "--", "lsp-set-type", "s2-r", "router", "--", "lsp-set-addresses", "s2-r", "router", "--",
          "lsp-set-options", "s2-r", "router-port=r-s2"], True),
        (["lrp-set-gateway-chassis", "r-s2", "hv2", "10"], False),
        (["lrp-del-gateway-chassis", "r-s2", "hv2"], True),
        (["lsp-add", "pub", "v1", "--", "lsp-set-addresses", "v1", "00:00:00:00:00:11 10.0.0.11"], True),
    ]
    for cmd, want in steps:
        n(*cmd)
        assert has_cr() is want, cmd
    assert mismatches(d) == []


def test_qos_queues_follow_ports_and_localnet_network(draft) -> None:
    nb, sb, d = draft

    def n(*args: str) -> None:
        nbctl(nb.remote, *args, wait="sb")

    def queues() -> dict[str, tuple[str, str | None]]:
        return {p: (o["qdisc_queue_id"], o.get("qos_physical_network")) for p, o in _bindings(sb).items()
                if "qdisc_queue_id" in o}

    n("ls-add", "s1", "--", "lsp-add", "s1", "v1", "--", "lsp-set-options", "v1", "qos_max_rate=10")
    assert queues() == {"v1": ("1", None)}
    n("lsp-add", "s1", "ln", "--", "lsp-set-type", "ln", "localnet", "--", "lsp-set-addresses", "ln", "unknown",
      "--", "lsp-set-options", "ln", "network_name=p", "qos_burst=3")
    assert queues() == {"v1": ("1", "p"), "ln": ("2", "p")}
    n("lsp-add", "s1", "v2", "--", "lsp-set-options", "v2", "qos_min_rate=1")
    n("lsp-del", "v1")
    n("lsp-set-options", "ln", "network_name=q", "qos_burst=3")
    assert queues() == {"ln": ("2", "q"), "v2": ("3", "q")}
    n("lsp-set-options", "v2")
    assert queues() == {"ln": ("2", "q")}
    assert mismatches(d) == []



def test_router_port_added_while_its_switch_is_written_runs_without_engine_failure(draft) -> None:
    """A run that writes a new port's binding incrementally (on_northd) and then falls back to a
    full SB sync (here: the SB update of the switch the previous run inserted comes in the same
    run) reads the binding it has just inserted, which has no ``chassis`` column yet (25.03's
    unbinding of ports bound to a remote chassis looks at it).  The run must not fail: a failed
    run is retried a second later, and ovn-northd.at's "LR ct-commit-all" dumps the flows before
    that.  (Timing: each switch and its router port are added without waiting, ten times.)"""
    nb, sb, d = draft
    nbctl(nb.remote, "lr-add", "r", wait="sb")
    for i in range(10):
        nbctl(nb.remote, "ls-add", f"pub{i}")
        nbctl(nb.remote, "lrp-add", "r", f"r-pub{i}", f"00:00:00:00:ff:{i:02x}", f"172.168.{i}.10/24")
    nbctl(nb.remote, "sync", wait="sb")
    assert {f"r-pub{i}" for i in range(10)} <= _bindings(sb).keys()
    assert [r for r in d.log_records() if r.get("event") == "engine run failed; will recompute"] == []
    assert mismatches(d) == []


def test_floating_ip_follows_the_gateway_switch_localnet_port(draft) -> None:
    """``centralized_dgp_peer``: a floating IP (dnat_and_snat with logical port and external MAC)
    of a gateway port whose switch has no localnet port is centralized (no admission flow for its
    MAC); adding the localnet port makes it distributed again, removing it centralizes it."""
    nb, sb, d = draft

    def n(*args: str) -> None:
        nbctl(nb.remote, *args, wait="sb")

    def distributed() -> bool:
        out = subprocess.run(["ovn-sbctl", f"--db={sb.remote}", "--bare", "--columns=match", "find", "Logical_Flow",
                              "external_ids:stage-name=lr_in_admission"], check=True, capture_output=True,
                             text=True).stdout
        return "30:54:00:00:00:03" in out

    n("ls-add", "pub", "--", "ls-add", "in", "--", "lr-add", "r", "--", "lsp-add", "in", "vm", "--",
      "lsp-set-addresses", "vm", "00:00:00:00:00:11 10.0.0.3",
      "--", "lrp-add", "r", "r-pub", "00:00:00:00:00:01", "172.16.0.10/24",
      "--", "lrp-set-gateway-chassis", "r-pub", "hv1", "10",
      "--", "lsp-add", "pub", "pub-r", "--", "lsp-set-type", "pub-r", "router", "--", "lsp-set-addresses", "pub-r",
      "router", "--", "lsp-set-options", "pub-r", "router-port=r-pub",
      "--", "lrp-add", "r", "r-in", "00:00:00:00:00:02", "10.0.0.1/24",
      "--", "lsp-add", "in", "in-r", "--", "lsp-set-type", "in-r", "router", "--", "lsp-set-addresses", "in-r",
      "router", "--", "lsp-set-options", "in-r", "router-port=r-in")
    n("lr-nat-add", "r", "dnat_and_snat", "172.16.0.110", "10.0.0.3", "vm", "30:54:00:00:00:03")
    assert not distributed()
    n("lsp-add", "pub", "ln", "--", "lsp-set-type", "ln", "localnet", "--", "lsp-set-addresses", "ln", "unknown",
      "--", "lsp-set-options", "ln", "network_name=p")
    assert distributed()
    n("lsp-del", "ln")
    assert not distributed()
    assert mismatches(d) == []


def test_ha_ref_chassis_follows_a_ports_additional_chassis(draft) -> None:
    """``ref_chassis_additional``: the gateway port's HA group lists the chassis a port behind it
    is bound to, its ``additional_chassis`` too; setting and clearing that one is followed."""
    nb, sb, d = draft

    def sb_(*args: str) -> str:
        return subprocess.run(["ovn-sbctl", f"--db={sb.remote}", *args], check=True, capture_output=True,
                              text=True).stdout.strip()

    def ref_chassis() -> set[str]:
        nbctl(nb.remote, "sync", wait="sb")
        return set(sb_("--bare", "--columns=ref_chassis", "list", "HA_Chassis_Group").split())

    for i, name in enumerate(("gw1", "gw2", "comp1", "cadd1")):
        sb_("chassis-add", name, "geneve", f"127.0.0.{i + 1}")
    nbctl(nb.remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "sw0-p1", "--", "lr-add", "lr0",
          "--", "lrp-add", "lr0", "lr0-pub", "00:00:00:00:00:01", "172.16.0.1/24",
          "--", "lrp-set-gateway-chassis", "lr0-pub", "gw1", "10", "--", "lrp-set-gateway-chassis", "lr0-pub", "gw2",
          "20", "--", "lrp-add", "lr0", "lr0-sw0", "00:00:00:00:00:02", "10.0.0.1/24", "--", "lsp-add", "sw0",
          "sw0-lr0", "--", "lsp-set-type", "sw0-lr0", "router", "--", "lsp-set-addresses", "sw0-lr0", "router",
          "--", "lsp-set-options", "sw0-lr0", "router-port=lr0-sw0", wait="sb")
    comp = sb_("--bare", "--columns=_uuid", "find", "Chassis", "name=comp1")
    cadd = sb_("--bare", "--columns=_uuid", "find", "Chassis", "name=cadd1")
    sb_("lsp-bind", "sw0-p1", "comp1")
    assert ref_chassis() == {comp}
    sb_("set", "Port_Binding", "sw0-p1", f"additional_chassis={cadd}")
    assert ref_chassis() == {comp, cadd}
    sb_("clear", "Port_Binding", "sw0-p1", "additional_chassis")
    assert ref_chassis() == {comp}
    assert mismatches(d) == []


def test_switch_peer_ports_are_up_learn_macs_and_flood_unknown(draft) -> None:
    """``switch_peer_ports``: two switches joined by ``switch`` ports: both ports up, patch
    bindings, MAC learning and ``_MC_unknown``; back to a plain port, none of that (and a type man
    ovn-nb does not name is warned once and bound with the empty type)."""
    nb, sb, d = draft

    def sb_(*args: str) -> str:
        return subprocess.run(["ovn-sbctl", f"--db={sb.remote}", *args], check=True, capture_output=True,
                              text=True).stdout

    nbctl(nb.remote, "ls-add", "S1", "--", "ls-add", "S2", "--", "lsp-add", "S1", "S1-vm", "--", "lsp-set-addresses",
          "S1-vm", "50:54:00:00:00:01", wait="sb")
    nbctl(nb.remote, "lsp-add", "S1", "S1-S2", "--", "lsp-add", "S2", "S2-S1",
          "--", "set", "logical_switch_port", "S1-S2", "type=switch", "options:peer=S2-S1",
          "--", "set", "logical_switch_port", "S2-S1", "type=switch", "options:peer=S1-S2", wait="sb")
    nbctl(nb.remote, "sync", wait="sb")
    assert nbctl(nb.remote, "lsp-get-up", "S1-S2").strip() == "up"
    assert _bindings(sb)["S1-S2"] == {"peer": "S2-S1"}
    assert 'inport == "S1-S2"' in sb_("--bare", "--columns=match", "find", "Logical_Flow",
                                      "external_ids:stage-name=ls_in_lookup_fdb")
    assert "_MC_unknown" in sb_("--bare", "--columns=name", "list", "Multicast_Group")
    nbctl(nb.remote, "set", "logical_switch_port", "S1-S2", "type=foo", wait="sb")
    assert 'inport == "S1-S2"' not in sb_("--bare", "--columns=match", "find", "Logical_Flow",
                                          "external_ids:stage-name=ls_in_lookup_fdb")
    got = [r for r in d.log_records() if r.get("event") == "lsp_unknown_type"]
    assert len(got) == 1 and got[0]["table"] == "Logical_Switch_Port"
    assert mismatches(d) == []
