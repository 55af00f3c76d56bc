"""An ovn-kubernetes-like Northbound: what ovnkube-master (~2023, no interconnect, shared gateway) creates.

    python -m ovn_northd_py.devtools.gen_ovnk NB_REMOTE [NODES PODS_PER_NODE SERVICES POLICIES]
    python -m ovn_northd_py.parity --script ovn_northd_py/devtools/gen_ovnk.py NB_REMOTE 20

Topology (node ``n`` = ``node<i>``, cluster subnet 10.128.0.0/14, node subnet 10.128.<i>.0/24, join
network 100.64.0.0/16, node network 172.18.0.0/16):

* ``ovn_cluster_router`` (distributed) with ``rtoj-ovn_cluster_router`` (100.64.0.1) on the ``join``
  switch and ``rtos-<n>`` (10.128.<i>.1) per node switch ``<n>``;
* per node the switch ``<n>`` (``other_config:subnet``, ``exclude_ips``) with ``stor-<n>``, the management
  port ``k8s-<n>`` (10.128.<i>.2) and pods ``<ns>_<pod>`` (addresses and port security, ``0a:58`` MACs);
* per node the gateway router ``GR_<n>`` (``options:chassis``, ``lb_force_snat_ip=router_ip``,
  ``snat-ct-zone=0``, ``always_learn_from_arp_request=false``, ``dynamic_neigh_routers=true``) on ``join``
  (``rtoj-GR_<n>``) and on the external switch ``ext_<n>`` (``rtoe-GR_<n>``, a localnet port); SNAT of the
  cluster subnet to the node IP, a default route, a route to the cluster subnet;
* static routes (src-ip per node subnet, dst-ip per GR join IP) and policies (1004 reroute of
  node-bound traffic to the management port, 102 allow east-west, 101 allow to the nodes) on
  ``ovn_cluster_router``;
* services as load balancers in ``clusterLBGroup`` (switches and GRs), ``clusterSwitchLBGroup`` and
  ``clusterRouterLBGroup``, with ``reject``, ``event=false``, ``hairpin_snat_ip``, ``skip_snat`` and
  ``affinity_timeout`` variants; NodePort-like per-node load balancers on the node IP (shared by the GR
  and the node switch, or GR-only with ``skip_snat``);
* namespaces as address sets (``a<hash>``), network policies as port groups (``a<hash>``) with ACLs:
  per-policy ingress/egress allow-related, per-namespace default deny (drop + ARP allow, egress
  ``apply-after-lb``), cluster-wide multicast deny, management-port allow; ``acl-logging`` meter.

Everything is deterministic from ``seed``; a handful of ``ovn-nbctl`` invocations build it.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass

from ovn_northd_py.devtools.servers import nbctl  # absolute: the file also runs as a script

Cmd = list[str]
CLUSTER_SUBNET = "10.128.0.0/14"
JOIN_CIDR_LEN = 16
NODE_GW = "172.18.0.1"
HAIRPIN_SNAT_IP = "169.254.169.5 fd69::5"
NAMESPACES = 5
EGRESS_POLICY_MATCH = (
    "(ip4.src == $a4548040316634674295 || ip4.src == $a13607449821398607916) && ip4.dst == $a14918748166599097711"
)
BATCH = 1500  # commands per ovn-nbctl invocation (symbolic @ids never cross a batch)


def fnv_hash(text: str) -> str:
    """ovn-kubernetes' ``a<hash>`` names: ``a`` + the decimal FNV-1a 64-bit hash."""
    h = 0xCBF29CE484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"a{h}"


def ip_mac(ip: str) -> str:
    """ovn-kubernetes derives pod and management-port MACs from the IP: ``0a:58:`` + the 4 bytes."""
    return "0a:58:" + ":".join(f"{int(b):02x}" for b in ip.split("."))


