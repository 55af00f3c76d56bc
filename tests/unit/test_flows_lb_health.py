"""Pure helpers of load-balancer health checks (flows/lb_health.py) and a checked VIP's backends."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from ovn_northd_py.flows.lb_health import (
    LbHealth,
    desired_monitors,
    lb_monitored,
    monitor_key,
    parse_mapping,
    sb_down_monitors,
    status_down,
)
from ovn_northd_py.flows.ls_lb import lb_vips


def _lb(n: int, vips: dict[str, str], mappings: dict[str, str], hcs: dict[str, dict[str, str]],
        proto: str = "tcp") -> SimpleNamespace:
    return SimpleNamespace(uuid=uuid.UUID(int=n), vips=vips, ip_port_mappings=mappings, protocol=[proto],
                           health_check=[SimpleNamespace(vip=v, options=o) for v, o in hcs.items()])


@pytest.mark.parametrize(
    ("value", "want"),
    [("p1:10.0.0.2", ("p1", "10.0.0.2")), ("p1:[fd00::2]", ("p1", "fd00::2")), ("p1:fd00::2", ("p1", "fd00::2")),
     ("p1:[fd00:0::0002]", ("p1", "fd00::2")), ("p1:010.0.0.2", None),
     ("p1", None), ("p1:", None), (":10.0.0.2", None), ("p1:xyz", None), ("p1:[fd00::2", None),
     ("p1:[fd00::2]x", None), ("", None)],
)
def test_parse_mapping(value: str, want: tuple[str, str] | None) -> None:
    assert parse_mapping(value) == want


@pytest.mark.parametrize(
    ("status", "up", "down"),
    [(None, False, False), ("online", True, False), ("online", False, True), ("offline", True, True),
     ("error", True, True)],
)
def test_status_down(status: str | None, up: bool, down: bool) -> None:
    assert status_down(status, up) is down


WEB = _lb(1, {"10.0.0.10:80": "10.0.0.4:8080,10.0.0.5:8080,10.0.0.6:8080", "10.0.0.11": "10.0.0.4,10.0.0.5",
              "[fd00::10]:80": "[fd00::4]:80", "10.0.0.12:80": "10.0.0.4:80",
              "10.0.0.13:80": "10.0.0.4:9090,[fd00::4]:9090"},
          {"10.0.0.4": "p1:10.0.0.2", "10.0.0.5": "gone:10.0.0.2", "[fd00::4]": "p1:[fd00::2]"},
          {"10.0.0.10:80": {"interval": "5"}, "10.0.0.11": {}, "[fd00::10]:80": {}, "10.0.0.99:80": {},
           "10.0.0.13:80": {}})


def test_lb_monitored_keys() -> None:
    keys = [m.key for m in lb_monitored(WEB)]
    # Sorted VIP keys; port 0 without a port; the IPv4 backend of the IPv6 VIP is not one of its backends.
    assert keys == [("p1", "10.0.0.4", 8080, "tcp"), ("gone", "10.0.0.5", 8080, "tcp"),
                    ("p1", "10.0.0.4", 0, "tcp"), ("gone", "10.0.0.5", 0, "tcp"), ("p1", "fd00::4", 80, "tcp")]
    sctp = _lb(2, WEB.vips, WEB.ip_port_mappings, {"10.0.0.10:80": {}}, proto="sctp")
    assert list(lb_monitored(sctp)) == []


def test_desired_monitors_known_ports_and_last_lb_wins() -> None:
    other = _lb(3, {"10.0.0.20:80": "10.0.0.4:8080"}, {"10.0.0.4": "p1:10.0.0.9"}, {"10.0.0.20:80": {"interval": "9"}})
    want = desired_monitors([other, WEB], lambda name: name == "p1", "0a:00:00:00:00:01")
    # 10.0.0.13:80 lists an IPv6 backend: the whole VIP is dropped, monitors included (observed).
    assert set(want) == {("p1", "10.0.0.4", 8080, "tcp"), ("p1", "10.0.0.4", 0, "tcp"), ("p1", "fd00::4", 80, "tcp")}
    assert want[("p1", "10.0.0.4", 8080, "tcp")] == {
        "logical_port": "p1", "ip": "10.0.0.4", "port": 8080, "protocol": "tcp", "src_ip": "10.0.0.9",
        "src_mac": "0a:00:00:00:00:01", "options": {"interval": "9"}}


def _fctx(down: set, ports: dict[str, str]) -> SimpleNamespace:
    nd = SimpleNamespace(ports={n: SimpleNamespace(kind=k, enabled=True) for n, k in ports.items()})
    warned: list[tuple] = []
    return SimpleNamespace(nd=nd, health=LbHealth(down=down), warned=warned,
                           warn=lambda kind, table, row, reason, **kw: warned.append((kind, table, row, reason)))


def test_checked_vip_backends() -> None:
    ctx = _fctx({("p1", "10.0.0.4", 0, "tcp")}, {"p1": "lsp", "gone": "lrp"})
    got = {v.key: ([b.text() for b in v.backends], [b.text() for b in v.listed_backends])
           for v in lb_vips(WEB, ctx)}  # type: ignore[arg-type]
    assert got == {
        "10.0.0.10:80": (["10.0.0.4:8080"], ["10.0.0.4:8080", "10.0.0.5:8080", "10.0.0.6:8080"]),
        "10.0.0.11": ([], ["10.0.0.4", "10.0.0.5"]),
        "10.0.0.12:80": (["10.0.0.4:80"], ["10.0.0.4:80"]),  # not checked: its health check names another VIP
        "[fd00::10]:80": (["[fd00::4]:80"], ["[fd00::4]:80"]),
        # "10.0.0.13:80" lists an IPv6 backend: dropped (observed on the reference), and warned about.
    }
    assert [(w[0], w[1], w[2]) for w in ctx.warned] == [("lb_bad_vip", "Load_Balancer", WEB.uuid)]
    assert "10.0.0.13:80" in ctx.warned[0][3]
    assert [v.key for v in lb_vips(WEB)] == ["10.0.0.12:80"]  # without a context, checked VIPs are left out


def test_lb_health_index() -> None:
    h = LbHealth()
    assert h.set_lb("a", WEB)
    assert h.lbs_of_ports(["gone"]) == {"a"} and h.lbs_of_keys([("p1", "fd00::4", 80, "tcp")]) == {"a"}
    assert not h.set_lb("a", None)
    assert h.key_lbs == {} and h.port_lbs == {} and h.lb_keys == {}


def test_sb_down_monitors() -> None:
    def row(port: str, ip: str, status: list[str], data: object = True) -> SimpleNamespace:
        return SimpleNamespace(logical_port=port, ip=ip, port=80, protocol=["tcp"], status=status, _data=data)

    rows = [row("p1", "1.1.1.1", ["offline"]), row("p1", "1.1.1.2", ["online"]), row("p2", "1.1.1.3", ["online"]),
            row("p2", "1.1.1.4", []), row("p2", "1.1.1.5", ["error"]), row("p3", "1.1.1.6", ["offline"], None)]
    sb = SimpleNamespace(rows=lambda table: dict(enumerate(rows)))
    down = sb_down_monitors(sb, lambda name: name == "p2")
    assert down == {monitor_key(rows[0]), monitor_key(rows[1]), monitor_key(rows[4])}
