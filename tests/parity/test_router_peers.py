"""Parity for router ports peering router ports (``Logical_Router_Port.peer``): a peering one side
names, a circle of three, a proper pair, and a switch port naming a router port that has a peer of
its own.
"""

from __future__ import annotations

from ovn_northd_py.parity.harness import assert_parity, nbctl_commands

PEERS = nbctl_commands(
    # one-sided: a0 -> b0, b0 names nothing
    ["lr-add", "a"], ["lr-add", "b"], ["lr-add", "c"],
    ["lrp-add", "a", "a0", "00:00:00:02:ff:01", "10.10.0.1/24", "peer=b0"],
    ["lrp-add", "b", "b0", "00:00:00:02:ff:02", "10.10.0.2/24"],
    # a circle: a1 -> b1 -> c1 -> a1
    ["lrp-add", "a", "a1", "00:00:00:02:ff:11", "10.11.0.1/24", "peer=b1"],
    ["lrp-add", "b", "b1", "00:00:00:02:ff:12", "10.11.0.2/24", "peer=c1"],
    ["lrp-add", "c", "c1", "00:00:00:02:ff:13", "10.11.0.3/24", "peer=a1"],
    # a pair
    ["lrp-add", "a", "a2", "00:00:00:02:ff:21", "10.12.0.1/24", "peer=c2"],
    ["lrp-add", "c", "c2", "00:00:00:02:ff:22", "10.12.0.2/24", "peer=a2"],
    # a switch port naming a router port peered elsewhere
    ["lr-add", "d"], ["ls-add", "ls"],
    ["lrp-add", "d", "d0", "00:00:00:01:ff:01", "192.168.1.1/24", "peer=d1"],
    ["lrp-add", "d", "d1", "00:00:00:01:ff:02", "192.168.1.2/24", "peer=d0"],
    ["lsp-add", "ls", "ls-d1"], ["lsp-set-type", "ls-d1", "router"], ["lsp-set-options", "ls-d1", "router-port=d1"],
    ["lsp-set-addresses", "ls-d1", "router"],
)


def test_router_port_peers(parity_run) -> None:
    r = parity_run(PEERS, tables=("Port_Binding", "Logical_Flow"))
    assert_parity(r)
