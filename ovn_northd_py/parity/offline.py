"""Dev tool: our flow builders, in-process, against the reference ovn-northd's Logical_Flow table.

Builds an NB (a workload script or the built-in ``l2`` edge-case NB), serves it with
an empty SB, lets the reference ovn-northd fill the SB, then connects to both
databases in-process, builds our northd model and flows
(:func:`ovn_northd_py.flows.build_lflows`) and compares them with the reference's
flows stage by stage (flows expanded over their datapaths, as the parity harness
does), plus the stage-hints.  No SB writer is involved.

Only the stages our builders fully implement (``--stages``, default
:data:`FULL_STAGES`) are compared in full; in every other stage only the fallback
flows (priority 0, and the priority-65535 ``match=1`` skip flows of the ACL
stages) are compared.

Examples::

    python -m ovn_northd_py.parity.offline --switches 3 --ports 3 --gw-routers 3
    python -m ovn_northd_py.parity.offline --builtin l2 --examples 20
    python -m ovn_northd_py.parity.offline --script ./my_nb.py NB_REMOTE 5    # --script comes last

Exit status: 0 all compared flows match, 1 differences, 2 the tool could not run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ovn_northd_py import log as logmod
from ovn_northd_py.devtools.servers import NB_SCHEMA, SB_SCHEMA, OvsdbServer, ReferenceNorthd, nbctl
from ovn_northd_py.flows import build_lflows, flow_ctx_from_nb
from ovn_northd_py.flows.owners import new_flow_table
from ovn_northd_py.lflow.profile import OVN_23_03
from ovn_northd_py.lflow.stages import (
    LS_IN_ACL,
    LS_IN_ACL_HINT,
    LS_IN_APPLY_PORT_SEC,
    LS_IN_ARP_RSP,
    LS_IN_CHECK_PORT_SEC,
    LS_IN_DHCP_OPTIONS,
    LS_IN_DHCP_RESPONSE,
    LS_IN_DNS_LOOKUP,
    LS_IN_DNS_RESPONSE,
    LS_IN_EXTERNAL_PORT,
    LS_IN_L2_LKUP,
    LS_IN_L2_UNKNOWN,
    LS_IN_LOOKUP_FDB,
    LS_IN_PUT_FDB,
    LS_OUT_ACL,
    LS_OUT_ACL_HINT,
    LS_OUT_APPLY_PORT_SEC,
    LS_OUT_CHECK_PORT_SEC,
)
from ovn_northd_py.lflow.table import MAX_PRIORITY, FlowTable
from ovn_northd_py.northd.build import KeyState, build_northd
from ovn_northd_py.northd.model import Northd
from ovn_northd_py.ovsdb.connection import DbConnection
from ovn_northd_py.parity.harness import (
    FLOW_TABLE,
    FlowKey,
    HarnessError,
    Resolver,
    StageDiff,
    StageId,
    dump_sb,
    expand_flows,
    render_flow,
    script,
    workload,
)
from ovn_northd_py.parity.services_nb import build_services_nb

# The reference here is the host's ovn-northd, 23.03: our flows are built with its profile.
PROFILE = OVN_23_03
# Stages whose every flow our builders produce.
FULL_STAGES: tuple[str, ...] = tuple(
    s.name
    for s in (
        LS_IN_CHECK_PORT_SEC,
        LS_IN_APPLY_PORT_SEC,
        LS_IN_LOOKUP_FDB,
        LS_IN_PUT_FDB,
        LS_IN_L2_LKUP,
        LS_IN_L2_UNKNOWN,
        LS_OUT_CHECK_PORT_SEC,
        LS_OUT_APPLY_PORT_SEC,
        LS_IN_ARP_RSP,
        LS_IN_DHCP_OPTIONS,
        LS_IN_DHCP_RESPONSE,
        LS_IN_DNS_LOOKUP,
        LS_IN_DNS_RESPONSE,
        LS_IN_EXTERNAL_PORT,
    )
)
# Stages whose priority-65535 match=1 flow is a fallback (a switch without ACLs skips them).
ACL_SKIP_STAGES = frozenset(s.name for s in (LS_IN_ACL_HINT, LS_IN_ACL, LS_OUT_ACL_HINT, LS_OUT_ACL))
HintKey = tuple[str, str, int, str, str]  # (pipeline, stage, priority, match, actions)

NbBuilder = Callable[[str], None]


# --------------------------------------------------------------------------- the built-in "l2" NB


def _rport(
    sw: str, rtr: str, lrp: str, mac: str, nets: Sequence[str], addr: str | None = "router"
) -> list[list[str]]:
    """A router port ``lrp`` on ``rtr`` and its switch-side port ``sw-lrp``."""
    lsp = f"{sw}-{lrp}"
    cmds = [
        ["lrp-add", rtr, lrp, mac, *nets],
        ["lsp-add", sw, lsp],
        ["lsp-set-type", lsp, "router"],
        ["lsp-set-options", lsp, f"router-port={lrp}"],
    ]
    if addr is not None:
        cmds.append(["lsp-set-addresses", lsp, *addr.split("|")])
    return cmds


def _localnet(sw: str, addresses: str = "unknown", *opts: str) -> list[list[str]]:
    ln = f"ln-{sw}"
    return [
        ["lsp-add", sw, ln],
        ["lsp-set-type", ln, "localnet"],
        ["lsp-set-addresses", ln, addresses],
        ["lsp-set-options", ln, "network_name=phys", *opts],
    ]


def _vif(
    sw: str, name: str, *addresses: str, ps: Sequence[str] = (), enabled: bool = True
) -> list[list[str]]:
    cmds = [["lsp-add", sw, name]]
    if addresses:
        cmds.append(["lsp-set-addresses", name, *addresses])
    if ps:
        cmds.append(["lsp-set-port-security", name, *ps])
    if not enabled:
        cmds.append(["lsp-set-enabled", name, "disabled"])
    return cmds


def l2_edge_commands() -> list[list[list[str]]]:
    """ovn-nbctl transactions of an NB exercising the L2 stages' corner cases (all seen on the reference)."""
    return [_l2_switch_ports(), _l2_router_ports(), _l2_router_only_switches(), _l2_gateway_ports(), _l2_misc()]


