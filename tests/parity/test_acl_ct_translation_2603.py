"""Parity with the 26.03 reference (sid's ovn-northd, from its chroot) for NB_Global
``options:acl_ct_translation=true``: the eval flows of stateful switches' ACLs that use the
conntrack hints carry the Logical_Flow tag ``acl_ct_translation=true`` (not allow-stateless ones,
nor log-related ones, nor any on a stateless switch), and stateful switches no longer keep multicast
out of their pre-ACL stages; switches' ``other_config:enable-stateless-acl-with-lb=true``; load
balancers' ``options:distributed=true``.  Skipped without the sid chroot."""

from __future__ import annotations

from test_network_function_2603 import _parity_2603

from ovn_northd_py.devtools.servers import nbctl


def build_acl_ct_translation_nb(remote: str) -> None:
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1",
          "--", "acl-add", "sw0", "from-lport", "100", "tcp.dst == 80", "allow-related",
          "--", "acl-add", "sw0", "to-lport", "101", "udp.src == 53 && ip4", "allow-related",
          "--", "acl-add", "sw0", "to-lport", "102", "ip4", "drop",
          "--", "acl-add", "sw0", "to-lport", "103", "icmp4", "reject",
          "--", "acl-add", "sw0", "from-lport", "104", "udp", "allow",
          "--", "acl-add", "sw0", "from-lport", "105", "sctp", "allow-stateless",
          "--", "acl-add", "sw0", "to-lport", "107", "tcp.src == 22", "allow-related",
          "--", "ls-add", "sw1", "--", "lsp-add", "sw1", "vm2",
          "--", "lb-add", "lb0", "30.0.0.1:80", "10.0.0.1:8080", "tcp", "--", "ls-lb-add", "sw1", "lb0",
          "--", "acl-add", "sw1", "to-lport", "5", "tcp", "allow",
          "--", "ls-add", "sw2", "--", "lsp-add", "sw2", "vm3", "--", "acl-add", "sw2", "to-lport", "5", "tcp", "allow",
          "--", "pg-add", "pg1", "vm1", "vm2", "--", "acl-add", "pg1", "to-lport", "6", "inport == @pg1", "drop",
          "--", "set", "NB_Global", ".", "options:acl_ct_translation=true")
    acl = nbctl(remote, "--bare", "--columns=_uuid", "find", "ACL", "priority=107").strip()
    nbctl(remote, "set", "ACL", acl, "options:log-related=true", "log=true", "name=lr", "label=42")
    acl = nbctl(remote, "--bare", "--columns=_uuid", "find", "ACL", "priority=104").strip()
    nbctl(remote, "set", "ACL", acl, "options:apply-after-lb=true")


def test_26_03_acl_ct_translation_equals_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_acl_ct_translation_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()
    tagged = [row for row in r.ref_dump.rows("Logical_Flow").values()
              if row["tags"].as_dict().get("acl_ct_translation") == "true"]
    assert len(tagged) > 10


def build_stateless_acl_with_lb_nb(remote: str) -> None:
    """Switches with ``other_config:enable-stateless-acl-with-lb=true``: with load balancers (a VIP
    with a port, one without) and a stateless ACL, without any, with a stateful ACL only; and a
    switch with a load balancer and no option."""
    nbctl(remote, "ls-add", "sw1", "--", "lsp-add", "sw1", "vm2",
          "--", "lb-add", "lb0", "30.0.0.1:80", "10.0.0.1:8080", "tcp", "--", "ls-lb-add", "sw1", "lb0",
          "--", "lb-add", "lb1", "30.0.0.2", "10.0.0.2", "--", "ls-lb-add", "sw1", "lb1",
          "--", "acl-add", "sw1", "from-lport", "100", "tcp", "allow-stateless",
          "--", "set", "logical_switch", "sw1", "other_config:enable-stateless-acl-with-lb=true",
          "--", "ls-add", "sw3", "--", "lsp-add", "sw3", "vm3",
          "--", "set", "logical_switch", "sw3", "other_config:enable-stateless-acl-with-lb=true",
          "--", "ls-add", "sw4", "--", "lsp-add", "sw4", "vm4", "--", "acl-add", "sw4", "to-lport", "1", "ip4", "allow-related",
          "--", "set", "logical_switch", "sw4", "other_config:enable-stateless-acl-with-lb=true",
          "--", "ls-add", "sw5", "--", "lsp-add", "sw5", "vm5", "--", "ls-lb-add", "sw5", "lb0")


def test_26_03_stateless_acl_with_lb_equals_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_stateless_acl_with_lb_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()


def build_distributed_lb_nb(remote: str) -> None:
    """Load balancers with ``options:distributed=true`` on a switch and a router: the backends'
    logical ports from ``ip_port_mappings`` (with or without a source IP; one unmapped)."""
    nbctl(remote, "ls-add", "sw0", "--", "lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "00:00:00:00:00:01 10.0.0.1",
          "--", "lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "00:00:00:00:00:02 10.0.0.2",
          "--", "lr-add", "lr0", "--", "lrp-add", "lr0", "lrp0", "00:00:00:00:01:01", "10.0.0.254/24",
          "--", "lsp-add", "sw0", "sw0-lr0", "--", "lsp-set-type", "sw0-lr0", "router",
          "--", "lsp-set-addresses", "sw0-lr0", "router", "--", "lsp-set-options", "sw0-lr0", "router-port=lrp0",
          "--", "lb-add", "lb0", "30.0.0.1:80", "10.0.0.1:8080,10.0.0.2:8080", "tcp",
          "--", "ls-lb-add", "sw0", "lb0", "--", "lr-lb-add", "lr0", "lb0",
          "--", "set", "load_balancer", "lb0", "options:distributed=true",
          "ip_port_mappings:10.0.0.1=vm1", "ip_port_mappings:10.0.0.2=vm2",
          "--", "lb-add", "lb1", "30.0.0.2:443", "10.0.0.1:8443,10.0.0.9:8443", "tcp", "--", "ls-lb-add", "sw0", "lb1",
          "--", "set", "load_balancer", "lb1", "options:distributed=true", "ip_port_mappings:10.0.0.1=vm1:10.0.0.250")


def test_26_03_distributed_load_balancers_equal_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_distributed_lb_nb, monkeypatch, tmp_path)
    assert r.ok, r.report()
    assert any("ct_lb_mark_local" in str(row["actions"]) for row in r.ref_dump.rows("Logical_Flow").values())
