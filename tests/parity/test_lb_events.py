"""Parity for load-balancer controller events (``trigger_event(event = "empty_lb_backends", ...)``).

Observed on the reference (23.03): a VIP for which the NB lists no backend, of a load balancer
without ``options:reject``, raises events when NB_Global ``options:controller_event=true`` (then
whatever the load balancer's ``options:event`` says) or when the load balancer has
``options:event=true`` (then whatever NB_Global says): ``ls_in_pre_lb`` 130 on its switches and
``lr_in_dnat`` 130 on its routers (gateway, distributed gateway port, plain), metered by the Copp's
``event-elb``.  A health-checked VIP whose backends are unusable raises none (one without backends in
the NB does); ``reject`` VIPs carry
the Copp's ``reject`` meter on switches too.
"""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.servers import nbctl

STAGES = ("ls_in_pre_lb", "ls_in_lb", "ls_in_pre_stateful", "ls_in_lb_aff_check", "ls_in_lb_aff_learn",
          "lr_in_dnat", "lr_in_defrag", "lr_in_lb_aff_check", "lr_in_lb_aff_learn", "lr_out_undnat")
LBS = ("ev", "ev6", "evnp", "evudp", "evrej", "noev", "evbk", "evf", "evaff", "evsc", "ev6np", "ev6nc", "hc", "hc2",
       "hcempty")


def _txn(remote: str, *commands: list[str]) -> str:
    args: list[str] = []
    for i, c in enumerate(commands):
        args += (["--"] if i else []) + c
    return nbctl(remote, *args)


def build_events_nb(remote: str, controller_event: str | None) -> None:
    if controller_event is not None:
        nbctl(remote, "set", "nb_global", ".", f"options:controller_event={controller_event}")
    cmds = [["ls-add", "s0"], ["ls-add", "s1"], ["lsp-add", "s0", "p0"],
            ["lsp-set-addresses", "p0", "00:00:00:00:00:51 10.0.0.51"],
            ["lb-add", "ev", "10.0.0.100:80", ""], ["lb-add", "ev6", "[fd00::100]:80", ""],
            ["lb-add", "evnp", "10.0.0.101", ""], ["lb-add", "evudp", "10.0.0.102:53", "", "udp"],
            ["lb-add", "evrej", "10.0.0.103:80", ""], ["lb-add", "noev", "10.0.0.104:80", ""],
            ["lb-add", "evbk", "10.0.0.105:80", "10.0.0.2:80"], ["lb-add", "evf", "10.0.0.106:80", ""],
            ["lb-add", "evaff", "10.0.0.107:80", ""], ["lb-add", "evsc", "10.0.0.108:80", "", "sctp"],
            ["lb-add", "ev6np", "fd00::101", ""],
            ["lb-add", "hc", "10.0.0.120:80", "10.0.0.50:80"], ["lb-add", "hc2", "10.0.0.121:80", "10.0.0.51:80"],
            ["set", "load_balancer", "hc2", "ip_port_mappings:10.0.0.51=p0:10.0.0.254"],
            ["create", "load_balancer", "name=ev6nc", "protocol=tcp", 'vips:"[fd00:0:0::102]:80"=""'],
            ["create", "load_balancer", "name=hcempty", "protocol=tcp", 'vips:"10.0.0.122:80"=""'],
            ["meter-add", "m-elb", "drop", "10", "pktps"], ["meter-add", "m-rej", "drop", "10", "pktps"]]
    for lb in ("ev", "ev6", "evnp", "evudp", "evrej", "evbk", "evaff", "evsc", "ev6np", "ev6nc"):
        cmds.append(["set", "load_balancer", lb, "options:event=true"])
    cmds += [["set", "load_balancer", "evrej", "options:reject=true"],
             ["set", "load_balancer", "evf", "options:event=false"],
             ["set", "load_balancer", "evaff", "options:affinity_timeout=60"]]
    for lb in LBS:
        cmds += [["ls-lb-add", "s0", lb], ["ls-lb-add", "s1", lb]]
    cmds += [["lr-add", "gr"], ["set", "logical_router", "gr", "options:chassis=hv1"],
             ["lrp-add", "gr", "gr-p", "02:00:00:00:01:01", "10.0.0.1/24", "fd00::1/64"],
             ["lr-add", "dr"], ["lrp-add", "dr", "dr-p", "02:00:00:00:02:01", "172.16.0.1/24"],
             ["lrp-set-gateway-chassis", "dr-p", "hv1", "10"],
             ["lrp-add", "dr", "dr-i", "02:00:00:00:02:02", "10.1.0.1/24"],
             ["lr-add", "pr"], ["lrp-add", "pr", "pr-p", "02:00:00:00:03:01", "10.2.0.1/24"]]
    for r in ("gr", "dr", "pr"):
        cmds += [["lr-lb-add", r, lb] for lb in LBS]
    _txn(remote, *cmds)
    for lb, vip in (("hc", "10.0.0.120:80"), ("hc2", "10.0.0.121:80"), ("hcempty", "10.0.0.122:80")):
        nbctl(remote, "--id=@hc", "create", "load_balancer_health_check", f'vip="{vip}"', "--",
              "add", "load_balancer", lb, "health_check", "@hc")
    copp = nbctl(remote, "create", "copp", "name=c1", "meters:event-elb=m-elb", "meters:reject=m-rej").strip()
    for table, name in (("logical_switch", "s0"), ("logical_router", "gr"), ("logical_router", "dr")):
        nbctl(remote, "set", table, name, f"copp={copp}")


