"""Parity for router ports' ``options:routing-protocol-redirect`` / ``routing-protocols`` (25.03,
behaviour ``routing_protocol_redirect``): BGP / BFD traffic for the router port's addresses goes to
the named port of its peer switch, ARP replies / neighbour advertisements are cloned to it, and it
may not send them itself.  Cases: IPv4 and IPv6 networks with both protocols; BGP alone on a
gateway router; a target that is not on the switch; an unknown protocol only; BFD on a port with an
OVN BFD session (a static route with ``--bfd``: 26.03 clones the BFD traffic to the target and lets it
go on to the router, ``routing_redirect_bfd_clone``).
"""

from __future__ import annotations

from ovn_northd_py.parity.harness import assert_parity, nbctl_commands


def _router(n: int, nets: list[str], redirect: str, protocols: str, gateway: bool = False) -> list[list[str]]:
    lr, ls = f"lr{n}", f"ls{n}"
    out = [["lr-add", lr], ["lrp-add", lr, f"{lr}-{ls}", f"02:ac:10:01:00:0{n}", *nets],
           ["ls-add", ls], ["lsp-add", ls, f"{ls}-{lr}"], ["lsp-set-type", f"{ls}-{lr}", "router"],
           ["lsp-set-addresses", f"{ls}-{lr}", "router"], ["lsp-set-options", f"{ls}-{lr}", f"router-port={lr}-{ls}"],
           ["lsp-add", ls, f"bgp{n}"], ["lsp-set-addresses", f"bgp{n}", "unknown"],
           ["set", "logical_router_port", f"{lr}-{ls}", f"options:routing-protocol-redirect={redirect}",
            f'options:routing-protocols="{protocols}"']]
    if gateway:
        out.append(["set", "logical_router", lr, "options:chassis=hv1"])
    return out


REDIRECTS = nbctl_commands(
    *_router(1, ["172.16.1.1/24", "fd01::1/64"], "bgp1", "BGP,BFD"),
    *_router(2, ["172.16.2.1/24"], "bgp2", "BGP", gateway=True),
    *_router(3, ["172.16.3.1/24"], "bgp1", "BGP,BFD"),
    *_router(4, ["172.16.4.1/24"], "bgp4", "OSPF"),
    *_router(5, ["172.16.5.1/24", "fd05::1/64"], "bgp5", "BGP,BFD"),
    ["--bfd", "lr-route-add", "lr5", "100.0.0.0/8", "172.16.5.2", "lr5-ls5"],
)


def test_routing_protocol_redirect(parity_run, parity_profile) -> None:
    r = parity_run(REDIRECTS, tables=("Logical_Flow",))
    assert_parity(r)
    assert r.ref_dump is not None
    redirected = [f for f in r.ref_dump.rows("Logical_Flow").values() if "tcp.dst == 179" in str(f["match"])]
    assert len(redirected) == (3 + 2 + 3 if parity_profile.has("routing_protocol_redirect") else 0)  # (LLAs too)
    bfd5 = [f for f in r.ref_dump.rows("Logical_Flow").values()
            if "udp.dst == 3784" in str(f["match"]) and "ls5-lr5" in str(f["actions"])]
    assert len(bfd5) == (3 if parity_profile.has("routing_redirect_bfd_clone") else 0)
