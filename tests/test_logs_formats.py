"""The shipper's parsing stages on real log lines: the generated promtail pipeline, run by
the real promtail (`-stdin -dry-run`), and the same regexes in Python; the LogQL event
patterns on the same lines. No lab needed."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from helpers import SHARED, eventually

from clusterscope import gotools
from clusterscope.lab import logs
from clusterscope.lab.core import Service
from clusterscope.logs import formats as lf
from clusterscope.logs import logql, pipeline

HERE = Path(__file__).parent / "fixtures"
MARIADB_IST = HERE / "galera" / "restart-node3-ist-recover1-down20.log"
MARIADB_SST = HERE / "galera" / "restart-node3-sst-wipe-recover0.log"
PXC80_IST = HERE / "galera" / "pxc80-node3-ist.log"
PXC80_JSON = HERE / "galera" / "pxc80-operator-split-node2-sst.json.log"
NDB_MANUAL = HERE / "logs" / "ndb-cluster-log-manual.log"

# A PXC 5.7 error log (log_timestamps=UTC), lines as PXC 5.7.x writes them around an IST.
PXC57 = [
    "2019-05-15T10:31:20.123456Z 0 [Note] WSREP: Shifting PRIMARY -> JOINER (TO: 1234)",
    "2019-05-15T10:31:22.004000Z 0 [Warning] WSREP: Gap in state sequence. Need state transfer.",
    "2019-05-15T10:31:25.500000Z 2 [ERROR] WSREP: Failed to prepare for incremental state"
    " transfer: Local state UUID (00000000-0000-0000-0000-000000000000) does not match group"
    " state UUID",
    "2019-05-15T10:31:40.750000+02:00 0 [Note] WSREP: Shifting JOINED -> SYNCED (TO: 1300)",
]


def lines_of(path: Path) -> list[str]:
    return [ln for ln in path.read_text().splitlines() if ln and not ln.startswith("#")]


def test_fixtures_are_the_shared_real_logs():
    """The repo's copies stay the recorded ones (skipped where the originals are absent)."""
    shared = SHARED / "fixtures" / "galera"
    if not shared.is_dir():
        pytest.skip(f"the shared originals ({shared}) are not on this machine")
    originals = sorted(p.name for p in shared.glob("*.log"))
    assert originals
    for name in originals:
        assert (shared / name).read_text() == (HERE / "galera" / name).read_text(), name


# -- the regexes in Python -----------------------------------------------------------------
def parse_any(component: str, line: str) -> tuple[str, dict] | None:
    for fmt in lf.COMPONENT_FORMATS[component]:
        fields = lf.parse_line(fmt, line)
        if fields is not None:
            return fmt, fields
    return None


@pytest.mark.parametrize("path", [MARIADB_IST, MARIADB_SST, PXC80_IST])
def test_every_entry_of_a_real_galera_log_parses(path):
    for line in lines_of(path):
        if line[0].isspace():  # a continuation line of the entry above (multiline stage)
            continue
        parsed = parse_any(lf.MARIADB, line)
        assert parsed is not None, line
        fmt, fields = parsed
        assert fields["level"] in ("info", "warning", "error", "critical"), line
        assert fields["message"], line


def test_mariadb_fields_and_levels():
    fmt, f = parse_any(lf.MARIADB, "2026-11-22  3:59:38 0 [Note] WSREP: Shifting PRIMARY ->"
                                   " JOINER (TO: 265192)")
    assert (fmt, f["date"], f["time"], f["level"]) == ("mariadb", "2026-11-22", "3:59:38", "info")
    fmt, f = parse_any(lf.MARIADB, "2023-03-12T12:48:43.293802Z 0 [System] [MY-010116] [Server]"
                                   " /usr/sbin/mysqld (mysqld 8.0.28-19.1) starting")
    assert (fmt, f["subsystem"], f["level"]) == ("mysql-iso", "Server", "info")
    fmt, f = parse_any(lf.MARIADB, PXC57[2])
    assert (fmt, f["level"], f.get("subsystem")) == ("mysql-iso", "error", None)
    fmt, f = parse_any(lf.MARIADB, "WSREP_SST: [INFO] rsync SST started on joiner"
                                   " (20261122 03:59:37.889)")
    assert (fmt, f["sst_date"], f["sst_time"]) == ("wsrep-sst", "20261122", "03:59:37.889")


def test_ndb_cluster_log_fields():
    seen_nodes = set()
    for line in lines_of(NDB_MANUAL):
        fmt, f = parse_any(lf.NDB_MGMD, line)
        assert fmt == "ndb-cluster-log" and f["source"] == "MgmtSrvr", line
        seen_nodes.add(f.get("ndb_node"))
    assert {"1", "5", "6", None} <= seen_nodes  # `Alloc node id ...` names no node
    _, f = parse_any(lf.NDB_MGMD, lines_of(NDB_MANUAL)[-1])
    assert f["level"] == "critical" and f["severity"] == "ALERT"