def _l2_switch_ports() -> list[list[str]]:
    """sw0: VIFs with and without addresses / port security / unknown, disabled ports, other port types."""
    return [
        ["ls-add", "sw0"],
        ["ls-add", "sw1"],
        ["ls-add", "sw-empty"],
        ["lr-add", "r-empty"],
        ["lr-add", "r0"],
        ["lr-add", "gw0"],
        ["set", "Logical_Router", "gw0", "options:chassis=hv1"],
        *_vif("sw0", "p-ps", ps=["00:00:00:00:00:a1 10.0.0.11"]),
        *_vif("sw0", "p-addr", "00:00:00:00:00:a2 10.0.0.12 fd00::12"),
        *_vif("sw0", "p-unk", "unknown"),
        *_vif("sw0", "p-unk-ps", "unknown", "00:00:00:00:00:a4", ps=["00:00:00:00:00:a4"]),
        *_vif("sw0", "p-two", "00:00:00:00:00:a5", "00:00:00:00:00:a6 10.0.0.16"),
        *_vif("sw0", "p-dis", "00:00:00:00:00:a7 10.0.0.17", enabled=False),
        *_vif("sw0", "p-dis-unk", "unknown", enabled=False),
        *_vif("sw0", "p-dyn", "dynamic"),
        *_vif("sw0", "p-noaddr"),
        *_vif("sw0", "p-bad", "00:00:00:00:00:a9, 10.0.0.19"),
        *_vif("sw0", "p-upper", "00:00:00:00:00:AA"),
        *_vif("sw0", "p-short", "0:0:0:0:20:5"),
        *_vif("sw0", "p-qdisc", "00:00:00:00:00:ab"),
        ["lsp-set-options", "p-qdisc", "qdisc_queue_id=5"],
        *_vif("sw0", "p-qbad"),
        ["lsp-set-options", "p-qbad", "qdisc_queue_id=abc"],
        *_vif("sw0", "p-qdis", enabled=False),
        ["lsp-set-options", "p-qdis", "qdisc_queue_id=4"],
        *_vif("sw0", "dup1", "00:00:00:00:20:08"),
        *_vif("sw0", "dup2", "00:00:00:00:20:08"),
        *_localnet("sw0", "unknown", "qdisc_queue_id=7"),
        ["lsp-add", "sw0", "vt0"],
        ["lsp-set-type", "vt0", "vtep"],
        ["lsp-set-addresses", "vt0", "unknown"],
        [
            "lsp-set-options",
            "vt0",
            "vtep-physical-switch=ps",
            "vtep-logical-switch=ls",
            "qdisc_queue_id=3",
        ],
        ["lsp-add", "sw0", "vt1"],
        ["lsp-set-type", "vt1", "vtep"],
        ["lsp-set-addresses", "vt1", "00:00:00:00:20:03"],
        ["lsp-set-options", "vt1", "vtep-physical-switch=ps", "vtep-logical-switch=ls"],
        ["lsp-add", "sw0", "vt-dis"],
        ["lsp-set-type", "vt-dis", "vtep"],
        ["lsp-set-enabled", "vt-dis", "disabled"],
        ["lsp-set-options", "vt-dis", "vtep-physical-switch=ps", "vtep-logical-switch=ls"],
        ["lsp-add", "sw0", "lp0"],
        ["lsp-set-type", "lp0", "localport"],
        ["lsp-set-addresses", "lp0", "00:00:00:00:00:ac 10.0.0.30"],
        ["lsp-add", "sw0", "ext0"],
        ["lsp-set-type", "ext0", "external"],
        ["lsp-set-addresses", "ext0", "00:00:00:00:00:ad 10.0.0.31"],
        ["lsp-add", "sw0", "vir0"],
        ["lsp-set-type", "vir0", "virtual"],
        ["lsp-set-addresses", "vir0", "00:00:00:00:00:ae 10.0.0.32"],
        ["lsp-set-options", "vir0", "virtual-ip=10.0.0.32", "virtual-parents=p-addr"],
        ["lsp-add", "sw0", "l2gw0"],
        ["lsp-set-type", "l2gw0", "l2gateway"],
        ["lsp-set-addresses", "l2gw0", "unknown"],
        ["lsp-set-options", "l2gw0", "network_name=phys", "l2gateway-chassis=hv1"],
        ["lsp-add", "sw0", "rem0"],
        ["lsp-set-type", "rem0", "remote"],
        ["lsp-set-addresses", "rem0", "00:00:00:00:20:04"],
        ["lsp-set-options", "rem0", "requested-chassis=hv9"],
        *_vif("sw0", "par0", "00:00:00:00:00:b0"),
        ["lsp-add", "sw0", "child0", "par0", "10"],
        ["lsp-set-addresses", "child0", "00:00:00:00:00:b1 10.0.0.41"],
        ["lsp-add", "sw0", "child1", "par0", "11"],
        ["lsp-set-addresses", "child1", "unknown"],
    ]


