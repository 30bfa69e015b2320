"""galera_tracker on real error logs (tests/fixtures/galera, recorded in the lab, and the PXC
logs in shared/fixtures/galera): parsing, following, restarts.

Fast, no lab: the fixtures are real MariaDB 10.11 / PXC 8.0 logs recorded on clusters.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from galera_tracker.log_lines import parse_timestamp
from galera_tracker.main import parse_args
from galera_tracker.parser import Aborted, NodeParser, Recovery
from galera_tracker.tracker import Tracker
from galera_tracker.tracker_metrics import TrackerCollector
from galera_tracker.wrapped import Unwrapper, unwrap
from helpers import SHARED_FIXTURES, shared_fixture
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry

# lines recorded in this project's lab; the PXC logs (from percona/percona-toolkit) are read
# in shared/fixtures/galera
FIX = Path(__file__).parent / "fixtures" / "galera"
SHARED_GALERA = SHARED_FIXTURES / "galera"

# Expected values read by hand from each log's "Shifting PRIMARY -> JOINER" and
# "Shifting JOINED -> SYNCED" lines, its SST script lines and its donor selection.
CASES = {
    "restart-node3-ist-recover1-down20.log": ("ist", "ist", "node1", 5.0),
    "restart-node3-kill9-no-recover-fullSST.log": ("sst", "rsync", "node1", 5.0),
    "restart-node3-sst-grastate-recover0.log": ("sst", "rsync", "node1", 6.0),
    "restart-node3-sst-wipe-recover0.log": ("sst", "mariabackup", "node1", 18.0),
}


def recoveries(lines: list[str], node: str = "node3") -> list[Recovery]:
    p = NodeParser(node=node)
    return [e for line in lines for e in p.feed(line) if isinstance(e, Recovery)]


def lines_of(name: str) -> list[str]:
    path = FIX / name if (FIX / name).exists() else shared_fixture("galera", name)
    return path.read_text().splitlines()


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_real_log_gives_one_recovery_with_kind_method_donor_duration(name: str) -> None:
    kind, method, donor, duration = CASES[name]
    found = recoveries(lines_of(name))
    assert len(found) == 1, found
    r = found[0]
    assert (r.kind, r.method, r.donor) == (kind, method, donor)
    assert r.duration == pytest.approx(duration, abs=0.01)


def test_sst_followed_by_ist_catch_up_is_one_sst() -> None:
    # The SST logs also contain "Receiving IST ..." (the catch-up): still one SST.
    lines = lines_of("restart-node3-sst-wipe-recover0.log")
    assert any("Receiving IST" in line for line in lines)
    assert [r.kind for r in recoveries(lines)] == ["sst"]


def test_consecutive_recoveries_in_one_log_are_counted_separately() -> None:
    lines = (lines_of("restart-node3-sst-grastate-recover0.log")
             + lines_of("restart-node3-ist-recover1-down20.log"))
    assert [(r.kind, r.method) for r in recoveries(lines)] == [("sst", "rsync"), ("ist", "ist")]


def test_garbage_and_cut_lines_do_not_change_the_result() -> None:
    lines = lines_of("restart-node3-sst-wipe-recover0.log")
    noisy: list[str] = []
    for i, line in enumerate(lines):
        noisy.append(line)
        if i % 7 == 3:
            noisy += ["\x00\xff garbage \ufffd", line[: len(line) // 2], "", "WSREP: Shifting",
                      "2026-13-45 99:99:99 0 [Note] WSREP: Shifting PRIMARY ->"]
    found = recoveries(noisy)
    assert [(r.kind, r.method, r.donor) for r in found] == [("sst", "mariabackup", "node1")]
    assert found[0].duration == pytest.approx(18.0, abs=0.01)


def test_starting_in_the_middle_of_a_recovery_counts_nothing() -> None:
    lines = lines_of("restart-node3-ist-recover1-down20.log")
    cut = next(i for i, line in enumerate(lines) if "PRIMARY -> JOINER" in line)
    assert recoveries(lines[cut + 1:]) == []


def test_restart_during_recovery_aborts_it() -> None:
    lines = lines_of("restart-node3-sst-grastate-recover0.log")
    cut = next(i for i, line in enumerate(lines) if "rsync SST completed" in line)
    p = NodeParser(node="node3")
    events = [e for line in lines[:cut] + lines for e in p.feed(line)]
    assert len([e for e in events if isinstance(e, Aborted)]) == 1
    assert len([e for e in events if isinstance(e, Recovery)]) == 1


def test_pxc80_ist_in_progress_with_donor_and_evidence() -> None:
    p = NodeParser(node="node3")
    events = [e for line in lines_of("pxc80-node3-ist.log") for e in p.feed(line)]
    assert not [e for e in events if isinstance(e, Recovery)]  # excerpt ends before SYNCED
    assert p.window is not None and p.window.ist and not p.window.sst
    assert p.window.donor == "node2"
    assert p.window.method == "xtrabackup-v2"
    assert p.window.start == pytest.approx(parse_timestamp(
        "2023-03-12T12:48:44.599377Z 0 [Note] x"))


def test_timestamp_formats() -> None:
    iso = parse_timestamp("2023-03-12T12:48:44.5Z 0 [Note] WSREP: x")
    assert iso == pytest.approx(1678625324.5)
    maria = parse_timestamp("2026-11-22  3:59:35 0 [Note] x")
    sst = parse_timestamp("WSREP_SST: [INFO] rsync SST started on joiner (20261122 03:59:37.889)")
    assert sst - maria == pytest.approx(2.889)
    old = parse_timestamp("261122  3:59:35 [Note] WSREP: x")
    assert old == maria
    assert parse_timestamp("recovered pages: 0% 13% 34%") is None


# -- following files ---------------------------------------------------------------------
def metrics(tracker: Tracker) -> dict[tuple, float]:
    reg = CollectorRegistry()
    reg.register(TrackerCollector(tracker))
    out = {}
    for fam in text_string_to_metric_families(generate_latest(reg).decode()):
        for s in fam.samples:
            # an empty label is no label (Prometheus): `cluster` when none was given
            out[(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if v)))] = s.value
    return out


def total(m: dict, node: str, kind: str, method: str) -> float:
    key = ("galera_recoveries_total", (("kind", kind), ("method", method), ("node", node)))
    return m.get(key, 0.0)


def test_partial_last_line_waits_for_its_end(tmp_path: Path) -> None:
    log = tmp_path / "error.log"
    text = (FIX / "restart-node3-ist-recover1-down20.log").read_text()
    last = text.rstrip("\n").rsplit("\n", 1)[1]
    sync_at = text.index("Shifting JOINED -> SYNCED")
    log.write_text(text[: sync_at + 10])  # cut inside the line that ends the recovery
    t = Tracker({"node3": str(log)})
    t.poll()
    assert total(metrics(t), "node3", "ist", "ist") == 0
    assert metrics(t)[("galera_recovery_in_progress", (("node", "node3"),))] == 1
    with log.open("a") as f:
        f.write(text[sync_at + 10:])
    t.poll()
    m = metrics(t)
    assert total(m, "node3", "ist", "ist") == 1
    assert m[("galera_recovery_in_progress", (("node", "node3"),))] == 0
    assert last.endswith("ready for connections")


def days_later(text: str, days: int) -> str:
    """A recorded log as if it had been written `days` days later (the fixtures were all
    recorded on 2026-11-22): what a log holds after a rotation is newer than before it."""
    day = f"2026-11-{22 + days:02d}"
    return text.replace("2026-11-22", day).replace("20261122", day.replace("-", ""))


def test_rotation_truncation_and_missing_file(tmp_path: Path) -> None:
    log = tmp_path / "error.log"
    t = Tracker({"node3": str(log)})
    t.poll()  # no file yet: not an error
    assert metrics(t)[("galera_tracker_log_up", (("node", "node3"),))] == 0
    log.write_text((FIX / "restart-node3-sst-grastate-recover0.log").read_text())
    t.poll()
    assert total(metrics(t), "node3", "sst", "rsync") == 1
    # Rotation: the file is renamed away and a new one starts.
    log.rename(tmp_path / "error.log.1")
    log.write_text(days_later((FIX / "restart-node3-ist-recover1-down20.log").read_text(), 1))
    t.poll()
    assert total(metrics(t), "node3", "ist", "ist") == 1
    # Truncation in place, then new content.
    with log.open("w") as f:
        f.write(days_later((FIX / "restart-node3-sst-wipe-recover0.log").read_text(), 2))
    t.poll()
    m = metrics(t)
    assert total(m, "node3", "sst", "mariabackup") == 1
    assert total(m, "node3", "sst", "rsync") == 1 and total(m, "node3", "ist", "ist") == 1
    assert m[("galera_tracker_log_reopens_total", (("node", "node3"),))] == 2
    assert m[("galera_tracker_log_up", (("node", "node3"),))] == 1


def test_restart_of_the_tracker_never_counts_twice(tmp_path: Path) -> None:
    log = tmp_path / "error.log"
    state = tmp_path / "state.json"
    log.write_text((FIX / "restart-node3-ist-recover1-down20.log").read_text())
    t1 = Tracker({"node3": str(log)}, str(state))
    t1.poll()
    assert total(metrics(t1), "node3", "ist", "ist") == 1
    t2 = Tracker({"node3": str(log)}, str(state))
    t2.poll()
    assert total(metrics(t2), "node3", "ist", "ist") == 1
    with log.open("a") as f:
        f.write((FIX / "restart-node3-kill9-no-recover-fullSST.log").read_text())
    t2.poll()
    m = metrics(t2)
    assert total(m, "node3", "ist", "ist") == 1
    assert total(m, "node3", "sst", "rsync") == 1
    last = [(k, v) for k, v in m.items() if k[0] == "galera_recovery_last_duration_seconds"]
    assert last == [(("galera_recovery_last_duration_seconds",
                      (("donor", "node1"), ("kind", "sst"), ("method", "rsync"),
                       ("node", "node3"))), 5.0)]


def test_histogram_and_transitions(tmp_path: Path) -> None:
    log = tmp_path / "error.log"
    log.write_text((FIX / "restart-node3-sst-wipe-recover0.log").read_text())
    t = Tracker({"node3": str(log)})
    t.poll()
    m = metrics(t)
    labels = (("kind", "sst"), ("method", "mariabackup"), ("node", "node3"))
    assert m[("galera_recovery_duration_seconds_count", labels)] == 1
    assert m[("galera_recovery_duration_seconds_bucket", (*labels[:1], ("le", "10.0"),
                                                           *labels[1:]))] == 0
    assert m[("galera_recovery_duration_seconds_bucket", (*labels[:1], ("le", "20.0"),
                                                           *labels[1:]))] == 1
    assert m[("galera_state_transitions_total",
              (("from", "PRIMARY"), ("node", "node3"), ("to", "JOINER")))] == 1
    assert m[("galera_state", (("node", "node3"), ("state", "SYNCED")))] == 1
    assert os.path.exists(log)


# -- command line ------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["--web.listen-address", "0.0.0.0:9199", "--state.file", "/s.json"],
    ["--web.listen-address=0.0.0.0:9199", "--state.file=/s.json"],
    # the first spellings, still used by deployments written before the rename
    ["--listen", "0.0.0.0:9199", "--state-file", "/s.json"],
    ["--listen=0.0.0.0:9199", "--state-file=/s.json"],
])
def test_flags_match_the_ndbinfo_exporter_and_old_spellings_still_work(argv: list[str]) -> None:
    args = parse_args(["--log", "node1=/e.log", *argv])
    assert (args.listen, args.state_file) == ("0.0.0.0:9199", "/s.json")


def test_defaults_and_hidden_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse_args(["--log", "node1=/e.log"])
    assert (args.listen, args.state_file) == ("127.0.0.1:9199", None)
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    shown = capsys.readouterr().out
    assert "--web.listen-address" in shown and "--state.file" in shown
    assert "--listen" not in shown and "--state-file" not in shown


# -- PXC 8.0 under the Percona Operator: JSON-wrapped, CRI-wrapped, plain ----------------
# Expected values read by hand from each fixture: the times of its "Shifting PRIMARY ->
# JOINER" and "Shifting JOINED -> SYNCED" lines (quoted below), the kind from the IST
# request ("IST uuid:00000000-... f: 0" is an SST, "Running IST" an IST), the method from
# "Prepared SST request: xtrabackup-v2|..." and the donor from the joiner's own "Member ...
# requested state transfer ... Selected N.0 (<pod>)" line. The tracker's NODE label is
# deliberately not the pod name (node3 vs cluster1-2): the log says which member it is.
K8S_CASES = {
    "pxc80-operator-node3-sst42min-ist-ist.json.log": [
        # 2023-05-25T03:49:27.005286Z ... Shifting PRIMARY -> JOINER (TO: 5835880)
        # 2023-05-25T04:31:59.767489Z ... Shifting JOINED -> SYNCED (TO: 5856068): 42 min 32.762 s
        ("sst", "xtrabackup-v2", "cluster1-1", 2552.762203),
        # 2023-05-25T04:35:02.909899Z ... Shifting PRIMARY -> JOINER (TO: 5858168)
        # 2023-05-25T04:35:15.078178Z ... Shifting JOINED -> SYNCED (TO: 5858334)
        ("ist", "ist", "cluster1-1", 12.168279),
        # 2023-05-29T07:20:14.963723Z ... Shifting PRIMARY -> JOINER (TO: 9339151)
        # 2023-05-29T07:20:28.455306Z ... Shifting JOINED -> SYNCED (TO: 9339327)
        ("ist", "ist", "cluster1-0", 13.491583),
    ],
    "pxc80-operator-split-node2-sst.json.log": [
        # 2024-02-09T10:46:38.764092Z ... Shifting PRIMARY -> JOINER (TO: 36)
        # 2024-02-09T10:47:00.623634Z ... Shifting JOINED -> SYNCED (TO: 36)
        ("sst", "xtrabackup-v2", "cluster1-pxc-1", 21.859542),
    ],
    "pxc80-operator-split-node2.2-sst.json.log": [
        # 2024-02-09T10:57:02.669703Z ... Shifting PRIMARY -> JOINER (TO: 42)
        # 2024-02-09T10:57:24.162369Z ... Shifting JOINED -> SYNCED (TO: 42)
        ("sst", "xtrabackup-v2", "cluster1-pxc-1", 21.492666),
    ],
}


def body(lines: list[str]) -> list[str]:
    """A fixture's log lines without its `#` header."""
    return [line for line in lines if not line.startswith("#")]