# -- the real promtail ---------------------------------------------------------------------
_ENTRY = re.compile(r"^(\d{4}-\d{2}-\d{2}T[^{\s]+)\s*(\{[^}]*\})\t?(.*)$")


def inner_lines(lines: list[str]) -> list[str]:
    """The error-log lines inside JSON (`log` field) or CRI wrappers (partial `P` pieces
    joined), read independently of the pipeline under test."""
    out, partial = [], ""
    for line in lines:
        m = re.match(r"^\S+ (?:stdout|stderr) ([FP]) (.*)$", line)
        if m:
            partial += m.group(2)
            if m.group(1) == "F":
                out.append(partial)
                partial = ""
        elif line.startswith("{"):
            # one object may carry several lines (the collector joins what it read at once)
            out.extend(json.loads(line)["log"].rstrip("\n").split("\n"))
        else:
            out.append(line)
    return out


def promtail_dry_run(tmp_path: Path, inputs: dict[str, tuple[str, list[str], dict]]
                     ) -> dict[str, list[tuple[datetime, dict, str]]]:
    """Run the lab's generated pipeline through the real promtail tailing files, as in the
    lab (`-dry-run` prints the entries instead of pushing them). inputs: name ->
    (component, lines, extra labels); returns name -> entries. One run for all inputs:
    promtail takes ~5 s to find its first targets."""
    statics, last_lines = [], set()
    for name, (component, lines, extra) in inputs.items():
        log = tmp_path / f"{name}.log"
        log.write_text("\n".join(lines) + "\n")
        statics.append({"targets": ["localhost"], "labels": {
            "__path__": str(log), "cluster": "c", "component": component, "input": name,
            **extra}})
        last_lines.add(next(ln for ln in reversed(inner_lines(lines)) if not ln[0].isspace()))
    cfg = {"server": {"disable": True}, "target_config": {"sync_period": "200ms"},
           "positions": {"filename": str(tmp_path / "positions.yaml")},
           "clients": [{"url": "http://127.0.0.1:9/loki/api/v1/push"}],
           "scrape_configs": [{"job_name": "t", "static_configs": statics,
                               "pipeline_stages": pipeline.pipeline_stages("Etc/UTC")}]}
    config = tmp_path / "promtail.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False, width=1000))
    out = tmp_path / "promtail.out"
    with open(out, "w") as sink, open(tmp_path / "promtail.err", "w") as errors:
        # its own log goes elsewhere: interleaved, it could split an entry's line
        proc = subprocess.Popen([str(gotools.path_of("promtail")), f"-config.file={config}",
                                 "-dry-run"], stdout=sink, stderr=errors)
    try:
        # every file was read to its end once its last line is an entry
        eventually(lambda: proc.poll() is not None or last_lines <= {
            t.split("\n")[0] for _, _, t in _dry_run_entries(out.read_text())}, 30,
                   "promtail's entry for the last line of every input")
        assert proc.poll() is None, (tmp_path / "promtail.err").read_text()[-2000:]
    finally:
        proc.terminate()
        proc.wait(10)
    found: dict[str, list] = {name: [] for name in inputs}
    for ts, labels, text in _dry_run_entries(out.read_text()):
        found[labels.pop("input")].append((ts, labels, text))
    return found


EXPORTER_LINES = [
    "2026-11-22 09:00:00,123 WARNING ndbinfo_exporter.scrape: collector lcp: timeout",
    'time=2026-11-22T09:00:01.000Z level=ERROR source=exporter.go:1 msg="Error pinging'
    ' mysqld"',
    "level=info ts=2026-11-22T09:00:02Z caller=main.go:1 msg=Listening",
]


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> dict[str, list[tuple[datetime, dict, str]]]:
    return promtail_dry_run(tmp_path_factory.mktemp("promtail"), {
        "mariadb": (lf.MARIADB, lines_of(MARIADB_IST), {"node": "node3"}),
        "pxc": (lf.MARIADB, lines_of(PXC80_IST) + PXC57, {}),
        "ndb": (lf.NDB_MGMD, lines_of(NDB_MANUAL), {}),
        "exporter": ("mysqld-exporter", EXPORTER_LINES, {}),
        "json": (lf.MARIADB, lines_of(PXC80_JSON), {"node": "node2"}),
        "cri": (lf.MARIADB, [p for line in lines_of(PXC80_IST) for p in cri(line)],
                {"node": "node3"}),
    })


