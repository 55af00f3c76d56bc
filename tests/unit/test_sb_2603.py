"""OVN 26.03's SB rows (draft profile behaviours), as the 26.03 reference writes them (mixed 10/5/5,
gen_ovnk 5); the 25.03 profile keeps 25.03's."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

from ovn_northd_py.lflow.profile import OVN_23_03, OVN_25_03, OVN_26_03
from ovn_northd_py.northd.model import LR, LS, Datapath, Northd
from ovn_northd_py.sync.address_sets import desired_address_sets
from ovn_northd_py.sync.datapaths import desired_datapaths
from ovn_northd_py.sync.globals import global_options
from ovn_northd_py.sync.load_balancers import desired_sb_lb
from ovn_northd_py.sync.rbac import PERMISSIONS_2603


def _nd() -> Northd:
    nd = Northd()
    for n, (kind, name, options) in enumerate([(LS, "ls1", {}), (LR, "lr1", {}),
                                               (LR, "lr2", {"disable_garp_rarp": "true"})]):
        nb = SimpleNamespace(uuid=uuid.UUID(int=n + 1), name=name, options=options)
        dp = Datapath(str(nb.uuid), kind, name, nb)
        dp.external_ids = {"logical-router" if kind == LR else "logical-switch": dp.key, "name": name}
        dp.tunnel_key = n + 1
        nd.add_datapath(dp)
    return nd


def test_datapath_bindings_name_their_nb_row_and_type() -> None:
    want = desired_datapaths(_nd(), OVN_26_03)
    ls1 = want[str(uuid.UUID(int=1))]
    assert ls1["nb_uuid"] == [uuid.UUID(int=1)] and ls1["type"] == ["logical-switch"]
    assert "disable_garp_rarp" not in ls1["external_ids"]
    lr1, lr2 = want[str(uuid.UUID(int=2))], want[str(uuid.UUID(int=3))]
    assert lr1["type"] == ["logical-router"] and lr1["external_ids"]["disable_garp_rarp"] == "false"
    assert lr2["external_ids"]["disable_garp_rarp"] == "true"


def test_25_03_datapath_bindings_have_no_26_03_columns() -> None:
    want = desired_datapaths(_nd(), OVN_25_03)
    assert all(set(w) == {"external_ids", "tunnel_key"} for w in want.values())


def test_svc_monitor_mac_dst_is_generated_and_in_the_address_set() -> None:
    g = global_options(None, False, OVN_26_03)
    assert g.as_dict()["northd_internal_version"] == "26.03.1-21.8.0-82.14"
    dst = g.as_dict()["svc_monitor_mac_dst"]
    assert len(dst.split(":")) == 6 and dst != g.svc_monitor_mac
    nb = SimpleNamespace(rows=lambda table: {})
    assert desired_address_sets(nb, g.svc_monitor_mac, svc_monitor_macs=g.svc_monitor_macs)["svc_monitor_mac"] == [
        g.svc_monitor_mac, dst]
    nbg = SimpleNamespace(options={"svc_monitor_mac_dst": "0A:00:00:00:00:02"})
    assert global_options(nbg, False, OVN_26_03).svc_monitor_mac_dst == "0a:00:00:00:00:02"
    assert "svc_monitor_mac_dst" not in global_options(None, False, OVN_25_03).as_dict()


def test_learned_route_permission() -> None:
    assert PERMISSIONS_2603["Learned_Route"] == ([""], True, ["datapath", "logical_port", "ip_prefix", "nexthop",
                                                              "external_ids"])


def test_load_balancer_rows_without_hairpin_orig_tuple() -> None:
    lb = SimpleNamespace(uuid=uuid.UUID(int=9), name="lb", vips={"10.0.0.1:80": "10.0.0.2:80"}, protocol=["tcp"],
                         options={"reject": "true"})
    dp_uuid = {"ls": "u-ls"}
    new = desired_sb_lb(lb, ["ls"], dp_uuid, profile=OVN_26_03)
    old = desired_sb_lb(lb, ["ls"], dp_uuid, profile=OVN_25_03)
    assert new is not None and old is not None
    assert "hairpin_orig_tuple" not in str(new.cols["options"]) and "reject" in str(new.cols["options"])
    assert "hairpin_orig_tuple" in str(old.cols["options"])


def test_service_monitors_say_they_monitor_a_load_balancer() -> None:
    from ovn_northd_py.flows.lb_health import desired_monitors

    hc = SimpleNamespace(vip="10.0.0.100:80", options={"interval": "5"})
    lb = SimpleNamespace(uuid=uuid.UUID(int=3), vips={"10.0.0.100:80": "10.0.0.1:8080"}, protocol=["tcp"],
                         health_check=[hc], ip_port_mappings={"10.0.0.1": "p1:10.0.0.254"}, options={})
    typed = desired_monitors([lb], lambda name: True, "0a:00:00:00:00:01", typed=True)
    assert [w["type"] for w in typed.values()] == [["load-balancer"]]
    assert all("type" not in w for w in desired_monitors([lb], lambda name: True, "0a:00:00:00:00:01").values())


def test_dns_rows_take_the_nb_uuid_and_say_ovn_owned() -> None:
    from ovn_northd_py.sync.dns import _desired, dns_key, sb_dns_key

    nb_row = SimpleNamespace(uuid=uuid.UUID(int=5), records={"vm1.example.org": "10.0.0.1"}, options={})
    users = {str(nb_row.uuid): (nb_row, ["ls1"])}
    for profile in (OVN_26_03, OVN_25_03):
        assert _desired(users, {"ls1": "dp-row"}, profile)[str(nb_row.uuid)]["ovn-owned"] == "false"
    assert "ovn-owned" not in _desired(users, {"ls1": "dp-row"}, OVN_23_03)[str(nb_row.uuid)]
    sb_row = SimpleNamespace(uuid=nb_row.uuid, external_ids={}, options={"ovn-owned": "false"})
    assert sb_dns_key(sb_row, OVN_26_03) == str(nb_row.uuid)
    assert dns_key(sb_row) is None  # (23.03 keys by external_ids:dns_id)
