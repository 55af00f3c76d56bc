"""Parity with the reference ovn-northd for the core SB tables and the L2 switch stages."""

from __future__ import annotations

import pytest

from ovn_northd_py.parity.harness import nbctl_commands, workload
from ovn_northd_py.parity.offline import build_l2_edge_nb

CORE_TABLES = (
    "SB_Global", "Datapath_Binding", "Port_Binding", "Multicast_Group", "HA_Chassis_Group", "HA_Chassis",
    "IP_Multicast", "RBAC_Role", "RBAC_Permission", "DHCP_Options", "DHCPv6_Options", "Address_Set",
)

# The stages the flow core implements in full (issue: "default flows that need no NB features").
L2_STAGES = (
    "ls_in_check_port_sec", "ls_in_apply_port_sec", "ls_in_lookup_fdb", "ls_in_put_fdb", "ls_in_l2_lkup",
    "ls_in_l2_unknown", "ls_out_check_port_sec", "ls_out_apply_port_sec",
)


def assert_tables_equal(result, tables) -> None:
    assert result.reference.settled and result.ours.settled, result.report()
    bad = [t for t in tables if not result.tables[t].ok]
    assert not bad, result.report()


def assert_l2_stages(result) -> None:
    flows = result.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in L2_STAGES:
        s = by_stage[name]
        assert s.ref_count > 0, f"{name}: the reference wrote nothing here; the NB does not exercise it"
        assert not s.missing and not s.extra, result.report()
    # Stages not built yet may be missing flows, but nothing we write may be wrong.
    assert flows.extra == 0, result.report()


def test_core_tables_equal_on_mixed_10(parity_run):
    r = parity_run(workload("mixed", 10, 10, 10), tables=CORE_TABLES)
    assert_tables_equal(r, CORE_TABLES)
    assert r.tables["Port_Binding"].ref_count == 180


# Address sets here also include port-group and router-LB sets, which belong to the ACL/LB pipelines.
EDGE_TABLES = tuple(t for t in CORE_TABLES if t != "Address_Set")


def test_core_tables_equal_on_edge_cases(parity_run):
    r = parity_run(build_l2_edge_nb, tables=EDGE_TABLES)
    assert_tables_equal(r, EDGE_TABLES)


def test_l2_stages_at_parity_on_mixed_50(parity_run):
    r = parity_run(workload("mixed", 50, 10, 50), tables=(*CORE_TABLES, "Logical_Flow"), settle_timeout=180)
    assert_tables_equal(r, CORE_TABLES)
    assert_l2_stages(r)


def test_l2_stages_at_parity_on_edge_cases(parity_run):
    r = parity_run(build_l2_edge_nb, tables=("Logical_Flow",))
    assert_l2_stages(r)


def gateway_and_ha_nb() -> object:
    return nbctl_commands(
        ["ls-add", "pub"], ["lr-add", "r1"],
        ["lrp-add", "r1", "r1-pub", "02:00:00:00:00:01", "172.16.0.1/24", "2001:db8::1/64"],
        ["lrp-set-gateway-chassis", "r1-pub", "hv1", "30"], ["lrp-set-gateway-chassis", "r1-pub", "hv2", "20"],
        ["lsp-add", "pub", "pub-r1"], ["lsp-set-type", "pub-r1", "router"],
        ["lsp-set-addresses", "pub-r1", "router"], ["lsp-set-options", "pub-r1", "router-port=r1-pub"],
        ["lsp-add", "pub", "ln"], ["lsp-set-type", "ln", "localnet"], ["lsp-set-addresses", "ln", "unknown"],
        ["lsp-set-options", "ln", "network_name=phys"],
        ["lr-add", "gw"], ["set", "logical_router", "gw", "options:chassis=hv3"],
        ["lrp-add", "gw", "gw-pub", "02:00:00:00:00:02", "172.16.0.2/24"],
        ["lsp-add", "pub", "pub-gw"], ["lsp-set-type", "pub-gw", "router"],
        ["lsp-set-addresses", "pub-gw", "router"],
        ["lsp-set-options", "pub-gw", "router-port=gw-pub", "nat-addresses=router"],
        ["lr-nat-add", "gw", "snat", "172.16.0.2", "10.0.0.0/24"],
        ["lr-add", "a"], ["lr-add", "b"],
        ["lrp-add", "a", "a-b", "02:00:00:00:01:01", "10.9.0.1/30", "peer=b-a"],
        ["lrp-add", "b", "b-a", "02:00:00:00:01:02", "10.9.0.2/30", "peer=a-b"],
        ["ls-add", "int"], ["lsp-add", "int", "vm1"], ["lsp-set-addresses", "vm1", "0a:00:00:00:00:01 10.0.0.5"],
        ["lsp-add", "int", "vm1-c", "vm1", "7"], ["lsp-set-addresses", "vm1-c", "0a:00:00:00:00:02 10.0.0.6"],
        ["lsp-add", "int", "lp"], ["lsp-set-type", "lp", "localport"],
        ["lsp-add", "int", "ext"], ["lsp-set-type", "ext", "external"],
        ["lsp-set-addresses", "ext", "0a:00:00:00:00:03 10.0.0.7"],
        ["lsp-add", "int", "off"], ["lsp-set-enabled", "off", "disabled"],
        ["lr-add", "down"], ["set", "logical_router", "down", "enabled=false"],
    )


