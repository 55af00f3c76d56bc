#!/usr/bin/env python3
"""Cold sync, RSS and ``ovn-nbctl --wait=sb`` change latency: ours against the reference ovn-northd.

usage: bench_latency.py [--workload mixed|ovnk|neutron] [--scales 50,200] [--rounds N] [--changes lsp-add,lsp-del]
                        [--json FILE] [--seed-dir DIR] [--settle S] [--warmup N] [--keep]
                        [--release 23.03|25.03|26.03] [--from-chroot] [--nbctl-daemon] [--interleave] [--gap MS]

``--release`` (default 23.03) is the OVN release of the reference and of the NB/SB schemas; the
reference side's ovsdb-servers, ovn-northd and ovn-nbctl come from the host when the host's OVN
is that release, else (or with ``--from-chroot``) from its Debian chroot (``scripts/chroots.sh``).
Both sides run on the same ovsdb-servers and ``ovn-nbctl`` (the reference's: the wall time of a
change includes the server's and nbctl's own work, and OVS 4.0's ovsdb-server serves a 100-node
ovn-k NB to nbctl about 1.5x faster than OVS 3.1's); ``--our-servers host`` puts ours on the
host's instead.

``--workload`` picks the NB builder (a row of ``WORKLOADS``): ``mixed`` (default; for each scale S
``mixed.py NB S 10 S``, ``S:P:G`` gives switches, ports per switch and gateway routers) or
``neutron`` (:mod:`ovn_northd_py.devtools.gen_neutron`; S is the number of tenants,
``T:N:V:F`` gives tenants, networks per tenant, VMs per network and floating IPs per tenant) or
``ovnk`` (:mod:`ovn_northd_py.devtools.gen_ovnk`, an ovn-kubernetes-like network; S is the number
of nodes, ``N:P:S:Q`` gives nodes, pods per node, services and network policies; default 10 50 10).
For each scale the NB is built once and backed up with ``ovsdb-client backup``.  Then each side in turn
(reference first, then ours; never both at once; but see ``--interleave`` below) gets an NB server on
a copy of that backup and a fresh, empty SB server, and:

1. cold sync: the daemon is started and ``ovn-nbctl --wait=sb sync`` is run at once; the time
   from just before the daemon start to the sync returning.  After ``--settle`` seconds the
   daemon's VmRSS (and VmHWM, the peak) is read from /proc/PID/status.  For ours that is the
   Python process itself.
2. change latency: for each change kind, ``--warmup`` untimed rounds then ``--rounds`` timed
   ones; each round runs the kind's ``setup`` (untimed), its ``change`` (timed: the wall time of
   one ``ovn-nbctl --wait=sb`` transaction, process start included) and its ``undo`` (timed too,
   reported in the JSON only).  p50/p90/max per kind.  Beside the wall time, the daemon's own part:
   the ``ovn-nbctl --print-wait-time`` figure "ovn-northd completion" (NB_Global sb_cfg_timestamp,
   written by the daemon once the SB has committed that nb_cfg, minus nbctl's clock before its
   commit), p50/p90 per kind ("northd p50 ms"); its "delay before processing" (nb_cfg_timestamp)
   is in the JSON only (``northd_delay``).  A figure whose timestamp the daemon did not write is left out.
3. the SB database file's size right after the cold sync and at the end of the changes, each raw
   and after ``ovs-appctl -t SB.ctl ovsdb-server/compact`` (which also compacts the file the
   following rounds grow; "SB db MB ..." rows, ``sb_db_*`` bytes in the JSON).
   ``--nbctl-daemon`` makes every change of a side (after its cold sync) through an ovn-nbctl
   daemon of that side (``ovn-nbctl --detach``, OVN_NB_DAEMON; stopped with the side), which
   keeps a replica of the NB as ovn-kubernetes' libovsdb client does; one-shot ``ovn-nbctl``
   instead fetches most of the NB for every command (150-250 ms of a 100-node ovn-k NB).  The
   daemon's stdout is not ours, so its "northd" figures are NB_Global's timestamps read back
   through it, minus the wall clock when the client started.
4. ours only: the engine counters of its Prometheus endpoint (``--metrics-address``) are read
   after the cold sync and around every change kind; the per-node deltas show whether changes
   were handled incrementally (the northd node's ``recompute`` count must not grow).

``--interleave`` (ABBA) takes out the machine's load drift (10-30% over minutes on a shared machine,
which biases the p50 ratio of two sides measured minutes apart): each side is started and
cold-synced in turn as above (steps 1 and 3's cold figures unchanged), and stays up; then for each
change kind, each side's ``prepare``, and each round (warm-up ones too) is run on one side then
the other, each with its own setup, change and undo as above: reference then ours in the first
round, ours then reference in the second, and so on (``round_order``: each side goes first in
half the rounds).  Ours' engine counters are still read around each change kind (its deltas are its
own: the other side's transactions go to the other side's servers).  The idle side's daemons
(northd, servers, nbctl daemon) keep running meanwhile; idle, they use next to no CPU.  The
results have the same shape, with ``"interleaved": true`` in the JSON and a note in the table's
header.  A side that fails is stopped and the other goes on.

``--gap MS`` pauses before each timed change (after its setup), so that neither side's change
starts while a daemon is still busy with the work that follows its previous reply (ours: the engine
run its SB write's echo triggers, under a millisecond for a small change): in ``--interleave``
each change would otherwise pay for the other side's, in the default order for its own undo's.

Change kinds are rows of ``CHANGE_KINDS`` (name, prepare, setup, change, undo); command words
are ``str.format`` templates with ``{i}`` (round number), ``{port}``, ``{mac}``, ``{ip}``,
``{sw}`` (an existing tenant switch), ``{lr}`` (its router) and ``{gw}`` (a gateway router).

ovn-heater's shapes (``--workload ovnk``; github ovn-org/ovn-heater, ovn-tester/tests/density_heavy.py
and cluster_density.py), each a change kind whose rounds accumulate as ovn-heater's iterations do:

- density-heavy: ``--scales N:45`` or more pods per node and ``--changes density-pod-svc``; a round
  is one transaction: 2 pods (ovn-heater's default ``pods_vip_ratio``/``batch``) on the first
  node's switch, in the cluster-wide port group and namespace ns0's address set, and a service
  whose one backend is the first of them: a new load balancer (as ``svc-add``'s) into the shared
  group.  No undo: pods and services stay.  ovn-heater instead adds the VIP to one load balancer
  of the namespace (provisioned once on every node) and spreads pods over the nodes; we follow
  ovn-kubernetes' one load balancer per service in the shared group.
- cluster-density: ``--changes cluster-density-iter``; a round is one transaction: a new namespace
  (its port group and address set), 10 pods in it (6 short-lived "build" pods and 4 that stay; on
  the first node's switch, also in the cluster-wide port group) and 3 services whose backends are
  the 1st, 3rd and 4th lasting pods (three new load balancers into the shared group); its undo
  (timed, JSON only) is the end of the iteration: the 6 build pods deleted and removed from the
  address set.  ovn-heater adds the 3 VIPs to its cluster-wide load balancers instead, creates the
  pods and the VIPs in several transactions, and pings the pods in between (no ovn-controller here).
"""

from __future__ import annotations

import argparse
import compileall
import json
import math
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from prometheus_client.parser import text_string_to_metric_families

import ovn_northd_py
from ovn_northd_py.devtools.gen_neutron import build_neutron_nb, neutron_names
from ovn_northd_py.devtools.gen_ovnk import (
    Node,
    build_ovnk_nb,
    node_commands,
    node_delete_commands,
    ovnk_names,
)
from ovn_northd_py.devtools.servers import OurNorthd, OvsdbServer, ReferenceNorthd
from ovn_northd_py.devtools.tools import HOST, Tools, ToolsUnavailable, tools_for
from ovn_northd_py.flows.chassis_features import OTHER_CONFIG_KEYS
from ovn_northd_py.parity.harness import (
    HarnessError,
    NbSource,
    build_seed_nb,
    process_gone,
    reference_available,
    stop_process,
    tools_workdir,
    workload,
)
from ovn_northd_py.release import DEFAULT_RELEASE, RELEASES, Release

