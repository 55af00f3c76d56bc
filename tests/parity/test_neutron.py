"""Parity with the reference ovn-northd on a Neutron-like NB (:mod:`ovn_northd_py.devtools.gen_neutron`).

One run of the generator at 10 tenants (2 dual-stack networks of 5 VMs each, 2 floating IPs per
tenant) is shared by the module: every router and switch stage must match (>= 99.9%, no extra
flow) and the Port_Binding, DHCP_Options and Datapath_Binding tables must be equal.  Small NBs
then pin the corner cases the generator first revealed: the Port_Binding ``ipv6_ra_*`` options
and ``nat_addresses``, IPv6 NAT neighbour replies, distributed floating IPs behind a
``gateway_mtu`` port, and ``redirect-type=bridged``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest
from conftest import ParityRunner
from test_router_basics import Cmd, rport, vif

from ovn_northd_py.devtools.gen_neutron import build_neutron_nb, neutron_commands
from ovn_northd_py.parity.harness import ParityResult, StageDiff, assert_parity, nbctl_commands

TENANTS = 10
MIN_PERCENT = 99.9


@pytest.fixture(scope="module")
def neutron(tmp_path_factory: pytest.TempPathFactory) -> ParityResult:
    """Reference vs ours on the Neutron-like NB at 10 tenants (run once for the module)."""
    runner = ParityRunner(tmp_path_factory.mktemp("neutron"))
    build = partial(build_neutron_nb, tenants=TENANTS)
    build.__name__ = f"gen_neutron({TENANTS} tenants)"  # type: ignore[attr-defined]
    return runner(build, settle_timeout=120)


def _stages(result: ParityResult, prefix: str) -> list[StageDiff]:
    assert result.reference.settled and result.ours.settled, result.report()
    assert result.flows is not None
    stages = [s for s in result.flows.stages if s.stage.startswith(prefix)]
    assert stages, f"no {prefix}* stage on either side"
    return stages


def _assert_stages(result: ParityResult, prefix: str) -> None:
    bad = [
        f"{s.pipeline} {s.stage}: ref {s.ref_count} ours {s.ours_count} matched {s.matched} "
        f"extra {len(s.extra)} ({s.percent:.2f}%)"
        for s in _stages(result, prefix)
        if s.extra or s.percent < MIN_PERCENT
    ]
    assert not bad, "\n".join(bad) + "\n" + result.report()


def _assert_tables(result: ParityResult, *names: str) -> None:
    for name in names:
        t = result.tables[name]
        assert t.ok and t.ref_count > 0, result.report()


# --------------------------------------------------------------------------- the generator


def test_generator_is_deterministic_from_seed() -> None:
    assert neutron_commands(3, seed=5) == neutron_commands(3, seed=5)
    assert neutron_commands(3, seed=5) != neutron_commands(3, seed=6)


def test_nb_has_the_neutron_features(neutron: ParityResult) -> None:
    """The reference's SB shows what the NB models (so that the parity below covers it)."""
    pbs = list(neutron.ref_dump.rows("Port_Binding").values())
    by_type: dict[str, int] = {}
    for pb in pbs:
        by_type[pb["type"]] = by_type.get(pb["type"], 0) + 1
    assert by_type.get("chassisredirect", 0) >= TENANTS * 3 // 4  # routers with a gateway
    assert by_type.get("virtual", 0) and by_type.get("external", 0) and by_type.get("localport", 0)
    options = [pb["options"].as_dict() for pb in pbs]
    assert any("ipv6_ra_send_periodic" in o for o in options)
    assert any(o.get("redirect-type") == "bridged" for o in options)
    nat_addresses = [a for pb in pbs for a in pb["nat_addresses"].items]
    assert any('is_chassis_resident("cr-' in a for a in nat_addresses)  # centralized FIPs
    assert any('is_chassis_resident("cr-' not in a for a in nat_addresses)  # distributed FIPs
    assert neutron.tables["DHCPv6_Options"].ref_count > 0 and neutron.tables["DNS"].ref_count > 0
    assert neutron.tables["HA_Chassis_Group"].ref_count > 0


# --------------------------------------------------------------------------- 10 tenants


def test_router_stages_match(neutron: ParityResult) -> None:
    _assert_stages(neutron, "lr_")


def test_switch_stages_match(neutron: ParityResult) -> None:
    _assert_stages(neutron, "ls_")


