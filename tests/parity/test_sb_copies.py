"""Parity for the SB tables northd copies from NB rows: Static_MAC_Binding, Chassis_Template_Var, Mirror."""

from __future__ import annotations

from ovn_northd_py.devtools.servers import nbctl


def _txn(remote: str, *commands: list[str]) -> str:
    args: list[str] = []
    for i, c in enumerate(commands):
        args += (["--"] if i else []) + c
    return nbctl(remote, *args)


def _base(remote: str) -> None:
    _txn(remote, ["ls-add", "sw0"], ["lsp-add", "sw0", "vm1"], ["lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1"],
         ["lsp-add", "sw0", "vm2"], ["lsp-set-addresses", "vm2", "00:00:00:00:00:02 10.0.0.2"],
         ["lr-add", "r0"], ["lrp-add", "r0", "r0-sw0", "02:00:00:00:00:01", "10.0.0.254/24"],
         ["lsp-add", "sw0", "sw0-r0"], ["lsp-set-type", "sw0-r0", "router"],
         ["lsp-set-addresses", "sw0-r0", "router"], ["lsp-set-options", "sw0-r0", "router-port=r0-sw0"],
         ["lr-add", "off"], ["set", "logical_router", "off", "enabled=false"],
         ["lrp-add", "off", "off-p", "02:00:00:00:00:09", "10.9.0.1/24"])


def build_copies_nb(remote: str) -> None:
    _base(remote)
    _txn(remote, ["static-mac-binding-add", "r0-sw0", "10.0.0.50", "00:00:00:00:00:50"])
    for cols in (
        ["logical_port=r0-sw0", "ip=10.0.0.51", 'mac="00:00:00:00:00:51"', "override_dynamic_mac=true"],
        ["logical_port=r0-sw0", 'ip="fd00::5"', 'mac="00:00:00:00:00:65"'],
        ["logical_port=r0-sw0", "ip=bogus", 'mac="not-a-mac"'],  # copied as it is
        ["logical_port=nope", "ip=10.0.0.52", 'mac="00:00:00:00:00:52"'],  # unknown port: no SB row
        ["logical_port=vm1", "ip=10.0.0.53", 'mac="00:00:00:00:00:53"'],  # switch port: no SB row
        ["logical_port=off-p", "ip=10.9.0.5", 'mac="00:00:00:00:00:66"'],  # router without datapath
    ):
        nbctl(remote, "create", "static_mac_binding", *cols)
    nbctl(remote, "create", "chassis_template_var", "chassis=hv1", "variables:vip=10.0.0.100", "variables:port=80",
          "external_ids:owner=test")
    nbctl(remote, "create", "chassis_template_var", "chassis=hv2", "variables:vip=10.0.0.101")
    nbctl(remote, "create", "chassis_template_var", "chassis=hv3")
    m1 = nbctl(remote, "create", "mirror", "name=m1", "type=gre", "index=1", "filter=to-lport", "sink=10.10.10.10",
               "external_ids:owner=test").strip()
    m2 = nbctl(remote, "create", "mirror", "name=m2", "type=erspan", "index=2", "filter=from-lport",
               "sink=10.10.10.11").strip()
    nbctl(remote, "create", "mirror", "name=unused", "type=erspan", "index=3", "filter=from-lport", "sink=10.10.10.12")
    _txn(remote, ["add", "logical_switch_port", "vm1", "mirror_rules", m1, m2],
         ["add", "logical_switch_port", "vm2", "mirror_rules", m2],
         ["add", "logical_switch_port", "sw0-r0", "mirror_rules", m1])


def test_static_mac_bindings_template_vars_and_mirrors(parity_run):
    tables = ("Static_MAC_Binding", "Chassis_Template_Var", "Mirror", "Port_Binding")
    r = parity_run(build_copies_nb, tables=(*tables, "Logical_Flow"))
    assert r.reference.settled and r.ours.settled, r.report()
    for t, n in zip(tables, (4, 3, 3, 4), strict=True):
        assert r.tables[t].ok and r.tables[t].ref_count == n, r.report()
    assert r.flows is not None and r.flows.missing == 0 and r.flows.extra == 0, r.report()
