"""TLS for ``ssl:`` remotes: python-ovs' SSL stream, with the C daemon's PKI options.

``-p/--private-key``, ``-c/--certificate`` and ``-C/--ca-cert`` go to
``ovs.stream.Stream.ssl_set_*`` (used by every ``ssl:`` connection: the IDLs and the schema
check).  python-ovs has no protocol or cipher settings, so ``--ssl-protocols`` and
``--ssl-ciphers`` are applied by a subclass of its SSL stream, registered for ``ssl:``.
"""

from __future__ import annotations

import errno
import socket
import ssl
from dataclasses import dataclass
from typing import Any

import ovs.socket_util
import ovs.stream
import ovs.vlog

_vlog = ovs.vlog.Vlog("stream_ssl")

_PROTOCOLS = {
    "tlsv1": ssl.TLSVersion.TLSv1, "tlsv1.1": ssl.TLSVersion.TLSv1_1,
    "tlsv1.2": ssl.TLSVersion.TLSv1_2, "tlsv1.3": ssl.TLSVersion.TLSv1_3,
}


class TlsSetupError(RuntimeError):
    pass


@dataclass(slots=True)
class TlsOptions:
    private_key: str | None = None
    certificate: str | None = None
    ca_cert: str | None = None
    protocols: str | None = None  # e.g. "TLSv1.2,TLSv1.3" (as ovn-northd --ssl-protocols)
    ciphers: str | None = None  # an OpenSSL cipher list (as ovn-northd --ssl-ciphers)


_settings: dict[str, Any] = {"min": None, "max": None, "ciphers": None}


def parse_protocols(spec: str) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
    versions = []
    for word in spec.replace(" ", ",").split(","):
        if not word:
            continue
        v = _PROTOCOLS.get(word.lower())
        if v is None:
            raise TlsSetupError(f"--ssl-protocols: unknown protocol {word!r} (expected TLSv1, TLSv1.1, "
                                f"TLSv1.2 or TLSv1.3)")
        versions.append(v)
    if not versions:
        raise TlsSetupError("--ssl-protocols: no protocol given")
    return min(versions), max(versions)


def _check_readable(flag: str, path: str | None) -> None:
    if not path:
        return
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError as e:
        raise TlsSetupError(f"{flag}={path}: {e.strerror}") from e


def uses_ssl(*remotes: str) -> bool:
    return any(r.strip().startswith("ssl:") for remote in remotes for r in remote.split(","))


def configure(opts: TlsOptions, *remotes: str) -> None:
    """Check and install the PKI; TlsSetupError (a clear message) when it cannot work."""
    for flag, path in (("--private-key", opts.private_key), ("--certificate", opts.certificate),
                       ("--ca-cert", opts.ca_cert)):
        _check_readable(flag, path)
    if uses_ssl(*remotes):
        missing = [f for f, v in (("-p/--private-key", opts.private_key), ("-c/--certificate", opts.certificate),
                                  ("-C/--ca-cert", opts.ca_cert)) if not v]
        if missing:
            raise TlsSetupError(f"ssl: remotes need {', '.join(missing)}")
        # A key that does not match its certificate, or PEM that does not parse, is no reason to stop:
        # as the C daemon, every connection attempt reads the files again (they may be replaced,
        # OVN's "northd ssl file change"), and each failed attempt is logged.
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        if opts.ciphers:
            try:
                ctx.set_ciphers(opts.ciphers)
            except ssl.SSLError as e:
                raise TlsSetupError(f"--ssl-ciphers={opts.ciphers}: {e}") from e
    if opts.protocols:
        _settings["min"], _settings["max"] = parse_protocols(opts.protocols)
    _settings["ciphers"] = opts.ciphers
    if opts.private_key:
        ovs.stream.Stream.ssl_set_private_key_file(opts.private_key)
    if opts.certificate:
        ovs.stream.Stream.ssl_set_certificate_file(opts.certificate)
    if opts.ca_cert:
        ovs.stream.Stream.ssl_set_ca_cert_file(opts.ca_cert)
    ovs.stream.Stream.register_method("ssl", SSLStream)


class SSLStream(ovs.stream.SSLStream):  # type: ignore[misc]
    """python-ovs' SSL stream with --ssl-protocols and --ssl-ciphers applied."""

    @staticmethod
    def _open(suffix: str, dscp: int) -> tuple[int, Any]:
        address = ovs.socket_util.inet_parse_active(suffix, 0)
        family, sock = ovs.socket_util.inet_create_socket_active(socket.SOCK_STREAM, address)
        if sock is None:
            return family, sock
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False  # as ovn-northd: the peer is authenticated by the CA only
        ctx.verify_mode = ssl.CERT_REQUIRED
        if _settings["min"] is not None:
            ctx.minimum_version = _settings["min"]
            ctx.maximum_version = _settings["max"]
        if _settings["ciphers"]:
            ctx.set_ciphers(_settings["ciphers"])
        S = ovs.stream.Stream
        try:  # read at every attempt: the files may have been replaced since the last one
            ctx.load_verify_locations(S._SSL_ca_cert_file)
            ctx.load_cert_chain(S._SSL_certificate_file, S._SSL_private_key_file)
        except (ssl.SSLError, OSError) as e:
            _vlog.warn(f"ssl:{suffix}: cannot use the PKI (-p {S._SSL_private_key_file}, "
                       f"-c {S._SSL_certificate_file}, -C {S._SSL_ca_cert_file}): {e}")
            sock.close()
            return errno.EPROTO, None
        ssl_sock = ctx.wrap_socket(sock, do_handshake_on_connect=False)
        error = ovs.socket_util.inet_connect_active(ssl_sock, address, family, dscp)
        if not error:
            try:
                ssl_sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError as e:
                ssl_sock.close()
                return ovs.socket_util.get_exception_errno(e), None
        return error, ssl_sock
