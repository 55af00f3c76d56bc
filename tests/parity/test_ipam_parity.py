"""Parity of IPAM: dynamic addresses in NB, Port_Binding and the switch L2 lookup flows.

NBs avoid what the reference settles only over several runs (a bad requested IPv4 is
repaired by the run its own NB write triggers, which the harness may stop before) and
ports whose MACs would depend on the order of switches sharing a hash bucket (two
switches both assigning MACs that are not derived from an IPv4 subnet).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ovn_northd_py.parity.harness import ParityResult, nb_global_options, nbctl_commands

FLOW_STAGES = ("ls_in_l2_lkup", "ls_in_l2_unknown", "ls_in_arp_rsp")


def nb_dynamic_addresses(db_file: Path, mask: bool) -> dict[str, str]:
    """Logical_Switch_Port name -> dynamic_addresses ("" when unset), the mac_prefix masked if ``mask``."""
    txn = json.dumps([
        "OVN_Northbound",
        {"op": "select", "table": "Logical_Switch_Port", "where": [], "columns": ["name", "dynamic_addresses"]},
    ])
    out = subprocess.run(["ovsdb-tool", "query", str(db_file), txn], capture_output=True, text=True, check=True)
    rows = json.loads(out.stdout)[0]["rows"]
    prefix = nb_global_options(db_file).get("mac_prefix", "") if mask else ""
    got: dict[str, str] = {}
    for row in rows:
        value = row["dynamic_addresses"]
        text = value if isinstance(value, str) else ""
        got[row["name"]] = text.replace(prefix + ":", "<mac_prefix>:") if prefix else text
    return got


def assert_ipam_parity(result: ParityResult, *, stages: tuple[str, ...] = FLOW_STAGES) -> dict[str, str]:
    assert result.reference.settled and result.ours.settled, result.report()
    assert result.tables["Port_Binding"].ok, result.report()
    flows = result.flows
    assert flows is not None
    by_stage = {s.stage: s for s in flows.stages}
    for name in stages:
        s = by_stage[name]
        assert not s.missing and not s.extra, result.report()
    assert result.workdir is not None
    # Each side picks its own mac_prefix unless the NB sets one.
    mask = "mac_prefix" not in nb_global_options(result.workdir / "nb-seed.db")
    ref = nb_dynamic_addresses(result.workdir / "ref" / "nb.db", mask)
    ours = nb_dynamic_addresses(result.workdir / "ours" / "nb.db", mask)
    diff = {k: (ref.get(k), ours.get(k)) for k in ref.keys() | ours.keys() if ref.get(k) != ours.get(k)}
    assert not diff, f"NB dynamic_addresses differ (reference, ours): {diff}"
    return ref


def _vif(sw: str, name: str, *addresses: str) -> list[list[str]]:
    quoted = ",".join(json.dumps(a) for a in addresses)
    return [["lsp-add", sw, name], ["set", "Logical_Switch_Port", name, f"addresses=[{quoted}]"]]


def ipam_nb(mac_prefix: str | None) -> object:
    cmds: list[list[str]] = []
    if mac_prefix:
        cmds.append(["set", "NB_Global", ".", f"options:mac_prefix={mac_prefix}"])
    v6 = ["other_config:ipv6_prefix=fd10::"] if mac_prefix else []  # EUI-64 carries the prefix: not masked
    cmds += [
        ["ls-add", "sub"],
        ["set", "Logical_Switch", "sub", "other_config:subnet=10.10.0.0/24",
         'other_config:exclude_ips="10.10.0.2 10.10.0.5..10.10.0.7"', *v6],
        *[c for i in range(1, 6) for c in _vif("sub", f"d{i}", "dynamic")],
        *_vif("sub", "st1", "00:00:00:00:10:01 10.10.0.3"),
        *_vif("sub", "st2", f"{mac_prefix or '0a:00:00'}:0a:00:09 10.10.0.4"),  # the MAC 10.10.0.8 would get
        *_vif("sub", "md", "80:fa:5b:06:72:b7 dynamic"),
        *_vif("sub", "dip", "dynamic 10.10.0.50"),
        *_vif("sub", "dip6", "dynamic fd10::99"),
        *_vif("sub", "mixed", "dynamic", "00:00:00:00:10:02 10.10.0.20"),
        *_vif("sub", "unk", "dynamic", "unknown"),
        ["lsp-add", "sub", "off"], ["lsp-set-addresses", "off", "dynamic"], ["lsp-set-enabled", "off", "disabled"],
        ["lr-add", "r1"],
        ["lrp-add", "r1", "r1-sub", "00:00:00:00:ff:01", "10.10.0.1/24", "10.10.0.8/24"],
        ["lsp-add", "sub", "sub-r1"], ["lsp-set-type", "sub-r1", "router"],
        ["lsp-set-addresses", "sub-r1", "router"], ["lsp-set-options", "sub-r1", "router-port=r1-sub"],
        ["ls-add", "mo"],
        ["set", "Logical_Switch", "mo", "other_config:mac_only=true"],
        *[c for i in range(1, 4) for c in _vif("mo", f"m{i}", "dynamic")],
        *_vif("mo", "m-md", "80:fa:5b:06:72:b8 dynamic"),
        ["ls-add", "none"],
        *_vif("none", "n-dyn", "dynamic"),
        *_vif("none", "n-md", "80:fa:5b:06:72:b9 dynamic"),
        *_vif("none", "n-st", f"{mac_prefix or '0a:00:00'}:00:00:02"),
    ]
    if not mac_prefix:
        cmds = [c for c in cmds if "n-st" not in c and "st2" not in c]  # their MACs assume a known prefix
    return nbctl_commands(*cmds)


def test_ipam_parity_with_configured_mac_prefix(parity_run):
    r = parity_run(ipam_nb("0a:00:00"), tables=("Port_Binding", "Logical_Flow"))
    got = assert_ipam_parity(r)
    # Spot checks (reference values): exclusions, static addresses and router networks skipped,
    # the MAC of 10.10.0.8 taken by a static port, IPv6 from the prefix, mac_only, no IPAM.
    assert got["n-dyn"] == "" and got["n-md"] == "" and got["sub-r1"] == ""
    assert all(got[p] for p in ("d1", "d2", "d3", "d4", "d5", "md", "dip", "dip6", "mixed", "unk", "off"))
    assert got["dip"].split()[1:2] == ["10.10.0.50"] and got["dip6"].endswith(" fd10::99")
    assert got["md"].startswith("80:fa:5b:06:72:b7 ") and got["m-md"] == "80:fa:5b:06:72:b8"
    used = {a.split()[1] for p, a in got.items() if p.startswith(("d", "md", "mixed", "unk", "off")) and a}
    assert not used & {"10.10.0.1", "10.10.0.2", "10.10.0.3", "10.10.0.4", "10.10.0.5", "10.10.0.6",
                       "10.10.0.7", "10.10.0.8", "10.10.0.20"}
    assert sorted(got[m] for m in ("m1", "m2", "m3")) == ["0a:00:00:00:00:01", "0a:00:00:00:00:03",
                                                          "0a:00:00:00:00:04"]


def test_ipam_parity_with_random_mac_prefix(parity_run):
    r = parity_run(ipam_nb(None), tables=("Port_Binding", "Logical_Flow"))
    got = assert_ipam_parity(r)
    assert got["d1"].startswith("<mac_prefix>:") and got["m1"].startswith("<mac_prefix>:00:00:0")


def stability_nb() -> object:
    """Addresses as an earlier northd (or a CMS) left them: valid ones stay, the others are redone."""
    cur = {
        "keep": "0a:00:00:00:00:55 10.30.0.55",  # valid: kept verbatim
        "keep-upper": "0A:00:00:00:00:56 10.30.0.56",  # valid: kept verbatim
        "excl": "0a:00:00:00:00:57 10.30.0.9",  # excluded since: new IPv4, same MAC
        "taken": "0a:00:00:00:00:58 10.30.0.10",  # a static port has it now
        "dup-a": "0a:00:00:00:00:59 10.30.0.60",  # two ports, one address: the later one moves
        "dup-b": "0a:00:00:00:00:5a 10.30.0.60",
        "oldpfx": "0a:00:01:00:00:5b 10.30.0.61",  # another mac_prefix: new MAC from its address
        "nosub": "0a:00:00:00:00:5c 10.99.0.5",  # outside the subnet: new IPv4
        "junk": "garbage",
        "mac-only": "0a:00:00:00:00:5d",  # no IPv4 yet
        "stale": "0a:00:00:00:00:5e 10.30.0.62",  # no longer dynamic: cleared
    }
    cmds: list[list[str]] = [
        ["set", "NB_Global", ".", "options:mac_prefix=0a:00:00"],
        ["ls-add", "s"],
        ["set", "Logical_Switch", "s", "other_config:subnet=10.30.0.0/24", 'other_config:exclude_ips="10.30.0.9"'],
        *_vif("s", "st", "00:00:00:00:30:01 10.30.0.10"),
        *_vif("s", "fresh", "dynamic"),
    ]
    for name, value in cur.items():
        cmds += _vif("s", name, "dynamic" if name != "stale" else "00:00:00:00:30:02 10.30.0.70")
        cmds.append(["set", "Logical_Switch_Port", name, f'dynamic_addresses="{value}"'])
    return nbctl_commands(*cmds)


def test_ipam_parity_keeps_valid_addresses_and_redoes_the_rest(parity_run):
    r = parity_run(stability_nb(), tables=("Port_Binding", "Logical_Flow"))
    got = assert_ipam_parity(r)
    assert got["keep"] == "0a:00:00:00:00:55 10.30.0.55" and got["keep-upper"] == "0A:00:00:00:00:56 10.30.0.56"
    assert got["stale"] == ""
    assert got["excl"].startswith("0a:00:00:00:00:57 ") and got["excl"] != "0a:00:00:00:00:57 10.30.0.9"
