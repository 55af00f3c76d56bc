"""Incremental processing of the switch services (ARP/ND responder, DHCP, DNS, external and virtual
ports): DHCP_Options and DNS changes rebuild only their users' flows, and incremental always equals
recompute (``--check-incremental=1``)."""

from __future__ import annotations

import json
import os
import random
import subprocess

import pytest
from test_incremental import MIXED

from ovn_northd_py.devtools.servers import OurNorthd
from ovn_northd_py.devtools.testing import (
    apply_checked,
    free_port,
    metric,
    mismatches,
    node_runs,
)
from ovn_northd_py.devtools.testing import run_batch as _run

SWITCHES = ("ls1", "ls2", "ls3")
V4_OPTS = '"server_id"="{ip}" "server_mac"="00:00:00:00:ff:0{n}" "lease_time"="3600"'


def _uuid(env, table: str, *cond: str) -> str:
    return env.nbctl("--bare", "--columns=_uuid", "find", table, *cond).strip()


def _setup(env) -> dict[str, list[str]]:
    """Mixed 3x4 plus DHCP rows, DNS rows, a localnet + external port with an HA group and virtual ports."""
    subprocess.run(["python3", str(MIXED), env.nb.remote, "3", "4", "2"], check=True, capture_output=True)
    rows: dict[str, list[str]] = {"dhcp4": [], "dhcp6": [], "dns": []}
    for n, sw in enumerate(SWITCHES, 1):
        opts = V4_OPTS.format(ip=f"192.168.{n}.254", n=n)
        rows["dhcp4"].append(env.nbctl("create", "dhcp_options", f"cidr=192.168.{n}.0/24",
                                       f"options={{{opts} \"router\"=\"192.168.{n}.254\"}}").strip())
        rows["dns"].append(env.nbctl("create", "dns", f'records={{"h{n}.org"="192.168.{n}.1"}}').strip())
        env.nbctl("add", "logical_switch", sw, "dns_records", rows["dns"][-1])
    rows["dhcp6"].append(env.nbctl("create", "dhcp_options", 'cidr="fd00::/64"',
                                   'options={"server_id"="00:00:00:00:ff:66"}').strip())
    env.nbctl("ha-chassis-group-add", "hg", "--", "ha-chassis-group-add-chassis", "hg", "hv1", "10")
    env.nbctl("lsp-add", "ls1", "ln1", "--", "lsp-set-type", "ln1", "localnet", "--", "lsp-set-addresses",
              "ln1", "unknown", "--", "lsp-set-options", "ln1", "network_name=phys")
    env.nbctl("lsp-add", "ls1", "ext1", "--", "lsp-set-type", "ext1", "external", "--", "lsp-set-addresses",
              "ext1", "00:00:00:aa:00:01 192.168.1.100 fd00::100", "--", "set", "logical_switch_port", "ext1",
              f"ha_chassis_group={_uuid(env, 'ha_chassis_group', 'name=hg')}",
              f"dhcpv4_options={rows['dhcp4'][0]}", f"dhcpv6_options={rows['dhcp6'][0]}")
    env.nbctl("lsp-add", "ls2", "vip2", "--", "lsp-set-type", "vip2", "virtual", "--", "lsp-set-options",
              "vip2", "virtual-ip=192.168.2.50", "virtual-parents=lsp2-1,lsp2-2,new7")
    return rows


@pytest.fixture
def services(env):
    rows = _setup(env)
    port = free_port()
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote,
                  extra_args=["--check-incremental=1", f"--metrics-address=127.0.0.1:{port}"]).start()
    try:
        env.sync()
        yield env, d, port, rows
    finally:
        d.stop()


def _ports(sw: str) -> list[str]:
    n = sw[2:]
    return [f"lsp{n}-{j}" for j in range(1, 5)]


