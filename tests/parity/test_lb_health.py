"""Parity with the reference ovn-northd for load-balancer health checks.

SB Service_Monitor rows (IPv4 and IPv6 backends, VIPs with and without port, tcp and udp, an sctp
load balancer whose health check does not count, mapped / unmapped / badly mapped backends, a
load balancer on two switches, one on a plain router, one with affinity on a router with a
distributed gateway port, one attached nowhere, one backend monitored by two load balancers), then ``status`` written on SB as ovn-controller would (``after_settle``):
the checked VIPs' ``ls_in_lb`` backends, the ARP/ND responder for the health-check source IPs,
and the rows themselves (northd turns ``online`` into ``offline`` on a port that is not up).
"""

from __future__ import annotations

from collections import Counter

from ovn_northd_py.devtools.servers import nbctl, sbctl
from ovn_northd_py.parity.stage_names import release_stage_names

LB_STAGES = release_stage_names((
    "ls_in_pre_lb", "ls_out_pre_lb", "ls_in_pre_stateful", "ls_out_pre_stateful", "ls_in_lb_aff_check",
    "ls_in_lb", "ls_in_lb_aff_learn", "ls_in_pre_hairpin", "ls_in_nat_hairpin", "ls_in_hairpin",
    "ls_in_acl_hint", "ls_in_acl", "ls_in_acl_after_lb", "ls_in_stateful", "ls_in_arp_rsp",
))
ROUTER_LB_STAGES = ("lr_in_defrag", "lr_in_lb_aff_check", "lr_in_dnat", "lr_in_lb_aff_learn", "lr_out_undnat")


def _uuid(remote: str, table: str, name: str) -> str:
    return nbctl(remote, "--bare", "--columns=_uuid", "find", table, f"name={name}").strip()


def _health_check(remote: str, lb: str, vip: str, *options: str) -> None:
    nbctl(remote, "--id=@hc", "create", "load_balancer_health_check", f'vip="{vip}"', *options,
          "--", "add", "load_balancer", _uuid(remote, "load_balancer", lb), "health_check", "@hc")


def _map(remote: str, lb: str, *mappings: tuple[str, str]) -> None:
    nbctl(remote, "set", "load_balancer", lb, *(f'ip_port_mappings:"{ip}"="{v}"' for ip, v in mappings))


