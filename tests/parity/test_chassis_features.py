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

from ovn_northd_py.devtools.servers import nbctl, sbctl
from ovn_northd_py.parity.harness import assert_parity

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
