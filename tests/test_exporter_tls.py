"""Verified TLS to the databases, fails closed: both exporters as compose runs them (the
description's cluster, the option file's section) against a real MariaDB that requires TLS
and serves ndbinfo tables, the option file naming a CA. With another CA than the one that
signed the server's certificate nothing is read (ndb_up 0, mysql_up 0) and the log says it
was the TLS handshake; with the right CA both read."""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import tls_mariadb
from helpers import Samples, eventually, val
from lanes import starts
from ndbinfo_scratch import GRANTS, USER, baseline

from clusterscope import gotools
from clusterscope.lab import mariadb

PASSWORD = "tls-pw-0123456789"


@pytest.fixture(scope="module")
@starts("mariadb")
def tls_server():
    with tls_mariadb.server(["CREATE DATABASE IF NOT EXISTS ndbinfo"]) as srv:
        sock = srv["socket"]
        mariadb.execute(sock, [f"CREATE USER '{USER}'@'127.0.0.1' IDENTIFIED BY"
                               f" '{PASSWORD}' REQUIRE SSL",
                               *[f"GRANT {g} TO '{USER}'@'127.0.0.1'" for g in GRANTS]])
        conn = mariadb.socket_connect(sock)
        try:
            baseline(conn.cursor())
        finally:
            conn.close()
        yield srv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def setup(tmp: Path, srv: dict, ca: str) -> tuple[Path, Path]:
    """(description, option file): one NDB cluster whose SQL node is the TLS server, the
    option file asking for VERIFY_IDENTITY against `ca`."""
    desc = tmp / "clusterscope.yml"
    desc.write_text("clusters:\n  - name: tls\n    kind: ndb\n    nodes:\n"
                    f"      - {{name: sql1, address: '127.0.0.1:{srv['port']}'}}\n")
    cnf = tmp / "exporters.my.cnf"
    cnf.write_text(f"[client]\nuser={USER}\npassword={PASSWORD}\nssl-ca={srv[ca]}\n"
                   "ssl-mode=VERIFY_IDENTITY\n")
    cnf.chmod(0o600)
    return desc, cnf


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=20) as r:
        return Samples.of_text(r.read().decode())


@pytest.mark.parametrize("ca,up", [("other_ca", 0), ("ca", 1)])
@pytest.mark.tools("python")
def test_ndbinfo_exporter_reads_only_through_verified_tls(tls_server, tmp_path, ca,
                                                          up) -> None:
    desc, cnf = setup(tmp_path, tls_server, ca)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ndbinfo_exporter", f"--config.clusters={desc}",
         f"--config.my-cnf={cnf}", f"--web.listen-address=127.0.0.1:{port}",
         "--scrape.timeout=4s", f"--state.dir={tmp_path}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        ss = eventually(lambda: scrape(f"http://127.0.0.1:{port}/probe?cluster=tls"), 30,
                        "a probe of the TLS cluster")
    finally:
        proc.terminate()
        log = proc.communicate(timeout=20)[0]
    assert val(ss, "ndb_up") == up, log
    if up:
        assert val(ss, "ndb_node_status", node_id="1") is not None or \
            any(k[0].startswith("ndb_node") for k in ss), "read nothing through TLS"
        assert "TLS handshake failed" not in log
    else:
        assert "TLS handshake failed (ssl-mode VERIFY_IDENTITY)" in log, log
        assert "CERTIFICATE_VERIFY_FAILED" in log, log
    assert PASSWORD not in log


@pytest.mark.parametrize("ca,up", [("other_ca", 0), ("ca", 1)])
@pytest.mark.tools("mysqld_exporter")
def test_mysqld_exporter_reads_only_through_verified_tls(tls_server, tmp_path, ca,
                                                         up) -> None:
    """The same option file, read by the mysqld_exporter compose runs (its ssl-ca makes the
    driver check the chain and the host name: prometheus/mysqld_exporter v0.19.0
    config/config.go FormDSN -> CustomizeTLS, go-sql-driver/mysql v1.9.3 dsn.go:216 sets
    ServerName from the address)."""
    _, cnf = setup(tmp_path, tls_server, ca)
    cnf.write_text(cnf.read_text().replace("ssl-mode=VERIFY_IDENTITY\n", ""))
    port = free_port()
    proc = subprocess.Popen([str(gotools.path_of("mysqld_exporter")), f"--config.my-cnf={cnf}",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = (f"http://127.0.0.1:{port}/probe?target=127.0.0.1:{tls_server['port']}"
               "&auth_module=client")
        ss = eventually(lambda: scrape(url), 30, "a probe of the TLS server")
    finally:
        proc.terminate()
        log = proc.communicate(timeout=20)[0]
    assert val(ss, "mysql_up") == up, log
    if not up:
        assert "certificate signed by unknown authority" in log, log
    assert PASSWORD not in log