def build_lb_health_nb(remote: str) -> None:
    cmds: list[list[str]] = [
        ["ls-add", "sw0"], ["ls-add", "sw1"], ["ls-add", "sw2"],
        *(["lsp-add", "sw0", p] for p in ("p1", "p2", "p3")),
        ["lsp-set-addresses", "p1", "00:00:00:00:00:01 10.0.0.4"],
        *(["lsp-add", "sw1", p] for p in ("q1", "q2")),
        ["lsp-set-addresses", "q1", "00:00:00:00:00:11 20.0.0.4 fd00::4"],
        ["lsp-add", "sw2", "v1"],
        ["lr-add", "r0"], ["lrp-add", "r0", "r0-sw1", "00:00:00:00:ff:01", "20.0.0.1/24", "fd00::1/64"],
        ["lsp-add", "sw1", "sw1-r0"], ["lsp-set-type", "sw1-r0", "router"], ["lsp-set-addresses", "sw1-r0", "router"],
        ["lsp-set-options", "sw1-r0", "router-port=r0-sw1"],
        ["lb-add", "web", "10.0.0.10:80", "10.0.0.4:8080,10.0.0.5:8080,20.0.0.4:8080,10.0.0.6:8080", "tcp"],
        ["lb-add", "web6", "[fd00::10]:80", "[fd00::4]:8080,[fd00::5]:8080,[fd00::6]:8080", "tcp"],
        ["lb-add", "dns", "10.0.0.53:53", "10.0.0.4:53,10.0.0.5:53", "udp"],
        ["lb-add", "dns", "10.0.0.54:53", "10.0.0.4:53,10.0.0.5:53", "udp"],
        ["lb-add", "noport", "10.0.0.20", "10.0.0.4,10.0.0.5"],
        ["lb-add", "noport6", "fd00::20", "fd00::4,fd00::5"],
        ["lb-add", "aff", "10.0.0.70:80", "10.0.0.15:80,10.0.0.16:80"],
        ["lb-add", "rej", "10.0.0.50:80", "10.0.0.12:80"],
        ["lb-add", "sc", "10.0.0.21:90", "10.0.0.4:90,10.0.0.11:91", "sctp"],
        ["lb-add", "bad", "10.0.0.40:80", "10.0.0.7:80,10.0.0.8:80,10.0.0.9:80,10.0.0.13:80"],
        ["lb-add", "a1", "10.0.0.30:80", "10.0.0.14:80"],
        ["lb-add", "a2", "10.0.0.31:80", "10.0.0.14:80"],
        ["lb-add", "lone", "10.9.0.1:80", "10.0.0.17:80"],
        ["lb-add", "rtr", "30.0.0.10:80", "20.0.0.4:80,20.0.0.5:80", "udp"],
        ["lr-add", "r1"], ["lrp-add", "r1", "r1-sw0", "00:00:00:00:ff:02", "10.0.0.254/24"],
        ["lrp-add", "r1", "r1-ext", "00:00:00:00:ff:03", "172.16.0.1/24"],
        ["lrp-set-gateway-chassis", "r1-ext", "hv1", "10"],
        ["lsp-add", "sw0", "sw0-r1"], ["lsp-set-type", "sw0-r1", "router"], ["lsp-set-addresses", "sw0-r1", "router"],
        ["lsp-set-options", "sw0-r1", "router-port=r1-sw0"],
        ["lb-add", "rgw", "172.16.0.100:80", "10.0.0.40:80,10.0.0.41:80,10.0.0.42:80"],
        ["set", "load_balancer", "rgw", "options:affinity_timeout=20"],
        ["set", "load_balancer", "aff", "options:affinity_timeout=30"],
        ["set", "load_balancer", "rej", "options:reject=true"],
        ["ls-lb-add", "sw0", "web"], ["ls-lb-add", "sw1", "web"], ["ls-lb-add", "sw1", "web6"],
        *(["ls-lb-add", "sw0", lb] for lb in ("dns", "noport", "noport6", "aff", "rej", "sc", "bad", "a1", "a2")),
        ["lr-lb-add", "r0", "rtr"], ["lr-lb-add", "r1", "rgw"],
    ]
    for c in cmds:
        nbctl(remote, *c)
    _health_check(remote, "web", "10.0.0.10:80", "options:interval=5", "options:timeout=3",
                  "options:success_count=2", "options:failure_count=4", "external_ids:k=v")
    _map(remote, "web", ("10.0.0.4", "p1:10.0.0.2"), ("10.0.0.5", "p2:10.0.0.2"), ("20.0.0.4", "q1:20.0.0.2"))
    _health_check(remote, "web6", "[fd00::10]:80", "options:interval=7")
    _map(remote, "web6", ("[fd00::4]", "q1:[fd00::2]"), ("[fd00::5]", "q2:[fd00::2]"))
    _health_check(remote, "dns", "10.0.0.53:53")
    _map(remote, "dns", ("10.0.0.4", "p1:10.0.0.3"), ("10.0.0.5", "p2:10.0.0.3"))
    _health_check(remote, "noport", "10.0.0.20")
    _map(remote, "noport", ("10.0.0.4", "p1:10.0.0.2"))
    _health_check(remote, "noport6", "fd00::20")
    _map(remote, "noport6", ("[fd00::4]", "p1:[fd00::2]"))
    _health_check(remote, "aff", "10.0.0.70:80")
    _map(remote, "aff", ("10.0.0.15", "p2:10.0.0.2"))
    _health_check(remote, "rej", "10.0.0.50:80")
    _map(remote, "rej", ("10.0.0.12", "p2:10.0.0.2"))
    _health_check(remote, "sc", "10.0.0.21:90")
    _map(remote, "sc", ("10.0.0.4", "p1:10.0.0.2"), ("10.0.0.11", "p2:10.0.0.5"))
    _health_check(remote, "bad", "10.0.0.40:80")
    _map(remote, "bad", ("10.0.0.7", "p1"), ("10.0.0.8", "p1:"), ("10.0.0.9", "p1:xyz"), ("10.0.0.13", "gone:10.0.0.2"))
    for lb in ("a1", "a2"):
        _health_check(remote, lb, f"10.0.0.{29 + int(lb[1])}:80", "options:interval=9")
        _map(remote, lb, ("10.0.0.14", "p3:10.0.0.9"))
    _health_check(remote, "lone", "10.9.0.1:80")
    _map(remote, "lone", ("10.0.0.17", "v1:10.0.0.2"))
    _health_check(remote, "rtr", "30.0.0.10:80")
    _map(remote, "rtr", ("20.0.0.4", "q1:20.0.0.3"))
    _health_check(remote, "rgw", "172.16.0.100:80")
    _map(remote, "rgw", ("10.0.0.40", "p1:10.0.0.2"), ("10.0.0.41", "p2:10.0.0.2"))


