"""The order the reference hands out fresh datapath tunnel keys (``northd.build.idl_row_order``)."""

from __future__ import annotations

import random

from ovn_northd_py.northd.build import idl_row_order
from ovn_northd_py.northd.ovs_order import uuid_map_order

# The 21 Logical_Router uuids of a 20-node gen_ovnk NB, in the order the reference numbered them
# (tunnel keys 42..62, after the 41 switches) on a cold start.
REFERENCE_ROUTER_ORDER = [
    "31cf1510-7021-4d7e-98b7-1b9c428ff9c5", "a38b6520-a5da-4bc8-afdf-63c4f36edccf",
    "c83006f1-a65c-4038-bbd9-07d7694e9171", "479c3b34-3743-4c3e-a14c-bfc498836198",
    "c6b6f615-c537-433b-b62d-bf29dc104e75", "a68ec8e6-1916-44a8-8332-28a1588905c2",
    "88fd3177-a7d4-4e4a-96de-5f8db3709bc4", "a81aac88-04fd-4a87-9797-98b7c26c6625",
    "a20c5ce9-41b2-4947-a45b-b50b6ed3a172", "9ec54119-88de-41e2-937f-74aad0d411d0",
    "296ab6a9-c117-447f-8239-47e520051058", "ff36693a-7110-4851-b85e-8211e5de1957",
    "4ee4e72a-4374-4313-8146-a0f9575eef6e", "9955c3ca-3afd-4a46-80a1-52628d3d4b4d",
    "63b170ac-7b0e-461a-abf1-06026505a015", "728af56c-62f1-49dd-a989-7b091f2e2367",
    "f9b3c19c-33cd-48fc-bfe5-44ca1660b469", "da27babd-7526-4fc4-ac43-d3c0ecb1ad3d",
    "46aca9de-6c93-447b-a3d1-d0bb917c9894", "cfda292e-23af-4c57-ab37-4a12aa2b9d24",
    "faca62cf-2eed-4274-9cb0-93a207aa2462",
]


def test_idl_row_order_matches_the_reference() -> None:
    shuffled = list(REFERENCE_ROUTER_ORDER)
    random.Random(1).shuffle(shuffled)
    assert idl_row_order(shuffled) == REFERENCE_ROUTER_ORDER


def test_idl_row_order_walks_buckets_of_the_first_uuid_word() -> None:
    order = idl_row_order(REFERENCE_ROUTER_ORDER)
    buckets = [int(u[:8], 16) & 15 for u in order]  # 21 rows: bucket mask 15
    assert buckets == sorted(buckets)
    assert idl_row_order([]) == [] and idl_row_order(["00000001-0000-0000-0000-000000000000"]) == [
        "00000001-0000-0000-0000-000000000000"
    ]


# A cold 26.03 reference on 13 switches and 12 routers: the uuids in the order of the fresh tunnel
# keys it gave them (switches 1..13, routers 14..25).
REFERENCE_26_03_SWITCH_ORDER = [
    "14ae5270-3963-4985-848a-2bbd3abd5d12", "83a9c458-a075-4c64-bd13-7f00b31e0bfc",
    "8b093388-d6fa-4355-b1dd-c519a572e190", "0080a4b1-dc45-4cb0-a72a-ddc66ac764c1",
    "c286458a-2d36-4d07-99de-411a80f4bad5", "f327a9f2-0db8-467f-9869-2bcc99a16c0c",
    "9f649aaa-c330-42a5-8f81-298bb3b836e5", "07b4163a-a504-46b0-b800-9c5bbd2a26d7",
    "01bf134c-0de7-4109-8a02-953b4ed032c8", "ef9d56ee-d1a7-4531-a9c8-a5bc949c72f0",
    "62929b76-407b-43ee-9476-5ee39ff08a0b", "d4de4e7e-96c2-4aa9-87e0-5090a146e005",
    "197691df-f17c-4704-8a1c-f19f2f89a792",
]
REFERENCE_26_03_ROUTER_ORDER = [
    "6a7b5cf9-84ce-4614-a55a-6d3262b79e74", "35a487f2-f518-4bc3-a573-48494032581c",
    "907e358a-ac62-4fc5-bb1c-560109758ffe", "33ac481a-101d-4063-a046-4fee91b3bb02",
    "535535ec-8eca-4cc5-82a5-994ab679c847", "7dc4535d-b51f-432e-bab0-bfe2601a1183",
    "3f5f0cfd-ecae-4384-8f50-ff18ec4ef8b5", "93bdeb76-6da2-4d66-b91d-eee6cf25021e",
    "4d69116e-3a1e-46e8-b504-7f572e7a8b63", "982e5dc6-ecfe-47d4-bc33-a2e27218e67f",
    "d22425af-f3f6-440c-8c18-09d9bebf279f", "2d676f27-177c-4a5b-92c6-3be65b9ec0e2",
]


def test_26_03_numbers_each_kind_in_the_order_of_its_own_datapath_map() -> None:
    for reference in (REFERENCE_26_03_SWITCH_ORDER, REFERENCE_26_03_ROUTER_ORDER):
        shuffled = list(reference)
        random.Random(2).shuffle(shuffled)
        assert uuid_map_order(idl_row_order(shuffled)) == reference


def test_the_idl_order_alone_is_not_26_03s() -> None:
    assert idl_row_order(REFERENCE_26_03_SWITCH_ORDER) != REFERENCE_26_03_SWITCH_ORDER
