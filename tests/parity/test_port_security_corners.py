"""Parity with the reference ovn-northd for switch port security corners.

In OVN 23.03 the port_security rules are enforced by ovn-controller from the SB
``Port_Binding.port_security`` column; northd writes the check/apply flows, and port security
still changes which ports learn MACs (``ls_in_lookup_fdb``/``ls_in_put_fdb``).  Several MACs,
MACs with IPv4/IPv6 addresses and prefixes, ``unknown`` with and without port security, and
every port type are crossed here; the whole SB Port_Binding table and every logical flow must
equal the reference's.
"""

from __future__ import annotations

from ovn_northd_py.devtools.servers import nbctl

PS_STAGES = (
    "ls_in_check_port_sec", "ls_in_apply_port_sec", "ls_out_check_port_sec", "ls_out_apply_port_sec",
    "ls_in_lookup_fdb", "ls_in_put_fdb", "ls_in_arp_rsp", "ls_in_l2_lkup", "ls_in_l2_unknown",
)

PS_VALUES = (
    ("ps1", ["00:00:00:00:00:01"]),
    ("ps2", ["00:00:00:00:00:02", "00:00:00:00:00:12", "00:00:00:00:00:22"]),
    ("ps3", ["00:00:00:00:00:03 10.0.0.3 10.0.0.0/24 10.1.0.3/16 fd00::3 fd00::/64 fe80::3"]),
    ("ps4", ["00:00:00:00:00:04 fd00::4/64", "00:00:00:00:00:14 10.0.0.14"]),
    ("ps5", ["00:00:00:00:00:05 10.0.0.5", "bogus"]),
    ("ps6", ["0A:00:00:00:00:06  10.0.0.6   FD00::6"]),
)


# port_security entries that do (not) count for MAC learning on a port with "unknown": only entries
# beginning with a MAC count, read leniently ("<mac> foo" counts, "bogus" and "" do not).
PS_LEARNING = {
    "l_bogus": ["bogus"], "l_empty": [""], "l_two_bad": ["bogus", "", "zz:zz"], "l_short": ["0a:00:00:00:0e"],
    "l_ipfirst": ["10.0.0.15 0a:00:00:00:00:0f"], "l_badip4": ["0a:00:00:00:00:02 10.0.0.300"],
    "l_badip6": ["0A:00:00:00:00:03 fd00::1/129"], "l_good_bad": ["0a:00:00:00:00:04", "bogus"],
    "l_macfoo": ["0a:00:00:00:00:05 foo"], "l_glued": ["0a:00:00:00:00:0bjunk"],
    "l_lead": ["  0a:00:00:00:00:0c 10.0.0.12"], "l_comma": ["0a:00:00:00:00:0d,10.0.0.13"],
    "l_v4net": ["0a:00:00:00:00:08 10.0.0.8/33"],
}


def _txn(remote: str, *commands: list[str]) -> None:
    args: list[str] = []
    for i, c in enumerate(commands):
        args += (["--"] if i else []) + c
    nbctl(remote, *args)


