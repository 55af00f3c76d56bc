"""Parity for static routes whose next hop is of the other family than the prefix: 25.03
(behaviour ``route_mixed_family``) routes them with the next hop's registers (``xxreg0`` /
``reg0``, ``reg9[9]``) and solicits the IPv6 next hop; 23.03 writes no flow for them.
"""

from __future__ import annotations

from ovn_northd_py.parity.harness import assert_parity, nbctl_commands


def _route(router: str, n: int, prefix: str, nexthop: str, *extra: str) -> list[list[str]]:
    """(A route made with ``create``: 23.03's ovn-nbctl refuses a next hop of the other family.)"""
    return [[f"--id=@r{n}", "create", "Logical_Router_Static_Route", f'ip_prefix="{prefix}"', f'nexthop="{nexthop}"',
             *extra], ["add", "logical_router", router, "static_routes", f"@r{n}"]]


MIXED = nbctl_commands(
    ["lr-add", "lr0"], ["set", "logical_router", "lr0", "options:chassis=ch1"],
    ["lrp-add", "lr0", "lr0-public", "00:00:20:20:12:13", "192.168.0.1/24"],
    ["lrp-add", "lr0", "lr0-private", "00:00:20:20:12:14", "2001:db8::1/64"],
    ["lr-add", "lr1"],
    ["lrp-add", "lr1", "lr1-a", "00:00:20:20:13:13", "10.9.0.1/24", "fd09::1/64"],
    *_route("lr0", 1, "10.0.0.0/24", "192.168.0.10"),
    *_route("lr0", 2, "11.0.0.0/24", "2001:db8::10"),
    *_route("lr0", 3, "2001:db8:1::/64", "192.168.0.20"),
    *_route("lr0", 4, "2001:db8:2::/64", "2001:db8::20"),
    *_route("lr1", 5, "12.0.0.0/24", "fd09::12", "output_port=lr1-a"),
    *_route("lr1", 6, "2001:db8:9::/64", "10.9.0.9", "policy=src-ip"),
)


def test_static_routes_over_a_next_hop_of_the_other_family(parity_run, parity_profile) -> None:
    r = parity_run(MIXED, tables=("Logical_Flow",))
    assert_parity(r)
    assert r.ref_dump is not None
    xx = [f for f in r.ref_dump.rows("Logical_Flow").values()
          if "ip4.dst == 11.0.0.0/24" in str(f["match"]) and "xxreg0 = 2001:db8::10" in str(f["actions"])]
    assert bool(xx) is parity_profile.has("route_mixed_family")


SYMMETRIC = nbctl_commands(
    ["lr-add", "lr0"], ["set", "logical_router", "lr0", "options:chassis=ch1"],
    ["lrp-add", "lr0", "lr0-public", "00:00:20:20:12:13", "192.168.0.1/24"],
    ["lrp-add", "lr0", "lr0-private", "00:00:20:20:12:14", "2001:db8::1/64"],
    *_route("lr0", 1, "12.0.0.0/24", "2001:db8::10", "options:ecmp_symmetric_reply=true"),
    *_route("lr0", 2, "2001:db8:5::/64", "192.168.0.30", "options:ecmp_symmetric_reply=true"),
    ["set", "nb_global", ".", "options:ecmp_nexthop_monitor_enable=true"],
)


def test_symmetric_reply_route_over_a_next_hop_of_the_other_family(parity_run, parity_profile) -> None:
    """A symmetric-reply route (OVN 26.03's ovn-northd.at "static routes multiple address families
    flows"): its reply flow (lr_in_ip_routing 10300) sets the source register of the next hop's
    family in 26.03 (``symmetric_reply_nexthop_src``), of the prefix's in 25.03."""
    r = parity_run(SYMMETRIC, tables=("Logical_Flow",))
    assert_parity(r)
    assert r.ref_dump is not None
    replies = [f for f in r.ref_dump.rows("Logical_Flow").values()
               if "ct_mark.ecmp_reply_port" in str(f["match"]) and "12.0.0.0/24" in str(f["match"])]
    assert bool(replies) is parity_profile.has("route_mixed_family")
    if replies:
        assert ("xxreg1 = 2001:db8::1;" in str(replies[0]["actions"])) is parity_profile.has(
            "symmetric_reply_nexthop_src")
