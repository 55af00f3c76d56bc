"""Parity with the reference ovn-northd for NAT rule options (:mod:`ovn_northd_py.flows.lr_nat`).

A gateway router and a router with one distributed gateway port carry the same NAT rules:
``options:stateless`` (also on a floating IP), ``allowed_ext_ips`` / ``exempted_ext_ips`` address
sets (alone, with ``stateless``, and both at once: such a rule only answers ARP),
``external_port_range`` (valid and not: it is copied as written), centralised rules with only
``logical_port`` or only ``external_mac``, and the gateway router's ``dnat_force_snat_ip``,
``lb_force_snat_ip`` (both families) and ``snat-ct-zone``.  Every SB table must be equal.
"""

from __future__ import annotations

from collections.abc import Callable

from test_router_basics import Cmd, rport, vif

from ovn_northd_py.parity.harness import ParityResult, assert_parity, nbctl_commands

_N = iter(range(1, 10_000))


def transactions(*groups: list[Cmd]) -> Callable[[str], None]:
    """NB builder running each group of ovn-nbctl commands as its own transaction."""
    builders = [nbctl_commands(*g) for g in groups if g]

    def build(remote: str) -> None:
        for b in builders:
            b(remote)

    return build


def nat_row(router: str, *cols: str) -> list[Cmd]:
    """A NAT row created with ``create`` (for columns ``lr-nat-add`` does not set)."""
    ref = f"@nat{next(_N)}"
    return [["--id=" + ref, "create", "NAT", *cols], ["add", "logical_router", router, "nat", ref]]


def switches() -> list[Cmd]:
    return [
        ["ls-add", "pub"], ["ls-add", "int"],
        *vif("pub", "ln", "unknown", type="localnet", options=["network_name=phys"]),
        *vif("int", "vm1", "0a:00:00:00:00:01 10.1.0.31"), *vif("int", "vm2", "0a:00:00:00:00:02 10.1.0.32"),
        ["--id=@as1", "create", "Address_Set", "name=as1", "addresses=10.9.9.9,10.9.9.10"],
        ["--id=@as2", "create", "Address_Set", "name=as2", "addresses=10.8.8.8"],
        ["--id=@as6", "create", "Address_Set", "name=as6", 'addresses="fd99::1"'],
    ]


def router(name: str, gateway: bool) -> list[Cmd]:
    cmds: list[Cmd] = [["lr-add", name]]
    if gateway:
        cmds.append(["set", "logical_router", name, "options:chassis=hv1",
                     'options:dnat_force_snat_ip="172.16.0.200"',
                     'options:lb_force_snat_ip="172.16.0.201 fd16::201"', "options:snat-ct-zone=100"])
    cmds += [
        ["lrp-add", name, f"{name}-pub", "02:00:00:00:10:01" if gateway else "02:00:00:00:20:01",
         "172.16.0.10/24" if gateway else "172.16.0.20/24", "fd16::10/64" if gateway else "fd16::20/64"],
        ["lrp-add", name, f"{name}-int", "02:00:00:00:10:02" if gateway else "02:00:00:00:20:02",
         "10.1.0.1/24", "fd01::1/64"],
    ]
    if not gateway:
        cmds.append(["lrp-set-gateway-chassis", f"{name}-pub", "hv1", "20"])
    cmds += rport("pub", f"pub-{name}", f"{name}-pub") + rport("int", f"int-{name}", f"{name}-int")
    cmds.append(["lsp-set-options", f"pub-{name}", f"router-port={name}-pub", "nat-addresses=router"])
    return cmds


