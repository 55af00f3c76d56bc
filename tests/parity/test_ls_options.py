"""Parity for switch options the reference reacts to: other_config:vlan-passthru (Port_Binding options),
options:localnet_learn_fdb, vtep ports' hairpin skip, and the switch's Copp meters."""

from __future__ import annotations

from ovn_northd_py.devtools.servers import nbctl


def _txn(remote: str, *commands: list[str]) -> str:
    args: list[str] = []
    for i, c in enumerate(commands):
        args += (["--"] if i else []) + c
    return nbctl(remote, *args)


def _switch_with_router(remote: str, sw: str, n: int) -> None:
    lrp = f"r{n}-{sw}"
    _txn(remote, ["ls-add", sw], ["lr-add", f"r{n}"],
         ["lrp-add", f"r{n}", lrp, f"02:00:00:00:00:{n:02x}", f"10.{n}.0.254/24", f"fd0{n}::fe/64"],
         ["lsp-add", sw, f"{sw}-r{n}"], ["lsp-set-type", f"{sw}-r{n}", "router"],
         ["lsp-set-addresses", f"{sw}-r{n}", "router"], ["lsp-set-options", f"{sw}-r{n}", f"router-port={lrp}"])


def build_ls_options_nb(remote: str) -> None:
    _switch_with_router(remote, "sw0", 1)
    _txn(remote, ["set", "logical_switch", "sw0", "other_config:vlan-passthru=true"],
         ["lsp-add", "sw0", "vm1"], ["lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.1.0.1"],
         ["lsp-add", "sw0", "ln"], ["lsp-set-type", "ln", "localnet"], ["lsp-set-addresses", "ln", "unknown"],
         ["lsp-set-options", "ln", "network_name=phys", "localnet_learn_fdb=TRUE"],
         ["lsp-add", "sw0", "lp"], ["lsp-set-type", "lp", "localport"],
         ["lsp-add", "sw0", "ext"], ["lsp-set-type", "ext", "external"],
         ["lsp-add", "sw0", "vif3"], ["lsp-set-addresses", "vif3", "unknown"])
    _txn(remote, ["ls-add", "sw1"], ["set", "logical_switch", "sw1", "other_config:vlan-passthru=TRUE"],
         ["lsp-add", "sw1", "a1"],
         # No "unknown": no learning.
         ["lsp-add", "sw1", "ln1"], ["lsp-set-type", "ln1", "localnet"],
         ["lsp-set-options", "ln1", "network_name=phys", "localnet_learn_fdb=true"],
         # A disabled vtep port still makes the switch skip RAMP packets to the L2 lookup.
         ["lsp-add", "sw1", "vt"], ["lsp-set-type", "vt", "vtep"], ["lsp-set-enabled", "vt", "disabled"],
         ["lsp-set-options", "vt", "vtep-physical-switch=ps1", "vtep-logical-switch=ls1"])
    _txn(remote, ["ls-add", "sw2"], ["set", "logical_switch", "sw2", "other_config:vlan-passthru=yes"],
         ["lsp-add", "sw2", "a2"],
         # Port security: no learning; l2gateway ports never learn.
         ["lsp-add", "sw2", "ln2"], ["lsp-set-type", "ln2", "localnet"], ["lsp-set-addresses", "ln2", "unknown"],
         ["lsp-set-port-security", "ln2", "00:00:00:00:00:99"],
         ["lsp-set-options", "ln2", "network_name=phys", "localnet_learn_fdb=true"],
         ["lsp-add", "sw2", "l2g"], ["lsp-set-type", "l2g", "l2gateway"], ["lsp-set-addresses", "l2g", "unknown"],
         ["lsp-set-options", "l2g", "network_name=phys", "l2gateway-chassis=hv1", "localnet_learn_fdb=true"],
         ["lsp-add", "sw2", "vt2"], ["lsp-set-type", "vt2", "vtep"], ["lsp-set-addresses", "vt2", "unknown"],
         ["lsp-set-options", "vt2", "vtep-physical-switch=ps1", "vtep-logical-switch=ls2"])


