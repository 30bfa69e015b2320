"""Hostile input for galera_tracker: its line parser, its unwrapper and the tracker as a
whole, property-based (Hypothesis, the `clusterscope` profile of conftest.py: fixed seed,
bounded examples) on recorded real lines (tests/fixtures/galera, and the recorded PXC 8.0
logs under ../shared/fixtures/pxc-logs where present) cut, mixed, wrapped, interleaved with
binary and huge lines, and with the clock jumping back.

What must hold: every line is parsed or ignored, never an exception; a state saved at any
point and restored continues exactly as if nothing had stopped; lines that are not Galera's
change nothing. Each case the properties found is kept below as an explicit regression.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from galera_tracker.log_lines import parse_timestamp
from galera_tracker.parser import (
    Aborted,
    NodeParser,
    Recovery,
    StateChange,
)
from galera_tracker.tracker import Tracker
from galera_tracker.wrapped import MAX_PARTIAL, Unwrapper
from helpers import SHARED
from hypothesis import example, given, settings
from hypothesis import strategies as st

FIX = Path(__file__).parent / "fixtures" / "galera"
GCS_STATES = {"SYNCED", "JOINED", "DONOR/DESYNCED", "JOINER", "PRIMARY", "OPEN", "CLOSED",
              "DESTROYED", "ERROR"}
KEYWORDS = ("WSREP", "Galera", "starting as process", "Starting MariaDB", "Shutdown complete",
            "used for post-processing")


def _fixture_lines() -> list[str]:
    lines = [line for f in sorted(FIX.glob("*.log")) for line in f.read_text().splitlines()]
    pxc = SHARED / "fixtures" / "pxc-logs"
    for f in sorted(pxc.glob("*.log.gz")) if pxc.is_dir() else ():
        # every 7th line of the large recorded logs: all formats, a bounded pool
        lines += gzip.decompress(f.read_bytes()).decode("utf-8", "replace").splitlines()[::7]
    return lines


REAL = _fixture_lines()
PLAIN_LOGS = {f.name: f.read_text().splitlines() for f in sorted(FIX.glob("*.log"))
              if not f.name.endswith(".json.log")}

real_line = st.sampled_from(REAL)
binary_line = st.binary(max_size=300).map(lambda b: b.decode("utf-8", "replace")
                                          .replace("\n", " "))


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A real line cut, spliced, wrapped or salted with binary."""
    line = draw(real_line)
    how = draw(st.sampled_from(["cut", "splice", "json", "cri", "binary", "repeat", "as is"]))
    if how == "cut":
        return line[:draw(st.integers(0, len(line)))]
    if how == "splice":
        other = draw(real_line)
        return line[:draw(st.integers(0, len(line)))] + other[draw(st.integers(0, len(other))):]
    if how == "json":
        return json.dumps({"log": line + "\n", "file": "/var/lib/mysql/mysqld-error.log"})
    if how == "cri":
        return f"2026-11-22T03:59:35.123456789Z stderr {draw(st.sampled_from('FP'))} {line}"
    if how == "binary":
        i = draw(st.integers(0, len(line)))
        return line[:i] + draw(binary_line) + line[i:]
    if how == "repeat":  # a long line made of a real one
        return line * draw(st.integers(2, 40))
    return line


# The follower splits at "\n": no line the parser or the unwrapper sees holds one.
one_line = st.text(max_size=200).map(lambda s: s.replace("\n", " "))
any_line = st.one_of(real_line, mutated(), binary_line, one_line)


def check_events(events: list) -> None:
    for e in events:
        if isinstance(e, StateChange):
            assert e.from_state in GCS_STATES and e.to_state in GCS_STATES, e
        elif isinstance(e, Recovery):
            assert e.kind in ("sst", "ist", "unknown") and e.duration >= 0
            assert len(e.method) <= 64 and len(e.donor) <= 255
        else:
            assert isinstance(e, Aborted)


def restored(p: NodeParser) -> NodeParser:
    """The parser as the tracker restores it: through JSON, as in its state file."""
    return NodeParser.from_dict(p.node, json.loads(json.dumps(p.to_dict())))


# -- the line parser --------------------------------------------------------------------------
@given(st.lists(any_line, max_size=60), st.data())
# found: a 5000-digit IST seqno (int() refuses > 4300 digits), a timestamp with month 13
@example(["2026-11-22T03:59:35Z 0 [Note] WSREP: ####### IST uuid: "
          "0b6a3c3e-8f1a-11ee-9a5e-6a3f2d1c0b9a f: " + "9" * 5000], None)
@example(["2026-13-45T99:99:99Z 0 [Note] WSREP: Shifting PRIMARY -> JOINER (TO: 5)"], None)
@example(["2026-11-22T03:59:35+99:99 0 [Note] WSREP: Shifting PRIMARY -> JOINER (TO: 5)"],
         None)