def _l2_router_ports() -> list[list[str]]:
    """Router ports: "router" address, explicit MAC, none, disabled LSP / LRP, gateway router, DGP, dangling."""
    return [
        *_rport("sw0", "r0", "r0-sw0", "00:00:00:00:ff:01", ["10.0.0.1/24", "fd00::1/64"]),
        *_rport("sw1", "r0", "r0-sw1", "00:00:00:00:FF:02", ["10.1.0.1/24"], addr="00:00:00:00:ff:02"),
        *_rport("sw1", "gw0", "gw0-sw1", "00:00:00:00:ff:03", ["10.1.0.2/24"]),
        *_rport("sw1", "r0", "r0-ext", "00:00:00:00:ff:04", ["172.16.0.1/24"]),
        ["lrp-set-gateway-chassis", "r0-ext", "hv1", "10"],
        ["lsp-add", "sw1", "sw1-dangling"],
        ["lsp-set-type", "sw1-dangling", "router"],
        ["lsp-set-options", "sw1-dangling", "router-port=nonexistent"],
        ["lsp-set-addresses", "sw1-dangling", "router"],
        *_vif("sw1", "q1", "00:00:00:00:01:01 10.1.0.11", ps=["00:00:00:00:01:01"]),
        *_rport("sw1", "r0", "r0-sw1b", "00:00:00:00:ff:05", ["10.1.1.1/24"], addr=None),
        *_rport("sw1", "r0", "r0-sw1c", "00:00:00:00:ff:06", ["10.1.2.1/24"]),
        ["lsp-set-enabled", "sw1-r0-sw1c", "disabled"],
        *_rport("sw1", "r0", "r0-sw1d", "00:00:00:00:ff:07", ["10.1.3.1/24"]),
        ["lrp-set-enabled", "r0-sw1d", "disabled"],
        ["lr-nat-add", "r0", "snat", "10.0.0.100", "192.168.0.0/24"],
        ["lr-nat-add", "r0", "dnat", "10.0.0.101", "192.168.0.5"],
        ["lr-nat-add", "r0", "dnat_and_snat", "99.0.0.1", "192.168.0.7"],
        ["lr-nat-add", "r0", "dnat_and_snat", "fd00::60", "fd99::5"],
        ["lb-add", "lb-r0-in", "10.0.0.200:80", "192.168.0.5:80", "tcp"],
        ["lr-lb-add", "r0", "lb-r0-in"],
        ["lb-add", "lb-r0-out", "88.0.0.1:80", "192.168.0.5:80", "tcp"],
        ["lr-lb-add", "r0", "lb-r0-out"],
        ["lb-add", "lb-r0-v6", "[fd00::70]:80", "[fd99::5]:80", "tcp"],
        ["lr-lb-add", "r0", "lb-r0-v6"],
        ["lb-add", "lb-r0-none", "10.1.0.77:80", "192.168.0.5:80", "tcp"],
        ["set", "Load_Balancer", "lb-r0-none", "options:neighbor_responder=none"],
        ["lr-lb-add", "r0", "lb-r0-none"],
        ["lr-nat-add", "gw0", "dnat_and_snat", "10.1.0.100", "192.168.2.5"],
        ["lr-nat-add", "gw0", "snat", "77.0.0.1", "192.168.2.0/24"],
        ["lb-add", "lb-gw0", "10.1.0.200", "192.168.2.5"],
        ["lr-lb-add", "gw0", "lb-gw0"],
    ]