def nat_rules(r: str, gateway: bool) -> list[Cmd]:
    e = "172.16.1" if gateway else "172.16.2"
    cmds: list[Cmd] = [
        ["lr-nat-add", r, "dnat", f"{e}.100", "10.1.0.10"],
        ["lr-nat-add", r, "snat", f"{e}.101", "10.1.0.0/24"],
        ["lr-nat-add", r, "dnat_and_snat", "fd16::102" if gateway else "fd16::202", "fd01::12"],
        ["--stateless", "lr-nat-add", r, "dnat_and_snat", f"{e}.103", "10.1.0.13"],
        ["--portrange", "lr-nat-add", r, "snat", f"{e}.104", "10.1.0.64/26", "1000-2000"],
        ["--portrange", "lr-nat-add", r, "dnat_and_snat", f"{e}.105", "10.1.0.15", "1000-2000"],
        ["--portrange", "lr-nat-add", r, "dnat", f"{e}.106", "10.1.0.16", "1000-2000"],
        ["--stateless", "lr-nat-add", r, "dnat_and_snat", "fd16::107" if gateway else "fd16::207", "fd01::17"],
        *nat_row(r, "type=dnat_and_snat", f"external_ip={e}.110", "logical_ip=10.1.0.20", "allowed_ext_ips=@as1"),
        *nat_row(r, "type=snat", f"external_ip={e}.111", "logical_ip=10.1.1.0/24", "allowed_ext_ips=@as1"),
        *nat_row(r, "type=dnat", f"external_ip={e}.112", "logical_ip=10.1.0.22", "exempted_ext_ips=@as2"),
        *nat_row(r, "type=snat", f"external_ip={e}.113", "logical_ip=10.1.2.0/24", "exempted_ext_ips=@as2"),
        *nat_row(r, "type=dnat_and_snat", f"external_ip={e}.114", "logical_ip=10.1.0.24",
                 "exempted_ext_ips=@as2", "allowed_ext_ips=@as1"),
        *nat_row(r, "type=snat", f"external_ip={e}.117", "logical_ip=10.1.7.0/24",
                 "exempted_ext_ips=@as2", "allowed_ext_ips=@as1"),
        *nat_row(r, "type=dnat_and_snat", f"external_ip={e}.115", "logical_ip=10.1.0.25",
                 "exempted_ext_ips=@as2", "options:stateless=true"),
        *nat_row(r, "type=dnat_and_snat", f"external_ip={e}.116", "logical_ip=10.1.0.26",
                 "allowed_ext_ips=@as1", "options:stateless=true"),
        *nat_row(r, "type=dnat_and_snat", 'external_ip="fd16::118"' if gateway else 'external_ip="fd16::218"',
                 'logical_ip="fd01::18"', "allowed_ext_ips=@as6"),
        *nat_row(r, "type=snat", f"external_ip={e}.119", "logical_ip=10.1.9.0/24", "external_port_range=70000-2"),
        *nat_row(r, "type=dnat_and_snat", f"external_ip={e}.120", "logical_ip=10.1.0.40", "logical_port=vm1"),
        *nat_row(r, "type=dnat_and_snat", f"external_ip={e}.121", "logical_ip=10.1.0.41",
                 'external_mac="0a:00:00:00:99:09"'),
    ]
    if not gateway:
        cmds += [
            ["lr-nat-add", r, "dnat_and_snat", f"{e}.130", "10.1.0.31", "vm1", "0a:00:00:00:99:01"],
            ["--stateless", "lr-nat-add", r, "dnat_and_snat", f"{e}.132", "10.1.0.32", "vm2", "0a:00:00:00:99:02"],
        ]
    return cmds


def nat_options_nb() -> Callable[[str], None]:
    return transactions(switches() + router("g1", True) + router("d1", False)
                        + nat_rules("g1", True) + nat_rules("d1", False))


def _stage(result: ParityResult, name: str) -> int:
    assert result.flows is not None
    return next(s.ref_count for s in result.flows.stages if s.stage == name)


def test_nat_rule_options_on_gateway_and_distributed_routers(parity_run):
    r = parity_run(nat_options_nb())
    assert_parity(r)
    # The options are exercised: exemption bypasses (102), stateless redirects (70/75).
    assert _stage(r, "lr_in_dnat") >= 30 and _stage(r, "lr_in_gw_redirect") >= 5
    flows = r.flows
    assert flows is not None
    dnat = next(s for s in flows.stages if s.stage == "lr_in_dnat")
    assert dnat.ok
