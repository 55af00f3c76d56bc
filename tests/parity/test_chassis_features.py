"""Parity with the reference ovn-northd when chassis lack features (SB Chassis other_config).

The reference writes older flows unless every local chassis announces ``ct-no-masked-label``
(``ct_label.*`` flags and ``ct_lb`` instead of ``ct_mark.*`` and ``ct_lb_mark``, and SB_Global
``options:lb_hairpin_use_ct_mark=false``) and ``ovn-ct-lb-related`` (no ``ct_commit_nat`` for
related traffic, no ``skip_snat`` / ``force_snat`` in router LB actions); a chassis with
``other_config:is-remote=true`` does not count.  OVN's ovn-northd.at tests 1111, 1113, 1131, 1133 and
981 (23.03.1 numbering) check the same.  The NB has what reads the features: stateful ACLs (with a
label and log-related), switch and gateway-router load balancers (skip_snat, force_snat, health
check), NAT, and a symmetric ECMP route.
"""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.servers import nbctl, sbctl
from ovn_northd_py.parity.harness import assert_parity, nbctl_commands

FEATURES = ("ct-no-masked-label", "ovn-ct-lb-related", "mac-binding-timestamp")


def build_nb(remote: str) -> None:
    cmds: list[list[str]] = [
        ["ls-add", "sw0"], ["lsp-add", "sw0", "p1"], ["lsp-set-addresses", "p1", "00:00:00:00:00:01 10.0.0.3"],
        ["acl-add", "sw0", "from-lport", "1002", "ip4 && tcp", "allow-related"],
        ["--label=1234", "--log", "acl-add", "sw0", "to-lport", "1001", "ip4 && udp", "allow-related"],
        ["acl-add", "sw0", "to-lport", "1000", "ip4 && icmp", "drop"],
        ["acl-add", "sw0", "to-lport", "999", "ip4 && sctp", "reject"],
        ["lb-add", "lb0", "10.0.0.10:80", "10.0.0.3:80,20.0.0.3:80", "tcp"],
        ["ls-lb-add", "sw0", "lb0"],
        ["lr-add", "gw", "--", "set", "logical_router", "gw", "options:chassis=hv1"],
        ["lrp-add", "gw", "gw-sw0", "00:00:00:00:ff:01", "10.0.0.1/24"],
        ["lsp-add", "sw0", "sw0-gw"], ["lsp-set-type", "sw0-gw", "router"],
        ["lsp-set-addresses", "sw0-gw", "router"], ["lsp-set-options", "sw0-gw", "router-port=gw-sw0"],
        ["lrp-add", "gw", "gw-pub", "00:00:00:00:ff:02", "172.16.0.1/24"],
        ["lb-add", "lbr", "172.16.0.100:80", "10.0.0.3:80", "tcp"],
        ["lb-add", "lbs", "172.16.0.101:80", "10.0.0.3:80", "tcp"],
        ["set", "load_balancer", "lbs", "options:skip_snat=true"],
        ["lr-lb-add", "gw", "lbr"], ["lr-lb-add", "gw", "lbs"],
        ["set", "logical_router", "gw", "options:lb_force_snat_ip=router_ip"],
        ["lr-nat-add", "gw", "snat", "172.16.0.1", "10.0.0.0/24"],
        ["--ecmp-symmetric-reply", "lr-route-add", "gw", "1.0.0.1/32", "172.16.0.254"],
        ["--ecmp-symmetric-reply", "lr-route-add", "gw", "1.0.0.1/32", "172.16.0.253"],
    ]
    for c in cmds:
        nbctl(remote, *c)
    lb = nbctl(remote, "--bare", "--columns=_uuid", "find", "load_balancer", "name=lb0").strip()
    nbctl(remote, "--id=@hc", "create", "load_balancer_health_check", 'vip="10.0.0.10:80"',
          "--", "add", "load_balancer", lb, "health_check", "@hc")
    nbctl(remote, "set", "load_balancer", lb, 'ip_port_mappings:"10.0.0.3"="p1:10.0.0.2"')


def add_chassis(sb: str, name: str, *features: str, remote: bool = False) -> None:
    args = ["chassis-add", name, "geneve", f"127.0.0.{name[-1]}"]
    for f in features:
        args += ["--", "set", "chassis", name, f"other_config:{f}=true"]
    if remote:
        args += ["--", "set", "chassis", name, "other_config:is-remote=true"]
    sbctl(sb, *args)


def old_chassis(_nb: str, sb: str) -> None:
    add_chassis(sb, "hv1")  # a chassis without any feature: ct_label, ct_lb, no related NAT


def partly_old_chassis(_nb: str, sb: str) -> None:
    add_chassis(sb, "hv1", "ct-no-masked-label", "mac-binding-timestamp")  # no ovn-ct-lb-related


def remote_old_chassis(_nb: str, sb: str) -> None:
    add_chassis(sb, "hv1", *FEATURES)
    add_chassis(sb, "hv2", remote=True)  # remote: does not count, every feature stays on


def _check(parity_run, after) -> None:
    r = parity_run(build_nb, tables=("Logical_Flow", "SB_Global"), after_settle=after)
    assert r.reference.settled and r.ours.settled, r.report()
    assert_parity(r)


def test_chassis_without_features(parity_run) -> None:
    _check(parity_run, old_chassis)


def test_chassis_without_ct_lb_related(parity_run) -> None:
    _check(parity_run, partly_old_chassis)


def test_remote_chassis_without_features_does_not_count(parity_run) -> None:
    _check(parity_run, remote_old_chassis)


