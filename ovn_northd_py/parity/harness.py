"""Parity harness: reference ovn-northd and ours on copies of one NB, SB databases compared.

The NB is built once (workload script, Python callable or existing db file), backed up with
``ovsdb-client backup`` and served twice, so both daemons see the same row UUIDs.  Each daemon
gets its own empty SB.  After both settled (``ovn-nbctl --wait=sb sync``) the SBs are dumped and
compared with SB row UUIDs mapped to stable keys: datapaths by NB uuid, ports by name, logical
flows expanded over their datapaths and compared per stage.

The pieces live in :mod:`.dump` (SB dumps), :mod:`.compare` (stable keys, per-table and per-stage
comparison), :mod:`.sources` (the NB both sides start from), :mod:`.run` (daemons, one side, the
whole run) and :mod:`.report` (the result and its report); this module gathers their public
names.  Entry points: :func:`run_parity` (everything), :func:`dump_sb` and :func:`compare_dumps`
(pieces, used by the self-test to perturb a dump).

``release`` (default 23.03) names the OVN release of the reference: the NB and SB use that
release's schemas, and its ``ovsdb-server``/``ovn-northd``/``ovn-nbctl`` run from the host when the
host's OVN is that release, else (or with ``from_chroot``) from its Debian chroot
(``scripts/chroots.sh``, :mod:`ovn_northd_py.devtools.tools`).  The report names the exact
reference package version.
"""

from __future__ import annotations

from ovn_northd_py.devtools.testing import WORKLOAD_DIR

from .compare import (
    COUNT_ONLY_TABLES,
    FLOW_TABLE,
    IGNORED_COLUMNS,
    NATURAL_KEYS,
    RANDOM_OPTIONS,
    Comparison,
    FlowDiff,
    FlowKey,
    Resolver,
    RowDiff,
    StageDiff,
    StageId,
    TableDiff,
    compare_dumps,
    compare_flows,
    compare_table,
    expand_flows,
    render_flow,
)
from .dump import (
    ColumnType,
    HarnessError,
    MapVal,
    Ref,
    Row,
    SbDump,
    SetVal,
    decode_value,
    dump_sb,
    load_schema,
)
from .report import ParityResult, SideRun, assert_parity, format_report
from .run import (
    OURS_CMD_DEFAULT,
    REFERENCE_BINARY,
    AfterSettle,
    CommandDaemon,
    Daemon,
    ReferenceDaemon,
    reference_available,
    run_parity,
    run_side,
    tools_workdir,
)
from .sources import (
    NbBuilder,
    NbctlBuilder,
    NbSource,
    ScriptBuilder,
    build_seed_nb,
    nb_global_options,
    nbctl_commands,
    process_gone,
    script,
    stop_process,
    unconfigured_random_options,
    workload,
)

__all__ = [
    "COUNT_ONLY_TABLES",
    "FLOW_TABLE",
    "IGNORED_COLUMNS",
    "NATURAL_KEYS",
    "OURS_CMD_DEFAULT",
    "RANDOM_OPTIONS",
    "REFERENCE_BINARY",
    "WORKLOAD_DIR",
    "AfterSettle",
    "ColumnType",
    "CommandDaemon",
    "Comparison",
    "Daemon",
    "FlowDiff",
    "FlowKey",
    "HarnessError",
    "MapVal",
    "NbBuilder",
    "NbSource",
    "NbctlBuilder",
    "ParityResult",
    "Ref",
    "ReferenceDaemon",
    "Resolver",
    "Row",
    "RowDiff",
    "SbDump",
    "ScriptBuilder",
    "SetVal",
    "SideRun",
    "StageDiff",
    "StageId",
    "TableDiff",
    "assert_parity",
    "build_seed_nb",
    "compare_dumps",
    "compare_flows",
    "compare_table",
    "decode_value",
    "dump_sb",
    "expand_flows",
    "format_report",
    "load_schema",
    "nb_global_options",
    "nbctl_commands",
    "process_gone",
    "reference_available",
    "render_flow",
    "run_parity",
    "run_side",
    "script",
    "stop_process",
    "tools_workdir",
    "unconfigured_random_options",
    "workload",
]
