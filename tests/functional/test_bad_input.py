"""Malformed or inconsistent NB input: warned once (naming the row), skipped, the rest still written.

Every case here writes bad NB rows with raw ``set``/``create`` commands (ovn-nbctl
validates its high-level commands), then checks:

* a JSON log record at level ``warning`` whose ``event`` is the problem kind, with
  ``table`` and ``row`` (the NB row's UUID);
* the record is logged once, even after unrelated NB changes cause more runs;
* the bad row is skipped (or the bad entry/request ignored) while everything
  else is still written to SB;
* the daemon is still alive and ``ovn-nbctl --wait=sb sync`` still works.
"""

from __future__ import annotations

from ovn_northd_py.devtools.servers import OurNorthd

# --------------------------------------------------------------------------- helpers


def uuid_of(env, table: str, record: str) -> str:
    return env.nbctl("get", table, record, "_uuid").strip()


def pbs(env) -> dict[str, dict]:
    return {r["logical_port"]: r for r in env.sb_rows("Port_Binding")}


def pb_names(env) -> list[str]:
    """Port_Binding logical_port values, with repetitions (to detect duplicates)."""
    return sorted(r["logical_port"] for r in env.sb_rows("Port_Binding"))


def dp_by_name(env) -> dict[str, dict]:
    return {dict(r["external_ids"][1])["name"]: r for r in env.sb_rows("Datapath_Binding")}


def dp_keys(env) -> dict[str, int]:
    return {n: r["tunnel_key"] for n, r in dp_by_name(env).items()}


def port_keys(env) -> dict[str, int]:
    return {n: r["tunnel_key"] for n, r in pbs(env).items()}


def warnings(ours: OurNorthd, kind: str, row: str | None = None) -> list[dict]:
    return [
        r for r in ours.log_records()
        if r.get("level") == "warning" and r.get("event") == kind and (row is None or r.get("row") == row)
    ]


def the_warning(ours: OurNorthd, kind: str, row: str, table: str | None) -> dict:
    """Exactly one warning of ``kind`` about ``row``, naming ``table`` (unless None: checked elsewhere)."""
    got = warnings(ours, kind, row)
    assert len(got) == 1, (
        f"expected one {kind!r} warning for row {row}, got {got!r}; all warnings: "
        f"{[r for r in ours.log_records() if r.get('level') == 'warning']!r}"
    )
    if table is not None:
        assert got[0]["table"] == table
    assert got[0].get("reason")
    return got[0]


def more_runs(env, n: int = 3) -> None:
    """Unrelated NB changes, each waited for, so that the daemon runs several more times."""
    for i in range(n):
        env.nbctl("ls-add", f"unrelated{i}", wait="sb")
    env.nbctl("set", "nb_global", ".", "external_ids:poke=1", wait="sb")


def assert_healthy(env, ours: OurNorthd) -> None:
    assert ours.proc is not None and ours.proc.poll() is None, "the daemon exited"
    env.nbctl("ls-add", "health-check", wait="sb", timeout=15)
    assert "health-check" in dp_by_name(env)
    assert ours.proc.poll() is None, "the daemon exited"


def create_lsp(env, switch: str, *columns: str) -> str:
    """A Logical_Switch_Port created with raw columns, bypassing ovn-nbctl's validation."""
    return env.nbctl("--", "--id=@p", "create", "logical_switch_port", *columns,
                     "--", "add", "logical_switch", switch, "ports", "@p").strip()


def create_lrp(env, router: str, *columns: str) -> str:
    return env.nbctl("--", "--id=@p", "create", "logical_router_port", *columns,
                     "--", "add", "logical_router", router, "ports", "@p").strip()


# --------------------------------------------------------------------------- LSP addresses


