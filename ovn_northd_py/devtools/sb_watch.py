"""A second SB client that checks every state SB passes through for dangling references.

It monitors SB (its own connection, like any ovn-controller) and, after each update
the server sends, checks that every logical flow names only things that exist in
that same state, as ovn-controller needs them to parse the flow:

* ``$name``: an Address_Set ``name``;
* ``@name``: a Port_Group ``name`` or ``<datapath tunnel key>_name`` for each of the
  flow's datapaths (OVN keeps one SB port group per switch);
* ``inport``/``outport == "name"`` and ``is_chassis_resident("name")``: a Port_Binding,
  or a Multicast_Group of that name on the flow's datapaths (``"none"`` is no port);
* ``controller_meter`` and ``meter="name"`` in actions: a Meter.

The server sends one update per committed transaction (it may merge several for a
slow reader, which can only hide states, never invent one), so a dangling reference
between two of a writer's transactions shows here.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

_AS = re.compile(r"\$([A-Za-z_][\w.]*)")
_PG = re.compile(r"@([A-Za-z_][\w.]*)")
_PORT = re.compile(r'(?:inport|outport)\s*==\s*"([^"]+)"|is_chassis_resident\("([^"]+)"\)')
_METER = re.compile(r'meter\s*=\s*"([^"]+)"')
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')

TABLES: dict[str, list[str]] = {
    "Logical_Flow": ["logical_datapath", "logical_dp_group", "match", "actions", "controller_meter"],
    "Logical_DP_Group": ["datapaths"],
    "Datapath_Binding": ["tunnel_key"],
    "Address_Set": ["name"],
    "Port_Group": ["name"],
    "Port_Binding": ["logical_port"],
    "Multicast_Group": ["name", "datapath"],
    "Meter": ["name"],
}


def _uuid(v: Any) -> str | None:
    if isinstance(v, list) and len(v) == 2 and v[0] == "uuid":
        return str(v[1])
    return None


def _uuids(v: Any) -> list[str]:
    if isinstance(v, list) and len(v) == 2 and v[0] == "set":
        return [str(x[1]) for x in v[1]]
    u = _uuid(v)
    return [u] if u else []


def _scalar(v: Any) -> Any:
    if isinstance(v, list) and len(v) == 2 and v[0] == "set":
        return v[1][0] if v[1] else None
    return v


@dataclass
class SbWatcher:
    """``start()`` it, make changes, then ``stop()`` and read ``dangling`` and ``states``."""

    sock_path: str
    rows: dict[str, dict[str, dict[str, Any]]] = field(default_factory=lambda: {t: {} for t in TABLES})
    states: int = 0  # updates checked
    dangling: list[str] = field(default_factory=list)  # one line per problem found (first few states)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    error: Exception | None = None

    def start(self) -> SbWatcher:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise TimeoutError("SB watcher did not get its initial contents")
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        if self.error is not None:
            raise self.error

    # ---- the client ----
    def _run(self) -> None:
        try:
            self._loop()
        except Exception as e:  # reported by stop()
            self.error = e
            self._ready.set()

    def _loop(self) -> None:
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.sock_path)
        s.settimeout(0.2)
        req = {t: {"columns": cols} for t, cols in TABLES.items()}
        s.sendall(json.dumps({"method": "monitor", "params": ["OVN_Southbound", "watch", req], "id": 1}).encode())
        dec = json.JSONDecoder()
        buf = ""
        try:
            while not self._stop.is_set():
                try:
                    data = s.recv(1 << 20)
                except TimeoutError:
                    continue
                if not data:
                    raise ConnectionError("SB closed the watcher's connection")
                buf += data.decode()
                while buf:
                    try:
                        msg, end = dec.raw_decode(buf)
                    except ValueError:
                        break
                    buf = buf[end:].lstrip()
                    self._message(s, msg)
        finally:
            s.close()

    def _message(self, s: socket.socket, msg: dict[str, Any]) -> None:
        if msg.get("method") == "echo":
            s.sendall(json.dumps({"id": msg["id"], "result": msg["params"], "error": None}).encode())
        elif msg.get("id") == 1:
            self._apply(msg["result"])
            self._check()
            self._ready.set()
        elif msg.get("method") == "update":
            self._apply(msg["params"][1])
            self._check()

    def _apply(self, updates: dict[str, Any]) -> None:
        for table, rows in updates.items():
            tbl = self.rows[table]
            for u, ru in rows.items():
                new = ru.get("new")
                if new is None:
                    tbl.pop(u, None)
                else:
                    tbl.setdefault(u, {}).update(new)

    # ---- the check ----
    def _check(self) -> None:
        self.states += 1
        r = self.rows
        sets = {_scalar(x.get("name")) for x in r["Address_Set"].values()}
        pgs = {_scalar(x.get("name")) for x in r["Port_Group"].values()}
        ports = {_scalar(x.get("logical_port")) for x in r["Port_Binding"].values()}
        meters = {_scalar(x.get("name")) for x in r["Meter"].values()}
        keys = {u: _scalar(x.get("tunnel_key")) for u, x in r["Datapath_Binding"].items()}
        mcast = {(_uuid(x.get("datapath")), _scalar(x.get("name"))) for x in r["Multicast_Group"].values()}
        groups = {u: _uuids(x.get("datapaths")) for u, x in r["Logical_DP_Group"].items()}
        for fu, f in r["Logical_Flow"].items():
            dp = _uuid(f.get("logical_datapath"))
            g = _uuid(f.get("logical_dp_group"))
            dps = [dp] if dp else groups.get(g or "", [])
            match, actions = str(f.get("match", "")), str(f.get("actions", ""))
            problems: list[str] = []
            bare = _STRING.sub('""', match)  # names inside strings are not references
            problems += [f"address set ${n}" for n in _AS.findall(bare) if n not in sets]
            for n in _PG.findall(bare):
                if n not in pgs and not all(f"{keys.get(d)}_{n}" in pgs for d in dps):
                    problems.append(f"port group @{n}")
            for a, b in _PORT.findall(match):
                n = a or b
                if n != "none" and n not in ports and not all((d, n) in mcast for d in dps):
                    problems.append(f"port {n!r}")
            meter = _scalar(f.get("controller_meter"))
            for n in [*([meter] if meter else []), *_METER.findall(actions)]:
                if n not in meters:
                    problems.append(f"meter {n!r}")
            if problems and len(self.dangling) < 50:
                self.dangling.append(f"state {self.states}: flow {fu} ({match[:80]!r}): missing {', '.join(problems)}")
