"""sync.datapaths: the NB key -> SB Datapath_Binding uuid map of a run."""

from __future__ import annotations

from types import SimpleNamespace

from ovn_northd_py.sync.datapaths import LazyDpUuids


class _Sb:
    def __init__(self, rows: list[SimpleNamespace]) -> None:
        self._rows = {r.uuid: r for r in rows}
        self.reads = 0

    def rows(self, table: str) -> dict[str, SimpleNamespace]:
        assert table == "Datapath_Binding"
        self.reads += 1
        return self._rows


def _sb() -> _Sb:
    return _Sb([SimpleNamespace(uuid="u1", external_ids={"logical-switch": "sw-key"}),
                SimpleNamespace(uuid="u2", external_ids={"logical-router": "lr-key"}),
                SimpleNamespace(uuid="u3", external_ids={"foreign": "x"})])


def test_lazy_dp_uuids_reads_sb_only_when_first_used_and_once():
    sb = _sb()
    m = LazyDpUuids(sb)
    assert sb.reads == 0
    assert m.get("sw-key") == "u1" and m["lr-key"] == "u2"
    assert "missing" not in m and m.get("missing") is None
    assert sb.reads == 1


def test_lazy_dp_uuids_lists_only_our_datapaths():
    assert dict(LazyDpUuids(_sb())) == {"sw-key": "u1", "lr-key": "u2"}