def test_lsp_malformed_mac_is_warned_once_and_port_still_bound(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "good", "--",
              "lsp-set-addresses", "good", "00:00:00:00:00:02 10.0.0.2", "--",
              "ls-add", "sw1", "--", "lsp-add", "sw1", "other", wait="sb")
    env.nbctl("lsp-add", "sw0", "bad")
    env.nbctl("set", "logical_switch_port", "bad", 'addresses="zz:00:00:00:00:01 10.0.0.1"', wait="sb")
    bad = uuid_of(env, "logical_switch_port", "bad")
    w = the_warning(ours, "lsp_bad_address", bad, "Logical_Switch_Port")
    assert "zz:00:00:00:00:01" in w["reason"] or "zz:00:00:00:00:01" in w.get("address", "")
    # The bad entry is ignored, not the port: it is still bound, and so is everything else.
    assert set(pbs(env)) >= {"bad", "good", "other"}
    assert set(dp_by_name(env)) >= {"sw0", "sw1"}
    assert pbs(env)["good"]["mac"] == "00:00:00:00:00:02 10.0.0.2"
    more_runs(env)
    the_warning(ours, "lsp_bad_address", bad, "Logical_Switch_Port")
    assert_healthy(env, ours)


def test_lsp_malformed_ip_is_warned_once_and_good_entry_kept(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "lsp-add", "sw0", "p2", wait="sb")
    env.nbctl("set", "logical_switch_port", "p1",
              'addresses=["00:00:00:00:00:01 10.0.0.999", "00:00:00:00:00:03 10.0.0.3"]', wait="sb")
    p1 = uuid_of(env, "logical_switch_port", "p1")
    w = the_warning(ours, "lsp_bad_address", p1, "Logical_Switch_Port")
    assert "10.0.0.999" in w["reason"] or "10.0.0.999" in w.get("address", "")
    # Only the bad entry is reported: the good one is not.
    assert all("10.0.0.3" not in r.get("address", "") and "10.0.0.3" not in r["reason"]
               for r in warnings(ours, "lsp_bad_address", p1))
    assert set(pbs(env)) == {"p1", "p2"}
    more_runs(env)
    assert len(warnings(ours, "lsp_bad_address", p1)) == 1
    assert_healthy(env, ours)


# --------------------------------------------------------------------------- LRP networks / mac


def test_lrp_malformed_networks_keeps_port(env, ours):
    """Like the reference: a router port none of whose networks parses is still bound (it keeps its
    link-local address); the bad network is warned about once."""
    env.nbctl("lr-add", "lr0", "--", "lrp-add", "lr0", "lrp-good", "00:00:00:00:ff:01", "10.0.0.1/24", "--",
              "ls-add", "sw0", "--", "lsp-add", "sw0", "p1", wait="sb")
    bad = create_lrp(env, "lr0", "name=lrp-bad", 'mac="00:00:00:00:ff:02"', "networks=foo")
    env.sync()
    the_warning(ours, "lrp_bad_network", bad, "Logical_Router_Port")
    assert pbs(env)["lrp-bad"]["mac"] == "00:00:00:00:ff:02 foo"
    assert {"lrp-good", "p1"} <= set(pbs(env))
    assert {"lr0", "sw0"} <= set(dp_by_name(env))
    more_runs(env)
    assert len(warnings(ours, "lrp_bad_network", bad)) == 1
    assert "lrp-bad" in pbs(env)
    assert_healthy(env, ours)


def test_lrp_malformed_mac_skips_port_only(env, ours):
    env.nbctl("lr-add", "lr0", "--", "lrp-add", "lr0", "lrp-good", "00:00:00:00:ff:01", "10.0.0.1/24", wait="sb")
    bad = create_lrp(env, "lr0", "name=lrp-badmac", "mac=not-a-mac", "networks=10.1.0.1/24")
    env.sync()
    the_warning(ours, "lrp_bad_mac", bad, "Logical_Router_Port")
    assert "lrp-badmac" not in pbs(env)
    assert "lrp-good" in pbs(env)
    more_runs(env)
    assert len(warnings(ours, "lrp_bad_mac", bad)) == 1
    assert_healthy(env, ours)