def cri(line: str) -> list[str]:
    """A line as the kubelet writes it to a pod log (CRI format), split into a partial and
    a final piece when long: the pipeline must join them."""
    stamp = "2026-11-24T10:00:00.000000001Z"
    if len(line) > 80:
        return [f"{stamp} stderr P {line[:60]}", f"{stamp} stderr F {line[60:]}"]
    return [f"{stamp} stderr F {line}"]


def _dry_run_entries(text: str) -> list[tuple[datetime, dict, str]]:
    entries: list[tuple[datetime, dict, str]] = []
    for raw in text.splitlines():
        m = _ENTRY.match(raw)
        if m:
            # promtail prints nanoseconds; Python keeps microseconds
            stamp = re.sub(r"(\.\d{6})\d+", r"\1", m.group(1))
            ts = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f%z" if "." in stamp
                                   else "%Y-%m-%dT%H:%M:%S%z")
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            entries.append((ts, labels, m.group(3)))
        elif entries and raw.startswith("\t"):
            ts, labels, text_ = entries[-1]
            entries[-1] = (ts, labels, text_ + "\n" + raw)  # a multiline entry goes on
    return entries


def _entry_time(ts: datetime, line: str) -> datetime:
    """The entry's time at the precision of the line: whole-second formats get a sub-second
    part that keeps their order (formats.ORDERED_SECOND), always below one second."""
    if re.match(r"\d{4}-\d{2}-\d{2}\s+\d{1,2}:\d{2}:\d{2} ", line):
        return ts.replace(microsecond=0)
    return ts