@dataclass(frozen=True, slots=True)
class Node:
    i: int

    @property
    def name(self) -> str:
        return f"node{self.i}"

    @property
    def gr(self) -> str:
        return f"GR_{self.name}"

    @property
    def subnet(self) -> str:
        return f"10.{128 + self.i // 256}.{self.i % 256}.0/24"

    def pod_ip(self, host: int) -> str:
        return f"10.{128 + self.i // 256}.{self.i % 256}.{host}"

    @property
    def join_ip(self) -> str:
        return f"100.64.{(self.i + 2) // 256}.{(self.i + 2) % 256}"

    @property
    def node_ip(self) -> str:
        return f"172.18.{(self.i + 2) // 256}.{(self.i + 2) % 256}"

    @property
    def chassis(self) -> str:
        return f"chassis-{self.i:04d}"


@dataclass(slots=True)
class Pod:
    ns: str
    name: str
    node: Node
    ip: str

    @property
    def lsp(self) -> str:
        return f"{self.ns}_{self.name}"


def node_commands(n: Node) -> list[Cmd]:
    """One node's topology (without its load-balancer groups): node switch and its router and
    management ports, gateway router, join and external switch ports, SNAT, routes, policies."""
    sw, gr, ext = n.name, n.gr, f"ext_{n.name}"
    gw_ip, mgmt_ip = n.pod_ip(1), n.pod_ip(2)
    return [
        ["ls-add", sw],
        ["set", "logical_switch", sw, f"other_config:subnet={n.subnet}",
         f"other_config:exclude_ips={mgmt_ip}"],
        # node switch <-> ovn_cluster_router
        ["lrp-add", "ovn_cluster_router", f"rtos-{sw}", ip_mac(gw_ip), f"{gw_ip}/24"],
        ["lsp-add", sw, f"stor-{sw}"],
        ["lsp-set-type", f"stor-{sw}", "router"],
        ["lsp-set-addresses", f"stor-{sw}", "router"],
        ["lsp-set-options", f"stor-{sw}", f"router-port=rtos-{sw}"],
        # management port
        ["lsp-add", sw, f"k8s-{sw}"],
        ["lsp-set-addresses", f"k8s-{sw}", f"{ip_mac(mgmt_ip)} {mgmt_ip}"],
        # gateway router
        ["lr-add", gr],
        ["set", "logical_router", gr, f"options:chassis={n.chassis}", "options:lb_force_snat_ip=router_ip",
         "options:snat-ct-zone=0", "options:always_learn_from_arp_request=false",
         "options:dynamic_neigh_routers=true", f"external_ids:physical_ip={n.node_ip}"],
        ["lrp-add", gr, f"rtoj-{gr}", ip_mac(n.join_ip), f"{n.join_ip}/{JOIN_CIDR_LEN}"],
        ["lsp-add", "join", f"jtor-{gr}"],
        ["lsp-set-type", f"jtor-{gr}", "router"],
        ["lsp-set-addresses", f"jtor-{gr}", "router"],
        ["lsp-set-options", f"jtor-{gr}", f"router-port=rtoj-{gr}"],
        # external switch
        ["ls-add", ext],
        ["lsp-add", ext, f"breth0_{sw}"],
        ["lsp-set-type", f"breth0_{sw}", "localnet"],
        ["lsp-set-addresses", f"breth0_{sw}", "unknown"],
        ["lsp-set-options", f"breth0_{sw}", "network_name=physnet"],
        ["lrp-add", gr, f"rtoe-{gr}", f"02:42:ac:12:{(n.i + 2) // 256:02x}:{(n.i + 2) % 256:02x}",
         f"{n.node_ip}/16"],
        ["lsp-add", ext, f"etor-{gr}"],
        ["lsp-set-type", f"etor-{gr}", "router"],
        ["lsp-set-addresses", f"etor-{gr}", "router"],
        ["lsp-set-options", f"etor-{gr}", f"router-port=rtoe-{gr}", "nat-addresses=router",
         "exclude-lb-vips-from-garp=true"],
        ["lr-nat-add", gr, "snat", n.node_ip, CLUSTER_SUBNET],
        ["lr-route-add", gr, "0.0.0.0/0", NODE_GW, f"rtoe-{gr}"],
        ["lr-route-add", gr, CLUSTER_SUBNET, "100.64.0.1"],
        # ovn_cluster_router routes and policies for this node
        ["--policy=src-ip", "lr-route-add", "ovn_cluster_router", n.subnet, n.join_ip],
        ["lr-route-add", "ovn_cluster_router", f"{n.join_ip}/32", n.join_ip],
        ["lr-policy-add", "ovn_cluster_router", "1004",
         f'inport == "rtos-{sw}" && ip4.dst == {n.node_ip} /* {sw} */', "reroute", mgmt_ip],
        ["lr-policy-add", "ovn_cluster_router", "101",
         f"ip4.src == {CLUSTER_SUBNET} && ip4.dst == {n.node_ip}/32", "allow"],
    ]


