"""No secret in an error, a log line, an HTTP body or a rendered configuration.

A typo in an option file (`password Tr0ub4dor&3`: no `=`, so the whole line is an option
name) is what puts a password into an error most easily; Hypothesis writes such lines with
passwords of every kind and every program that reads the file (ndbinfo_exporter, served and
logged as it runs, the loadgen's command line, the real mysqld_exporter of the release
compose pins) is checked for it. The description's `alerting:` section: a URL or key pasted
where a file name belongs is refused or held back without being repeated or rendered."""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
from argparse import Namespace
from pathlib import Path

import pytest
import yaml
from clusterscope_inventory.alerting import ConfigWriter
from clusterscope_inventory.description import DescriptionError, load, parse
from clusterscope_loadgen import commandline as loadgen_cli
from helpers import eventually
from hypothesis import given
from hypothesis import strategies as st
from ndbinfo_exporter import mycnf
from ndbinfo_exporter.clusters import ClusterSet
from ndbinfo_exporter.collectors import ALL
from ndbinfo_exporter.http_server import make_server
from ndbinfo_exporter.main import cluster_scraper
from ndbinfo_exporter.web import webconfig

from clusterscope import gotools

# printable, no line break, no `[`/`]` (a section), no `#`/`;` (a comment), and a prefix so
# that a password cannot be a word any message uses anyway
PASSWORDS = st.text(st.characters(min_codepoint=33, max_codepoint=126,
                                  exclude_characters="[]#;"), min_size=6, max_size=40
                    ).map(lambda s: "Zq" + s)
TYPOS = st.sampled_from(["password {}", "password\t{}", "password:{}", "password  {}",
                         "{}", "pasword={}", "passwd {}", "password{}"])
DESCRIPTION = ("clusters:\n  - name: c\n    kind: ndb\n    loadgen: true\n    nodes:\n"
               "      - {name: sql1, address: '127.0.0.1:1'}\n")


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def _get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return f"{exc.code} {exc.read().decode(errors='replace')}"


def _exporter_output(desc: Path, cnf: Path) -> str:
    """Everything the exporter logs and serves for this option file: its start-up, a probe
    of the cluster and its own metrics."""
    lines = Lines()
    root = logging.getLogger()
    root.addHandler(lines)
    old = root.level
    root.setLevel(logging.DEBUG)
    out: list[str] = []
    try:
        args = Namespace(query_timeout=1.0, scrape_timeout=2.0, slow_interval=60.0,
                         state_dir=str(desc.parent))
        try:
            mycnf.read_sections(cnf)
            clusters = ClusterSet(desc, lambda c: cluster_scraper(c, str(cnf), args, ALL))
        except (mycnf.ConfigError, DescriptionError) as exc:
            return str(exc)  # what main() prints before it exits 2
        server = make_server(("127.0.0.1", 0), "/metrics", None, webconfig.load(None),
                             clusters)
        # shutdown() waits for serve_forever's next poll: 0.5 s by default, per example
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                         daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            out += [_get(f"{base}/probe?cluster=c"), _get(f"{base}/metrics")]
        finally:
            server.shutdown()
            server.server_close()
            clusters.close()
    finally:
        root.removeHandler(lines)
        root.setLevel(old)
    return "\n".join(out + lines.lines)


def _loadgen_output(desc: Path, cnf: Path) -> str:
    err, outs = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(outs):
        code = loadgen_cli.main(["run", "--experiment", "fk", "--target", str(cnf),
                                 "--description", str(desc), "--cluster", "c"])
    assert code == 2
    return err.getvalue() + outs.getvalue()


