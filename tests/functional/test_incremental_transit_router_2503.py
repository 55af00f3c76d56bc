"""Transit routers' remote ports (25.03 on; ovn-northd.at "Transit router - remote ports") under
``--check-incremental=1``: a router port whose ``options:requested-chassis`` is a remote chassis
(``other_config:is-remote=true``) is a ``remote`` Port_Binding bound there, and its router floods
ARP replies / NAs to it (``flood_remote``); router ports added, changed and removed, and chassis
becoming remote or local.  After each change the daemon compares its incremental state with a full
recompute."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, nbctl, sbctl
from ovn_northd_py.devtools.testing import checked_daemon, mismatches

pytestmark = pytest.mark.releases("25.03", "26.03")


@pytest.fixture
def net(env) -> Iterator[tuple[str, str, OurNorthd]]:
    env.sbctl("chassis-add", "hv2", "geneve", "192.168.0.12", "--", "set", "chassis", "hv2",
              "other_config:is-remote=true")
    env.sbctl("chassis-add", "hv4", "geneve", "192.168.0.14")
    env.nbctl("lr-add", "tr", "--", "lrp-add", "tr", "tr-local", "00:00:00:00:30:01", "192.168.100.1/31")
    with checked_daemon(env) as (_, d, _port):
        yield env.nb.remote, env.sb.remote, d


def _pb_type(sb: str, port: str) -> str:
    return sbctl(sb, "--bare", "--columns=type", "find", "Port_Binding", f"logical_port={port}").strip()


def _floods(sb: str) -> bool:
    return "flood_remote" in sbctl(sb, "--bare", "--columns=actions", "find", "Logical_Flow", "priority=100")


def test_transit_router_remote_ports_incremental_equals_recompute(net) -> None:
    nb, sb, d = net
    steps: list[tuple[Callable[[], object], dict[str, str], bool]] = [
        (lambda: nbctl(nb, "lrp-add", "tr", "tr-az2", "00:00:00:00:30:03", "192.168.100.3/31", "--", "set",
                       "Logical_Router_Port", "tr-az2", "options:requested-chassis=hv2"), {"tr-az2": "remote"}, True),
        (lambda: nbctl(nb, "lrp-add", "tr", "tr-az4", "00:00:00:00:30:05", "192.168.100.5/31", "--", "set",
                       "Logical_Router_Port", "tr-az4", "options:requested-chassis=hv4"),
         {"tr-az2": "remote", "tr-az4": "patch"}, True),
        (lambda: sbctl(sb, "set", "chassis", "hv4", "other_config:is-remote=true"), {"tr-az4": "remote"}, True),
        (lambda: sbctl(sb, "remove", "chassis", "hv4", "other_config", "is-remote"), {"tr-az4": "patch"}, True),
        (lambda: nbctl(nb, "remove", "Logical_Router_Port", "tr-az2", "options", "requested-chassis"),
         {"tr-az2": "patch"}, False),
        (lambda: nbctl(nb, "set", "Logical_Router_Port", "tr-az4", "options:requested-chassis=hv2"),
         {"tr-az4": "remote"}, True),
        (lambda: nbctl(nb, "lrp-del", "tr-az4"), {"tr-local": "patch"}, False),
    ]
    for i, (step, types, floods) in enumerate(steps):
        step()
        nbctl(nb, "sync", wait="sb", timeout=30)
        bad = mismatches(d)
        assert not bad, f"incremental != recompute after step {i}: {bad[0].get('differences')}"
        assert {p: _pb_type(sb, p) for p in types} == types, i
        assert _floods(sb) == floods, i
