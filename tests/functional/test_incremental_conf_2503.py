"""Incremental processing of 25.03 behaviours found by OVN's ovn-northd.at (scripts/conformance.sh):
load balancers on a router with several DGPs (use_stateless_nat), NAT in the common zone
(use_common_zone), a VIP without backends, ct-commit-all, LSP force_fdb_lookup / pkt_clone_type /
disable_arp_nd_rsp, a VIF's queue on the localnet ports, QoS marks, broadcast-arps-to-all-routers,
remote port binding, requested tunnel keys, vxlan_mode, the IC VXLAN key range.  After each NB
change the daemon compares its incremental state with a full recompute (``--check-incremental=1``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, nbctl, sbctl
from ovn_northd_py.devtools.testing import checked_daemon, mismatches

# 26.03 runs wherever 25.03 does (the same features, its own profile).
pytestmark = pytest.mark.releases("25.03", "26.03")


@pytest.fixture
def net(env) -> Iterator[tuple[str, str, OurNorthd]]:
    env.sbctl("chassis-add", "rch", "geneve", "127.0.0.9", "--", "set", "chassis", "rch",
              "other_config:is-remote=true")
    cmds = ["ls-add", "s1", "--", "ls-add", "pub", "--", "lr-add", "lr1",
            "--", "lsp-add", "s1", "vm1", "--", "lsp-set-addresses", "vm1", "50:54:00:00:00:01 172.16.0.101",
            "--", "lsp-add", "s1", "ln", "--", "lsp-set-type", "ln", "localnet",
            "--", "lsp-set-addresses", "ln", "unknown", "--", "lsp-set-options", "ln", "network_name=phys",
            "--", "lrp-add", "lr1", "lr1-s1", "00:de:ad:fe:00:02", "172.16.0.1/24",
            "--", "lsp-add", "s1", "s1-lr1", "--", "lsp-set-type", "s1-lr1", "router",
            "--", "lsp-set-addresses", "s1-lr1", "router", "--", "lsp-set-options", "s1-lr1", "router-port=lr1-s1",
            "--", "lb-add", "lb1", "30.0.0.1", "172.16.0.103,172.16.0.101", "--", "lr-lb-add", "lr1", "lb1"]
    for n, ch in ((1, "ch1"), (2, "ch2")):
        cmds += ["--", "lrp-add", "lr1", f"lr1-p{n}", f"00:00:01:02:03:0{n}", f"172.16.{10 * n}.1/24",
                 "--", "lrp-set-gateway-chassis", f"lr1-p{n}", ch,
                 "--", "lsp-add", "pub", f"pub-p{n}", "--", "lsp-set-type", f"pub-p{n}", "router",
                 "--", "lsp-set-addresses", f"pub-p{n}", "router",
                 "--", "lsp-set-options", f"pub-p{n}", f"router-port=lr1-p{n}"]
    env.nbctl(*cmds)
    with checked_daemon(env) as (_, d, _port):
        yield env.nb.remote, env.sb.remote, d


IC_ON = ["set", "logical_switch", "pub", "other_config:ic-vxlan_mode=true"]
STEPS: list[list[str]] = [
    ["set", "load_balancer", "lb1", "options:use_stateless_nat=true"],
    ["lr-nat-add", "lr1", "snat", "172.16.10.1", "172.16.0.0/24"],
    ["set", "NB_Global", ".", "options:use_common_zone=true"],  # DGP NAT in the common zone
    ["lb-add", "lbn", "30.0.0.9", "", "--", "set", "load_balancer", "lbn", "options:skip_snat=true",
     "--", "lr-lb-add", "lr1", "lbn"],  # a VIP without backends: a bare drop
    ["set", "logical_router", "lr1", "options:ct-commit-all=true"],
    ["lrp-del-gateway-chassis", "lr1-p2", "ch2"],
    ["set", "logical_router", "lr1", "options:ct-commit-all=false"],
    ["remove", "NB_Global", ".", "options", "use_common_zone"],
    ["lsp-set-addresses", "vm1", "50:54:00:00:00:01 172.16.0.101", "unknown"],
    ["lsp-set-options", "vm1", "force_fdb_lookup=true"],
    ["lsp-set-options", "vm1", "pkt_clone_type=mc_unknown", "disable_arp_nd_rsp=true"],
    ["lsp-set-addresses", "vm1", "50:54:00:00:00:010 172.16.0.101"],
    ["lsp-set-options", "vm1", "qdisc_queue_id=10"],
    ["lsp-set-options", "ln", "network_name=phys", "qos_min_rate=1000"],
    ["qos-add", "s1", "from-lport", "100", "ip4", "dscp=10", "rate=10"],
    ["set", "logical_switch", "s1", "other_config:broadcast-arps-to-all-routers=false"],
    ["lsp-add", "s1", "rp", "--", "lsp-set-type", "rp", "remote", "--", "lsp-set-options", "rp", "requested-chassis=rch"],
    ["lsp-set-type", "rp", ""],
    ["lsp-del", "ln"],
    # requested tunnel keys taken from a port / switch that did not ask for them
    ["lsp-set-options", "vm1", "requested-tnl-key=1"],
    ["set", "logical_switch", "pub", "other-config:requested-tnl-key=1"],
    ["set", "NB_Global", ".", "options:vxlan_mode=false"],
    # the IC VXLAN key range (1..1023): a switch with ic-vxlan_mode set, created, changed, deleted
    IC_ON,
    ["ls-add", "s2"],
    ["ls-add", "ic2", "--", "set", "logical_switch", "ic2", "other_config:ic-vxlan_mode=false"],
    ["remove", "logical_switch", "pub", "other_config", "ic-vxlan_mode"],
    ["ls-del", "ic2"],
    ["ls-add", "s3"],
]


def test_conformance_2503_changes_incremental_equals_recompute(net) -> None:
    nb, sb, d = net
    for i, step in enumerate(STEPS):
        nbctl(nb, *step)
        nbctl(nb, "sync", wait="sb", timeout=30)
        bad = mismatches(d)
        assert not bad, f"incremental != recompute after step {i} {step}: {bad[0].get('differences')}"
        if step == IC_ON:
            assert sbctl(sb, "get", "SB_Global", ".", "options:max_tunid").strip('"\n') == "1023"
    assert sbctl(sb, "get", "SB_Global", ".", "options:max_tunid").strip('"\n') == "16711680"  # IC range gone
    assert "is-remote-nb-bound" not in sbctl(sb, "--bare", "--columns=options", "find", "Port_Binding",
                                             "logical_port=rp")