def random_service_batches(seed: int, total: int, rows: dict[str, list[str]]) -> list[list[list[str]]]:
    """Seeded NB transactions: DHCP options on ports and in DHCP_Options rows, DNS records, port
    addresses, virtual and external ports, ports coming and going (parents of the virtual port)."""
    rnd = random.Random(seed)
    batches: list[list[list[str]]] = []
    n = 0
    counter = 0
    extra_port = extra_localnet = False
    while n < total:
        batch: list[list[str]] = []
        for _ in range(rnd.randint(1, 3)):
            size = len(batch)
            counter += 1
            sw = rnd.choice(SWITCHES)
            i = int(sw[2:])
            port = rnd.choice(_ports(sw))
            kind = rnd.choices(
                ["set4", "clear4", "set6", "optval", "optdel", "cidr", "dns_set", "dns_del", "addr",
                 "ext_addr", "vip", "newport", "dns_attach", "dns_detach", "dns_new", "dhcp_new", "localnet",
                 "optval6", "hostname", "dns_multi", "portsec"],
                weights=[12, 6, 5, 12, 6, 3, 10, 6, 12, 4, 4, 4, 4, 3, 2, 2, 3, 6, 3, 5, 4],
            )[0]
            d4 = rnd.choice(rows["dhcp4"])
            dns = rnd.choice(rows["dns"])
            if kind == "set4":
                batch.append(["set", "logical_switch_port", port, f"dhcpv4_options={d4}"])
            elif kind == "clear4":
                batch.append(["clear", "logical_switch_port", port, "dhcpv4_options"])
            elif kind == "set6":
                batch.append(["set", "logical_switch_port", port, f"dhcpv6_options={rows['dhcp6'][0]}"])
            elif kind == "optval":
                key, val = rnd.choice([("lease_time", str(rnd.randint(60, 9999))), ("mtu", "1400"),
                                       ("server_mac", f"00:00:00:00:fe:{counter % 256:02x}"),
                                       ("router", f"192.168.{i}.{rnd.randint(1, 254)}"),
                                       ("domain_name", '"\\"x.org\\""'),
                                       ("classless_static_route", f'"{{10.{i}.0.0/16,192.168.{i}.254}}"'),
                                       ("ms_classless_static_route", '"{0.0.0.0/0,192.168.1.1}"'),
                                       ("dns_server", '"{8.8.8.8,1.1.1.1}"'),
                                       ("domain_search_list", '"\\"a.org,b.org\\""'),
                                       ("next_server", "10.0.0.9"), ("bootfile_name", '"\\"pxe\\""')])
                batch.append(["set", "dhcp_options", d4, f"options:{key}={val}"])
            elif kind == "optdel":
                batch.append(["remove", "dhcp_options", d4, "options", rnd.choice(["server_mac", "mtu", "router"])])
            elif kind == "cidr":
                batch.append(["set", "dhcp_options", d4, f"cidr=192.168.{rnd.randint(1, 3)}.0/{rnd.choice([24, 25])}"])
            elif kind == "dns_set":
                batch.append(["set", "dns", dns, f'records:h{counter}.org="192.168.{i}.{counter % 250 + 1}"'])
            elif kind == "dns_del":
                batch.append(["clear", "dns", dns, "records"] if rnd.random() < 0.2
                             else ["remove", "dns", dns, "records", f"h{rnd.randint(1, counter)}.org"])
            elif kind == "addr":
                mac = f"0a:00:00:{i:02x}:{counter // 256 % 256:02x}:{counter % 256:02x}"
                addr = rnd.choice([f"{mac} 192.168.{i}.{counter % 250 + 1}",
                                   f"{mac} 192.168.{i}.{counter % 250 + 1} fd00::{counter:x}",
                                   f"{mac} 10.{i}.0.{counter % 250 + 1}", "unknown"])
                # set, not lsp-set-addresses: duplicate IPs on a switch are allowed in NB (nbctl refuses them)
                batch.append(["set", "logical_switch_port", port, f"addresses=\"{addr}\""])
            elif kind == "ext_addr":
                batch.append(["lsp-set-addresses", "ext1", rnd.choice(
                    ["00:00:00:aa:00:01 192.168.1.100 fd00::100", f"00:00:00:aa:00:02 192.168.1.{counter % 250 + 1}",
                     "00:00:00:aa:00:03"])])
            elif kind == "vip":
                batch.append(["lsp-set-options", "vip2", f"virtual-ip=192.168.2.{rnd.choice([50, 51])}",
                              "virtual-parents=" + ",".join(rnd.sample(["lsp2-1", "lsp2-2", "lsp2-3", "new7"], 2))])
            elif kind == "dns_attach":
                batch.append(["add", "logical_switch", sw, "dns_records", dns])
            elif kind == "dns_detach":
                batch.append(["remove", "logical_switch", sw, "dns_records", dns] if rnd.random() < 0.8
                             else ["clear", "logical_switch", sw, "dns_records"])
            elif kind == "dns_new" and not any(c[:1] == ["--id=@d"] for c in batch):
                batch.append(["--id=@d", "create", "dns", f'records={{"n{counter}.org"="10.9.9.{counter % 250}"}}',
                              "--", "add", "logical_switch", sw, "dns_records", "@d"])
            elif kind == "dhcp_new" and not any(c[:1] == ["--id=@o"] for c in batch):
                opts = V4_OPTS.format(ip=f"192.168.{i}.253", n=i)
                batch.append(["--id=@o", "create", "dhcp_options", f"cidr=192.168.{i}.0/24", f"options={{{opts}}}",
                              "--", "set", "logical_switch_port", port, "dhcpv4_options=@o"])
            elif kind == "optval6":
                key, val = rnd.choice([("dhcpv6_stateless", rnd.choice(["true", "false"])),
                                       ("dns_server", '"{fd00::53,fd00::54}"'),
                                       ("server_id", f"00:00:00:00:ee:{counter % 256:02x}"),
                                       ("domain_search", '"\\"v6.org\\""')])
                if rnd.random() < 0.3:
                    batch.append(["remove", "dhcp_options", rows["dhcp6"][0], "options", key])
                else:
                    batch.append(["set", "dhcp_options", rows["dhcp6"][0], f"options:{key}={val}"])
            elif kind == "portsec":  # port security decides MAC learning for ports with "unknown"
                batch.append(["set", "logical_switch_port", port, rnd.choice(
                    ["port_security=[]", 'port_security=["bogus"]', 'port_security=["0a:00:00:00:00:01 foo"]',
                     f'port_security=["0a:00:00:{i:02x}:00:01 192.168.{i}.0/24 fd00::/64"]'])])
            elif kind == "hostname":
                batch.append(["set", "logical_switch_port", port, f"options:hostname=host{counter}"]
                             if rnd.random() < 0.7 else ["remove", "logical_switch_port", port, "options", "hostname"])
            elif kind == "dns_multi":
                ip = f"192.168.{i}.{counter % 250 + 1}"
                rev = ".".join(reversed(ip.split("."))) + ".in-addr.arpa"
                batch.append(["set", "dns", dns, rnd.choice([
                    f'records:m{counter}.org="{ip} fd00::{counter:x}"', f'records:"{rev}"="m{counter}.org"',
                    f'records:v6-{counter}.org="fd00::{counter:x} fd00::1:{counter:x}"'])])
            elif kind == "localnet" and not any("ln1b" in c for c in batch):
                batch.append(["lsp-del", "ln1b"] if extra_localnet else
                             ["lsp-add", "ls1", "ln1b", "--", "lsp-set-type", "ln1b", "localnet", "--",
                              "lsp-set-addresses", "ln1b", "unknown"])
                extra_localnet = not extra_localnet
            elif kind == "newport" and not any("new7" in c for c in batch):
                batch.append(["lsp-del", "new7"] if extra_port else
                             ["lsp-add", "ls2", "new7", "--", "lsp-set-addresses", "new7",
                              f"0a:00:00:07:00:{counter % 256:02x} 192.168.2.77"])
                extra_port = not extra_port
            n += len(batch) - size
        if batch:
            batches.append(batch)
    return batches


