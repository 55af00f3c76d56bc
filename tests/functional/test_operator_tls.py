"""Operator drop-in, TLS: ssl: remotes (clustered lists too) with a real PKI made by ovs-pki and
ovsdb-servers listening on pssl: on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ovn_northd_py.devtools.servers import NB_SCHEMA, SB_SCHEMA, OurNorthd, OvsdbServer, nbctl
from ovn_northd_py.devtools.testing import free_port, wait_until


@dataclass
class Pki:
    dir: Path

    @property
    def server(self) -> list[str]:
        d = self.dir
        return [f"--private-key={d}/server-privkey.pem", f"--certificate={d}/server-cert.pem",
                f"--ca-cert={d}/pki/switchca/cacert.pem"]

    @property
    def client(self) -> list[str]:
        d = self.dir
        return ["-p", f"{d}/client-privkey.pem", "-c", f"{d}/client-cert.pem", "-C",
                f"{d}/pki/controllerca/cacert.pem"]


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    d = tmp_path / "certs"
    d.mkdir()
    base = ["ovs-pki", "-d", str(d / "pki"), "-l", str(d / "pki.log")]
    subprocess.run([*base, "init"], cwd=d, check=True, capture_output=True)
    subprocess.run([*base, "req+sign", "server", "controller"], cwd=d, check=True, capture_output=True)
    subprocess.run([*base, "req+sign", "client", "switch"], cwd=d, check=True, capture_output=True)
    return Pki(d)


@dataclass
class SslEnv:
    workdir: Path
    nb: OvsdbServer
    sb: OvsdbServer
    nb_port: int
    sb_port: int


@pytest.fixture
def ssl_env(tmp_path: Path, pki: Pki) -> Iterator[SslEnv]:
    nb_port, sb_port = free_port(), free_port()
    nb = OvsdbServer(tmp_path, "nb", NB_SCHEMA, extra_args=[*pki.server, f"--remote=pssl:{nb_port}:127.0.0.1"]).start()
    sb = OvsdbServer(tmp_path, "sb", SB_SCHEMA, extra_args=[*pki.server, f"--remote=pssl:{sb_port}:127.0.0.1"]).start()
    try:
        yield SslEnv(tmp_path, nb, sb, nb_port, sb_port)
    finally:
        sb.stop()
        nb.stop()


def _sb_names(sb: OvsdbServer) -> str:
    return subprocess.run(["ovn-sbctl", f"--db={sb.remote}", "--bare", "--columns=external_ids", "list",
                           "Datapath_Binding"], check=True, capture_output=True, text=True).stdout


def test_nb_and_clustered_sb_over_tls(ssl_env: SslEnv, pki: Pki):
    dead = free_port()  # a cluster member that is down: the daemon moves on to the next remote
    d = OurNorthd(ssl_env.workdir, f"ssl:127.0.0.1:{ssl_env.nb_port}",
                  f"ssl:127.0.0.1:{dead},ssl:127.0.0.1:{ssl_env.sb_port}",
                  extra_args=[*pki.client, "--ssl-protocols=TLSv1.2,TLSv1.3", "--ssl-ciphers=HIGH:!aNULL:!MD5"]).start()
    try:
        nbctl(ssl_env.nb.remote, "ls-add", "sw0", wait="sb", timeout=40)
        assert "name=sw0" in _sb_names(ssl_env.sb)
        r = d.appctl("sb-connection-status")
        assert r.stdout == "connected\n"
        assert d.appctl("status").stdout == "Status: active\n"
        assert d.proc is not None and d.proc.poll() is None
    finally:
        d.stop()


def test_wrong_ca_is_reported_and_nothing_is_written(ssl_env: SslEnv, pki: Pki):
    args = [*pki.client]
    args[-1] = f"{pki.dir}/pki/switchca/cacert.pem"  # not the CA that signed the servers' certificates
    d = OurNorthd(ssl_env.workdir, f"ssl:127.0.0.1:{ssl_env.nb_port}", f"ssl:127.0.0.1:{ssl_env.sb_port}",
                  extra_args=args).start()
    try:
        nbctl(ssl_env.nb.remote, "ls-add", "sw0")
        wait_until(lambda: any("certificate verify failed" in str(r.get("errors", ""))
                               for r in d.log_records()), 20, "the verification error in the log")
        assert "sw0" not in _sb_names(ssl_env.sb)
    finally:
        d.stop()


def test_mismatched_key_is_retried_and_replaced_files_are_used(ssl_env: SslEnv, pki: Pki, tmp_path: Path):
    # OVN's ovn-northd.at "northd ssl file change": a key that does not match its certificate is
    # no reason to exit; each attempt reads the files again, so fixing them connects.
    import shutil

    key, cert, ca = tmp_path / "key.pem", tmp_path / "cert.pem", tmp_path / "ca.pem"
    shutil.copy(pki.dir / "server-privkey.pem", key)  # not the client certificate's key
    shutil.copy(pki.dir / "client-cert.pem", cert)
    shutil.copy(pki.dir / "pki/controllerca/cacert.pem", ca)
    d = OurNorthd(ssl_env.workdir, f"ssl:127.0.0.1:{ssl_env.nb_port}", f"ssl:127.0.0.1:{ssl_env.sb_port}",
                  extra_args=["-p", str(key), "-c", str(cert), "-C", str(ca)]).start()
    try:
        nbctl(ssl_env.nb.remote, "ls-add", "sw0")
        wait_until(lambda: any("cannot use the PKI" in str(r) for r in d.log_records()), 20,
                   "the PKI error in the log")
        assert "sw0" not in _sb_names(ssl_env.sb)
        shutil.copy(pki.dir / "client-privkey.pem", key)
        wait_until(lambda: "sw0" in _sb_names(ssl_env.sb), 30, "sw0 in SB once the key matches")
    finally:
        d.stop()


@pytest.mark.parametrize(("args", "message"), [
    (["-p", "/nonexistent/key.pem"], "--private-key=/nonexistent/key.pem: No such file or directory"),
    (["-c", "/"], "--certificate=/: Is a directory"),
    ([], "ssl: remotes need -p/--private-key, -c/--certificate, -C/--ca-cert"),
    (["--ssl-protocols=SSLv2"], "--ssl-protocols: unknown protocol 'SSLv2'"),
])
def test_unusable_pki_exits_1_with_a_clear_message(tmp_path: Path, pki: Pki, args: list[str], message: str):
    full = [*pki.client, *args] if args else []  # (the last -p/-c wins)
    r = subprocess.run([sys.executable, "-m", "ovn_northd_py", "--ovnnb-db=ssl:127.0.0.1:1",
                        "--ovnsb-db=ssl:127.0.0.1:2", f"--unixctl={tmp_path}/x.ctl", *full],
                       capture_output=True, text=True, timeout=30, check=False)
    assert r.returncode == 1, r
    assert message in r.stderr, r.stderr


def test_ssl_protocols_are_applied(ssl_env: SslEnv, pki: Pki, tmp_path: Path):
    """The servers speak TLSv1.2 only: --ssl-protocols=TLSv1.3 cannot connect (the option reaches the
    TLS context), TLSv1.2 can."""
    port = free_port()
    srv = OvsdbServer(tmp_path / "v12", "sb", SB_SCHEMA, extra_args=[
        *pki.server, f"--remote=pssl:{port}:127.0.0.1", "--ssl-protocols=TLSv1.2"]).start()
    try:
        d13 = OurNorthd(ssl_env.workdir, f"ssl:127.0.0.1:{ssl_env.nb_port}", f"ssl:127.0.0.1:{port}", name="v13",
                        extra_args=[*pki.client, "--ssl-protocols=TLSv1.3"]).start()
        try:
            wait_until(lambda: any(r.get("db") == "sb" and "PROTOCOL_VERSION" in str(r.get("errors"))
                                   for r in d13.log_records()), 20, "TLSv1.3-only to fail against TLSv1.2")
            assert d13.appctl("sb-connection-status").stdout == "not connected\n"
        finally:
            d13.stop()
        d12 = OurNorthd(ssl_env.workdir, f"ssl:127.0.0.1:{ssl_env.nb_port}", f"ssl:127.0.0.1:{port}", name="v12",
                        extra_args=[*pki.client, "--ssl-protocols=TLSv1.2"]).start()
        try:
            wait_until(lambda: d12.appctl("status").stdout == "Status: active\n", 20, "TLSv1.2 to connect")
        finally:
            d12.stop()
    finally:
        srv.stop()
