"""Malformed load-balancer VIPs / backends and NAT rules (tests/functional/test_bad_input.py style):
each bad row is warned about once (``lb_bad_vip`` / ``nat_bad_rule``, naming the table and the row),
its bad entry gets no flows, the other VIPs and rules are still written and the daemon stays up."""

from __future__ import annotations

from test_bad_input import assert_healthy, more_runs, the_warning, uuid_of, warnings


def _flows(env) -> str:
    return env.sbctl("lflow-list")


def test_bad_lb_vips_are_warned_once_and_good_vips_kept(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p0", "--", "ls-add", "sw1", wait="sb")
    lb = env.nbctl("create", "load_balancer", "name=lbmix", "protocol=tcp",
                   'vips={"bogus:80"="10.0.0.2:80", "10.0.0.10:80"="10.0.0.3:80", '
                   '"10.0.0.11:80"="10.0.0.4:80,notanip:80", "^vip:^port"="^b"}').strip()
    env.nbctl("ls-lb-add", "sw0", "lbmix", "--", "lr-add", "lr0", "--", "lr-lb-add", "lr0", "lbmix", wait="sb")
    got = warnings(ours, "lb_bad_vip", lb)
    reasons = sorted(w["reason"] for w in got)
    assert len(got) == 3, got  # the bad VIP, the VIP with a bad backend, a template token in a plain LB
    assert all(w["table"] == "Load_Balancer" for w in got)
    assert any("bogus:80" in r for r in reasons) and any("notanip" in r for r in reasons)
    assert any("^vip:^port" in r for r in reasons)
    flows = _flows(env)
    assert "ip4.dst == 10.0.0.10 && tcp.dst == 80" in flows  # the good VIP, on the switch and the router
    assert "ct_lb_mark(backends=10.0.0.3:80)" in flows
    assert "10.0.0.11" not in flows and "bogus" not in flows and "^vip" not in flows
    more_runs(env)
    assert len(warnings(ours, "lb_bad_vip", lb)) == 3
    # An update of the row (another VIP) keeps the good VIPs and warns about nothing new.
    env.nbctl("set", "load_balancer", lb, 'vips:"10.0.0.12:80"="10.0.0.5:80"', wait="sb")
    assert "ip4.dst == 10.0.0.12 && tcp.dst == 80" in _flows(env)
    assert_healthy(env, ours)


def test_bad_nat_rule_is_warned_once_and_other_rules_kept(env, ours):
    env.nbctl("lr-add", "lr0", "--", "lrp-add", "lr0", "lr0-ext", "00:00:00:00:ff:01", "172.16.0.1/24",
              "--", "lrp-set-gateway-chassis", "lr0-ext", "hv1", "10",
              "--", "lrp-add", "lr0", "lr0-int", "00:00:00:00:ff:02", "10.0.0.1/24",
              "--", "lr-nat-add", "lr0", "dnat_and_snat", "172.16.0.100", "10.0.0.5", wait="sb")
    bad = env.nbctl("--", "--id=@n", "create", "nat", "type=snat", "external_ip=notanip", "logical_ip=10.0.0.0/24",
                    "--", "add", "logical_router", "lr0", "nat", "@n").strip()
    bad2 = env.nbctl("--", "--id=@n", "create", "nat", "type=dnat", "external_ip=172.16.0.101",
                     "logical_ip=10.0.0.300", "--", "add", "logical_router", "lr0", "nat", "@n", wait="sb").strip()
    w = the_warning(ours, "nat_bad_rule", bad, "NAT")
    assert "notanip" in w["reason"]
    assert "10.0.0.300" in the_warning(ours, "nat_bad_rule", bad2, "NAT")["reason"]
    flows = _flows(env)
    assert "ct_dnat_in_czone(10.0.0.5)" in flows  # the good rule is still written
    assert "notanip" not in flows  # (the reference writes nothing for it either)
    assert "ct_snat" not in "".join(line for line in flows.splitlines() if "10.0.0.0/24" in line)
    more_runs(env)
    assert len(warnings(ours, "nat_bad_rule", bad)) == 1 and len(warnings(ours, "nat_bad_rule", bad2)) == 1
    assert uuid_of(env, "logical_router", "lr0")
    assert_healthy(env, ours)
