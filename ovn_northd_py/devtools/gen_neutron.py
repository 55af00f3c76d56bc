"""A Neutron-like NB (what networking-ovn / the Neutron OVN driver writes), built with batched ovn-nbctl.

usage: python -m ovn_northd_py.devtools.gen_neutron NB_REMOTE [TENANTS [NETS [VMS [FIPS [SEED]]]]]

Deterministic from ``seed``: every name is ``neutron-<uuid>`` / ``lrp-<uuid>`` / ``<uuid>`` with
uuids and ``fa:16:3e`` MACs drawn from ``random.Random(seed)``.  The NB holds:

* a provider network: switch ``neutron-<uuid>`` (dual-stack, 172.24.0.0/16 + 2001:db8::/64) with a
  localnet port (``network_name=physnet1``, addresses ``unknown``) and a metadata localport;
* per tenant, a distributed router ``neutron-<uuid>`` (``always_learn_from_arp_request=false``,
  ``dynamic_neigh_routers=true``) whose external gateway port sits on the provider network with
  1-3 gateway chassis (hence a chassisredirect port), ``gateway_mtu`` on every third one,
  ``redirect-type=bridged`` on every sixth one, and
  the provider-side router port with ``nat-addresses=router``; default routes 0.0.0.0/0 and ::/0;
* per tenant ``nets_per_tenant`` dual-stack networks (an IPv4 /24 and an IPv6 /64) attached to
  the router by ports with ``ipv6_ra_configs`` (slaac or dhcpv6_stateless, ``send_periodic`` on
  half of them, ``mtu``), a metadata localport ``ovnmeta-<network uuid>``, and ``vms_per_net`` VMs
  with "MAC IPv4 IPv6" addresses (EUI-64 IPv6), port security, ``requested-chassis``, and DHCPv4
  (and, on dhcpv6_stateless networks, DHCPv6) options;
* an SNAT rule per tenant subnet to the router's gateway IP, ``fips`` floating IPs per tenant
  (``dnat_and_snat``; even ones distributed, with ``external_mac`` + ``logical_port``, odd ones
  centralized), plus one on a VIP; an extra route through a VM; every fifth router has no
  gateway (no NAT);
* on some networks: a VLAN localnet port (router port ``reside-on-redirect-chassis``), a virtual
  port (VIP of two VMs, allowed address pairs), an external (baremetal) port with an HA chassis
  group, a trunk subport with QoS rules, an admin-down port, a VM without port security
  (``unknown``); DNS records on every network; every fourth gateway port uses an HA chassis
  group instead of Gateway_Chassis rows;
* Neutron's security groups as port groups: ``neutron_pg_drop`` (drop ACLs) and one
  ``pg_<uuid>`` per tenant with allow-related ACLs.

Neutron does not NAT IPv6: tenant IPv6 subnets are routed.
"""

from __future__ import annotations

import ipaddress
import random
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from ovn_northd_py.devtools.servers import nbctl

Cmd = list[str]
PROVIDER_V4 = ipaddress.IPv4Network("172.24.0.0/16")
PROVIDER_V6 = ipaddress.IPv6Network("2001:db8::/64")
PROVIDER_GW4 = "172.24.0.1"
PROVIDER_GW6 = "2001:db8::1"
PHYSNET = "physnet1"
CHASSIS = tuple(f"gw-chassis-{i}" for i in range(1, 5))
COMPUTES = tuple(f"compute-{i}" for i in range(1, 9))
TENANT_MTU = 1442
BATCH = 1500  # commands per ovn-nbctl transaction (whole tenants only)


@dataclass(slots=True)
class _Ids:
    """Deterministic uuids and MACs."""

    rng: random.Random
    macs: set[str] = field(default_factory=set)

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def mac(self) -> str:
        while True:
            mac = "fa:16:3e:" + ":".join(f"{self.rng.randrange(256):02x}" for _ in range(3))
            if mac not in self.macs:
                self.macs.add(mac)
                return mac


