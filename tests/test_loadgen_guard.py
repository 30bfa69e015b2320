"""The loadgen cannot write to the wrong cluster: it refuses, before it writes anything, a
cluster the description does not allow, a target that is not one of that cluster's nodes,
and an account holding more than its cs_* schemas, each refusal naming the fix; and it
connects with verified TLS where its option file asks, sysbench included, or not at all."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import tls_mariadb
import yaml
from clusterscope_inventory.description import load
from clusterscope_loadgen import guard
from clusterscope_loadgen.target import Target
from helpers import REPO
from lanes import starts

from clusterscope.lab import mariadb

# SHOW GRANTS as MariaDB 10.11 prints it (the lab's servers) and as MySQL 8.4 does
MARIADB = ["GRANT USAGE ON *.* TO `clusterscope_app`@`127.0.0.1` IDENTIFIED BY PASSWORD"
           " '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'",
           "GRANT ALL PRIVILEGES ON `cs\\_%`.* TO `clusterscope_app`@`127.0.0.1`"]


def test_only_the_loadgens_schemas_pass() -> None:
    assert guard.excess(MARIADB) == []
    assert guard.excess(["GRANT SELECT, INSERT ON `cs_fk`.`users` TO `a`@`%`",
                         "GRANT EXECUTE ON FUNCTION `cs_fk`.`f` TO `a`@`%`"]) == []
    wide = guard.excess([MARIADB[0].replace("USAGE", "ALL PRIVILEGES"), MARIADB[1],
                         "GRANT SELECT ON `ndbinfo`.* TO `clusterscope_app`@`127.0.0.1`",
                         "GRANT ALL PRIVILEGES ON `cs_%`.* TO `clusterscope_app`@`127.0.0.1`",
                         "GRANT SELECT ON `cs\\_%`.* TO `a`@`%` WITH GRANT OPTION",
                         "GRANT PROXY ON ''@'%' TO 'a'@'%'",
                         "GRANT `dba` TO `clusterscope_app`@`127.0.0.1`",
                         "GRANT BACKUP_ADMIN,SYSTEM_VARIABLES_ADMIN ON *.* TO `a`@`%`"])
    assert [e.revoke for e in wide] == [
        "REVOKE ALL PRIVILEGES ON *.* FROM `clusterscope_app`@`127.0.0.1`",
        "REVOKE SELECT ON `ndbinfo`.* FROM `clusterscope_app`@`127.0.0.1`",
        # `_` is a wildcard: cs_% also matches csv_data
        "REVOKE ALL PRIVILEGES ON `cs_%`.* FROM `clusterscope_app`@`127.0.0.1`",
        "REVOKE GRANT OPTION ON `cs\\_%`.* FROM `a`@`%`",
        "REVOKE PROXY ON ''@'%' FROM 'a'@'%'",
        "REVOKE `dba` FROM `clusterscope_app`@`127.0.0.1`",
        "REVOKE BACKUP_ADMIN,SYSTEM_VARIABLES_ADMIN ON *.* FROM `a`@`%`"]
    # the password hash of a MariaDB grant is never part of what is said
    assert all("2470C0" not in e.revoke + e.what for e in wide)


def _description(tmp: Path, address: str, **cluster: object) -> Path:
    f = tmp / "clusterscope.yml"
    f.write_text(yaml.safe_dump({"clusters": [{
        "name": "staging", "kind": "galera", **cluster,
        "nodes": [{"name": "node1", "address": address}]}]}))
    return f


def _target(tmp: Path, port: int, **extra: str) -> Path:
    f = tmp / "loadgen.my.cnf"
    f.write_text("[client]\nuser=clusterscope_app\npassword=pw-0123456789\nhost=127.0.0.1\n"
                 f"port={port}\n" + "".join(f"{k}={v}\n" for k, v in extra.items()))
    f.chmod(0o600)
    return f


@pytest.mark.parametrize("cluster,address,name,says", [
    ({}, "127.0.0.1:3306", "staging", "cluster staging does not allow the loadgen: add"
                                      " `loadgen: true` to it in"),
    ({"loadgen": False}, "127.0.0.1:3306", "staging", "add `loadgen: true`"),
    ({"loadgen": True}, "127.0.0.1:3306", "production", "has no cluster 'production'"),
    ({"loadgen": True}, "10.0.0.9:3306", "staging", "points at 127.0.0.1:3306, which is not a"
                                                    " node of staging"),
    ({"loadgen": True}, "127.0.0.1:3306", "", "--cluster names the cluster"),
])
def test_a_cluster_the_description_does_not_allow_is_refused(tmp_path, cluster, address, name,
                                                             says) -> None:
    desc = _description(tmp_path, address, **cluster)
    target = Target.from_cnf(_target(tmp_path, 3306))
    with pytest.raises(guard.GuardError, match=None) as err:
        guard.allowed_cluster(str(desc), name, "galera", [target])
    assert says in str(err.value)
    with pytest.raises(guard.GuardError, match="give --description"):
        guard.allowed_cluster(None, "staging", "galera", [target])


def test_a_server_of_another_galera_cluster_is_refused(tmp_path) -> None:
    """Listed address, allowed cluster, but the server says it belongs to another Galera
    cluster: refused, naming both names and the fix; the described name passes."""
    desc = load(str(_description(tmp_path, "127.0.0.1:3306", loadgen=True)))
    staging = desc.cluster("staging")
    why = guard.identity_error(staging, "galera", "127.0.0.1:3306", True, "production")
    assert why and "belongs to the Galera cluster 'production'" in why and \
        "`wsrep_cluster_name: production`" in why
    assert guard.identity_error(staging, "galera", "127.0.0.1:3306", True, "staging") is None
    named = load(str(_description(tmp_path, "127.0.0.1:3306", loadgen=True,
                                        wsrep_cluster_name="my_wsrep_cluster")))
    assert guard.identity_error(named.cluster("staging"), "galera", "h:1", True,
                                "my_wsrep_cluster") is None
    assert "not 'my_wsrep_cluster'" in guard.identity_error(named.cluster("staging"),
                                                            "galera", "h:1", True, "staging")
    # wsrep off: not a Galera node for --engine galera; a plain InnoDB target for innodb
    assert "not a Galera node" in guard.identity_error(staging, "galera", "h:1", False, "")
    assert guard.identity_error(staging, "innodb", "h:1", False, "") is None


def loadgen(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clusterscope_loadgen", "run",
                           "--experiment", "fk", "--variants", "nofk", "--rounds", "1",
                           "--window", "2", "--warmup", "0", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.lab
def test_an_account_with_all_on_everything_is_refused(galera_lab, tmp_path) -> None:
    """Against the lab's MariaDB (Galera node1): the description allows lab-galera and the
    target is its node, but the account holds ALL ON *.*: refused, REVOKE named, nothing
    written (the lab's own loadgen account passes the same check)."""
    port = galera_lab.port("galera-node1")
    sock = Path(galera_lab.service("galera-node1")["client_config"]).parent.parent / \
        "galera" / "node1" / "mysqld.sock"
    mariadb.execute(sock, ["CREATE USER IF NOT EXISTS 'cs_wide'@'127.0.0.1' IDENTIFIED BY"
                           " 'pw-0123456789'",
                           "GRANT ALL ON *.* TO 'cs_wide'@'127.0.0.1'"])
    cnf = _target(tmp_path, port)
    cnf.write_text(cnf.read_text().replace("clusterscope_app", "cs_wide"))
    desc = galera_lab.root / "clusterscope.yml"
    proc = loadgen("--target", str(cnf), "--description", str(desc), "--cluster", "lab-galera")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "REVOKE ALL PRIVILEGES ON *.* FROM `cs_wide`@`127.0.0.1`" in proc.stderr
    assert "round 1" not in proc.stdout and "pw-0123456789" not in proc.stderr
    # a description that does not allow the cluster: refused before the account is asked
    other = _description(tmp_path, f"127.0.0.1:{port}")
    proc = loadgen("--target", str(cnf), "--description", str(other), "--cluster", "staging")
    assert proc.returncode == 2 and "add `loadgen: true`" in proc.stderr, proc.stderr
    # the lab's own account: cs_* only
    own = Target.from_cnf(galera_lab.service("galera-node1")["client_config"])
    guard.check_account(own)
    # the node, as the lab's server sees itself: a description whose Galera cluster is
    # named otherwise is refused at the server, before anything is written
    lab = load(str(desc)).cluster("lab-galera")
    guard.check_identity(own, lab, "galera")
    with pytest.raises(guard.GuardError, match="belongs to the Galera cluster 'lab-galera'"):
        guard.check_identity(own, replace(lab, wsrep_cluster_name="staging"), "galera")


@pytest.fixture(scope="module")
@starts("mariadb")
def tls_server():
    with tls_mariadb.server([
            "CREATE USER 'clusterscope_app'@'127.0.0.1' IDENTIFIED BY 'pw-0123456789'"
            " REQUIRE SSL",
            "GRANT ALL PRIVILEGES ON `cs\\_%`.* TO 'clusterscope_app'@'127.0.0.1'"]) as srv:
        yield srv


def _accepts(srv: dict) -> int:
    conn = mariadb.socket_connect(srv["socket"])
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS LIKE 'Ssl_accepts'")
            return int(cur.fetchone()[1])
    finally:
        conn.close()


@pytest.mark.tools("python", "sysbench")
def test_the_loadgen_connects_only_through_verified_tls(tls_server, tmp_path) -> None:
    srv = tls_server
    desc = _description(tmp_path, f"127.0.0.1:{srv['port']}", loadgen=True)
    run = ["--engine", "innodb", "--description", str(desc), "--cluster", "staging"]
    # a wrong CA: refused at start, the TLS handshake named
    cnf = _target(tmp_path, srv["port"], **{"ssl-ca": srv["other_ca"],
                                           "ssl-mode": "VERIFY_IDENTITY"})
    proc = loadgen("--target", str(cnf), *run)
    assert proc.returncode == 2 and "TLS handshake failed (ssl-mode VERIFY_IDENTITY" in \
        proc.stderr, proc.stderr
    # the right CA but no client certificate: sysbench 1.0.20 could not follow: refused
    cnf = _target(tmp_path, srv["port"], **{"ssl-ca": srv["ca"], "ssl-mode": "VERIFY_IDENTITY"})
    proc = loadgen("--target", str(cnf), *run)
    assert proc.returncode == 2 and "give ssl-ca, ssl-cert and ssl-key" in proc.stderr
    # with a client certificate of the server's CA: a window through TLS, sysbench's too
    client = srv["sign"](tmp_path)
    cnf = _target(tmp_path, srv["port"], **{"ssl-ca": srv["ca"], "ssl-cert": client["cert"],
                                           "ssl-key": client["key"],
                                           "ssl-mode": "VERIFY_IDENTITY"})
    before = _accepts(srv)
    out = tmp_path / "run.json"
    proc = loadgen("--target", str(cnf), *run, "--threads", "2", "--json-out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    import json
    windows = json.loads(out.read_text())["windows"]
    assert windows and all(w["valid"] and w["transactions"] > 0 for w in windows), windows
    assert _accepts(srv) - before >= 2 + 1  # sysbench's two threads and the loadgen's own
    assert "not verified TLS" not in proc.stderr
