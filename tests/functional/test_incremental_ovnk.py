"""The changes an ovn-kubernetes control plane makes all day, mixed at random on the ovn-k-like
network (gen_ovnk): pods added and deleted, services added, their endpoints changed and removed,
network-policy ACLs and address sets, egress NAT, routes and policies, gateway-router port
updates.  Under ``--check-incremental=1`` incremental always equals a full recompute, and none of
these changes recomputes the northd or lflow nodes."""

from __future__ import annotations

import os
import random

import pytest

from ovn_northd_py.devtools.gen_ovnk import (
    CLUSTER_SUBNET,
    Node,
    build_ovnk_nb,
    ip_mac,
    node_commands,
    node_delete_commands,
)
from ovn_northd_py.devtools.testing import (
    apply_checked,
    checked_daemon,
    metric,
    node_runs,
)

NODES = 3


@pytest.fixture
def ovnk(env):
    build_ovnk_nb(env.nb.remote, nodes=NODES, pods_per_node=4, services=12, policies=3, seed=5)
    with checked_daemon(env) as ctx:
        yield ctx


def _group_uuid(env, name: str) -> str:
    return env.nbctl("--bare", "--columns=_uuid", "find", "load_balancer_group", f"name={name}").strip()


def random_ovnk_batches(env, seed: int, total: int) -> list[list[list[str]]]:
    rnd = random.Random(seed)
    nodes = [Node(i) for i in range(NODES)]
    cluster_grp = _group_uuid(env, "clusterLBGroup")
    pods: list[tuple[str, str]] = []  # (port, ip)
    services: list[str] = []
    acls: list[tuple[str, str]] = []
    nats: list[tuple[str, str]] = []
    routes: list[tuple[str, str]] = []
    batches: list[list[list[str]]] = []
    for n in range(1, total + 1):
        node = rnd.choice(nodes)
        k = rnd.random()
        if k < 0.25 or not pods:
            ip = node.pod_ip(100 + n % 150)
            name = f"ns{n % 3}_rp{n}"
            pods.append((name, ip))
            batches.append([["lsp-add", node.name, name], ["lsp-set-addresses", name, f"{ip_mac(ip)} {ip}"],
                            ["lsp-set-port-security", name, f"{ip_mac(ip)} {ip}"]])
        elif k < 0.35:
            name, _ = pods.pop(rnd.randrange(len(pods)))
            batches.append([["lsp-del", name]])
        elif k < 0.47:
            svc = f"rsvc{n}"
            backs = ",".join(f"{ip}:8080" for _, ip in rnd.sample(pods, min(len(pods), rnd.randint(0, 3))))
            opts = rnd.choice([["options:reject=true"], ["options:skip_snat=true"], ["options:affinity_timeout=60"],
                               []])
            batches.append([["--id=@lb", "create", "load_balancer", f"name={svc}", "protocol=tcp",
                             f'vips:"10.96.200.{n % 250}:80"="{backs}"', *opts],
                            ["add", "load_balancer_group", cluster_grp, "load_balancer", "@lb"]])
            services.append(svc)
        elif k < 0.57 and services:
            svc = rnd.choice(services)
            backs = ",".join(f"{ip}:8080" for _, ip in rnd.sample(pods, min(len(pods), rnd.randint(1, 3))))
            batches.append([["set", "load_balancer", svc, f'vips:"10.96.201.{n % 250}:443"="{backs}"']])
        elif k < 0.62 and services:
            batches.append([["lb-del", services.pop(rnd.randrange(len(services)))]])
        elif k < 0.72:
            _, ip = rnd.choice(pods)
            match = f"ip4.src == {ip} && tcp.dst == {1000 + n}"
            acls.append((node.name, match))
            batches.append([["acl-add", node.name, "to-lport", "1001", match, rnd.choice(["allow-related", "drop"])]])
        elif k < 0.76 and acls:
            sw, match = acls.pop(rnd.randrange(len(acls)))
            batches.append([["acl-del", sw, "to-lport", "1001", match]])
        elif k < 0.8:
            _, ip = rnd.choice(pods)
            batches.append([["add", "address_set", rnd.choice(["a_ns0", "a_ns1"]), "addresses", f'"{ip}"']])
        elif k < 0.85 and [ip for _, ip in pods if (node.gr, ip) not in nats]:
            ip = rnd.choice([ip for _, ip in pods if (node.gr, ip) not in nats])
            ext = f"172.18.9.{n % 250}"
            nats.append((node.gr, ip))
            batches.append([["--may-exist", "lr-nat-add", node.gr, "snat", ext, ip]])
        elif k < 0.88 and nats:
            gr, ip = nats.pop(rnd.randrange(len(nats)))
            batches.append([["--if-exists", "lr-nat-del", gr, "snat", ip]])
        elif k < 0.93:
            prefix = f"10.250.{n % 250}.0/24"
            routes.append(("ovn_cluster_router", prefix))
            batches.append([["--may-exist", "lr-route-add", "ovn_cluster_router", prefix, node.join_ip]])
        elif k < 0.95 and routes:
            r, prefix = routes.pop(rnd.randrange(len(routes)))
            batches.append([["--if-exists", "lr-route-del", r, prefix]])
        else:
            batches.append([["set", "logical_router_port", f"rtoj-{node.gr}",
                             f"options:gateway_mtu={rnd.choice([1400, 1500])}"]])
    return batches


