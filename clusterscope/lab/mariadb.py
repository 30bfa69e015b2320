"""Running a MariaDB server for the lab and talking to it.

Servers run as the OS user `mysql` (rsync SST and the server's own checks expect it) and are
started with `--defaults-file`, so the system configuration is never read. Credentials live
only in 0600 client option files under the lab directory, never in argv.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import pymysql

from clusterscope.lab.core import Lab, LabError, Service, chown

MYSQL_USER = "mysql"
ADMIN_USER = "clusterscope_admin"
Options = Mapping[str, str | int | None]


def password(lab: Lab, account: str) -> str:
    """The lab's password for an account, made once and kept in <lab>/secrets (0600)."""
    d = lab.path("secrets")
    d.chmod(0o700)
    f = d / account
    if not f.exists():
        f.write_text(secrets.token_urlsafe(18))
        f.chmod(0o600)
    return f.read_text().strip()


def write_option_file(path: Path, sections: Mapping[str, Options], mode: int = 0o644,
                      owner: str | None = None) -> Path:
    lines: list[str] = []
    for section, opts in sections.items():
        lines.append(f"[{section}]")
        for key, value in opts.items():
            lines.append(key if value is None else f"{key}={value}")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines))
    tmp.chmod(mode)
    if owner:
        chown(tmp, owner, recursive=False)
    tmp.replace(path)
    return path


def client_config(lab: Lab, name: str, user: str, port: int, owner: str | None = None,
                  **extra: str) -> Path:
    """A `[client]` option file for one account on one server (what exporters read)."""
    opts: dict[str, str | int | None] = {"user": user, "password": password(lab, user),
                                         "host": "127.0.0.1", "port": port, **extra}
    return write_option_file(lab.path("clients") / f"{name}.cnf", {"client": opts}, 0o600, owner)


def install_db(datadir: Path, cnf: Path) -> None:
    if (datadir / "mysql").is_dir():
        return
    datadir.mkdir(parents=True, exist_ok=True)
    chown(datadir.parent, MYSQL_USER, recursive=False)
    chown(datadir, MYSQL_USER)
    proc = subprocess.run(
        ["mariadb-install-db", f"--defaults-file={cnf}", f"--user={MYSQL_USER}",
         "--skip-test-db", "--auth-root-authentication-method=socket"],
        capture_output=True, text=True)
    if proc.returncode != 0:
        raise LabError(f"mariadb-install-db for {datadir} failed:\n{proc.stderr[-3000:]}")


def server_options(base: Path, port: int, extra: Options | None = None) -> dict:
    """The [mysqld] options every lab server needs: its own files and 127.0.0.1 only."""
    return {
        "datadir": base / "data",
        "socket": base / "mysqld.sock",
        "pid-file": base / "mysqld.pid",
        "log-error": base / "error.log",
        "port": port,
        "bind-address": "127.0.0.1",
        "tmpdir": base / "tmp",
        "skip-name-resolve": None,
        "innodb_buffer_pool_size": "128M",
        "innodb_log_file_size": "48M",
        "performance_schema": "OFF",
        "max_connections": 400,
        **(extra or {}),
    }


def prepare_instance(base: Path, port: int, extra: Options | None = None,
                     extra_sections: Mapping[str, Options] | None = None) -> Path:
    """Write the instance's my.cnf and initialise its datadir (idempotent)."""
    base.mkdir(parents=True, exist_ok=True)
    (base / "tmp").mkdir(exist_ok=True)
    cnf = write_option_file(base / "my.cnf",
                            {"mysqld": server_options(base, port, extra), **(extra_sections or {})})
    chown(base, MYSQL_USER, recursive=False)
    chown(base / "tmp", MYSQL_USER)
    install_db(base / "data", cnf)
    return cnf


def start_server(lab: Lab, name: str, part: str, what: str, base: Path, port: int,
                 args: Iterable[str] = (), simulated: bool = False,
                 timeout: float = 120.0, env: dict[str, str] | None = None) -> Service:
    cnf = base / "my.cnf"
    argv = ["mariadbd", f"--defaults-file={cnf}", f"--user={MYSQL_USER}", *args]

    def ready() -> None:
        wait_until_ready(base / "mysqld.sock", timeout, lab, name)

    return lab.spawn(name, part, what, argv, port=port, log=base / "error.log",
                     user=MYSQL_USER, env=env, simulated=simulated, wait_ready=ready,
                     extra={"socket": str(base / "mysqld.sock"), "base": str(base)})


def wait_until_ready(sock: Path, timeout: float, lab: Lab, name: str) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if not lab.running(name):
            raise LabError(f"{name} exited while starting")
        try:
            socket_connect(sock).close()
            return
        except pymysql.MySQLError as exc:
            last = exc
            time.sleep(0.3)
    raise LabError(f"{name} did not accept connections within {timeout:.0f} s ({last})")


def socket_connect(sock: Path, database: str | None = None,
                   **kw: object) -> pymysql.connections.Connection:
    """Connect as the server's root over its socket (unix_socket auth; the lab runs as root)."""
    if os.geteuid() != 0:
        raise LabError("the lab must run as root (it manages servers running as `mysql`)")
    return pymysql.connect(unix_socket=str(sock), user="root", database=database,
                           autocommit=True, connect_timeout=5, **kw)


def connect(client_cnf: str | Path, database: str | None = None,
            **kw: object) -> pymysql.connections.Connection:
    """Connect with a client option file (credentials never pass through argv)."""
    return pymysql.connect(read_default_file=str(client_cnf), read_default_group="client",
                           database=database, autocommit=True, connect_timeout=5, **kw)


def execute(sock: Path, statements: Iterable[str], database: str | None = None) -> None:
    conn = socket_connect(sock, database)
    try:
        with conn.cursor() as cur:
            for stmt in statements:
                cur.execute(stmt)
    finally:
        conn.close()


def ensure_account(lab: Lab, sock: Path, user: str, grants: Iterable[str]) -> None:
    """Create (or re-password) a 127.0.0.1 account with exactly the given grants."""
    pw = password(lab, user)
    stmts = [f"CREATE USER IF NOT EXISTS '{user}'@'127.0.0.1' IDENTIFIED BY %s",
             f"ALTER USER '{user}'@'127.0.0.1' IDENTIFIED BY %s"]
    conn = socket_connect(sock)
    try:
        with conn.cursor() as cur:
            for stmt in stmts:
                cur.execute(stmt, (pw,))
            # exactly these: what an older lab granted more goes
            cur.execute(f"REVOKE ALL PRIVILEGES, GRANT OPTION FROM '{user}'@'127.0.0.1'")
            for grant in grants:
                cur.execute(f"GRANT {grant} TO '{user}'@'127.0.0.1'")
    finally:
        conn.close()
