"""A small sample network, built with batched ovn-nbctl commands."""

from __future__ import annotations

from .servers import nbctl


def sample_commands(switches: int = 3, ports: int = 3) -> list[list[str]]:
    c: list[list[str]] = [["ls-add", "public"], ["lr-add", "edge"]]
    c += [["lrp-add", "edge", "edge-public", "02:00:00:00:ff:01", "172.24.4.1/24"]]
    c += [["lrp-set-gateway-chassis", "edge-public", "gw1", "10"]]
    c += [["lsp-add", "public", "public-edge"], ["lsp-set-type", "public-edge", "router"],
          ["lsp-set-addresses", "public-edge", "router"], ["lsp-set-options", "public-edge", "router-port=edge-public"]]
    c += [["lsp-add", "public", "provnet"], ["lsp-set-type", "provnet", "localnet"],
          ["lsp-set-addresses", "provnet", "unknown"], ["lsp-set-options", "provnet", "network_name=physnet"]]
    for i in range(1, switches + 1):
        sw = f"tenant{i}"
        c.append(["ls-add", sw])
        for j in range(1, ports + 1):
            p, mac, ip = f"vm{i}-{j}", f"0a:00:00:00:{i:02x}:{j:02x}", f"10.{i}.0.{10 + j}"
            c += [["lsp-add", sw, p], ["lsp-set-addresses", p, f"{mac} {ip}"],
                  ["lsp-set-port-security", p, f"{mac} {ip}"]]
        c += [["lrp-add", "edge", f"edge-{sw}", f"02:00:00:00:{i:02x}:01", f"10.{i}.0.1/24"]]
        c += [["lsp-add", sw, f"{sw}-edge"], ["lsp-set-type", f"{sw}-edge", "router"],
              ["lsp-set-addresses", f"{sw}-edge", "router"],
              ["lsp-set-options", f"{sw}-edge", f"router-port=edge-{sw}"]]
        c += [["lr-nat-add", "edge", "snat", "172.24.4.1", f"10.{i}.0.0/24"]]
    return c


def load_sample(nb_remote: str, switches: int = 3, ports: int = 3) -> None:
    args: list[str] = []
    for i, cmd in enumerate(sample_commands(switches, ports)):
        if i:
            args.append("--")
        args += cmd
    nbctl(nb_remote, *args)