def _l2_router_only_switches() -> list[list[str]]:
    """A switch with only router ports; one with a router port and a disabled VIF."""
    return [
        ["ls-add", "swB"],
        ["lr-add", "r2"],
        *_rport("swB", "r0", "r0-swB", "00:00:00:00:bb:01", ["10.20.0.1/24"]),
        *_rport("swB", "r2", "r2-swB", "00:00:00:00:bb:02", ["10.20.0.2/24"]),
        ["ls-add", "swC"],
        *_vif("swC", "c-dis", "00:00:00:00:cc:11", enabled=False),
        *_rport("swC", "r2", "r2-swC", "00:00:00:00:cc:02", ["10.30.0.2/24"]),
    ]


def _l2_gateway_ports() -> list[list[str]]:
    """Distributed gateway ports on localnet switches, reside-on-redirect-chassis, NAT external MACs."""
    return [
        ["ls-add", "a-pub"],
        ["ls-add", "a-priv"],
        ["lr-add", "ra"],
        *_localnet("a-pub"),
        *_localnet("a-priv"),
        *_vif("a-priv", "av", "00:00:00:00:0a:11 10.0.1.11"),
        *[c for i in range(1, 6) for c in _vif("a-priv", f"av{i}", f"00:00:00:00:0a:2{i} 10.0.1.2{i}")],
        *_rport("a-pub", "ra", "ra-pub", "00:00:00:00:0a:01", ["172.17.0.1/24"]),
        ["lrp-set-gateway-chassis", "ra-pub", "hv1", "10"],
        *_rport("a-priv", "ra", "ra-priv", "00:00:00:00:0a:02", ["10.0.1.1/24"]),
        ["set", "Logical_Router_Port", "ra-priv", "options:reside-on-redirect-chassis=true"],
        *_rport("a-priv", "ra", "ra-priv2", "00:00:00:00:0a:03", ["10.0.2.1/24"]),
        ["lr-nat-add", "ra", "dnat_and_snat", "172.17.0.50", "10.0.1.11", "av", "00:00:00:00:0a:99"],
        *[
            [
                "lr-nat-add",
                "ra",
                "dnat_and_snat",
                f"172.17.0.6{i}",
                f"10.0.1.2{i}",
                f"av{i}",
                f"00:00:00:00:0e:0{i}",
            ]
            for i in range(1, 6)
        ],
        ["lr-nat-add", "ra", "dnat_and_snat", "172.17.0.70", "10.0.1.30"],
        ["lr-nat-add", "ra", "snat", "172.17.0.1", "10.0.1.0/24"],
        ["ls-add", "b-pub"],
        ["lr-add", "rb"],
        *_localnet("b-pub"),
        *_rport(
            "b-pub",
            "rb",
            "rb-pub",
            "00:00:00:00:0b:01",
            ["172.18.0.1/24"],
            addr="00:00:00:00:0b:01 172.18.0.1",
        ),
        ["lrp-set-gateway-chassis", "rb-pub", "hv1", "10"],
        ["ls-add", "d-pub"],
        ["lr-add", "rd"],
        ["set", "Logical_Router", "rd", "options:chassis=hv3"],
        *_localnet("d-pub"),
        *_vif("d-pub", "dv", "00:00:00:00:0d:11"),
        *_rport("d-pub", "rd", "rd-pub", "00:00:00:00:0d:01", ["172.19.0.1/24"]),
        ["lr-nat-add", "rd", "dnat_and_snat", "172.19.0.50", "10.9.9.9", "dv", "00:00:00:00:0D:99"],
        ["ls-add", "g1"],
        ["ls-add", "g2"],
        ["lr-add", "rg"],
        *_localnet("g1"),
        *_localnet("g2"),
        *_rport("g1", "rg", "rg-g1", "00:00:00:00:10:01", ["172.20.0.1/24"]),
        *_rport("g2", "rg", "rg-g2", "00:00:00:00:10:02", ["172.21.0.1/24"]),
        ["lrp-set-gateway-chassis", "rg-g1", "hv1", "10"],
        ["lrp-set-gateway-chassis", "rg-g2", "hv2", "10"],
        *_vif("g1", "gv", "00:00:00:00:10:11 10.11.0.5"),
        ["lr-nat-add", "rg", "dnat_and_snat", "172.20.0.50", "10.11.0.5", "gv", "00:00:00:00:10:99"],
        ["ls-add", "swD"],
        ["lr-add", "r3"],
        *_vif("swD", "d1", "00:00:00:00:0d:21"),
        *_rport("swD", "r3", "r3-swD", "00:00:00:00:dd:03", ["10.40.0.3/24"]),
        ["lrp-set-gateway-chassis", "r3-swD", "hv1", "10"],
        ["lr-nat-add", "r3", "dnat_and_snat", "10.40.0.50", "192.168.1.5", "d1", "00:00:00:00:ee:01"],
    ]