def test_lrp_fixed_after_bad_networks_gets_bound(env, ours):
    env.nbctl("lr-add", "lr0", wait="sb")
    bad = create_lrp(env, "lr0", "name=lrp1", 'mac="00:00:00:00:ff:02"', "networks=foo")
    env.sync()
    the_warning(ours, "lrp_bad_network", bad, "Logical_Router_Port")
    assert pbs(env)["lrp1"]["mac"] == "00:00:00:00:ff:02 foo"
    env.nbctl("set", "logical_router_port", "lrp1", "networks=10.2.0.1/24", wait="sb")
    assert pbs(env)["lrp1"]["mac"] == "00:00:00:00:ff:02 10.2.0.1/24"
    assert_healthy(env, ours)


# --------------------------------------------------------------------------- requested tunnel keys


def test_switch_requested_tnl_key_out_of_range_is_ignored(env, ours):
    env.nbctl("ls-add", "sw0", "--", "ls-add", "sw1", wait="sb")
    before = dp_keys(env)
    env.nbctl("ls-add", "sw2", "--", "set", "logical_switch", "sw2", "other_config:requested-tnl-key=99999999",
              wait="sb")
    sw2 = uuid_of(env, "logical_switch", "sw2")
    the_warning(ours, "datapath_bad_requested_tnl_key", sw2, "Logical_Switch")
    after = dp_keys(env)
    assert {"sw0", "sw1", "sw2"} <= set(after)
    assert 1 <= after["sw2"] <= 16711680
    assert after["sw2"] not in (before["sw0"], before["sw1"])
    assert {n: after[n] for n in before} == before
    more_runs(env)
    assert len(warnings(ours, "datapath_bad_requested_tnl_key", sw2)) == 1
    assert {n: dp_keys(env)[n] for n in ("sw0", "sw1", "sw2")} == {n: after[n] for n in ("sw0", "sw1", "sw2")}
    assert_healthy(env, ours)


def test_new_switch_requesting_a_taken_key_gets_it_and_the_holder_moves(env, ours):
    """As the reference (ovn-nb(5): a requested key is honoured; OVN's ovn-northd.at "datapath
    requested-tnl-key"): the holder, which requested nothing, gets a fresh key and a warning; no
    other key changes and the holder's ports stay bound."""
    env.nbctl("ls-add", "sw0", "--", "ls-add", "sw1", "--", "lsp-add", "sw1", "p1", wait="sb")
    before = dp_keys(env)
    taken = before["sw1"]
    env.nbctl("ls-add", "sw2", "--", "set", "logical_switch", "sw2",
              f"other_config:requested-tnl-key={taken}", wait="sb")
    sw1 = uuid_of(env, "logical_switch", "sw1")
    the_warning(ours, "datapath_tnl_key_given_to_request", sw1, "Logical_Switch")
    after = dp_keys(env)
    assert after["sw2"] == taken and after["sw0"] == before["sw0"]
    assert after["sw1"] not in before.values()
    assert len(env.sb_rows("Datapath_Binding")) == 3
    assert "p1" in pbs(env)
    more_runs(env)
    assert {n: dp_keys(env)[n] for n in after} == after, "keys moved again"
    assert len(warnings(ours, "datapath_tnl_key_given_to_request", sw1)) == 1
    assert_healthy(env, ours)


def test_existing_switch_requesting_a_taken_key_gets_it(env, ours):
    env.nbctl("ls-add", "sw0", "--", "ls-add", "sw1", "--", "ls-add", "sw2", wait="sb")
    before = dp_keys(env)
    env.nbctl("set", "logical_switch", "sw2", f"other_config:requested-tnl-key={before['sw0']}", wait="sb")
    the_warning(ours, "datapath_tnl_key_given_to_request", uuid_of(env, "logical_switch", "sw0"), None)
    after = dp_keys(env)
    assert after["sw2"] == before["sw0"] and after["sw1"] == before["sw1"]
    assert after["sw0"] not in (before["sw0"], before["sw1"])
    more_runs(env)
    assert {n: dp_keys(env)[n] for n in after} == after
    assert_healthy(env, ours)


