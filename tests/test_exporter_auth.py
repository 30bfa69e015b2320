"""How the exporter logs in: caching_sha2_password without TLS (MySQL 8.0/8.4's default) and
TLS by ssl-mode, each against what can run here.

- caching_sha2_password: against `mysql8_standin` (a STAND-IN: MariaDB cannot serve the
  plugin), through PyMySQL's real client code: the RSA path a first login after a server
  start takes, which needs the `cryptography` package.
- TLS: a real MariaDB that requires it (`REQUIRE SSL`), with a CA and server certificate
  made here; ssl-mode DISABLED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY from the option file.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from lanes import starts
from mysql8_standin import MySQL8Standin
from ndbinfo_exporter import mycnf
from ndbinfo_exporter.db import Unavailable, open_connection

from clusterscope.lab import mariadb
from clusterscope.lab.core import Lab, chown

PASSWORD = "s3cret-#!%="


@pytest.fixture
def standin() -> Iterator[MySQL8Standin]:
    s = MySQL8Standin(PASSWORD)
    try:
        yield s
    finally:
        s.close()


def option_file(tmp_path: Path, port: int, password: str = PASSWORD, **extra: str) -> Path:
    lines = ["[client]", "user=ndbinfo_exporter", f"password={password}", "host=127.0.0.1",
             f"port={port}", *[f"{k}={v}" for k, v in extra.items()]]
    f = tmp_path / "my.cnf"
    f.write_text("\n".join(lines) + "\n")
    f.chmod(0o600)
    return f


def test_caching_sha2_full_login_without_tls_uses_the_servers_rsa_key(
        standin: MySQL8Standin, tmp_path: Path) -> None:
    conn = open_connection(mycnf.load(option_file(tmp_path, standin.port)), 2.0)
    conn.close()
    login = standin.logins[-1]
    assert login == {"requested_public_key": True, "password_ok": True,
                     "user": "ndbinfo_exporter"}


def test_a_configured_server_public_key_saves_the_round_trip(
        standin: MySQL8Standin, tmp_path: Path) -> None:
    key = tmp_path / "server.pem"
    key.write_bytes(standin.public_pem)
    cfg = mycnf.load(option_file(tmp_path, standin.port, **{"server-public-key-path": key}))
    open_connection(cfg, 2.0).close()
    assert standin.logins[-1]["requested_public_key"] is False
    assert standin.logins[-1]["password_ok"] is True


def test_a_wrong_password_is_a_login_failure_not_a_crash(standin: MySQL8Standin,
                                                         tmp_path: Path) -> None:
    cfg = mycnf.load(option_file(tmp_path, standin.port, password="wrong"))
    with pytest.raises(Unavailable, match=r"login failed: \(1045\)"):
        open_connection(cfg, 2.0)
    assert standin.logins[-1]["password_ok"] is False


# -- TLS against a real MariaDB --------------------------------------------------------------
def _cert(subject: str, key: rsa.RSAPrivateKey, issuer: x509.Name | None = None,
          issuer_key: rsa.RSAPrivateKey | None = None, ca: bool = False) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer or name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(hours=1))
               .not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(issuer_key or key, hashes.SHA256())


def _write(path: Path, cert: x509.Certificate | None = None,
           key: rsa.RSAPrivateKey | None = None) -> Path:
    if cert is not None:
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    else:
        assert key is not None
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.TraditionalOpenSSL,
                                           serialization.NoEncryption()))
    return path


@pytest.fixture(scope="module")
@starts("mariadb")
def tls_server() -> Iterator[dict]:
    root = Path(tempfile.mkdtemp(prefix="cs-tls-"))
    root.chmod(0o755)
    lab = Lab(root, int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300")))
    certs = lab.path("certs")
    ca_key, srv_key, other_key = (rsa.generate_private_key(public_exponent=65537,
                                                           key_size=2048) for _ in range(3))
    ca = _cert("clusterscope test CA", ca_key, ca=True)
    srv = _cert("127.0.0.1", srv_key, ca.subject, ca_key)
    files = {"ca": _write(certs / "ca.pem", ca), "cert": _write(certs / "server.pem", srv),
             "key": _write(certs / "server-key.pem", key=srv_key),
             "other_ca": _write(certs / "other-ca.pem",
                                _cert("another CA", other_key, ca=True))}
    chown(certs, mariadb.MYSQL_USER)
    base, port = lab.path("tls-sql"), lab.port("exporter-test-tls-sql")
    mariadb.prepare_instance(base, port, {"innodb_buffer_pool_size": "16M",
                                          "innodb_log_file_size": "8M",
                                          "ssl_ca": files["ca"], "ssl_cert": files["cert"],
                                          "ssl_key": files["key"]})
    mariadb.start_server(lab, "exporter-test-tls-sql", "test", "TLS test server", base, port)
    try:
        mariadb.execute(base / "mysqld.sock", [
            f"CREATE USER 'ndbinfo_exporter'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'"
            " REQUIRE SSL"])
        yield {"port": port, **files}
    finally:
        lab.stop("exporter-test-tls-sql")
        shutil.rmtree(root, ignore_errors=True)


def _cipher(conn) -> str:
    with conn.cursor() as cur:
        cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        return cur.fetchone()[1]


@pytest.mark.parametrize(("options", "outcome"), [
    ({"ssl-mode": "REQUIRED"}, "tls"),
    ({}, "tls"),  # PREFERRED: TLS when the server offers it
    ({"ssl-mode": "VERIFY_CA", "ssl-ca": "ca"}, "tls"),
    ({"ssl-ca": "ca"}, "tls"),  # an ssl-ca alone means VERIFY_CA (mysql's sslopt-case.h)
    ({"ssl-mode": "VERIFY_IDENTITY", "ssl-ca": "ca"}, "tls"),
    ({"ssl-mode": "VERIFY_CA", "ssl-ca": "other_ca"}, "TLS handshake failed"),
    ({"ssl-mode": "DISABLED"}, r"login failed: \(1045\)"),  # the account requires TLS
    ({"ssl": "0"}, r"login failed: \(1045\)"),  # MariaDB's spelling of DISABLED
])
def test_ssl_mode_from_the_option_file(tls_server: dict, tmp_path: Path, options: dict,
                                       outcome: str) -> None:
    extra = {k: (str(tls_server[v]) if k == "ssl-ca" else v) for k, v in options.items()}
    cfg = mycnf.load(option_file(tmp_path, tls_server["port"], **extra))
    if outcome != "tls":
        with pytest.raises(Unavailable, match=outcome):
            open_connection(cfg, 2.0)
        return
    conn = open_connection(cfg, 2.0)
    try:
        assert _cipher(conn)  # the session is encrypted
    finally:
        conn.close()


def test_a_bad_ssl_mode_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(mycnf.ConfigError, match="ssl-mode 'MAYBE'"):
        mycnf.load(option_file(tmp_path, 3306, **{"ssl-mode": "MAYBE"}))
    with pytest.raises(mycnf.ConfigError, match="VERIFY_CA needs ssl-ca"):
        mycnf.load(option_file(tmp_path, 3306, **{"ssl-mode": "VERIFY_CA"}))