def test_port_bindings_equal(neutron: ParityResult) -> None:
    _assert_tables(neutron, "Port_Binding")


def test_dhcp_options_equal(neutron: ParityResult) -> None:
    _assert_tables(neutron, "DHCP_Options", "DHCPv6_Options")


def test_datapath_bindings_equal(neutron: ParityResult) -> None:
    _assert_tables(neutron, "Datapath_Binding")


def test_ha_chassis_groups_equal(neutron: ParityResult) -> None:
    _assert_tables(neutron, "HA_Chassis_Group", "HA_Chassis")


# --------------------------------------------------------------------------- corner cases


def _peered(router: str, port: str, mac: str, *nets: str, ra: str = "") -> list[Cmd]:
    """A router port with ``ipv6_ra_configs`` ``ra`` (nbctl ``set`` words) on its own switch."""
    cmds = [["lrp-add", router, port, mac, *nets], ["ls-add", f"s-{port}"], *rport(f"s-{port}", f"s-{port}-r", port)]
    if ra:
        cmds.append(["set", "logical_router_port", port, *ra.split()])
    return cmds


def ra_nb() -> Callable[[str], None]:
    """Router ports with periodic RAs: defaults, clamped intervals, odd values, empty strings."""
    c = "ipv6_ra_configs:"
    return nbctl_commands(
        ["lr-add", "r1"],
        *_peered("r1", "p1", "02:00:00:00:00:01", "10.0.0.1/24", "fd00::1/64", ra=f"{c}send_periodic=true"),
        *_peered("r1", "p2", "02:00:00:00:00:02", "10.0.1.1/24", "fd01::1/64", "fd02::1/64",
                 ra=f"{c}send_periodic=true {c}address_mode=dhcpv6_stateful {c}max_interval=100 {c}mtu=1400 "
                    f"{c}rdnss=fd00::53 {c}dnssl=a.b {c}router_preference=HIGH {c}route_info=HIGH-fd05::/64"),
        *_peered("r1", "p3", "02:00:00:00:00:03", "10.0.2.1/24",
                 ra=f"{c}send_periodic=TRUE {c}address_mode=slaac"),
        *_peered("r1", "p4", "02:00:00:00:00:04", "fd04::1/64",
                 ra=f"{c}send_periodic=false {c}address_mode=slaac"),
        *_peered("r1", "p5", "02:00:00:00:00:05", "fd05::1/64",
                 ra=f"{c}send_periodic=true {c}address_mode=slaac {c}min_interval=2 {c}max_interval=3 {c}mtu=0"),
        *_peered("r1", "p6", "02:00:00:00:00:06", "fd06::1/48", "fd07::5/128",
                 ra=f"{c}send_periodic=true {c}address_mode=slaac {c}min_interval=900 {c}max_interval=1000 "
                    f"{c}router_preference=low {c}mtu=junk"),
        *_peered("r1", "p7", "02:00:00:00:00:07", "fd08::1/64",
                 ra=f'{c}send_periodic=true {c}address_mode=slaac {c}max_interval=2000 {c}min_interval=1 '
                    f'{c}router_preference=MEDIUM {c}mtu=+1280 {c}rdnss="" {c}dnssl=""'),
        *_peered("r1", "p8", "02:00:00:00:00:08", "fd09::1/64",
                 ra=f"{c}send_periodic=true {c}address_mode=SLAAC"),
        # Not peered: no Port_Binding RA options.
        ["lrp-add", "r1", "p9", "02:00:00:00:00:09", "fd0a::1/64"],
        ["set", "logical_router_port", "p9", f"{c}send_periodic=true", f"{c}address_mode=slaac"],
    )


def test_ra_options_and_flows(parity_run) -> None:
    r = parity_run(ra_nb(), tables=("Port_Binding", "Logical_Flow"))
    assert_parity(r)
    assert r.tables["Port_Binding"].ref_count >= 17


def _dgp_router(name: str, sw: str, mac: str, *nets: str, mtu: str = "", **opts: str) -> list[Cmd]:
    cmds = [
        ["lr-add", name], ["lrp-add", name, f"{name}-pub", mac, *nets],
        ["lrp-set-gateway-chassis", f"{name}-pub", "hv1", "10"],
        *rport(sw, f"{sw}-{name}", f"{name}-pub"),
        ["lsp-set-options", f"{sw}-{name}", f"router-port={name}-pub", "nat-addresses=router"],
    ]
    settings = [f"options:{k.replace('_', '-') if k == 'redirect_type' else k}={v}" for k, v in opts.items()]
    if mtu:
        settings.append(f"options:gateway_mtu={mtu}")
    if settings:
        cmds.append(["set", "logical_router_port", f"{name}-pub", *settings])
    return cmds