def build_port_security_nb(remote: str) -> None:
    cmds: list[list[str]] = [["ls-add", "sw0"], ["ls-add", "sw1"], ["ls-add", "sw2"]]
    # VIFs: every port_security shape, with matching addresses, with unknown, with none.
    for name, ps in PS_VALUES:
        mac = ps[0].split()[0]
        cmds += [["lsp-add", "sw0", name], ["lsp-set-addresses", name, f"{mac.lower()} 10.0.0.{name[-1]}"],
                 ["lsp-set-port-security", name, *ps]]
    cmds += [["lsp-add", "sw0", "unk_ps"], ["lsp-set-addresses", "unk_ps", "unknown", "00:00:00:00:00:07 10.0.0.7"],
             ["lsp-set-port-security", "unk_ps", "00:00:00:00:00:07 10.0.0.7"],
             ["lsp-add", "sw0", "unk"], ["lsp-set-addresses", "unk", "unknown"],
             ["lsp-add", "sw0", "unk_ps_only"], ["lsp-set-addresses", "unk_ps_only", "unknown"],
             ["lsp-set-port-security", "unk_ps_only", "00:00:00:00:00:08"],
             ["lsp-add", "sw0", "dis_ps"], ["lsp-set-addresses", "dis_ps", "00:00:00:00:00:09 10.0.0.9"],
             ["lsp-set-port-security", "dis_ps", "00:00:00:00:00:09 10.0.0.9"], ["lsp-set-enabled", "dis_ps", "disabled"],
             ["lsp-add", "sw0", "dyn_ps"], ["lsp-set-addresses", "dyn_ps", "dynamic"],
             ["lsp-set-port-security", "dyn_ps", "00:00:00:00:00:0a 10.0.0.10"],
             ["set", "logical_switch", "sw0", "other_config:subnet=10.0.0.0/24"]]
    # Other port types with port security.
    for kind, name, sw in (("localport", "lp", "sw1"), ("external", "ext", "sw1"), ("virtual", "vip", "sw1"),
                           ("localnet", "ln", "sw1"), ("l2gateway", "l2g", "sw1"), ("vtep", "vt", "sw2"),
                           ("localnet", "ln2", "sw2")):
        cmds += [["lsp-add", sw, name], ["lsp-set-type", name, kind],
                 ["lsp-set-addresses", name, "unknown" if kind == "localnet" else "00:00:00:00:01:01 10.1.0.1"],
                 ["lsp-set-port-security", name, "00:00:00:00:01:01 10.1.0.1"]]
    cmds += [["lsp-set-options", "ln", "network_name=phys"], ["lsp-set-options", "ln2", "network_name=phys"],
             ["lsp-set-options", "vip", "virtual-ip=10.1.0.50", "virtual-parents=vm1"],
             ["lsp-set-options", "vt", "vtep-physical-switch=ps", "vtep-logical-switch=ls"],
             ["lsp-add", "sw1", "vm1"], ["lsp-set-addresses", "vm1", "00:00:00:00:01:02 10.1.0.2"],
             ["lsp-set-port-security", "vm1", "00:00:00:00:01:02 10.1.0.2 10.1.0.50"],
             # Options that 23.03 does not know: no effect.
             ["lsp-set-options", "vm1", "pkt_clone_type=mc_unknown"],
             ["lsp-add", "sw2", "vm2"], ["lsp-set-addresses", "vm2", "unknown"],
             ["lsp-set-port-security", "vm2", "00:00:00:00:02:02"],
             ["lr-add", "r0"], ["lrp-add", "r0", "r0-sw2", "00:00:00:00:ff:01", "10.2.0.254/24"],
             ["lsp-add", "sw2", "sw2-r0"], ["lsp-set-type", "sw2-r0", "router"],
             ["lsp-set-addresses", "sw2-r0", "router"], ["lsp-set-options", "sw2-r0", "router-port=r0-sw2"],
             ["lsp-set-port-security", "sw2-r0", "00:00:00:00:ff:01"],
             # A port group's address sets come from addresses, not port_security.
             ["pg-add", "pgps", "ps3", "ps4", "unk_ps", "unk_ps_only", "vm1", "lp"]]
    for name, ps in PS_LEARNING.items():
        cmds += [["lsp-add", "sw2", name], ["lsp-set-addresses", name, "unknown"],
                 ["set", "logical_switch_port", name, "port_security=[" + ",".join(f'"{v}"' for v in ps) + "]"]]
    cmds += [["lsp-add", "sw2", "ln_learn"], ["lsp-set-type", "ln_learn", "localnet"],
             ["lsp-set-addresses", "ln_learn", "unknown"],
             ["lsp-set-options", "ln_learn", "network_name=phys2", "localnet_learn_fdb=true"],
             ["set", "logical_switch_port", "ln_learn", 'port_security=["bogus"]']]
    _txn(remote, *cmds)


def test_port_security_parity(parity_run) -> None:
    r = parity_run(build_port_security_nb, tables=("Logical_Flow", "Port_Binding", "Datapath_Binding",
                                                            "Address_Set", "Port_Group"))
    assert r.reference.settled and r.ours.settled, r.report()
    assert all(r.tables[t].ok for t in ("Port_Binding", "Address_Set", "Port_Group")), r.report()
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in PS_STAGES:
        assert by_stage[name].ok, f"{name}\n" + r.report()
    assert flows.extra == 0 and flows.missing == 0, r.report()