def _line_time(line: str) -> datetime:
    m = re.match(r"(\d{4}-\d{2}-\d{2})\s+(\d{1,2}):(\d{2}):(\d{2})", line)
    if m:
        return datetime.strptime(f"{m.group(1)} {int(m.group(2)):02d}:{m.group(3)}:{m.group(4)}",
                                 "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    m = re.search(r"\((\d{8}) (\d{2}:\d{2}:\d{2}\.\d{3})\)$", line)
    if m:
        return datetime.strptime(f"{m.group(1)} {m.group(2)}", "%Y%m%d %H:%M:%S.%f"
                                 ).replace(tzinfo=UTC)
    return datetime.fromisoformat(line.split()[0].replace("Z", "+00:00"))


def test_promtail_takes_time_and_level_from_mariadb_lines(shipped):
    lines = lines_of(MARIADB_IST)
    entries = shipped["mariadb"]
    assert [e[2] for e in entries if e[2] in lines] and len(entries) == len(lines)
    by_line = {text: (ts, labels) for ts, labels, text in entries}
    for line in lines:
        ts, labels = by_line[line]
        assert _entry_time(ts, line) == _line_time(line), line  # the log's time
        assert labels["level"] == "info" and labels["node"] == "node3", line


def test_promtail_on_pxc_lines_and_multiline_entries(shipped):
    lines = lines_of(PXC80_IST) + PXC57
    entries = shipped["pxc"]
    # PXC 8.0's "State transfer required:" carries two tab-indented lines: one entry
    block = [t for _, _, t in entries if "State transfer required" in t]
    assert len(block) == 1 and "\tGroup state:" in block[0] and "\tLocal state:" in block[0]
    assert len(entries) == len([ln for ln in lines if not ln[0].isspace()])
    for ts, _labels, text in entries:
        first = text.splitlines()[0]
        assert _entry_time(ts, first) == _line_time(first), first
    levels = {text: labels.get("level") for _, labels, text in entries}
    assert levels[PXC57[1]] == "warning" and levels[PXC57[2]] == "error"
    assert levels[lines_of(PXC80_IST)[0]] == "info"  # [System]


def test_promtail_on_ndb_cluster_log(shipped):
    lines = lines_of(NDB_MANUAL)
    entries = shipped["ndb"]
    assert len(entries) == len(lines)
    for ts, labels, text in entries:
        assert _entry_time(ts, text) == _line_time(text), text
        m = re.search(r"-- Node (\d+): ", text)
        assert labels.get("node") == (m.group(1) if m else None), text
    alert = next(lb for _, lb, t in entries if "has been aborted" in t)
    assert alert["level"] == "critical"


def test_promtail_on_exporter_logs(shipped):
    entries = shipped["exporter"]
    assert [lb.get("level") for _, lb, _ in entries] == ["warning", "error", "info"]


# -- LogQL event patterns on real lines -------------------------------------------------
def test_event_patterns_find_a_real_ist_recovery():
    kinds = [(logql.classify(ln, "mariadb"), ln) for ln in lines_of(MARIADB_IST)]
    shifts = [re.search(r"Shifting (\S+ -> \S+)", ln).group(1)
              for k, ln in kinds if k == "galera_state_change"]
    assert shifts == ["CLOSED -> OPEN", "OPEN -> PRIMARY", "PRIMARY -> JOINER",
                      "JOINER -> JOINED", "JOINED -> SYNCED"]
    found = {k for k, _ in kinds}
    assert {"galera_ist_received", "galera_transfer_completed",
            "galera_transfer_requested"} <= found
    # the recovery query's line filter is the same alternation
    pattern = re.search(r'\|~ "((?:[^"\\]|\\.)*)"', logql.QUERIES["galera_recovery_events"])
    alternation = pattern.group(1).encode().decode("unicode_escape")
    assert sum(bool(re.search(alternation, ln)) for ln in lines_of(MARIADB_IST)) == \
        sum(k is not None for k, _ in kinds)


def test_event_patterns_on_ndb_wording():
    kinds = {ln.split("-- ", 1)[1]: logql.classify(ln, "ndb_mgmd") for ln in lines_of(NDB_MANUAL)}
    assert kinds["Node 5: Start phase 5 completed (system restart)"] == "ndb_start_phase"
    assert kinds["Node 5: Started (mysql-9.5.0 ndb-9.5.0)"] == "ndb_started"
    assert kinds["Node 5: Started arbitrator node 50 [ticket=75fd00010fa8b608]"] is None
    assert kinds["Node 5: Node 100 Connected"] is None
    # 7.6 wording
    assert logql.classify("Node 2: Started (version 7.6.34)", "ndb_mgmd") == "ndb_started"
    assert logql.classify("Node 1: Node 2 Disconnected", "ndb_mgmd") == "ndb_disconnected"


def test_render_fills_grafana_variables():
    q = logql.render(logql.QUERIES["errors_by_node"], cluster="lab-galera", range_="10m")
    assert "$" not in q and '{cluster=~"lab-galera"' in q and "[10m]" in q
    for a in logql.annotations("loki-uid"):
        assert a["datasource"] == {"type": "loki", "uid": "loki-uid"} and a["expr"]


# -- promtail targets from the lab's services ---------------------------------------------
def test_targets_label_every_log():
    services = [
        Service("galera-node2", "galera", "node", "127.0.0.1", 1, 1, "/l/galera/node2/error.log",
                extra={"error_log": "/l/galera/node2/error.log", "node": "node2"}),
        Service("mysqld-exporter-node2", "galera", "exp", "127.0.0.1", 2, 2,
                "/l/logs/mysqld-exporter-node2.log",
                extra={"node": "node2", "scrape": {"labels": {"cluster": "lab-galera",
                                                              "node": "node2"}}}),
        Service("ndb-model", "ndb", "sim", "127.0.0.1", None, 3, "/l/logs/ndb-model.log",
                simulated=True, extra={"cluster_log": "/l/ndb/ndb_1_cluster.log"}),
        Service("victoria-metrics", "monitoring", "vm", "127.0.0.1", 4, 4,
                "/l/logs/victoria-metrics.log"),
    ]
    got = {t["labels"]["__path__"]: t["labels"] for t in logs.targets(services)}
    assert len(got) == 5  # the node's log and error log are one file
    node = got["/l/galera/node2/error.log"]
    assert (node["cluster"], node["node"], node["component"]) == ("lab-galera", "node2",
                                                                  "mariadb")
    exp = got["/l/logs/mysqld-exporter-node2.log"]
    assert (exp["cluster"], exp["node"], exp["component"]) == ("lab-galera", "node2",
                                                               "mysqld-exporter")
    clog = got["/l/ndb/ndb_1_cluster.log"]
    assert (clog["cluster"], clog["component"], clog["simulated"]) == ("lab-ndb", "ndb_mgmd",
                                                                       "true")
    assert "node" not in clog  # it comes from each line
    assert got["/l/logs/ndb-model.log"]["simulated"] == "true"
    assert got["/l/logs/victoria-metrics.log"]["cluster"] == "lab"


@pytest.mark.parametrize(("name", "source"), [("json", PXC80_JSON), ("cri", PXC80_IST)])
def test_wrapped_lines_reach_loki_as_the_inner_line(shipped, name: str, source: Path):
    """Kubernetes-shipped lines (the Percona Operator's JSON, the kubelet's CRI with a
    partial piece) arrive as the error-log line itself, with its own time and level."""
    expected = inner_lines(lines_of(source))
    entries = shipped[name]
    # every inner line with its own time is an entry, in order (a line without one, such as
    # the SST script's "---- Starting the MySQL server ..." banner, joins the entry before)
    assert [t.split("\n")[0] for _, _, t in entries] == [
        ln for ln in expected if re.match(r"\d{4}-\d{2}-\d{2}", ln)]
    for ts, labels, text in entries:
        first = text.splitlines()[0]
        assert _entry_time(ts, first) == _line_time(first), first
        assert labels["level"] in ("info", "warning", "error"), (labels, first)
        assert labels["component"] == "mariadb"