def node_delete_commands(n: Node) -> list[Cmd]:
    """What ovn-kubernetes deletes when a node goes: everything :func:`node_commands` made."""
    sw, gr = n.name, n.gr
    return [
        ["ls-del", sw], ["ls-del", f"ext_{sw}"], ["lr-del", gr], ["lsp-del", f"jtor-{gr}"],
        ["lrp-del", f"rtos-{sw}"],
        ["--policy=src-ip", "lr-route-del", "ovn_cluster_router", n.subnet],
        ["lr-route-del", "ovn_cluster_router", f"{n.join_ip}/32"],
        ["lr-policy-del", "ovn_cluster_router", "1004", f'inport == "rtos-{sw}" && ip4.dst == {n.node_ip} /* {sw} */'],
        ["lr-policy-del", "ovn_cluster_router", "101", f"ip4.src == {CLUSTER_SUBNET} && ip4.dst == {n.node_ip}/32"],
    ]


def _topology(nodes: list[Node]) -> list[Cmd]:
    c: list[Cmd] = [
        ["set", "nb_global", ".", "options:controller_event=false"],
        ["lr-add", "ovn_cluster_router"],
        ["set", "logical_router", "ovn_cluster_router", "external_ids:k8s-cluster-router=yes",
         "external_ids:k8s-ovn-topo-version=8"],
        ["ls-add", "join"],
        ["lrp-add", "ovn_cluster_router", "rtoj-ovn_cluster_router", "0a:58:64:40:00:01",
         f"100.64.0.1/{JOIN_CIDR_LEN}"],
        ["lsp-add", "join", "jtor-ovn_cluster_router"],
        ["lsp-set-type", "jtor-ovn_cluster_router", "router"],
        ["lsp-set-addresses", "jtor-ovn_cluster_router", "router"],
        ["lsp-set-options", "jtor-ovn_cluster_router", "router-port=rtoj-ovn_cluster_router"],
        ["meter-add", "acl-logging", "drop", "20", "pktps"],
        ["set", "meter", "acl-logging", "fair=true"],
    ]
    for n in nodes:
        c += node_commands(n)
    c += [
        ["lr-policy-add", "ovn_cluster_router", "102",
         f"ip4.src == {CLUSTER_SUBNET} && ip4.dst == {CLUSTER_SUBNET}", "allow"],
        ["lr-policy-add", "ovn_cluster_router", "102",
         f"ip4.src == {CLUSTER_SUBNET} && ip4.dst == 100.64.0.0/16", "allow"],
        ["lr-policy-add", "ovn_cluster_router", "102", EGRESS_POLICY_MATCH, "allow", "pkt_mark=1008"],
    ]
    return c