def _l2_misc() -> list[list[str]]:
    """Disabled router; unknown-only switches; IPAM; an IPv6-only router port; ACL / LB fallbacks."""
    return [
        ["ls-add", "s7"],
        *_vif("s7", "s7v", "00:00:00:00:07:11"),
        ["lr-add", "r7"],
        ["set", "Logical_Router", "r7", "enabled=false"],
        *_rport("s7", "r7", "r7-s7", "00:00:00:00:07:01", ["10.7.0.1/24"]),
        ["ls-add", "u1"],
        *_vif("u1", "u1d", "unknown", enabled=False),
        ["ls-add", "u2"],
        *_localnet("u2"),
        ["ls-add", "u3"],
        ["lsp-add", "u3", "u3e"],
        ["lsp-set-type", "u3e", "external"],
        ["lsp-set-addresses", "u3e", "unknown"],
        ["ls-add", "u4"],
        ["lsp-add", "u4", "u4lp"],
        ["lsp-set-type", "u4lp", "localport"],
        ["lsp-set-addresses", "u4lp", "unknown"],
        ["ls-add", "ip1"],
        ["set", "Logical_Switch", "ip1", "other_config:subnet=10.9.0.0/24"],
        *_vif("ip1", "dy1", "dynamic"),
        *_vif("ip1", "dy2", "00:00:00:00:09:02 dynamic"),
        ["ls-add", "ip2"],
        ["set", "Logical_Switch", "ip2", "other_config:mac_only=true"],
        *_vif("ip2", "dy3", "dynamic"),
        ["ls-add", "h-sw"],
        ["lr-add", "rh"],
        *_vif("h-sw", "hv", "00:00:00:00:11:11"),
        *_rport("h-sw", "rh", "rh-sw", "00:00:00:00:11:01", ["fd11::1/64"]),
        ["lb-add", "lbh1", "[fd12::70]:80", "[fd11::5]:80", "tcp"],
        ["lr-lb-add", "rh", "lbh1"],
        ["lb-add", "lbh2", "[fd11::71]:80", "[fd11::5]:80", "tcp"],
        ["lr-lb-add", "rh", "lbh2"],
        ["ls-add", "pgsw"],
        *_vif("pgsw", "pg1"),
        ["pg-add", "pgA", "pg1"],
        ["acl-add", "pgA", "from-lport", "100", "ip4", "drop"],
        ["ls-add", "aclsw"],
        *_vif("aclsw", "a1"),
        ["acl-add", "aclsw", "to-lport", "100", "ip4", "allow"],
        ["ls-add", "lbsw"],
        *_vif("lbsw", "l1"),
        ["lb-add", "lbx", "10.0.0.10:80", "10.0.0.2:80", "tcp"],
        ["ls-lb-add", "lbsw", "lbx"],
        ["lr-add", "rdis"],
        ["lrp-add", "rdis", "rdis-p", "00:00:00:00:01:01", "10.200.0.1/24"],
        ["lrp-set-enabled", "rdis-p", "disabled"],
    ]