def test_core_tables_equal_with_gateways_peers_and_port_types(parity_run):
    r = parity_run(gateway_and_ha_nb(), tables=CORE_TABLES)
    assert_tables_equal(r, CORE_TABLES)


def build_switch_lb_nb(remote: str) -> None:
    from ovn_northd_py.devtools.servers import nbctl

    cmds: list[list[str]] = [["ls-add", f"s{i}"] for i in range(4)]
    cmds += [["lr-add", "r0"]]
    cmds += [["lb-add", "web", "10.0.0.100:80", "10.0.0.2:80,10.0.0.3:80", "tcp"],
             ["lb-add", "dns", "10.0.0.53:53", "10.0.0.4:53", "udp"],
             ["lb-add", "v6", "[fd00::100]:443", "[fd00::2]:443", "tcp"],
             ["lb-add", "noport", "10.0.0.200", "10.0.0.5"],
             ["lb-add", "router-only", "20.0.0.1:80", "20.0.0.2:80"],
             ["lb-add", "unused", "30.0.0.1:80", "30.0.0.2:80"],
             ["ls-lb-add", "s0", "web"], ["ls-lb-add", "s1", "web"], ["ls-lb-add", "s2", "dns"],
             ["ls-lb-add", "s3", "noport"], ["lr-lb-add", "r0", "router-only"],
             ["set", "load_balancer", "web", "options:reject=true"],
             ["create", "load_balancer_group", "name=grp"]]
    for c in cmds:
        nbctl(remote, *c)
    grp = nbctl(remote, "--bare", "--columns=_uuid", "find", "load_balancer_group", "name=grp").strip()
    for lb in ("v6", "dns"):
        u = nbctl(remote, "--bare", "--columns=_uuid", "find", "load_balancer", f"name={lb}").strip()
        nbctl(remote, "add", "load_balancer_group", grp, "load_balancer", u)
    for sw in ("s0", "s3"):
        nbctl(remote, "add", "logical_switch", sw, "load_balancer_group", grp)


def test_switch_load_balancers_equal_reference(parity_run, parity_profile):
    r = parity_run(build_switch_lb_nb, tables=("Load_Balancer", "Datapath_Binding"))
    assert_tables_equal(r, ("Load_Balancer", "Datapath_Binding"))
    # The switches' four (25.03, lb_split_datapath_groups: the router's one too).
    assert r.tables["Load_Balancer"].ref_count == (5 if parity_profile.has("lb_split_datapath_groups") else 4)


@pytest.mark.parametrize("scale", [(3, 3, 3)])
def test_mixed_small_has_no_wrong_flows(parity_run, scale):
    r = parity_run(workload("mixed", *scale), tables=("Logical_Flow",))
    assert r.flows is not None and r.flows.extra == 0, r.report()