Command = tuple[str, ...]
Commands = tuple[Command, ...]
# A kind's commands: fixed templates, or made per round from the round's template values.
CommandsOf = Commands | Callable[[dict[str, str]], Commands]
NODE_RUNS = "ovn_northd_py_engine_node_runs"
BENCH_NODE_BASE = 900  # node-add / node-del: nodes node901, node902, ... (beyond any generated scale)
ENGINE_RUNS = "ovn_northd_py_engine_runs"
PASSTHROUGH_WRITES = "ovn_northd_py_passthrough_writes"  # (changes written before the engine ran)
T = TypeVar("T")
P = ParamSpec("P")


# --------------------------------------------------------------------------- change kinds


@dataclass(frozen=True, slots=True)
class ChangeKind:
    """One kind of NB change.  Each of prepare/setup/change/undo is one nbctl transaction."""

    name: str
    change: CommandsOf  # timed
    undo: CommandsOf = ()  # after each round (timed, JSON only)
    setup: CommandsOf = ()  # before each round (untimed)
    prepare: CommandsOf = ()  # once per side, before the first round (untimed)


_VIF: Commands = (
    ("lsp-add", "{sw}", "{port}"),
    ("lsp-set-addresses", "{port}", "{mac} {ip}"),
    ("lsp-set-port-security", "{port}", "{mac} {ip}"),
)
_VIF_DEL: Commands = (("lsp-del", "{port}"),)
_ACL_MATCH = "ip4.src == 10.251.{i}.1 && tcp.dst == 22"

# ovn-kubernetes' most frequent changes (``--workload ovnk``): services are load balancers inserted into the
# shared group (on every node switch and gateway router), pods join the cluster-wide port group.
_SVC_VIPS = 'vips:"172.30.{i}.1:80"="10.128.0.5:8080,10.128.1.5:8080"'
_SVC_ADD: Commands = (
    ("--id=@lb", "create", "Load_Balancer", "name=bench-svc{i}", "protocol=tcp", _SVC_VIPS,
     "options:event=false", "options:reject=true", "options:skip_snat=false"),
    ("add", "Load_Balancer_Group", "{lb_group}", "load_balancer", "@lb"),
)
# A service deleted as ovn-kubernetes does it (services.DeleteLBs): the Load_Balancer row destroyed,
# nothing else; Load_Balancer_Group.load_balancer is a weak reference, so the same transaction
# takes it out of the shared group.  (``lb-del`` does the same in more work: it looks the load
# balancer up in every switch and router first.)
_SVC_DEL: Commands = (("destroy", "Load_Balancer", "bench-svc{i}"),)
_POD_ADD: Commands = (
    ("--id=@p", "create", "Logical_Switch_Port", "name={port}", 'addresses="{mac} {ip}"',
     'port_security="{mac} {ip}"', "external_ids:pod=true"),
    ("add", "Logical_Switch", "{sw}", "ports", "@p"),
    ("add", "Port_Group", "{cluster_pg}", "ports", "@p"),
)
_NETPOL_ADD: Commands = (
    ("pg-add", "bench-np{i}", "{pod}"),
    ("acl-add", "bench-np{i}", "to-lport", "1001", "outport == @bench-np{i} && ip4.src == ${ns_as}",
     "allow-related"),
    ("acl-add", "bench-np{i}", "from-lport", "1001", "inport == @bench-np{i} && ip4.dst == ${ns_as}",
     "allow-related"),
)
_ANCHOR: Commands = (("--may-exist", "lsp-add", "{sw}", "{pod}"), ("lsp-set-addresses", "{pod}", "0a:58:0a:80:00:fe 10.128.0.254"))
_OVNK_KINDS: tuple[ChangeKind, ...] = (
    ChangeKind("svc-add", change=_SVC_ADD, undo=_SVC_DEL),
    ChangeKind("svc-del", setup=_SVC_ADD, change=_SVC_DEL),
    ChangeKind(
        "svc-backends",
        prepare=tuple((*c[:3], "name=bench-svc-upd", *c[4:]) if c[0] == "--id=@lb" else c for c in _SVC_ADD),
        change=(("set", "Load_Balancer", "bench-svc-upd",
                 'vips:"172.30.0.1:80"="10.128.0.{i}:8080,10.128.1.5:8080"'),),
    ),
    ChangeKind("pod-add", change=_POD_ADD, undo=_VIF_DEL),
    ChangeKind("pod-del", setup=_POD_ADD, change=_VIF_DEL),
    ChangeKind("netpol-add", prepare=_ANCHOR, change=_NETPOL_ADD, undo=(("pg-del", "bench-np{i}"),)),
    ChangeKind("netpol-del", prepare=_ANCHOR, setup=_NETPOL_ADD, change=(("pg-del", "bench-np{i}"),)),
    ChangeKind(
        "ns-as-update",
        change=(("add", "Address_Set", "{ns_as}", "addresses", "10.129.{i}.7"),),
        undo=(("remove", "Address_Set", "{ns_as}", "addresses", "10.129.{i}.7"),),
    ),
    ChangeKind(
        "egress-reroute",
        change=(("lr-policy-add", "{lr}", "1500", "ip4.src == 10.128.0.{i}", "reroute", "100.64.0.4"),),
        undo=(("lr-policy-del", "{lr}", "1500", "ip4.src == 10.128.0.{i}"),),
    ),
)

def _bench_node(params: dict[str, str]) -> Node:
    return Node(BENCH_NODE_BASE + int(params["i"]))


def _node_add(params: dict[str, str]) -> Commands:
    """A node joining: its topology (gen_ovnk.node_commands) and the shared load-balancer groups on its
    switch and gateway router, so every service's flows reach it (one transaction)."""
    n = _bench_node(params)
    cmds = [tuple(c) for c in node_commands(n)]
    cmds += [("add", "logical_switch", n.name, "load_balancer_group", params["lbg_cluster"], params["lbg_switch"]),
             ("add", "logical_router", n.gr, "load_balancer_group", params["lbg_cluster"], params["lbg_router"])]
    return tuple(cmds)


def _node_del(params: dict[str, str]) -> Commands:
    return tuple(tuple(c) for c in node_delete_commands(_bench_node(params)))


_OVNK_KINDS += (
    ChangeKind("node-add", change=_node_add, undo=_node_del),
    ChangeKind("node-del", setup=_node_add, change=_node_del),
)


def _pod_mac_ip(n: int, net: int) -> tuple[str, str]:
    """A benchmark pod's MAC and IPv4 (10.NET.x.y) from its serial number ``n``."""
    return f"0a:58:{net:02x}:{n // 65536 % 256:02x}:{n // 256 % 256:02x}:{n % 256:02x}", f"10.{net}.{n // 256 % 256}.{n % 256}"


def _pods(params: dict[str, str], names: Sequence[str], ips: Sequence[str], macs: Sequence[str],
          port_groups: Sequence[str] = ()) -> list[Command]:
    """Pods as ovn-kubernetes makes them: LSPs on the node switch, in the cluster-wide port group (and
    ``port_groups``, by @id), their IPs in the namespace's address set."""
    cmds: list[Command] = []
    refs = [f"@p{k}" for k in range(len(names))]
    for ref, name, ip, mac in zip(refs, names, ips, macs, strict=True):
        cmds.append(("--id=" + ref, "create", "Logical_Switch_Port", f"name={name}", f'addresses="{mac} {ip}"',
                     f'port_security="{mac} {ip}"', "external_ids:pod=true"))
    cmds += [("add", "Logical_Switch", params["sw"], "ports", *refs),
             ("add", "Port_Group", params["cluster_pg"], "ports", *refs)]
    cmds += [("--id=@pg" + pg, "create", "Port_Group", f"name={pg}", f"ports=[{','.join(refs)}]")
             for pg in port_groups]
    return cmds


