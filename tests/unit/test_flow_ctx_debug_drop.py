"""flows.context.debug_drop_action: NB_Global debug_drop_* options as the reference reads them."""

from __future__ import annotations

import pytest

from ovn_northd_py.flows.context import debug_drop_action


def _sample(collector: int, domain: int) -> str:
    return f"sample(probability=65535,collector_set={collector},obs_domain={domain},obs_point=$cookie); /* drop */"


@pytest.mark.parametrize(("options", "want"), [
    ({}, None),
    ({"debug_drop_collector_set": "123"}, _sample(123, 0)),
    ({"debug_drop_collector_set": " +12", "debug_drop_domain_id": "010"}, _sample(12, 10)),
    ({"debug_drop_collector_set": "2147483648", "debug_drop_domain_id": "254"}, _sample(-2147483648, 254)),
    ({"debug_drop_collector_set": "123", "debug_drop_domain_id": "0x10"}, _sample(123, 0)),
    ({"debug_drop_collector_set": "123", "debug_drop_domain_id": "255"}, None),
    ({"debug_drop_collector_set": "4294967296"}, None),
    ({"debug_drop_collector_set": "-5"}, None),
    ({"debug_drop_collector_set": "0"}, None),
])
def test_debug_drop_options(options, want) -> None:
    assert debug_drop_action(options, {}) == want


def test_sampling_app_drop_overrides_the_domain_even_out_of_range() -> None:
    opts = {"debug_drop_collector_set": "123", "debug_drop_domain_id": "300"}
    assert debug_drop_action(opts, {"drop": 42, "acl-new": 5}) == _sample(123, 42)
    assert debug_drop_action({"debug_drop_domain_id": "1"}, {"drop": 42}) is None
