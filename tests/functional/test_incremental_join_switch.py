"""Routers joining and leaving a switch of router-type ports only (ovn-kubernetes' join switch, a
transit switch): the switch's other ports keep their flows and each adds its one binding on the
router that joined (``lr_in_arp_resolve``: ``outport == <that router's port> && reg0 == <my
address>``); the newcomer brings its own bindings on the others.  Under ``--check-incremental=1``
incremental equals a full recompute, also where the shortcut does not apply (a port leaving
without its router, a VIF on the switch, switch facts that change) and with the options that
decide who binds whom (``dynamic_neigh_routers``, a disabled router-type port)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from typing import Any

import pytest

from ovn_northd_py.devtools.testing import apply_checked, checked_daemon, node_runs

pytestmark = pytest.mark.releases("23.03", "25.03", "26.03")

ROUTERS = 3


def _gr(i: int) -> str:
    return f"GR{i}"


def _ip(i: int) -> str:
    return f"100.64.0.{10 + i}"


def join_router(i: int, *extra: list[str], chassis: bool = True) -> list[list[str]]:
    """Gateway router ``GR<i>`` (on chassis hv<i> unless ``chassis`` is false) with its port on the
    join switch and a SNAT rule, in one transaction."""
    gr, lrp, lsp = _gr(i), f"rtoj-{_gr(i)}", f"jtor-{_gr(i)}"
    cmds = [["lr-add", gr],
            ["lrp-add", gr, lrp, f"0a:58:64:40:00:{10 + i:02x}", f"{_ip(i)}/16"],
            ["lsp-add", "join", lsp], ["lsp-set-type", lsp, "router"],
            ["lsp-set-addresses", lsp, "router"], ["lsp-set-options", lsp, f"router-port={lrp}"],
            ["lr-nat-add", gr, "snat", f"172.18.0.{10 + i}", "10.128.0.0/14"]]
    if chassis:
        cmds.insert(1, ["set", "logical_router", gr, f"options:chassis=hv{i}"])
    return cmds + [list(c) for c in extra]


def add_route_nat(i: int) -> list[list[str]]:
    """A dnat_and_snat rule with ``options:add_route=true`` on ``GR<i>`` (25.03 on: routes and
    bindings of its external IP on the other routers of the join switch)."""
    return [["--id=@nat", "create", "NAT", "type=dnat_and_snat", f"external_ip=172.19.0.{10 + i}",
             f"logical_ip=10.128.9.{10 + i}", "options:add_route=true"],
            ["add", "logical_router", _gr(i), "nat", "@nat"]]


def leave_router(i: int) -> list[list[str]]:
    return [["lr-del", _gr(i)], ["lsp-del", f"jtor-{_gr(i)}"]]


@pytest.fixture
def join(env) -> Iterator[tuple[Any, Any, int]]:
    env.nbctl("ls-add", "join", "--", "lr-add", "ovn_cluster_router",
              "--", "lrp-add", "ovn_cluster_router", "rtoj-ovn_cluster_router", "0a:58:64:40:00:01", "100.64.0.1/16",
              "--", "lsp-add", "join", "jtor-ovn_cluster_router", "--", "lsp-set-type", "jtor-ovn_cluster_router",
              "router", "--", "lsp-set-addresses", "jtor-ovn_cluster_router", "router",
              "--", "lsp-set-options", "jtor-ovn_cluster_router", "router-port=rtoj-ovn_cluster_router")
    for i in range(ROUTERS):
        env.nbctl(*[w for c in join_router(i) for w in ("--", *c)][1:])
    with checked_daemon(env) as ctx:
        yield ctx


def _binding(env: Any, on_port: str, ip: str) -> bool:
    """Does SB bind ``ip`` on router port ``on_port`` (``lr_in_arp_resolve``, priority 100)?"""
    rows = env.sb_rows("Logical_Flow")
    want = f'outport == "{on_port}" && reg0 == {ip}'
    return any(r["priority"] == 100 and r["match"].replace("reg0==", "reg0 ==") == want for r in rows)


def test_router_joining_binds_both_ways_without_recompute(join) -> None:
    env, d, port = join
    before = node_runs(port, "lflow", "recompute")
    apply_checked(env, d, join_router(7), [], 0)
    assert _binding(env, "rtoj-GR0", _ip(7)) and _binding(env, "rtoj-ovn_cluster_router", _ip(7))
    assert _binding(env, "rtoj-GR7", _ip(0)) and _binding(env, "rtoj-GR7", "100.64.0.1")
    assert node_runs(port, "lflow", "recompute") == before


def test_router_leaving_with_its_router_leaves_no_binding(join) -> None:
    env, d, _ = join
    done: list[list[list[str]]] = []
    apply_checked(env, d, join_router(7), done, 0)
    apply_checked(env, d, leave_router(7), done, 0)
    assert not _binding(env, "rtoj-GR0", _ip(7))
    assert not any("rtoj-GR7" in r["match"] for r in env.sb_rows("Logical_Flow"))


def test_port_leaving_without_its_router_unbinds_it_there(join) -> None:
    """The router stays (its port unpeered): the others' bindings on its port go too."""
    env, d, _ = join
    apply_checked(env, d, [["lsp-del", "jtor-GR1"]], [], 0)
    assert not _binding(env, "rtoj-GR1", _ip(0))
    assert not _binding(env, "rtoj-GR0", _ip(1))


