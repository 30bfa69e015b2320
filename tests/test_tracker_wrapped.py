"""galera_tracker on PXC 8.0 under the Percona Operator: the same recoveries whether the
lines come JSON-wrapped by a log collector, CRI-wrapped by the kubelet, both, or plain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from galera_tracker.parser import Aborted
from galera_tracker.tracker import Tracker
from galera_tracker.wrapped import Unwrapper, unwrap
from tracker_logs import (
    K8S_CASES,
    body,
    cri_of,
    events_of,
    lines_of,
    metrics,
    plain_of,
    summary,
    total,
    write_lines,
)


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
