"""How the exporter logs in: caching_sha2_password without TLS (MySQL 8.0/8.4's default) and
TLS by ssl-mode, each against what can run here.

- caching_sha2_password: against `mysql8_standin` (a STAND-IN: MariaDB cannot serve the
  plugin), through PyMySQL's real client code: the RSA path a first login after a server
  start takes, which needs the `cryptography` package.
- TLS: a real MariaDB that requires it (`REQUIRE SSL`), with a CA and server certificate
  made here; ssl-mode DISABLED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY from the option file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import tls_mariadb
from lanes import starts
from mysql8_standin import MySQL8Standin
from ndbinfo_exporter import mycnf
from ndbinfo_exporter.db import Unavailable, open_connection

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
@pytest.fixture(scope="module")
@starts("mariadb")
def tls_server() -> Iterator[dict]:
    with tls_mariadb.server([f"CREATE USER 'ndbinfo_exporter'@'127.0.0.1' IDENTIFIED BY"
                             f" '{PASSWORD}' REQUIRE SSL"]) as srv:
        yield srv


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
    with pytest.raises(mycnf.ConfigError, match="ssl-mode is not one of DISABLED"):
        mycnf.load(option_file(tmp_path, 3306, **{"ssl-mode": "MAYBE"}))
    with pytest.raises(mycnf.ConfigError, match="VERIFY_CA needs ssl-ca"):
        mycnf.load(option_file(tmp_path, 3306, **{"ssl-mode": "VERIFY_CA"}))