def _lb(params: dict[str, str], name: str, vip: str, backend: str) -> list[Command]:
    """One service: a load balancer like svc-add's, inserted into the shared group."""
    ref = "@" + name.replace("-", "_")
    return [("--id=" + ref, "create", "Load_Balancer", f"name={name}", "protocol=tcp",
             f'vips:"{vip}:80"="{backend}:8080"', "options:event=false", "options:reject=true",
             "options:skip_snat=false"),
            ("add", "Load_Balancer_Group", params["lb_group"], "load_balancer", ref)]


DENSITY_PODS = 2  # ovn-heater density_heavy's pods_vip_ratio (and batch): 2 pods, one a service backend


def _density_pod_svc(params: dict[str, str]) -> Commands:
    """ovn-heater's density-heavy iteration: 2 pods, the first the backend of a new service."""
    i = int(params["i"])
    macs, ips = zip(*(_pod_mac_ip(i * DENSITY_PODS + k, 253) for k in range(DENSITY_PODS)), strict=True)
    cmds = _pods(params, [f"bench-dp{i}-{k}" for k in range(DENSITY_PODS)], ips, macs)
    cmds.append(("add", "Address_Set", params["ns_as"], "addresses", *ips))
    cmds += _lb(params, f"bench-dsvc{i}", f"172.31.{i // 256 % 256}.{i % 256}", ips[0])
    return tuple(cmds)


CD_BUILD_PODS, CD_PODS = 6, 4  # ovn-heater cluster_density: 6 short-lived "build" pods, 4 that stay


def _cd_pods(i: int) -> tuple[list[str], list[str], list[str]]:
    names = [f"bench-cd{i}-{k}" for k in range(CD_BUILD_PODS + CD_PODS)]
    macs, ips = zip(*(_pod_mac_ip(i * 10 + k, 254) for k in range(CD_BUILD_PODS + CD_PODS)), strict=True)
    return names, list(macs), list(ips)


def _cluster_density_iter(params: dict[str, str]) -> Commands:
    """ovn-heater's cluster-density iteration, one transaction: a namespace (its port group and address
    set), 10 pods in it, 3 services (one backend each: the 1st, 3rd and 4th of the 4 lasting pods)."""
    i = int(params["i"])
    names, macs, ips = _cd_pods(i)
    ns = f"bench_cd{i}"
    cmds = _pods(params, names, ips, macs, port_groups=[ns])
    cmds.append(("create", "Address_Set", f"name={ns}_v4", "addresses=[" + ",".join(f'"{ip}"' for ip in ips) + "]"))
    for j, k in enumerate((0, 2, 3)):
        cmds += _lb(params, f"bench-cd{i}-svc{j}", f"172.{20 + j}.{i // 256 % 256}.{i % 256}", ips[CD_BUILD_PODS + k])
    return tuple(cmds)


def _cluster_density_end(params: dict[str, str]) -> Commands:
    """The end of the iteration: the 6 build pods are deleted (and leave the namespace's address set)."""
    i = int(params["i"])
    names, _, ips = _cd_pods(i)
    return (*(("lsp-del", n) for n in names[:CD_BUILD_PODS]),
            ("remove", "Address_Set", f"bench_cd{i}_v4", "addresses", *ips[:CD_BUILD_PODS]))


_OVNK_KINDS += (
    # Accumulating (no undo), as in ovn-heater: each round's pods and services stay.
    ChangeKind("density-pod-svc", change=_density_pod_svc),
    ChangeKind("cluster-density-iter", change=_cluster_density_iter, undo=_cluster_density_end),
)

CHANGE_KINDS: dict[str, ChangeKind] = {
    k.name: k
    for k in (
        ChangeKind("lsp-add", change=_VIF, undo=_VIF_DEL),
        ChangeKind("lsp-del", setup=_VIF, change=_VIF_DEL),
        ChangeKind(
            "acl-add",
            change=(("acl-add", "{sw}", "to-lport", "500", _ACL_MATCH, "drop"),),
            undo=(("acl-del", "{sw}", "to-lport", "500", _ACL_MATCH),),
        ),
        ChangeKind(
            "lb-add",
            change=(
                ("lb-add", "bench-lb{i}", "60.0.{i}.1:80", "{ip}:8080", "tcp"),
                ("ls-lb-add", "{sw}", "bench-lb{i}"),
            ),
            undo=(("lb-del", "bench-lb{i}"),),
        ),
        ChangeKind(
            "nat-add",
            change=(("lr-nat-add", "{gw}", "dnat_and_snat", "60.1.{i}.1", "{ip}"),),
            undo=(("lr-nat-del", "{gw}", "dnat_and_snat", "60.1.{i}.1"),),
        ),
        ChangeKind(
            "route-add",
            change=(("lr-route-add", "{lr}", "10.252.{i}.0/24", "172.16.0.254"),),
            undo=(("lr-route-del", "{lr}", "10.252.{i}.0/24"),),
        ),
    )
}
CHANGE_KINDS.update({k.name: k for k in _OVNK_KINDS})


MIXED_NAMES = {"sw": "ls1", "lr": "lr1", "gw": "lrgw1"}


def round_params(i: int, names: dict[str, str] | None = None) -> dict[str, str]:
    """Template values of round ``i``; ``names`` (the workload's ``{sw}``, ``{lr}``, ``{gw}``) override."""
    return {
        "i": str(i),
        "port": f"bench-p{i}",
        "mac": f"0a:00:00:00:{i // 256 % 256:02x}:{i % 256:02x}",
        "ip": f"10.250.{i // 256 % 256}.{i % 256}",
        **MIXED_NAMES,
        **(names or {}),
    }


def nbctl_argv(
    remote: str, commands: Commands, params: dict[str, str], timeout: int, tools: Tools = HOST,
    daemon: bool = False,
) -> list[str]:
    """One ``ovn-nbctl --wait=sb`` transaction of ``commands``; ``daemon``: through the nbctl daemon
    named by the environment's OVN_NB_DAEMON (no --db; ``--print-wait-time`` would print in the
    daemon's own stdout, so it is not asked for)."""
    if daemon:
        argv = tools.cmd("ovn-nbctl", f"--timeout={timeout}", "--wait=sb")
    else:
        argv = tools.cmd("ovn-nbctl", f"--db={tools.remote(remote)}", f"--timeout={timeout}", "--wait=sb",
                         "--print-wait-time")
    for n, cmd in enumerate(commands):
        argv += (["--"] if n else []) + [word.format(**params) for word in cmd]
    return argv


# --------------------------------------------------------------------------- measurements


# ``ovn-nbctl --print-wait-time`` (23.03 and 26.03 alike), after the transaction's --wait=sb:
#   Time spent on processing nb_cfg 5:
#   \tovn-northd delay before processing:\t2ms
#   \tovn-northd completion:\t\t\t26ms
# Both are NB_Global timestamps the daemon writes minus nbctl's wall clock just before its commit:
# nb_cfg_timestamp (the daemon started on nb_cfg) and sb_cfg_timestamp (the SB has committed it).
_WAIT_TIME = re.compile(r"ovn-northd (delay before processing|completion):\s*(-?\d+)\s*ms")


