"""QoS rules are handled incrementally (no northd / lflow recompute), and incremental equals recompute."""

from __future__ import annotations

import random

import pytest

from ovn_northd_py.devtools.testing import (
    apply_checked,
    build_mixed,
    checked_daemon,
    metric,
    mismatches,
    node_runs,
    run_batch,
)

SWITCHES = ["ls1", "ls2", "ls3", "ls4"]
NODES = ("northd", "lflow")


@pytest.fixture
def qos_env(env):
    build_mixed(env, 4, 3, 3)
    with checked_daemon(env) as ctx:
        yield ctx


def recomputes(port: int) -> dict[str, float]:
    return {n: node_runs(port, n, "recompute") for n in NODES}


def qos_flows(env) -> set[tuple[str, str, str]]:
    """(stage, match, actions) of the SB flows of the QoS stages above priority 0."""
    out = set()
    for r in env.sb_rows("Logical_Flow"):
        stage = dict(r["external_ids"][1]).get("stage-name", "")
        if "qos" in stage and r["priority"] > 0:
            out.add((stage, r["match"], r["actions"]))
    return out


def create_qos(switch: str, direction: str, prio: int, match: str, name: str, dscp: int | None = None,
               rate: int | None = None, burst: int | None = None) -> list[list[str]]:
    """ovn-nbctl commands creating a QoS row (named by external_ids:name) on ``switch``."""
    cols = [f"direction={direction}", f"priority={prio}", "match=" + '"' + match.replace('"', '\\"') + '"',
            f"external_ids:name={name}"]
    if dscp is not None:
        cols.append(f"action:dscp={dscp}")
    if rate is not None:
        cols.append(f"bandwidth:rate={rate}")
    if burst is not None:
        cols.append(f"bandwidth:burst={burst}")
    ref = "@" + name.replace("-", "_")
    return [["--id=" + ref, "create", "QoS", *cols], ["add", "Logical_Switch", switch, "qos_rules", ref]]


def qos_uuid(env, name: str) -> str:
    return env.nbctl("--bare", "--columns=_uuid", "find", "QoS", f"external_ids:name={name}").strip()


@pytest.mark.releases("23.03", "25.03", "26.03")
def test_qos_changes_need_no_recompute(qos_env):
    env, d, port = qos_env
    # 23.03 marks and meters in two stages, 25.03 in one (ls_{in,out}_qos; the meter first, as the
    # reference writes it).
    merged = env.profile.has("ls_qos_merged")
    mark, meter = ("qos", "qos") if merged else ("qos_mark", "qos_meter")
    before = recomputes(port)
    run_batch(env, create_qos("ls1", "from-lport", 100, "ip4.src == 10.0.0.1", "a", dscp=12))
    run_batch(env, create_qos("ls2", "to-lport", 200, "ip6", "b", rate=1000, burst=100))
    assert qos_flows(env) == {
        (f"ls_in_{mark}", "ip4.src == 10.0.0.1", "ip.dscp = 12; next;"),
        (f"ls_out_{meter}", "ip6", "set_meter(1000, 100); next;"),
    }
    b = qos_uuid(env, "b")
    run_batch(env, [["set", "QoS", b, "action:dscp=7", "bandwidth:rate=5"]])  # an update, burst kept
    run_batch(env, [["add", "Logical_Switch", "ls3", "qos_rules", b]])  # shared by two switches
    run_batch(env, [["remove", "Logical_Switch", "ls2", "qos_rules", b]])
    run_batch(env, [["qos-del", "ls1"]])  # the row goes with its last switch
    assert qos_flows(env) == ({("ls_out_qos", "ip6", "set_meter(5, 100); ip.dscp = 7; next;")} if merged else {
        ("ls_out_qos_mark", "ip6", "ip.dscp = 7; next;"),
        ("ls_out_qos_meter", "ip6", "set_meter(5, 100); next;"),
    })
    run_batch(env, [["qos-del", "ls3"]])
    assert qos_flows(env) == set()
    assert recomputes(port) == before
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= 7
    assert not mismatches(d)


