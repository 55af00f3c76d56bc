"""Logging: structlog for our events, python-ovs' ``ovs.vlog`` for levels, destinations and files.

Our events are rendered by structlog (JSON for services, console for humans) and handed to the
``ovs.vlog`` module ``ovn_northd``, so the C daemon's conventions apply unchanged: ``-vSPEC``
(``-vconsole:emer -vsyslog:err -vfile:info``), ``--log-file``, syslog, and at run time the
unixctl commands ``vlog/set``, ``vlog/list`` and ``vlog/reopen`` (log rotation).  python-ovs' own
modules (``reconnect``, ``jsonrpc``, ``ovsdb_idl``...) log through the same destinations; in JSON
format their lines are wrapped into JSON objects, so every line of the log file is one JSON object.

Destinations: ``console`` is stderr, ``file`` is ``--log-file``, ``syslog`` is ``/dev/log`` (or
``--syslog-method``/``--syslog-target``).  Defaults as the C daemon: every destination at
``info``, except that the console is ``off`` when a log file is given (unless a ``-vconsole:...``
spec says otherwise), as ovn-northd-py always did.
"""

from __future__ import annotations

import datetime
import json
import logging
import logging.handlers
import sys
from collections.abc import Sequence
from typing import Any

# Every python-ovs module with a vlog module must be imported before ovs.vlog.Vlog.init().
import ovs.daemon
import ovs.db.idl
import ovs.fatal_signal
import ovs.jsonrpc
import ovs.poller
import ovs.reconnect
import ovs.stream
import ovs.unixctl
import ovs.unixctl.server
import ovs.vlog
import structlog

MODULE = "ovn_northd"  # our vlog module, as the C daemon's main module
_vlog = ovs.vlog.Vlog(MODULE)  # created at import: ovs.vlog forbids new modules after Vlog.init()

# structlog method name -> ovs.vlog level
_LEVEL_OF = {
    "debug": "dbg", "info": "info", "warning": "warn", "warn": "warn", "error": "err",
    "exception": "err", "critical": "emer", "fatal": "emer", "msg": "info",
}
_ENABLED = {
    "dbg": _vlog.dbg_is_enabled, "info": _vlog.info_is_enabled, "warn": _vlog.warn_is_enabled,
    "err": _vlog.err_is_enabled, "emer": _vlog.emer_is_enabled,
}
_EMIT = {"dbg": _vlog.dbg, "info": _vlog.info, "warn": _vlog.warn, "err": _vlog.err, "emer": _vlog.emer}
_SEP = "|"
_PATTERN = f"%c{_SEP}%p{_SEP}%m"  # what our bridge filter parses back
_state: dict[str, Any] = {"fmt": "json", "log_file": None, "inited": False}


class LogSetupError(RuntimeError):
    pass


def _drop_disabled(_logger: Any, method: str, event_dict: Any) -> Any:
    """First processor: skip rendering events no destination wants (vlog levels, settable at run time)."""
    if not _ENABLED[_LEVEL_OF.get(method, "info")]():
        raise structlog.DropEvent
    return event_dict


class _VlogLogger:
    """structlog's final logger: hands the rendered line to ovs.vlog at the event's level."""

    def _emit(self, method: str, message: str) -> None:
        _EMIT[_LEVEL_OF.get(method, "info")](message)

    def __getattr__(self, method: str) -> Any:
        return lambda message: self._emit(method, message)


