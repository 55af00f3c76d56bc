"""Parity on random networks (:mod:`ovn_northd_py.devtools.gen_random`: every NB feature, with
occasional malformed values).  A fixed range of seeds, each network equal in every SB table and
every flow; ``python -m ovn_northd_py.parity.random_networks --seeds 1-100`` runs many more."""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools import gen_random
from ovn_northd_py.parity.harness import assert_parity, script

SEEDS = range(1, 13)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_network_is_equal(parity_run, seed):
    assert_parity(parity_run(script(gen_random.__file__, "NB_REMOTE", str(seed), "4")))
