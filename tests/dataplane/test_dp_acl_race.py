"""Issue 10, point 1: an ACL must keep dropping while the address set (or port group) it names is
replaced.

A UDP flood runs from a to b behind a ``drop`` ACL whose match names ``$as_N`` (or ``@pg_N``); 20
times, one NB transaction creates a new set with the same content, points the ACL at it and deletes
the old one.  If SB ever holds the flow while its set is gone (or the reverse), ovn-controller
cannot parse the flow ("Syntax error ... expecting address set name") and removes it: frames leak.
Not one frame may reach b.
"""

from __future__ import annotations

import time

from dp_topologies import two_vms_on_a_switch

from ovn_northd_py.devtools.dataplane import VM, Topology

SWAPS = 20
PORT = 9999
RATE = 2000  # frames per second

FLOOD = r"""
import signal, socket, sys, time
dst = (sys.argv[1], int(sys.argv[2])); rate = float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sent = 0
def stop(*_):
    print(sent, flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
t0 = time.monotonic()
while True:
    try:
        s.sendto(b"x" * 32, dst)
    except OSError:
        pass
    sent += 1
    d = t0 + sent / rate - time.monotonic()
    if d > 0:
        time.sleep(d)
"""


def flood_through_swaps(topo: Topology, a: VM, b: VM, swap) -> tuple[int, list[str]]:
    """Flood a -> b:PORT, check frames arrive, run ``swap(i)`` for i in 1..SWAPS with an ACL in place.

    Returns (frames sent during the swaps, frames b received during them).
    """
    assert b.ip4
    b.ns.popen("socat", "-u", f"UDP4-RECV:{PORT}", "/dev/null")
    flood = a.ns.popen("python3", "-c", FLOOD, b.ip4, str(PORT), str(RATE))
    try:
        cap = b.ns.capture(b.iface, f"udp dst port {PORT}")
        time.sleep(0.5)
        assert len(b.ns.frames(cap)) > 50, "control: the flood reaches b while no ACL is in place"
        swap(0)  # the first ACL and set
        cap = b.ns.capture(b.iface, f"udp dst port {PORT}")
        t0 = time.monotonic()
        for i in range(1, SWAPS + 1):
            swap(i)
        time.sleep(0.3)
        leaked = b.ns.frames(cap)
        took = time.monotonic() - t0
    finally:
        out, _ = a.ns.stop(flood)
    sent_total = int(out.strip() or 0)
    return min(sent_total, int(took * RATE)), leaked


def test_acl_keeps_dropping_while_its_address_set_is_replaced(topo: Topology) -> None:
    a, b = two_vms_on_a_switch(topo)

    def swap(i: int) -> None:
        match = f"ip4.src == $as_{i} && ip4.dst == 10.0.0.12 && udp.dst == {PORT}"
        if i == 0:
            topo.nbctl("create", "Address_Set", "name=as_0", 'addresses="10.0.0.11"', "--",
                       "acl-add", "sw", "to-lport", "1000", match, "drop", wait="hv")
            return
        acl = topo.nbctl("--bare", "--columns=_uuid", "find", "ACL", "priority=1000").strip()
        topo.nbctl("create", "Address_Set", f"name=as_{i}", 'addresses="10.0.0.11"', "--",
                   "set", "ACL", acl, f'match="{match}"', "--",
                   "destroy", "Address_Set", f"as_{i - 1}", wait="hv")

    sent, leaked = flood_through_swaps(topo, a, b, swap)
    assert sent > 500, f"the flood ran during the swaps ({sent} frames)"
    assert len(leaked) == 0, (
        f"{len(leaked)} of about {sent} frames got through the drop ACL while its address set was "
        f"replaced {SWAPS} times; first: {leaked[:3]}"
    )
    sets = topo.sbctl("--bare", "--columns=name", "list", "Address_Set").split()
    assert f"as_{SWAPS}" in sets and "as_0" not in sets, sets


def test_acl_keeps_dropping_while_its_port_group_is_replaced(topo: Topology) -> None:
    a, b = two_vms_on_a_switch(topo)
    a_uuid = topo.nbctl("get", "Logical_Switch_Port", "a", "_uuid").strip()

    def swap(i: int) -> None:
        match = f"inport == @pg_{i} && udp.dst == {PORT}"
        if i == 0:
            topo.nbctl("create", "Port_Group", "name=pg_0", f"ports={a_uuid}", "--",
                       "acl-add", "sw", "from-lport", "1000", match, "drop", wait="hv")
            return
        acl = topo.nbctl("--bare", "--columns=_uuid", "find", "ACL", "priority=1000").strip()
        topo.nbctl("create", "Port_Group", f"name=pg_{i}", f"ports={a_uuid}", "--",
                   "set", "ACL", acl, f'match="{match}"', "--",
                   "destroy", "Port_Group", f"pg_{i - 1}", wait="hv")

    sent, leaked = flood_through_swaps(topo, a, b, swap)
    assert sent > 500, f"the flood ran during the swaps ({sent} frames)"
    assert len(leaked) == 0, (
        f"{len(leaked)} of about {sent} frames got through the drop ACL while its port group was "
        f"replaced {SWAPS} times; first: {leaked[:3]}"
    )