class _Bridge(logging.Filter):
    """On ovs.vlog's console and file loggers: our lines pass as rendered; python-ovs' own
    modules' lines are rendered in the same format (one JSON object per line in JSON mode)."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = str(record.msg)
        parts = text.split(_SEP, 2)
        if len(parts) != 3:
            return True
        module, level, message = (p.strip() for p in parts)
        if module == MODULE:
            record.msg = message
            return True
        now = datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")
        if _state["fmt"] == "json":
            record.msg = json.dumps({"event": message, "logger": module, "level": _json_level(level),
                                     "timestamp": now})
        else:
            record.msg = f"{now} [{_json_level(level):<8s}] {module}: {message}"
        record.args = None
        return True


def _json_level(vlog_level: str) -> str:
    return {"DBG": "debug", "INFO": "info", "WARN": "warning", "ERR": "error", "EMER": "critical"}.get(
        vlog_level.upper(), vlog_level.lower())


def _reopen(conn: Any, _argv: Any, _aux: Any) -> None:
    """vlog/reopen: close the log file and open it again by name (after logrotate renamed it)."""
    if not _state["log_file"]:
        conn.reply("Logging to file not configured")
        return
    try:
        reopen_log_file()
    except OSError as e:
        conn.reply_error(f"{_state['log_file']}: reopen failed ({e.strerror})")
        return
    conn.reply(None)


def reopen_log_file() -> None:
    path = _state["log_file"]
    if not path:
        return
    new = logging.FileHandler(path)  # raises OSError before anything is changed
    logger = logging.getLogger("file")
    old = ovs.vlog.Vlog._Vlog__file_handler  # type: ignore[attr-defined]
    if old is not None:
        logger.removeHandler(old)
        old.close()
    logger.addHandler(new)
    ovs.vlog.Vlog._Vlog__file_handler = new  # type: ignore[attr-defined]


def _syslog_handler(method: str | None, target: str | None) -> None:
    """--syslog-method=(libc|unix:FILE|udp:IP:PORT) and --syslog-target=HOST:PORT (both as in the C daemon)."""
    logger = logging.getLogger("syslog")
    if method and method not in ("libc", "null"):
        kind, _, addr = method.partition(":")
        if kind == "unix":
            address: Any = addr
        elif kind == "udp":
            host, _, port = addr.rpartition(":")
            address = (host, int(port))
        else:
            raise LogSetupError(f"--syslog-method={method}: expected libc, null, unix:FILE or udp:IP:PORT")
        for h in list(logger.handlers):
            logger.removeHandler(h)
        try:
            logger.addHandler(logging.handlers.SysLogHandler(address=address, facility="daemon"))
            logger.disabled = False
        except OSError as e:
            raise LogSetupError(f"--syslog-method={method}: {e}") from e
    elif method == "null":
        logger.disabled = True
    if target:
        host, _, port = target.rpartition(":")
        try:
            logger.addHandler(logging.handlers.SysLogHandler(address=(host.strip("[]"), int(port)),
                                                             facility="daemon"))
            logger.disabled = False
        except (OSError, ValueError) as e:
            raise LogSetupError(f"--syslog-target={target}: {e}") from e


def configure(fmt: str = "console", level: str = "info", log_file: str | None = None,
              specs: Sequence[str] = (), syslog_method: str | None = None,
              syslog_target: str | None = None) -> None:
    """Set up ovs.vlog (destinations, levels from ``specs``) and structlog on top of it.

    ``level`` is the default level of our module ("debug" or "info"); ``specs`` are -vSPEC strings,
    applied in order after the defaults; LogSetupError on a bad spec or an unusable log file."""
    _state["fmt"] = fmt
    _state["log_file"] = log_file
    if log_file:
        try:
            open(log_file, "a").close()
        except OSError as e:
            raise LogSetupError(f"--log-file={log_file}: {e.strerror}") from e
    V = ovs.vlog.Vlog
    if not _state["inited"]:
        # Ours first: ovs.unixctl keeps the first registration of a name.
        ovs.unixctl.command_register("vlog/reopen", "", 0, 0, _reopen, None)
        for d in ("console", "file", "syslog"):
            V.set_pattern(d, _PATTERN if d != "syslog" else "ovn-northd|%0c|%0p|%0m")
        V.init(log_file)
        for d in ("console", "file"):
            logging.getLogger(d).addFilter(_Bridge())
        _state["inited"] = True
        _syslog_handler(syslog_method, syslog_target)
    else:
        if log_file:
            reopen_log_file()
    # Defaults: python-ovs' modules at info (their reconnect messages are useful), ours at `level`.
    V.set_levels_from_string("any:any:info")
    if log_file:
        V.set_levels_from_string("any:console:off")
    if level == "debug":
        V.set_levels_from_string(f"{MODULE}:any:dbg")
    for spec in specs:
        err = V.set_levels_from_string(spec)
        if err:
            raise LogSetupError(f'processing "{spec}": {err}')
    renderer: Any
    if fmt == "json":
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty() and not log_file)
    structlog.configure(
        processors=[
            _drop_disabled,
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
        logger_factory=lambda *_a: _VlogLogger(),
        cache_logger_on_first_use=False,
    )


def levels() -> str:
    """The vlog/list table."""
    return str(ovs.vlog.Vlog.get_levels())


class _Logger:
    """structlog's logger of a module, with a ``debug`` that costs one level check when debug logging
    is off (structlog would bind a logger, build the event and run the first processor to drop it:
    the engine run logs at debug right after its SB transaction went out, before the reply is read)."""

    __slots__ = ("_log",)

    def __init__(self, name: str) -> None:
        self._log = structlog.get_logger(name)

    def debug(self, event: str, *args: Any, **kw: Any) -> Any:
        if _vlog.dbg_is_enabled():
            return self._log.debug(event, *args, **kw)
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._log, name)


def get(name: str) -> Any:
    return _Logger(name)


class WarnOnce:
    """Structured warnings about bad NB rows, logged once per (kind, row, reason) until the row changes.

    A malformed row is reported the first time it is seen, not on every recompute;
    ``forget(row)`` is called when the row is updated or deleted so a new problem
    on the same row is reported again.
    """

    __slots__ = ("_log", "_seen", "count")

    def __init__(self, logger: Any) -> None:
        self._seen: set[tuple[str, str, str]] = set()
        self._log = logger
        self.count = 0

    def warn(self, kind: str, table: str, row: Any, reason: str, **kw: Any) -> None:
        key = (kind, str(row), reason)
        if key in self._seen:
            return
        self._seen.add(key)
        self.count += 1
        self._log.warning(kind, table=table, row=str(row), reason=reason, **kw)

    def reset(self) -> None:
        self._seen.clear()
