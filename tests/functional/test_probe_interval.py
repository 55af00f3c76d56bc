"""NB_Global options:northd_probe_interval sets the inactivity probe of both connections, over
``--probe-interval`` (issue 10, point 5).

Observed on the reference (ovn-northd 23.03, counting the ``echo`` requests its NB and SB
ovsdb-servers receive): unset means the default (none on a unix socket, 5 s on TCP); 1000 and
2500 probe every 1 s / 2.5 s on both connections; 300 and -5 every 1 s; 0 never; ``bogus`` and
``1500abc`` are the default; ``" 2000"`` is 2 s.  Ours is read back from the sessions' reconnect FSMs
(``ovn_northd_py_db_probe_interval_seconds``) and, once, from the servers' logs.
"""

from __future__ import annotations

import re
import subprocess
import time

from ovn_northd_py.devtools.servers import OurNorthd
from ovn_northd_py.devtools.testing import free_port, metric, wait_until
from ovn_northd_py.sync.globals import northd_probe_interval

PROBE = "ovn_northd_py_db_probe_interval_seconds"


def probes(port: int) -> tuple[float, float]:
    return metric(port, PROBE, 'db="nb"'), metric(port, PROBE, 'db="sb"')


def set_option(env, value: str | None) -> None:
    if value is None:
        env.nbctl("remove", "nb_global", ".", "options", "northd_probe_interval", wait="sb")
    else:
        env.nbctl("set", "nb_global", ".", f'options:northd_probe_interval="{value}"', wait="sb")


def expect(port: int, seconds: float) -> None:
    wait_until(lambda: probes(port) == (seconds, seconds), 10, f"probe interval {seconds} s on both connections")


def test_nb_option_sets_probe_interval_of_both_connections(env, started):
    port = free_port()
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote, extra_args=[f"--metrics-address=127.0.0.1:{port}"])
    started.append(d.start())
    env.nbctl("ls-add", "sw0", wait="sb", timeout=20)
    expect(port, 0.0)  # unix sockets: no probes by default, like the reference
    for value, seconds in (("2500", 2.5), ("300", 1.0), ("-5", 1.0), (" 2000", 2.0), ("0", 0.0),
                           ("1000", 1.0), ("bogus", 0.0), ("1500abc", 0.0)):
        set_option(env, value)
        expect(port, seconds)
    # It takes effect: the servers receive echo requests about every second, on both connections.
    set_option(env, "1000")
    expect(port, 1.0)
    for db in ("nb", "sb"):
        subprocess.run(["ovs-appctl", "-t", str(env.workdir / f"{db}.ctl"), "vlog/set", "jsonrpc:file:dbg"], check=True)
    time.sleep(0.5)

    def echoes(db: str) -> int:
        return len(re.findall(r'received request, method="echo"', (env.workdir / f"{db}-ovsdb.log").read_text()))

    before = {db: echoes(db) for db in ("nb", "sb")}
    time.sleep(3.5)
    for db in ("nb", "sb"):
        assert echoes(db) - before[db] >= 2, f"{db}: {echoes(db) - before[db]} echo requests in 3.5 s"
    set_option(env, None)
    expect(port, 0.0)
    env.nbctl("ls-add", "sw1", wait="sb")


def test_nb_option_wins_over_command_line(env, started):
    port = free_port()
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote,
                  extra_args=[f"--metrics-address=127.0.0.1:{port}", "--probe-interval=3000"])
    started.append(d.start())
    env.nbctl("ls-add", "sw0", wait="sb", timeout=20)
    expect(port, 3.0)  # --probe-interval is the default, on unix sockets too
    set_option(env, "0")
    expect(port, 0.0)
    set_option(env, "7000")
    expect(port, 7.0)
    set_option(env, None)
    expect(port, 3.0)


def test_parse_like_the_reference():
    assert northd_probe_interval({}, 5000) == 5000
    assert northd_probe_interval({"northd_probe_interval": "99999999999"}, 5000) == 5000
    assert northd_probe_interval({"northd_probe_interval": "+1500"}, 0) == 1500
    assert northd_probe_interval({"northd_probe_interval": "2000 "}, 0) == 0  # trailing garbage: default


def trims(d: OurNorthd) -> list[dict]:
    return [r for r in d.log_records() if r.get("event") == "trimming memory"]


def test_trim_timeout_option_trims_once_after_a_quiet_spell(env, started):
    """NB_Global options:northd_trim_timeout (ms, default 30000): the reference trims its heap once
    after that long without work ("Detected inactivity (last active N ms ago): trimming memory")."""
    d = OurNorthd(env.workdir, env.nb.remote, env.sb.remote)
    started.append(d.start())
    env.nbctl("ls-add", "sw0", wait="sb", timeout=20)
    time.sleep(2.0)
    assert trims(d) == []  # the default is 30 s
    env.nbctl("set", "nb_global", ".", 'options:northd_trim_timeout="500"', wait="sb")
    env.nbctl("ls-add", "sw1", wait="sb")
    wait_until(lambda: trims(d), 5, "a trim after 0.5 s of inactivity")
    assert trims(d)[-1]["inactive_ms"] >= 500
    time.sleep(1.5)
    assert len(trims(d)) == 1, trims(d)  # once per quiet spell
    env.nbctl("ls-add", "sw2", wait="sb")
    wait_until(lambda: len(trims(d)) == 2, 5, "a second trim after more work")
