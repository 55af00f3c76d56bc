"""Parity for switch ports of type ``switch`` (``man ovn-nb``: a connection to another logical
switch, ``options:peer`` naming its port).  25.03 (behaviour ``switch_peer_ports``): a ``patch``
Port_Binding, an implicit ``unknown`` address (``_MC_unknown``, ``ls_in_l2_unknown``), MAC learning;
an explicit address is looked up as usual.  23.03 knows no such type: like any type ``man
ovn-nb`` does not name, its Port_Binding type is empty.
"""

from __future__ import annotations

from ovn_northd_py.parity.harness import assert_parity, nbctl_commands


def _peer(a: str, b: str) -> list[list[str]]:
    return [["set", "logical_switch_port", a, "type=switch", f"options:peer={b}"]]


SWITCH_PEERS = nbctl_commands(
    ["ls-add", "S1"], ["lsp-add", "S1", "S1-vm"], ["lsp-set-addresses", "S1-vm", "50:54:00:00:00:01 192.168.0.1"],
    ["ls-add", "S2"], ["lsp-add", "S2", "S2-vm"], ["lsp-set-addresses", "S2-vm", "50:54:00:00:00:02 192.168.0.2"],
    ["ls-add", "S3"],
    ["lsp-add", "S1", "S1-S2"], ["lsp-add", "S2", "S2-S1"], *_peer("S1-S2", "S2-S1"), *_peer("S2-S1", "S1-S2"),
    ["lsp-set-addresses", "S1-S2", "50:54:00:00:00:02 192.168.0.2"],
    ["lsp-add", "S2", "S2-S3"], ["lsp-add", "S3", "S3-S2"], *_peer("S2-S3", "S3-S2"), *_peer("S3-S2", "S2-S3"),
    ["lsp-set-port-security", "S3-S2", "50:54:00:00:00:03"],
    ["lsp-add", "S3", "S3-foo"], ["set", "logical_switch_port", "S3-foo", "type=foo"],
)


def test_switch_ports_peering_other_switches(parity_run, parity_profile) -> None:
    r = parity_run(SWITCH_PEERS, tables=("Port_Binding", "Multicast_Group", "Logical_Flow"))
    assert_parity(r)
    assert r.ref_dump is not None
    types = {str(row["logical_port"]): str(row["type"]) for row in r.ref_dump.rows("Port_Binding").values()}
    assert types["S1-S2"] == ("patch" if parity_profile.has("switch_peer_ports") else "")
    assert types["S3-foo"] == ""  # (any type man ovn-nb does not name)


# A stateful ACL on S1, a load balancer on S2, switch-type ports whose peer is missing, absent, not
# a switch-type port or disabled (26.03, behaviour ``switch_port_skips_conntrack``: every one of them
# skips conntrack in ls_{in,out}_pre_lb, and in ls_{in,out}_pre_acl on S1).
SWITCH_PEERS_STATEFUL = nbctl_commands(
    ["ls-add", "S1"], ["lsp-add", "S1", "S1-vm"], ["ls-add", "S2"], ["lsp-add", "S2", "S2-vm"],
    ["lsp-add", "S1", "S1-S2"], ["lsp-add", "S2", "S2-S1"], *_peer("S1-S2", "S2-S1"), *_peer("S2-S1", "S1-S2"),
    ["acl-add", "S1", "from-lport", "100", "ip4", "allow-related"],
    ["lb-add", "lb0", "10.0.0.10:80", "10.0.0.3:80"], ["ls-lb-add", "S2", "lb0"],
    ["lsp-add", "S1", "S1-bad"], *_peer("S1-bad", "nonexist"),
    ["lsp-add", "S1", "S1-nopeer"], ["set", "logical_switch_port", "S1-nopeer", "type=switch"],
    ["lsp-add", "S1", "S1-vmpeer"], *_peer("S1-vmpeer", "S2-vm"),
    ["ls-add", "S3"], ["lsp-add", "S3", "S3-S1"], ["lsp-add", "S1", "S1-S3"], *_peer("S1-S3", "S3-S1"),
    *_peer("S3-S1", "S1-S3"), ["set", "logical_switch_port", "S3-S1", "enabled=false"],
)


def test_switch_ports_with_stateful_acls_and_load_balancers(parity_run) -> None:
    assert_parity(parity_run(SWITCH_PEERS_STATEFUL, tables=("Port_Binding", "Multicast_Group", "Logical_Flow")))
