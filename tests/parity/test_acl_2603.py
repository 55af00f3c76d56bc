"""Parity with the 26.03 reference (sid's ovn-northd, from its chroot) for what 26.03 changed in the
25.03 ACL features: sampling actions set ``flags.pkt_sampled`` (established sessions are sampled
once) and keep a collector's whole ``set_id``; the Port_Binding of a switch port peering a
distributed gateway port carries ``enable_router_port_acl``.  Skipped without the sid chroot."""

from __future__ import annotations

import pytest
from test_acl_2503 import build_router_port_acl_nb, build_sampling_nb

from ovn_northd_py.devtools.tools import ToolsUnavailable, chroot_tools
from ovn_northd_py.parity.harness import ParityResult, run_parity


def _parity_2603(builder, monkeypatch, tmp_path) -> ParityResult:  # type: ignore[no-untyped-def]
    try:
        chroot_tools("26.03")
    except ToolsUnavailable as e:
        pytest.skip(str(e))
    monkeypatch.setenv("OVN_NORTHD_PY_DRAFT_PROFILES", "1")
    return run_parity(builder, release="26.03", from_chroot=True, workdir=tmp_path / "p", settle_timeout=60)


def test_26_03_acl_sampling_equals_reference(monkeypatch, tmp_path) -> None:
    r = _parity_2603(build_sampling_nb, monkeypatch, tmp_path)
    assert r.flows is not None and r.flows.ref_count > 100, r.report()
    assert r.ok, r.report()


def test_26_03_router_port_acl_option_in_port_bindings(monkeypatch, tmp_path) -> None:
    """(The switch port peering a router's only DGP gets a chassisredirect port of its own in 26.03,
    not built yet: only the router-type ports' rows are compared.)"""
    r = _parity_2603(build_router_port_acl_nb, monkeypatch, tmp_path)

    def options(dump) -> dict[str, dict[str, str]]:  # type: ignore[no-untyped-def]
        return {str(row["logical_port"]): row["options"].as_dict() for row in dump.rows("Port_Binding").values()
                if str(row["logical_port"]).startswith("sw0-r")}

    ref = options(r.ref_dump)
    assert len(ref) == 3 and ref["sw0-r0"].get("enable_router_port_acl") == "true", ref
    assert options(r.ours_dump) == ref