# found: any [A-Z/]+ was a state, so a hostile line made new label values
@example(["2026-11-22T03:59:35Z 0 [Note] WSREP: Shifting PRIMARY -> EVIL (TO: 5)"], None)
def test_every_line_is_parsed_or_ignored_and_a_restart_loses_nothing(
        lines: list[str], data: st.DataObject | None) -> None:
    split = data.draw(st.integers(0, len(lines))) if data else len(lines) // 2
    one = NodeParser(node="node3")
    straight = [e for line in lines for e in one.feed(line)]
    check_events(straight)
    two = NodeParser(node="node3")
    before = [e for line in lines[:split] for e in two.feed(line)]
    two = restored(two)  # the tracker stopped here and came back from its state file
    after = [e for line in lines[split:] for e in two.feed(line)]
    assert before + after == straight
    assert restored(two).to_dict() == one.to_dict()


@given(st.sampled_from(sorted(PLAIN_LOGS)), st.lists(st.one_of(binary_line, st.text(
    max_size=120)).filter(lambda s: not any(k in s for k in KEYWORDS)
                          and parse_timestamp(s) is None), max_size=30), st.data())
def test_lines_that_are_not_galera_s_change_nothing(name: str, noise: list[str],
                                                    data: st.DataObject) -> None:
    lines = list(PLAIN_LOGS[name])
    for junk in noise:
        lines.insert(data.draw(st.integers(0, len(lines))), junk)
    ref = NodeParser(node="node3")
    clean = [e for line in PLAIN_LOGS[name] for e in ref.feed(line)]
    assert any(isinstance(e, StateChange) for e in clean)
    p = NodeParser(node="node3")
    assert [e for line in lines for e in p.feed(line)] == clean


_STAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})\s+(\d{1,2}):(\d{2}):(\d{2})")


@given(st.sampled_from(sorted(PLAIN_LOGS)), st.data(), st.integers(1, 86400 * 400))
def test_clock_jumping_back_is_no_crash_and_no_negative_duration(
        name: str, data: st.DataObject, back: int) -> None:
    """An NTP step or a VM resume: from some line on, the log's clock is `back` seconds
    earlier. The state machine still follows the shifts; no duration goes negative."""
    lines = PLAIN_LOGS[name]
    k = data.draw(st.integers(0, len(lines)))

    def shifted(line: str) -> str:
        ts = parse_timestamp(line)
        m = _STAMP.match(line)
        if ts is None or not m:
            return line
        import time as _t
        new = _t.strftime("%Y-%m-%d %H:%M:%S", _t.localtime(ts - back))
        return new + line[m.end():]

    jumped = lines[:k] + [shifted(line) for line in lines[k:]]
    p, q = NodeParser(node="node3"), NodeParser(node="node3")
    events = [e for line in jumped for e in p.feed(line)]
    check_events(events)
    original = [e for line in lines for e in q.feed(line)]
    assert [(e.from_state, e.to_state) for e in events if isinstance(e, StateChange)] == [
        (e.from_state, e.to_state) for e in original if isinstance(e, StateChange)]


# -- the unwrapper ----------------------------------------------------------------------------
cri_piece = st.builds(lambda stream, tag, text: f"2026-11-22T03:59:35.1Z {stream} {tag} {text}",
                      st.sampled_from(["stdout", "stderr"]), st.sampled_from("FP"),
                      st.one_of(real_line, binary_line, one_line))
json_line = st.builds(lambda text, cut: json.dumps({"log": text})[:cut],
                      st.one_of(real_line, st.text(max_size=80)), st.integers(1, 400))
raw_line = st.one_of(cri_piece, json_line, any_line)


@given(st.lists(raw_line, max_size=60), st.data())
# found: a deeply nested JSON line raised RecursionError, which is not a ValueError
@example(["{\"a\":" + "[" * 100_000], None)
def test_unwrapper_never_raises_and_resumes_from_its_state(lines: list[str],
                                                           data: st.DataObject | None) -> None:
    split = data.draw(st.integers(0, len(lines))) if data else 0
    one = Unwrapper()
    straight = [out for raw in lines for out in one.feed(raw)]
    assert all("\n" not in out for out in straight)
    two = Unwrapper()
    before = [out for raw in lines[:split] for out in two.feed(raw)]
    two = Unwrapper.from_dict(json.loads(json.dumps(two.to_dict())))
    after = [out for raw in lines[split:] for out in two.feed(raw)]
    assert before + after == straight
    assert all(len(v) < MAX_PARTIAL for v in one.partial.values())


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(
    max_size=20), lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=12), inner, max_size=6), max_leaves=30))
# found: a state file whose "window" lacked a field or had a stranger one (TypeError), or
# whose "partial" was not a mapping (AttributeError): the tracker crashed at start
@example({"window": {"start": 1.0, "colour": "red"}, "partial": [1, 2]})
@example({"window": {"sst": True}, "partial": {"stdout": 5}})
def test_a_damaged_state_restores_what_is_valid_and_never_crashes(state: object) -> None:
    d = state if isinstance(state, dict) else {"window": state, "partial": state}
    p = NodeParser.from_dict("node3", d)
    u = Unwrapper.from_dict(d)
    # and both work afterwards
    p.feed("2026-11-22T03:59:35Z 0 [Note] WSREP: Shifting PRIMARY -> JOINER (TO: 5)")
    u.feed("2026-11-22T03:59:35.1Z stdout F x")
    json.dumps([p.to_dict(), u.to_dict()])


