"""galera_tracker's parser on real error logs (tests/fixtures/galera, recorded in the lab,
and the PXC logs in shared/fixtures/galera): each recovery's kind, method, donor and
duration, restarts that abort one, and the lines that must change nothing.

Fast, no lab: the fixtures are real MariaDB 10.11 / PXC 8.0 logs recorded on clusters.
"""

from __future__ import annotations

import pytest
from galera_tracker.log_lines import parse_timestamp
from galera_tracker.parser import Aborted, NodeParser, Recovery
from galera_tracker.wrapped import Unwrapper, unwrap
from tracker_logs import (
    CASES,
    FIX,
    K8S_CASES,
    SHARED_GALERA,
    _open_window,
    _restart_at,
    body,
    events_of,
    lines_of,
    plain_of,
    recoveries,
    summary,
)


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
