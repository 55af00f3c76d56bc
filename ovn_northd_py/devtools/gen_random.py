"""Random Northbound networks that mix every NB feature, with occasional malformed values.

    python -m ovn_northd_py.devtools.gen_random NB_REMOTE SEED [SIZE]
    python -m ovn_northd_py.parity --script ovn_northd_py/devtools/gen_random.py NB_REMOTE 7
    python -m ovn_northd_py.parity --release 25.03 --script ovn_northd_py/devtools/gen_random.py NB_REMOTE 7 6

A network is a deterministic function of ``(seed, size)``: ``size`` switches (default 4), about
half as many routers, and on them, drawn at random: VIF ports (static, dynamic and ``unknown``
addresses, port security, disabled ports), localnet ports (VLAN tags, QoS parameters), virtual
and external ports, distributed routers with gateway ports (gateway chassis, HA chassis groups),
gateway routers, router-to-router peering, SNAT / DNAT / floating IPs (distributed or not,
stateless, with port ranges), static routes (ECMP, src-ip, route tables, discard), router
policies, load balancers (protocols, no protocol, ports or none, IPv6, health checks,
selection fields, reject / event / hairpin options, groups) on switches and routers, ACLs on
switches and port groups (every verdict, logging with meters, labels, ``apply-after-lb``),
address sets, QoS rules, DHCPv4/v6 options, DNS records, multicast snooping / relay,
forwarding groups, static MAC bindings, BFD sessions, Copp meters and NB_Global options.

About one row in twelve carries a malformed value (an IPv4 octet above 255, a bad MAC, a
prefix length of 33, a VIP without backends, a backend that is not an address, an unknown
option value): ``ovn-nbctl`` refuses most of these, so they are written with ``set`` /
``create``.  The daemon must write what the reference writes for them (often: skip the row and
warn), which is why they are in the mix.

Everything goes into one ``ovn-nbctl`` transaction (rows refer to each other through ``@ids``).
Only features of the NB schema every supported release has (23.03's) are used there; an NB of a
newer schema gets that release's features in a second transaction of raw operations (NB 7.11,
OVN 25.03: ACL tiers, sampling, persist-established, ``acl_2503_ops``; and, from a random
stream of their own too, 25.03's router features, :func:`_router_2503`: NAT ``match`` /
``priority``, router policy chains, DHCP relay, whose rows ``ovn-nbctl`` creates in the first
transaction and whose new columns :mod:`.nb_json` operations set after it).
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field

# (absolute imports: the file also runs as a script)
from ovn_northd_py.devtools import nb_json
from ovn_northd_py.devtools.nb_json import NbOps, nb_schema_version, select
from ovn_northd_py.devtools.servers import nbctl

Cmd = list[str]


@dataclass(slots=True)
class _Net:
    """What has been built so far (names the later features pick from)."""

    rng: random.Random
    cmds: list[Cmd] = field(default_factory=list)
    switches: list[str] = field(default_factory=list)
    subnet: dict[str, int] = field(default_factory=dict)  # switch -> its 10.<n>.0.0/24 index
    vifs: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)  # switch -> (port, mac, ip)
    routers: list[str] = field(default_factory=list)
    gw_routers: list[str] = field(default_factory=list)
    dgps: dict[str, str] = field(default_factory=dict)  # router -> its gateway port
    lrps: list[tuple[str, str, str]] = field(default_factory=list)  # (router, port, first IPv4)
    port_groups: list[str] = field(default_factory=list)
    address_sets: list[str] = field(default_factory=list)
    lbs: list[str] = field(default_factory=list)
    n: int = 0
    ops: list[nb_json.Op] = field(default_factory=list)  # newer releases' columns (after the nbctl commands)
    # Switches with a VIF that may have no parsed address (dynamic, a bad IP): the reference's DHCP
    # relay flow for it prints uninitialised bytes as its MAC.
    no_mac_first: set[str] = field(default_factory=set)
    # Dynamic IPv6 addresses derive from MACs under NB_Global mac_prefix, which is random when the
    # NB does not set it: a network using them sets it, so that two daemons can agree.
    fixed_mac_prefix: bool = False

    def bad(self, p: float = 1 / 12) -> bool:
        return self.rng.random() < p

    def next(self) -> int:
        self.n += 1
        return self.n

    def add(self, *cmd: str) -> None:
        self.cmds.append(list(cmd))

    def ref(self, kind: str) -> str:
        """A fresh ``@id`` (each may be declared once per transaction)."""
        return f"@{kind}{self.next()}"


def _mac(i: int, kind: int = 0) -> str:
    return f"0a:{kind:02x}:00:{i // 65536 % 256:02x}:{i // 256 % 256:02x}:{i % 256:02x}"


def _bad_ip(net: _Net) -> str:
    return net.rng.choice(["256.1.1.1", "10.0.0.300", "10.1.0.1/33", "10.0.0", "foo", "1.2.3.4.5"])


def _switch(net: _Net, k: int) -> None:
    sw = f"sw{k}"
    net.switches.append(sw)
    net.subnet[sw] = k
    net.vifs[sw] = []
    other: list[str] = []
    rng = net.rng
    if rng.random() < 0.25:
        other += [f"other_config:subnet=10.{k}.0.0/24", f"other_config:exclude_ips=10.{k}.0.1..10.{k}.0.9"]
        if rng.random() < 0.3:
            other.append(f'other_config:ipv6_prefix="fd{k:02x}::"')
            net.fixed_mac_prefix = True
    if rng.random() < 0.2:
        other += ["other_config:mcast_snoop=true", "other_config:mcast_querier=" + rng.choice(["true", "false"])]
        if rng.random() < 0.5:
            other += ["other_config:mcast_eth_src=0a:00:00:00:ff:01", f"other_config:mcast_ip4_src=10.{k}.0.254"]
    if rng.random() < 0.1:
        other.append("other_config:vlan-passthru=true")
    net.add("ls-add", sw)
    if other:
        net.add("set", "logical_switch", sw, *other)
    for _ in range(rng.randint(1, 4)):
        _vif(net, sw)
    if rng.random() < 0.3:
        _localnet(net, sw)
    if rng.random() < 0.15:
        _virtual(net, sw)


def _vif(net: _Net, sw: str) -> None:
    rng, i, k = net.rng, net.next(), net.subnet[sw]
    port, mac, ip = f"vif{i}", _mac(i), f"10.{k}.0.{10 + i % 240}"
    net.add("lsp-add", sw, port)
    r = rng.random()
    if r < 0.6:
        addrs = [f"{mac} {ip}" + (f" fd{k:02x}::{i:x}" if rng.random() < 0.3 else "")]
        net.vifs[sw].append((port, mac, ip))
    elif r < 0.7:
        addrs = [f"{mac} dynamic" if rng.random() < 0.5 else "dynamic"]
        net.no_mac_first.add(sw)
    elif r < 0.8:
        addrs = ["unknown", f"{mac} {ip}"]
        net.vifs[sw].append((port, mac, ip))
    elif r < 0.9:
        addrs = [f"{mac} {_bad_ip(net)}"]
        net.no_mac_first.add(sw)
    else:
        addrs = [f"{mac}", "unknown"]
    net.add("set", "logical_switch_port", port, "addresses=[" + ",".join(f'"{a}"' for a in addrs) + "]")
    if rng.random() < 0.3:
        ps = f"{mac} {ip}" if not net.bad() else f"{mac} {_bad_ip(net)}"
        net.add("set", "logical_switch_port", port, f'port_security="{ps}"')
    if rng.random() < 0.08:
        net.add("set", "logical_switch_port", port, "enabled=false")
    if rng.random() < 0.1:
        net.add("set", "logical_switch_port", port, f"options:requested-chassis=hv{rng.randint(1, 3)}")
    if rng.random() < 0.05:
        net.add("set", "logical_switch_port", port, "options:qos_max_rate=100000")


def _localnet(net: _Net, sw: str) -> None:
    rng, i = net.rng, net.next()
    port = f"ln{i}"
    if rng.random() < 0.4:
        net.add("lsp-add", sw, port, "", str(rng.randint(1, 4094)))
    else:
        net.add("lsp-add", sw, port)
    net.add("lsp-set-type", port, "localnet")
    net.add("lsp-set-addresses", port, "unknown")
    opts = [f"network_name=phys{i % 3}"]
    if rng.random() < 0.3:
        opts.append(rng.choice(["qos_max_rate=1000000", "qos_burst=5000", "qos_min_rate=10"]))
    if rng.random() < 0.2:
        opts.append("localnet_learn_fdb=true")
    net.add("lsp-set-options", port, *opts)


def _virtual(net: _Net, sw: str) -> None:
    parents = [p for p, _, _ in net.vifs[sw]][:2]
    i, k = net.next(), net.subnet[sw]
    port = f"virt{i}"
    net.add("lsp-add", sw, port)
    net.add("lsp-set-type", port, "virtual")
    opts = [f"virtual-ip=10.{k}.0.{200 + i % 50}"]
    if parents:
        opts.append("virtual-parents=" + ",".join(parents))
    net.add("lsp-set-options", port, *opts)


def _router(net: _Net, k: int) -> None:
    rng = net.rng
    lr = f"lr{k}"
    net.add("lr-add", lr)
    net.routers.append(lr)
    gateway = rng.random() < 0.35
    if gateway:
        net.gw_routers.append(lr)
        opts = [f"options:chassis=hv{k % 3 + 1}"]
        if rng.random() < 0.4:
            opts.append("options:lb_force_snat_ip=" + rng.choice(["router_ip", f"172.31.{k}.1"]))
        if rng.random() < 0.3:
            opts.append(f"options:dnat_force_snat_ip=172.30.{k}.1")
        net.add("set", "logical_router", lr, *opts)
    elif rng.random() < 0.2:
        net.add("set", "logical_router", lr, "options:mcast_relay=true")
    # Attach to 1..3 switches (each switch to at most one router port of this router).
    for sw in rng.sample(net.switches, k=min(len(net.switches), rng.randint(1, 3))):
        _attach(net, lr, sw)
    # An external network, through a gateway port (distributed routers) or directly.
    ext = f"ext{k}"
    net.add("ls-add", ext)
    port = f"{lr}-{ext}"
    mac = _mac(net.next(), 2)
    nets = [f"172.20.{k}.1/24"] + ([f"fd20:{k:x}::1/64"] if rng.random() < 0.4 else [])
    net.add("lrp-add", lr, port, mac, *nets)
    net.lrps.append((lr, port, f"172.20.{k}.1"))
    if not gateway:
        if rng.random() < 0.5:
            for c in range(1, rng.randint(1, 3) + 1):
                net.add("lrp-set-gateway-chassis", port, f"hv{c}", str(10 * c))
        else:
            grp = f"hag{k}"
            hc, g = net.ref("hc"), net.ref("g")
            net.add(f"--id={hc}", "create", "HA_Chassis", "chassis_name=hv1", "priority=20")
            net.add(f"--id={g}", "create", "HA_Chassis_Group", f"name={grp}", f"ha_chassis={hc}")
            net.add("set", "logical_router_port", port, f"ha_chassis_group={g}")
        net.dgps[lr] = port
        if rng.random() < 0.3:
            net.add("set", "logical_router_port", port, f"options:gateway_mtu={rng.choice([1400, 1500])}")
    sp = f"{ext}-{lr}"
    net.add("lsp-add", ext, sp)
    net.add("lsp-set-type", sp, "router")
    net.add("lsp-set-addresses", sp, rng.choice(["router", "router", mac]))
    net.add("lsp-set-options", sp, f"router-port={port}")
    if rng.random() < 0.4:
        net.add("lsp-set-options", sp, f"router-port={port}", "nat-addresses=router")
    ln = f"ln-{ext}"
    if rng.random() < 0.3:
        net.add("lsp-add", ext, ln, "", str(100 + k))
    else:
        net.add("lsp-add", ext, ln)
    net.add("lsp-set-type", ln, "localnet")
    net.add("lsp-set-addresses", ln, "unknown")
    net.add("lsp-set-options", ln, "network_name=physnet")
    _nat(net, lr, k)
    _routes(net, lr, k)


def _attach(net: _Net, lr: str, sw: str) -> None:
    rng, k = net.rng, net.subnet[sw]
    port = f"{lr}-{sw}"
    if any(p == port for _, p, _ in net.lrps):
        return
    ip = f"10.{k}.0.1" if not any(ip == f"10.{k}.0.1" for _, _, ip in net.lrps) else f"10.{k}.0.{2 + net.next() % 5}"
    nets = [f"{ip}/24"] + ([f"fd{k:02x}::1/64"] if rng.random() < 0.4 else [])
    net.add("lrp-add", lr, port, _mac(net.next(), 1), *nets)
    if net.bad(1 / 20):  # (lrp-add checks its arguments)
        net.add("set", "logical_router_port", port, f'networks="{_bad_ip(net).split("/")[0]}/24"')
    net.lrps.append((lr, port, ip))
    if rng.random() < 0.2:
        net.add("set", "logical_router_port", port, "ipv6_ra_configs:address_mode=" +
                rng.choice(["slaac", "dhcpv6_stateful", "dhcpv6_stateless"]), "ipv6_ra_configs:send_periodic=true")
    sp = f"{sw}-{lr}"
    net.add("lsp-add", sw, sp)
    net.add("lsp-set-type", sp, "router")
    net.add("lsp-set-addresses", sp, "router")
    net.add("lsp-set-options", sp, f"router-port={port}")


def _nat(net: _Net, lr: str, k: int) -> None:
    rng = net.rng
    for j in range(rng.randint(0, 3)):
        ext = f"172.20.{k}.{100 + j}" if not net.bad(1 / 20) else _bad_ip(net)
        sws = [sw for sw in net.switches if any(p == f"{lr}-{sw}" for _, p, _ in net.lrps)]
        if not sws:
            return
        sw = rng.choice(sws)
        kind = rng.choice(["snat", "dnat", "dnat_and_snat", "dnat_and_snat"])
        cols = [f"type={kind}", f'external_ip="{ext}"']
        vifs = net.vifs[sw]
        if kind == "snat":
            cols.append(f'logical_ip="10.{net.subnet[sw]}.0.0/24"')
        elif vifs:
            port, _mac_of, ip = rng.choice(vifs)
            cols.append(f'logical_ip="{ip}"')
            if kind == "dnat_and_snat" and lr in net.dgps and rng.random() < 0.5:
                bad_mac = net.bad(1 / 10)
                cols += [f'logical_port="{port}"', f'external_mac="{"zz:00" if bad_mac else _mac(net.next(), 9)}"']
            if rng.random() < 0.15:
                cols.append('external_port_range="8000-9000"')
            if kind == "dnat_and_snat" and rng.random() < 0.15:
                cols.append("options:stateless=true")
        else:
            continue
        ref = net.ref("nat")
        net.add(f"--id={ref}", "create", "NAT", *cols)
        net.add("add", "logical_router", lr, "nat", ref)


def _routes(net: _Net, lr: str, k: int) -> None:
    rng = net.rng
    for j in range(rng.randint(0, 3)):
        prefix = rng.choice([f"192.168.{j}.0/24", "0.0.0.0/0", f"10.200.{k}.0/24", f"fd99:{j}::/64"])
        v6 = ":" in prefix
        nexthop = f"fd20:{k:x}::fe" if v6 else f"172.20.{k}.254"
        cols = [f'ip_prefix="{prefix}"', f'nexthop="{nexthop}"']
        r = rng.random()
        if r < 0.15:
            cols.append("policy=src-ip")
        elif r < 0.25:
            cols.append(f'route_table="rtb{j % 2}"')
        elif r < 0.3:
            cols[1] = 'nexthop="discard"'
        elif r < 0.35:
            cols[1] = f'nexthop="{_bad_ip(net)}"'
        ref = net.ref("r")
        net.add(f"--id={ref}", "create", "Logical_Router_Static_Route", *cols)
        net.add("add", "logical_router", lr, "static_routes", ref)
        if rng.random() < 0.2 and not v6:  # an ECMP sibling
            ref = net.ref("r")
            net.add(f"--id={ref}", "create", "Logical_Router_Static_Route", f'ip_prefix="{prefix}"',
                    f'nexthop="172.20.{k}.253"')
            net.add("add", "logical_router", lr, "static_routes", ref)
    for j in range(rng.randint(0, 2)):
        prio = rng.choice([100, 1000, 2000])
        match = rng.choice([f"ip4.src == 10.{k}.0.0/16", "ip4.dst == 8.8.8.8", "ip6", "tcp.dst == 22"])
        action = rng.choice(["allow", "drop", "reroute"])
        cmd = ["lr-policy-add", lr, str(prio + j), match, action]
        if action == "reroute":
            cmd.append(f"172.20.{k}.250")
        net.add(*cmd)


def _lbs(net: _Net) -> None:
    rng = net.rng
    for j in range(rng.randint(1, 5)):
        name = f"lb{j}"
        backends = [ip for sw in net.switches for _, _, ip in net.vifs[sw]]
        if not backends:
            return
        picks = rng.sample(backends, k=min(len(backends), rng.randint(1, 3)))
        v6 = rng.random() < 0.15
        proto = rng.choice(["tcp", "udp", "sctp", None])
        vips: dict[str, str] = {}
        for v in range(rng.randint(1, 2)):
            if v6:
                vips[f"[fd30::{j}:{v}]:80"] = ""
                continue
            port = rng.choice([80, 443, None])
            vip = f"172.16.{j}.{v + 1}" + (f":{port}" if port else "")
            bk = ",".join(f"{b}:{8080 + v}" if port else b for b in picks)
            if net.bad(1 / 15):
                bk = rng.choice(["", "10.0.0.300:80", "foo"])
            vips[vip] = bk
        vips = {k: v for k, v in vips.items() if v or not k.startswith("[")}
        if not vips:
            continue
        cols = [f"name={name}", "vips={" + ",".join(f'"{k}"="{v}"' for k, v in vips.items()) + "}"]
        if proto:
            cols.append(f"protocol={proto}")
        if rng.random() < 0.2:
            cols.append("selection_fields=" + rng.choice(["ip_src", "tp_src", "ip_src,ip_dst"]))
        opt = rng.random()
        if opt < 0.1:
            cols.append("options:reject=true")
        elif opt < 0.2:
            cols.append("options:hairpin_snat_ip=169.254.0.5")
        elif opt < 0.25:
            cols.append("options:skip_snat=true")
        net.add(f"--id=@{name}", "create", "Load_Balancer", *cols)  # (names are unique)
        net.lbs.append(name)
        targets = rng.sample(net.switches + net.routers, k=min(2, len(net.switches + net.routers)))
        for t in targets:
            table = "logical_router" if t in net.routers else "logical_switch"
            net.add("add", table, t, "load_balancer", f"@{name}")
    if net.lbs and rng.random() < 0.4:
        members = rng.sample(net.lbs, k=min(2, len(net.lbs)))
        net.add("--id=@lbg", "create", "Load_Balancer_Group", "name=lbg0",
                "load_balancer=[" + ",".join(f"@{m}" for m in members) + "]")
        for sw in rng.sample(net.switches, k=min(2, len(net.switches))):
            net.add("add", "logical_switch", sw, "load_balancer_group", "@lbg")


def _acls(net: _Net) -> None:
    rng = net.rng
    for j in range(rng.randint(0, 2)):
        ips = [ip for sw in net.switches for _, _, ip in net.vifs[sw]][:4]
        name = f"as{j}"
        net.add("create", "Address_Set", f"name={name}", "addresses=[" + ",".join(f'"{i}"' for i in ips) + "]")
        net.address_sets.append(name)
    if rng.random() < 0.5:
        net.add("meter-add", "acl-meter", "drop", "10", "pktps")
    vifs = [p for sw in net.switches for p, _, _ in net.vifs[sw]]
    for j in range(rng.randint(0, 2)):
        pg = f"pg{j}"
        members = rng.sample(vifs, k=min(len(vifs), rng.randint(0, 3)))
        net.add("pg-add", pg, *members)
        net.port_groups.append(pg)
    targets = net.switches + net.port_groups
    for j in range(rng.randint(0, 8)):
        target = rng.choice(targets)
        direction = rng.choice(["from-lport", "to-lport"])
        verdict = rng.choice(["allow", "allow-related", "allow-stateless", "drop", "reject"])
        port_kw = "inport" if direction == "from-lport" else "outport"
        match = rng.choice([
            "ip4", "tcp.dst == 80", "ip4.src == 10.1.0.0/16", "udp && udp.dst == 53", "arp", "ip6",
            f"{port_kw} == @{target}" if target in net.port_groups else "icmp4",
            f"ip4.dst == ${net.address_sets[0]}" if net.address_sets else "ip4.dst == 1.1.1.1",
        ])
        cmd = ["acl-add", target, direction, str(rng.choice([1000, 1001, 2000, 32000])), match, verdict]
        opts: list[str] = []
        if rng.random() < 0.2:
            opts = ["--log", f"--name=acl{j}", "--severity=info"] + (["--meter=acl-meter"] if rng.random() < 0.5 else [])
        if direction == "to-lport" and rng.random() < 0.1:
            opts.append("--apply-after-lb")
        net.add(*opts, *cmd)
    if rng.random() < 0.2:
        net.add("set", "NB_Global", ".", "options:default_acl_drop=true")


def _services(net: _Net) -> None:
    rng = net.rng
    for sw in net.switches:
        k = net.subnet[sw]
        vifs = net.vifs[sw]
        if rng.random() < 0.3:
            net.add("qos-add", sw, rng.choice(["from-lport", "to-lport"]), "100", "ip4",
                    *rng.choice([["dscp=10"], ["rate=1000", "burst=100"], ["dscp=12", "rate=500"]]))
        if vifs and rng.random() < 0.35:
            cidr = f"10.{k}.0.0/24"
            opts = (f'options={{"lease_time"="3600" "router"="10.{k}.0.1" "server_id"="10.{k}.0.1" '
                    f'"server_mac"="0a:ff:00:00:00:{k:02x}"}}')
            ref = net.ref("dh")
            net.add(f"--id={ref}", "create", "DHCP_Options", f'cidr="{cidr}"', opts)
            net.add("set", "logical_switch_port", vifs[0][0], f"dhcpv4_options={ref}")
        if vifs and rng.random() < 0.15:
            ref = net.ref("d6")
            net.add(f"--id={ref}", "create", "DHCP_Options", f'cidr="fd{k:02x}::/64"',
                    'options={"server_id"="0a:ff:00:00:00:01"}')
            net.add("set", "logical_switch_port", vifs[0][0], f"dhcpv6_options={ref}")
        if vifs and rng.random() < 0.2:
            ref = net.ref("dns")
            net.add(f"--id={ref}", "create", "DNS", f'records={{"vm{k}.example.org"="{vifs[0][2]}"}}')
            net.add("add", "logical_switch", sw, "dns_records", ref)
        if len(vifs) >= 2 and rng.random() < 0.1:
            net.add("fwd-group-add", f"fwd{k}", sw, f"10.{k}.0.250", "0a:00:00:00:fa:01",
                    vifs[0][0], vifs[1][0])
    for lr, port, ip in net.lrps[:3]:
        if rng.random() < 0.15:
            net.add("static-mac-binding-add", port, f"{ip[:-1]}99", "0a:00:00:00:99:99")
        if lr in net.dgps and net.dgps[lr] == port and rng.random() < 0.2:
            net.add("create", "BFD", f"logical_port={port}", 'dst_ip="172.20.0.254"')
    if rng.random() < 0.15:
        net.add("meter-add", "copp-meter", "drop", "100", "pktps")
        net.add("copp-add", "copp0", "arp", "copp-meter")
        if net.routers:
            net.add("lr-copp-add", "copp0", net.routers[0])
    if net.fixed_mac_prefix or rng.random() < 0.2:
        net.add("set", "NB_Global", ".", "options:mac_prefix=0a:bb:cc",
                "options:svc_monitor_mac=0a:bb:cc:00:00:01")
    if rng.random() < 0.1:
        net.add("set", "NB_Global", ".", "options:ignore_lsp_down=false")


def _extras(net: _Net) -> None:
    """Options and rows added on top of a built network, from a random stream of their own (so
    that adding here leaves the rest of every seed's network as it was)."""
    rng = net.rng
    for lr in net.routers:
        opts = []
        if rng.random() < 0.2:
            opts.append("options:always_learn_from_arp_request=false")
        if rng.random() < 0.2:
            opts.append("options:dynamic_neigh_routers=true")
        if rng.random() < 0.1:
            opts.append("options:lb_force_snat_ip=router_ip")
        if opts:
            net.add("set", "logical_router", lr, *opts)
    for lr, port, _ip in net.lrps:
        if port == net.dgps.get(lr):
            if rng.random() < 0.2:
                net.add("set", "logical_router_port", port, "options:redirect-type=bridged")
            if rng.random() < 0.15:
                net.add("set", "logical_router_port", port, "options:gateway_mtu=1450",
                        "options:gateway_mtu_bypass=udp")
        elif lr in net.dgps and rng.random() < 0.2:
            net.add("set", "logical_router_port", port, "options:reside-on-redirect-chassis=true")
    for lr in net.routers:
        k = net.routers.index(lr) + 1
        if rng.random() < 0.2:  # an ECMP route with symmetric replies, and one by output port
            for nh in (f"172.20.{k}.241", f"172.20.{k}.242"):
                ref = net.ref("r")
                net.add(f"--id={ref}", "create", "Logical_Router_Static_Route", 'ip_prefix="198.51.100.0/24"',
                        f'nexthop="{nh}"', "options:ecmp_symmetric_reply=true")
                net.add("add", "logical_router", lr, "static_routes", ref)
        if rng.random() < 0.2:
            ref = net.ref("r")
            net.add(f"--id={ref}", "create", "Logical_Router_Static_Route", 'ip_prefix="203.0.113.0/24"',
                    f'nexthop="172.20.{k}.243"', f'output_port="{lr}-ext{k}"')
            net.add("add", "logical_router", lr, "static_routes", ref)
        if rng.random() < 0.15:
            net.add("lr-policy-add", lr, "3000", "ip4.dst == 192.0.2.0/24", "reroute",
                    f"172.20.{k}.231,172.20.{k}.232")
        if rng.random() < 0.15 and net.vifs:
            sw = rng.choice(net.switches)
            if net.vifs[sw]:
                ref = net.ref("nat")
                net.add(f"--id={ref}", "create", "NAT", "type=dnat_and_snat", f'external_ip="fd20:{k:x}::100"',
                        f'logical_ip="fd{net.subnet[sw]:02x}::{net.subnet[sw]:x}"')
                net.add("add", "logical_router", lr, "nat", ref)
    for lb in net.lbs:
        r = rng.random()
        if r < 0.15:
            net.add("set", "load_balancer", lb, "options:affinity_timeout=60")
        elif r < 0.25:
            net.add("set", "load_balancer", lb, "options:event=true")
    if net.lbs and rng.random() < 0.2:
        vifs = [(sw, p, ip) for sw in net.switches for p, _m, ip in net.vifs[sw]]
        lb = net.lbs[0]
        if vifs:
            sw, p, ip = vifs[0]
            net.add("set", "load_balancer", lb, f'ip_port_mappings:"{ip}"="{p}:10.{net.subnet[sw]}.0.250"')
            hc = net.ref("hc")
            net.add(f"--id={hc}", "create", "Load_Balancer_Health_Check", 'vip="172.16.0.1:80"',
                    "options:interval=5", "options:timeout=20")
            net.add("add", "load_balancer", lb, "health_check", hc)
    for sw in net.switches:
        if net.vifs[sw] and rng.random() < 0.1:
            p = net.vifs[sw][0][0]
            m = net.ref("m")
            net.add(f"--id={m}", "create", "Mirror", f"name=mir{net.next()}", "type=gre", "sink=192.0.2.50",
                    f"filter={rng.choice(['from-lport', 'to-lport'])}", "index=1")
            net.add("add", "logical_switch_port", p, "mirror_rules", m)
        if rng.random() < 0.1:
            i = net.next()
            hg = net.ref("hg")
            hc = net.ref("hcx")
            net.add(f"--id={hc}", "create", "HA_Chassis", "chassis_name=hv2", "priority=10")
            net.add(f"--id={hg}", "create", "HA_Chassis_Group", f"name=ext-hag{i}", f"ha_chassis={hc}")
            net.add("lsp-add", sw, f"extp{i}")
            net.add("lsp-set-type", f"extp{i}", "external")
            net.add("lsp-set-addresses", f"extp{i}", f"{_mac(i, 7)} 10.{net.subnet[sw]}.0.{100 + i % 100}")
            net.add("set", "logical_switch_port", f"extp{i}", f"ha_chassis_group={hg}")
    if rng.random() < 0.15:
        net.add("set", "NB_Global", ".", "options:controller_event=true")


# --------------------------------------------------------------------------- 25.03's router features


def _router_2503(net: _Net) -> None:
    """NAT ``match`` / ``priority``, policy chains (on one router, when no other router has
    policies: see :mod:`ovn_northd_py.flows.lr_policy`) and DHCP relay (on switches whose VIFs all start with
    a MAC: the reference prints garbage for the others; never a relay without servers: the
    reference crashes)."""
    rng = net.rng
    for k, lr in enumerate(net.routers, start=1):
        sws = [sw for sw in net.switches if any(p == f"{lr}-{sw}" for _, p, _ in net.lrps)]
        for j in range(rng.randint(0, 2) if sws else 0):
            sw = rng.choice(sws)
            tag = f"nat2503-{lr}-{j}"
            ext = f"172.20.{k}.{150 + j}"
            if rng.random() < 0.5 or not net.vifs[sw]:
                cols = ["type=snat", f'logical_ip="10.{net.subnet[sw]}.0.0/24"']
            else:
                cols = [f"type={rng.choice(['dnat', 'dnat_and_snat'])}", f'logical_ip="{rng.choice(net.vifs[sw])[2]}"']
            ref = net.ref("nat")
            net.add(f"--id={ref}", "create", "NAT", f'external_ip="{ext}"', *cols, f"external_ids:tag={tag}")
            net.add("add", "logical_router", lr, "nat", ref)
            match = rng.choice(["tcp", "ip4.dst == 192.168.0.0/16", "udp.dst == 53", ""])
            net.ops.append(nb_json.update("NAT", {"match": match, "priority": rng.choice([0, 10, 100])},
                                          ids=("tag", tag)))
    # Chains only on a network where no other router has policies: the reference then also
    # prefixes some other routers' policies, which ones varying from run to run.
    with_policies = {c[1] for c in net.cmds if c[:1] == ["lr-policy-add"]}
    candidates = [k for k, lr in enumerate(net.routers) if not with_policies - {lr}]
    if candidates and rng.random() < 0.7:
        k = rng.choice(candidates)
        lr = net.routers[k]
        rules = [
            (3000, f"ip4.src == 10.{k + 1}.0.0/16", "jump", "", "c1"),
            (2900, "ip4.dst == 9.9.9.9", "jump", "", "nochain"),
            (500, "tcp.dst == 80", "drop", "c1", ""),
            (400, "ip4", rng.choice(["allow", "reroute"]), "c1", ""),
            (300, "udp", "jump", "c1", "c2"),
            (200, "udp.dst == 53", "allow", "c2", ""),
        ]
        for j, (prio, match, action, chain, jump) in enumerate(rng.sample(rules, k=rng.randint(2, len(rules)))):
            tag = f"pol2503-{j}"
            ref = net.ref("pol")
            net.add(f"--id={ref}", "create", "Logical_Router_Policy", f"priority={prio}", f'match="{match}"',
                    "action=allow", f"external_ids:tag={tag}")
            net.add("add", "logical_router", lr, "policies", ref)
            row: dict[str, object] = {"action": action}
            if chain:
                row["chain"] = chain
            if jump:
                row["jump_chain"] = jump
            if action == "reroute":
                row["nexthops"] = ["set", [f"172.20.{k + 1}.250"]]
            net.ops.append(nb_json.update("Logical_Router_Policy", row, ids=("tag", tag)))
    pairs = [(lr, sw, port) for lr, port, _ in net.lrps for sw in net.switches
             if port == f"{lr}-{sw}" and sw not in net.no_mac_first]
    for n, (lr, sw, port) in enumerate(rng.sample(pairs, k=min(len(pairs), rng.randint(0, 2)))):
        relay = f"relay{n}"
        server = "172.20.300.1" if net.bad(1 / 6) else f"172.20.{net.routers.index(lr) + 1}.253"
        net.ops += [nb_json.insert("DHCP_Relay", {"name": relay, "servers": server}, relay),
                    nb_json.update("Logical_Router_Port", {"dhcp_relay": ["named-uuid", relay]}, name=port)]
        net.add("set", "logical_switch", sw, f"other_config:dhcp_relay_port={sw}-{lr}")


_RELEASE_FEATURES = {"25.03": (_router_2503,)}


def random_network(seed: int, size: int = 4, release: str = "23.03") -> tuple[list[Cmd], list[nb_json.Op]]:
    """The ``ovn-nbctl`` commands of network ``seed`` (one transaction's order) and the JSON
    operations of ``release``'s newer columns that follow them."""
    net = _Net(random.Random(seed))
    for k in range(1, size + 1):
        _switch(net, k)
    for k in range(1, max(1, size // 2) + 1):
        _router(net, k)
    _lbs(net)
    _acls(net)
    _services(net)
    net.rng = random.Random(f"extras-{seed}")
    _extras(net)
    for feature in _RELEASE_FEATURES.get(release, ()):
        net.rng = random.Random(f"{feature.__name__}-{seed}")
        feature(net)
    return net.cmds, net.ops


def random_commands(seed: int, size: int = 4) -> list[Cmd]:
    """The ``ovn-nbctl`` commands of network ``seed`` (23.03's features), in one transaction's order."""
    return random_network(seed, size)[0]


# ---------------------------------------------------------------------------- NB 7.11 (OVN 25.03) ACLs


def acl_2503_ops(seed: int, switches: list[str], port_groups: list[str], router_lsps: list[str]) -> NbOps:
    """NB 7.11's ACL features for network ``seed`` (its own random stream, so the 23.03 part stays
    the same): Sample_Collector / Sample / Sampling_App rows, ACLs on ``switches`` and
    ``port_groups`` with tiers, ``pass``, ``sample_new`` / ``sample_est``, labels and
    ``persist-established`` (also where it means nothing: on ``allow``, or not "true"), and
    ``enable_router_port_acl`` on some of ``router_lsps``.  Written as raw operations: the
    host's ``ovn-nbctl`` may not know the columns."""
    rng = random.Random(f"acl2503-{seed}")
    ops = NbOps()
    if not switches:
        return ops
    collectors = [ops.insert("Sample_Collector", {"id": i, "name": f"c{i}", "probability": rng.choice([0, 100, 65535]),
                                                  "set_id": rng.choice([1, 7, 300])})
                  for i in range(1, rng.randint(1, 3) + 1)]
    samples = [ops.insert("Sample", {"metadata": 100 + i,
                                     "collectors": ops.set(*rng.sample(collectors, k=rng.randint(0, len(collectors))))})
               for i in range(rng.randint(1, 4))]
    for app, app_id in (("acl-new", 1), ("acl-est", 2), ("drop", 3)):
        if rng.random() < 0.6:
            ops.insert("Sampling_App", {"type": app, "id": app_id})
    acls: dict[tuple[str, str], list[list[str]]] = {}
    for j in range(rng.randint(1, 8)):
        target = rng.choice([("Logical_Switch", s) for s in switches] + [("Port_Group", p) for p in port_groups])
        options: dict[str, str] = {}
        if rng.random() < 0.3:
            options["persist-established"] = rng.choice(["true", "true", "false", "yes"])
        if rng.random() < 0.2:
            options["apply-after-lb"] = "true"
        row = {
            "direction": rng.choice(["from-lport", "to-lport"]), "priority": rng.choice([100, 200, 1000, 32000]),
            "match": rng.choice(["ip4", "tcp.dst == 80", "udp && udp.dst == 53", "icmp6", "ip4.src == 10.1.0.0/16"]),
            "action": rng.choice(["allow", "allow-related", "allow-related", "allow-stateless", "drop", "reject",
                                  "pass"]),
            "tier": rng.choice([0, 0, 0, 1, 2, 3]), "label": rng.choice([0, 0, 0, 9]),
            "options": ops.map(options), "external_ids": ops.map({"gen": f"acl2503-{j}"}),
        }
        for col in ("sample_new", "sample_est"):
            if rng.random() < 0.4:
                row[col] = rng.choice(samples)
        acls.setdefault(target, []).append(ops.insert("ACL", row))
    for (table, name), refs in acls.items():
        ops.add_to(table, name, "acls", *refs)
    for lsp in router_lsps:
        if rng.random() < 0.3:
            ops.ops.append({"op": "mutate", "table": "Logical_Switch_Port", "where": [["name", "==", lsp]],
                            "mutations": [["options", "insert", ops.map({"enable_router_port_acl": "true"})]]})
    return ops


def add_acl_2503(remote: str, seed: int) -> None:
    """:func:`acl_2503_ops` on the network in NB ``remote`` (nothing when its schema is older than 7.11)."""
    if nb_schema_version(remote) < (7, 11):
        return
    names = sorted(r["name"] for r in select(remote, "Logical_Switch", ["name"]))
    pgs = sorted(r["name"] for r in select(remote, "Port_Group", ["name"]))
    routers = sorted(r["name"] for r in select(remote, "Logical_Switch_Port", ["name", "type"]) if r["type"] == "router")
    acl_2503_ops(seed, names, pgs, routers).transact(remote)




def build_random_nb(remote: str, seed: int, size: int = 4) -> None:
    """Network ``seed`` in NB ``remote``, with 25.03's features when its schema is 7.11 or newer."""
    release = "25.03" if nb_schema_version(remote) >= (7, 11) else "23.03"
    cmds, ops = random_network(seed, size, release)
    args: list[str] = []
    for i, cmd in enumerate(cmds):
        args += (["--"] if i else []) + cmd
    nbctl(remote, *args)
    add_acl_2503(remote, seed)
    nb_json.transact(remote, ops)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build_random_nb(argv[0], int(argv[1]), int(argv[2]) if len(argv) > 2 else 4)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