def test_dhcp_and_dns_changes_recompute_nothing(services):
    env, d, port, rows = services
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow", "sb_sync")}
    _run(env, [["set", "dhcp_options", rows["dhcp4"][0], "options:lease_time=7200"]])
    _run(env, [["set", "logical_switch_port", "lsp2-1", f"dhcpv4_options={rows['dhcp4'][1]}"]])
    _run(env, [["set", "dns", rows["dns"][1], 'records:new.org="192.168.2.9"']])
    _run(env, [["clear", "dns", rows["dns"][2], "records"]])
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    assert not mismatches(d)
    flows = env.sbctl("--bare", "--columns=actions", "find", "logical_flow", "external_ids:stage-name=ls_in_dhcp_options")
    assert "lease_time = 7200" in flows and "offerip = 192.168.2.1," in flows
    dns = {json.dumps(r["records"]) for r in env.sb_rows("DNS")}
    assert any("new.org" in r for r in dns), dns


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_random_service_changes_incremental_equals_recompute(services):
    """At least 400 NB changes to DHCP options, DNS records, port addresses, virtual and external ports;
    after every transaction the daemon compares its incremental state with a full recompute."""
    env, d, port, rows = services
    seed = int(os.environ.get("OVN_SERVICES_TEST_SEED", "20261130"))
    batches = random_service_batches(seed, 400, rows)
    done: list[list[list[str]]] = []
    lflow_inc = node_runs(port, "lflow", "incremental")
    for batch in batches:
        apply_checked(env, d, batch, done, seed)
    assert sum(len(b) for b in batches) >= 400
    checks = metric(port, "ovn_northd_py_incremental_checks_total")
    assert checks >= len(batches) // 2, f"only {checks} checks for {len(batches)} transactions"
    assert node_runs(port, "lflow", "incremental") - lflow_inc >= len(batches) // 2
    assert d.proc is not None and d.proc.poll() is None


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_lsp_up_feeds_arp_responder_when_ignore_lsp_down_is_false(services):
    """With ``ignore_lsp_down=false`` a VIF answers ARP only once up: the LSP.up write-back rebuilds it."""
    env, d, port, _rows = services
    env.nbctl("set", "nb_global", ".", "options:ignore_lsp_down=false", wait="sb")

    def arp_flows() -> str:
        return env.sbctl("--bare", "--columns=match", "find", "logical_flow", "external_ids:stage-name=ls_in_arp_rsp")

    assert "inport == \"lsp1-1\"" not in arp_flows()
    recomputes = node_runs(port, "lflow", "recompute")
    env.sbctl("chassis-add", "hv1", "geneve", "127.0.0.1", "--", "set", "chassis", "hv1",
              "other_config:port-up-notif=true")  # (without it, bound means up: test_core_sync)
    env.sbctl("lsp-bind", "lsp1-1", "hv1")
    env.sbctl("set", "port_binding", "lsp1-1", "up=true")
    for _ in range(50):
        env.sync()
        if "inport == \"lsp1-1\"" in arp_flows():
            break
    # (25.03 answers broadcast requests only: ``... && eth.dst == ff:ff:ff:ff:ff:ff && inport == ...``.)
    assert any(f.startswith("arp.tpa == 192.168.1.1 && arp.op == 1 && ") and f.endswith(' && inport == "lsp1-1"')
               for f in arp_flows().splitlines()), arp_flows()
    assert env.nbctl("get", "logical_switch_port", "lsp1-1", "up").strip() == "true"
    assert not mismatches(d)
    # Chassis changes recompute the northd node; the up write-back itself is incremental.
    env.sbctl("set", "port_binding", "lsp1-1", "up=false")
    before = node_runs(port, "lflow", "recompute")
    for _ in range(50):
        env.sync()
        if "inport == \"lsp1-1\"" not in arp_flows():
            break
    assert "inport == \"lsp1-1\"" not in arp_flows()
    assert node_runs(port, "lflow", "recompute") == before >= recomputes
    assert not mismatches(d)