def parse_wait_time(stdout: str) -> dict[str, float]:
    """``{"delay": ms, "completion": ms}`` of ``--print-wait-time`` output; a figure is NaN when absent
    or negative (the daemon did not write that timestamp: 0 minus the wall clock)."""
    out = {"delay": math.nan, "completion": math.nan}
    for what, ms in _WAIT_TIME.findall(stdout):
        key = "delay" if what.startswith("delay") else "completion"
        out[key] = float(ms) if int(ms) >= 0 else math.nan
    return out


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return math.nan
    s = sorted(values)
    pos = (len(s) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


@dataclass(slots=True)
class Latency:
    samples_ms: list[float] = field(default_factory=list)

    @property
    def p50(self) -> float:
        return percentile(self.samples_ms, 0.5)

    @property
    def p90(self) -> float:
        return percentile(self.samples_ms, 0.9)

    @property
    def max(self) -> float:
        return max(self.samples_ms) if self.samples_ms else math.nan

    def valid(self) -> Latency:
        """The samples that are numbers (a missing ``--print-wait-time`` figure is NaN)."""
        return Latency([v for v in self.samples_ms if not math.isnan(v)])

    def summary(self) -> dict[str, Any]:
        return {"p50_ms": self.p50, "p90_ms": self.p90, "max_ms": self.max, "samples_ms": self.samples_ms}


def proc_status_mb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024  # kB
    return math.nan


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far (/proc/PID/stat), or NaN."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return math.nan
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def loadavg() -> float:
    return os.getloadavg()[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


Counters = dict[str, float]  # "node/result" or "runs/kind" -> value


def scrape_engine(port: int) -> Counters:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    out: Counters = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == NODE_RUNS + "_total":
                out[f"{sample.labels['node']}/{sample.labels['result']}"] = sample.value
            elif sample.name == ENGINE_RUNS + "_total":
                out[f"engine/{sample.labels['kind']}"] = sample.value
            elif sample.name == PASSTHROUGH_WRITES + "_total":
                out["passthrough/writes"] = sample.value
    return out


def counter_delta(before: Counters, after: Counters) -> Counters:
    return {k: after[k] - before.get(k, 0.0) for k in sorted(after) if after[k] != before.get(k, 0.0)}


def add_chassis(sb_remote: str, n: int) -> None:
    """``n`` chassis in SB, as ``n`` ovn-controllers would announce themselves before the daemon
    starts: ``Chassis`` ``chassis-0000``... (the names the ovn-k-like gateway routers'
    ``options:chassis`` give) with a geneve ``Encap`` and every feature flag, and their
    ``Chassis_Private`` (whose ``nb_cfg`` the daemon reads for NB_Global ``hv_cfg`` on every change)."""
    for start in range(0, n, 50):  # (one argument stays below the kernel's 128 KiB)
        _add_chassis_range(sb_remote, start, min(n, start + 50))


def _add_chassis_range(sb_remote: str, start: int, end: int) -> None:
    features = ["map", [[key, "true"] for key in sorted(OTHER_CONFIG_KEYS.values())]]
    ops: list[dict[str, Any]] = []
    for i in range(start, end):
        name = f"chassis-{i:04d}"
        ops += [
            {"op": "insert", "table": "Encap", "uuid-name": f"e{i}",
             "row": {"type": "geneve", "ip": f"172.16.{i // 250}.{i % 250 + 1}", "chassis_name": name,
                     "options": ["map", [["csum", "true"]]]}},
            {"op": "insert", "table": "Chassis", "uuid-name": f"c{i}",
             "row": {"name": name, "hostname": name, "encaps": ["named-uuid", f"e{i}"], "other_config": features}},
            {"op": "insert", "table": "Chassis_Private",
             "row": {"name": name, "chassis": ["named-uuid", f"c{i}"], "nb_cfg": 0}},
        ]
    proc = subprocess.run(["ovsdb-client", "--timeout=300", "transact", sb_remote, json.dumps(["OVN_Southbound", *ops])],
                          capture_output=True, text=True, check=True)
    if '"error"' in proc.stdout:
        raise RuntimeError(f"adding chassis: {proc.stdout[:500]}")


def count_rows(sb_remote: str, table: str) -> int:
    txn = json.dumps(["OVN_Southbound", {"op": "select", "table": table, "where": [], "columns": ["_uuid"]}])
    proc = subprocess.run(
        ["ovsdb-client", "--timeout=300", "transact", sb_remote, txn],
        capture_output=True,
        text=True,
        check=True,
    )
    return len(json.loads(proc.stdout)[0]["rows"])


# --------------------------------------------------------------------------- one side


@dataclass(slots=True)
class SideResult:
    label: str
    cold_sync_s: float = math.nan
    # The daemon's CPU seconds at the end of the cold sync (less noisy than the wall time on a
    # shared machine; the servers' CPU is not in it)
    cold_sync_cpu_s: float = math.nan
    rss_mb: float = math.nan  # VmRSS after settling
    hwm_mb: float = math.nan  # VmHWM (peak RSS) after settling
    rss_after_changes_mb: float = math.nan
    sb_logical_flows: int = 0
    sb_port_bindings: int = 0
    # SB database file bytes: right after the cold sync (raw, then after ovsdb-server/compact) and
    # at the end of the change rounds (same two)
    sb_db_cold_raw: int = 0
    sb_db_cold: int = 0
    sb_db_end_raw: int = 0
    sb_db_end: int = 0
    changes: dict[str, Latency] = field(default_factory=dict)
    # the daemon's own part of each timed change: ``--print-wait-time``'s "ovn-northd completion"
    # (and, JSON only, its "delay before processing")
    northd: dict[str, Latency] = field(default_factory=dict)
    northd_delay: dict[str, Latency] = field(default_factory=dict)
    undos: dict[str, Latency] = field(default_factory=dict)
    engine_cold: Counters = field(default_factory=dict)  # ours: counters after the cold sync
    engine_deltas: dict[str, Counters] = field(default_factory=dict)  # ours: per change kind
    txns: dict[str, int] = field(default_factory=dict)  # nbctl transactions per change kind, warm-up included
    loadavg: list[float] = field(default_factory=list)  # 1-min load average at start and end
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["changes"] = {k: v.summary() for k, v in self.changes.items()}
        d["undos"] = {k: v.summary() for k, v in self.undos.items()}
        d["northd"] = {k: v.summary() for k, v in self.northd.items()}
        d["northd_delay"] = {k: v.summary() for k, v in self.northd_delay.items()}
        return d


@dataclass(slots=True)
class Side:
    """A daemon plus its own NB (copy of the seed) and SB servers."""

    label: str
    workdir: Path
    seed: Path
    start_daemon: Callable[[Side], int]  # starts the daemon, returns its pid
    metrics_port: int | None = None
    nb: OvsdbServer = field(init=False)
    sb: OvsdbServer = field(init=False)
    pid: int | None = None
    stop_daemon: Callable[[], None] | None = None
    tools: Tools = HOST  # where the servers, the daemon (reference) and ovn-nbctl run
    release: Release = DEFAULT_RELEASE
    # ``--nbctl-daemon``: the ovn-nbctl daemon of this side (its control socket as the tools see
    # it, and its pid), started after the cold sync, stopped with the side
    nbctl_socket: str | None = None
    nbctl_pid: int | None = None

    def __post_init__(self) -> None:
        self.nb = OvsdbServer(self.workdir, "nb", self.release.nb_schema, db_file=self.seed, tools=self.tools)
        self.sb = OvsdbServer(self.workdir, "sb", self.release.sb_schema, tools=self.tools)

    def alive(self) -> bool:
        return self.pid is not None and not process_gone(self.pid)

    def start_nbctl_daemon(self) -> None:
        """An ``ovn-nbctl --detach`` daemon on this side's NB (ovn-nbctl's daemon mode: it keeps
        a replica of the NB, as ovn-kubernetes' libovsdb client does, instead of fetching it
        for every command); the change commands then go through it (OVN_NB_DAEMON)."""
        t = self.tools
        ctl, pidfile = self.workdir / "nbctl.ctl", self.workdir / "nbctl.pid"
        subprocess.run(
            t.cmd("ovn-nbctl", f"--db={t.remote(self.nb.remote)}", "--detach", "--no-chdir",
                  f"--pidfile={t.path(pidfile)}", f"--unixctl={t.path(ctl)}",
                  f"--log-file={t.path(self.workdir / 'nbctl.log')}"),
            capture_output=True, text=True, check=True, timeout=120,
        )
        self.nbctl_pid = int(pidfile.read_text().strip())
        self.nbctl_socket = t.path(ctl)

    def nbctl_env(self) -> dict[str, str] | None:
        """The environment of an nbctl client: OVN_NB_DAEMON when the side has an nbctl daemon."""
        return None if self.nbctl_socket is None else {**os.environ, "OVN_NB_DAEMON": self.nbctl_socket}

    def stop(self) -> None:
        if self.nbctl_pid is not None:
            stop_process(self.nbctl_pid)
            self.nbctl_pid = self.nbctl_socket = None
        try:
            if self.stop_daemon is not None:
                self.stop_daemon()
            elif self.pid is not None:
                stop_process(self.pid)
        finally:
            for server in (self.sb, self.nb):
                if server.pid is not None:
                    stop_process(server.pid)
                    server.pid = None


def start_reference(side: Side) -> int:
    northd = ReferenceNorthd(side.workdir, side.nb.remote, side.sb.remote, tools=side.tools)
    northd.start()
    assert northd.pid is not None
    return northd.pid


def start_ours(side: Side) -> int:
    extra = [f"--metrics-address=127.0.0.1:{side.metrics_port}"] if side.metrics_port else []
    northd = OurNorthd(side.workdir, side.nb.remote, side.sb.remote, extra_args=extra)
    northd.start()
    side.stop_daemon = northd.stop
    assert northd.pid is not None
    return northd.pid


def wait_sync(side: Side, timeout: float) -> None:
    """``ovn-nbctl --wait=sb sync``, failing fast if the daemon dies meanwhile."""
    t = side.tools
    argv = t.cmd("ovn-nbctl", f"--db={t.remote(side.nb.remote)}", f"--timeout={math.ceil(timeout)}", "--wait=sb",
                 "sync")
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout + 5
    try:
        while proc.poll() is None:
            if not side.alive():
                raise HarnessError(
                    f"{side.label} daemon exited during the cold sync (logs in {side.workdir})"
                )
            if time.monotonic() > deadline:
                raise HarnessError(f"{side.label}: not synced within {timeout:.0f}s")
            time.sleep(0.002)
        if proc.returncode:
            raise HarnessError(f"ovn-nbctl sync failed: {proc.stderr.read() if proc.stderr else ''}")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def timed_nbctl(side: Side, commands: CommandsOf, params: dict[str, str], timeout: int) -> float:
    """Milliseconds for one ``ovn-nbctl --wait=sb`` transaction."""
    return timed_nbctl_wait(side, commands, params, timeout)[0]


def timed_nbctl_wait(
    side: Side, commands: CommandsOf, params: dict[str, str], timeout: int
) -> tuple[float, dict[str, float]]:
    """Milliseconds for one ``ovn-nbctl --wait=sb`` transaction, and its ``--print-wait-time`` figures."""
    if callable(commands):
        commands = commands(params)
    if not commands:
        return math.nan, parse_wait_time("")
    env = side.nbctl_env()
    argv = nbctl_argv(side.nb.remote, commands, params, timeout, side.tools, daemon=env is not None)
    wall0 = time.time()
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
    ms = (time.perf_counter() - t0) * 1000
    if proc.returncode:
        raise HarnessError(f"{side.label}: {' '.join(argv[argv.index('--wait=sb'):])} failed: {proc.stderr.strip()[:500]}")
    if not side.alive():
        raise HarnessError(f"{side.label} daemon exited (logs in {side.workdir})")
    return ms, parse_wait_time(proc.stdout) if env is None else daemon_wait_time(side, env, wall0)


def daemon_wait_time(side: Side, env: dict[str, str], wall0: float) -> dict[str, float]:
    """``--print-wait-time``'s figures for a change made through the nbctl daemon (whose stdout is
    not ours): NB_Global's nb_cfg_timestamp / sb_cfg_timestamp, read back through the daemon,
    minus the wall clock when the client started (a millisecond or two before the daemon's
    commit, where one-shot nbctl takes its clock); NaN for a timestamp older than that."""
    argv = side.tools.cmd("ovn-nbctl", "get", "NB_Global", ".", "nb_cfg_timestamp", "sb_cfg_timestamp")
    proc = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
    delay, completion = (float(v) - wall0 * 1000 for v in proc.stdout.split())
    return {"delay": delay if delay >= 0 else math.nan, "completion": completion if completion >= 0 else math.nan}


def sb_db_bytes(side: Side) -> tuple[int, int]:
    """The SB database file's size, raw and after ``ovsdb-server/compact`` (which rewrites the file
    as one snapshot of the live data; synchronous for a standalone database)."""
    raw = side.sb.db_path.stat().st_size
    t = side.tools
    subprocess.run(t.cmd("ovs-appctl", "-t", t.path(side.sb.ctl), "ovsdb-server/compact"),
                   capture_output=True, text=True, check=True, timeout=600)
    return raw, side.sb.db_path.stat().st_size


@dataclass(slots=True)
class RunConfig:
    kinds: list[ChangeKind]
    rounds: int
    warmup: int
    settle: float
    sync_timeout: float
    change_timeout: int
    names: dict[str, str] = field(default_factory=dict)  # the workload's {sw}, {lr}, {gw}
    nbctl_daemon: bool = False  # changes through an ovn-nbctl daemon per side (--nbctl-daemon)
    chassis: int = 0  # SB chassis added before the daemon starts (--chassis)
    gap_ms: float = 0.0  # pause before each timed change (--gap)
    prefault_mb: int = 0  # memory touched before each side starts (--prefault-mb)


def lb_group_uuids(side: Side) -> dict[str, str]:
    """The ovn-k-like network's three load-balancer groups' uuids (``node-add`` attaches them)."""
    out: dict[str, str] = {}
    for key, name in (("lbg_cluster", "clusterLBGroup"), ("lbg_switch", "clusterSwitchLBGroup"),
                      ("lbg_router", "clusterRouterLBGroup")):
        argv = side.tools.cmd("ovn-nbctl", f"--db={side.tools.remote(side.nb.remote)}", "--bare", "--columns=_uuid",
                              "find", "load_balancer_group", f"name={name}")
        out[key] = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()
    return out


def run_side(side: Side, cfg: RunConfig) -> SideResult:
    """One side alone, from its servers' start to its teardown (the default: no ``--interleave``)."""
    with tools_workdir(side.tools, side.workdir):
        return _run_side(side, cfg)


# A side's failure: recorded in its result, the side stopped (the other side goes on)
SIDE_ERRORS = (HarnessError, OSError, subprocess.SubprocessError)


@dataclass(slots=True)
class KindSamples:
    """One change kind's samples on one side: the change's and the undo's wall times, the daemon's
    own part ("ovn-northd completion", "delay before processing"), and the rounds run (warm-up too)."""

    lat: Latency = field(default_factory=Latency)
    undo: Latency = field(default_factory=Latency)
    own: Latency = field(default_factory=Latency)
    delay: Latency = field(default_factory=Latency)
    n: int = 0


@dataclass(slots=True)
class SideRun:
    """A side under measurement: its result so far, its rounds' template names (with its own NB's
    load-balancer group uuids), ours' engine counters at their last read, the current kind's samples."""

    side: Side
    res: SideResult
    names: dict[str, str] = field(default_factory=dict)
    counters: Counters = field(default_factory=dict)
    samples: KindSamples = field(default_factory=KindSamples)
    up: bool = True  # until stop_side

    @property
    def live(self) -> bool:
        """Still measured: not stopped, no error."""
        return self.up and self.res.error is None


# A child that touches this much memory page by page, then exits (prefault_memory).
_PREFAULT = """
import sys
chunks = [bytearray(1 << 20) for _ in range(int(sys.argv[1]))]
for c in chunks:
    c[::4096] = b"\\1" * (len(c) // 4096)
"""


def prefault_memory(mb: int) -> None:
    """Touch ``mb`` MiB in a child process that then exits.  In a virtual machine whose memory the
    host backs on first touch (a microVM), a page the guest never used costs a trip to the host:
    a side whose cold sync runs while the other side's daemons hold the pages already backed (an
    ``--interleave`` run), or that runs first, on a fresh machine, allocates into such pages and
    was measured up to 1.8x slower (its CPU time too).  Touched once, the pages stay backed after
    the child exits, so each side's cold sync finds backed free memory."""
    if mb > 0:
        subprocess.run([sys.executable, "-c", _PREFAULT, str(mb)], check=True)


def start_side(run: SideRun, cfg: RunConfig) -> None:
    """Servers (and ``--chassis``), the daemon and its cold sync; then RSS, the SB's rows and size and
    ours' engine counters; last the side's ovn-nbctl daemon (``--nbctl-daemon``).  First, memory
    touched (``--prefault-mb``, :func:`prefault_memory`)."""
    side, res = run.side, run.res
    prefault_memory(cfg.prefault_mb)
    side.nb.start()
    side.sb.start()
    if cfg.chassis:
        add_chassis(side.sb.remote, cfg.chassis)
    t0 = time.monotonic()
    side.pid = side.start_daemon(side)
    wait_sync(side, cfg.sync_timeout)
    res.cold_sync_s = time.monotonic() - t0
    res.cold_sync_cpu_s = proc_cpu_s(side.pid)
    print(f"  {side.label:<9} cold sync {res.cold_sync_s:8.3f} s (daemon CPU {res.cold_sync_cpu_s:.2f} s)", flush=True)
    time.sleep(cfg.settle)
    res.rss_mb = proc_status_mb(side.pid, "VmRSS")
    res.hwm_mb = proc_status_mb(side.pid, "VmHWM")
    res.sb_logical_flows = count_rows(side.sb.remote, "Logical_Flow")
    res.sb_port_bindings = count_rows(side.sb.remote, "Port_Binding")
    res.sb_db_cold_raw, res.sb_db_cold = sb_db_bytes(side)
    run.counters = res.engine_cold = scrape_engine(side.metrics_port) if side.metrics_port else {}
    run.names = dict(cfg.names, **lb_group_uuids(side)) if "lb_group" in cfg.names else cfg.names
    if cfg.nbctl_daemon:
        side.start_nbctl_daemon()


def prepare_kind(run: SideRun, kind: ChangeKind, cfg: RunConfig) -> None:
    """Before ``kind``'s first round: its ``prepare`` transaction (untimed), fresh samples."""
    run.samples = KindSamples()
    if kind.prepare:
        timed_nbctl(run.side, kind.prepare, round_params(0, run.names), cfg.change_timeout)
    per_round = sum(1 for c in (kind.setup, kind.change, kind.undo) if c)
    run.res.txns[kind.name] = bool(kind.prepare) + per_round * (cfg.warmup + cfg.rounds)


def run_round(run: SideRun, kind: ChangeKind, r: int, cfg: RunConfig) -> None:
    """Round ``r`` (from 0; the first ``cfg.warmup`` are not recorded) of ``kind``: its setup
    (untimed), its change and its undo."""
    side, s = run.side, run.samples
    params = round_params(r + 1, run.names)
    if kind.setup:
        timed_nbctl(side, kind.setup, params, cfg.change_timeout)
    if cfg.gap_ms:
        time.sleep(cfg.gap_ms / 1000)  # (what the daemons still do after the last reply: done)
    ms, wait = timed_nbctl_wait(side, kind.change, params, cfg.change_timeout)
    undo_ms = timed_nbctl(side, kind.undo, params, cfg.change_timeout) if kind.undo else None
    if r >= cfg.warmup:
        s.lat.samples_ms.append(ms)
        s.own.samples_ms.append(wait["completion"])
        s.delay.samples_ms.append(wait["delay"])
        if undo_ms is not None:
            s.undo.samples_ms.append(undo_ms)
    s.n += 1


def finish_kind(run: SideRun, kind: ChangeKind, cfg: RunConfig) -> None:
    """``kind``'s samples into the side's result (ours: the engine counters' deltas since the last
    read), and its line printed."""
    side, res, s = run.side, run.res, run.samples
    res.changes[kind.name] = s.lat
    res.northd[kind.name] = s.own.valid()
    res.northd_delay[kind.name] = s.delay.valid()
    if s.undo.samples_ms:
        res.undos[kind.name] = s.undo
    if side.metrics_port:
        after = scrape_engine(side.metrics_port)
        res.engine_deltas[kind.name] = counter_delta(run.counters, after)
        run.counters = after
    print(
        f"  {side.label:<9} {kind.name:<10} p50 {s.lat.p50:8.1f} ms  p90 {s.lat.p90:8.1f} ms  "
        f"max {s.lat.max:8.1f} ms; northd p50 {res.northd[kind.name].p50:8.1f} ms  "
        f"({s.n} rounds, {cfg.warmup} warm-up)",
        flush=True,
    )


def finish_side(run: SideRun) -> None:
    """After the last change kind: the daemon's RSS and the SB's size, printed."""
    side, res = run.side, run.res
    res.rss_after_changes_mb = proc_status_mb(side.pid, "VmRSS") if side.pid is not None else math.nan
    res.sb_db_end_raw, res.sb_db_end = sb_db_bytes(side)
    print(f"  {side.label:<9} SB db MB: cold {res.sb_db_cold_raw / 1e6:.2f} raw, {res.sb_db_cold / 1e6:.2f} "
          f"compacted; end {res.sb_db_end_raw / 1e6:.2f} raw, {res.sb_db_end / 1e6:.2f} compacted", flush=True)


def fail_side(run: SideRun, exc: BaseException) -> None:
    run.res.error = str(exc)
    print(f"  {run.side.label}: ERROR {exc}", flush=True)


def stop_side(run: SideRun) -> None:
    """The side's daemons and servers stopped (once), and the load average at its end."""
    if run.up:
        run.up = False
        run.side.stop()
        run.res.loadavg.append(loadavg())


def _run_side(side: Side, cfg: RunConfig) -> SideResult:
    run = SideRun(side, SideResult(side.label, loadavg=[loadavg()]))
    try:
        start_side(run, cfg)
        for kind in cfg.kinds:
            prepare_kind(run, kind, cfg)
            for r in range(cfg.warmup + cfg.rounds):
                run_round(run, kind, r, cfg)
            finish_kind(run, kind, cfg)
        finish_side(run)
    except SIDE_ERRORS as exc:
        fail_side(run, exc)
    finally:
        stop_side(run)
    return run.res


# --------------------------------------------------------------------------- --interleave


def round_order(runs: Sequence[T], r: int) -> list[T]:
    """``--interleave``: the sides' order in round ``r`` (warm-up rounds counted): as given in even
    rounds, reversed in odd ones (A B, B A, A B, ...), so that each side goes first, right after the
    other side's undo, in half the rounds."""
    return list(runs) if r % 2 == 0 else list(reversed(runs))


def run_sides_interleaved(sides: Sequence[Side], cfg: RunConfig) -> dict[str, SideResult]:
    """``--interleave``: every side started and cold-synced in turn (each then stays up, idle while
    the others work), then for each change kind every side's prepare, and each round on every side
    in ``round_order``.  A side that fails is stopped; the others go on."""
    runs = [SideRun(side, SideResult(side.label)) for side in sides]
    with ExitStack() as stack:  # at the end, each side stopped (the last first), then its workdir left
        for run in runs:
            stack.enter_context(tools_workdir(run.side.tools, run.side.workdir))
            stack.callback(stop_side, run)
            run.res.loadavg.append(loadavg())
            _step(run, start_side, cfg)
        for kind in cfg.kinds:
            _interleave_kind(runs, kind, cfg)
        for run in runs:
            _step(run, finish_side)
    return {run.side.label: run.res for run in runs}


def _interleave_kind(runs: Sequence[SideRun], kind: ChangeKind, cfg: RunConfig) -> None:
    for run in runs:
        _step(run, prepare_kind, kind, cfg)
    for r in range(cfg.warmup + cfg.rounds):
        for run in round_order(runs, r):
            _step(run, run_round, kind, r, cfg)
    for run in runs:
        _step(run, finish_kind, kind, cfg)


def _step(run: SideRun, fn: Callable[Concatenate[SideRun, P], None], *args: P.args, **kwargs: P.kwargs) -> None:
    """``fn(run, ...)`` if the side is still live; its failure is the side's (recorded, printed, the
    side stopped)."""
    if not run.live:
        return
    try:
        fn(run, *args, **kwargs)
    except SIDE_ERRORS as exc:
        fail_side(run, exc)
        stop_side(run)


# --------------------------------------------------------------------------- scales and report


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    """An NB builder for ``--workload``: its scale syntax, the NB source of a scale and the rows
    (``{sw}``, ``{lr}``, ``{gw}``) the change kinds touch."""

    usage: str  # scale syntax, for errors
    parse: Callable[[list[int]], tuple[int, ...] | None]  # scale numbers -> builder arguments
    source: Callable[[tuple[int, ...]], NbSource]
    names: Callable[[], dict[str, str]]


def _mixed_args(parts: list[int]) -> tuple[int, ...] | None:
    if len(parts) == 1:
        return (parts[0], 10, parts[0])
    return tuple(parts) if len(parts) == 3 else None


def _neutron_args(parts: list[int]) -> tuple[int, ...] | None:
    return tuple(parts) + (2, 5, 2)[len(parts) - 1:] if 1 <= len(parts) <= 4 else None


def _neutron_source(args: tuple[int, ...]) -> NbSource:
    def build(nb_remote: str) -> None:
        build_neutron_nb(nb_remote, *args)

    build.__name__ = f"gen_neutron {' '.join(map(str, args))}"
    return build


def _ovnk_args(parts: list[int]) -> tuple[int, ...] | None:
    return tuple(parts) + (10, 50, 10)[len(parts) - 1:] if 1 <= len(parts) <= 4 else None


def _ovnk_source(args: tuple[int, ...]) -> NbSource:
    def build(nb_remote: str) -> None:
        build_ovnk_nb(nb_remote, *args)

    build.__name__ = f"gen_ovnk {' '.join(map(str, args))}"
    return build


WORKLOADS: dict[str, WorkloadSpec] = {
    "mixed": WorkloadSpec(
        "S or S:PORTS:GATEWAYS", _mixed_args, lambda a: workload("mixed", *a), lambda: dict(MIXED_NAMES)
    ),
    "neutron": WorkloadSpec("TENANTS[:NETS[:VMS[:FIPS]]]", _neutron_args, _neutron_source, neutron_names),
    "ovnk": WorkloadSpec("NODES[:PODS[:SERVICES[:POLICIES]]]", _ovnk_args, _ovnk_source, ovnk_names),
}


@dataclass(frozen=True, slots=True)
class Scale:
    workload: str
    args: tuple[int, ...]  # the workload builder's arguments

    @classmethod
    def parse(cls, text: str, workload_name: str = "mixed") -> Scale:
        spec = WORKLOADS[workload_name]
        try:
            args = spec.parse([int(p) for p in text.split(":")])
        except ValueError:
            args = None
        if args is None:
            raise argparse.ArgumentTypeError(f"bad {workload_name} scale {text!r}: {spec.usage}")
        return cls(workload_name, args)

    def __str__(self) -> str:
        return " ".join(map(str, self.args))

    @property
    def slug(self) -> str:
        return "-".join([self.workload, *map(str, self.args)])

    def source(self) -> NbSource:
        return WORKLOADS[self.workload].source(self.args)


def seed_for(
    scale: Scale, workdir: Path, seed_dir: Path | None, release: Release = DEFAULT_RELEASE
) -> tuple[Path, float | None]:
    """The NB backup for ``scale`` (reused from ``seed_dir`` when present); build seconds or None."""
    suffix = "" if release is DEFAULT_RELEASE else f"-{release.name}"
    cached = seed_dir / f"{scale.slug}{suffix}.db" if seed_dir is not None else None
    if cached is not None and cached.exists():
        return cached, None
    t0 = time.monotonic()
    seed = build_seed_nb(scale.source(), workdir / "seed", release.nb_schema)
    secs = time.monotonic() - t0
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(seed, cached)
    return seed, secs


def ratio(ours: float, ref: float) -> float:
    return ours / ref if ref and not (math.isnan(ours) or math.isnan(ref)) else math.nan


def rows_for(
    ours: SideResult, ref: SideResult, kinds: list[ChangeKind]
) -> list[tuple[str, float, float, str]]:
    """(label, ours, reference, number format)."""
    rows = [
        ("cold sync s", ours.cold_sync_s, ref.cold_sync_s, ".3f"),
        ("cold sync CPU s", ours.cold_sync_cpu_s, ref.cold_sync_cpu_s, ".2f"),
        ("RSS MB (settled)", ours.rss_mb, ref.rss_mb, ".1f"),
        ("RSS MB peak (VmHWM)", ours.hwm_mb, ref.hwm_mb, ".1f"),
        ("RSS MB after changes", ours.rss_after_changes_mb, ref.rss_after_changes_mb, ".1f"),
        ("SB Logical_Flow rows", float(ours.sb_logical_flows), float(ref.sb_logical_flows), ".0f"),
        ("SB Port_Binding rows", float(ours.sb_port_bindings), float(ref.sb_port_bindings), ".0f"),
        ("SB db MB cold, raw", ours.sb_db_cold_raw / 1e6, ref.sb_db_cold_raw / 1e6, ".2f"),
        ("SB db MB cold, compact", ours.sb_db_cold / 1e6, ref.sb_db_cold / 1e6, ".2f"),
        ("SB db MB end, raw", ours.sb_db_end_raw / 1e6, ref.sb_db_end_raw / 1e6, ".2f"),
        ("SB db MB end, compact", ours.sb_db_end / 1e6, ref.sb_db_end / 1e6, ".2f"),
    ]
    for kind in kinds:
        o, r = ours.changes.get(kind.name, Latency()), ref.changes.get(kind.name, Latency())
        on, rn = ours.northd.get(kind.name, Latency()), ref.northd.get(kind.name, Latency())
        rows += [
            (f"{kind.name} p50 ms", o.p50, r.p50, ".1f"),
            (f"{kind.name} p90 ms", o.p90, r.p90, ".1f"),
            (f"{kind.name} max ms", o.max, r.max, ".1f"),
            (f"{kind.name} northd p50 ms", on.p50, rn.p50, ".1f"),
            (f"{kind.name} northd p90 ms", on.p90, rn.p90, ".1f"),
        ]
    return rows


def print_table(
    scale: Scale, rounds: int, ours: SideResult, ref: SideResult, kinds: list[ChangeKind], interleaved: bool = False
) -> None:
    order = ", sides interleaved round by round (--interleave)" if interleaved else ""
    print(f"\n== {scale.workload} {scale}: {rounds} rounds per change kind{order} ==")
    print(f"{'metric':<36} {'ours':>12} {'reference':>12} {'ours/ref':>9}")
    for label, o, r, fmt in rows_for(ours, ref, kinds):
        print(f"{label:<36} {format(o, fmt):>12} {format(r, fmt):>12} {ratio(o, r):>9.2f}")
    for side in (ours, ref):
        if side.error:
            print(f"  {side.label} error: {side.error}")
    if ours.engine_cold:
        cold = {k: v for k, v in ours.engine_cold.items() if v}
        print(f"ours engine counters after cold sync: {json.dumps(cold)}")
    for name, delta in ours.engine_deltas.items():
        northd_recomputes = delta.get("northd/recompute", 0.0)
        verdict = "incremental" if northd_recomputes == 0 else f"NORTHD RECOMPUTED x{northd_recomputes:.0f}"
        txns = ours.txns.get(name, 0)
        print(f"ours engine deltas during {name} ({txns} nbctl transactions, {verdict}): {json.dumps(delta)}")


def make_side(label: str, workdir: Path, seed: Path, ref_tools: Tools, our_tools: Tools, release: Release) -> Side:
    """The side ``label`` ("reference" or "ours") of a scale, in ``workdir / label``."""
    if label == "reference":
        return Side(label, workdir / label, seed, start_reference, tools=ref_tools, release=release)
    return Side(label, workdir / label, seed, start_ours, metrics_port=free_port(), tools=our_tools, release=release)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--workload", default="mixed", choices=sorted(WORKLOADS), help="the NB builder (default mixed)"
    )
    ap.add_argument(
        "--scales",
        default="50,200",
        help="comma-separated scales (default 50,200): "
        + "; ".join(f"{name} {spec.usage}" for name, spec in WORKLOADS.items()),
    )
    ap.add_argument("--rounds", type=int, default=30, help="timed rounds per change kind (default 30)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed rounds per change kind first (default 1)")
    ap.add_argument(
        "--changes",
        default="lsp-add,lsp-del",
        help=f"comma-separated change kinds, of: {', '.join(CHANGE_KINDS)} (default lsp-add,lsp-del)",
    )
    ap.add_argument(
        "--settle", type=float, default=2.0, help="seconds after the cold sync before reading RSS"
    )
    ap.add_argument("--sync-timeout", type=float, default=900.0, help="cold sync timeout, seconds")
    ap.add_argument("--change-timeout", type=int, default=300, help="ovn-nbctl timeout per change, seconds")
    ap.add_argument(
        "--sides", default="reference,ours", help="which sides, in order (default reference,ours)"
    )
    ap.add_argument("--json", type=Path, default=None, help="write the results to this JSON file")
    ap.add_argument("--seed-dir", type=Path, default=None, help="keep/reuse the NB backups per scale here")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, databases)")
    ap.add_argument("--release", choices=list(RELEASES), default=DEFAULT_RELEASE.name,
                    help=f"OVN release of the reference and the schemas (default {DEFAULT_RELEASE.name})")
    ap.add_argument("--from-chroot", action="store_true", default=None,
                    help="run the reference from the release's chroot even when the host's OVN is that release")
    ap.add_argument("--our-servers", choices=("reference", "host"), default="reference",
                    help="ovsdb-servers and ovn-nbctl of our side: the reference's (default, same as the "
                         "reference side) or the host's")
    ap.add_argument("--nbctl-daemon", action="store_true",
                    help="make the changes through an ovn-nbctl daemon per side (started after the cold "
                         "sync) instead of one-shot ovn-nbctl, which fetches the NB for every command")
    ap.add_argument("--chassis", type=int, default=0, metavar="N",
                    help="N chassis in each side's SB before its daemon starts (Chassis chassis-0000... with "
                         "an Encap and every feature flag, and Chassis_Private), as N ovn-controllers "
                         "would announce themselves; --workload ovnk names its gateway routers' chassis so "
                         "(default 0: none)")
    ap.add_argument("--interleave", action="store_true",
                    help="after both sides' cold syncs (one after the other; both then stay up), run each "
                         "round of a change kind on one side then the other (reversed every other round), "
                         "so that load drift hits both alike; the idle side's daemons keep running")
    ap.add_argument("--gap", type=float, default=0.0, metavar="MS",
                    help="pause MS milliseconds before each timed change (after its setup), so that it "
                         "starts with both sides' daemons idle (default 0: right after the last reply)")
    ap.add_argument("--prefault-mb", type=int, default=6144, metavar="MB",
                    help="before each side starts, touch MB MiB of memory in a child process that then "
                         "exits, so that its cold sync allocates pages the virtual machine's host has "
                         "backed already (default 6144; 0: none)")
    args = ap.parse_args(argv)

    release = RELEASES[args.release]
    if not reference_available(release, args.from_chroot):
        print(f"reference ovn-northd of OVN {release.name} or OVS tools not installed "
              f"(scripts/setup.sh, scripts/chroots.sh {release.suite})", file=sys.stderr)
        return 2
    try:
        ref_tools = tools_for(release, args.from_chroot)
    except ToolsUnavailable as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"reference: {ref_tools.describe()}", flush=True)
    # Ours byte-compiled, as an installed package is (an editable checkout under
    # PYTHONDONTWRITEBYTECODE would compile every module again at each daemon start).
    compileall.compile_dir(str(Path(ovn_northd_py.__file__).parent), quiet=1)
    print(f"nbctl: {'daemon (--nbctl-daemon)' if args.nbctl_daemon else 'one-shot'}", flush=True)
    if args.gap:
        print(f"a {args.gap:g} ms pause before each timed change (--gap)", flush=True)
    if args.interleave:
        print("sides: both up, interleaved round by round (--interleave)", flush=True)
    try:
        kinds = [CHANGE_KINDS[name] for name in args.changes.split(",") if name]
        scales = [Scale.parse(s, args.workload) for s in args.scales.split(",") if s]
    except (KeyError, argparse.ArgumentTypeError) as exc:
        ap.error(f"bad --changes/--scales: {exc}")
    sides = [s for s in args.sides.split(",") if s]
    if not set(sides) <= {"reference", "ours"}:
        ap.error("--sides: reference and/or ours")
    cfg = RunConfig(
        kinds,
        args.rounds,
        args.warmup,
        args.settle,
        args.sync_timeout,
        args.change_timeout,
        WORKLOADS[args.workload].names(),
        args.nbctl_daemon,
        args.chassis,
        args.gap,
        args.prefault_mb,
    )

    wd = Path(tempfile.mkdtemp(prefix="bench-latency-"))
    report: dict[str, Any] = {
        "host": {"cpus": os.cpu_count(), "python": platform.python_version(), "kernel": platform.release()},
        "args": {k: str(v) for k, v in vars(args).items()},
        "reference": ref_tools.describe(),
        "nbctl": "daemon" if args.nbctl_daemon else "one-shot",
        "interleaved": args.interleave,
        "scales": [],
    }
    try:
        for scale in scales:
            swd = wd / scale.slug
            print(f"{scale.workload} {scale}: building the NB ...", flush=True)
            seed, build_s = seed_for(scale, swd, args.seed_dir, release)
            print(f"  NB ready ({'reused' if build_s is None else f'built in {build_s:.1f} s'}): {seed}")
            our_tools = ref_tools if args.our_servers == "reference" else HOST
            if args.interleave:
                results = run_sides_interleaved(
                    [make_side(label, swd, seed, ref_tools, our_tools, release) for label in sides], cfg
                )
            else:  # each side made when its turn comes (ours' metrics port picked then, as ever)
                results = {
                    label: run_side(make_side(label, swd, seed, ref_tools, our_tools, release), cfg)
                    for label in sides
                }
            ours = results.get("ours", SideResult("ours", error="not run"))
            ref = results.get("reference", SideResult("reference", error="not run"))
            print_table(scale, args.rounds, ours, ref, kinds, args.interleave)
            report["scales"].append(
                {
                    "scale": str(scale),
                    "nb_build_s": build_s,
                    "sides": {k: v.to_json() for k, v in results.items()},
                    "ratios": {label: ratio(o, r) for label, o, r, _ in rows_for(ours, ref, kinds)},
                }
            )
            if args.json:
                args.json.write_text(json.dumps(report, indent=1, allow_nan=True) + "\n")
    finally:
        if args.keep:
            print(f"work dir kept: {wd}")
        else:
            shutil.rmtree(wd, ignore_errors=True)
    if args.json:
        print(f"\nJSON written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
