"""Parity for template load balancers (``options:template=true``, OVN 23.03).

Observed on the reference: VIPs (``^VIP[:^PORT|:port]``) and backends name Chassis_Template_Var
variables, and the flows keep the ``^VAR`` tokens (``ip4.dst == ^vip && tcp.dst == ^port``,
``ct_lb_mark(backends=^backends)``), in the family of ``options:address-family`` (IPv4 unless
``ipv6``), on switches and on gateway, distributed-gateway and plain routers, with controller
events, rejects and drops like any VIP.  The affinity flows write template VIPs as IPv6 with
port-less backends; backends are all in template form or all explicit (mixed: the VIP is dropped,
``[IP6]`` is not template form); a token outside a template load balancer is a bad VIP.  The SB
Load_Balancer row brackets an IPv6 template VIP with a port (``[^vip6]:^port``); the router's
``_rtr_lb`` address sets and the switches' ARP flooding leave template VIPs out (literal ones
count with ``neighbor_responder=all``, whatever the router's networks); ``nat-addresses=router``
lists them.  Malformed VIPs and backends of plain load balancers drop the whole VIP.  26.03 reads
template backends one by one instead (mixed ones kept, ``[IP6]:PORT`` too; affinity flows keep the
explicit backends' ports) and lets template VIPs through lr_in_ip_input (100).
"""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.servers import nbctl

STAGES = ("ls_in_pre_lb", "ls_in_pre_stateful", "ls_in_lb_aff_check", "ls_in_lb", "ls_in_lb_aff_learn",
          "ls_in_l2_lkup", "ls_in_pre_hairpin", "ls_in_nat_hairpin", "ls_in_hairpin", "lr_in_defrag",
          "lr_in_lb_aff_check", "lr_in_dnat", "lr_in_lb_aff_learn", "lr_out_undnat", "lr_in_ip_input",
          "lr_in_unsnat", "lr_out_snat")
TABLES = ("Load_Balancer", "Address_Set", "Port_Binding", "Chassis_Template_Var", "Logical_Flow")


def _tlb(name: str, vip: str, backends: str, *options: str, proto: str = "tcp") -> list[str]:
    return ["create", "load_balancer", f"name={name}", f"protocol={proto}", f'vips:"{vip}"="{backends}"', *options]


def _v4(*more: str) -> tuple[str, ...]:
    return ("options:template=true", "options:address-family=ipv4", *more)


def _v6(*more: str) -> tuple[str, ...]:
    return ("options:template=true", "options:address-family=ipv6", *more)


