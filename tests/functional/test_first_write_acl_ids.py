"""A cold start sends its IDL changes before it builds the flows, unless they write SB ACL_ID
rows (25.03 on): the flows of a persist-established ACL load its id, which they read from those
rows, so the first flows committed already carry the id (no second write to put it in)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ovn_northd_py.devtools.nb_json import NbOps
from ovn_northd_py.devtools.servers import OurNorthd

pytestmark = pytest.mark.releases("25.03", "26.03")


def _flow_commits(env: Any) -> list[list[str]]:
    """The actions of the Logical_Flow rows each committed SB transaction inserted or changed."""
    out = []
    for line in env.sb.db_path.read_bytes().split(b"\n"):
        if line.startswith(b"{"):
            rec = json.loads(line)
            flows = rec.get("Logical_Flow")
            if "_date" in rec and isinstance(flows, dict):
                out.append([str(r.get("actions", "")) for r in flows.values() if r])
    return out


def test_cold_start_commits_a_persist_established_acl_with_its_id_in_the_first_flows(
        env: Any, started: list[OurNorthd]) -> None:
    env.nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p0", "--", "lsp-set-addresses", "p0", "00:00:00:00:00:01 10.0.0.10")
    ops = NbOps()
    ops.add_to("Logical_Switch", "sw0", "acls", ops.insert("ACL", {
        "direction": "to-lport", "priority": 1001, "match": "tcp", "action": "allow-related",
        "options": ops.map({"persist-established": "true"})}))
    ops.transact(env.nb.remote)
    started.append(OurNorthd(env.workdir, env.nb.remote, env.sb.remote).start())
    env.sync()
    commits = _flow_commits(env)
    assert commits
    assert any("reg2[16..31] = 1;" in a for a in commits[0])
