"""Random networks (every NB feature, ``gen_random``) built on a synced daemon, then random
single-row mutations (``devtools/mutate_nb.py``: values swapped between rows, columns emptied,
root rows deleted): after each, ``--check-incremental=1`` compares the incremental state with a
full recompute, under each release's profile."""

from __future__ import annotations

import pytest

from ovn_northd_py.devtools.gen_random import build_random_nb
from ovn_northd_py.devtools.mutate_nb import mutate_checked
from ovn_northd_py.devtools.testing import checked_daemon, metric, mismatches


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_random_network_mutations_incremental_equals_recompute(env):
    seed = 4
    with checked_daemon(env) as (_, d, port):
        build_random_nb(env.nb.remote, seed, 5)  # the whole network, incrementally
        env.sync()
        assert not mismatches(d)
        differences = mutate_checked(env.nb.remote, d, env.release, seed, 120)
        assert not differences, "\n".join(differences)
        assert metric(port, "ovn_northd_py_incremental_checks_total") >= 60
