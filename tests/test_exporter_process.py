"""The ndbinfo_exporter process: a malformed option file or web config stops it at start,
and the running process serves over TLS with basic auth, keeps secrets out of what it
shows, and rides out its database going down and back; option-file sections read as
mysqld_exporter reads them."""

from __future__ import annotations

import base64
import os
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import bcrypt
import pytest
from helpers import Samples, val
from ndbinfo_exporter import main as exporter_main
from ndbinfo_exporter import mycnf
from ndbinfo_scratch import (
    USER,
    Scratch,
)
from prometheus_client.parser import text_string_to_metric_families


# -- configuration --------------------------------------------------------------------
@pytest.mark.parametrize("content, problem", [
    ("user=x\n", "not a valid option file"),
    ("[mysqld]\nuser=x\n", "no [client] section"),
    ("[client]\nport=abc\nuser=x\n", "is not a number"),
    ("[client]\npassword=x\n", "has no `user`"),
    ("[client]\nuser=x\nfoo=1\n", "line(s) 3 set no option"),
    ("!include /etc/other.cnf\n[client]\nuser=x\n", "not supported"),
])
def test_malformed_my_cnf_fails_at_start(tmp_path: Path, capsys, content: str,
                                         problem: str) -> None:
    f = tmp_path / "bad.cnf"
    f.write_text(content)
    assert exporter_main.main(["--config.my-cnf", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and problem in err


@pytest.mark.parametrize("content, problem", [
    ("basic_auth_users: [\n", "not valid YAML"),
    ("basic_auth_user:\n  a: b\n", "unknown key"),
    ("basic_auth_users:\n  prom: secret\n", "not a bcrypt hash"),
    ("tls_server_config:\n  cert_file: nope.crt\n  key_file: nope.key\n", "no such file"),
])
def test_malformed_web_config_fails_at_start(tmp_path: Path, capsys, content: str,
                                             problem: str) -> None:
    cnf = tmp_path / "ok.cnf"
    cnf.write_text("[client]\nuser=x\n")
    f = tmp_path / "web.yml"
    f.write_text(content)
    assert exporter_main.main(["--config.my-cnf", str(cnf), "--web.config.file", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and problem in err




# -- the process: HTTP(S), auth, secrets, DB down and back ----------------------------
def make_cert(d: Path) -> tuple[Path, Path]:
    crt, key = d / "server.crt", d / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(crt)], check=True, capture_output=True)
    return crt, key


def fetch(url: str, ctx: ssl.SSLContext | None = None,
          auth: tuple[str, str] | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url)
    if auth:
        req.add_header("Authorization",
                       "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode())
    try:
        with urllib.request.urlopen(req, timeout=15, context=ctx) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def wait_port(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, "exporter exited"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError("exporter did not listen")


def parsed(body: str) -> dict[tuple, float]:
    """The served text, read back by prometheus_client's parser (checks the format too)."""
    return Samples.of_families(text_string_to_metric_families(body))


@pytest.mark.tools("openssl", "python")
def test_process_tls_auth_secrets_and_db_down(scratch_sql: Scratch, sql_cur,
                                              tmp_path: Path) -> None:
    crt, key = make_cert(tmp_path)
    web_pw = "scrape-" + os.urandom(6).hex()
    hashed = bcrypt.hashpw(web_pw.encode(), bcrypt.gensalt(rounds=4)).decode()
    web = tmp_path / "web.yml"
    web.write_text(f"tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                   f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    # the option file without the password: it comes from the environment
    db_pw = mycnf.load(scratch_sql.cnf).password
    assert db_pw
    cnf = tmp_path / "client.cnf"
    cnf.write_text(f"[client]\nuser={USER}\nhost=127.0.0.1\nport={scratch_sql.port}\n")
    cnf.chmod(0o600)
    port = scratch_sql.lab.port("exporter-test-http")
    log = tmp_path / "exporter.log"
    argv = [sys.executable, "-m", "ndbinfo_exporter", "--config.my-cnf", str(cnf),
            "--web.listen-address", f"127.0.0.1:{port}", "--web.config.file", str(web),
            "--state.file", str(tmp_path / "state.json"), "--log.level", "debug"]
    env = dict(os.environ, NDBINFO_EXPORTER_PASSWORD=db_pw)
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=out, env=env)
    try:
        wait_port(port, proc)
        ctx = ssl.create_default_context(cafile=str(crt))
        url = f"https://127.0.0.1:{port}/metrics"
        assert fetch(url, ctx)[0] == 401
        assert fetch(url, ctx, ("prometheus", "wrong"))[0] == 401
        code, body = fetch(url, ctx, ("prometheus", web_pw))
        ss = parsed(body)
        assert code == 200 and val(ss, "ndb_up") == 1
        assert val(ss, "ndb_thread_cpu_percent", mode="exec", node_id=1, thr_no=2,
                   thread_name="ldm") == 14
        assert val(ss, "ndb_transporter_sent_bytes_total", node_id=1, remote_node_id=2) > 0
        with pytest.raises(OSError):  # plain HTTP is not served
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5)
        # the database goes away: still serving, ndb_up 0; and back: reconnects
        scratch_sql.stop()
        code, body = fetch(url, ctx, ("prometheus", web_pw))
        ss = parsed(body)
        assert code == 200 and val(ss, "ndb_up") == 0
        assert val(ss, "ndb_exporter_collector_success", collector="nodes") == 0
        scratch_sql.start()
        code, body = fetch(url, ctx, ("prometheus", web_pw))
        assert code == 200 and val(parsed(body), "ndb_up") == 1
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode()
        assert db_pw not in cmdline and web_pw not in cmdline
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if not scratch_sql.lab.running("exporter-test-sql"):
            scratch_sql.start()  # the tests after this one need the server
    text = log.read_text()
    assert "cannot query the SQL node" in text  # the outage was logged ...
    assert db_pw not in text and web_pw not in text  # ... without secrets




def test_option_file_sections_read_as_mysqld_exporter_reads_them(tmp_path: Path) -> None:
    """[client.x] takes what it lacks from [client] (go-ini's child sections, which
    mysqld_exporter's auth_module relies on), and values go through Go's os.ExpandEnv."""
    f = tmp_path / "exporters.my.cnf"
    f.write_text("[client]\nuser = exp\npassword = a$$b\n[client.node2]\n"
                 "password = \"${PW}!\"\n[client.ndb]\nuser = ndbinfo_exporter\n")
    env = {"PW": "s3cret"}
    assert mycnf.load(f, env).password == "ab"                  # `$$`: a special name, empty
    node2 = mycnf.load(f, env, section="client.node2")
    assert (node2.user, node2.password) == ("exp", "s3cret!")  # user from [client]
    ndb = mycnf.load(f, env, section="client.ndb")
    assert (ndb.user, ndb.password) == ("ndbinfo_exporter", "ab")
    assert mycnf.load(f, env, section="client.ndb").at("10.0.0.5:3307").target() \
        == "10.0.0.5:3307"
    with pytest.raises(mycnf.ConfigError, match=r"no \[client\.x\] section"):
        mycnf.load(f, env, section="client.x")
    for text, out in (("$", "$"), ("a$%b", "a$%b"), ("${}x", "x"), ("${x", "x"),
                      ("$1a", "a"), ("${A}${B}", "12")):
        assert mycnf.expand_env(text, {"A": "1", "B": "2"}) == out, text
