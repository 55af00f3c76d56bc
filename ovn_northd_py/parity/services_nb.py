"""NBs exercising the switch services stages: ARP/ND responder, DHCP, DNS and external ports.

Every case here was checked on the reference ovn-northd 23.03.  Usable as parity
sources (``parity_run(build_services_nb)``) and as an offline-tool script::

    python -m ovn_northd_py.parity.offline --stages ls_in_arp_rsp ls_in_dhcp_options \\
        ls_in_dhcp_response ls_in_dns_lookup ls_in_dns_response ls_in_external_port \\
        --script ovn_northd_py/parity/services_nb.py NB_REMOTE
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ovn_northd_py.devtools.servers import nbctl

V4_OK = '"server_id"="10.0.0.254" "server_mac"="00:00:00:00:ff:01" "lease_time"="3600"'


def _txn(remote: str, *commands: Sequence[str]) -> str:
    args: list[str] = []
    for i, c in enumerate(commands):
        args += (["--"] if i else []) + list(c)
    return nbctl(remote, *args)


def _create(remote: str, table: str, *columns: str) -> str:
    return nbctl(remote, "create", table, *columns).strip()


def _vif(sw: str, name: str, *addresses: str) -> list[list[str]]:
    return [["lsp-add", sw, name], ["lsp-set-addresses", name, *addresses]]


def _typed(sw: str, name: str, kind: str, *addresses: str) -> list[list[str]]:
    cmds = [["lsp-add", sw, name], ["lsp-set-type", name, kind]]
    return cmds + ([["lsp-set-addresses", name, *addresses]] if addresses else [])


def _router(sw: str, rtr: str, lsp: str, mac: str, nets: Sequence[str], *addresses: str) -> list[list[str]]:
    lrp = f"{rtr}-{sw}"
    return [
        ["lr-add", rtr], ["lrp-add", rtr, lrp, mac, *nets],
        *_typed(sw, lsp, "router", *addresses),
        ["lsp-set-options", lsp, f"router-port={lrp}"],
    ]


def _localnet(sw: str, name: str, *addresses: str) -> list[list[str]]:
    return [*_typed(sw, name, "localnet", *(addresses or ("unknown",))),
            ["lsp-set-options", name, "network_name=phys"]]


def build_services_nb(remote: str) -> None:
    """Switch ports of every type with ARP/ND, DHCP, DNS and external-port corner cases."""
    cmds: list[list[str]] = [["ls-add", s] for s in ("sw0", "sw1", "sw2", "sw3", "sw4")]
    cmds += [["set", "logical_switch", "sw0", "other_config:subnet=10.0.0.0/24"]]
    # sw0: VIFs with IPv4/IPv6, several entries, unknown, disabled, bad tokens, dynamic.
    cmds += _vif("sw0", "vm1", "00:00:00:00:00:01 10.0.0.1/24 fd00::1/64 fd00::11")
    cmds += _vif("sw0", "vm2", "00:00:00:00:00:02 10.0.0.2 10.0.0.22", "00:00:00:00:00:12 192.168.0.2 10.0.0.12")
    cmds += _vif("sw0", "vm3", "unknown", "00:00:00:00:00:03 10.0.0.3")
    cmds += [*_vif("sw0", "vm4", "00:00:00:00:00:04 10.0.0.4 fd00::4"), ["lsp-set-enabled", "vm4", "disabled"]]
    cmds += _vif("sw0", "bad1", "00:00:00:00:00:31 10.0.0.31 foo 10.0.0.32", "00:00:00:00:00:32, 10.0.0.33")
    cmds += _vif("sw0", "v6", "0A:00:00:00:00:06 FD00::0:6 fe80::6 ::ffff:10.0.0.6")
    cmds += _vif("sw0", "maconly", "00:00:00:00:00:0a")
    cmds += _vif("sw0", "dyn", "dynamic") + _vif("sw0", "dyn2", "00:00:00:00:00:33 dynamic")
    cmds += _typed("sw0", "lp", "localport", "00:00:00:00:00:05 10.0.0.5")
    cmds += _typed("sw0", "vt", "vtep", "00:00:00:00:00:44 10.0.0.44")
    cmds += _typed("sw0", "l2g", "l2gateway", "00:00:00:00:00:45 10.0.0.45")
    cmds += _typed("sw0", "rem", "remote", "00:00:00:00:00:46 10.0.0.46")
    cmds += _localnet("sw0", "ln0") + _localnet("sw0", "ln0b", "00:00:00:00:00:47 10.0.0.47")
    # External ports.
    cmds += _typed("sw0", "ext", "external", "00:00:00:00:00:21 10.0.0.21 fd00::21", "00:00:00:00:00:22 10.0.0.23")
    cmds += _typed("sw0", "ext2", "external", "00:00:00:00:00:23 10.0.0.24", "unknown")
    cmds += [["lsp-set-enabled", "ext2", "disabled"]]
    cmds += _typed("sw0", "ext3", "external")
    cmds += [["ha-chassis-group-add", "hg"], ["ha-chassis-group-add-chassis", "hg", "hv1", "20"],
             ["ha-chassis-group-add-chassis", "hg", "hv2", "10"]]
    # Router-type ports: "router", explicit addresses, arp_proxy, dangling, unknown, disabled router port.
    cmds += _router("sw0", "r0", "sw0-r0", "00:00:00:00:ff:01", ["10.0.0.254/24", "fd00::ff/64"], "router")
    cmds += [["lsp-set-options", "sw0-r0", "router-port=r0-sw0", "arp_proxy=10.0.0.101 10.0.0.100 10.1.0.0/24 bogus"]]
    cmds += _router("sw0", "r1", "sw0-r1", "00:00:00:00:ff:02", ["10.0.0.253/24"],
                    "00:00:00:00:ee:02 10.0.0.233 fd00::233", "00:00:00:00:ee:03")
    cmds += [["lsp-set-options", "sw0-r1", "router-port=r1-sw0", "arp_proxy=10.0.0.50,10.0.0.51"]]
    cmds += _router("sw0", "r2", "sw0-r2", "00:00:00:00:ff:03", ["10.0.0.252/24"], "router", "unknown")
    cmds += [["lsp-set-options", "sw0-r2", "router-port=r2-sw0", "arp_proxy=10.0.0.105"]]
    cmds += _router("sw0", "r3", "sw0-r3", "00:00:00:00:ff:04", ["10.0.0.251/24"], "router")
    cmds += [["lrp-set-enabled", "r3-sw0", "disabled"]]
    cmds += _typed("sw0", "dang", "router", "00:00:00:00:00:07 10.0.0.7 fd00::7")
    cmds += [["lsp-set-options", "dang", "router-port=nothere", "arp_proxy=10.0.0.103"]]
    cmds += _router("sw0", "r4", "sw0-r4", "00:00:00:00:ff:05", ["10.0.0.250/24"])
    cmds += [["lsp-set-options", "sw0-r4", "router-port=r4-sw0", "arp_proxy=010.0.0.8 10.0.0.9 fd00::9 10.0.0.7/33"]]
    # sw1: vlan-passthru (no responder flows), an external port without localnet.
    cmds += [["set", "logical_switch", "sw1", "other_config:vlan-passthru=TRUE"]]
    cmds += _vif("sw1", "vm9", "00:00:00:00:01:09 10.1.0.9")
    cmds += [*_typed("sw1", "vip9", "virtual"), ["lsp-set-options", "vip9", "virtual-ip=10.1.0.10", "virtual-parents=vm9"]]
    cmds += _localnet("sw1", "ln1")
    cmds += _router("sw1", "r5", "sw1-r5", "00:00:00:00:ff:06", ["10.1.0.254/24"], "router")
    cmds += [["lsp-set-options", "sw1-r5", "router-port=r5-sw1", "arp_proxy=10.1.0.106"]]
    cmds += _typed("sw2", "ext4", "external", "00:00:00:00:02:04 10.2.0.4")
    cmds += _router("sw2", "r6", "sw2-r6", "00:00:00:00:ff:07", ["10.2.0.254/24"], "router")
    # sw2: forwarding group; sw3: health-checked load balancer backends.
    cmds += _vif("sw2", "vm21", "00:00:00:00:02:01 10.2.0.1") + _vif("sw2", "vm22", "00:00:00:00:02:02 10.2.0.2")
    cmds += [["fwd-group-add", "fg", "sw2", "10.2.0.50", "00:00:00:00:02:50", "vm21", "vm22"]]
    cmds += _vif("sw3", "vm31", "00:00:00:00:03:01 10.3.0.1 fd03::1") + _vif("sw3", "vm32", "00:00:00:00:03:02 10.3.0.2")
    cmds += [["--liveness", "fwd-group-add", "fg3", "sw3", "10.3.0.50", "00:00:00:00:03:50", "vm32", "vm31"]]
    cmds += [["lb-add", "lb0", "10.3.0.100:80", "10.3.0.1:80,10.3.0.2:80,10.3.0.9:80"],
             ["lb-add", "lb0", "[fd03::100]:80", "[fd03::1]:80"], ["ls-lb-add", "sw2", "lb0"],
             ["set", "load_balancer", "lb0", "ip_port_mappings:10.3.0.1=vm31:10.3.0.201",
              "ip_port_mappings:10.3.0.2=vm32:10.3.0.202", "ip_port_mappings:10.3.0.9=gone:10.3.0.209",
              'ip_port_mappings:"[fd03::1]"="vm31:[fd03::201]"'],
             ["lb-add", "lb1", "10.3.0.101:80", "10.3.0.2:80"],
             ["set", "load_balancer", "lb1", "ip_port_mappings:10.3.0.2=vm32:10.3.0.212"]]
    # sw4 (no router: the routers' own virtual-port flows are not this NB's subject): virtual ports,
    # parents on this switch only, names verbatim, inet_pton-strict VIPs printed as written.
    cmds += _vif("sw4", "vm41", "00:00:00:00:04:01 10.0.0.41") + _vif("sw4", "vm42", "00:00:00:00:04:02 10.0.0.42")
    cmds += _typed("sw4", "lp4", "localport", "00:00:00:00:04:05 10.0.0.45")
    cmds += _typed("sw4", "vip", "virtual", "00:00:00:00:00:0b 10.0.0.10")
    cmds += [["lsp-set-options", "vip", "virtual-ip=10.0.0.10", "virtual-parents=vm41,vm42,nonexist,vm9,,vm41"]]
    cmds += [*_typed("sw4", "vip6", "virtual"), ["lsp-set-options", "vip6", "virtual-ip=FD00::0:10", "virtual-parents=vm41, vm42,lp4"]]
    cmds += [*_typed("sw4", "vipbad", "virtual"), ["lsp-set-options", "vipbad", "virtual-ip=010.0.0.14", "virtual-parents=vm41"]]
    cmds += [*_typed("sw4", "vipnoparent", "virtual"), ["lsp-set-options", "vipnoparent", "virtual-ip=10.0.0.15"]]
    _txn(remote, *cmds)
    hg = nbctl(remote, "--bare", "--columns=_uuid", "find", "ha_chassis_group", "name=hg").strip()
    _txn(remote, ["set", "logical_switch_port", "ext", f"ha_chassis_group={hg}"],
         ["set", "logical_switch_port", "ext4", f"ha_chassis_group={hg}"])
    for vip in ('"10.3.0.100:80"', '"[fd03::100]:80"'):
        nbctl(remote, "--id=@hc", "create", "load_balancer_health_check", f"vip={vip}",
              "--", "add", "load_balancer", "lb0", "health_check", "@hc")
    _dhcp(remote)
    _dns(remote)


def _dhcp(remote: str) -> None:
    a = _create(remote, "dhcp_options", "cidr=10.0.0.0/24", f"options={{{V4_OK} \"router\"=\"10.0.0.254\" "
                '"dns_server"="{8.8.8.8,1.1.1.1}" "domain_name"="\\"ovn.org\\"" "netmask"="255.255.0.0" '
                '"hostname"="\\"h\\"" "T1"="5"}')
    b6 = _create(remote, "dhcp_options", 'cidr="fd00::/64"', 'options={"server_id"="00:00:00:00:FF:02" '
                 '"dns_server"="{fd00::53}"}')
    s6 = _create(remote, "dhcp_options", 'cidr="FD00::0/64"', 'options={"server_id"="00:00:00:00:ff:03" '
                 '"dhcpv6_stateless"="TRUE" "domain_search"="\\"ovn.org\\""}')
    odd = _create(remote, "dhcp_options", 'cidr=" 10.0.0.0/255.255.255.0"', 'options={"server_id"="abc" '
                  '"server_mac"="zz" "lease_time"="x" "offerip"="1.1.1.1"}')
    bad = [
        _create(remote, "dhcp_options", "cidr=10.0.0.0/24", 'options={"server_mac"="00:00:00:00:ff:01" "lease_time"="1"}'),
        _create(remote, "dhcp_options", "cidr=10.0.0.0/24", 'options={"server_id"="10.0.0.254" "lease_time"="1"}'),
        _create(remote, "dhcp_options", "cidr=10.0.0.0/24", 'options={"server_id"="10.0.0.254" "server_mac"="0"}'),
        _create(remote, "dhcp_options", "cidr=10.0.0.0/33", f"options={{{V4_OK}}}"),
        _create(remote, "dhcp_options", 'cidr="fd00::/64"', f"options={{{V4_OK}}}"),
    ]
    bad6 = _create(remote, "dhcp_options", 'cidr="fd00::/64"', 'options={"server_id"="zz"}')
    cmds: list[list[str]] = []
    for p in ("vm1", "vm2", "vm3", "vm4", "lp", "vt", "dyn", "ext", "ext2", "ext4", "sw0-r1", "ln0b", "v6", "vip"):
        cmds.append(["set", "logical_switch_port", p, f"dhcpv4_options={a}"])
    for p in ("vm1", "v6", "vm4"):
        cmds.append(["set", "logical_switch_port", p, f"dhcpv6_options={b6}"])
    cmds += [["set", "logical_switch_port", "ext", f"dhcpv6_options={s6}"],
             ["set", "logical_switch_port", "vm2", "options:hostname=myhost"],
             ["set", "logical_switch_port", "bad1", f"dhcpv4_options={odd}"],
             ["set", "logical_switch_port", "l2g", f"dhcpv6_options={bad6}"]]
    for p, row in zip(("rem", "dyn2", "vm9", "vm21", "vm22"), bad, strict=False):
        cmds.append(["set", "logical_switch_port", p, f"dhcpv4_options={row}"])
    _txn(remote, *cmds)


def _dns(remote: str) -> None:
    d1 = _create(remote, "dns", 'records={"vm1.ovn.org"="10.0.0.1 fd00::1", "VM2.ovn.org"="10.0.0.2"}',
                 "external_ids:foo=bar")
    d2 = _create(remote, "dns", 'records={"vm3.ovn.org"="10.0.0.3"}')
    empty = _create(remote, "dns", "records={}")
    _create(remote, "dns", 'records={"unused.org"="1.2.3.4"}')
    _txn(remote, ["add", "logical_switch", "sw0", "dns_records", d1, d2],
         ["add", "logical_switch", "sw1", "dns_records", d1], ["add", "logical_switch", "sw2", "dns_records", empty])


def build_lsp_down_nb(remote: str) -> None:
    """NB_Global ``ignore_lsp_down=false``: only router and localport ports (and ports up) answer ARP."""
    cmds: list[list[str]] = [["set", "nb_global", ".", "options:ignore_lsp_down=false"], ["ls-add", "sw0"]]
    cmds += _vif("sw0", "vm1", "00:00:00:00:00:01 10.0.0.1 fd00::1")
    cmds += _typed("sw0", "lp", "localport", "00:00:00:00:00:05 10.0.0.5")
    cmds += _typed("sw0", "vt", "vtep", "00:00:00:00:00:06 10.0.0.6")
    cmds += _localnet("sw0", "ln", "00:00:00:00:00:07 10.0.0.7")
    cmds += _router("sw0", "r0", "sw0-r0", "00:00:00:00:ff:01", ["10.0.0.254/24"], "router")
    _txn(remote, *cmds)


if __name__ == "__main__":
    {"services": build_services_nb, "lsp_down": build_lsp_down_nb}[sys.argv[2] if len(sys.argv) > 2 else "services"](
        sys.argv[1]
    )
