"""Parity with the reference ovn-northd for the corners of ACLs, port groups and address sets.

Each NB crosses one family of ACL inputs (actions x directions x ``apply-after-lb`` x labels,
reject on every protocol, logging and ``log-related``, port groups over several switches,
NB_Global ``default_acl_drop``); the conntrack/ACL stages must equal the reference's (0
missing, 0 extra), and so must SB Port_Group, Address_Set and Meter.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_acl import ACL_TABLES, _acl, _router_and_localnet, _run, assert_acl_parity

from ovn_northd_py.devtools.servers import nbctl

ACTIONS = ("allow", "allow-related", "allow-stateless", "drop", "reject")
DIRECTIONS = ("from-lport", "to-lport")
REJECT_MATCHES = ("ip4", "ip6", "tcp", "udp", "icmp4", "icmp6", "sctp", "tcp6 && tcp.dst == 22", "ip4.src == 1.2.3.4")


def _acl_q(remote: str, where: tuple[str, str], **cols: Any) -> None:
    """Like :func:`test_acl._acl`, with every string quoted (quotes, blanks and colons allowed)."""
    args = ["--", "--id=@a", "create", "ACL"]
    for k, v in cols.items():
        if isinstance(v, dict):
            args += [f"{k}:{json.dumps(kk)}={json.dumps(vv)}" for kk, vv in v.items()]
        elif isinstance(v, str):
            args.append(f"{k}={json.dumps(v)}")
        else:
            args.append(f"{k}={str(v).lower()}")
    nbctl(remote, *args, "--", "add", where[0], where[1], "acls", "@a")


def _switch(remote: str, sw: str, n: int) -> None:
    _run(remote, ["ls-add", sw], ["lsp-add", sw, f"{sw}-p"],
         ["lsp-set-addresses", f"{sw}-p", f"00:00:00:00:{n:02x}:01 10.{n}.0.1 fd{n:02x}::1"],
         *_router_and_localnet(sw, n))


def build_actions_nb(remote: str) -> None:
    """Every action x direction x apply-after-lb x label, on a stateful, a stateless and an LB switch."""
    _switch(remote, "sf", 1)
    _switch(remote, "sl", 2)
    _switch(remote, "lbs", 3)
    _run(remote, ["lb-add", "lb", "10.3.0.10:80", "10.3.0.2:80", "tcp"], ["ls-lb-add", "lbs", "lb"])
    port = 0
    for sw in ("sf", "sl", "lbs"):
        for direction in DIRECTIONS:
            for action in ACTIONS:
                if action == "allow-related" and sw != "sf":
                    continue
                for after in (False, True):
                    for label in (0, 5):
                        port += 1
                        cols: dict = {"direction": direction, "priority": port, "match": f"tcp.dst == {port}",
                                      "action": action}
                        if label:
                            cols["label"] = label
                        if after:
                            cols["options"] = {"apply-after-lb": "true"}
                        _acl(remote, ("Logical_Switch", sw), **cols)
    # Priorities 0 and 32767, in both directions and after LB.
    for sw in ("sf", "sl"):
        for prio in (0, 32767):
            for direction in DIRECTIONS:
                _run(remote, ["acl-add", sw, direction, str(prio), f"udp.dst == {prio % 1000 + 1}", "allow"])
            _run(remote, ["--apply-after-lb", "acl-add", sw, "from-lport", str(prio), "sctp", "drop"])
    # apply-after-lb=false / junk values are "not true".
    _acl(remote, ("Logical_Switch", "sf"), direction="from-lport", priority=900, match="udp.dst == 900",
         action="drop", options={"apply-after-lb": "false"})
    _acl(remote, ("Logical_Switch", "sf"), direction="from-lport", priority=901, match="udp.dst == 901",
         action="allow", options={"apply-after-lb": "TRUE"})
    _acl(remote, ("Logical_Switch", "sf"), direction="from-lport", priority=902, match="udp.dst == 902",
         action="allow", options={"apply-after-lb": "yes"})


def build_reject_nb(remote: str) -> None:
    """Reject on every protocol, both directions, before and after LB, logged and not, on 2 switches."""
    _switch(remote, "sf", 1)
    _switch(remote, "sl", 2)
    _run(remote, ["acl-add", "sf", "to-lport", "1", "ip", "allow-related"])
    prio = 100
    for sw in ("sf", "sl"):
        for m in REJECT_MATCHES:
            for direction in DIRECTIONS:
                for extra in ([], ["--apply-after-lb"], ["--log", "--severity=warning", "--name=rj"]):
                    prio += 1
                    _run(remote, [*extra, "acl-add", sw, direction, str(prio), m, "reject"])
    # A Copp with a reject meter on one switch.
    _run(remote, ["meter-add", "rm", "drop", "10", "pktps"], ["copp-add", "cp", "reject", "rm"],
         ["ls-copp-add", "cp", "sl"])


def build_log_related_nb(remote: str) -> None:
    """log-related with and without log / label, on each action, stateful and stateless switches."""
    _switch(remote, "sf", 1)
    _switch(remote, "sl", 2)
    _run(remote, ["meter-add", "fm", "drop", "10", "pktps", "5"], ["set", "meter", "fm", "fair=true"],
         ["meter-add", "m", "drop", "20", "pktps"])
    _run(remote, ["acl-add", "sf", "to-lport", "1", "ip", "allow-related"])
    prio = 100
    for sw in ("sf", "sl"):
        for action in ACTIONS:
            if action == "allow-related" and sw == "sl":
                continue
            for direction in DIRECTIONS:
                for log, label, extra in (
                    (True, 7, {}), (False, 7, {}), (True, 0, {}),
                    (True, 8, {"name": "nm", "severity": "debug", "meter": "m"}),
                    (True, 9, {"name": "fair", "severity": "alert", "meter": "fm"}),
                    (True, 10, {"meter": "nosuch"}),
                    (True, 11, {"options": {"log-related": "true", "apply-after-lb": "true"}}),
                    (True, 12, {"options": {"log-related": "TRUE"}}),
                    (True, 13, {"options": {"log-related": "false"}}),
                ):
                    prio += 1
                    cols: dict = {"direction": direction, "priority": prio, "match": f"udp.dst == {prio}",
                                  "action": action, "log": log, "options": {"log-related": "true"}}
                    if label:
                        cols["label"] = label
                    cols.update(extra)
                    _acl(remote, ("Logical_Switch", sw), **cols)


def build_port_groups_nb(remote: str) -> None:
    """Port groups over three switches, empty, on ACL-less switches, sharing ACLs; IPv6 address sets."""
    for sw in ("a", "b", "c", "d", "e"):
        _run(remote, ["ls-add", sw])
    _run(
        remote,
        ["lsp-add", "a", "a1"], ["lsp-set-addresses", "a1", "00:00:00:00:01:01 10.1.0.1 fd01::1 fd01::11/64"],
        ["lsp-add", "a", "a2"], ["lsp-set-addresses", "a2", "00:00:00:00:01:02 10.1.0.2/24 fd01::2",
                                 "00:00:00:00:01:12 10.1.1.2 10.1.1.3"],
        ["lsp-add", "a", "a3"], ["lsp-set-addresses", "a3", "unknown"],
        ["lsp-add", "a", "a4"], ["lsp-set-addresses", "a4", "00:00:00:00:01:04"],
        ["lsp-add", "b", "b1"], ["lsp-set-addresses", "b1", "00:00:00:00:02:01 fd02::1"],
        ["lsp-add", "b", "b2"], ["lsp-set-addresses", "b2", "dynamic"],
        ["lsp-add", "c", "c1"], ["lsp-set-addresses", "c1", "00:00:00:00:03:01 10.3.0.1"],
        ["lsp-add", "d", "d1"], ["lsp-set-addresses", "d1", "00:00:00:00:04:01 10.4.0.1"],
        ["lsp-add", "e", "e1"], ["lsp-set-addresses", "e1", "00:00:00:00:05:01 10.5.0.1"],
        *_router_and_localnet("c", 9),
        ["pg-add", "pg_wide", "a1", "a2", "a3", "a4", "b1", "b2", "c1", "c-r9", "ln-c"],
        ["pg-add", "pg_d", "d1"], ["pg-add", "pg_e", "e1"], ["pg-add", "pg_none"], ["pg-add", "pg_noacl", "a1", "e1"],
        ["pg-add", "pg_shared1", "c1"], ["pg-add", "pg_shared2", "c1", "d1"],
        ["create", "Address_Set", "name=as6", 'addresses="fd00::1","fd00::/64","FD00:0::2","::ffff:1.2.3.4"'],
        ["create", "Address_Set", "name=as46", 'addresses="10.0.0.0/8","fd00::/64","10.1.2.3"'],
        ["create", "Address_Set", "name=as_empty"],
        ["acl-add", "pg_wide", "to-lport", "100", "outport == @pg_wide && ip4.src == $pg_wide_ip4", "allow-related"],
        ["acl-add", "pg_wide", "from-lport", "101", "inport == @pg_wide && ip6.dst == $pg_wide_ip6", "allow"],
        ["acl-add", "pg_wide", "from-lport", "102", "inport == @pg_wide && ip6.src == $as6", "drop"],
        ["acl-add", "pg_wide", "to-lport", "103", "ip4.dst == $as46_ip4 || ip6.dst == $as46_ip6", "reject"],
        ["acl-add", "pg_d", "from-lport", "100", "inport == @pg_d && ip4.src == $pg_noacl_ip4", "allow-stateless"],
        ["acl-add", "pg_e", "to-lport", "100", "outport == @pg_e", "allow-related"],
        ["acl-add", "pg_none", "from-lport", "100", "inport == @pg_none", "drop"],
        ["acl-add", "pg_shared1", "to-lport", "100", "ip4.src == $as_empty", "drop"],
    )
    # One ACL row on two port groups with a common switch.
    acl = nbctl(remote, "--bare", "--columns=acls", "list", "Port_Group", "pg_shared1").strip()
    nbctl(remote, "add", "Port_Group", "pg_shared2", "acls", acl)
    # A dash in a group's name; a switch whose only load balancer (through a group) has no VIP.
    _run(remote, ["pg-add", "pg-dash", "e1"], ["acl-add", "pg-dash", "from-lport", "300", "ip4", "allow"],
         ["create", "Load_Balancer", "name=novip", "protocol=tcp"],
         ["create", "Load_Balancer_Group", "name=g"])
    _run(remote, ["add", "Load_Balancer_Group", "g", "load_balancer",
                  nbctl(remote, "--bare", "--columns=_uuid", "find", "Load_Balancer", "name=novip").strip()],
         ["add", "Logical_Switch", "d", "load_balancer_group",
          nbctl(remote, "--bare", "--columns=_uuid", "find", "Load_Balancer_Group", "name=g").strip()])
    # A very long match.
    long_match = " || ".join(f"ip4.src == 10.{i // 250}.{i % 250}.1" for i in range(600))
    _run(remote, ["acl-add", "pg_d", "to-lport", "200", long_match, "drop"],
         ["acl-add", "a", "to-lport", "200", f"({long_match}) && tcp", "allow"])


def build_quirks_nb(remote: str) -> None:
    """Odd but valid values: quotes in names and matches, the largest label, duplicate rows, meters."""
    _switch(remote, "sf", 1)
    _switch(remote, "sl", 2)
    _run(remote, ["meter-add", "m x", "drop", "10", "pktps"], ["pg-add", "pg", "sf-p", "sl-p"],
         ["meter-add", "fm", "drop", "10", "pktps"], ["set", "meter", "fm", "fair=true"],
         ["meter-add", "rm", "drop", "10", "pktps"], ["copp-add", "cp", "reject", "rm"], ["ls-copp-add", "cp", "sl"])
    # A fair meter and a Copp reject meter on a group spanning a switch with and one without Copp.
    _acl_q(remote, ("Port_Group", "pg"), direction="from-lport", priority=300, match="tcp", action="reject",
           log=True, meter="fm")
    _acl_q(remote, ("Port_Group", "pg"), direction="to-lport", priority=300, match="tcp", action="allow",
           log=True, meter="fm", label=3, options={"log-related": "true"})
    for sw in ("sf", "sl"):
        _acl_q(remote, ("Logical_Switch", sw), direction="to-lport", priority=100, match='outport == "sf-p"',
             action="allow-related" if sw == "sf" else "allow", log=True, name='a"b', label=4294967295,
             meter="m x", severity="notice", external_ids={"neutron:id": "x"},
             options={"log-related": "true"})
        for _ in range(2):  # two identical rows
            _acl_q(remote, ("Logical_Switch", sw), direction="from-lport", priority=100, match="udp", action="drop")
        _acl_q(remote, ("Port_Group", "pg"), direction="from-lport", priority=100, match="udp", action="drop")
        _acl_q(remote, ("Port_Group", "pg"), direction="to-lport", priority=101, match="tcp", action="reject",
             log=True, name="x" * 63)


def _default_drop_nb(stateful: bool):
    def build(remote: str) -> None:
        _run(remote, ["set", "NB_Global", ".", "options:default_acl_drop=true"])
        for i, sw in enumerate(("acls", "stateless", "lbonly", "lbstateless", "none", "afterlb"), start=1):
            _switch(remote, sw, i)
        _run(remote, ["lb-add", "lb", "10.3.0.10:80", "10.3.0.2:80", "tcp"], ["ls-lb-add", "lbonly", "lb"],
             ["ls-lb-add", "lbstateless", "lb"],
             ["acl-add", "acls", "to-lport", "100", "ip4", "allow-related" if stateful else "allow"],
             ["acl-add", "acls", "from-lport", "101", "ip4", "drop"],
             ["acl-add", "stateless", "from-lport", "100", "ip", "allow-stateless"],
             ["acl-add", "stateless", "to-lport", "100", "ip", "allow-stateless"],
             ["acl-add", "lbstateless", "from-lport", "100", "ip", "allow-stateless"],
             ["--apply-after-lb", "acl-add", "afterlb", "from-lport", "100", "ip4",
              "allow-related" if stateful else "allow"])
    build.__name__ = f"default_drop_{'stateful' if stateful else 'stateless'}"
    return build


@pytest.mark.parametrize(
    "builder",
    [build_actions_nb, build_reject_nb, build_log_related_nb, build_port_groups_nb,
     build_quirks_nb, _default_drop_nb(True), _default_drop_nb(False)],
    ids=["actions", "reject", "log-related", "port-groups", "quirks", "default-drop-stateful", "default-drop-stateless"],
)
def test_acl_corner_parity(parity_run, builder) -> None:
    r = parity_run(builder, tables=(*ACL_TABLES, "Logical_Flow"))
    assert_acl_parity(r)
