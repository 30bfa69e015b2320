"""compose/'s images and the services that read what others write, checked without a
Docker engine: VictoriaLogs runs the lab's release with compose's flags, the collector image
is the lab's collector, the collector reads its configuration from the real inventory and
ships real cluster logs as the description says, and the Dockerfiles parse and pass the
lint."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest
from clusterscope_inventory.description import DescriptionError
from clusterscope_inventory.server import Inventory, make_server
from clusterscope_logs import collector
from helpers import eventually
from lanes import starts
from logship import endpoint, lines_of, start_collector, store_and_shipper
from test_compose import REPO, compose_models
from test_logs_formats import MARIADB_SST, NDB_MANUAL

from clusterscope import gotools
from clusterscope.deploy import dockerfile_lint
from clusterscope.lab.core import http_ok
from clusterscope.logs.vlogs_args import vlogs_args


@pytest.fixture(scope="module")
@starts("docker-compose")
def models(secrets_dir) -> dict[str, dict]:
    return compose_models(secrets_dir)


@pytest.mark.tools("victoria-logs")
def test_victorialogs_runs_the_labs_release_with_its_flags(models, tmp_path) -> None:
    """compose's VictoriaLogs is the release the lab builds, with the lab's flags
    (clusterscope.logs.vlogs_args) plus compose's retention and disk cap; the real binary of that
    release starts with them."""
    dockerfile = (REPO / "compose" / "victoria-logs" / "Dockerfile").read_text()
    assert f"FROM victoriametrics/victoria-logs:{gotools.VLOGS_VERSION}\n" in dockerfile
    command = models["default"]["services"]["victoria-logs"]["command"]
    assert command == [*vlogs_args("/vlogs-data", ":9428", "30d", 80)]
    port = int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300")) + 94
    args = [a.replace("/vlogs-data", str(tmp_path)).replace(":9428", f"127.0.0.1:{port}")
            for a in command]
    proc = subprocess.Popen([str(gotools.build(gotools.TOOLS["victoria-logs"])), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        eventually(lambda: http_ok(f"http://127.0.0.1:{port}/health"), 30,
                   "VictoriaLogs with compose's flags")
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.mark.tools("go")
def test_the_collector_image_is_the_labs_collector() -> None:
    """compose/otelcol/Dockerfile builds what gotools builds for the lab: the same go.mod, go.sum
    and Go files (the lab's binary name carries their digest), the same version stamp."""
    dockerfile = (REPO / "compose" / "otelcol" / "Dockerfile").read_text()
    assert "COPY compose/otelcol/go.mod compose/otelcol/go.sum ./" in dockerfile
    assert "COPY compose/otelcol/*.go ./" in dockerfile
    bare = gotools.OTELCOL_VERSION.removeprefix("v")
    assert f'-X main.Version={bare}"' in dockerfile
    assert gotools.TOOLS["otelcol"].ldflags.format(version_bare=bare) == f"-X main.Version={bare}"
    go_version = subprocess.run([gotools.go_binary(), "env", "GOVERSION"], capture_output=True,
                                text=True).stdout.strip().removeprefix("go")
    assert f"FROM golang:{go_version}-bookworm AS build" in dockerfile  # the lab's Go


@pytest.mark.tools("otelcol", "python", "victoria-logs")
def test_compose_ships_real_cluster_logs_as_the_description_says(models, tmp_path) -> None:
    """compose's log path without a Docker engine: the real inventory serves the collector's
    configuration for a description whose logs are under LOG_ROOT; the real collector reads
    it over HTTP (its `http` config provider, as compose's command says) and ships a real
    MariaDB error log and an NDB cluster log into a real VictoriaLogs."""
    command = models["default"]["services"]["otelcol"]["command"]
    assert command == ["--config=http://inventory:9110/config/otelcol.yaml"]
    env = models["default"]["services"]["otelcol"]["environment"]
    assert env["CLUSTERSCOPE_LOGS_ENDPOINT"] == (
        "http://victoria-logs:9428" + collector.VLOGS_OTLP_PATH)
    root = tmp_path / "srv-logs"
    (root / "galera").mkdir(parents=True)
    (root / "ndb").mkdir()
    (root / "galera/node2.err").write_text("\n".join(lines_of(MARIADB_SST)) + "\n")
    (root / "ndb/ndb_1_cluster.log").write_text("\n".join(lines_of(NDB_MANUAL)) + "\n")
    desc = tmp_path / "clusterscope.yml"
    desc.write_text(f"""clusters:
  - name: staging-galera
    kind: galera
    nodes:
      - {{name: node1, address: 'g1:3306'}}
      - {{name: node2, address: 'g2:3306', log: {root}/galera/node2.err}}
  - name: staging-ndb
    kind: ndb
    nodes:
      - {{name: sql1, address: 'n1:3306'}}
      - {{name: mgmd1, role: mgmd, log: {root}/ndb/ndb_1_cluster.log}}
""")
    with store_and_shipper(tmp_path) as (lab, vlogs):
        inv_port = lab.port("scratch-inventory")
        inventory = subprocess.Popen(
            [sys.executable, "-m", "clusterscope_inventory", f"--config.file={desc}",
             f"--web.listen-address=127.0.0.1:{inv_port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            eventually(lambda: http_ok(f"http://127.0.0.1:{inv_port}/-/ready"), 30,
                       "the inventory service")
            start_collector(lab, None, env={
                "CLUSTERSCOPE_LOGS_ENDPOINT": endpoint(lab),
                "OTELCOL_STORAGE_DIR": str(tmp_path / "otelcol-state"),
                "OTELCOL_HEALTH_ENDPOINT": f"127.0.0.1:{lab.port('scratch-otelcol-health')}",
                "OTELCOL_METRICS_HOST": "127.0.0.1",
                "OTELCOL_METRICS_PORT": str(lab.port("scratch-otelcol"))},
                config_uri=f"http://127.0.0.1:{inv_port}/config/otelcol.yaml")
            last = {lines_of(MARIADB_SST)[-1], lines_of(NDB_MANUAL)[-1]}
            eventually(lambda: last <= {e.line.split("\n")[0]
                                        for e in vlogs.entries("*", 0)}, 60,
                       "the last line of each log in VictoriaLogs")
            entries = vlogs.entries("*", 0)
        finally:
            inventory.terminate()
            inventory.wait(10)
    galera = [e for e in entries if e.labels.get("component") == "mariadb"]
    ndb = [e for e in entries if e.labels.get("component") == "ndb_mgmd"]
    assert galera and ndb and len(galera) + len(ndb) == len(entries)
    assert {(e.labels["cluster"], e.labels["node"]) for e in galera} == {
        ("staging-galera", "node2")}
    assert {e.labels["cluster"] for e in ndb} == {"staging-ndb"}
    assert {e.labels.get("node") for e in ndb} >= {"1", "5", "6"}  # from each line
    assert all(e.labels.get("level") for e in entries)  # every line parsed
    assert {e.labels["level"] for e in galera} >= {"info", "warning"}
    assert all("simulated" not in e.labels for e in entries)  # a real cluster's logs


def test_a_description_the_collector_could_not_load_is_refused_by_name(tmp_path) -> None:
    """A time zone Go cannot load would stop the collector at start: the description
    refuses it, naming the cluster (the inventory then keeps the last good description, or
    does not start), so /config/otelcol.yaml never serves it."""
    desc = tmp_path / "clusterscope.yml"
    desc.write_text("clusters:\n  - name: g1\n    kind: galera\n    log_timezone: CEST\n"
                    "    nodes: [{name: n1, address: 'h:3306', log: /srv/logs/n1.err}]\n")
    with pytest.raises(DescriptionError, match=r"\(g1\)\.log_timezone: expected an IANA"
                                               r" time zone name .* got 'CEST'"):
        Inventory(desc)
    good = desc.read_text().replace("CEST", "Europe/Berlin")
    desc.write_text(good)
    server = make_server(("127.0.0.1", 0), Inventory(desc))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/config/otelcol.yaml"
        with urllib.request.urlopen(url, timeout=10) as r:
            assert "Europe/Berlin" in r.read().decode()
    finally:
        server.shutdown()
        server.server_close()


# -- the Dockerfiles ----------------------------------------------------------------------
def test_dockerfiles_parse_and_pass_the_lint() -> None:
    for path in dockerfile_lint.DOCKERFILES:
        assert dockerfile_lint.lint(path) == [], path


@pytest.mark.parametrize("change,message", [
    (("python:3.11.13-slim-bookworm\n", "python:latest\n"), "not pinned"),
    (("USER 10001:10001\n", ""), "runs as root"),
    (("--no-install-recommends sysbench", "sysbench gcc"), "build tools"),
    (("HEALTHCHECK", "# HEALTHCHECK"), "no HEALTHCHECK"),
    (("ENV PATH=", "ENV DB_PASSWORD=x PATH="), "secrets"),
])
def test_dockerfile_lint_catches_what_it_promises(tmp_path, change, message) -> None:
    text = (REPO / "loadgen" / "Dockerfile").read_text()
    old, new = change
    assert old in text
    bad = tmp_path / "Dockerfile"
    bad.write_text(text.replace(old, new))
    assert any(message in p.message for p in dockerfile_lint.lint(bad)), message
