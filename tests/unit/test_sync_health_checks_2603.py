"""OVN 26.03's Service_Monitor rows of switch ports' and network functions' health checks
(:func:`ovn_northd_py.sync.service_monitor.lsp_monitors` / :func:`~ovn_northd_py.sync.service_monitor.nf_monitors`)
and the healthy network function a group redirects to (:func:`ovn_northd_py.flows.ls_network_function.active_nf`).
Expected rows are the reference ovn-northd 26.03.1's (Debian sid), observed on the NBs of
``tests/parity/test_lsp_health_check_2603.py`` and ``tests/parity/test_network_function_2603.py``."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

from test_flows_acl import Nb, _port, _switch

from ovn_northd_py.flows.ls_network_function import active_nf
from ovn_northd_py.lflow.profile import OVN_25_03, OVN_26_03
from ovn_northd_py.northd.model import Northd
from ovn_northd_py.sync.service_monitor import lsp_monitors, nf_monitors, wanted_monitors

MAC = "0a:00:00:00:00:fe"


def _hc(proto: str, address: str, port: int, src: str, **options: str) -> SimpleNamespace:
    return SimpleNamespace(protocol=proto, address=address, port=port, src_ip=src, options=options, status=[])


def _nd() -> Northd:
    nd = Northd()
    sw = _switch(nd, "sw0", [])
    vm = _port(nd, sw, "vm1")
    vm.nb.addresses = ["0a:00:00:00:00:01 10.0.0.1"]
    vm.nb.health_checks = [_hc("tcp", "10.0.0.1", 80, "10.0.0.254", interval="7")]
    for p in ("a1", "a2"):
        _port(nd, sw, p)
    return nd


def _nf(name: str, u: int, hc: bool = True) -> SimpleNamespace:
    return SimpleNamespace(uuid=uuid.UUID(int=u), name=name, inport=SimpleNamespace(name=f"{name}1"),
                           outport=SimpleNamespace(name=f"{name}2"),
                           health_check=[SimpleNamespace(options={"interval": "2"})] if hc else [])


def _nb(*nfs: Any, **options: str) -> Nb:
    return Nb(NB_Global={1: SimpleNamespace(options=options)}, Network_Function=dict(enumerate(nfs)),
              Load_Balancer={})


def test_switch_port_health_check_row() -> None:
    assert lsp_monitors(_nd(), MAC) == {("vm1", "10.0.0.1", 80, "tcp"): {
        "logical_port": "vm1", "ip": "10.0.0.1", "port": 80, "protocol": "tcp", "src_ip": "10.0.0.254",
        "src_mac": MAC, "options": {"interval": "7"}, "type": ["logical-switch-port"]}}


def test_switch_port_health_check_of_an_address_the_port_does_not_have_gets_no_row() -> None:
    nd = _nd()
    nd.ports["vm1"].nb.health_checks.append(_hc("tcp", "10.0.0.9", 80, "10.0.0.254"))
    assert set(lsp_monitors(nd, MAC)) == {("vm1", "10.0.0.1", 80, "tcp")}
    nd.ports["vm1"].nb.addresses = []
    assert lsp_monitors(nd, MAC) == {}


def test_network_function_health_check_row() -> None:
    nb = _nb(_nf("a", 1), svc_monitor_ip="169.254.100.1", svc_monitor_ip_dst="169.254.100.2")
    rows = nf_monitors(nb, _nd(), MAC, "0a:00:00:00:00:fd")
    assert rows == {("a2", "169.254.100.2", 0, "icmp"): {
        "logical_port": "a2", "ip": "169.254.100.2", "port": 0, "protocol": "icmp", "src_ip": "169.254.100.1",
        "src_mac": MAC, "mac": "0a:00:00:00:00:fd", "logical_input_port": "a1", "options": {"interval": "2"},
        "type": ["network-function"]}}


def test_no_network_function_row_without_the_probe_addresses() -> None:
    assert nf_monitors(_nb(_nf("a", 1), svc_monitor_ip="169.254.100.1"), _nd(), MAC, "") == {}


def test_no_health_check_rows_before_26_03() -> None:
    want, _mapped, _lbs = wanted_monitors(_nb(), _nd(), MAC, OVN_25_03)
    assert want == {}
    want, mapped, _lbs = wanted_monitors(_nb(), _nd(), MAC, OVN_26_03)
    assert set(want) == {("vm1", "10.0.0.1", 80, "tcp")} and "vm1" in mapped


def test_active_network_function_is_the_first_healthy_one() -> None:
    a, b, c = _nf("a", 1), _nf("b", 2), _nf("c", 3, hc=False)
    group = SimpleNamespace(network_function=[c, b, a])
    assert active_nf(group, {("b1", "b2")}) is b
    assert active_nf(group, {("a1", "a2"), ("b1", "b2")}) is a
    assert active_nf(group, set()) is c  # (no health check: always healthy)
    assert active_nf(SimpleNamespace(network_function=[a, b]), set()) is None