def test_dynamic_neigh_router_joining_gets_no_bindings_but_is_bound(join) -> None:
    env, d, _ = join
    apply_checked(env, d, join_router(7, ["set", "logical_router", "GR7", "options:dynamic_neigh_routers=true"]),
                  [], 0)
    assert not _binding(env, "rtoj-GR7", _ip(0))
    assert _binding(env, "rtoj-GR0", _ip(7))


def test_disabled_router_port_joining_gets_no_bindings(join) -> None:
    env, d, _ = join
    apply_checked(env, d, join_router(7, ["set", "logical_switch_port", "jtor-GR7", "enabled=false"]), [], 0)
    assert not _binding(env, "rtoj-GR7", _ip(0))
    assert _binding(env, "rtoj-GR0", _ip(7))


@pytest.mark.releases("25.03", "26.03")
def test_router_joining_gets_the_others_add_route_flows(join) -> None:
    """A gateway router's NAT ``add_route`` puts a /32 route to its external IP on every other
    router of the switch (behaviour ``add_route_any_router``): on the newcomer too."""
    env, d, _ = join
    done: list[list[list[str]]] = []
    apply_checked(env, d, add_route_nat(0), done, 0)
    apply_checked(env, d, join_router(7), done, 0)
    routes = [r for r in env.sb_rows("Logical_Flow") if r["match"] == "ip4.dst == 172.19.0.10/32"]
    assert any('outport = "rtoj-GR7"' in r["actions"] for r in routes)


def test_router_port_disabled_in_place_unbinds_the_others_on_its_router(join) -> None:
    """The bindings on a router are built by the other routers' ports: disabling the router-type
    port of GR0 (in place, not a join) still takes them off GR0, and enabling it puts them back."""
    env, d, _ = join
    done: list[list[list[str]]] = []
    apply_checked(env, d, [["set", "logical_switch_port", "jtor-GR0", "enabled=false"]], done, 0)
    assert not _binding(env, "rtoj-GR0", _ip(1)) and _binding(env, "rtoj-GR1", _ip(0))
    apply_checked(env, d, [["set", "logical_switch_port", "jtor-GR0", "enabled=true"]], done, 0)
    assert _binding(env, "rtoj-GR0", _ip(1))


