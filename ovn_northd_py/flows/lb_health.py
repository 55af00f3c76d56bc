"""Load-balancer health checks, as far as switch flows read them.

Observed on the reference (23.03): for every Load_Balancer (attached anywhere or not)
with a ``health_check`` whose ``vip`` is one of its VIP keys, each backend of that VIP
(``IP[:PORT]`` or ``[IP6][:PORT]``, comma-separated) named in ``ip_port_mappings``
(``IP`` -> ``PORT_NAME:SRC_IP``, ``[IP6]`` -> ``PORT_NAME:[SRC_IP6]``) makes the
switch of ``PORT_NAME`` answer ARP / NS for ``SRC_IP`` (see :mod:`.ls_arp_rsp`).
"""

from __future__ import annotations

from typing import Any


def _backend_ip(backend: str) -> str:
    text = backend.strip()
    if text.startswith("["):
        return text[1:].partition("]")[0]
    return text.partition(":")[0] if text.count(":") == 1 else text


def _mapping(value: str) -> tuple[str, str] | None:
    port, sep, src = value.partition(":")
    if not sep or not port or not src:
        return None
    if src.startswith("["):
        src = src[1:].partition("]")[0]
    return port, src


def svc_monitor_src_ips(nb: Any) -> dict[str, tuple[tuple[str, str], ...]]:
    """Logical port name -> (source IP, load balancer uuid) of the health checks its switch
    answers ARP/ND for (load balancers in uuid order; the first one names an IP)."""
    out: dict[str, dict[str, str]] = {}
    for lb in sorted(nb.rows("Load_Balancer").values(), key=lambda r: str(r.uuid)):
        if not lb.health_check or not lb.ip_port_mappings:
            continue
        for hc in lb.health_check:
            backends = lb.vips.get(hc.vip)
            if not backends:
                continue
            for backend in backends.split(","):
                ip = _backend_ip(backend)
                if not ip:
                    continue
                m = _mapping(lb.ip_port_mappings.get(f"[{ip}]" if ":" in ip else ip, ""))
                if m is not None:
                    out.setdefault(m[0], {}).setdefault(m[1], str(lb.uuid))
    return {port: tuple(ips.items()) for port, ips in out.items()}