def _pods(nodes: list[Node], pods_per_node: int, rng: random.Random) -> tuple[list[Pod], list[Cmd]]:
    pods: list[Pod] = []
    c: list[Cmd] = []
    for n in nodes:
        for j in range(pods_per_node):
            ns = f"ns{rng.randrange(NAMESPACES)}"
            pod = Pod(ns, f"pod-{n.i}-{j}", n, n.pod_ip(3 + j))
            pods.append(pod)
            addr = f"{ip_mac(pod.ip)} {pod.ip}"
            c += [
                ["lsp-add", n.name, pod.lsp],
                ["lsp-set-addresses", pod.lsp, addr],
                ["lsp-set-port-security", pod.lsp, addr],
                ["lsp-set-options", pod.lsp, f"requested-chassis={n.name}", f"iface-id-ver={pod.name}"],
                ["set", "logical_switch_port", pod.lsp, f"external_ids:namespace={ns}", "external_ids:pod=true"],
            ]
    return pods, c


def _vip_map(vips: dict[str, str]) -> list[str]:
    return [f'vips:"{vip}"="{backends}"' for vip, backends in vips.items()]


def _lb(ref: str, name: str, proto: str, vips: dict[str, str], options: dict[str, str]) -> Cmd:
    cmd = ["--id=@" + ref, "create", "load_balancer", f"name={name}", f"protocol={proto}"]
    cmd += _vip_map(vips)
    cmd += [f'options:{k}="{v}"' for k, v in options.items()]
    return [*cmd, "external_ids:k8s.ovn.org/kind=Service", f'external_ids:"k8s.ovn.org/owner"="{name}"']


def _services(nodes: list[Node], pods: list[Pod], services: int, rng: random.Random) -> list[list[Cmd]]:
    """Chunks of commands, each self-contained (its ``@ids`` resolve inside it): first the three
    groups and their attachment to every node switch and gateway router, then one chunk per
    service (its load balancers, their groups, the per-node NodePort attachments)."""
    groups = ("clusterLBGroup", "clusterSwitchLBGroup", "clusterRouterLBGroup")
    first: list[Cmd] = [["--id=@" + g, "create", "load_balancer_group", f"name={g}"] for g in groups]
    for n in nodes:
        first.append(["add", "logical_switch", n.name, "load_balancer_group", "@clusterLBGroup",
                      "@clusterSwitchLBGroup"])
        first.append(["add", "logical_router", n.gr, "load_balancer_group", "@clusterLBGroup",
                      "@clusterRouterLBGroup"])
    chunks: list[list[Cmd]] = [first]
    for s in range(services):
        c: list[Cmd] = []
        proto = "udp" if s % 7 == 3 else "tcp"
        name = f"Service_ns{s % NAMESPACES}/svc{s}_{proto.upper()}_cluster"
        cip = f"10.96.{(s + 1) // 256}.{(s + 1) % 256}"
        port, target = 80 + s % 3 * 363, 8080 + s % 5
        nback = 0 if s % 11 == 5 else rng.randint(1, 4)
        backs = ",".join(f"{p.ip}:{target}" for p in rng.sample(pods, min(nback, len(pods))))
        vips = {f"{cip}:{port}": backs}
        if s % 4 == 1:  # a second port
            vips[f"{cip}:{port + 1}"] = ",".join(f"{p.ip}:{target + 1}" for p in rng.sample(pods, 2))
        opts = {"reject": "true", "event": "false"}
        if s % 3 == 0:
            opts["hairpin_snat_ip"] = HAIRPIN_SNAT_IP
        if s % 6 == 2:
            opts["skip_snat"] = "true"
        if s % 9 == 4:
            opts["affinity_timeout"] = "10800"
        ref = f"svc{s}"
        c.append(_lb(ref, name, proto, vips, opts))
        group = "clusterSwitchLBGroup" if s % 10 == 7 else "clusterRouterLBGroup" if s % 10 == 8 else "clusterLBGroup"
        c.append(["add", "load_balancer_group", group, "load_balancer", "@" + ref])
        if s % 5 == 0 and backs:  # NodePort
            nodeport = 30000 + s
            for n in nodes:
                local = s % 10 == 0
                kind = "node_router" if local else "node_router+switch"
                nref = f"np{s}n{n.i}"
                nopts = dict(opts, skip_snat="true") if local else dict(opts)
                c.append(_lb(nref, f"Service_ns{s % NAMESPACES}/svc{s}_{proto.upper()}_{kind}_{n.name}", proto,
                             {f"{n.node_ip}:{nodeport}": backs}, nopts))
                c.append(["add", "logical_router", n.gr, "load_balancer", "@" + nref])
                if not local:
                    c.append(["add", "logical_switch", n.name, "load_balancer", "@" + nref])
        chunks.append(c)
    return chunks