def test_ovnk_churn_incremental_equals_recompute(ovnk):
    env, d, port = ovnk
    # Address sets the churn adds to (created like ovn-k's namespace sets).
    env.nbctl("create", "address_set", "name=a_ns0", "--", "create", "address_set", "name=a_ns1")
    assert CLUSTER_SUBNET
    seed = int(os.environ.get("OVN_TEST_SEED", "20261130"))
    batches = random_ovnk_batches(env, seed, 150)
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    done: list[list[list[str]]] = []
    for batch in batches:
        apply_checked(env, d, batch, done, seed)
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= len(done) // 2
    assert {n: node_runs(port, n, "recompute") for n in before} == before


def test_ovnk_node_add_and_delete_need_no_recompute(ovnk):
    """A node joining (its switch, gateway router, join and external ports, SNAT, routes,
    policies, the shared load-balancer groups) and leaving again: no node recomputes."""
    env, d, port = ovnk
    node = Node(NODES + 1)
    add = [*node_commands(node),
           ["add", "logical_switch", node.name, "load_balancer_group", _group_uuid(env, "clusterLBGroup"),
            _group_uuid(env, "clusterSwitchLBGroup")],
           ["add", "logical_router", node.gr, "load_balancer_group", _group_uuid(env, "clusterLBGroup"),
            _group_uuid(env, "clusterRouterLBGroup")]]
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow", "sb_sync")}
    done: list[list[list[str]]] = []
    apply_checked(env, d, add, done, 0)
    apply_checked(env, d, node_delete_commands(node), done, 0)
    apply_checked(env, d, add, done, 0)
    assert {n: node_runs(port, n, "recompute") for n in before} == before
    assert node.name in env.sbctl("--bare", "--columns=external_ids", "list", "datapath_binding")


def test_ovnk_node_delete_plans_only_the_flows_it_touches(ovnk):
    """Deleting a node's datapaths: the flow writer's plan still covers only the changed flows
    (every flow and load balancer naming the deleted Datapath_Binding rows is among them)."""
    env, d, port = ovnk
    node = Node(NODES + 2)
    done: list[list[list[str]]] = []
    apply_checked(env, d, node_commands(node), done, 0)
    full = metric(port, "ovn_northd_py_flow_plans_total", 'kind="full"')
    apply_checked(env, d, node_delete_commands(node), done, 0)
    assert metric(port, "ovn_northd_py_flow_plans_total", 'kind="full"') == full
    assert node.gr not in env.sbctl("--bare", "--columns=external_ids", "list", "datapath_binding")


def test_random_node_joins_and_leaves_incremental_equals_recompute(ovnk):
    """Nodes joining and leaving in a random order, sometimes with a route or policy change of
    ovn_cluster_router or a gateway-router port update in the same transaction: each step
    incremental equals a full recompute (the cluster router's scope is rebuilt once, by the
    router-port handling; its routes and policies are not rebuilt again by the routes hook)."""
    env, d, port = ovnk
    seed = int(os.environ.get("OVN_TEST_SEED", "20261203"))
    rnd = random.Random(seed)
    groups = (_group_uuid(env, "clusterLBGroup"), _group_uuid(env, "clusterSwitchLBGroup"),
              _group_uuid(env, "clusterRouterLBGroup"))
    spare = [Node(NODES + 10 + i) for i in range(4)]
    present: list[Node] = []
    before = {n: node_runs(port, n, "recompute") for n in ("northd", "lflow")}
    done: list[list[list[str]]] = []
    for step in range(12):
        if present and (not spare or rnd.random() < 0.45):
            node = present.pop(rnd.randrange(len(present)))
            batch = node_delete_commands(node)
            spare.append(node)
        else:
            node = spare.pop(rnd.randrange(len(spare)))
            batch = [*node_commands(node),
                     ["add", "logical_switch", node.name, "load_balancer_group", groups[0], groups[1]],
                     ["add", "logical_router", node.gr, "load_balancer_group", groups[0], groups[2]]]
            present.append(node)
        extra = rnd.random()
        cmd: list[str] | None = None
        if extra < 0.25:
            cmd = ["--may-exist", "lr-route-add", "ovn_cluster_router", f"10.251.{step}.0/24", "100.64.0.2"]
        elif extra < 0.4:
            cmd = ["--if-exists", "lr-route-del", "ovn_cluster_router", f"10.251.{step - 1}.0/24"]
        elif extra < 0.55:
            cmd = ["lr-policy-add", "ovn_cluster_router", "1500", f"ip4.src == 10.252.{step}.0/24", "allow"]
        elif extra < 0.65:
            cmd = ["set", "logical_router_port", f"rtoj-{Node(rnd.randrange(NODES)).gr}",
                   f"options:gateway_mtu={rnd.choice([1400, 1500])}"]
        if cmd is not None:
            batch.insert(rnd.choice([0, len(batch)]), cmd)
        apply_checked(env, d, batch, done, seed)
    assert {n: node_runs(port, n, "recompute") for n in before} == before