def build_templates_nb(remote: str) -> None:
    cmds = [
        ["ls-add", "s0"], ["lsp-add", "s0", "p0"], ["ls-add", "s1"], ["lsp-add", "s1", "q0"],
        ["create", "chassis_template_var", "chassis=hv1", "variables:vip=10.0.0.100", "variables:port=80",
         'variables:backends="10.0.0.2:80,10.0.0.3:80"', "variables:b1=10.0.0.4", "variables:bp=8080"],
        ["lb-add", "plain", "10.0.0.200:80", "10.0.0.2:80"],
        _tlb("t1", "^vip:^port", "^backends", *_v4()),
        _tlb("t2", "^vip:53", "^b1:^bp,^b1:53", *_v4(), proto="udp"),
        _tlb("t6", "^vip6:^port", "^b6", *_v6()),
        _tlb("t6b", "^vip6b:^port", "^b6:^p6,^b7", *_v6()),
        _tlb("tnp", "^vipnp", "^b1", *_v4()),
        _tlb("tempty", "^vipe:^port", "", *_v4()),
        _tlb("tbad", "^vipx:^port", "^b1"),  # not a template load balancer: a bad VIP
        _tlb("tmix", "10.0.0.210:80", "10.0.0.2:80", *_v4()),
        _tlb("taff", "^vipa:^port", "^b1:80", *_v4("options:affinity_timeout=30")),
        _tlb("taff2", "^vipb:^port", "10.0.0.9:80,^b1:^bp,^b2", *_v4("options:affinity_timeout=30")),
        _tlb("taff6", "^vipc:^port", "[fd00::9]:80,^b1:^bp", *_v6("options:affinity_timeout=30")),
        _tlb("trej", "^vipr:^port", "", *_v4("options:reject=true")),
        _tlb("tnoaf", "^vipn:^port", "^b1", "options:template=true"),
        _tlb("tnr", "10.0.0.211:80", "10.0.0.2:80", *_v4("options:neighbor_responder=all")),
        _tlb("tnr2", "10.9.9.9:80", "10.0.0.2:80", *_v4("options:neighbor_responder=all")),
        _tlb("ttok", "^a:^b:^c", "^x", *_v4()),
        _tlb("tlit", "notanip:80", "^b1", *_v4()),
        _tlb("tlitb", "^vlb:80", "notanip:80,^b1", *_v4()),
        _tlb("tv6lit", "[fd00::77]:80", "[fd00::2]:80", *_v6()),
        _tlb("bogus", "bogus:80", "10.0.0.2:80"),
        _tlb("partial", "10.0.0.230:80", "10.0.0.2:80,bogus:80"),
        _tlb("fam", "10.0.0.231:80", "[fd00::2]:80,10.0.0.3:80"),
        _tlb("badport", "10.0.0.232:99999", "10.0.0.2:80"),
        _tlb("badbport", "10.0.0.233:80", "10.0.0.2:99999,10.0.0.3:80"),
        ["lr-add", "gr"], ["set", "logical_router", "gr", "options:chassis=hv1"],
        ["lrp-add", "gr", "gr-p", "02:00:00:00:01:01", "10.0.0.1/24", "fd00::1/64"],
        ["lsp-add", "s0", "s0-gr"], ["lsp-set-type", "s0-gr", "router"], ["lsp-set-addresses", "s0-gr", "router"],
        ["lsp-set-options", "s0-gr", "router-port=gr-p"],
        ["lr-add", "dr"], ["lrp-add", "dr", "dr-p", "02:00:00:00:02:01", "172.16.0.1/24"],
        ["lrp-set-gateway-chassis", "dr-p", "hv1", "10"],
        ["lrp-add", "dr", "dr-i", "02:00:00:00:02:02", "10.1.0.1/24"],
        ["lr-add", "pr"], ["lrp-add", "pr", "pr-p", "02:00:00:00:03:01", "10.2.0.1/24"],
        ["ls-add", "pub"], ["lsp-add", "pub", "pub-dr"], ["lsp-set-type", "pub-dr", "router"],
        ["lsp-set-addresses", "pub-dr", "router"],
        ["lsp-set-options", "pub-dr", "router-port=dr-p", "nat-addresses=router"],
    ]
    on_s0 = ["plain", "t1", "t2", "t6", "tnp", "tempty", "tbad", "tmix", "taff", "trej", "tnoaf", "taff6", "tnr"]
    on_s1 = ["t1", "taff2", "t6b", "ttok", "tlit", "tlitb", "tv6lit", "bogus", "partial", "fam", "badport", "badbport"]
    cmds += [["ls-lb-add", "s0", lb] for lb in on_s0] + [["ls-lb-add", "s1", lb] for lb in on_s1]
    # dr: template load balancers only (nat_addresses mixing plain and template VIPs: see the module doc
    # of flows/ls_lb.py -- their order is not reproduced).
    templates = [lb for lb in on_s0 if lb not in ("plain", "tbad", "tnr")]
    cmds += [["lr-lb-add", "gr", lb] for lb in [*on_s0, "taff2", "tnr2"]]
    cmds += [["lr-lb-add", "dr", lb] for lb in templates]
    cmds += [["lr-lb-add", "pr", lb] for lb in on_s0]
    args: list[str] = []
    for i, c in enumerate(cmds):
        args += (["--"] if i else []) + c
    nbctl(remote, *args)
    nbctl(remote, "set", "nb_global", ".", "options:controller_event=true")


def test_template_lbs_equal_reference(parity_run) -> None:
    r = parity_run(build_templates_nb, tables=TABLES)
    assert r.reference.settled and r.ours.settled, r.report()
    for t in TABLES[:-1]:
        assert r.tables[t].ok, r.report()
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in STAGES:
        s = by_stage[name]
        assert not s.missing and not s.extra, f"{name}\n" + r.report()
    assert flows.missing == 0 and flows.extra == 0, r.report()
    assert by_stage["lr_in_dnat"].ref_count > 40 and by_stage["ls_in_lb"].ref_count > 20, r.report()


