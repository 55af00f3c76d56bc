"""Parity with the reference ovn-northd for ACLs, port groups, address sets and meters.

Each NB exercises one feature; the conntrack/ACL stages must match the reference exactly
(0 missing, 0 extra), and so must SB Port_Group, Address_Set and Meter.  Other stages may
still miss flows, but nothing we write may be wrong (``flows.extra == 0``).
"""

from __future__ import annotations

from typing import Any

import pytest

from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.parity.harness import ParityResult, workload
from ovn_northd_py.parity.stage_names import release_stage_names

ACL_STAGES = release_stage_names((
    "ls_in_pre_acl", "ls_out_pre_acl", "ls_in_pre_lb", "ls_out_pre_lb", "ls_in_pre_stateful",
    "ls_out_pre_stateful", "ls_in_acl_hint", "ls_out_acl_hint", "ls_in_acl", "ls_out_acl",
    "ls_in_acl_after_lb", "ls_in_stateful", "ls_out_stateful",
))
# Where the ACLs' own flows are (23.03: ls_out_acl; 25.03: ls_out_acl_eval).
OUT_ACL = release_stage_names(("ls_out_acl",))[0]
ACL_TABLES = ("Port_Group", "Address_Set", "Meter", "Meter_Band")
LB_VIP_PRIORITY = 120  # ls_in_pre_stateful's per-VIP flows belong to the load-balancer stages


def assert_acl_parity(r: ParityResult, tables: tuple[str, ...] = ACL_TABLES) -> None:
    assert r.reference.settled and r.ours.settled, r.report()
    bad = [t for t in tables if not r.tables[t].ok]
    assert not bad, r.report()
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in ACL_STAGES:
        s = by_stage[name]
        missing = [f for f in s.missing if not (name == "ls_in_pre_stateful" and f[3] == LB_VIP_PRIORITY)]
        assert not missing and not s.extra, f"{name}\n" + r.report()
    assert flows.extra == 0, r.report()


def _run(remote: str, *cmds: list[str]) -> None:
    for c in cmds:
        nbctl(remote, *c)


def _acl(remote: str, where: tuple[str, str], **cols: Any) -> None:
    """An ACL row with arbitrary columns (ovn-nbctl refuses some combinations, e.g. labels on drop)."""
    args = ["--", "--id=@a", "create", "ACL"]
    for k, v in cols.items():
        if isinstance(v, dict):
            args += [f"{k}:{kk}={vv}" for kk, vv in v.items()]
        else:
            args.append(f'{k}="{v}"' if isinstance(v, str) else f"{k}={str(v).lower()}")
    nbctl(remote, *args, "--", "add", where[0], where[1], "acls", "@a")


def _router_and_localnet(sw: str, n: int) -> list[list[str]]:
    return [
        ["lr-add", f"r{n}"],
        ["lrp-add", f"r{n}", f"r{n}-{sw}", f"00:00:00:00:ff:{n:02x}", f"10.{n}.0.254/24"],
        ["lsp-add", sw, f"{sw}-r{n}"], ["lsp-set-type", f"{sw}-r{n}", "router"],
        ["lsp-set-addresses", f"{sw}-r{n}", "router"], ["lsp-set-options", f"{sw}-r{n}", f"router-port=r{n}-{sw}"],
        ["lsp-add", sw, f"ln-{sw}"], ["lsp-set-type", f"ln-{sw}", "localnet"],
        ["lsp-set-addresses", f"ln-{sw}", "unknown"], ["lsp-set-options", f"ln-{sw}", "network_name=phys"],
    ]