def distributed_fips_nb() -> Callable[[str], None]:
    """Distributed and centralized FIPs (IPv4 and IPv6) behind gateway ports with gateway_mtu,
    ``redirect-type=bridged`` (on the gateway port, in capitals, or on another port only) and
    NAT external IPs equal to the gateway port's own addresses."""
    return nbctl_commands(
        ["ls-add", "pub"], *vif("pub", "ln", "unknown", type="localnet", options=["network_name=phys"]),
        ["ls-add", "in"], *vif("in", "vm1", "0a:00:00:00:00:05 10.0.0.5 fd00::5"),
        *vif("in", "vm2", "0a:00:00:00:00:06 10.0.0.6 fd00::6"),
        *_dgp_router("r1", "pub", "02:00:00:00:00:01", "172.24.0.17/16", "2001:db8::17/64", mtu="1400",
                     redirect_type="bridged"),
        ["lrp-add", "r1", "r1-in", "02:00:00:00:00:02", "10.0.0.1/24", "fd00::1/64"], *rport("in", "in-r1", "r1-in"),
        ["lr-nat-add", "r1", "snat", "172.24.0.17", "10.0.0.0/24"],
        ["lr-nat-add", "r1", "snat", "172.24.0.17", "10.0.1.0/24"],
        ["lr-nat-add", "r1", "snat", "172.24.0.30", "10.0.2.0/24"],
        ["lr-nat-add", "r1", "snat", "172.24.0.30", "10.0.3.0/24"],
        ["lr-nat-add", "r1", "dnat_and_snat", "172.24.0.18", "10.0.0.5", "vm1", "0a:00:00:00:99:01"],
        ["lr-nat-add", "r1", "dnat_and_snat", "2001:db8::99", "fd00::5", "vm1", "0a:00:00:00:99:02"],
        ["lr-nat-add", "r1", "dnat_and_snat", "172.24.0.19", "10.0.0.6"],
        ["lr-nat-add", "r1", "dnat_and_snat", "172.24.0.9", "10.0.0.7"],
        ["lr-nat-add", "r1", "dnat_and_snat", "2001:db8::98", "fd00::6"],
        *_dgp_router("r2", "pub", "02:00:00:00:01:01", "172.24.1.17/16", mtu="1300", gateway_mtu_bypass="tcp",
                     redirect_type="BRIDGED"),
        ["lr-nat-add", "r2", "dnat_and_snat", "172.24.1.17", "10.0.0.5", "vm1", "0a:00:00:00:99:03"],
        *_dgp_router("r3", "pub", "02:00:00:00:02:01", "172.24.2.17/16", "2001:db8::2:17/64"),
        ["lrp-add", "r3", "r3-x", "02:00:00:00:02:02", "10.9.0.1/24"],
        ["set", "logical_router_port", "r3-x", "options:redirect-type=bridged"],
        ["lr-nat-add", "r3", "dnat_and_snat", "172.24.2.18", "10.0.0.5", "vm1", "0a:00:00:00:99:04"],
        ["lr-nat-add", "r3", "dnat_and_snat", "2001:db8::2:5", "fd00::5", "vm1", "0a:00:00:00:99:05"],
    )


def test_distributed_fips_gateway_mtu_and_bridged_redirect(parity_run) -> None:
    r = parity_run(distributed_fips_nb(), tables=("Port_Binding", "Logical_Flow"))
    assert_parity(r)
    by_stage = {s.stage: s for s in r.flows.stages}
    assert by_stage["lr_in_arp_resolve"].ref_count and by_stage["lr_in_admission"].ref_count


def test_router_always_learn_option_on_datapath(parity_run) -> None:
    cmds: list[Cmd] = []
    for i, value in enumerate(("true", "false", "FALSE", "junk")):
        cmds += [["lr-add", f"r{i}"], ["set", "logical_router", f"r{i}", f"options:always_learn_from_arp_request={value}"]]
    r = parity_run(nbctl_commands(*cmds), tables=("Datapath_Binding",))
    assert_parity(r)