COPP = {"dhcpv4-opts": "m1", "dhcpv6-opts": "m1", "dns": "m2", "reject": "m2", "acl-logging": "m1",
        "svc-monitor": "m2", "tcp-reset": "m2", "icmp6-error": "m2", "nd-ns-resolve": "m2", "arp-resolve": "m2",
        "igmp": "m1", "icmp4-error": "m1", "nd-ra-opts": "m2", "nd-ns": "m2", "nd-na": "m2", "arp": "m2",
        "event-elb": "missing-meter"}


def build_copp_nb(remote: str) -> None:
    _switch_with_router(remote, "sw0", 1)
    _switch_with_router(remote, "sw1", 2)
    _txn(remote, ["meter-add", "m1", "drop", "100", "pktps"], ["meter-add", "m2", "drop", "10", "pktps"])
    meters = ",".join(f'"{k}"="{v}"' for k, v in COPP.items())
    copp = nbctl(remote, "create", "copp", "name=c1", f"meters={{{meters}}}").strip()
    # sw1 has the same services without a Copp; sw0's "dns" names a meter that does not exist.
    nbctl(remote, "set", "logical_switch", "sw0", f"copp={copp}")
    v4 = nbctl(remote, "create", "dhcp_options", "cidr=10.1.0.0/24",
               'options={"server_id"="10.1.0.254","server_mac"="00:00:00:00:ff:01","lease_time"="3600"}').strip()
    v6 = nbctl(remote, "create", "dhcp_options", 'cidr="fd01::/64"', 'options={"server_id"="00:00:00:00:ff:02"}').strip()
    dns = nbctl(remote, "create", "dns", 'records={"x.org"="10.1.0.1"}').strip()
    for sw, n in (("sw0", 1), ("sw1", 2)):
        vm = f"vm-{sw}"
        _txn(remote, ["lsp-add", sw, vm], ["lsp-set-addresses", vm, f"00:00:00:00:0{n}:01 10.{n}.0.1 fd0{n}::1"],
             ["set", "logical_switch_port", vm, f"dhcpv4_options={v4}", f"dhcpv6_options={v6}"],
             ["add", "logical_switch", sw, "dns_records", dns],
             ["set", "logical_switch", sw, "other_config:mcast_snoop=true"],
             ["acl-add", sw, "from-lport", "1000", "ip4.src==1.1.1.1", "reject"],
             ["--log", "--meter=m1", "acl-add", sw, "to-lport", "1000", "ip4.src==1.1.1.2", "allow-related"])


def assert_flows_equal(r) -> None:
    assert r.reference.settled and r.ours.settled, r.report()
    flows = r.flows
    assert flows is not None and flows.missing == 0 and flows.extra == 0, r.report()


def test_vlan_passthru_localnet_learn_fdb_and_vtep(parity_run):
    r = parity_run(build_ls_options_nb, tables=("Port_Binding", "Logical_Flow"))
    assert r.tables["Port_Binding"].ok, r.report()
    assert_flows_equal(r)
    by_stage = {s.stage: s for s in r.flows.stages}
    assert by_stage["ls_in_lookup_fdb"].ref_count > 3 and by_stage["ls_in_hairpin"].ref_count > 3, r.report()


def test_switch_copp_meters(parity_run):
    r = parity_run(build_copp_nb, tables=("Meter", "Logical_Flow"))
    assert r.tables["Meter"].ok, r.report()
    assert_flows_equal(r)


def test_nb_global_lb_hairpin_use_ct_mark_as_reference(parity_run):
    """23.03 does not copy NB_Global options:lb_hairpin_use_ct_mark to SB_Global, 25.03 does."""
    for value in ("true", "false"):
        r = parity_run(lambda remote, v=value: _txn(
            remote, ["ls-add", "sw0"], ["set", "nb_global", ".", f"options:lb_hairpin_use_ct_mark={v}", "options:foo=bar"]),
            tables=("SB_Global",))
        assert r.tables["SB_Global"].ok, r.report()