def build_l2_edge_nb(remote: str) -> None:
    for txn in l2_edge_commands():
        args: list[str] = []
        for i, cmd in enumerate(txn):
            args += (["--"] if i else []) + cmd
        nbctl(remote, *args)
    # A NAT with an external MAC but no logical port (ovn-nbctl refuses to create one).
    nbctl(
        remote,
        "--",
        "--id=@nat",
        "create",
        "NAT",
        "type=dnat_and_snat",
        "external_ip=10.0.3.50",
        "logical_ip=192.168.9.9",
        'external_mac="00:00:00:00:0c:99"',
        "--",
        "add",
        "Logical_Router",
        "r2",
        "nat",
        "@nat",
    )
    # A load balancer reached through a group.
    lb = nbctl(
        remote, "create", "Load_Balancer", "name=lb-grp", "protocol=tcp", 'vips:"10.30.0.80:80"="10.0.0.5:80"'
    )
    nbctl(
        remote,
        "--",
        "--id=@g",
        "create",
        "Load_Balancer_Group",
        "name=lbg1",
        f"load_balancer={lb.strip()}",
        "--",
        "add",
        "Logical_Router",
        "r2",
        "load_balancer_group",
        "@g",
    )


BUILTINS: dict[str, NbBuilder] = {"l2": build_l2_edge_nb, "services": build_services_nb}


# --------------------------------------------------------------------------- running


@dataclass(slots=True)
class StageReport:
    diff: StageDiff
    full: bool  # every flow compared (else fallbacks only)
    hint_mismatches: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.diff.ok and not self.hint_mismatches


@dataclass(slots=True)
class OfflineResult:
    source: str
    stages: list[StageReport]
    labels: dict[str, str]
    our_flows: int
    build_seconds: float

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.stages)


def _is_fallback(stage: str, priority: int, match: str) -> bool:
    return priority == 0 or (stage in ACL_SKIP_STAGES and priority == MAX_PRIORITY and match == "1")