def test_router_requesting_a_switch_key_moves_the_switch(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lr-add", "lr0", wait="sb")
    taken = dp_keys(env)["sw0"]
    env.nbctl("lr-add", "lr1", "--", "set", "logical_router", "lr1", f"options:requested-tnl-key={taken}",
              wait="sb")
    the_warning(ours, "datapath_tnl_key_given_to_request", uuid_of(env, "logical_switch", "sw0"), "Logical_Switch")
    after = dp_keys(env)
    assert after["lr1"] == taken and after["sw0"] != taken


def test_two_requests_for_one_key_the_holder_keeps_it(env, ours):
    """Both ask for the same key: the one holding it keeps it, the other's request is refused with a
    warning (and it keeps its own key)."""
    env.nbctl("ls-add", "sw0", "--", "ls-add", "sw1", wait="sb")
    before = dp_keys(env)
    env.nbctl("set", "logical_switch", "sw0", f"other_config:requested-tnl-key={before['sw0']}", wait="sb")
    env.nbctl("set", "logical_switch", "sw1", f"other_config:requested-tnl-key={before['sw0']}", wait="sb")
    the_warning(ours, "datapath_requested_tnl_key_taken", uuid_of(env, "logical_switch", "sw1"), None)
    assert dp_keys(env) == before
    more_runs(env)
    assert {n: dp_keys(env)[n] for n in before} == before
    assert_healthy(env, ours)


def test_chain_of_requests_each_requester_gets_its_key(env, ours):
    """lr-x asks for sw-h's key and sw-y for lr-x's, in one transaction: both requests are granted,
    sw-h (no request) moves to a fresh key."""
    env.nbctl("ls-add", "sw-h", "--", "lr-add", "lr-x", "--", "ls-add", "sw-y", wait="sb")
    before = dp_keys(env)
    env.nbctl("set", "logical_router", "lr-x", f"options:requested-tnl-key={before['sw-h']}", "--",
              "set", "logical_switch", "sw-y", f"other_config:requested-tnl-key={before['lr-x']}", wait="sb")
    after = dp_keys(env)
    assert after["lr-x"] == before["sw-h"] and after["sw-y"] == before["lr-x"]
    assert after["sw-h"] not in (before["sw-h"], before["lr-x"])
    more_runs(env)
    assert {n: dp_keys(env)[n] for n in after} == after
    assert_healthy(env, ours)


def test_port_requested_tnl_key_out_of_range_is_ignored(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "lsp-add", "sw0", "p2", wait="sb")
    before = port_keys(env)
    env.nbctl("lsp-add", "sw0", "p3", "--", "set", "logical_switch_port", "p3",
              "options:requested-tnl-key=40000", wait="sb")
    p3 = uuid_of(env, "logical_switch_port", "p3")
    the_warning(ours, "port_bad_requested_tnl_key", p3, "Logical_Switch_Port")
    after = port_keys(env)
    assert {n: after[n] for n in before} == before
    assert 1 <= after["p3"] <= 32767 and after["p3"] not in before.values()
    more_runs(env)
    assert len(warnings(ours, "port_bad_requested_tnl_key", p3)) == 1
    assert port_keys(env)["p3"] == after["p3"]
    assert_healthy(env, ours)


def test_port_requesting_a_key_taken_on_its_switch_gets_it(env, ours):
    """As the reference (ovn-northd.at "port requested-tnl-key"): the holder port moves."""
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "lsp-add", "sw0", "p2", "--",
              "ls-add", "sw1", "--", "lsp-add", "sw1", "q1", wait="sb")
    before = port_keys(env)
    taken = before["p1"]
    env.nbctl("lsp-add", "sw0", "p3", "--", "set", "logical_switch_port", "p3",
              f"options:requested-tnl-key={taken}", wait="sb")
    the_warning(ours, "port_tnl_key_given_to_request", uuid_of(env, "logical_switch_port", "p1"),
                "Logical_Switch_Port")
    after = port_keys(env)
    assert after["p3"] == taken and after["p2"] == before["p2"] and after["q1"] == before["q1"]
    assert after["p1"] not in (before["p1"], before["p2"])
    assert pb_names(env) == ["p1", "p2", "p3", "q1"]
    more_runs(env)
    assert {n: port_keys(env)[n] for n in after} == after
    assert_healthy(env, ours)


