"""The analysis commands off the lab: any VictoriaMetrics (single node or the cluster
version's vmselect/vminsert) by `--vm`/`--vm-write` or the environment, periods in
Grafana's and RFC 3339's forms, and errors that say how to point them somewhere."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from helpers import REPO

from clusterscope.analysis.baseline import sources
from clusterscope.analysis.periods import Period, PeriodError, argv_with_periods, parse_time

NOW = 1_750_000_000.0


@pytest.mark.parametrize(("text", "expected"), [
    ("now", NOW),
    ("now-2h", NOW - 7200),
    ("-2h", NOW - 7200),
    ("now-30m", NOW - 1800),
    ("now-1.5d", NOW - 1.5 * 86400),
    ("now-1w", NOW - 7 * 86400),
    ("1700000000", 1_700_000_000.0),
    ("2025-06-15T15:06:40Z", 1_750_000_000.0),
    ("2025-06-15t15:06:40z", 1_750_000_000.0),  # RFC 3339 5.6 allows lower case
    ("2025-06-15T17:06:40+02:00", 1_750_000_000.0),
    ("2025-06-15T15:06:40.250Z", 1_750_000_000.25),
    ("2025-06-15 15:06:40", 1_750_000_000.0),  # no zone: UTC
])
def test_times_in_every_accepted_form(text: str, expected: float) -> None:
    assert parse_time(text, NOW) == pytest.approx(expected)


def test_periods_and_their_errors() -> None:
    assert Period.parse("now-2h..now-1h", NOW) == Period(NOW - 7200, NOW - 3600)
    assert Period.parse("-2h..-1h", NOW) == Period(NOW - 7200, NOW - 3600)
    assert Period.parse("2025-06-15T14:06:40Z..now", NOW) == Period(NOW - 3600, NOW)
    with pytest.raises(PeriodError, match="ends before it starts"):
        Period.parse("now-1h..now-2h", NOW)
    with pytest.raises(PeriodError, match="now-2h"):
        Period.parse("yesterday..now", NOW)
    with pytest.raises(PeriodError, match="START..END"):
        Period.parse("now-1h", NOW)


def test_short_relative_periods_reach_argparse_as_values() -> None:
    assert argv_with_periods(["compare", "--before", "-2h..-1h", "--after", "-1h..now",
                              "--report", "-x", "--compare", "-3h..-2h", "-1h..now"]) == [
        "compare", "--before", "now-2h..now-1h", "--after", "now-1h..now", "--report", "-x",
        "--compare", "now-3h..now-2h", "now-1h..now"]


def cs(*args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in ("CLUSTERSCOPE_VM_URL", "CLUSTERSCOPE_VM_WRITE_URL")}
    return subprocess.run([sys.executable, "-m", "clusterscope.cli", *args], cwd=REPO,
                          env={**base, **(env or {})}, capture_output=True, text=True,
                          timeout=120, **kw)


@pytest.mark.tools("python")
def test_an_unreachable_vm_is_named_and_the_lab_is_not(tmp_path) -> None:
    # the README's form: `--before -2h..-1h` must not trip argparse
    for before in ("now-2h..now-1h", "-2h..-1h"):
        proc = cs("compare", "--vm", "http://127.0.0.1:9", "--before", before, "--after",
                  "now-1h..now", env={"CLUSTERSCOPE_LAB_DIR": str(tmp_path)})
        assert proc.returncode == 1, proc.stderr
        assert "http://127.0.0.1:9" in proc.stderr and "lab" not in proc.stderr, proc.stderr


@pytest.mark.tools("python")
def test_without_a_lab_or_vm_the_error_says_how_to_point_it(tmp_path) -> None:
    for args in (["compare", "--before", "-2h..-1h", "--after", "-1h..now"],
                 ["report", "--out", str(tmp_path / "r")],
                 ["baseline", "pin", "x", "--period", "-1h..now"],
                 ["dashboards", "verify"]):
        proc = cs(*args, env={"CLUSTERSCOPE_LAB_DIR": str(tmp_path / "no-lab")})
        assert proc.returncode != 0, args
        err = proc.stderr
        assert "--vm http://127.0.0.1:8428" in err and "CLUSTERSCOPE_VM_URL" in err, (args, err)
        assert "vmselect" in err and "Traceback" not in err, (args, err)
    assert not (tmp_path / "no-lab").exists()  # looking for a lab creates none


@pytest.mark.tools("python")
def test_the_environment_variable_points_every_command(scratch_vm, tmp_path) -> None:
    env = {"CLUSTERSCOPE_VM_URL": scratch_vm.url, "CLUSTERSCOPE_LAB_DIR": str(tmp_path / "x")}
    proc = cs("compare", "--before", "-2h..-1h", "--after", "-1h..now", env=env)
    assert proc.returncode == 0, proc.stderr
    report = cs("report", "--out", str(tmp_path / "r"), "--period", "now-10m..now", env=env)
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "r" / "index.html").read_text()
    assert f"read from VictoriaMetrics at {scratch_vm.url}" in page
    # an explicit URL wins over the environment's
    bad = cs("compare", "--vm", "http://127.0.0.1:9", "--before", "-2h..-1h", "--after",
             "-1h..now", env=env)
    assert bad.returncode == 1 and "http://127.0.0.1:9" in bad.stderr


# -- the cluster version: reads from vmselect, pins to vminsert ------------------------------
class ClusterStandIn:
    """A STAND-IN for the VictoriaMetrics cluster version's HTTP routing, for what cannot
    run here: its vminsert/vmselect are not served by the Go module proxy here
    (v1.151.0-cluster: 403 "not available"). Two ports in front of one real single-node
    VictoriaMetrics, each answering only its component's paths, as the cluster branch's
    app/vminsert/main.go and app/vmselect/main.go route them (a path outside the component's
    `insert`/`select` prefix is not served: 400 here):
      vminsert  /insert/<accountID>/prometheus/api/v1/import/prometheus
      vmselect  /select/<accountID>/prometheus/api/v1/{query,query_range,series,label/...}
    """

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.requests: list[tuple[str, str, str]] = []  # component, method, path
        self.servers = [self._serve("vminsert", "/insert/0/prometheus",
                                    ("/api/v1/import/prometheus",)),
                        self._serve("vmselect", "/select/0/prometheus",
                                    ("/api/v1/query", "/api/v1/series", "/api/v1/label/"))]
        self.insert_url, self.select_url = (
            f"http://127.0.0.1:{s.server_address[1]}{prefix}"
            for s, prefix in zip(self.servers, ("/insert/0/prometheus", "/select/0/prometheus"),
                                 strict=True))

    def _serve(self, component: str, prefix: str, allowed: tuple[str, ...]
               ) -> ThreadingHTTPServer:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _route(self) -> None:
                path = self.path.split("?", 1)[0]
                stand_in.requests.append((component, self.command, path))
                rest = path[len(prefix):] if path.startswith(prefix) else None
                if rest is None or not rest.startswith(allowed):
                    body = f"unsupported path requested: {path!r}".encode()
                    self.send_response(400)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                query = self.path[len(path):]
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else None
                req = urllib.request.Request(stand_in.backend + rest + query, data=data,
                                             method=self.command)
                if self.headers.get("Content-Type"):
                    req.add_header("Content-Type", self.headers["Content-Type"])
                try:
                    with urllib.request.urlopen(req, timeout=30) as resp:
                        status, body = resp.status, resp.read()
                except urllib.error.HTTPError as exc:
                    status, body = exc.code, exc.read()
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _route  # noqa: N815 - BaseHTTPRequestHandler's names

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    def close(self) -> None:
        for s in self.servers:
            s.shutdown()
            s.server_close()


@pytest.fixture()
def cluster(scratch_vm) -> Iterator[ClusterStandIn]:
    c = ClusterStandIn(scratch_vm.url)
    yield c
    c.close()


@pytest.mark.tools("python")
def test_pins_go_to_vminsert_and_are_read_back_through_vmselect(scratch_vm, cluster,
                                                                tmp_path) -> None:
    now = time.time()
    tag = f"c{int(now)}"
    # what the rules consider the baseline now, written where a scrape would land it
    mean = sources()["clusterscope_pinned_overhead_ratio"][0]  # over the alert's period
    scratch_vm.import_prometheus(
        f'{mean}{{experiment="{tag}",variant="fk2",'
        f'baseline="nofk",cluster="staging-galera",engine="galera"}} 0.12'
        f" {int((now - 20) * 1000)}\n")
    scratch_vm.flush()
    scratch_vm.wait_for(f'{mean}{{experiment="{tag}"}}', timeout=30)
    common = ["--baselines-dir", str(tmp_path), "--period", "now-5m..now"]
    # vmselect alone: pinning fails and says where writes go; the samples are kept
    only_select = cs("baseline", "pin", f"{tag}-a", "--vm", cluster.select_url, *common)
    assert only_select.returncode == 1
    assert "vminsert" in only_select.stderr and "/insert/0/prometheus" in only_select.stderr
    assert (tmp_path / f"{tag}-a.json").is_file()
    # with the write URL: written through vminsert, read back through vmselect
    pin = cs("baseline", "pin", f"{tag}-b", "--vm", cluster.select_url, "--vm-write",
             cluster.insert_url, *common)
    assert pin.returncode == 0, pin.stderr
    assert cluster.insert_url in pin.stdout
    writes = [(c, p) for c, m, p in cluster.requests if "import" in p]
    assert ("vminsert", "/insert/0/prometheus/api/v1/import/prometheus") in writes
    assert not [p for c, m, p in cluster.requests if "force_flush" in p]
    from clusterscope.clients.vm import VM
    through_select = VM(cluster.select_url)
    got = through_select.wait_for(
        f'last_over_time(clusterscope_pinned_overhead_ratio{{pin="{tag}-b",'
        f'experiment="{tag}"}}[400d])',
        timeout=30)
    assert [float(r["value"][1]) for r in got] == [0.12]
    # the environment's pair does the same
    env_pin = cs("baseline", "pin", f"{tag}-c", *common,
                 env={"CLUSTERSCOPE_VM_URL": cluster.select_url,
                      "CLUSTERSCOPE_VM_WRITE_URL": cluster.insert_url})
    assert env_pin.returncode == 0, env_pin.stderr
    # compare reads through vmselect, with the pin's samples
    compare = cs("compare", "--vm", cluster.select_url, "--before-baseline", f"{tag}-b",
                 "--after", "now-5m..now", "--baselines-dir", str(tmp_path))
    assert compare.returncode == 0, compare.stderr
    assert cluster.select_url in compare.stdout
    reads = {p for c, m, p in cluster.requests if c == "vmselect"}
    assert "/select/0/prometheus/api/v1/query_range" in reads