@pytest.mark.parametrize("controller_event", ["true", "false", None])
def test_lb_event_flows_equal_reference(parity_run, parity_profile, controller_event) -> None:
    r = parity_run(lambda remote: build_events_nb(remote, controller_event),
                   tables=("Load_Balancer", "Service_Monitor", "Meter", "Logical_Flow"))
    assert r.reference.settled and r.ours.settled, r.report()
    for t in ("Load_Balancer", "Service_Monitor", "Meter"):
        assert r.tables[t].ok, r.report()
    flows = r.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in STAGES:
        s = by_stage[name]
        assert not s.missing and not s.extra, f"{name}\n" + r.report()
    assert flows.missing == 0 and flows.extra == 0, r.report()
    # The switches' other pre-LB flows: 6 each (25.03, pmtud_tunnel_rx: and the PMTU discovery one).
    others = 2 * (7 if parity_profile.has("pmtud_tunnel_rx") else 6)
    events = by_stage["ls_in_pre_lb"].ref_count - others
    assert events == (2 * 11 if controller_event == "true" else 2 * 8), r.report()


def build_bad_checked_vip_nb(remote: str) -> None:
    """Health-checked VIPs with a backend of the other family / a malformed backend: the reference drops
    the whole VIP -- its flows, its Service_Monitor rows and the ARP / ND responder for their sources."""
    nbctl(remote, "ls-add", "s0", "--", "lsp-add", "s0", "p1", "--", "lsp-set-addresses", "p1",
          "00:00:00:00:00:04 10.0.0.4 fd00::4",
          "--", "create", "load_balancer", "name=w", "protocol=tcp", 'vips:"[fd00::10]:80"="[fd00::4]:80,10.0.0.4:80"',
          'vips:"10.0.0.10:80"="10.0.0.4:80,bogus"', 'vips:"10.0.0.11:80"="10.0.0.4:80"',
          'ip_port_mappings:"[fd00::4]"="p1:[fd00::2]"', 'ip_port_mappings:"10.0.0.4"="p1:10.0.0.2"',
          "--", "ls-lb-add", "s0", "w")
    for vip in ("[fd00::10]:80", "10.0.0.10:80", "10.0.0.11:80"):
        nbctl(remote, "--id=@hc", "create", "load_balancer_health_check", f'vip="{vip}"', "--",
              "add", "load_balancer", "w", "health_check", "@hc")


def test_malformed_checked_vips_equal_reference(parity_run) -> None:
    r = parity_run(build_bad_checked_vip_nb, tables=("Load_Balancer", "Service_Monitor", "Logical_Flow"))
    assert r.reference.settled and r.ours.settled, r.report()
    assert r.tables["Service_Monitor"].ok and r.tables["Load_Balancer"].ok, r.report()
    assert r.tables["Service_Monitor"].ref_count == 1, r.report()  # only 10.0.0.11:80's backend
    flows = r.flows
    assert flows is not None and flows.missing == 0 and flows.extra == 0, r.report()