def eui64(prefix: ipaddress.IPv6Network, mac: str) -> ipaddress.IPv6Address:
    """The SLAAC address of ``mac`` in ``prefix``."""
    b = bytes(int(x, 16) for x in mac.split(":"))
    iid = bytes([b[0] ^ 0x02, b[1], b[2], 0xFF, 0xFE, b[3], b[4], b[5]])
    return ipaddress.IPv6Address(int(prefix.network_address) | int.from_bytes(iid, "big"))


def _ext_ids(**kv: str) -> str:
    inner = ",".join(f'"neutron:{k}"="{v}"' for k, v in kv.items())
    return "{" + inner + "}"


def _v4_net(idx: int) -> ipaddress.IPv4Network:
    return ipaddress.IPv4Network(f"10.{idx // 256 % 256}.{idx % 256}.0/24")


def _v6_net(idx: int) -> ipaddress.IPv6Network:
    return ipaddress.IPv6Network(f"fd00:0:{idx:x}::/64")


def _provider_v4(n: int) -> str:
    """Host ``n`` (>= 0) of the provider v4 range, above the gateway."""
    return str(PROVIDER_V4.network_address + 10 + n)


class _Builder:
    def __init__(self, seed: int) -> None:
        self.ids = _Ids(random.Random(seed))
        self.rng = self.ids.rng
        self.next_ip = 0  # provider IPv4 addresses handed out so far
        self.all_vms: list[str] = []  # every VM port (members of neutron_pg_drop)

    def provider_ip(self) -> str:
        ip = _provider_v4(self.next_ip)
        self.next_ip += 1
        return ip

    # ------------------------------------------------------------------ provider network

    def provider(self) -> tuple[list[Cmd], str]:
        net_id = self.ids.uuid()
        sw = f"neutron-{net_id}"
        ln = f"provnet-{self.ids.uuid()}"
        meta = f"ovnmeta-{net_id}"
        meta_mac = self.ids.mac()
        cmds: list[Cmd] = [
            ["ls-add", sw],
            ["set", "logical_switch", sw, "external_ids=" + _ext_ids(network_name="public", mtu="1500"),
             "other_config:mcast_snoop=false", "other_config:mcast_flood_unregistered=false",
             "other_config:vlan-passthru=false"],
            ["lsp-add", sw, ln], ["lsp-set-type", ln, "localnet"], ["lsp-set-addresses", ln, "unknown"],
            ["lsp-set-options", ln, f"network_name={PHYSNET}", "mcast_flood=false",
             "mcast_flood_reports=true"],
            ["lsp-add", sw, meta], ["lsp-set-type", meta, "localport"],
            ["lsp-set-addresses", meta, f"{meta_mac} {self.provider_ip()}"],
            ["set", "logical_switch_port", meta,
             "external_ids=" + _ext_ids(device_owner="network:distributed", device_id=meta)],
        ]
        return cmds, sw

    # ------------------------------------------------------------------ one tenant

    def tenant(self, t: int, provider_sw: str, nets: int, vms: int, fips: int) -> list[Cmd]:
        router_id = self.ids.uuid()
        router = f"neutron-{router_id}"
        cmds: list[Cmd] = [
            ["lr-add", router],
            ["set", "logical_router", router,
             "external_ids=" + _ext_ids(router_name=f"router-{t}", gw_port_id="", revision_number="3"),
             "options:always_learn_from_arp_request=false", "options:dynamic_neigh_routers=true"],
        ]
        # Every fifth router has no external gateway (internal routing only: no SNAT, no FIPs).
        gw_ip = self.gateway(t, router, router_id, provider_sw, cmds) if t % 5 != 4 else None
        # Security group of the tenant.
        pg = "pg_" + self.ids.uuid().replace("-", "_")
        cmds += [
            ["pg-add", pg],
            ["set", "port_group", pg, "external_ids=" + _ext_ids(security_group_id=pg[3:])],
            *(["--type=port-group", "acl-add", pg, direction, "1002", match, "allow-related"]
              for direction, match in (
                  ("to-lport", f"outport == @{pg} && ip4 && ip4.src == 0.0.0.0/0 && icmp4"),
                  ("to-lport", f"outport == @{pg} && ip4 && ip4.src == 0.0.0.0/0 && tcp && tcp.dst == 22"),
                  ("from-lport", f"inport == @{pg} && ip4"),
                  ("from-lport", f"inport == @{pg} && ip6"),
                  ("to-lport", f"outport == @{pg} && ip6 && ip6.src == ${pg}_ip6"),
              )),
        ]
        vm_ports: list[tuple[str, str, str]] = []  # (name, mac, ipv4)
        vips: list[str] = []
        for n in range(nets):
            cmds += self.network(t, n, nets, router, router_id, vms, gw_ip, vm_ports, vips)
        if vm_ports:
            cmds.append(["pg-set-ports", pg, *(name for name, _, _ in vm_ports)])
            # An extra route (Neutron "router extra routes") through the first VM.
            cmds.append(["lr-route-add", router, f"192.168.{t % 256}.0/24", vm_ports[0][2]])
        self.all_vms += [name for name, _, _ in vm_ports]
        if gw_ip is None:
            return cmds
        # Floating IPs: even ones distributed (external_mac + logical_port), odd ones centralized;
        # a VIP's floating IP is centralized.
        for k in range(min(fips, len(vm_ports))):
            name, _mac, ip = vm_ports[(k * 3) % len(vm_ports)]
            fip = self.provider_ip()
            if k % 2 == 0:
                cmds.append(["lr-nat-add", router, "dnat_and_snat", fip, ip, name, self.ids.mac()])
            else:
                cmds.append(["lr-nat-add", router, "dnat_and_snat", fip, ip])
        if vips and fips:
            cmds.append(["lr-nat-add", router, "dnat_and_snat", self.provider_ip(), vips[0]])
        return cmds

    def gateway(self, t: int, router: str, router_id: str, provider_sw: str, cmds: list[Cmd]) -> str:
        """The router's external gateway port on the provider network and default routes; its IPv4."""
        gw_id = self.ids.uuid()
        gw_lrp, gw_mac, gw_ip = f"lrp-{gw_id}", self.ids.mac(), self.provider_ip()
        gw_ip6 = str(PROVIDER_V6.network_address + 0x100 + t)
        cmds += [
            ["lrp-add", router, gw_lrp, gw_mac, f"{gw_ip}/{PROVIDER_V4.prefixlen}",
             f"{gw_ip6}/{PROVIDER_V6.prefixlen}"],
            ["set", "logical_router_port", gw_lrp,
             "external_ids=" + _ext_ids(network_name=provider_sw, is_ext_gw="True", router_name=router_id)],
        ]
        if t % 3 == 1:
            cmds.append(["set", "logical_router_port", gw_lrp, "options:gateway_mtu=1500"])
        if t % 6 == 5:  # traffic to the provider network bridged locally (VLAN/flat, not tunnelled)
            cmds.append(["set", "logical_router_port", gw_lrp, "options:redirect-type=bridged"])
        chassis = self.rng.sample(CHASSIS, 1 + t % 3)
        if t % 4 == 3:  # newer Neutron: an HA chassis group instead of Gateway_Chassis rows
            hcs = [f"@hc_gw{t}_{k}" for k in range(len(chassis))]
            for k, (hc, name) in enumerate(zip(hcs, chassis, strict=True)):
                cmds.append([f"--id={hc}", "create", "HA_Chassis", f"chassis_name={name}",
                             f"priority={len(chassis) - k}"])
            cmds += [
                [f"--id=@hag_gw{t}", "create", "HA_Chassis_Group", f"name=neutron-{router_id}",
                 "ha_chassis=[" + ",".join(hcs) + "]"],
                ["set", "logical_router_port", gw_lrp, f"ha_chassis_group=@hag_gw{t}"],
            ]
        else:
            for i, name in enumerate(chassis):
                cmds.append(["lrp-set-gateway-chassis", gw_lrp, name, str(len(chassis) - i)])
        cmds += [
            ["lsp-add", provider_sw, gw_id], ["lsp-set-type", gw_id, "router"],
            ["lsp-set-addresses", gw_id, "router"],
            ["lsp-set-options", gw_id, f"router-port={gw_lrp}", "nat-addresses=router"],
            ["set", "logical_switch_port", gw_id,
             "external_ids=" + _ext_ids(device_owner="network:router_gateway", device_id=router_id)],
            ["lr-route-add", router, "0.0.0.0/0", PROVIDER_GW4],
            ["lr-route-add", router, "::/0", PROVIDER_GW6],
        ]
        return gw_ip

    def network(
        self,
        t: int,
        n: int,
        nets: int,
        router: str,
        router_id: str,
        vms: int,
        gw_ip: str | None,
        vm_ports: list[tuple[str, str, str]],
        vips: list[str],
    ) -> list[Cmd]:
        """One tenant network, step by step (ids and MACs are drawn in this order): the switch and
        its router interface, DHCP options, the metadata port, a VLAN network's localnet port, the
        VMs, then a virtual port, a trunk subport, an admin-down port, an external port and DNS
        records on some networks."""
        idx = t * nets + n
        net_id = self.ids.uuid()
        v4, v6 = _v4_net(idx), _v6_net(idx)
        net = _Net(t, n, idx, net_id, f"neutron-{net_id}", v4, v6, "slaac" if idx % 2 == 0 else "dhcpv6_stateless")
        sw = net.sw
        cmds: list[Cmd] = [
            ["ls-add", sw],
            ["set", "logical_switch", sw,
             "external_ids=" + _ext_ids(network_name=f"net-{t}-{n}", mtu=str(TENANT_MTU)),
             "other_config:mcast_snoop=false", "other_config:mcast_flood_unregistered=false",
             "other_config:vlan-passthru=false"],
        ]
        lrp = self._router_interface(net, router, router_id, cmds)
        if gw_ip is not None:
            cmds.append(["lr-nat-add", router, "snat", gw_ip, str(v4)])
        self._dhcp_options(net, cmds)
        self._metadata_port(net, cmds)
        if idx % 4 == 3:  # a VLAN tenant network: a localnet port, and the router port resides on the gateway
            ln = f"provnet-{self.ids.uuid()}"
            cmds += [
                ["lsp-add", sw, ln], ["lsp-set-type", ln, "localnet"], ["lsp-set-addresses", ln, "unknown"],
                ["lsp-set-options", ln, f"network_name={PHYSNET}", "mcast_flood=false",
                 "mcast_flood_reports=true"],
                ["set", "logical_switch_port", ln, f"tag={100 + idx % 3900}"],
                ["set", "logical_router_port", lrp, "options:reside-on-redirect-chassis=true"],
            ]
        records, ports = self._vms(net, vms, vm_ports, cmds)
        if idx % 2 == 1 and len(ports) >= 2:
            vips.append(self._virtual_port(net, ports[:2], cmds))
        if ports and idx % 3 == 0:
            self._trunk_subport(net, ports[0][0], cmds)
        if len(ports) > 2 and idx % 4 == 1:
            cmds.append(["lsp-set-enabled", ports[2][0], "disabled"])  # an admin-down port
        if idx % 3 == 2:
            self._external_port(net, cmds)
        if records:
            cmds += [
                [f"--id=@dns{idx}", "create", "DNS", "records={" + ",".join(records) + "}",
                 f"external_ids:ls_name={sw}"],
                ["add", "logical_switch", sw, "dns_records", f"@dns{idx}"],
            ]
        return cmds

    def _router_interface(self, net: _Net, router: str, router_id: str, cmds: list[Cmd]) -> str:
        """The router port on the network (with its RA configuration) and its switch-side peer."""
        v4, v6, sw = net.v4, net.v6, net.sw
        gw4, gw6 = net.gw4, v6.network_address + 1
        rp_id = self.ids.uuid()
        lrp, lrp_mac = f"lrp-{rp_id}", self.ids.mac()
        ra = {"address_mode": net.mode, "mtu": str(TENANT_MTU)}
        if net.idx % 4 < 2:
            ra |= {"send_periodic": "true", "max_interval": "900", "min_interval": "450"}
        cmds += [
            ["lrp-add", router, lrp, lrp_mac, f"{gw4}/{v4.prefixlen}", f"{gw6}/{v6.prefixlen}"],
            ["set", "logical_router_port", lrp, "ipv6_ra_configs={" + ",".join(f'{k}="{v}"' for k, v in
                                                                         ra.items()) + "}",
             "external_ids=" + _ext_ids(network_name=sw, is_ext_gw="False", router_name=router_id)],
            ["lsp-add", sw, rp_id], ["lsp-set-type", rp_id, "router"], ["lsp-set-addresses", rp_id, "router"],
            ["lsp-set-options", rp_id, f"router-port={lrp}"],
            ["set", "logical_switch_port", rp_id,
             "external_ids=" + _ext_ids(device_owner="network:router_interface", device_id=router_id)],
        ]
        return lrp

    def _dhcp_options(self, net: _Net, cmds: list[Cmd]) -> None:
        """The DHCPv4 options (and DHCPv6 ones on a stateless network), named ``net.d4`` / ``net.d6``."""
        v4, v6, gw4 = net.v4, net.v6, net.gw4
        dhcp_mac = self.ids.mac()
        v4_opts = {
            "lease_time": "43200", "mtu": str(TENANT_MTU), "router": str(gw4), "server_id": str(gw4),
            "server_mac": dhcp_mac, "dns_server": "{8.8.8.8}",
            "classless_static_route": f"{{169.254.169.254/32,{v4.network_address + 2}, 0.0.0.0/0,{gw4}}}",
        }
        cmds.append([f"--id={net.d4}", "create", "DHCP_Options", f"cidr={v4}",
                     "options=" + "{" + ",".join(f'{k}="{v}"' for k, v in v4_opts.items()) + "}",
                     "external_ids=" + _ext_ids(subnet_id=self.ids.uuid(), revision_number="0")])
        if net.mode == "dhcpv6_stateless":
            cmds.append([f"--id={net.d6}", "create", "DHCP_Options", f'cidr="{v6}"',
                         f'options={{server_id="{dhcp_mac}",dhcpv6_stateless="true",dns_server="{{2001:4860:4860::8888}}"}}',
                         "external_ids=" + _ext_ids(subnet_id=self.ids.uuid(), revision_number="0")])

    def _metadata_port(self, net: _Net, cmds: list[Cmd]) -> None:
        v4, sw = net.v4, net.sw
        meta, meta_mac = f"ovnmeta-{net.net_id}", self.ids.mac()
        cmds += [
            ["lsp-add", sw, meta], ["lsp-set-type", meta, "localport"],
            ["lsp-set-addresses", meta, f"{meta_mac} {v4.network_address + 2} {eui64(net.v6, meta_mac)}"],
            ["set", "logical_switch_port", meta,
             "external_ids=" + _ext_ids(device_owner="network:distributed", device_id=meta,
                                        cidrs=f"{v4.network_address + 2}/24")],
        ]

    def _vms(self, net: _Net, vms: int, vm_ports: list[tuple[str, str, str]],
             cmds: list[Cmd]) -> tuple[list[str], list[tuple[str, str, str, str]]]:
        """The VMs' ports; returns their DNS records and (name, mac, ipv4, ipv6) each."""
        t, n, idx, sw, v4, v6 = net.t, net.n, net.idx, net.sw, net.v4, net.v6
        records: list[str] = []
        ports: list[tuple[str, str, str, str]] = []  # (name, mac, ipv4, ipv6) of this network's VMs
        for v in range(vms):
            port, mac = self.ids.uuid(), self.ids.mac()
            ip4 = str(v4.network_address + 10 + v)
            ip6 = str(eui64(v6, mac))
            addr = f"{mac} {ip4} {ip6}"
            host = f"vm-{t}-{n}-{v}"
            no_port_security = v == vms - 1 and idx % 5 == 0 and vms > 1
            cmds += [
                ["lsp-add", sw, port],
                ["lsp-set-addresses", port, addr, *(["unknown"] if no_port_security else [])],
                ["lsp-set-options", port, f"requested-chassis={COMPUTES[(idx + v) % len(COMPUTES)]}"],
                ["set", "logical_switch_port", port, f"dhcpv4_options={net.d4}",
                 "external_ids=" + _ext_ids(device_owner="compute:nova", port_name=host,
                                            cidrs=f"{ip4}/24 {ip6}/64")],
            ]
            if not no_port_security:
                cmds.append(["lsp-set-port-security", port, addr])
            if net.mode == "dhcpv6_stateless":
                cmds.append(["set", "logical_switch_port", port, f"dhcpv6_options={net.d6}"])
            fqdn, ptr = f"{host}.tenant{t}.example.org", ".".join(reversed(ip4.split("."))) + ".in-addr.arpa"
            records += [f'"{host}"="{ip4} {ip6}"', f'"{fqdn}"="{ip4} {ip6}"', f'"{ptr}"="{fqdn}"']
            ports.append((port, mac, ip4, ip6))
            if not no_port_security:
                vm_ports.append((port, mac, ip4))
        return records, ports

    def _virtual_port(self, net: _Net, parents: list[tuple[str, str, str, str]], cmds: list[Cmd]) -> str:
        """A VIP shared by the first two VMs (allowed address pairs): a virtual port; returns the VIP."""
        vip, vport, vmac = str(net.v4.network_address + 250), self.ids.uuid(), self.ids.mac()
        cmds += [
            ["lsp-add", net.sw, vport], ["lsp-set-type", vport, "virtual"],
            ["lsp-set-addresses", vport, f"{vmac} {vip}"], ["lsp-set-port-security", vport, f"{vmac} {vip}"],
            ["lsp-set-options", vport, f"virtual-ip={vip}",
             "virtual-parents=" + ",".join(name for name, _, _, _ in parents)],
            ["set", "logical_switch_port", vport,
             "external_ids=" + _ext_ids(device_owner="", port_name=f"vip-{net.t}-{net.n}", cidrs=f"{vip}/24")],
        ]
        for name, mac, ip4, ip6 in parents:
            cmds.append(["lsp-set-port-security", name, f"{mac} {ip4} {ip6} {vip}"])
        return vip

    def _trunk_subport(self, net: _Net, parent: str, cmds: list[Cmd]) -> None:
        """A trunk subport (VLAN-aware VM) on the first VM, and a QoS bandwidth limit on it."""
        idx = net.idx
        sub, smac = self.ids.uuid(), self.ids.mac()
        sip4, sip6 = str(net.v4.network_address + 150), str(eui64(net.v6, smac))
        cmds += [
            ["lsp-add", net.sw, sub, parent, str(10 + idx % 4000)],
            ["lsp-set-addresses", sub, f"{smac} {sip4} {sip6}"],
            ["lsp-set-port-security", sub, f"{smac} {sip4} {sip6}"],
            ["set", "logical_switch_port", sub, f"dhcpv4_options={net.d4}",
             "external_ids=" + _ext_ids(device_owner="trunk:subport", port_name=f"sub-{net.t}-{net.n}")],
            ["qos-add", net.sw, "from-lport", "2002", f'inport == "{parent}"', "rate=10000", "burst=1000"],
            ["qos-add", net.sw, "from-lport", "2001", f'inport == "{parent}" && ip', "dscp=26"],
        ]

    def _external_port(self, net: _Net, cmds: list[Cmd]) -> None:
        """A baremetal / SR-IOV port: type external, bound through an HA chassis group."""
        idx = net.idx
        ext, emac = self.ids.uuid(), self.ids.mac()
        eip4, eip6 = str(net.v4.network_address + 200), str(eui64(net.v6, emac))
        hcs = [f"@hc{idx}_{k}" for k in range(2)]
        for k, hc in enumerate(hcs):
            cmds.append([f"--id={hc}", "create", "HA_Chassis", f"chassis_name={CHASSIS[(idx + k) % 4]}",
                         f"priority={32767 - k}"])
        cmds += [
            [f"--id=@hag{idx}", "create", "HA_Chassis_Group", f"name=neutron-extport-{net.net_id}",
             "ha_chassis=[" + ",".join(hcs) + "]"],
            ["lsp-add", net.sw, ext], ["lsp-set-type", ext, "external"],
            ["lsp-set-addresses", ext, f"{emac} {eip4} {eip6}"],
            ["lsp-set-port-security", ext, f"{emac} {eip4} {eip6}"],
            ["set", "logical_switch_port", ext, f"ha_chassis_group=@hag{idx}", f"dhcpv4_options={net.d4}",
             "external_ids=" + _ext_ids(device_owner="baremetal:none", port_name=f"bm-{net.t}-{net.n}")],
        ]