class RandomQos:
    """A seeded random sequence of QoS transactions over the mixed network's switches."""

    def __init__(self, env, seed: int) -> None:
        self.env = env
        self.rnd = random.Random(seed)
        self.n = 0
        self.rows: dict[str, set[str]] = {}  # QoS name -> switches listing it

    def _new(self, switch: str) -> list[list[str]]:
        self.n += 1
        rnd = self.rnd
        name = f"q{self.n}"
        direction = rnd.choice(["from-lport", "to-lport"])
        match = rnd.choice([f"ip4.src == 10.{self.n % 250}.0.0/16", f"ip6.dst == fd00::{self.n:x}",
                            f"tcp.dst == {1000 + self.n}", f'inport == "lsp1-{self.n % 3 + 1}" && udp.dst == {self.n}'])
        kind = rnd.random()
        dscp = rnd.randrange(64) if kind < 0.7 else None
        rate = rnd.randrange(1, 100000) if kind > 0.4 else None
        burst = rnd.randrange(1, 1000) if kind > 0.4 and rnd.random() < 0.5 else None
        self.rows[name] = {switch}
        return create_qos(switch, direction, rnd.randrange(0, 32768), match, name, dscp, rate, burst)

    def batch(self) -> list[list[str]]:
        rnd = self.rnd
        k = rnd.random()
        names = sorted(self.rows)
        if k < 0.35 or not names:
            return self._new(rnd.choice(SWITCHES))
        name = rnd.choice(names)
        uuid = qos_uuid(self.env, name)
        if k < 0.5:  # update its action or bandwidth
            col = rnd.choice([f"action:dscp={rnd.randrange(64)}", f"bandwidth:rate={rnd.randrange(1, 5000)}",
                              f"bandwidth:burst={rnd.randrange(1, 5000)}", "action={}", "bandwidth={}",
                              f"priority={rnd.randrange(32768)}", f'match="ip4.dst == 10.9.{self.n % 250}.0/24"'])
            self.n += 1
            return [["set", "QoS", uuid, col]]
        if k < 0.6:  # share it with another switch
            sw = rnd.choice(SWITCHES)
            self.rows[name].add(sw)
            return [["add", "Logical_Switch", sw, "qos_rules", uuid]]
        if k < 0.8:  # take it off one switch (deleted with its last one)
            sw = rnd.choice(sorted(self.rows[name]))
            self.rows[name].discard(sw)
            if not self.rows[name]:
                del self.rows[name]
            return [["remove", "Logical_Switch", sw, "qos_rules", uuid]]
        if k < 0.9:  # a new rule and a port in one transaction (northd incremental + QoS handler)
            sw = rnd.choice(SWITCHES)
            port = f"qp{self.n + 1}"
            return [*self._new(sw), ["lsp-add", sw, port],
                    ["lsp-set-addresses", port, f"00:00:00:ab:{(self.n // 256) % 256:02x}:{self.n % 256:02x}"]]
        # two rows changed in one transaction
        other = rnd.choice(names)
        return [["set", "QoS", uuid, f"action:dscp={rnd.randrange(64)}"],
                ["set", "QoS", qos_uuid(self.env, other), f"bandwidth:rate={rnd.randrange(1, 5000)}"]]


def test_random_qos_changes_incremental_equals_recompute(qos_env):
    env, d, port = qos_env
    seed = 20261201
    gen = RandomQos(env, seed)
    before = recomputes(port)
    done: list[list[list[str]]] = []
    for _ in range(120):
        apply_checked(env, d, gen.batch(), done, seed)
    assert metric(port, "ovn_northd_py_incremental_checks_total") >= len(done) // 2
    assert recomputes(port) == before
    assert not mismatches(d)