def plain_of(json_lines: list[str]) -> list[str]:
    """What the error log itself held: each object's `log` text, one line per line."""
    return [inner for raw in json_lines
            for inner in json.loads(raw)["log"].rstrip("\n").split("\n")]


def cri_of(lines: list[str]) -> list[str]:
    """The same lines as the kubelet would store them: CRI records, every third line cut
    into P pieces, with a stderr line of the collector's shell between two of them."""
    out: list[str] = []
    for i, line in enumerate(lines):
        stamp = f"2023-05-25T04:38:{i % 60:02d}.{i:09d}Z"
        if i % 3 == 1 and len(line) > 30:
            cuts = [0, 10, len(line) // 2, len(line)]
            pieces = [line[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
            out.append(f"{stamp} stdout P {pieces[0]}")
            out.append(f"{stamp} stderr F + exec fluent-bit -c /etc/fluentbit/fluentbit.conf")
            out += [f"{stamp} stdout P {piece}" for piece in pieces[1:-1]]
            out.append(f"{stamp} stdout F {pieces[-1]}")
        else:
            out.append(f"{stamp} stdout F {line}")
    return out


def events_of(raw_lines: list[str], node: str = "node3") -> list:
    u = Unwrapper()
    p = NodeParser(node=node)
    return [e for raw in raw_lines for line in u.feed(raw) for e in p.feed(line)]


def summary(events: list) -> list[tuple]:
    return [(e.kind, e.method, e.donor, round(e.duration, 6))
            for e in events if isinstance(e, Recovery)]


@pytest.mark.parametrize("form", ["json", "plain", "cri", "cri+json"])
@pytest.mark.parametrize("name", sorted(K8S_CASES))
def test_k8s_logs_give_each_recovery_once_whatever_the_wrapping(name: str, form: str) -> None:
    lines = body(lines_of(name))
    raw = {"json": lines, "plain": plain_of(lines), "cri": cri_of(plain_of(lines)),
           "cri+json": cri_of(lines)}[form]
    events = events_of(raw)
    assert summary(events) == [(k, m, d, pytest.approx(s, abs=1e-6))
                               for k, m, d, s in K8S_CASES[name]]
    assert not [e for e in events if isinstance(e, Aborted)]


def test_the_issue_s_examples_unwrap_to_the_error_log_line() -> None:
    line = ("2023-05-25T04:38:02.457961Z 0 [Note] [MY-000000] [Galera] Shifting PRIMARY ->"
            " JOINER (TO: 5861193)")
    wrapped = json.dumps({"log": line + "\n", "file": "/var/lib/mysql/mysqld-error.log"})
    assert unwrap(wrapped) == [line]
    assert unwrap(f"2023-05-25T04:38:02.457961234Z stdout F {line}") == [line]
    assert unwrap(f"2023-05-25T04:38:02.457961234Z stdout F {wrapped}") == [line]
    assert unwrap(line) == [line]


def test_unwrapper_joins_partial_cri_lines_per_stream_and_keeps_them_across_restarts() -> None:
    u = Unwrapper()
    assert u.feed("2024-02-09T10:46:38.764092000Z stdout P 2024-02-09T10:46:38.764092Z 0") == []
    assert u.feed("2024-02-09T10:46:38.764092000Z stderr F + set +o xtrace") == [
        "+ set +o xtrace"]
    u = Unwrapper.from_dict(json.loads(json.dumps(u.to_dict())))  # the tracker restarted
    assert u.feed("2024-02-09T10:46:38.764092000Z stdout P  [Note] [MY-000000] [Galera]") == []
    assert u.feed("2024-02-09T10:46:38.764092000Z stdout F  Shifting PRIMARY -> JOINER"
                  " (TO: 36)") == ["2024-02-09T10:46:38.764092Z 0 [Note] [MY-000000] [Galera]"
                                   " Shifting PRIMARY -> JOINER (TO: 36)"]
    assert u.partial == {}


@pytest.mark.parametrize("raw", [
    "{not json at all",
    '{"msg": "a JSON line without a log field"}',
    '["log"]',
    "+ exec fluent-bit -c /etc/fluentbit/fluentbit.conf",
    "2023-05-25T04:38:02.457961Z 0 [Note] [MY-000000] [Galera] declaring e123e2f3-ace5 stable",
    "2026-11-22  3:59:38 0 [Note] WSREP: Shifting PRIMARY -> JOINER (TO: 265192)",
    "2023-05-25T04:38:02Z stdout X not a CRI tag",
    "",
])
def test_anything_else_passes_through_unchanged(raw: str) -> None:
    assert unwrap(raw) == [raw]


def test_one_json_object_may_carry_several_lines() -> None:
    # operator_concurrent_ssts/node3.log: the collector joined a message's continuation lines
    raw = ('{"log":"2023-05-25T03:49:26.351052Z 10 [Note] [MY-000000] [Galera] Quorum results:'
           '\\n\\tversion    = 6,\\n\\tcomponent  = PRIMARY,\\n","file":"/var/lib/mysql/'
           'mysqld-error.log"}')
    assert unwrap(raw) == ["2023-05-25T03:49:26.351052Z 10 [Note] [MY-000000] [Galera] Quorum"
                           " results:", "\tversion    = 6,", "\tcomponent  = PRIMARY,"]


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines))


@pytest.mark.parametrize("form", ["json", "cri+json"])
def test_tracker_follows_wrapped_files_count_and_sum_agree(tmp_path: Path, form: str) -> None:
    name = "pxc80-operator-node3-sst42min-ist-ist.json.log"
    lines = lines_of(name)  # the header too: it must change nothing
    raw = lines if form == "json" else cri_of(body(lines))
    log, state = tmp_path / "mysqld-error.log", tmp_path / "state.json"
    # The file ends inside the 42-minute SST (for CRI: between the pieces of a line) when
    # the tracker stops; a new tracker goes on from its state file.
    cut = next(i for i, r in enumerate(raw) if "-> JOINER" in r) + 1
    if form == "cri+json":
        cut = next(i for i in range(cut, len(raw)) if " stdout P " in raw[i]) + 1
    write_lines(log, raw[:cut])
    t = Tracker({"node3": str(log)}, str(state))
    t.poll()
    assert metrics(t)[("galera_recovery_in_progress", (("node", "node3"),))] == 1
    saved = json.loads(state.read_text())["nodes"]["node3"]
    assert bool(saved["unwrapper"]["partial"]) == (form == "cri+json")
    with log.open("a") as f:
        f.write("".join(r + "\n" for r in raw[cut:]))
    t = Tracker({"node3": str(log)}, str(state))
    t.poll()
    m = metrics(t)
    expected = K8S_CASES[name]
    sst = (("kind", "sst"), ("method", "xtrabackup-v2"), ("node", "node3"))
    ist = (("kind", "ist"), ("method", "ist"), ("node", "node3"))
    assert total(m, "node3", "sst", "xtrabackup-v2") == 1
    assert total(m, "node3", "ist", "ist") == 2
    assert m[("galera_recovery_duration_seconds_count", sst)] == 1
    assert m[("galera_recovery_duration_seconds_count", ist)] == 2
    assert m[("galera_recovery_duration_seconds_sum", sst)] == pytest.approx(expected[0][3])
    assert m[("galera_recovery_duration_seconds_sum", ist)] == pytest.approx(
        expected[1][3] + expected[2][3])
    # 42 min 33 s: above the 1800 s bucket, inside the 3600 s one
    assert m[("galera_recovery_duration_seconds_bucket", (sst[0], ("le", "1800.0"),
                                                          *sst[1:]))] == 0
    assert m[("galera_recovery_duration_seconds_bucket", (sst[0], ("le", "3600.0"),
                                                          *sst[1:]))] == 1
    assert m[("galera_recoveries_aborted_total", (("node", "node3"),))] == 0
    assert m[("galera_recovery_in_progress", (("node", "node3"),))] == 0
    assert m[("galera_recovery_last_duration_seconds", (("donor", "cluster1-0"), *ist))] == (
        pytest.approx(expected[2][3]))


def test_sst_temporary_server_keeps_the_recovery_open_with_its_evidence() -> None:
    lines = body(lines_of("pxc80-operator-split-node2-sst.json.log"))
    temp = next(i for i, r in enumerate(lines) if "starting as process 1050" in r)
    u, p = Unwrapper(), NodeParser(node="node2")
    events = [e for raw in lines[:temp + 1] for line in u.feed(raw) for e in p.feed(line)]
    assert not [e for e in events if isinstance(e, Aborted | Recovery)]
    w = p.window
    assert w is not None and w.sst and (w.method, w.donor) == ("xtrabackup-v2", "cluster1-pxc-1")
    assert w.start == pytest.approx(parse_timestamp("2024-02-09T10:46:38.764092Z 0 x"))
    events = [e for raw in lines[temp + 1:] for line in u.feed(raw) for e in p.feed(line)]
    assert summary(events) == [("sst", "xtrabackup-v2", "cluster1-pxc-1", 21.859542)]


def test_innodb_shutdown_of_xtrabackup_prepare_is_not_a_restart() -> None:
    line = next(r for r in lines_of("pxc80-operator-split-node2-sst.json.log")
                if "[InnoDB] Shutdown completed" in r)
    p = NodeParser(node="node2")
    _open_window(p)
    assert p.feed(unwrap(line)[0]) == [] and p.window is not None


def _open_window(p: NodeParser) -> None:
    p.feed("2024-02-09T10:46:38.764092Z 0 [Note] [MY-000000] [Galera] Shifting PRIMARY -> JOINER"
           " (TO: 36)")
    assert p.window is not None


def _restart_at(lines: list[str], cut_after: str) -> list[str]:
    """The first SST cut short after a line, then the node's next real start, verbatim."""
    cut = next(i for i, r in enumerate(lines) if cut_after in r)
    start = next(i for i, r in enumerate(lines) if "04:35:01.293586Z" in r)
    assert "starting as process 1\\n" in lines[start]
    return lines[:cut + 1] + lines[start:]


def test_real_restart_of_the_joiner_aborts_the_recovery() -> None:
    # A crash (OOM kill, pod deleted) during the SST: the next lines are the new server's.
    lines = _restart_at(body(lines_of("pxc80-operator-node3-sst42min-ist-ist.json.log")),
                        "Proceeding with SST")
    events = events_of(lines)
    aborted = [e for e in events if isinstance(e, Aborted)]
    assert len(aborted) == 1 and aborted[0].reason == "server started"
    assert aborted[0].ts == pytest.approx(parse_timestamp("2023-05-25T04:35:01.293586Z 0 x"))
    assert [r[:3] for r in summary(events)] == [("ist", "ist", "cluster1-1"),
                                                ("ist", "ist", "cluster1-0")]


def test_real_restart_while_the_sst_waits_for_its_server_aborts_at_closed_open() -> None:
    # Announced, so the new server's start is taken for the SST's own; a real restart still
    # shows itself a second later: Galera starts over from CLOSED.
    lines = _restart_at(body(lines_of("pxc80-operator-node3-sst42min-ist-ist.json.log")),
                        "Waiting for server instance to start")
    events = events_of(lines)
    aborted = [e for e in events if isinstance(e, Aborted)]
    assert len(aborted) == 1 and aborted[0].reason == "CLOSED -> OPEN"
    assert aborted[0].ts == pytest.approx(parse_timestamp("2023-05-25T04:35:02.347755Z 0 x"))
    assert [r[0] for r in summary(events)] == ["ist", "ist"]


def test_a_late_line_of_an_earlier_server_does_not_abort_a_later_recovery() -> None:
    # The first SST's temporary server lines (04:31:38 and 04:31:51), delivered late by the
    # collector, moved into the second recovery's window (which began at 04:35:02).
    lines = body(lines_of("pxc80-operator-node3-sst42min-ist-ist.json.log"))
    late = [r for r in lines if "starting as process 4409" in r or "Stopped the MySQL" in r]
    assert len(late) == 2
    rest = [r for r in lines if r not in late]
    joiner = next(i for i, r in enumerate(rest) if "04:35:02.909899Z" in r)
    events = events_of(rest[:joiner + 1] + late + rest[joiner + 1:])
    assert summary(events) == [(k, m, d, pytest.approx(s, abs=1e-6)) for k, m, d, s in
                               K8S_CASES["pxc80-operator-node3-sst42min-ist-ist.json.log"]]


def test_another_joiner_s_lines_in_the_window_do_not_change_the_donor() -> None:
    # Real lines of the same log (operator_concurrent_ssts/node3.log lines 748 and 752):
    # cluster1-0 joined from cluster1-1. Moved into cluster1-2's last recovery (donor
    # cluster1-0), where a concurrent SST would put them.
    other = [
        "2023-05-25T04:38:02.457895Z 0 [Note] [MY-000000] [Galera] Member 0.0 (cluster1-0)"
        " requested state transfer from 'cluster1-1,'. Selected 2.0 (cluster1-1)(SYNCED) as"
        " donor.",
        "2023-05-25T04:38:14.953444Z 0 [Note] [MY-000000] [Galera] 0.0 (cluster1-0): State"
        " transfer from 2.0 (cluster1-1) complete.",
    ]
    lines = plain_of(body(lines_of("pxc80-operator-node3-sst42min-ist-ist.json.log")))
    # Without "Requesting state transfer: success, donor: N" only the selection naming
    # this member (by its pod name, not the tracker's label) can tell the donor.
    lines = [r for r in lines if "Requesting state transfer" not in r]
    synced = next(i for i, r in enumerate(lines) if "07:20:28.380334Z" in r)  # JOINER -> JOINED
    events = events_of(lines[:synced] + other + lines[synced:])
    assert [r[:3] for r in summary(events)] == [("sst", "xtrabackup-v2", "cluster1-1"),
                                                ("ist", "ist", "cluster1-1"),
                                                ("ist", "ist", "cluster1-0")]


@pytest.mark.parametrize("name", sorted({p.name for d in (FIX, SHARED_GALERA)
                                          for p in d.glob("*.log")}))
def test_fixture_headers_change_nothing(name: str) -> None:
    lines = lines_of(name)
    assert lines[0].startswith("# ")
    assert summary(events_of(lines)) == summary(events_of(body(lines)))
    # a header line in the middle of a recovery neither ends nor feeds it
    p = NodeParser(node="node3")
    _open_window(p)
    w = p.window
    assert [e for h in lines if h.startswith("#") for e in p.feed(h)] == []
    assert p.window is w and (w.method, w.donor, w.sst, w.ist) == ("", "", False, False)


def test_a_quiet_log_is_not_reopened_but_new_lines_are_read(tmp_path: Path,
                                                           monkeypatch) -> None:
    """The poll loop runs every 0.5 s per node: with nothing written it only stats."""
    import builtins

    from galera_tracker.follower import LogFollower
    log = tmp_path / "node1.err"
    log.write_text("a\nb\n")
    f = LogFollower(str(log))
    assert list(f.read_lines()) == ["a", "b"]
    real_open, opened = builtins.open, []
    monkeypatch.setattr(builtins, "open", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    assert list(f.read_lines()) == [] and opened == []
    with real_open(log, "a") as w:
        w.write("c\n")
    assert list(f.read_lines()) == ["c"] and opened
    log.write_text("x\ny\nz\n")  # truncated and refilled to the same size: read again
    os.utime(log, ns=(1, 10**18))
    assert list(f.read_lines()) == ["x", "y", "z"]


def rsync(src: Path, dst: Path) -> None:
    """A real rsync, as users copy node logs to the monitoring host: it writes a temporary
    file and renames it over the old one (a new inode), unless --inplace. -I copies even
    an unchanged file (a cron job that runs again)."""
    subprocess.run(["rsync", "-I", str(src), str(dst)], check=True)


@pytest.mark.tools("rsync")
def test_a_log_copied_again_counts_nothing_twice(tmp_path: Path) -> None:
    """F5 (reviews/newcomer-ecosystem.md): three rsyncs of an unchanged log counted one SST
    three times. The log-time watermark skips what was read, whatever the inode."""
    src, dst, state = tmp_path / "node3.err", tmp_path / "copy" / "node3.err", tmp_path / "s"
    dst.parent.mkdir()
    src.write_text((FIX / "restart-node3-kill9-no-recover-fullSST.log").read_text())
    t = Tracker({("staging", "node3"): str(dst)}, str(state))
    inodes = set()
    for _ in range(3):
        rsync(src, dst)
        inodes.add(dst.stat().st_ino)
        t.poll()
        m = metrics(t)
        assert total_in(m, "staging", "node3", "sst", "rsync") == 1
        assert sum(v for k, v in m.items()
                   if k[0] == "galera_state_transitions_total") == 5
    assert len(inodes) == 3  # each copy was a new file
    # the tracker restarts and the log is copied again with a new recovery appended
    t = Tracker({("staging", "node3"): str(dst)}, str(state))
    with src.open("a") as f:
        f.write(days_later((FIX / "restart-node3-ist-recover1-down20.log").read_text(), 1))
    rsync(src, dst)
    t.poll()
    m = metrics(t)
    assert total_in(m, "staging", "node3", "sst", "rsync") == 1
    assert total_in(m, "staging", "node3", "ist", "ist") == 1
    assert m[("galera_tracker_lines_skipped_total", (("cluster", "staging"),
                                                     ("node", "node3")))] > 0


def test_a_clock_stepping_back_loses_no_line(tmp_path: Path) -> None:
    """Within one continuous read nothing is skipped: a node whose clock steps back (NTP)
    still has its recovery counted."""
    log = tmp_path / "error.log"
    log.write_text(days_later((FIX / "restart-node3-sst-grastate-recover0.log").read_text(), 1))
    t = Tracker({"node3": str(log)})
    t.poll()
    with log.open("a") as f:  # a day earlier than what was just read
        f.write((FIX / "restart-node3-ist-recover1-down20.log").read_text())
    t.poll()
    m = metrics(t)
    assert total(m, "node3", "sst", "rsync") == 1
    assert total(m, "node3", "ist", "ist") == 1


def total_in(m: dict, cluster: str, node: str, kind: str, method: str) -> float:
    key = ("galera_recoveries_total", (("cluster", cluster), ("kind", kind),
                                       ("method", method), ("node", node)))
    return m.get(key, 0.0)


@pytest.mark.parametrize("damage", [
    "{not json",
    json.dumps({"nodes": {"node3": {"path": "P", "position": {"offset": "lots"}}}}),
    json.dumps({"nodes": {"node3": {"path": "P", "position": {"head": "zz"}}}}),
    json.dumps({"nodes": {"node3": {"path": "P", "stats": {"nonsense": 1}}}}),
])
def test_a_damaged_state_file_is_kept_aside_not_overwritten(tmp_path: Path, capsys,
                                                             damage: str) -> None:
    """A state file the tracker cannot use is renamed aside with a message (the counts
    in it stay for a person to recover), and the tracker starts: it never crashes on it
    nor silently writes over it."""
    log = tmp_path / "error.log"
    log.write_text((FIX / "restart-node3-ist-recover1-down20.log").read_text())
    state = tmp_path / "state.json"
    state.write_text(damage.replace('"P"', json.dumps(str(log))))
    t = Tracker({"node3": str(log)}, str(state))
    t.poll()
    assert total(metrics(t), "node3", "ist", "ist") == 1
    aside = list(tmp_path.glob("state.json.damaged-*"))
    assert len(aside) == 1 and aside[0].read_text() == damage.replace('"P"',
                                                                      json.dumps(str(log)))
    assert "kept as" in capsys.readouterr().err
    assert json.loads(state.read_text())["nodes"]  # a new, whole state file


def test_a_line_that_never_ends_is_not_kept_whole(tmp_path: Path) -> None:
    """8 MiB without a newline: handed on in pieces, never held whole in memory or in the
    state file."""
    log = tmp_path / "error.log"
    state = tmp_path / "state.json"
    log.write_bytes(b"x" * (8 << 20))
    t = Tracker({"node3": str(log)}, str(state))
    t.poll()
    t.save()
    assert state.stat().st_size < 3 << 20