def test_second_port_of_a_router_already_there_joins(join) -> None:
    """Not a new router: GR0 attaches a second port to the switch (its router is rebuilt with its
    new port only), then detaches it again (the port leaves without its router)."""
    env, d, _ = join
    done: list[list[list[str]]] = []
    apply_checked(env, d, [["lrp-add", "GR0", "rtoj2-GR0", "0a:58:64:40:01:10", "100.64.1.10/16"],
                           ["lsp-add", "join", "jtor2-GR0"], ["lsp-set-type", "jtor2-GR0", "router"],
                           ["lsp-set-addresses", "jtor2-GR0", "router"],
                           ["lsp-set-options", "jtor2-GR0", "router-port=rtoj2-GR0"]], done, 0)
    assert _binding(env, "rtoj2-GR0", _ip(1)) and _binding(env, "rtoj-GR1", "100.64.1.10")
    apply_checked(env, d, [["lsp-del", "jtor2-GR0"], ["lrp-del", "rtoj2-GR0"]], done, 0)
    assert not _binding(env, "rtoj-GR1", "100.64.1.10")


def test_router_joining_a_switch_with_a_vif(join) -> None:
    """Not a switch of router-type ports only: every port is rebuilt (the VIF binds its address on
    the newcomer)."""
    env, d, _ = join
    done: list[list[list[str]]] = []
    apply_checked(env, d, [["lsp-add", "join", "vif1"], ["lsp-set-addresses", "vif1", "0a:00:00:00:00:99 100.64.9.9"]],
                  done, 0)
    apply_checked(env, d, join_router(7), done, 0)
    assert _binding(env, "rtoj-GR7", "100.64.9.9")


def test_first_gateway_router_on_a_switch_of_distributed_routers(env) -> None:
    """The switch's port types change (the first l3gateway port): the attached router ports read
    them, so everything of the switch is rebuilt."""
    env.nbctl("ls-add", "join", "--", "lr-add", "lr0", "--", "lrp-add", "lr0", "lr0-join", "0a:58:64:40:00:01",
              "100.64.0.1/16", "--", "lsp-add", "join", "join-lr0", "--", "lsp-set-type", "join-lr0", "router",
              "--", "lsp-set-addresses", "join-lr0", "router", "--", "lsp-set-options", "join-lr0",
              "router-port=lr0-join")
    with checked_daemon(env) as (_, d, _port):
        done: list[list[list[str]]] = []
        apply_checked(env, d, join_router(7, chassis=False), done, 0)
        apply_checked(env, d, join_router(8), done, 0)
        apply_checked(env, d, leave_router(8), done, 0)
        assert _binding(env, "lr0-join", _ip(7))


def test_random_joins_and_leaves_incremental_equals_recompute(join) -> None:
    """Routers joining and leaving (some with dynamic_neigh_routers, a disabled port, a NAT
    add_route, without a chassis), ports leaving without their router, and both at once:
    incremental equals recompute."""
    env, d, _ = join
    seed = int(os.environ.get("OVN_TEST_SEED", "20261204"))
    rnd = random.Random(seed)
    present = list(range(ROUTERS))
    spare = list(range(ROUTERS, ROUTERS + 6))
    orphans: list[int] = []  # routers whose port left the switch
    done: list[list[list[str]]] = []
    for _ in range(14):
        k = rnd.random()
        batch: list[list[str]] = []
        released: list[int] = []  # (its name free again after this transaction)
        if k < 0.4 and spare:
            i = spare.pop(rnd.randrange(len(spare)))
            extra = rnd.choice([[], [["set", "logical_router", _gr(i), "options:dynamic_neigh_routers=true"]],
                                [["set", "logical_switch_port", f"jtor-{_gr(i)}", "enabled=false"]],
                                add_route_nat(i)])
            batch = join_router(i, *extra, chassis=rnd.random() < 0.8)
            present.append(i)
        elif k < 0.7 and present:
            i = present.pop(rnd.randrange(len(present)))
            batch = leave_router(i)
            released.append(i)
        elif k < 0.85 and present:
            i = present.pop(rnd.randrange(len(present)))
            batch = [["lsp-del", f"jtor-{_gr(i)}"]]
            orphans.append(i)
        elif orphans:
            batch = [["lr-del", _gr(orphans.pop())]]
        if rnd.random() < 0.3 and spare and batch:
            i = spare.pop(rnd.randrange(len(spare)))
            batch += join_router(i)
            present.append(i)
        spare += released
        if batch:
            apply_checked(env, d, batch, done, seed)
