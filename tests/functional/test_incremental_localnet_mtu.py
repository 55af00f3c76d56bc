"""A VLAN-tagged localnet port changes the gateway_mtu check of the routers attached to its switch
(MTU + 18 instead of + 14, observed on the reference): adding, retagging and removing it is handled
incrementally, and incremental always equals recompute (--check-incremental)."""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.testing import apply_checked, checked_daemon


@pytest.fixture
def gateway(env):
    cmds: list[list[str]] = [
        ["ls-add", "pub"], ["ls-add", "int"], ["lr-add", "d1"],
        ["lrp-add", "d1", "d1-pub", "02:00:00:00:20:01", "172.16.0.20/24"],
        ["lrp-set-gateway-chassis", "d1-pub", "hv1", "20"],
        ["set", "logical_router_port", "d1-pub", "options:gateway_mtu=1400"],
        ["lrp-add", "d1", "d1-int", "02:00:00:00:20:02", "10.3.0.1/24"],
        ["lsp-add", "pub", "pub-d1"], ["lsp-set-type", "pub-d1", "router"],
        ["lsp-set-addresses", "pub-d1", "router"], ["lsp-set-options", "pub-d1", "router-port=d1-pub"],
        ["lsp-add", "int", "int-d1"], ["lsp-set-type", "int-d1", "router"],
        ["lsp-set-addresses", "int-d1", "router"], ["lsp-set-options", "int-d1", "router-port=d1-int"],
        ["lsp-add", "int", "vm1"], ["lsp-set-addresses", "vm1", "0a:00:00:00:00:01 10.3.0.5"],
        # A floating IP: its admission flow (router-wide NAT flows) checks the gateway MTU too.
        ["lr-nat-add", "d1", "dnat_and_snat", "172.16.0.70", "10.3.0.5", "vm1", "0a:00:00:00:99:01"],
    ]
    env.nbctl(*[w for i, c in enumerate(cmds) for w in ([] if i == 0 else ["--"]) + c])
    with checked_daemon(env) as ctx:
        yield ctx


def _pkt_lens(env) -> set[str]:
    """The lengths of every check_pkt_larger() in SB logical flows."""
    out = env.sbctl("--bare", "--columns=actions", "list", "Logical_Flow")
    return {a.split("check_pkt_larger(")[1].split(")")[0] for a in out.split("\n") if "check_pkt_larger(" in a}


def test_tagged_localnet_changes_gateway_mtu_check_incrementally(gateway):
    env, d, _port = gateway
    done: list[list[list[str]]] = []
    assert _pkt_lens(env) == {"1414"}
    steps = [
        [["lsp-add", "pub", "ln0", "", "100"], ["lsp-set-type", "ln0", "localnet"],
         ["lsp-set-addresses", "ln0", "unknown"], ["lsp-set-options", "ln0", "network_name=phys"]],
        [["set", "logical_switch_port", "ln0", "tag_request=200"]],
        [["lsp-del", "ln0"]],
        [["lsp-add", "pub", "ln1"], ["lsp-set-type", "ln1", "localnet"],
         ["lsp-set-addresses", "ln1", "unknown"], ["lsp-set-options", "ln1", "network_name=phys"]],
    ]
    seen = []
    for step in steps:
        apply_checked(env, d, step, done, 0)
        seen.append(_pkt_lens(env))
    assert seen == [{"1418"}, {"1418"}, {"1414"}, {"1414"}]
