"""Parity with the reference ovn-northd for IGMP/MLD snooping and multicast relay.

Switch ``other_config:mcast_*`` settings, port ``options:mcast_flood`` /
``mcast_flood_reports``, routers with ``options:mcast_relay``: the switch destination lookup,
the router stages with multicast flows, SB Multicast_Group and IP_Multicast must equal the
reference's, and nothing else we write may be wrong (``flows.extra == 0``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.parity.harness import ParityResult

MCAST_STAGES = (
    "ls_in_l2_lkup", "ls_out_pre_lb", "lr_in_admission", "lr_in_ip_input", "lr_in_ip_routing",
    "lr_in_arp_resolve", "lr_out_delivery",
)
MCAST_TABLES = ("Multicast_Group", "IP_Multicast", "Datapath_Binding", "Port_Binding")


def assert_mcast_parity(r: ParityResult) -> None:
    assert r.reference.settled and r.ours.settled, r.report()
    bad = [t for t in MCAST_TABLES if not r.tables[t].ok]
    assert not bad, r.report()
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in MCAST_STAGES:
        s = by_stage.get(name)  # router stages: absent from an NB without routers
        assert s is None or (not s.missing and not s.extra), f"{name}\n" + r.report()
    assert flows.extra == 0, r.report()


class Nb:
    def __init__(self, remote: str) -> None:
        self.remote = remote
        self.n = 0

    def __call__(self, *args: str) -> None:
        nbctl(self.remote, *args)

    def switch(self, name: str, *config: str, ports: int = 1) -> None:
        self("ls-add", name)
        if config:
            self("set", "Logical_Switch", name, *(f"other_config:{c}" for c in config))
        for i in range(1, ports + 1):
            self.n += 1
            self.vif(name, f"{name}-p{i}", f"00:00:00:01:{self.n // 256:02x}:{self.n % 256:02x} 10.{self.n}.0.{i}")

    def vif(self, sw: str, name: str, addresses: str = "", *options: str, type: str = "") -> None:
        self("lsp-add", sw, name)
        if addresses:
            self("lsp-set-addresses", name, addresses)
        if type:
            self("lsp-set-type", name, type)
        if options:
            self("lsp-set-options", name, *options)

    def router(self, name: str, *options: str) -> None:
        self("lr-add", name)
        if options:
            self("set", "Logical_Router", name, *(f"options:{o}" for o in options))

    def attach(self, router: str, sw: str, *lrp_columns: str, v6: bool = False) -> None:
        """Router port ``router-sw`` (with ``lrp_columns`` set) and its router-type switch port ``sw-router``."""
        self.n += 1
        nets = [f"10.200.{self.n}.1/24"] + ([f"fd00:{self.n:x}::1/64"] if v6 else [])
        lrp = f"{router}-{sw}"
        self("lrp-add", router, lrp, f"00:00:00:02:{self.n // 256:02x}:{self.n % 256:02x}", *nets)
        if lrp_columns:
            self("set", "Logical_Router_Port", lrp, *lrp_columns)
        self.vif(sw, f"{sw}-{router}", "router", f"router-port={lrp}", type="router")


def relay_nb(remote: str) -> None:
    """A relay router joining two snooping switches (querier settings, flooding and reporting ports),
    a non-snooping switch with flooding ports, a router without relay on a third snooping switch."""
    nb = Nb(remote)
    nb.switch("sw1", "mcast_snoop=true", "mcast_querier=false", ports=3)
    nb.switch("sw2", "mcast_snoop=true", "mcast_ip4_src=10.0.2.254", "mcast_eth_src=00:00:00:00:02:fe",
              "mcast_ip6_src=fe80::2fe", "mcast_table_size=100", "mcast_idle_timeout=100", ports=3)
    nb.switch("sw3", "mcast_snoop=true", "mcast_flood_unregistered=true", ports=3)
    nb.switch("sw4", ports=3)
    nb("lsp-set-options", "sw1-p1", "mcast_flood=true")
    nb("lsp-set-options", "sw1-p2", "mcast_flood_reports=true")
    nb("lsp-set-options", "sw2-p1", "mcast_flood=true", "mcast_flood_reports=true")
    nb("lsp-set-options", "sw4-p1", "mcast_flood=true", "mcast_flood_reports=true")
    nb("lsp-set-options", "sw3-p3", "mcast_flood=true")
    nb.router("lr1", "mcast_relay=true")
    nb.attach("lr1", "sw1", "options:mcast_flood=true", v6=True)
    nb.attach("lr1", "sw2", v6=True)
    nb.router("lr2")
    nb.attach("lr2", "sw3")


def combinations_nb(remote: str) -> None:
    """One snooping switch per case of the unregistered-multicast flow and group membership."""
    nb = Nb(remote)
    nb.switch("sA", "mcast_snoop=TRUE")  # nothing: drop
    nb.switch("sB", "mcast_snoop=true")
    nb("lsp-set-options", "sB-p1", "mcast_flood=True")  # static only
    nb.switch("sC", "mcast_snoop=true")
    nb.router("rC", "mcast_relay=true")
    nb.attach("rC", "sC")  # relay only
    nb.switch("sD", "mcast_snoop=true")
    nb("lsp-set-options", "sD-p1", "mcast_flood=true")
    nb.router("rD", "mcast_relay=TRUE")
    nb.attach("rD", "sD", "options:mcast_flood=true")  # both; the router's _MC_static
    nb.switch("sE", "mcast_snoop=true", "mcast_flood_unregistered=true")
    nb("lsp-set-options", "sE-p1", "mcast_flood=true")
    nb.router("rE", "mcast_relay=true")
    nb.attach("rE", "sE")  # flood_unregistered: no flow
    nb.switch("sF", "mcast_snoop=true")
    nb.vif("sF", "sF-rep", "", "mcast_flood_reports=true")  # reports: no relay
    nb.vif("sF", "sF-off", "", "mcast_flood=true", "mcast_flood_reports=true")
    nb("lsp-set-enabled", "sF-off", "disabled")  # a disabled port is in no group
    nb.switch("sG", "mcast_snoop=true")
    nb.router("rG", "mcast_relay=true")
    nb.attach("rG", "sG")
    nb("lsp-set-enabled", "sG-rG", "disabled")  # still a relay for the flow, in no group
    nb.switch("sH", "mcast_snoop=true")
    nb.router("rH", "mcast_relay=true")
    nb.attach("rH", "sH", "options:mcast_flood=true", "enabled=false")  # a disabled flooding router port
    nb.switch("sI", "mcast_snoop=true")
    nb.router("rI", "mcast_relay=true")
    nb("set", "Logical_Router", "rI", "enabled=false")
    nb.attach("rI", "sI")  # a disabled router is no relay
    nb.switch("sJ", "mcast_snoop=true")
    nb.router("rJ")
    nb.attach("rJ", "sJ", "options:mcast_flood=true")  # no relay: the router's _MC_static anyway
    nb("lsp-set-options", "sJ-rJ", "router-port=rJ-sJ", "mcast_flood=true", "mcast_flood_reports=true")
    nb.switch("sK", "mcast_snoop=true")
    nb.vif("sK", "sK-ln", "unknown", "network_name=phys", "mcast_flood=true", "mcast_flood_reports=true",
           type="localnet")
    nb.vif("sK", "sK-r", "", "router-port=nonexistent", "mcast_flood=true", type="router")
    nb.switch("sM", "mcast_snoop=true")
    nb.vif("sM", "sM-ln", "unknown", "network_name=phys", type="localnet")
    nb.router("rM", "mcast_relay=true")
    nb.attach("rM", "sM", "options:mcast_flood=true")
    nb("lrp-set-gateway-chassis", "rM-sM", "ch1", "10")  # a gateway port: its cr- port in _MC_static
    nb.switch("sL")  # no snooping: groups only
    nb.router("rL", "mcast_relay=true")
    nb.attach("rL", "sL")
    nb("lsp-set-options", "sL-p1", "mcast_flood=true", "mcast_flood_reports=true")


def interconnect_nb(remote: str) -> None:
    """Interconnect switches (``interconn-ts``) with remote ports, and IP_Multicast edge values."""
    nb = Nb(remote)
    nb.switch("ic1", "interconn-ts=ts1", "mcast_snoop=true")
    nb.vif("ic1", "ic1-rem", "", "requested-chassis=ch1", type="remote")
    nb.vif("ic1", "ic1-rem2", "", type="remote")
    nb("lsp-set-enabled", "ic1-rem2", "disabled")
    nb.switch("ic2", "interconn-ts=ts2")  # no snooping
    nb.vif("ic2", "ic2-rem", "", type="remote")
    nb.switch("ic3", "mcast_snoop=true")  # no interconn-ts
    nb.vif("ic3", "ic3-rem", "", type="remote")
    values = [
        ("mcast_table_size=0", "mcast_query_max_response=0", "mcast_query_interval=-3", "mcast_idle_timeout=abc"),
        ("mcast_table_size=-5", "mcast_query_max_response=abc", "mcast_idle_timeout=-1"),
        ("mcast_table_size=1", "mcast_idle_timeout=0", "mcast_eth_src=foo", "mcast_ip4_src=bar"),
        ("mcast_table_size=99999999999", "mcast_idle_timeout=100", "mcast_query_max_response=-1",
         "mcast_querier=yes"),
        ('mcast_idle_timeout=" 40"', "mcast_table_size=0x10", "mcast_query_interval=+5", "mcast_snoop=yes"),
        ("mcast_idle_timeout=5", "mcast_query_interval=1000", "mcast_query_max_response=20",
         "mcast_querier=FALSE", "mcast_snoop=true"),
        ("mcast_idle_timeout=4000", "mcast_query_interval=0", "mcast_table_size=12abc"),
    ]
    for i, cfg in enumerate(values):
        nb.switch(f"v{i}", *cfg, ports=0)


@pytest.mark.parametrize("builder", [relay_nb, combinations_nb, interconnect_nb], ids=lambda b: b.__name__)
def test_mcast_at_parity(parity_run, builder: Callable[[str], None]) -> None:
    r = parity_run(builder, tables=(*MCAST_TABLES, "Logical_Flow"))
    assert_mcast_parity(r)
    # The NB exercises what it should: snooping flows, and groups beyond the flood groups or the
    # interconnect flows.
    ref_flows = list(r.ref_dump.rows("Logical_Flow").values())
    assert any(f["actions"] == "igmp;" for f in ref_flows), r.report()
    if builder is interconnect_nb:
        assert any(f["actions"] == "clone { igmp; }; next;" for f in ref_flows), r.report()
    else:
        names = {g["name"] for g in r.ref_dump.rows("Multicast_Group").values()}
        assert {"_MC_static", "_MC_mrouter_flood"} <= names, r.report()
    if builder is combinations_nb:
        pbs = {u: row["logical_port"] for u, row in r.ref_dump.rows("Port_Binding").items()}
        members = {pbs[a.uuid] for g in r.ref_dump.rows("Multicast_Group").values() for a in g["ports"].items}
        assert "cr-rM-sM" in members and "rM-sM" not in members, r.report()
