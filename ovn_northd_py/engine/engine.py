"""A small incremental-processing engine.

The contract
============

* **Nodes and edges.**  A node owns its data (and the state of the features it runs); its inputs
  are other nodes, each with an optional change handler.  The whole graph -- nodes, edges,
  handlers, features -- is declared in :mod:`ovn_northd_py.engine.graph`.
* **A run.**  Nodes run in topological order.  An input node's ``observe`` says whether new data
  arrived.  For any other node, each input that changed in this run is offered to the node's
  handler for that input, in declaration order.  ``Engine.run(force=True)`` (and ``recompute=``)
  recomputes nodes whatever their inputs say: a full recompute is always available and is the
  reference result the incremental paths must reproduce.
* **Handler results** (:class:`HandlerResult`): ``UPDATED`` (the change is fully accounted for
  and the node's data changed), ``UNCHANGED`` (accounted for, the node's data is as it was), or
  ``UNHANDLED`` (the handler cannot account for it: the node recomputes, and its remaining
  handlers are not called this run).  An input declared without a handler always recomputes.
  The engine sets ``node.changed`` from the results (a recompute counts as a change); handlers
  never set it.
* **What a handler may read**: its own node's data, the data and tracked changes of the node's
  inputs (and, through them, of their inputs), and the :class:`EngineCtx` of the run.  **What it
  may write**: its own node's data (and its features' state), and the run's transactions and
  statistics in the :class:`EngineCtx`.  Never another node's data, never a shared flow context
  owned by another node.
* **When to return UNHANDLED**: whenever the change is one the handler does not know how to
  apply exactly; it must then return *before* modifying anything it cannot finish, so that the
  recompute that follows starts from consistent data.  After a handled change the node's data
  must be exactly what a recompute would have produced.
* **Tracked data** (e.g. an input node's row changes, the northd node's ``Tracked``) describes
  what changed in the current run only.  It is cleared by :meth:`Node.clear_tracked`, which the
  engine calls on every node at the end of every run (also after a node was skipped).
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..lflow.profile import DEFAULT_PROFILE, FlowProfile
from ..log import WarnOnce
from ..ovsdb.connection import DbConnection
from ..sync.rows import SyncStats


@dataclass
class EngineCtx:
    """What engine nodes see during one run."""

    nb: DbConnection
    sb: DbConnection
    warn: WarnOnce
    sb_txn: Any = None  # the run's SB IDL transaction (ovs.db.idl.Transaction)
    nb_txn: Any = None  # the run's NB IDL transaction
    # The flow profile of the release being served: the lflow node builds its FlowCtx with it.
    profile: FlowProfile = DEFAULT_PROFILE
    stats: SyncStats = field(default_factory=SyncStats)
    # Raw OVSDB operations that go into this run's SB transaction beside its IDL changes and its
    # flow plan (e.g. deleting rows others wrote that reference a datapath this run deletes).
    sb_extra_ops: list[dict[str, Any]] = field(default_factory=list)


class HandlerResult(enum.Enum):
    UPDATED = "handled-updated"
    UNCHANGED = "handled-unchanged"
    UNHANDLED = "unhandled"


UPDATED = HandlerResult.UPDATED
UNCHANGED = HandlerResult.UNCHANGED
UNHANDLED = HandlerResult.UNHANDLED

Handler = Callable[[EngineCtx], HandlerResult]


def handled(changed: bool) -> HandlerResult:
    """UPDATED if ``changed``, else UNCHANGED."""
    return UPDATED if changed else UNCHANGED


@dataclass(slots=True)
class NodeStats:
    recompute: int = 0
    incremental: int = 0
    unhandled: int = 0
    unchanged: int = 0
    seconds: float = 0.0


@dataclass(slots=True, frozen=True)
class Edge:
    """An input of a node, with the handler for its changes (None: a change recomputes)."""

    node: Node
    handler: Handler | None

    @property
    def handler_name(self) -> str:
        h = self.handler
        return "(recompute)" if h is None else getattr(h, "__qualname__", repr(h))


class Node:
    """A computation node.  Subclasses implement ``recompute`` and optionally handlers."""

    name: str = "node"

    def __init__(self) -> None:
        self.inputs: list[Edge] = []
        self.changed = False  # did this node's data change in the current run?  (set by the engine)
        self.stats = NodeStats()

    def add_input(self, node: Node, handler: Handler | None = None) -> None:
        self.inputs.append(Edge(node, handler))

    def recompute(self, ctx: EngineCtx) -> None:
        raise NotImplementedError

    def clear_tracked(self) -> None:
        """Drop per-run change tracking (called at the end of every engine run)."""


class InputNode(Node):
    """A leaf: its ``observe`` decides whether new data arrived."""

    def observe(self, ctx: EngineCtx) -> bool:
        raise NotImplementedError

    def recompute(self, ctx: EngineCtx) -> None:
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
            for e in n.inputs:
                visit(e.node, (*stack, id(n)))
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

    def run(self, ctx: EngineCtx, force: bool = False, skip: frozenset[str] = frozenset(),
            recompute: frozenset[str] = frozenset(), before: Callable[[Node], None] | None = None) -> RunReport:
        """One run.  ``skip``: nodes not run at all this time (a hot standby computes but does not
        write: its writer nodes are skipped, and must be recomputed before they run again);
        ``recompute``: nodes recomputed whatever their inputs say; ``before``: called with each
        node, in run order, before it runs (every node before it has run)."""
        rep = RunReport()
        t_run = time.perf_counter()
        for n in self.nodes:
            if before is not None:
                before(n)
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
                for e in n.inputs:
                    if not e.node.changed:
                        continue
                    if e.handler is not None:
                        r = e.handler(ctx)
                        if r is not UNHANDLED:
                            n.changed = n.changed or r is UPDATED
                            result = "incremental"
                            continue
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