def _wait_synced(conns: Sequence[DbConnection], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        for c in conns:
            c.run()
        if all(c.synced for c in conns):
            return
        if time.monotonic() > deadline:
            raise HarnessError("IDL connections did not sync")
        time.sleep(0.01)


def _connect(nb_remote: str, sb_remote: str) -> tuple[DbConnection, DbConnection]:
    from ovn_northd_py.daemon import SB_TABLES

    nb_tables: dict[str, Any] = dict.fromkeys(json.loads(NB_SCHEMA.read_text())["tables"])
    nb = DbConnection("nb", nb_remote, NB_SCHEMA, nb_tables)
    sb = DbConnection("sb", sb_remote, SB_SCHEMA, dict(SB_TABLES))
    return nb, sb


def build_ours(nb: DbConnection, sb: DbConnection) -> tuple[Northd, FlowTable]:
    logger = logmod.get("offline")
    warn = logmod.WarnOnce(logger)
    opts: dict[str, str] = {}
    for row in nb.rows("NB_Global").values():
        opts = dict(row.options)
    # IPAM runs on the NB the reference wrote back to: its dynamic_addresses are kept while valid.
    nd = build_northd(nb, sb, KeyState(), warn, mac_prefix=opts.get("mac_prefix", ""))
    ctx = flow_ctx_from_nb(
        nd,
        nb,
        mac_prefix=opts.get("mac_prefix", ""),
        svc_monitor_mac=opts.get("svc_monitor_mac", ""),
        warn=warn.warn,
        profile=PROFILE,
    )
    table = new_flow_table(len(nd.slots))
    build_lflows(nd, ctx, table)
    return nd, table


def expand_ours(
    nd: Northd, table: FlowTable
) -> tuple[dict[StageId, Counter[FlowKey]], dict[HintKey, set[str]]]:
    stages: dict[StageId, Counter[FlowKey]] = {}
    hints: dict[HintKey, set[str]] = {}
    for f in table.flows():
        st = f.stage
        counter = stages.setdefault((st.pipeline, st.name), Counter())
        for i in f.datapaths:
            key: FlowKey = (
                nd.by_index[i].key,  # (a full build: every bit is a datapath)
                st.pipeline,
                PROFILE.table_id(st),
                f.priority,
                f.match,
                f.actions,
                f.controller_meter or "",
                st.name,
            )
            counter[key] += 1
        hints.setdefault((st.pipeline, st.name, f.priority, f.match, f.actions), set()).add(f.hint or "")
    return stages, hints


def _reference_hints(res: Resolver) -> dict[HintKey, set[str]]:
    out: dict[HintKey, set[str]] = {}
    for row in res.dump.rows(FLOW_TABLE).values():
        ext = row["external_ids"].as_dict()
        key = (
            row["pipeline"],
            str(ext.get("stage-name", "?")),
            row["priority"],
            row["match"],
            row["actions"],
        )
        out.setdefault(key, set()).add(str(ext.get("stage-hint", "")))
    return out


def _stage_order(sid: StageId) -> tuple[str, bool, int, str]:
    stage = PROFILE.stage_named(sid[1])
    return (sid[1][:3], sid[0] != "ingress", PROFILE.table_id(stage) if stage else -1, sid[1])


def compare(
    ref: dict[StageId, Counter[FlowKey]],
    ours: dict[StageId, Counter[FlowKey]],
    ref_hints: dict[HintKey, set[str]],
    our_hints: dict[HintKey, set[str]],
    full_stages: Collection[str],
) -> list[StageReport]:
    reports: list[StageReport] = []
    for sid in sorted(set(ref) | set(ours), key=_stage_order):
        full = sid[1] in full_stages
        ra, rb = ref.get(sid, Counter()), ours.get(sid, Counter())
        if not full:
            ra = Counter({k: n for k, n in ra.items() if _is_fallback(k[7], k[3], k[4])})
            rb = Counter({k: n for k, n in rb.items() if _is_fallback(k[7], k[3], k[4])})
        if not (ra or rb):
            continue
        table_id = next(iter(ra or rb))[2]
        diff = StageDiff(
            sid[0],
            sid[1],
            table_id,
            ra.total(),
            rb.total(),
            (ra & rb).total(),
            sorted((ra - rb).elements()),
            sorted((rb - ra).elements()),
        )
        mism: list[str] = []
        for k in sorted(set(ra) & set(rb)):
            hk = (k[1], k[7], k[3], k[4], k[5])
            if ref_hints.get(hk, set()) != our_hints.get(hk, set()):
                mism.append(
                    f"prio={k[3]} match=({k[4]}) ref {sorted(ref_hints.get(hk, ()))} ours "
                    f"{sorted(our_hints.get(hk, ()))}"
                )
        reports.append(StageReport(diff, full, sorted(set(mism))))
    return reports


def run_offline(
    source: NbBuilder, *, workdir: Path | None = None, full_stages: Collection[str] = FULL_STAGES
) -> OfflineResult:
    own = workdir is None
    wd = Path(tempfile.mkdtemp(prefix="offline-")) if workdir is None else workdir
    wd.mkdir(parents=True, exist_ok=True)
    nb_srv = OvsdbServer(wd, "nb", NB_SCHEMA)
    sb_srv = OvsdbServer(wd, "sb", SB_SCHEMA)
    ref: ReferenceNorthd | None = None
    conns: list[DbConnection] = []
    try:
        nb_srv.start()
        sb_srv.start()
        source(nb_srv.remote)
        ref = ReferenceNorthd(wd, nb_srv.remote, sb_srv.remote).start()
        nbctl(nb_srv.remote, "--wait=sb", "sync", timeout=300)
        ref.stop()  # the SB and the NB (with what the reference wrote back) stay as they are
        ref = None
        dump = dump_sb(sb_srv.remote)
        nb, sb = _connect(nb_srv.remote, sb_srv.remote)
        conns = [nb, sb]
        _wait_synced(conns, 60.0)
        t0 = time.perf_counter()
        nd, table = build_ours(nb, sb)
        seconds = time.perf_counter() - t0
    finally:
        for c in conns:
            c.close()
        if ref is not None:
            ref.stop()
        sb_srv.stop()
        nb_srv.stop()
        if own:
            shutil.rmtree(wd, ignore_errors=True)
    res = Resolver(dump, ())
    ours, our_hints = expand_ours(nd, table)
    stages = compare(expand_flows(res), ours, _reference_hints(res), our_hints, full_stages)
    return OfflineResult(
        getattr(source, "__name__", str(source)), stages, dump.datapath_labels(), len(table), seconds
    )


# --------------------------------------------------------------------------- report


def format_report(result: OfflineResult, examples: int = 10) -> str:
    head = f"Offline flow parity on {result.source}: {result.our_flows} flows built"
    lines = [f"{head} in {result.build_seconds:.3f}s"]
    for full in (True, False):
        lines.append("Stages compared in full:" if full else "Other stages, fallback flows only:")
        for s in (r for r in result.stages if r.full == full):
            d = s.diff
            status = "OK  " if s.ok else "FAIL"
            lines.append(
                f"  {status} {d.pipeline:<7} {d.table_id:>2} {d.stage:<24} ref {d.ref_count:>6}"
                f"  ours {d.ours_count:>6}  matched {d.matched:>6}  missing {len(d.missing):>4}  extra"
                f" {len(d.extra):>4}  {d.percent:6.2f}%"
                + (f"  hint-mismatch {len(s.hint_mismatches)}" if s.hint_mismatches else "")
            )
    bad = [s for s in result.stages if not s.ok]
    if bad:
        lines.append(f"Differences (first {examples} of each):")
    for s in bad:
        lines.append(f"  {s.diff.pipeline} {s.diff.stage}:")
        lines += [f"    missing: {render_flow(f, result.labels)}" for f in s.diff.missing[:examples]]
        lines += [f"    extra:   {render_flow(f, result.labels)}" for f in s.diff.extra[:examples]]
        lines += [f"    hint:    {m}" for m in s.hint_mismatches[:examples]]
    lines.append("RESULT: " + ("PARITY" if result.ok else "DIFFERENT"))
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ovn_northd_py.parity.offline", description=__doc__.split("\n")[0]
    )
    p.add_argument("--workload", default="mixed", help="script of the shared workloads dir (default mixed)")
    p.add_argument("--switches", type=int, default=3)
    p.add_argument("--ports", type=int, default=3)
    p.add_argument("--gw-routers", type=int, default=None, help="default: --switches")
    p.add_argument("--builtin", choices=sorted(BUILTINS), help="a built-in NB instead of a workload")
    p.add_argument("--stages", nargs="+", default=list(FULL_STAGES), help="stages compared in full")
    p.add_argument("--workdir", type=Path, help="use (and keep) this work dir")
    p.add_argument("--examples", type=int, default=10)
    p.add_argument(
        "--script", nargs=argparse.REMAINDER, metavar="PATH ARGS", help="NB builder script (last!)"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    source: NbBuilder
    if args.builtin:
        source = BUILTINS[args.builtin]
    elif args.script:
        source = script(args.script[0], *args.script[1:])
    else:
        gw = args.gw_routers if args.gw_routers is not None else args.switches
        source = workload(args.workload, args.switches, args.ports, gw)
    try:
        result = run_offline(source, workdir=args.workdir, full_stages=args.stages)
    except (HarnessError, OSError, subprocess.SubprocessError) as exc:
        print(f"offline parity failed: {exc}", file=sys.stderr)
        return 2
    print(format_report(result, args.examples))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
