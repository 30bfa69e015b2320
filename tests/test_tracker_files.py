"""galera_tracker following log files: partial lines, rotation and truncation, a copied
log, a clock stepping back, restarts of the tracker that count nothing twice, its state
file and its command line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from galera_tracker.main import parse_args
from galera_tracker.tracker import Tracker
from tracker_logs import (
    FIX,
    days_later,
    metrics,
    rsync,
    total,
    total_in,
)


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


@pytest.mark.tools("rsync")
def test_a_log_copied_again_counts_nothing_twice(tmp_path: Path) -> None:
    """Three rsyncs of an unchanged log used to count its one SST three times (rsync writes
    a new file and renames it: a new inode with the same lines). The log-time watermark
    skips what was read, whatever the inode."""
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
