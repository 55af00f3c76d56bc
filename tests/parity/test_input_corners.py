"""Parity on input the reference reads leniently or in a particular way (issue 13's "known gaps"):

* IPv4 text with an octet above 255 in switch port ``addresses`` and router port ``networks``: the
  reference takes each octet modulo 256 (``256.1.1.1`` answers ARP as 0.1.1.1, ``300.1.1.1/24`` makes
  the router own 44.1.1.1); ``10.0.0.1/33`` is not an address;
* a localnet port with a VLAN (``lsp-add SW PORT "" TAG``): Port_Binding ``parent_port=""`` and
  ``tag``; a gateway port on its switch checks ``gateway_mtu`` + 18 instead of + 14;
* localnet ports with QoS parameters (``qos_max_rate``, ``qos_burst``, ``qos_min_rate``): each gets
  ``qdisc_queue_id=1`` on its Port_Binding and ``set_queue(1)`` flows;
* ``selection_fields`` of a load balancer with no ``protocol``: ``tp_src`` stays ``tp_src`` in
  ``hash_fields`` (with a protocol it becomes ``tcp_src``).

Every SB table must be equal.
"""

from __future__ import annotations

from test_router_basics import rport, vif

from ovn_northd_py.parity.harness import assert_parity, nbctl_commands


def test_ipv4_octets_above_255_are_read_modulo_256(parity_run):
    nb = nbctl_commands(
        ["ls-add", "sw0"],
        *vif("sw0", "vm1", "00:00:00:00:00:11 256.1.1.1"),
        *vif("sw0", "vm2", "00:00:00:00:00:12 10.0.0.1/33"),
        *vif("sw0", "vm3", "00:00:00:00:00:13 10.9.0.3 999.9.0.4"),
        ["lr-add", "lr0"],
        ["lrp-add", "lr0", "lrp0", "00:00:00:00:01:01", "300.1.1.1/24"],
        ["lrp-add", "lr0", "lrp1", "00:00:00:00:01:02", "10.9.0.1/24"],
        *rport("sw0", "sw0-lr0", "lrp1"),
    )
    assert_parity(parity_run(nb))


def test_vlan_localnet_port_binding_and_gateway_mtu(parity_run):
    nb = nbctl_commands(
        ["ls-add", "pub"], ["lr-add", "lr0"],
        ["lrp-add", "lr0", "lrp-pub", "00:00:00:00:02:01", "172.16.0.1/24"],
        ["lrp-set-gateway-chassis", "lrp-pub", "hv1", "10"],
        ["set", "logical_router_port", "lrp-pub", "options:gateway_mtu=1400"],
        ["lrp-add", "lr0", "lrp-in", "00:00:00:00:02:02", "10.0.0.1/24"],
        ["ls-add", "in"], *rport("in", "in-lr0", "lrp-in"),
        *vif("in", "vm1", "0a:00:00:00:00:01 10.0.0.5"),
        ["lr-nat-add", "lr0", "dnat_and_snat", "172.16.0.70", "10.0.0.5", "vm1", "0a:00:00:00:99:01"],
        *rport("pub", "pub-lr0", "lrp-pub"),
        ["lsp-add", "pub", "ln0", "", "100"], ["lsp-set-type", "ln0", "localnet"],
        ["lsp-set-addresses", "ln0", "unknown"], ["lsp-set-options", "ln0", "network_name=phys"],
    )
    assert_parity(parity_run(nb))


def test_selection_fields_without_protocol(parity_run):
    nb = nbctl_commands(
        ["ls-add", "sw0"], *vif("sw0", "vm1", "00:00:00:00:00:11 10.0.0.11"),
        ["create", "Load_Balancer", "name=lb1", 'vips:"172.16.0.20:80"="10.0.0.11:8080"', "selection_fields=tp_src"],
        ["create", "Load_Balancer", "name=lb2", 'vips:"172.16.0.21"="10.0.0.11"', "selection_fields=ip_src,tp_src"],
        ["create", "Load_Balancer", "name=lb3", 'vips:"172.16.0.22:80"="10.0.0.11:80"', "protocol=udp",
         "selection_fields=tp_dst,ip_dst"],
        ["ls-lb-add", "sw0", "lb1"], ["ls-lb-add", "sw0", "lb2"], ["ls-lb-add", "sw0", "lb3"],
        ["lr-add", "lr0"], ["lrp-add", "lr0", "lrp0", "00:00:00:00:01:01", "10.0.0.1/24"],
        ["set", "logical_router", "lr0", "options:chassis=hv1"],
        *rport("sw0", "sw0-lr0", "lrp0"), ["lr-lb-add", "lr0", "lb1"], ["lr-lb-add", "lr0", "lb3"],
    )
    assert_parity(parity_run(nb))