def build_switch_acls_nb(remote: str) -> None:
    """Every action in both directions, before and after LB, on a stateful and a stateless switch."""
    _run(
        remote,
        ["ls-add", "sf"], ["lsp-add", "sf", "p1"], ["lsp-set-addresses", "p1", "00:00:00:00:00:01 10.0.0.1"],
        *_router_and_localnet("sf", 1),
        ["ls-add", "sl"], ["lsp-add", "sl", "q1"], *_router_and_localnet("sl", 2),
        ["ls-add", "bare"], ["lsp-add", "bare", "b1"], *_router_and_localnet("bare", 3),
    )
    for sw, prio0 in (("sf", 100), ("sl", 300)):
        pairs = [(d, a) for d in ("from-lport", "to-lport") for a in ("allow", "allow-stateless", "drop", "reject")]
        for i, (direction, action) in enumerate(pairs):
            _run(remote, ["acl-add", sw, direction, str(prio0 + i), f"tcp.dst == {prio0 + i}", action])
        for i, action in enumerate(("allow", "allow-related", "allow-stateless", "drop", "reject")):
            if sw == "sl" and action == "allow-related":
                continue
            _run(remote, ["--apply-after-lb", "acl-add", sw, "from-lport", str(prio0 + 50 + i),
                          f"udp.dst == {i}", action])
    _run(remote, ["acl-add", "sf", "from-lport", "1000", "ip4 && icmp4", "allow-related"],
         ["acl-add", "sf", "to-lport", "1001", "ip6", "allow-related"])


def build_port_group_nb(remote: str) -> None:
    """ACLs on port groups spanning switches, address sets (NB ones and the groups' own) in matches."""
    _run(
        remote,
        ["ls-add", "a"], ["ls-add", "b"], ["ls-add", "c"], ["ls-add", "d"],
        ["lsp-add", "a", "a1"], ["lsp-set-addresses", "a1", "00:00:00:00:01:01 10.1.0.1 fd00::1"],
        ["lsp-add", "a", "a2"], ["lsp-set-addresses", "a2", "00:00:00:00:01:02 10.1.0.2", "unknown"],
        ["lsp-add", "a", "a3"], ["lsp-set-addresses", "a3", "00:00:00:00:01:03 10.1.0.3 foo 10.1.0.33"],
        ["lsp-add", "a", "a4"], ["lsp-set-addresses", "a4", "00:00:00:00:01:04 10.1.0.4/24 fd00:0::04"],
        ["lsp-add", "b", "b1"], ["lsp-set-addresses", "b1", "00:00:00:00:02:01 10.2.0.1"],
        ["lsp-add", "c", "c1"], ["lsp-add", "d", "d1"],
        ["pg-add", "pg1", "a1", "a2", "a3", "a4", "b1"], ["pg-add", "pg2", "c1"], ["pg-add", "pg_empty"],
        ["pg-add", "pgnoacl", "d1"],
        ["acl-add", "pg1", "to-lport", "100", "outport == @pg1 && ip4.src == $pg1_ip4", "allow-related"],
        ["acl-add", "pg1", "from-lport", "100", "inport == @pg1 && ip4.dst == $as1", "drop"],
        ["acl-add", "pg2", "from-lport", "100", "inport == @pg2 && ip6.src == $as6", "allow"],
        ["acl-add", "pg_empty", "from-lport", "100", "inport == @pg_empty", "allow"],
        ["acl-add", "b", "from-lport", "200", "ip", "allow"],
        ["create", "Address_Set", "name=as1", 'addresses="10.0.0.1","10.0.0.2"'],
        ["create", "Address_Set", "name=as6", 'addresses="fd00::1"'],
        ["create", "Address_Set", "name=asempty"],
    )
    # One ACL row on a switch and on a port group at once.
    _acl(remote, ("Logical_Switch", "c"), direction="to-lport", priority=500, match="tcp", action="drop")
    acl = nbctl(remote, "--bare", "--columns=_uuid", "find", "ACL", "priority=500").strip()
    nbctl(remote, "add", "Port_Group", "pg1", "acls", acl)