# -- the tracker, restarted between hostile chunks of a file -----------------------------------
@settings(max_examples=15)
@given(st.sampled_from(sorted(PLAIN_LOGS)), st.lists(st.tuples(st.integers(1, 12),
       st.booleans(), st.one_of(st.none(), st.binary(max_size=200))), min_size=1, max_size=8))
def test_tracker_restarted_between_chunks_counts_what_one_run_counts(
        tmp_path_factory: pytest.TempPathFactory, name: str,
        chunks: list[tuple[int, bool, bytes | None]]) -> None:
    d = tmp_path_factory.mktemp("hostile")
    log, state = d / "error.log", d / "state.json"
    text = "\n".join(PLAIN_LOGS[name]).encode() + b"\n"
    whole = bytearray()
    pos = 0
    tracker = Tracker({"node3": str(log)}, str(state))
    for n, restart, junk in chunks:
        piece = text[pos:pos + len(text) * n // 12]
        pos += len(piece)
        if junk is not None:  # binary and partial lines, without Galera's keywords
            piece += junk.replace(b"WSREP", b"w").replace(b"Galera", b"g") + b"\n"
        whole += piece
        with open(log, "ab") as f:
            f.write(piece)
        tracker.poll()
        json.loads(state.read_text())  # the state file is whole after every poll
        if restart:
            tracker = Tracker({"node3": str(log)}, str(state))
    with open(log, "ab") as f:
        f.write(text[pos:])
    whole += text[pos:]
    tracker.poll()
    ref_log = d / "reference.log"
    ref_log.write_bytes(bytes(whole))
    ref = Tracker({"node3": str(ref_log)})
    ref.poll()
    got, want = tracker.nodes["node3"].stats, ref.nodes["node3"].stats
    assert (got.recoveries, got.transitions, got.last, got.aborted) == (
        want.recoveries, want.transitions, want.last, want.aborted)


# -- huge adversarial lines: each must finish (a hang here is a denial of service) ------------
TS = "2026-11-22T03:59:35.123Z 0 [Note] WSREP: "
FEED = """
import json, sys
from galera_tracker.parser import NodeParser
from galera_tracker.wrapped import Unwrapper
line = sys.stdin.read()
p = NodeParser(node="node3")
p.feed("2026-11-22T03:59:30Z 0 [Note] WSREP: Shifting PRIMARY -> JOINER (TO: 5)")
p.feed(line)
Unwrapper().feed(json.dumps({"log": line}))
"""


@pytest.mark.parametrize("line", [
    TS + "7" * 400_000,  # a digit run: `\d+\.\d+ \(` tried at every digit
    TS + "a" * 400_000 + " SST",  # a word run: `(\w[\w-]*) (SST|IST) completed`
    TS + "1.1 (" * 80_000,  # `\(([^)]*)\)` scanning to the end from every opening
    TS + "Member 1.1 (" * 30_000,
    TS + "Server " + "x" * 400_000,
], ids=["digits", "word", "open-parens", "member", "server-name"])
@pytest.mark.tools("python")
def test_huge_adversarial_lines_finish(line: str) -> None:
    """Found by reading the patterns, kept as regressions: before, each of these lines
    held the tracker for minutes (Python's re holds the GIL, so in a subprocess with a
    deadline: a hang detector, not a speed target)."""
    proc = subprocess.run([sys.executable, "-c", FEED], input=line, text=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_selections_survive_a_restart() -> None:
    """Found by the restart property: the donor index -> name table was not in the saved
    state, so a restart between "Selected 0.0 (node1)" and "Requesting state transfer:
    success, donor: 0" lost the donor."""
    lines = ["2026-11-22T03:59:30Z 0 [Note] WSREP: Member 2.0 (pod-2) requested state "
             "transfer from '*any*'. Selected 0.0 (node1)(SYNCED) as donor.",
             "2026-11-22T03:59:31Z 0 [Note] WSREP: Shifting PRIMARY -> JOINER (TO: 5)",
             "2026-11-22T03:59:32Z 0 [Note] WSREP: Requesting state transfer: success, "
             "donor: 0",
             "2026-11-22T03:59:40Z 0 [Note] WSREP: Shifting JOINER -> JOINED (TO: 6)",
             "2026-11-22T03:59:41Z 0 [Note] WSREP: Shifting JOINED -> SYNCED (TO: 6)"]
    p = NodeParser(node="node3")
    p.feed(lines[0])
    p = restored(p)
    events = [e for line in lines[1:] for e in p.feed(line)]
    assert [e.donor for e in events if isinstance(e, Recovery)] == ["node1"]
