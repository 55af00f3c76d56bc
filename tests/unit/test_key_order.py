"""The order the reference hands out fresh datapath tunnel keys (``northd.build.idl_row_order``)."""

from __future__ import annotations

import random

from ovn_northd_py.northd.build import idl_row_order

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