def _address_set(name: str, ext_name: str, ips: list[str]) -> Cmd:
    addrs = ",".join(f'"{ip}"' for ip in ips)
    return ["create", "address_set", f"name={name}", f"addresses=[{addrs}]", f"external_ids:name={ext_name}"]


def _acl(pg: str, direction: str, prio: int, match: str, verdict: str, *, name: str = "", log: bool = False,
         severity: str = "", after_lb: bool = False) -> Cmd:
    opts = ["--type=port-group"]
    if name:
        opts.append(f"--name={name}")
    if log:
        opts += ["--log", "--meter=acl-logging"]
        if severity:
            opts.append(f"--severity={severity}")
    if after_lb:
        opts.append("--apply-after-lb")
    return [*opts, "acl-add", pg, direction, str(prio), match, verdict]


MCAST = "(ip4.mcast || mldv1 || mldv2 || (ip6.dst[120..127] == 0xff && ip6.dst[116] == 1))"


def _policies(nodes: list[Node], pods: list[Pod], policies: int, rng: random.Random) -> list[Cmd]:
    c: list[Cmd] = []
    by_ns: dict[str, list[Pod]] = {f"ns{k}": [] for k in range(NAMESPACES)}
    for p in pods:
        by_ns[p.ns].append(p)
    ns_set = {ns: fnv_hash(f"{ns}_v4") for ns in by_ns}
    for ns, members in by_ns.items():
        c.append(_address_set(ns_set[ns], f"{ns}_v4", [p.ip for p in members]))
    # the address sets the 102 policy on ovn_cluster_router names (egress IP / node IPs)
    c.append(_address_set("a4548040316634674295", "egressip-served-pods_v4", [pods[0].ip] if pods else []))
    c.append(_address_set("a13607449821398607916", "egress-service-served-pods_v4", []))
    c.append(_address_set("a14918748166599097711", "node-ips_v4", [n.node_ip for n in nodes]))
    # cluster-wide port group: every management port; multicast denied
    mgmt = [f"k8s-{n.name}" for n in nodes]
    c += [
        ["pg-add", "clusterPortGroup", *mgmt, *(p.lsp for p in pods)],
        ["pg-add", "clusterRtrPortGroup", *(f"stor-{n.name}" for n in nodes)],
        _acl("clusterPortGroup", "to-lport", 1011, f"outport == @clusterPortGroup && {MCAST}", "drop"),
        _acl("clusterPortGroup", "from-lport", 1011, f"inport == @clusterPortGroup && {MCAST}", "drop",
             after_lb=True),
    ]
    # the management port may reach every pod of its node (a switch ACL, as older ovn-k did)
    for n in nodes:
        c.append(["acl-add", n.name, "to-lport", "1001", f"ip4.src=={n.pod_ip(2)}", "allow-related"])
    # per-namespace default deny (namespaces with policies)
    ns_with_policy = sorted({f"ns{k % NAMESPACES}" for k in range(policies)})
    for k, ns in enumerate(ns_with_policy):
        ports = [p.lsp for p in by_ns[ns]]
        ing, egr = fnv_hash(f"{ns}_ingressDefaultDeny"), fnv_hash(f"{ns}_egressDefaultDeny")
        log = k % 2 == 0
        c += [
            ["pg-add", ing, *ports], ["pg-add", egr, *ports],
            ["set", "port_group", ing, f"external_ids:name={ns}_ingressDefaultDeny"],
            ["set", "port_group", egr, f"external_ids:name={ns}_egressDefaultDeny"],
            _acl(ing, "to-lport", 1000, f"outport == @{ing}", "drop", name=f"{ns}_ingressDefaultDeny", log=log,
                 severity="warning"),
            _acl(ing, "to-lport", 1001, f"outport == @{ing} && (arp || nd)", "allow",
                 name=f"{ns}_ARPallowPolicy"),
            _acl(egr, "from-lport", 1000, f"inport == @{egr}", "drop", name=f"{ns}_egressDefaultDeny", log=log,
                 after_lb=True),
            _acl(egr, "from-lport", 1001, f"inport == @{egr} && (arp || nd)", "allow",
                 name=f"{ns}_ARPallowPolicy", after_lb=True),
        ]
    for k in range(policies):
        ns = f"ns{k % NAMESPACES}"
        pol = f"policy{k}"
        pg = fnv_hash(f"{ns}_{pol}")
        selected = [p.lsp for p in by_ns[ns] if rng.random() < 0.6]
        c += [["pg-add", pg, *selected], ["set", "port_group", pg, f"external_ids:name={ns}_{pol}"]]
        peers = sorted(rng.sample(sorted(ns_set.values()), 2))
        src = "ip4.src == {" + ", ".join(f"${a}" for a in peers) + "}"
        log = k % 3 == 0
        c.append(_acl(pg, "to-lport", 1001, f"{src} && outport == @{pg}", "allow-related",
                      name=f"{ns}_{pol}_0", log=log, severity="info"))
        if k % 2 == 0:
            port = 8000 + k
            c.append(_acl(pg, "to-lport", 1001, f"ip4.src == 10.0.0.0/8 && tcp && tcp.dst=={port} && "
                          f"outport == @{pg}", "allow-related", name=f"{ns}_{pol}_1"))
        if k % 3 == 1:
            c.append(_acl(pg, "from-lport", 1001, f"ip4.dst == {CLUSTER_SUBNET} && inport == @{pg}",
                          "allow-related", name=f"{ns}_{pol}_egress", after_lb=True))
    return c