def test_localnet_ports_with_qos_parameters_get_a_queue(parity_run):
    cmds: list[list[str]] = [["ls-add", "sw0"], ["ls-add", "sw1"]]
    for ln, sw, opt in (("ln0", "sw0", "qos_max_rate=1000000"), ("ln1", "sw0", "qos_burst=1000"),
                        ("ln2", "sw1", "qos_min_rate=5"), ("ln3", "sw1", "qdisc_queue_id=7")):
        cmds += vif(sw, ln, "unknown", type="localnet", options=[f"network_name=phys-{ln}", opt])
    cmds += vif("sw1", "vm1", "0a:00:00:00:00:01 10.0.0.5", options=["qos_max_rate=1000"])
    assert_parity(parity_run(nbctl_commands(*cmds)))


def test_nat_external_ip_with_octet_above_255(parity_run):
    """ARP replies for the address read modulo 256, NAT flows and nat-addresses with the text."""
    nb = nbctl_commands(
        ["ls-add", "ext"], ["ls-add", "in"], ["lr-add", "g1"],
        ["set", "logical_router", "g1", "options:chassis=hv1"],
        ["lrp-add", "g1", "g1-ext", "02:00:00:00:10:01", "172.16.0.10/24"],
        ["lrp-add", "g1", "g1-in", "02:00:00:00:10:02", "10.1.0.1/24"],
        *rport("ext", "ext-g1", "g1-ext"), *rport("in", "in-g1", "g1-in"),
        ["lsp-set-options", "ext-g1", "router-port=g1-ext", "nat-addresses=router"],
        *vif("in", "vm1", "0a:00:00:00:00:01 10.1.0.31"),
        ["--id=@n", "create", "NAT", "type=dnat_and_snat", 'external_ip="10.0.0.300"', 'logical_ip="10.1.0.31"'],
        ["add", "logical_router", "g1", "nat", "@n"],
        ["--id=@m", "create", "NAT", "type=snat", 'external_ip="172.16.0.256"', 'logical_ip="10.1.0.0/24"'],
        ["add", "logical_router", "g1", "nat", "@m"],
    )
    assert_parity(parity_run(nb))


def test_nat_external_ip_followed_by_junk_and_distributed_lenient_ip(parity_run):
    """``1.2.3.4.5``: ARP replies for 1.2.3.4 and flooding of the text, no NAT; a floating IP
    ``256.1.1.1`` (logical port, external MAC) still counts as distributed (its own nat-addresses
    entry, no always-redirect)."""
    nb = nbctl_commands(
        ["ls-add", "ext"], ["ls-add", "in"], ["lr-add", "d1"],
        ["lrp-add", "d1", "d1-ext", "02:00:00:00:20:01", "172.16.0.20/24"],
        ["lrp-set-gateway-chassis", "d1-ext", "hv1", "20"],
        ["lrp-add", "d1", "d1-in", "02:00:00:00:20:02", "10.3.0.1/24"],
        *rport("ext", "ext-d1", "d1-ext"), *rport("in", "in-d1", "d1-in"),
        ["lsp-set-options", "ext-d1", "router-port=d1-ext", "nat-addresses=router"],
        *vif("in", "vm1", "0a:00:00:00:00:01 10.3.0.5"), *vif("in", "vm2", "0a:00:00:00:00:02 10.3.0.6"),
        ["--id=@n", "create", "NAT", "type=dnat", 'external_ip="1.2.3.4.5"', 'logical_ip="10.3.0.6"'],
        ["add", "logical_router", "d1", "nat", "@n"],
        ["--id=@m", "create", "NAT", "type=dnat_and_snat", 'external_ip="256.1.1.1"', 'logical_ip="10.3.0.5"',
         'logical_port="vm1"', 'external_mac="0a:00:00:00:99:01"'],
        ["add", "logical_router", "d1", "nat", "@m"],
        ["--id=@k", "create", "NAT", "type=snat", 'external_ip="172.16.0.20"', 'logical_ip="10.3.0.0/24"'],
        ["add", "logical_router", "d1", "nat", "@k"],
    )
    assert_parity(parity_run(nb))


def test_mac_bytes_of_more_than_two_hex_digits_are_read_modulo_256(parity_run):
    """``50:54:00:00:00:010`` is 50:54:00:00:00:10 to the reference (OVS' ``%hhx``), and
    ``100:00:00:00:07:03`` 00:00:00:00:07:03: the port's lookup, ARP/ND responder and
    port-security flows use it."""
    nb = nbctl_commands(
        ["ls-add", "sw0"],
        *vif("sw0", "vm1", "50:54:00:00:00:010 192.168.0.10 fd00::10"),
        ["lsp-set-port-security", "vm1", "50:54:00:00:00:010 192.168.0.10"],
        *vif("sw0", "vm2", "0:0:0:0:0:2 192.168.0.2"),
        *vif("sw0", "vm3", "100:00:00:00:07:03 192.168.0.3"),
    )
    assert_parity(parity_run(nb))