@dataclass(frozen=True, slots=True)
class _Net:
    """One tenant network being generated."""

    t: int
    n: int
    idx: int
    net_id: str
    sw: str
    v4: ipaddress.IPv4Network
    v6: ipaddress.IPv6Network
    mode: str  # the IPv6 address mode: slaac or dhcpv6_stateless

    @property
    def gw4(self) -> ipaddress.IPv4Address:
        return self.v4.network_address + 1

    @property
    def d4(self) -> str:
        return f"@dhcp4_{self.idx}"

    @property
    def d6(self) -> str:
        return f"@dhcp6_{self.idx}"


def neutron_commands(
    tenants: int = 10, nets_per_tenant: int = 2, vms_per_net: int = 5, fips: int = 2, seed: int = 0
) -> list[list[Cmd]]:
    """The NB as batches of ovn-nbctl commands (each batch one transaction of whole tenants)."""
    b = _Builder(seed)
    first, provider_sw = b.provider()
    pg_drop = "neutron_pg_drop"
    first += [
        ["pg-add", pg_drop],
        ["--type=port-group", "acl-add", pg_drop, "from-lport", "1001", f"inport == @{pg_drop} && ip", "drop"],
        ["--type=port-group", "acl-add", pg_drop, "to-lport", "1001", f"outport == @{pg_drop} && ip", "drop"],
    ]
    batches: list[list[Cmd]] = [first]
    for t in range(tenants):
        cmds = b.tenant(t, provider_sw, nets_per_tenant, vms_per_net, fips)
        if len(batches[-1]) + len(cmds) > BATCH and len(batches[-1]) > len(first):
            batches.append([])
        batches[-1].extend(cmds)
    if b.all_vms:
        batches.append([["pg-set-ports", pg_drop, *b.all_vms]])
    return batches


