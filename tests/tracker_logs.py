"""What the tracker tests share: the recorded logs (tests/fixtures/galera from this project's
lab, the PXC logs in shared/fixtures/galera), the values read from them by hand, and
helpers that feed lines through the parser or the tracker and read its metrics."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from galera_tracker.parser import NodeParser, Recovery
from galera_tracker.tracker import Tracker
from galera_tracker.tracker_metrics import TrackerCollector
from galera_tracker.wrapped import Unwrapper
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


def days_later(text: str, days: int) -> str:
    """A recorded log as if it had been written `days` days later (the fixtures were all
    recorded on 2026-11-22): what a log holds after a rotation is newer than before it."""
    day = f"2026-11-{22 + days:02d}"
    return text.replace("2026-11-22", day).replace("20261122", day.replace("-", ""))

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


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines))


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


def rsync(src: Path, dst: Path) -> None:
    """A real rsync, as users copy node logs to the monitoring host: it writes a temporary
    file and renames it over the old one (a new inode), unless --inplace. -I copies even
    an unchanged file (a cron job that runs again)."""
    subprocess.run(["rsync", "-I", str(src), str(dst)], check=True)


def total_in(m: dict, cluster: str, node: str, kind: str, method: str) -> float:
    key = ("galera_recoveries_total", (("cluster", cluster), ("kind", kind),
                                       ("method", method), ("node", node)))
    return m.get(key, 0.0)