@given(password=PASSWORDS, typo=TYPOS)
def test_a_typo_d_password_line_is_never_repeated(password: str, typo: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        desc, cnf = Path(tmp) / "clusterscope.yml", Path(tmp) / "my.cnf"
        desc.write_text(DESCRIPTION)
        cnf.write_text(f"[client]\nuser=exporter\n{typo.format(password)}\nhost=127.0.0.1\n")
        cnf.chmod(0o600)
        exporter = _exporter_output(desc, cnf)
        assert "line(s) 3" in exporter  # the typo is found, by its line
        assert password not in exporter
        loadgen = _loadgen_output(desc, cnf)
        assert "line(s) 3" in loadgen and password not in loadgen


@pytest.mark.tools("mysqld_exporter")
def test_mysqld_exporter_does_not_repeat_it_either(tmp_path) -> None:
    """The same typo in the file mysqld_exporter reads (upstream; checked, not changed)."""
    password = "Zq-Tr0ub4dor&3"
    cnf = tmp_path / "exporters.my.cnf"
    cnf.write_text(f"[client]\nuser=exporter\npassword {password}\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(gotools.path_of("mysqld_exporter")), f"--config.my-cnf={cnf}",
                             f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        body = eventually(lambda: _get(f"http://127.0.0.1:{port}/probe?target=127.0.0.1:1"
                                       "&auth_module=client"), 30, "a probe")
    finally:
        proc.terminate()
        log = proc.communicate(timeout=20)[0]
    assert "mysql_up 0" in body and password not in body + log


# -- the description's alerting: section --------------------------------------------------
ROUTING_KEY = "R0ut1ngK3y0123456789abcdefABCDEF"
HOOK = "https://hooks.slack.example/services/T0/B0/XyZsecret"


def _desc(alerting: dict) -> dict:
    return {"clusters": [{"name": "g", "kind": "galera",
                          "nodes": [{"name": "n1", "address": "h:3306"}]}],
            "alerting": alerting}


def test_a_url_where_a_file_name_belongs_is_refused_without_repeating_it() -> None:
    alerting = {"critical": "x", "warning": "x",
                "receivers": {"x": {"slack": {"api_url_file": HOOK}}}}
    try:
        parse(_desc(alerting))
    except DescriptionError as exc:
        text = str(exc)
    else:
        raise AssertionError("a URL was taken for a file name")
    assert "alerting.receivers.x.slack.api_url_file" in text and "looks like a URL" in text
    assert "hooks.slack" not in text and "XyZ" not in text


def test_a_pasted_key_is_never_rendered_and_the_last_good_configuration_stays(
        tmp_path, caplog) -> None:
    """`routing_key_file: <the key itself>` passes as a file name, but no such file is in
    the secrets directory: the section is held back (no path with the key in the rendered
    file, which Alertmanager serves on its /api/v2/status), the log names the key only."""
    secrets = tmp_path / "alerting"
    secrets.mkdir()
    (secrets / "pd_key").write_text(ROUTING_KEY + "\n")
    out = tmp_path / "alertmanager.yml"
    writer = ConfigWriter(out, secrets)
    good = {"critical": "x", "warning": "x",
            "receivers": {"x": {"pagerduty": {"routing_key_file": "pd_key"}}}}
    desc = tmp_path / "clusterscope.yml"
    desc.write_text(yaml.safe_dump(_desc(good)))
    assert writer.update(load(desc).alerting) and writer.ok
    before = out.read_text()
    pasted = {**good, "receivers": {"x": {"pagerduty": {"routing_key_file": ROUTING_KEY}}}}
    desc.write_text(yaml.safe_dump(_desc(pasted)))
    with caplog.at_level(logging.DEBUG):
        assert not writer.update(load(desc).alerting)
    assert not writer.ok and out.read_text() == before
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "alerting.receivers.x.pagerduty.routing_key_file" in logged
    assert ROUTING_KEY not in logged + out.read_text()
    # a first start with the pasted key: a configuration without receivers, not the key
    fresh = ConfigWriter(tmp_path / "fresh.yml", secrets)
    fresh.update(load(desc).alerting)
    assert ROUTING_KEY not in (tmp_path / "fresh.yml").read_text() and not fresh.ok