def neutron_names(seed: int = 0) -> dict[str, str]:
    """Rows of the first tenant (the same at any scale): ``sw`` its first network's switch, ``lr``
    its router, ``gw`` the same router (it has a gateway port, for NAT)."""
    cmds = [c for batch in neutron_commands(1, 1, 1, 0, seed) for c in batch]
    router = next(c[1] for c in cmds if c[0] == "lr-add")
    switches = [c[1] for c in cmds if c[0] == "ls-add"]
    return {"sw": switches[1], "lr": router, "gw": router}


def _run(remote: str, batch: Sequence[Cmd]) -> None:
    args: list[str] = []
    for i, cmd in enumerate(batch):
        args += (["--"] if i else []) + cmd
    nbctl(remote, *args, timeout=300)


def build_neutron_nb(
    remote: str, tenants: int = 10, nets_per_tenant: int = 2, vms_per_net: int = 5, fips: int = 2, seed: int = 0
) -> None:
    """Fill the NB at ``remote`` with a Neutron-like network (see the module docstring)."""
    for batch in neutron_commands(tenants, nets_per_tenant, vms_per_net, fips, seed):
        _run(remote, batch)


def main(argv: Sequence[str]) -> int:
    if not argv or len(argv) > 6:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    build_neutron_nb(argv[0], *(int(a) for a in argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
