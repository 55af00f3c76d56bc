"""Parity with the reference ovn-northd for the switch services stages: ARP/ND responder, DHCP, DNS
and external ports, plus the SB DNS table."""

from __future__ import annotations

from ovn_northd_py.parity.harness import nbctl_commands, workload
from ovn_northd_py.parity.services_nb import build_lsp_down_nb, build_services_nb

SERVICE_STAGES = (
    "ls_in_arp_rsp", "ls_in_dhcp_options", "ls_in_dhcp_response", "ls_in_dns_lookup", "ls_in_dns_response",
    "ls_in_external_port",
)


def switch_count(result) -> int:
    dps = result.ref_dump.rows("Datapath_Binding").values()
    return sum(1 for row in dps if "logical-switch" in row["external_ids"].as_dict())


def assert_service_stages(result, stages=SERVICE_STAGES, exercised=SERVICE_STAGES) -> None:
    assert result.reference.settled and result.ours.settled, result.report()
    flows = result.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    fallbacks = switch_count(result)  # one priority-0 flow per switch
    for name in stages:
        s = by_stage[name]
        if name in exercised:
            assert s.ref_count > fallbacks, f"{name}: the NB does not exercise it\n{result.report()}"
        assert not s.missing and not s.extra, result.report()
    # Stages other helpers build may still be missing flows, but nothing we write may be wrong.
    assert flows.extra == 0, result.report()


def test_services_nb(parity_run):
    """VIFs with IPv4/IPv6, router-type, virtual, localnet, localport and external ports (with an HA
    chassis group), DHCPv4/v6 options (valid and not), DNS records, a forwarding group, health checks."""
    r = parity_run(build_services_nb, tables=("Logical_Flow", "DNS", "Datapath_Binding"))
    # Plus the L2 stages these ports touch: forwarding groups, disabled external ports, vlan-passthru.
    assert_service_stages(r, stages=(*SERVICE_STAGES, "ls_in_l2_lkup", "ls_in_l2_unknown", "ls_in_check_port_sec"))
    assert r.tables["DNS"].ok and r.tables["DNS"].ref_count == 3, r.report()


def test_ignore_lsp_down_false(parity_run):
    r = parity_run(build_lsp_down_nb, tables=("Logical_Flow",))
    assert_service_stages(r, exercised=("ls_in_arp_rsp",))


def test_dns_only_and_empty_records(parity_run):
    def build(remote: str) -> None:
        from ovn_northd_py.devtools.servers import nbctl

        nbctl(remote, "ls-add", "a", "--", "ls-add", "b", "--", "ls-add", "c")
        u = nbctl(remote, "create", "dns", 'records={"x.org"="1.2.3.4"}').strip()
        e = nbctl(remote, "create", "dns", "records={}").strip()
        nbctl(remote, "add", "logical_switch", "a", "dns_records", u, "--", "add", "logical_switch", "b",
              "dns_records", u, e, "--", "add", "logical_switch", "c", "dns_records", e)

    r = parity_run(build, tables=("Logical_Flow", "DNS"))
    assert_service_stages(r, exercised=("ls_in_dns_lookup", "ls_in_dns_response"))
    assert r.tables["DNS"].ok and r.tables["DNS"].ref_count == 2, r.report()


def test_mixed_10_service_stages(parity_run):
    r = parity_run(workload("mixed", 10, 10, 10), tables=("Logical_Flow", "DNS"))
    assert_service_stages(r, exercised=("ls_in_arp_rsp",))


def test_external_ports_without_localnet_or_routers(parity_run):
    r = parity_run(nbctl_commands(
        ["ls-add", "s"], ["lsp-add", "s", "e"], ["lsp-set-type", "e", "external"],
        ["lsp-set-addresses", "e", "00:00:00:00:00:01 10.0.0.1"],
        ["lsp-add", "s", "ln"], ["lsp-set-type", "ln", "localnet"], ["lsp-set-addresses", "ln", "unknown"],
        ["lsp-set-options", "ln", "network_name=phys"],
    ), tables=("Logical_Flow",))
    assert_service_stages(r, exercised=())
