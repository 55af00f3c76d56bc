"""26.03's IPAM visits a switch's ports in the order of a hash map of them by name (behaviour
``ipam_port_hash_order``): the order the 26.03 reference gave its dynamic addresses in
(tests/parity/test_ipam_parity.py's switch ``sub``, one run's NB uuids)."""

from __future__ import annotations

from types import SimpleNamespace

from ovn_northd_py.northd.ipam import port_hash_order

# name -> NB uuid, and the order the reference assigned the switch's dynamic IPv4 addresses in
# (10.10.0.9 upward; dip asked for 10.10.0.50, the others have static or no addresses).
SUB = {
    "md": "12c2af85-d7c2-4018-94dc-c757170edee9", "d5": "20c24772-b7cc-4899-b88f-88e10b8efc02",
    "st2": "22de1cc6-67ce-4767-967e-08bb61d8a937", "st1": "2abdb4c0-a413-4c88-9116-77544807f20d",
    "d2": "36eb28c9-38bb-40ed-b78c-6ee376a7e233", "d3": "4b1a0263-6582-4bca-b0ec-9193e75ac978",
    "unk": "5e40627d-1756-422f-8e17-339be5138b44", "mixed": "620c1ba3-8496-4501-93f3-9f974d9798bb",
    "dip6": "96c3ac98-993c-4f33-bd9a-94e2ed1aa228", "off": "9c431b2c-3d58-4e53-8625-c09bc04f4bd5",
    "sub-r1": "a628c618-2505-4967-866d-b5c92f40a848", "d1": "dfe48679-56c5-4236-8fb4-eda5b1e7f7db",
    "dip": "e2ec5d38-c9ea-4a96-bdf5-2e05e17b36eb", "d4": "f402968f-d115-4819-9eeb-7ec8b2d72a56",
}
REFERENCE_ORDER = ["d5", "md", "unk", "d4", "dip6", "d2", "off", "d3", "d1", "mixed"]


def test_26_03_visits_a_switchs_ports_in_the_references_order() -> None:
    ports = [SimpleNamespace(name=n, nb_key=u) for n, u in SUB.items()]
    order = [p.name for p in port_hash_order(ports)]  # type: ignore[arg-type]
    assert [n for n in order if n in REFERENCE_ORDER] == REFERENCE_ORDER
    assert sorted(order) == sorted(SUB)