def _set_status(sb: str, ip: str, port: int, proto: str, status: str) -> None:
    row = sbctl(sb, "--bare", "--columns=_uuid", "find", "service_monitor", f'ip="{ip}"', f"port={port}",
                f"protocol={proto}").strip()
    assert row, f"no Service_Monitor row for {ip}:{port}/{proto}"
    sbctl(sb, "set", "service_monitor", row, f"status={status}")


def set_statuses(_nb: str, sb: str) -> None:
    """What ovn-controller would report; q2 is up (its online backend stays), q1 is not."""
    sbctl(sb, "set", "port_binding", "q2", "up=true")
    for ip, port, proto, status in (
        ("10.0.0.4", 8080, "tcp", "offline"), ("10.0.0.5", 8080, "tcp", "online"),
        ("20.0.0.4", 8080, "tcp", "online"), ("fd00::4", 8080, "tcp", "error"), ("fd00::5", 8080, "tcp", "online"),
        ("10.0.0.5", 53, "udp", "offline"), ("10.0.0.15", 80, "tcp", "offline"), ("10.0.0.12", 80, "tcp", "offline"),
        ("10.0.0.4", 0, "tcp", "online"), ("20.0.0.4", 80, "udp", "offline"), ("10.0.0.41", 80, "tcp", "offline"),
    ):
        _set_status(sb, ip, port, proto, status)


def _assert_switch_stages(r) -> None:
    assert r.reference.settled and r.ours.settled, r.report()
    assert r.tables["Service_Monitor"].ok, r.report()
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in LB_STAGES:
        s = by_stage[name]
        assert not s.missing and not s.extra, f"{name}\n" + r.report()
    assert flows.extra == 0, r.report()


def test_service_monitors_and_backends(parity_run) -> None:
    r = parity_run(build_lb_health_nb, tables=("Service_Monitor", "Logical_Flow"))
    _assert_switch_stages(r)
    assert r.tables["Service_Monitor"].ref_count == 16, r.report()


def test_statuses_written_on_sb(parity_run) -> None:
    r = parity_run(build_lb_health_nb, tables=("Service_Monitor", "Logical_Flow"), after_settle=set_statuses)
    _assert_switch_stages(r)
    sm = r.ref_dump.rows("Service_Monitor").values()
    statuses = Counter(row["status"].items[0] if row["status"].items else "" for row in sm)
    # Three of the four rows set online are on ports that are not up: northd turned them offline.
    assert statuses == {"offline": 9, "online": 1, "error": 1, "": 5}, statuses


def test_router_lb_backends(parity_run) -> None:
    r = parity_run(build_lb_health_nb, tables=("Logical_Flow",), after_settle=set_statuses)
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in ROUTER_LB_STAGES:
        assert not by_stage[name].missing and not by_stage[name].extra, f"{name}\n" + r.report()