# Template backends read one by one (26.03, behaviours template_lb_backends_each and
# template_vip_ip_input): template (``^``) and explicit backends mixed, odd template ports taken as
# written, bad explicit ones (address, port, family, a port where the VIP has none, blanks) dropping
# the VIP, affinity flows with the explicit backends' ports, IPv6 VIPs without a port.
_AFF = ("options:affinity_timeout=30",)
EACH_LBS = [
    _tlb("e1", "^ve1:^port", "notanip:80,^b1", *_v4()),
    _tlb("e2", "^ve2:^port", "[fd00::9]:80", *_v4()),
    _tlb("e3", "^ve3:^port", "10.0.0.9:80,[fd00::9]:80", *_v4()),
    _tlb("e4", "^ve4:^port", "10.0.0.9,^b1", *_v4(), *_AFF),
    _tlb("e5", "^ve5:^port", "fd00::9,^b6", *_v6(), *_AFF),
    _tlb("e6", "^ve6:^port", "^b1:99999", *_v4()),
    _tlb("e7", "notanip:80", "^b1", *_v4()),
    _tlb("e8", "^a:^b:^c", "^b1", *_v4()),
    _tlb("e9", "^ve9:^port", "10.0.0.9:80,^b1", *_v4(), *_AFF),
    _tlb("e10", "^ve10", "10.0.0.9:80", *_v4()),
    _tlb("e11", "^ve11:^port", "10.0.0.9:0", *_v4()),
    _tlb("e12", "^ve12:^port", "[^b6]:80", *_v6()),
    _tlb("e13", "^ve13:^port", "^b1:80,10.0.0.8:81", *_v4(), *_AFF),
    _tlb("e14", "10.0.0.77:80", "^b1:80", *_v4()),
    _tlb("e15", "^ve15:^port", "[fd00::9]", *_v6()),
    _tlb("e16", "^ve16:^port", "10.0.0.9:abc", *_v4()),
    _tlb("e17", "^ve17:^port", "fd00::9:80", *_v6()),
    _tlb("e18", "^ve18:81", "10.0.0.9:80", *_v4(), *_AFF),
    _tlb("e19", "^ve19:^port", "^b1,,^b2", *_v4()),
    _tlb("e20", "^ve20:^port", "10.0.0.9:80 ,^b1", *_v4()),
    _tlb("e21", "^ve21", "^b1:80", *_v4()),
    _tlb("e22", "^ve22", "10.0.0.9", *_v4(), *_AFF),
    _tlb("e23", "^ve23:^port", " ^b1", *_v4()),
    _tlb("e24", "^ve24:^port", "^b1:^bp:80", *_v4()),
    _tlb("e25", "^ve25:^port", "^b1:abc", *_v4()),
    _tlb("e26", "^ve26:^port", "10.0.0.9:^bp", *_v4()),
    _tlb("e27", "^ve27:^port", "[fd00::9]:^bp", *_v6()),
    _tlb("e28", "^ve28:^port", "a^b:80", *_v4()),
    _tlb("e30", "^ve30:^port", "10.0.0.9:80", *_v4(), *_AFF),
    _tlb("e31", "^ve31", "fd00::9", *_v6(), *_AFF),
    _tlb("e32", "^ve32:^port", "^b1 ", *_v4()),
    _tlb("e33", "^ve33:^port", "10.0.0.009:80,^b1", *_v4()),
    _tlb("e34", "^ve34:^port", "[FD00:0::9]:80,^b6", *_v6(), *_AFF),
    _tlb("e35", "^ve35:^port", "^b1,10.0.0.9:80,10.0.0.9:80", *_v4()),
    _tlb("e36", "^ve36:^port", "^b1:", *_v4()),
    _tlb("e37", "^ve37:^port", "^", *_v4()),
    _tlb("e38", "^ve38:^port", "^b1:0", *_v4()),
]


def _build_each_nb(remote: str) -> None:
    cmds = [["ls-add", "sw"], ["lsp-add", "sw", "p0"],
            ["lr-add", "gr"], ["set", "logical_router", "gr", "options:chassis=hv1"],
            ["lrp-add", "gr", "gr-p", "02:00:00:00:01:01", "10.0.0.1/24", "fd00::1/64"],
            ["lsp-add", "sw", "sw-gr"], ["lsp-set-type", "sw-gr", "router"], ["lsp-set-addresses", "sw-gr", "router"],
            ["lsp-set-options", "sw-gr", "router-port=gr-p"], *EACH_LBS]
    names = [c[2].removeprefix("name=") for c in EACH_LBS]
    cmds += [["ls-lb-add", "sw", n] for n in names] + [["lr-lb-add", "gr", n] for n in names]
    args: list[str] = []
    for i, c in enumerate(cmds):
        args += (["--"] if i else []) + c
    nbctl(remote, *args)


def test_template_backends_one_by_one(parity_run, parity_profile) -> None:
    if not parity_profile.has("template_lb_backends_each"):
        pytest.skip("23.03 / 25.03 read template backends all template or all explicit")
    r = parity_run(_build_each_nb, tables=("Load_Balancer", "Logical_Flow"))
    assert r.ok, r.report()