def build_logging_nb(remote: str) -> None:
    """Logging: names, severities, meters (plain and fair), log-related; labels."""
    _run(
        remote,
        ["ls-add", "sw0"], ["lsp-add", "sw0", "p1"], ["ls-add", "sw1"], ["lsp-add", "sw1", "q1"],
        ["meter-add", "fm", "drop", "10", "pktps", "5"], ["set", "meter", "fm", "fair=true"],
        ["meter-add", "m2", "drop", "10", "kbps", "20"],
        ["--log", "--meter=fm", "--name=n1", "acl-add", "sw0", "from-lport", "100", "tcp", "allow-related"],
        ["--log", "--meter=fm", "acl-add", "sw0", "to-lport", "101", "tcp", "drop"],
        ["--log", "--meter=fm", "acl-add", "sw1", "to-lport", "101", "tcp", "drop"],
        ["--log", "--meter=nosuch", "acl-add", "sw0", "to-lport", "102", "tcp", "drop"],
        ["--log", "--severity=debug", "--label=9", "acl-add", "sw0", "to-lport", "103", "udp", "allow-related"],
        ["--log", "--severity=alert", "--name=rej", "acl-add", "sw0", "from-lport", "104", "udp", "reject"],
        ["--label=77", "acl-add", "sw0", "to-lport", "105", "tcp.dst == 23", "allow"],
        ["--label=78", "acl-add", "sw1", "to-lport", "105", "tcp.dst == 23", "allow"],
        ["--log", "acl-add", "sw1", "from-lport", "106", "tcp.dst == 24", "allow"],
    )
    for prio, action in ((110, "allow-stateless"), (111, "drop"), (112, "reject")):
        _acl(remote, ("Logical_Switch", "sw0"), direction="to-lport", priority=prio, match="udp", action=action,
             label=9)
    for sw in ("sw0", "sw1"):
        _acl(remote, ("Logical_Switch", sw), direction="to-lport", priority=120, match="udp.dst==7",
             action="allow-related", log=True, name="rel", label=42, options={"log-related": "true"})
        _acl(remote, ("Logical_Switch", sw), direction="from-lport", priority=121, match="udp.dst==8",
             action="allow", log=True, label=43, meter="m2", severity="notice",
             options={"log-related": "true", "apply-after-lb": "true"})
    _acl(remote, ("Logical_Switch", "sw0"), direction="from-lport", priority=122, match="udp.dst==9",
         action="allow-related", log=False, label=44, options={"log-related": "true"})
    _acl(remote, ("Logical_Switch", "sw0"), direction="to-lport", priority=123, match="udp.dst==10",
         action="drop", meter="fm", log=False)


def build_options_nb(remote: str) -> None:
    """NB_Global use_ct_inv_match=false and default_acl_drop=true; LB-only and stateless switches."""
    _run(
        remote,
        ["set", "NB_Global", ".", "options:default_acl_drop=true", "options:use_ct_inv_match=false"],
        ["ls-add", "lbsw"], ["lsp-add", "lbsw", "l1"], *_router_and_localnet("lbsw", 1),
        ["lb-add", "lbx", "10.0.0.10:80", "10.0.0.2:80", "tcp"], ["ls-lb-add", "lbsw", "lbx"],
        ["ls-add", "lbonly"], ["lsp-add", "lbonly", "o1"], ["ls-lb-add", "lbonly", "lbx"],
        ["ls-add", "sf"], ["lsp-add", "sf", "f1"], ["ls-add", "sl"], ["lsp-add", "sl", "g1"], ["ls-add", "none"],
        ["acl-add", "lbsw", "to-lport", "100", "ip4", "allow"],
        ["acl-add", "lbsw", "from-lport", "101", "ip4", "allow-stateless"],
        ["acl-add", "lbsw", "to-lport", "102", "ip4", "drop"],
        ["acl-add", "sf", "to-lport", "100", "ip4", "allow-related"],
        ["--log", "acl-add", "sf", "from-lport", "102", "ip4", "reject"],
        ["acl-add", "sl", "to-lport", "100", "ip4", "allow"],
    )
    _acl(remote, ("Logical_Switch", "sf"), direction="to-lport", priority=107, match="udp.dst==7",
         action="allow-related", log=True, label=42, options={"log-related": "true"})