def _run(remote: str, cmds: list[Cmd], split: bool = True) -> None:
    step = BATCH if split else max(len(cmds), 1)
    for start in range(0, len(cmds), step):
        args: list[str] = []
        for i, cmd in enumerate(cmds[start:start + step]):
            args += (["--"] if i else []) + cmd
        nbctl(remote, *args, timeout=300)


def build_ovnk_nb(remote: str, nodes: int = 20, pods_per_node: int = 10, services: int = 50,
                  policies: int = 10, seed: int = 0) -> None:
    """Fill the (empty) NB at ``remote`` with an ovn-kubernetes-like network."""
    rng = random.Random(seed)
    node_list = [Node(i) for i in range(nodes)]
    _run(remote, _topology(node_list))
    pods, pod_cmds = _pods(node_list, pods_per_node, rng)
    _run(remote, pod_cmds)
    chunks = _services(node_list, pods, services, rng)
    batch: list[Cmd] = []
    for chunk in chunks:  # chunks are never split: their @ids must resolve
        if batch and len(batch) + len(chunk) > BATCH:
            _run(remote, batch, split=False)
            batch = []
        batch += chunk
    if batch:
        _run(remote, batch, split=False)
    _run(remote, _policies(node_list, pods, policies, rng))


def ovnk_names() -> dict[str, str]:
    """Rows the latency benchmark's change kinds touch (present at any scale): ``sw`` the first node's
    switch, ``lr`` the cluster router, ``gw`` the first node's gateway router, ``pod`` a port the
    benchmark creates itself (``prepare``), ``ns_as`` namespace ns0's address set, ``lb_group`` the
    shared load-balancer group, ``cluster_pg`` the cluster-wide port group."""
    n = Node(0)
    return {"sw": n.name, "lr": "ovn_cluster_router", "gw": n.gr, "pod": f"{n.name}-bench-anchor",
            "ns_as": fnv_hash("ns0_v4"), "lb_group": "clusterLBGroup", "cluster_pg": "clusterPortGroup"}


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 6:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    nums = [int(a) for a in argv[1:]]
    build_ovnk_nb(argv[0], *nums)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
