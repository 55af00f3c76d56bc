"""Parity for debug drop sampling (``man ovn-nb`` NB_Global ``options:debug_drop_collector_set`` /
``debug_drop_domain_id``; from 25.03 NB Sampling_App ``drop`` overrides the domain;
ovn-northd.at "Sampling_App override debug_drop_domain_id"): which drops become ``sample(...);
/* drop */`` (ACL drops with or without log, ``default_acl_drop``, port security, load balancers'
and random networks' drops; not a DHCP relay's, nor a load balancer's affinity learn flows), and
how the options are read."""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.servers import nbctl
from ovn_northd_py.devtools.testing import ovsdb_transact
from ovn_northd_py.parity.harness import assert_parity
from ovn_northd_py.parity.sources import script
from ovn_northd_py.parity.stage_names import parity_release

SAMPLE = "sample(probability=65535,collector_set={},obs_domain={},obs_point=$cookie); /* drop */"


def build_drops_nb(remote: str, *options: str) -> None:
    """A switch with port security, ACLs (drop with log, reject, allow-related, drop), a load
    balancer with affinity on it and on a gateway router with SNAT; NB_Global ``options``."""
    nbctl(remote, "ls-add", "ls", "--", "lsp-add", "ls", "p1", "--", "lsp-set-addresses", "p1", "00:00:00:00:00:01 10.0.0.1",
          "--", "lsp-set-port-security", "p1", "00:00:00:00:00:01 10.0.0.1",
          "--", "--log", "--name=a1", "--severity=alert", "acl-add", "ls", "from-lport", "100", "ip4.src == 1.1.1.1", "drop",
          "--", "--log", "acl-add", "ls", "to-lport", "100", "ip4.src == 1.1.1.2", "reject",
          "--", "acl-add", "ls", "to-lport", "90", "ip4.src == 1.1.1.3", "allow-related",
          "--", "acl-add", "ls", "from-lport", "90", "ip4.src == 1.1.1.4", "drop",
          "--", "lb-add", "lb", "30.0.0.1:80", "10.0.0.1:80", "--", "set", "load_balancer", "lb", "options:affinity_timeout=60",
          "--", "lr-add", "lr", "--", "set", "logical_router", "lr", "options:chassis=hv1",
          "--", "lrp-add", "lr", "lr-ls", "00:00:00:00:01:00", "10.0.0.254/24",
          "--", "lsp-add", "ls", "ls-lr", "--", "lsp-set-type", "ls-lr", "router", "--", "lsp-set-addresses", "ls-lr", "router",
          "--", "lsp-set-options", "ls-lr", "router-port=lr-ls", "--", "lr-lb-add", "lr", "lb", "--", "ls-lb-add", "ls", "lb",
          "--", "lr-nat-add", "lr", "snat", "10.0.0.254", "10.0.0.0/24",
          "--", "set", "NB_Global", ".", *(f"options:{o}" for o in options))


def _ref_actions(r) -> set[str]:
    return {str(f["actions"]) for f in r.ref_dump.rows("Logical_Flow").values()}


@pytest.mark.parametrize("default_acl_drop", ["true", "false"])
def test_debug_drop_samples_equal_reference(parity_run, default_acl_drop) -> None:
    r = parity_run(lambda remote: build_drops_nb(remote, "debug_drop_collector_set=123", "debug_drop_domain_id=1",
                                                 f"default_acl_drop={default_acl_drop}"), tables=("Logical_Flow",))
    assert_parity(r)
    assert "drop;" not in _ref_actions(r) and SAMPLE.format(123, 1) in _ref_actions(r)


@pytest.mark.parametrize(("options", "sample"), [
    (["debug_drop_collector_set=123"], SAMPLE.format(123, 0)),
    (["debug_drop_collector_set=+12", "debug_drop_domain_id=010"], SAMPLE.format(12, 10)),
    (["debug_drop_collector_set=4294967295", "debug_drop_domain_id=254"], SAMPLE.format(-1, 254)),
    (["debug_drop_collector_set=123", "debug_drop_domain_id=2 "], SAMPLE.format(123, 0)),
    (["debug_drop_collector_set=123", "debug_drop_domain_id=255"], None),
    (["debug_drop_collector_set=12 ", "debug_drop_domain_id=2"], None),
    (["debug_drop_collector_set=0", "debug_drop_domain_id=2"], None),
    (["debug_drop_domain_id=2"], None),
], ids=["no-domain", "plus-and-zeros", "largest", "domain-unparsed", "domain-255", "collector-trailing-blank",
        "collector-0", "no-collector"])
def test_debug_drop_options_read_as_the_reference(parity_run, options, sample) -> None:
    r = parity_run(lambda remote: nbctl(remote, "ls-add", "ls", "--", "set", "NB_Global", ".",
                                        *(f"options:{o}" for o in options)), tables=("Logical_Flow",))
    assert_parity(r)
    assert (sample if sample is not None else "drop;") in _ref_actions(r)


@pytest.mark.skipif(parity_release().name == "23.03", reason="NB Sampling_App: 25.03 on")
@pytest.mark.parametrize("domain_option", ["debug_drop_domain_id=1", "debug_drop_domain_id=300"])
def test_sampling_app_drop_overrides_the_domain(parity_run, domain_option) -> None:
    def build(remote: str) -> None:
        build_drops_nb(remote, "debug_drop_collector_set=123", domain_option)
        ovsdb_transact(remote, "OVN_Northbound", {"op": "insert", "table": "Sampling_App", "row": {"type": "drop", "id": 42}})

    r = parity_run(build, tables=("Logical_Flow",))
    assert_parity(r)
    assert SAMPLE.format(123, 42) in _ref_actions(r)


def test_random_network_with_debug_drop_equals_reference(parity_run) -> None:
    # seed 5: ACLs, load balancers with affinity, a DHCP relay (its drops are not sampled).  Its
    # routers' ECMP member ids vary from run to run in the reference (known_draft_differences.txt):
    # the flows compared are those that drop.
    base = script("ovn_northd_py/devtools/gen_random.py", "NB_REMOTE", "5", "6")

    def build(remote: str) -> None:
        base(remote)
        nbctl(remote, "set", "NB_Global", ".", "options:debug_drop_collector_set=123", "options:debug_drop_domain_id=1")

    r = parity_run(build, tables=("Logical_Flow",))
    assert r.flows is not None and r.reference.settled and r.ours.settled, r.report()
    differ = [k for s in r.flows.stages for k in (*s.missing, *s.extra) if "drop" in k[5]]
    assert not differ, r.report(40)
    acts = _ref_actions(r)
    assert any("sample(probability=65535,collector_set=123," in a for a in acts), r.report()
    if r.release != "23.03":  # (NB DHCP_Relay: 25.03 on) its drops stay unsampled
        assert "drop; /* DHCP_RELAY_REQ */" in acts, r.report()
