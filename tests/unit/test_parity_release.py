"""The parity tests' reference release, from OVN_PARITY_RELEASE."""

from __future__ import annotations

import pytest

from ovn_northd_py.parity.stage_names import parity_release
from ovn_northd_py.release import DEFAULT_RELEASE


def test_unset_parity_release_is_the_default(monkeypatch):
    monkeypatch.delenv("OVN_PARITY_RELEASE", raising=False)
    assert parity_release() is DEFAULT_RELEASE


def test_empty_parity_release_is_the_default(monkeypatch):
    monkeypatch.setenv("OVN_PARITY_RELEASE", "")
    assert parity_release() is DEFAULT_RELEASE


def test_named_parity_release_is_that_release(monkeypatch):
    monkeypatch.setenv("OVN_PARITY_RELEASE", "25.03")
    assert parity_release().name == "25.03"


def test_unknown_parity_release_is_refused(monkeypatch):
    monkeypatch.setenv("OVN_PARITY_RELEASE", "99.99")
    with pytest.raises(ValueError, match=r"unknown OVN release .99\.99"):
        parity_release()