# 25.03 asks the chassis for other features (flows/chassis_features.py): what reads them is a
# switch load balancer (ls-dpg-column: SB Load_Balancer's switch group column) and a distributed
# gateway port with SNAT (ct-commit-to-zone, ct-next-zone) and gateway_mtu (ct-commit-nat-v2).
NB_2503 = [
    ["ls-add", "sw"], ["lsp-add", "sw", "a"], ["lsp-set-addresses", "a", "00:00:00:00:01:01 10.0.0.11"],
    ["lb-add", "lb1", "10.0.0.100:80", "10.0.0.11:8080", "tcp"], ["ls-lb-add", "sw", "lb1"],
    ["ls-add", "ext"], ["lsp-add", "ext", "ln"], ["lsp-set-type", "ln", "localnet"],
    ["lsp-set-addresses", "ln", "unknown"], ["lsp-set-options", "ln", "network_name=phys"],
    ["lr-add", "dr"],
    ["lrp-add", "dr", "dr-ext", "00:00:00:00:fe:01", "172.16.0.1/24"],
    ["lrp-set-gateway-chassis", "dr-ext", "hv1", "10"],
    ["set", "Logical_Router_Port", "dr-ext", "options:gateway_mtu=1300"],
    ["lsp-add", "ext", "ext-dr"], ["lsp-set-type", "ext-dr", "router"], ["lsp-set-addresses", "ext-dr", "router"],
    ["lsp-set-options", "ext-dr", "router-port=dr-ext"],
    ["lrp-add", "dr", "dr-sw", "00:00:00:00:fe:02", "10.0.0.1/24"],
    ["lsp-add", "sw", "sw-dr"], ["lsp-set-type", "sw-dr", "router"], ["lsp-set-addresses", "sw-dr", "router"],
    ["lsp-set-options", "sw-dr", "router-port=dr-sw"],
    ["lr-nat-add", "dr", "snat", "172.16.0.1", "10.0.0.0/24"],
    ["lr-nat-add", "dr", "dnat_and_snat", "172.16.0.50", "10.0.0.11"],
    ["lb-add", "lb2", "172.16.0.100:80", "10.0.0.11:8080", "tcp"], ["lr-lb-add", "dr", "lb2"],
]
# What a 23.03 ovn-controller announces (observed): none of 25.03's new features.
FEATURES_23_03 = FEATURES


def chassis_23_03(_nb: str, sb: str) -> None:
    add_chassis(sb, "hv1", *FEATURES_23_03)


@pytest.mark.parametrize("release", ["25.03", "26.03"])
def test_chassis_of_23_03_gets_older_flows_and_lb_column(parity_run, monkeypatch, release) -> None:
    monkeypatch.setenv("OVN_PARITY_RELEASE", release)
    r = parity_run(nbctl_commands(*NB_2503), tables=("Logical_Flow", "SB_Global", "Load_Balancer"),
                   after_settle=chassis_23_03)
    assert r.reference.settled and r.ours.settled, r.report()
    assert_parity(r)


def chassis_23_03_then_gone(_nb: str, sb: str) -> None:
    """The 23.03 chassis comes (the switch group moves to datapath_group), then goes: 25.03's
    features stay off while the daemon runs (observed), so the older flows and column stay."""
    import time

    add_chassis(sb, "hv1", *FEATURES_23_03)
    deadline = time.monotonic() + 20
    while not sbctl(sb, "--bare", "--columns=datapath_group", "find", "Load_Balancer", "name=lb1").strip():
        assert time.monotonic() < deadline, "the switch group never moved to datapath_group"
        time.sleep(0.05)
    sbctl(sb, "chassis-del", "hv1")


@pytest.mark.parametrize("release", ["25.03", "26.03"])
def test_features_stay_off_when_the_older_chassis_goes(parity_run, monkeypatch, release) -> None:
    monkeypatch.setenv("OVN_PARITY_RELEASE", release)
    r = parity_run(nbctl_commands(*NB_2503), tables=("Logical_Flow", "SB_Global", "Load_Balancer"),
                   after_settle=chassis_23_03_then_gone)
    assert r.reference.settled and r.ours.settled, r.report()
    assert_parity(r)


FEATURES_25_03 = ("mac-binding-timestamp", "fdb-timestamp", "ls-dpg-column", "ct-commit-nat-v2", "ct-commit-to-zone",
                  "ovn-sample-with-registers", "ct-next-zone", "ct-label-flush")


def chassis_23_03_replaced_then_updated(nb: str, sb: str) -> None:
    """The 23.03 chassis comes, a 25.03 one too, the 23.03 one goes (the features stay off), then the
    25.03 chassis' other_config is updated: 25.03 evaluates the features afresh, all on again."""
    chassis_23_03_then_gone(nb, sb)
    add_chassis(sb, "hv2", *FEATURES_25_03)
    sbctl(sb, "set", "chassis", "hv2", "other_config:ovn-cms-options=x")


@pytest.mark.parametrize("release", ["25.03", "26.03"])
def test_features_evaluated_afresh_when_a_chassis_other_config_is_updated(parity_run, monkeypatch, release) -> None:
    monkeypatch.setenv("OVN_PARITY_RELEASE", release)
    r = parity_run(nbctl_commands(*NB_2503), tables=("Logical_Flow", "SB_Global", "Load_Balancer"),
                   after_settle=chassis_23_03_replaced_then_updated)
    assert r.reference.settled and r.ours.settled, r.report()
    assert_parity(r)