def build_dhcp_reply_nb(remote: str) -> None:
    """The ls_out_acl DHCP reply flows on switches with and without (stateful) ACLs."""
    cmds: list[list[str]] = []
    for sw in ("none", "sl", "sf"):
        cmds += [["ls-add", sw], ["lsp-add", sw, f"{sw}-p"],
                 ["lsp-set-addresses", f"{sw}-p", "00:00:00:00:00:01 10.0.0.1 fd00::1"],
                 ["lsp-add", sw, f"{sw}-d"], ["lsp-set-addresses", f"{sw}-d", "00:00:00:00:00:03 10.0.0.3"],
                 ["lsp-set-enabled", f"{sw}-d", "disabled"],
                 ["lsp-add", sw, f"{sw}-e"], ["lsp-set-type", f"{sw}-e", "external"]]
    _run(remote, *cmds, ["acl-add", "sl", "to-lport", "100", "ip4", "allow"],
         ["acl-add", "sf", "to-lport", "100", "ip4", "allow-related"])
    v4 = nbctl(remote, "create", "DHCP_Options", "cidr=10.0.0.0/24", "options:server_id=10.0.0.254",
               "options:server_mac=00:00:00:00:ff:ff", "options:lease_time=3600").strip()
    v6 = nbctl(remote, "create", "DHCP_Options", 'cidr="fd00::/64"', "options:server_id=00:00:00:00:ff:fe").strip()
    nolease = nbctl(remote, "create", "DHCP_Options", "cidr=10.0.0.0/24", "options:server_id=1.2.3.5",
                    "options:server_mac=00:00:00:00:ff:02").strip()
    for sw in ("none", "sl", "sf"):
        for p in ("p", "d", "e"):
            nbctl(remote, "set", "Logical_Switch_Port", f"{sw}-{p}", f"dhcpv4_options={v4}", f"dhcpv6_options={v6}")
    nbctl(remote, "lsp-add", "sf", "nl", "--", "set", "Logical_Switch_Port", "nl", f"dhcpv4_options={nolease}")


@pytest.mark.parametrize(
    "builder",
    [build_switch_acls_nb, build_port_group_nb, build_logging_nb, build_options_nb, build_dhcp_reply_nb],
    ids=["switch-acls", "port-groups", "logging-labels-meters", "global-options", "dhcp-replies"],
)
def test_acl_feature_parity(parity_run, builder) -> None:
    r = parity_run(builder, tables=(*ACL_TABLES, "Logical_Flow"))
    assert_acl_parity(r)


def test_port_group_tables_and_flows(parity_run) -> None:
    r = parity_run(build_port_group_nb, tables=(*ACL_TABLES, "Logical_Flow"))
    assert_acl_parity(r)
    assert r.tables["Port_Group"].ref_count == 4  # a, b (pg1), c (pg2), d (pgnoacl)
    assert r.tables["Address_Set"].ref_count == 12  # svc_monitor_mac, 3 NB sets, 4 groups x 2


def test_meters_equal_reference(parity_run, parity_profile) -> None:
    r = parity_run(build_logging_nb, tables=("Meter", "Meter_Band"))
    assert r.tables["Meter"].ok and r.tables["Meter_Band"].ok, r.report()
    # fm, m2 and a fair copy per ACL naming fm (4), or (25.03) per such ACL that logs (3)
    copies = 3 if parity_profile.has("fair_meter_logged_acls") else 4
    assert r.tables["Meter"].ref_count == 2 + copies, r.report()


def test_acl_stages_at_parity_on_mixed_10(parity_run) -> None:
    r = parity_run(workload("mixed", 10, 10, 10), tables=(*ACL_TABLES, "Logical_Flow"), settle_timeout=180)
    assert_acl_parity(r)
    by_stage = {s.stage: s for s in r.flows.stages}
    assert by_stage[OUT_ACL].ref_count > 100  # the workload's 100 to-lport ACLs are there
