"""MAC binding and FDB aging (``sync/aging.py``): learned rows older than their threshold go.

23.03 cases run against our daemon and the reference ovn-northd alike (same servers' contents,
same expectation); the 25.03 forms (CIDR thresholds, FDB aging) against ours under the 25.03
profile, from ``ovn-nb(5)`` of 25.03.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ovn_northd_py.devtools.servers import (
    NB_SCHEMA,
    SB_SCHEMA,
    OurNorthd,
    OvsdbServer,
    ReferenceNorthd,
    nbctl,
    sbctl,
)
from ovn_northd_py.devtools.testing import ovsdb_transact, wait_until
from ovn_northd_py.release import RELEASES


class Net:
    """NB/SB servers, one northd, and helpers to write what ovn-controller would."""

    def __init__(self, workdir: Path, northd: str, release: str = "23.03") -> None:
        rel = RELEASES[release]
        nb_schema, sb_schema = (NB_SCHEMA, SB_SCHEMA) if release == "23.03" else (rel.nb_schema, rel.sb_schema)
        self.nb = OvsdbServer(workdir, "nb", nb_schema).start()
        self.sb = OvsdbServer(workdir, "sb", sb_schema).start()
        cls: Any = OurNorthd if northd == "ours" else ReferenceNorthd
        self.northd = cls(workdir, self.nb.remote, self.sb.remote).start()

    def stop(self) -> None:
        self.northd.stop()
        self.sb.stop()
        self.nb.stop()

    def nbctl(self, *args: str) -> str:
        return nbctl(self.nb.remote, *args, wait="sb", timeout=20)

    def sbctl(self, *args: str) -> str:
        return sbctl(self.sb.remote, *args, timeout=20)

    def dp_uuid(self, name: str) -> str:
        return self.sbctl("--bare", "--columns=_uuid", "find", "datapath_binding", f"external_ids:name={name}").strip()

    def learn(self, router: str, port: str, ip: str, mac: str, age_s: float) -> None:
        ts = int(time.time() * 1000 - age_s * 1000)
        self.sbctl("create", "mac_binding", f"datapath={self.dp_uuid(router)}", f"logical_port={port}", f'ip="{ip}"',
                   f'mac="{mac}"', f"timestamp={ts}")

    def bound_ips(self) -> set[str]:
        return set(self.sbctl("--bare", "--columns=ip", "list", "mac_binding").split())


@pytest.fixture
def nets(tmp_path: Path) -> Iterator[Any]:
    made: list[Net] = []

    def make(northd: str, release: str = "23.03") -> Net:
        d = tmp_path / f"{northd}{len(made)}"
        d.mkdir()
        made.append(Net(d, northd, release))
        return made[-1]

    try:
        yield make
    finally:
        for n in made:
            n.stop()


ROUTERS = ["lr-add", "lr0", "--", "lrp-add", "lr0", "lrp0", "00:00:00:00:ff:01", "192.168.10.1/24",
           "--", "lrp-add", "lr0", "lrp0b", "00:00:00:00:ff:03", "fe80::1/64",
           "--", "lr-add", "lr1", "--", "lrp-add", "lr1", "lrp1", "00:00:00:00:ff:02", "192.168.20.1/24"]


@pytest.mark.parametrize("northd", ["ours", "reference"])
def test_router_threshold_ages_out_its_mac_bindings_without_any_change(nets, northd):
    """A binding older than lr0's threshold goes at once; a fresh one goes when it gets that old
    (no NB or SB change in between: the daemon wakes up for it); lr1 (no threshold) keeps its."""
    n = nets(northd)
    n.nbctl(*ROUTERS)
    n.learn("lr0", "lrp0", "192.168.10.10", "00:00:00:00:10:10", age_s=30)
    n.learn("lr1", "lrp1", "192.168.20.10", "00:00:00:00:20:10", age_s=30)
    n.nbctl("set", "logical_router", "lr0", "options:mac_binding_age_threshold=3")
    wait_until(lambda: "192.168.10.10" not in n.bound_ips(), 5, "the old binding of lr0 aged out")
    n.learn("lr0", "lrp0", "192.168.10.11", "00:00:00:00:10:11", age_s=0)
    time.sleep(1)
    assert "192.168.10.11" in n.bound_ips(), "a fresh binding went before its threshold"
    wait_until(lambda: "192.168.10.11" not in n.bound_ips(), 8, "the fresh binding aged out")
    assert n.bound_ips() == {"192.168.20.10"}


@pytest.mark.parametrize("northd", ["ours", "reference"])
def test_zero_or_unset_threshold_never_ages(nets, northd):
    n = nets(northd)
    n.nbctl(*ROUTERS, "--", "set", "logical_router", "lr0", "options:mac_binding_age_threshold=0")
    n.learn("lr0", "lrp0", "192.168.10.10", "00:00:00:00:10:10", age_s=3600)
    n.learn("lr1", "lrp1", "192.168.20.10", "00:00:00:00:20:10", age_s=3600)
    n.nbctl("set", "logical_router", "lr1", "options:mtu=1500")  # a change: northd runs again
    time.sleep(2)
    assert n.bound_ips() == {"192.168.10.10", "192.168.20.10"}


def test_removal_limit_bounds_each_batch(nets):
    """NB_Global mac_binding_removal_limit=2: 5 aged rows go 2 at a time, batches 5 s apart."""
    n = nets("ours")
    n.nbctl(*ROUTERS, "--", "set", "NB_Global", ".", "options:mac_binding_removal_limit=2")
    for i in range(5):
        n.learn("lr0", "lrp0", f"192.168.10.{10 + i}", f"00:00:00:00:10:{10 + i}", age_s=60)
    n.nbctl("set", "logical_router", "lr0", "options:mac_binding_age_threshold=10")
    wait_until(lambda: len(n.bound_ips()) == 3, 5, "the first batch of 2")
    time.sleep(2)
    assert len(n.bound_ips()) == 3, "the next batch came before 5 s"
    wait_until(lambda: len(n.bound_ips()) == 1, 10, "the second batch")
    wait_until(lambda: not n.bound_ips(), 10, "the last batch")


def test_cidr_thresholds_of_25_03(nets):
    """25.03's [cidr:]threshold;... : the longest matching prefix decides, 0 means never, the
    entry without CIDR is the default; IPv6 prefixes too."""
    n = nets("ours", "25.03")
    n.nbctl(*ROUTERS)
    n.learn("lr0", "lrp0", "192.168.10.10", "00:00:00:00:10:10", age_s=30)  # /24: 0 -> stays
    n.learn("lr0", "lrp0", "192.168.11.10", "00:00:00:00:11:10", age_s=30)  # /16: 10 s -> goes
    n.learn("lr0", "lrp0", "10.0.0.10", "00:00:00:00:12:10", age_s=30)  # default 600 s -> stays
    n.learn("lr0", "lrp0b", "fe80::10", "00:00:00:00:13:10", age_s=30)  # fe80::/10: 5 s -> goes
    n.nbctl("set", "logical_router", "lr0",
            'options:mac_binding_age_threshold="192.168.0.0/16:10;192.168.10.0/24:0;fe80::/10:5;600"')
    wait_until(lambda: n.bound_ips() == {"192.168.10.10", "10.0.0.10"}, 5, "the /16 and fe80::/10 rows aged out")


def test_malformed_cidr_threshold_disables_aging_in_25_03(nets):
    n = nets("ours", "25.03")
    n.nbctl(*ROUTERS)
    n.learn("lr0", "lrp0", "192.168.10.10", "00:00:00:00:10:10", age_s=30)
    n.nbctl("set", "logical_router", "lr0", 'options:mac_binding_age_threshold="192.168.0.0/33:1;1"')
    time.sleep(2)
    assert n.bound_ips() == {"192.168.10.10"}


def test_fdb_age_threshold_of_25_03(nets):
    """Logical_Switch other_config:fdb_age_threshold ages that switch's FDB rows only."""
    n = nets("ours", "25.03")
    n.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p0", "--", "lsp-set-addresses", "p0", "unknown",
            "--", "ls-add", "sw1", "--", "lsp-add", "sw1", "q0", "--", "lsp-set-addresses", "q0", "unknown")

    def key(table: str, cond: str) -> str:
        return n.sbctl("--bare", "--columns=tunnel_key", "find", table, cond).strip()

    old = int(time.time() * 1000) - 30_000
    # (ovsdb-client: the host's ovn-sbctl is 23.03's, whose FDB has no timestamp)
    ovsdb_transact(n.sb.remote, "OVN_Southbound", *(
        {"op": "insert", "table": "FDB", "row": {"mac": mac, "timestamp": old,
                                                 "dp_key": int(key("datapath_binding", f"external_ids:name={sw}")),
                                                 "port_key": int(key("port_binding", f"logical_port={port}"))}}
        for sw, port, mac in (("sw0", "p0", "00:00:00:00:aa:01"), ("sw1", "q0", "00:00:00:00:bb:01"))))
    n.nbctl("set", "logical_switch", "sw0", "other_config:fdb_age_threshold=5")

    def macs() -> set[str]:
        return set(n.sbctl("--bare", "--columns=mac", "list", "fdb").split())

    wait_until(lambda: macs() == {"00:00:00:00:bb:01"}, 5, "sw0's FDB row aged out")