def test_port_may_request_key_used_on_another_switch(env, ours):
    """Port keys are per datapath: the same key on another switch is not a conflict."""
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "ls-add", "sw1", "--",
              "lsp-add", "sw1", "q1", "--", "lsp-add", "sw1", "q2", "--", "lsp-add", "sw1", "q3", wait="sb")
    keys = port_keys(env)
    k = next(keys[q] for q in ("q1", "q2", "q3") if keys[q] != keys["p1"])  # used on sw1, free on sw0
    env.nbctl("lsp-add", "sw0", "p2", "--", "set", "logical_switch_port", "p2",
              f"options:requested-tnl-key={k}", wait="sb")
    assert port_keys(env)["p2"] == k
    p2 = uuid_of(env, "logical_switch_port", "p2")
    assert warnings(ours, "port_requested_tnl_key_taken", p2) == []
    assert_healthy(env, ours)


# --------------------------------------------------------------------------- duplicate names
#
# The NB schema indexes Logical_Switch_Port.name and Logical_Router_Port.name, so
# a logical port name can be used twice only by an LSP and an LRP, or by one LSP
# row referenced from two switches (and likewise one LRP row from two routers).


def lsp_in_two_switches(env, name: str, home: str, other: str) -> str:
    """Add the existing LSP row ``name`` (already in ``home``) to ``other``'s ports too."""
    u = uuid_of(env, "logical_switch_port", name)
    env.nbctl("add", "logical_switch", other, "ports", u)
    return u


def test_lsp_referenced_by_two_switches_binds_once(env, ours):
    env.nbctl("ls-add", "sw0", "--", "ls-add", "sw1", "--", "lsp-add", "sw0", "p1", "--",
              "lsp-add", "sw1", "p2", "--", "lsp-add", "sw0", "dup", wait="sb")
    dup = lsp_in_two_switches(env, "dup", "sw0", "sw1")
    env.sync()
    assert pb_names(env) == ["dup", "p1", "p2"]
    w = the_warning(ours, "duplicate_port_name", dup, "Logical_Switch_Port")
    assert "dup" in w["reason"]
    more_runs(env)
    assert len(warnings(ours, "duplicate_port_name", dup)) == 1
    assert pb_names(env) == ["dup", "p1", "p2"]
    assert_healthy(env, ours)


def test_lsp_added_to_second_switch_keeps_its_existing_binding(env, ours):
    """A bound port stays where it is when its row is also added to another switch.

    Two switches, each with a bound port; each port's row is then also added to the
    *other* switch.  Whatever the UUID order of the switches, neither binding may move.
    """
    env.nbctl("ls-add", "s0", "--", "ls-add", "s1", "--", "lsp-add", "s0", "x0", "--",
              "lsp-add", "s1", "x1", "--", "lsp-add", "s0", "keep", wait="sb")
    before = {n: (r["datapath"][1], r["tunnel_key"]) for n, r in pbs(env).items()}
    x0 = lsp_in_two_switches(env, "x0", "s0", "s1")
    x1 = lsp_in_two_switches(env, "x1", "s1", "s0")
    env.sync()
    assert pb_names(env) == ["keep", "x0", "x1"]
    after = {n: (r["datapath"][1], r["tunnel_key"]) for n, r in pbs(env).items()}
    assert after == before, "an existing Port_Binding moved to the switch that referenced its row later"
    the_warning(ours, "duplicate_port_name", x0, "Logical_Switch_Port")
    the_warning(ours, "duplicate_port_name", x1, "Logical_Switch_Port")
    assert_healthy(env, ours)


