"""Parity for router Copp meters (``Logical_Router.copp``): the controller meters of router flows.

A distributed router (NAT, load balancers, a reject VIP without backends, RA, prefix delegation,
multicast relay, a BFD session and static routes), a gateway router and a plain router share one
Copp naming a meter for every protocol; a fourth router has the same features without a Copp, and
the Copp's ``dns`` names a meter that does not exist (no router flow uses ``dns`` anyway).  NB_Global
``options:controller_event`` (``trigger_event`` flows, Copp ``event-elb``) is not implemented, so not set.
"""

from __future__ import annotations

from ovn_northd_py.devtools.servers import nbctl

PROTOS = ("arp", "arp-resolve", "dhcpv4-opts", "dhcpv6-opts", "dns", "icmp4-error", "icmp6-error", "igmp", "nd-na",
          "nd-ns", "nd-ns-resolve", "nd-ra-opts", "tcp-reset", "bfd", "reject", "event-elb", "svc-monitor", "acl-logging")
# One meter per protocol (the report then names the protocol); "dns" names a meter that does not exist.
COPP = {**{p: f"m-{p}" for p in PROTOS}, "dns": "missing-meter"}

ROUTER_STAGES_TOUCHED = (
    "lr_in_learn_neighbor", "lr_in_ip_input", "lr_in_nd_ra_options", "lr_in_dnat", "lr_in_arp_request",
    "lr_in_larger_pkts", "lr_in_ip_routing", "lr_out_snat",
)


def _txn(remote: str, *commands: list[str]) -> str:
    args: list[str] = []
    for i, c in enumerate(commands):
        args += (["--"] if i else []) + c
    return nbctl(remote, *args)


def _rport(sw: str, name: str, lrp: str) -> list[list[str]]:
    return [["lsp-add", sw, name], ["lsp-set-type", name, "router"], ["lsp-set-addresses", name, "router"],
            ["lsp-set-options", name, f"router-port={lrp}"]]


def _distributed(remote: str, r: str, n: int) -> None:
    pub, inner = f"{r}-pub", f"{r}-int"
    _txn(remote, ["lr-add", r],
         ["lrp-add", r, pub, f"02:00:00:00:2{n}:01", f"172.16.0.2{n}/24", f"2001:db8:2{n}::1/64"],
         ["lrp-set-gateway-chassis", pub, "hv1", "20"],
         ["lrp-add", r, inner, f"02:00:00:00:2{n}:02", f"10.2{n}.0.1/24", f"fd2{n}::1/64"],
         ["ls-add", f"int{n}"], *_rport("pub", f"pub-{r}", pub), *_rport(f"int{n}", f"int-{r}", inner),
         ["lsp-add", f"int{n}", f"vm{n}"], ["lsp-set-addresses", f"vm{n}", f"00:00:00:00:2{n}:10 10.2{n}.0.10"],
         ["lr-nat-add", r, "snat", f"172.16.0.12{n}", f"10.2{n}.0.0/24"],
         ["lr-nat-add", r, "dnat_and_snat", f"172.16.0.13{n}", f"10.2{n}.0.12"],
         ["lr-lb-add", r, "lb1"], ["lr-lb-add", r, "lbe"],
         ["set", "logical_router_port", inner, "ipv6_ra_configs:address_mode=slaac",
          "ipv6_ra_configs:send_periodic=true"],
         ["set", "logical_router_port", pub, "options:prefix_delegation=true", "options:prefix=true",
          "options:gateway_mtu=1400"],
         ["set", "logical_router", r, "options:mcast_relay=true"],
         ["lr-route-add", r, "192.168.1.0/24", "172.16.0.50"], ["lr-route-add", r, "2001:db9::/64", "2001:db8:21::9"],
         ["lrp-add", r, f"{r}-mc", f"02:00:00:00:2{n}:03", f"10.12{n}.0.1/24"],
         ["set", "logical_router_port", f"{r}-mc", "options:mcast_flood=true"])
    nbctl(remote, "create", "bfd", f"logical_port={pub}", "dst_ip=172.16.0.50")


def build_router_copp_nb(remote: str) -> None:
    _txn(remote, ["ls-add", "pub"], ["lsp-add", "pub", "ln"], ["lsp-set-type", "ln", "localnet"],
         ["lsp-set-addresses", "ln", "unknown"], ["lsp-set-options", "ln", "network_name=phys"],
         *(["meter-add", f"m-{p}", "drop", "10", "pktps"] for p in PROTOS),
         ["lb-add", "lb1", "172.16.5.1:80", "10.21.0.21:8080,10.21.0.22:8080", "tcp"],
         ["lb-add", "lbe", "172.16.5.2:80", "", "tcp"], ["set", "load_balancer", "lbe", "options:reject=true"],
)
    _distributed(remote, "d1", 1)
    _distributed(remote, "d2", 2)  # no Copp
    _txn(remote, ["lr-add", "g1"], ["set", "logical_router", "g1", "options:chassis=hv1"],
         ["lrp-add", "g1", "g1-pub", "02:00:00:00:10:01", "172.16.0.10/24", "2001:db8:10::1/64"],
         *_rport("pub", "pub-g1", "g1-pub"),
         ["lr-nat-add", "g1", "snat", "172.16.0.110", "10.9.0.0/16"], ["lr-lb-add", "g1", "lb1"],
         ["lr-add", "r1"], ["lrp-add", "r1", "r1-a", "02:00:00:00:30:01", "10.3.0.1/24", "fd03::1/64"],
         ["lrp-add", "r1", "r1-b", "02:00:00:00:30:02", "10.4.0.1/24"],
         ["lr-route-add", "r1", "192.168.7.0/24", "10.3.0.7"], ["lr-route-add", "r1", "fd07::/64", "fd03::7"],
         # VIPs inside r1's networks: ARP/ND answers for them.
         ["lb-add", "lb6", "[fd03::100]:80", "[fd03::5]:80", "tcp"], ["lb-add", "lb4", "10.3.0.100:80", "10.4.0.5:80", "tcp"],
         ["lr-lb-add", "r1", "lb6"], ["lr-lb-add", "r1", "lb4"])
    nbctl(remote, "create", "bfd", "logical_port=r1-a", "dst_ip=10.3.0.7")
    meters = ",".join(f'"{k}"="{v}"' for k, v in COPP.items())
    copp = nbctl(remote, "create", "copp", "name=c1", f"meters={{{meters}}}").strip()
    for r in ("d1", "g1", "r1"):
        nbctl(remote, "set", "logical_router", r, f"copp={copp}")


def test_router_copp_meters(parity_run):
    r = parity_run(build_router_copp_nb, tables=("Meter", "BFD", "Logical_Flow"))
    assert r.reference.settled and r.ours.settled, r.report()
    assert r.tables["Meter"].ok, r.report()
    flows = r.flows
    assert flows is not None and flows.missing == 0 and flows.extra == 0, r.report()
    metered = [f for f in r.ref_dump.rows("Logical_Flow").values() if f["controller_meter"].items]
    assert len(metered) > 40, "the NB should exercise many router meters"
