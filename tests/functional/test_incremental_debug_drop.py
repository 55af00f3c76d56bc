"""Debug drop sampling (``man ovn-nb`` NB_Global ``options:debug_drop_collector_set`` /
``debug_drop_domain_id``; from 25.03 NB Sampling_App ``drop`` overrides the domain) under
``--check-incremental=1``: turning it on, changing its domain, the flows added afterwards
incrementally (an ACL, a port, a load balancer), a Sampling_App row created / changed / deleted,
turning it off.  After each change the daemon compares its incremental state with a full recompute
and SB's drop flows carry the expected action."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from ovn_northd_py.devtools.servers import OurNorthd, nbctl, sbctl
from ovn_northd_py.devtools.testing import checked_daemon, mismatches, ovsdb_transact

pytestmark = pytest.mark.releases("23.03", "25.03", "26.03")


@pytest.fixture
def net(env) -> Iterator[tuple[str, str, OurNorthd]]:
    env.nbctl("ls-add", "ls", "--", "lsp-add", "ls", "p1",
              "--", "lsp-set-addresses", "p1", "00:00:00:00:00:01 10.0.0.1",
              "--", "lsp-set-port-security", "p1", "00:00:00:00:00:01 10.0.0.1")
    with checked_daemon(env) as (_, d, _port):
        yield env.nb.remote, env.sb.remote, d


def _drop_actions(sb: str) -> set[str]:
    """Every SB flow action that drops (``drop;``, or sampled)."""
    out = sbctl(sb, "--format=json", "--columns=actions", "list", "Logical_Flow")
    acts = {row[0] for row in json.loads(out)["data"]}
    return {a for a in acts if "drop" in a and "commit_lb_aff" not in a}


def _sample(domain: int) -> str:
    return f"sample(probability=65535,collector_set=123,obs_domain={domain},obs_point=$cookie); /* drop */"


def _app(nb: str, op: str, app_id: int = 0) -> None:
    where = [["type", "==", "drop"]]
    ops = {"insert": {"op": "insert", "table": "Sampling_App", "row": {"type": "drop", "id": app_id}},
           "update": {"op": "update", "table": "Sampling_App", "where": where, "row": {"id": app_id}},
           "delete": {"op": "delete", "table": "Sampling_App", "where": where}}
    ovsdb_transact(nb, "OVN_Northbound", ops[op])


def test_debug_drop_sampling_incremental_equals_recompute(net, ovn_release) -> None:
    nb, sb, d = net
    steps: list[tuple[Callable[[], object], int | None]] = [
        (lambda: nbctl(nb, "set", "NB_Global", ".", "options:debug_drop_collector_set=123",
                       "options:debug_drop_domain_id=1"), 1),
        (lambda: nbctl(nb, "acl-add", "ls", "from-lport", "100", "ip4.src == 1.1.1.1", "drop"), 1),
        (lambda: nbctl(nb, "lsp-add", "ls", "p2", "--", "lsp-set-port-security", "p2", "00:00:00:00:00:02"), 1),
        (lambda: nbctl(nb, "lb-add", "lb0", "30.0.0.1", "", "--", "ls-lb-add", "ls", "lb0"), 1),
        (lambda: nbctl(nb, "set", "NB_Global", ".", "options:debug_drop_domain_id=7"), 7),
    ]
    if ovn_release.name != "23.03":  # NB Sampling_App (7.11)
        steps += [(lambda: _app(nb, "insert", 42), 42), (lambda: _app(nb, "update", 43), 43),
                  (lambda: nbctl(nb, "acl-add", "ls", "to-lport", "100", "ip4.src == 1.1.1.2", "drop"), 43),
                  (lambda: _app(nb, "delete"), 7)]
    steps += [(lambda: nbctl(nb, "remove", "NB_Global", ".", "options", "debug_drop_collector_set"), None)]
    for i, (step, domain) in enumerate(steps):
        step()
        nbctl(nb, "sync", wait="sb", timeout=30)
        bad = mismatches(d)
        assert not bad, f"incremental != recompute after step {i}: {bad[0].get('differences')}"
        acts = _drop_actions(sb)
        if domain is None:
            assert not any("sample(" in a and "/* drop */" in a for a in acts), (i, acts)
        else:
            assert any(_sample(domain) in a for a in acts), (i, acts)
            assert not any(a == "drop;" or ("sample(" in a and _sample(domain) not in a) for a in acts), (i, acts)
