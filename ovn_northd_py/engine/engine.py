"""A small incremental-processing engine.

Nodes declare their inputs together with a change handler per input.  When an
input changed, the node's handler for it runs; a handler returns True when it
fully accounted for the change, or False ("unhandled"), in which case the node
falls back to a full recompute and later handlers for this run are skipped.
An input declared without a handler always causes a recompute.  A full
recompute of every node is always available (``Engine.run(force=True)``) and is
the reference result the incremental paths must reproduce.

Contract for handlers: a handler that changed the node's data sets
``node.changed = True`` so that downstream nodes see it.  They may only use the node's own data and the inputs'
data and change sets; they must leave the node's data exactly as a recompute
would, or return False before modifying anything they cannot finish.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Handler = Callable[["Node", Any], bool]


@dataclass(slots=True)
class NodeStats:
    recompute: int = 0
    incremental: int = 0
    unhandled: int = 0
    unchanged: int = 0
    seconds: float = 0.0


class Node:
    """A computation node.  Subclasses implement ``recompute`` and optionally handlers."""

    name: str = "node"

    def __init__(self) -> None:
        self.inputs: list[tuple[Node, Handler | None]] = []
        self.changed = False  # did this node's data change in the current run?
        self.stats = NodeStats()

    def add_input(self, node: Node, handler: Handler | None = None) -> None:
        self.inputs.append((node, handler))

    def recompute(self, ctx: Any) -> None:
        raise NotImplementedError

    def clear_tracked(self) -> None:
        """Drop per-run change tracking (called at the end of every engine run)."""


class InputNode(Node):
    """A leaf: its ``observe`` decides whether new data arrived."""

    def observe(self, ctx: Any) -> bool:
        raise NotImplementedError

    def recompute(self, ctx: Any) -> None:
        pass


@dataclass(slots=True)
class RunReport:
    recomputed: list[str] = field(default_factory=list)
    incremental: list[str] = field(default_factory=list)
    unhandled: list[str] = field(default_factory=list)
    seconds: float = 0.0


class Engine:
    def __init__(self, nodes: list[Node], on_node: Callable[[str, str, float], None] | None = None) -> None:
        self.nodes = self._toposort(nodes)
        self.on_node = on_node

    @staticmethod
    def _toposort(nodes: list[Node]) -> list[Node]:
        out: list[Node] = []
        seen: set[int] = set()

        def visit(n: Node, stack: tuple[int, ...]) -> None:
            if id(n) in stack:
                raise ValueError(f"engine graph has a cycle through {n.name}")
            if id(n) in seen:
                return
            for i, _ in n.inputs:
                visit(i, stack + (id(n),))
            seen.add(id(n))
            out.append(n)

        for n in nodes:
            visit(n, ())
        return out

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def run(self, ctx: Any, force: bool = False, skip: frozenset[str] = frozenset(),
            recompute: frozenset[str] = frozenset()) -> RunReport:
        """One run.  ``skip``: nodes not run at all this time (a hot standby computes but does not
        write: its writer nodes are skipped, and must be recomputed before they run again);
        ``recompute``: nodes recomputed whatever their inputs say."""
        rep = RunReport()
        t_run = time.perf_counter()
        for n in self.nodes:
            t0 = time.perf_counter()
            result = "unchanged"
            if n.name in skip:
                n.changed = False
                continue
            if isinstance(n, InputNode):
                n.changed = n.observe(ctx) or force
                result = "incremental" if n.changed else "unchanged"
            elif force or n.name in recompute:
                n.recompute(ctx)
                n.changed = True
                result = "recompute"
            else:
                n.changed = False
                for inp, handler in n.inputs:
                    if not inp.changed:
                        continue
                    if handler is not None and handler(n, ctx):
                        result = "incremental"
                        continue
                    if handler is not None:
                        rep.unhandled.append(n.name)
                        n.stats.unhandled += 1
                        if self.on_node:
                            self.on_node(n.name, "unhandled", 0.0)
                    n.recompute(ctx)
                    n.changed = True
                    result = "recompute"
                    break
            dt = time.perf_counter() - t0
            n.stats.seconds += dt
            if result == "recompute":
                n.stats.recompute += 1
                rep.recomputed.append(n.name)
            elif result == "incremental":
                n.stats.incremental += 1
                rep.incremental.append(n.name)
            else:
                n.stats.unchanged += 1
            if self.on_node:
                self.on_node(n.name, result, dt)
        for n in self.nodes:
            n.clear_tracked()
        rep.seconds = time.perf_counter() - t_run
        return rep