def test_lsp_and_lrp_with_same_name_bind_once(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lr-add", "lr0", "--", "lsp-add", "sw0", "p1", wait="sb")
    env.nbctl("lsp-add", "sw0", "same", "--",
              "lrp-add", "lr0", "same", "00:00:00:00:ff:01", "10.0.0.1/24", wait="sb")
    lsp = uuid_of(env, "logical_switch_port", "same")
    lrp = uuid_of(env, "logical_router_port", "same")
    assert pb_names(env) == ["p1", "same"]
    # The one not bound is the one warned about.
    if pbs(env)["same"]["type"] == "patch":
        skipped, table, kept = lsp, "Logical_Switch_Port", lrp
    else:
        skipped, table, kept = lrp, "Logical_Router_Port", lsp
    the_warning(ours, "duplicate_port_name", skipped, table)
    assert warnings(ours, "duplicate_port_name", kept) == []
    more_runs(env)
    assert len(warnings(ours, "duplicate_port_name", skipped)) == 1
    assert pb_names(env) == ["p1", "same"]
    assert_healthy(env, ours)


def test_lrp_added_later_with_name_of_bound_lsp_does_not_steal_binding(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lr-add", "lr0", "--", "lsp-add", "sw0", "x", "--",
              "lsp-set-addresses", "x", "00:00:00:00:00:01", wait="sb")
    before = pbs(env)["x"]
    env.nbctl("lrp-add", "lr0", "x", "00:00:00:00:ff:01", "10.0.0.1/24", wait="sb")
    after = pbs(env)["x"]
    assert pb_names(env) == ["x"]
    assert (after["datapath"], after["tunnel_key"], after["type"], after["mac"]) == \
        (before["datapath"], before["tunnel_key"], before["type"], before["mac"]), \
        "the bound LSP lost its Port_Binding to a router port added later with the same name"
    the_warning(ours, "duplicate_port_name", uuid_of(env, "logical_router_port", "x"), "Logical_Router_Port")
    assert_healthy(env, ours)


# --------------------------------------------------------------------------- dangling references


def test_router_lsp_naming_missing_router_port(env, ours):
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "lsp-add", "sw0", "to-nowhere", "--",
              "lsp-set-type", "to-nowhere", "router", "--",
              "lsp-set-options", "to-nowhere", "router-port=ghost", wait="sb")
    lsp = uuid_of(env, "logical_switch_port", "to-nowhere")
    w = the_warning(ours, "lsp_missing_router_port", lsp, "Logical_Switch_Port")
    assert "ghost" in w["reason"]
    assert {"p1", "to-nowhere"} <= set(pbs(env))
    assert "ghost" not in pbs(env)
    more_runs(env)
    assert len(warnings(ours, "lsp_missing_router_port", lsp)) == 1
    # Creating the missing router port resolves the reference.
    env.nbctl("lr-add", "lr0", "--", "lrp-add", "lr0", "ghost", "00:00:00:00:ff:09", "10.9.0.1/24", wait="sb")
    got = pbs(env)
    assert dict(got["to-nowhere"]["options"][1]).get("peer") == "ghost"
    assert dict(got["ghost"]["options"][1]).get("peer") == "to-nowhere"
    assert_healthy(env, ours)


def test_lrp_peer_naming_missing_port(env, ours):
    env.nbctl("lr-add", "lr0", "--", "lr-add", "lr1", "--",
              "lrp-add", "lr0", "lr0-good", "00:00:00:00:ff:01", "10.0.0.1/24", "--",
              "lrp-add", "lr0", "lr0-lr1", "00:00:00:00:ff:02", "10.1.0.1/24", wait="sb")
    env.nbctl("set", "logical_router_port", "lr0-lr1", "peer=ghost", wait="sb")
    lrp = uuid_of(env, "logical_router_port", "lr0-lr1")
    w = the_warning(ours, "lrp_missing_peer", lrp, "Logical_Router_Port")
    assert "ghost" in w["reason"]
    assert {"lr0-good", "lr0-lr1"} <= set(pbs(env))
    assert {"lr0", "lr1"} <= set(dp_by_name(env))
    more_runs(env)
    assert len(warnings(ours, "lrp_missing_peer", lrp)) == 1
    assert_healthy(env, ours)


def test_many_bad_rows_at_once_do_not_stop_good_ones(env, ours):
    """All kinds of bad input in one NB transaction: each warned once, the good rows all bound."""
    env.nbctl("ls-add", "sw0", "--", "ls-add", "sw1", "--", "lr-add", "lr0", "--",
              "lsp-add", "sw0", "ok0", "--", "lsp-add", "sw1", "ok1", "--",
              "lrp-add", "lr0", "lr0-ok", "00:00:00:00:ff:01", "10.0.0.1/24", wait="sb")
    keys_before = dp_keys(env)
    ports_before = port_keys(env)
    out = env.nbctl(
        "--", "--id=@a", "create", "logical_switch_port", "name=bad-addr", 'addresses="zz 10.0.0.1"',
        "--", "add", "logical_switch", "sw0", "ports", "@a",
        "--", "--id=@b", "create", "logical_router_port", "name=bad-net", 'mac="00:00:00:00:ff:05"',
        "networks=foo",
        "--", "add", "logical_router", "lr0", "ports", "@b",
        "--", "--id=@c", "create", "logical_router_port", "name=clash", 'mac="00:00:00:00:ff:06"',
        "networks=10.6.0.1/24",
        "--", "add", "logical_router", "lr0", "ports", "@c",
        "--", "--id=@e", "create", "logical_switch_port", "name=clash",
        "--", "add", "logical_switch", "sw1", "ports", "@e",
        "--", "--id=@d", "create", "logical_switch_port", "name=rtr", "type=router", "options:router-port=nope",
        "--", "add", "logical_switch", "sw1", "ports", "@d",
        "--", "set", "logical_switch", "sw1", "other_config:requested-tnl-key=99999999",
    ).split()
    a, b, c, e, d = out  # in the order of the create commands
    env.sync()
    the_warning(ours, "lsp_bad_address", a, "Logical_Switch_Port")
    the_warning(ours, "lrp_bad_network", b, "Logical_Router_Port")
    # clash is both an LSP and an LRP: one is bound, the other warned about.
    if pbs(env)["clash"]["type"] == "patch":
        skipped, table = e, "Logical_Switch_Port"
    else:
        skipped, table = c, "Logical_Router_Port"
    the_warning(ours, "duplicate_port_name", skipped, table)
    the_warning(ours, "lsp_missing_router_port", d, "Logical_Switch_Port")
    the_warning(ours, "datapath_bad_requested_tnl_key", uuid_of(env, "logical_switch", "sw1"), "Logical_Switch")
    assert pb_names(env) == ["bad-addr", "bad-net", "clash", "lr0-ok", "ok0", "ok1", "rtr"]
    assert dp_keys(env) == keys_before
    assert {n: k for n, k in port_keys(env).items() if n in ports_before} == ports_before
    more_runs(env)
    for kind, row in (("lsp_bad_address", a), ("lrp_bad_network", b), ("duplicate_port_name", skipped),
                      ("lsp_missing_router_port", d)):
        assert len(warnings(ours, kind, row)) == 1, kind
    assert_healthy(env, ours)
