"""What the soak records while it runs: the processes' RSS and open fds (`Sampler`), what
the loadgen's Galera nodes went through second by second (`GaleraWatch`), and the readers
of what VictoriaMetrics and vmalert hold at the end (raw samples, scrape targets, each
alert's `for:`).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from clusterscope.clients.credentials import Access
from clusterscope.lab.core import Lab, LabError, pid_alive

LOADGEN_NODES = (1, 2)  # the Galera nodes the loadgen writes to
SAMPLE_EVERY = 5.0
# processes whose growth is reported; ours are the products users run always-on
OURS = ("ndb-exporter", "galera-tracker", "inventory", "loadgen")
STACK = ("mysqld-exporter", "node-exporter", "otelcol", "victoria-metrics", "vmalert",
         "vmalert-logs", "alertmanager", "victoria-logs", "webhook", "ndb-model", "door",
         "probe-guard")

# the lab's door with the read role's credentials (use_door); None: straight to the service
_door: Access | None = None


def use_door(access: Access | None) -> None:
    global _door
    _door = access


def http_get(url: str, timeout: float = 30) -> bytes:
    req = urllib.request.Request(url)
    if _door is not None and url.startswith("https://"):
        with _door.open(req, timeout) as resp:
            return resp.read()
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return resp.read()


# -- the process sampler ----------------------------------------------------------------------
class Sampler(threading.Thread):
    """RSS and open fds of each watched lab service, and the load average, every 5 s."""

    def __init__(self, lab: Lab) -> None:
        super().__init__(daemon=True)
        self.lab = lab
        self.samples: dict[str, list[tuple[float, int, float, float]]] = {}
        self.load: list[tuple[float, float]] = []
        self.stop_event = threading.Event()

    @staticmethod
    def group(name: str) -> str | None:
        if name.startswith("loadgen-"):
            return "loadgen"
        return name if name in OURS or name in STACK else None

    def run(self) -> None:
        while not self.stop_event.wait(SAMPLE_EVERY):
            now = time.time()
            with contextlib.suppress(OSError):
                self.load.append((now, float(Path("/proc/loadavg").read_text().split()[0])))
            try:
                services = self.lab.services()
            except LabError:
                continue
            for s in services:
                name = self.group(s.name)
                if name is None or not pid_alive(s.pid, s.start_time):
                    continue
                try:
                    status = Path(f"/proc/{s.pid}/status").read_text()
                    rss = next(int(line.split()[1]) * 1024 for line in status.splitlines()
                               if line.startswith("VmRSS:"))
                    fds = len(os.listdir(f"/proc/{s.pid}/fd"))
                except (OSError, StopIteration):
                    continue
                self.samples.setdefault(name, []).append((now, s.pid, rss, fds))


class GaleraWatch(threading.Thread):
    """What the loadgen's nodes went through, seen every second on their own: each change of
    the membership (wsrep_cluster_conf_id) and each look that found a node not Synced, as
    (from, to) intervals the event surely lies in. The loadgen judges a window by snapshots
    before and after it and polls during it; this is the independent account its windows
    are checked against.

    A look is read at some instant between asking and the answer, which on a busy machine
    can come seconds later: a change seen by a look lies after the previous look was asked
    and before this one was answered, and a state read lies within its own look. A look
    that gets no answer knows nothing: it is kept apart (`unanswered`), the membership is
    compared across it, and it is never called a change."""

    def __init__(self, lab: Lab, nodes: tuple[int, ...] = LOADGEN_NODES,
                 read: Callable[[int], dict[str, str]] | None = None) -> None:
        super().__init__(daemon=True)
        self.lab, self.nodes = lab, nodes
        self.read = read or self._status
        self.events: list[tuple[float, float, str]] = []
        self.unanswered: list[tuple[float, float, str]] = []
        self.stop_event = threading.Event()

    def _status(self, n: int) -> dict[str, str]:
        from clusterscope.lab import galera_nodes as gn
        return gn.status_vars(self.lab, n)

    def look(self, n: int, last: dict[int, tuple[float, str | None]]) -> None:
        asked = time.time()
        try:
            v = self.read(n)
        except Exception as exc:  # noqa: BLE001 - no answer is no evidence either way
            self.unanswered.append((asked, time.time(), f"node{n} no answer"
                                                         f" ({type(exc).__name__})"))
            return
        answered = time.time()
        conf, state = v.get("wsrep_cluster_conf_id"), v.get("wsrep_local_state_comment")
        before = last.get(n)
        if before is not None and before[1] != conf:
            self.events.append((before[0], answered,
                                f"node{n} membership {before[1]} -> {conf}"))
        if state != "Synced":
            self.events.append((asked, answered, f"node{n} {state}"))
        last[n] = (asked, conf)

    def run(self) -> None:
        last: dict[int, tuple[float, str | None]] = {}
        while not self.stop_event.wait(1.0):
            for n in self.nodes:
                self.look(n, last)


# -- VictoriaMetrics --------------------------------------------------------------------------
def vm_query(vm_url: str, expr: str) -> list[dict]:
    q = urllib.parse.urlencode({"query": expr})
    return json.loads(http_get(f"{vm_url}/api/v1/query?{q}"))["data"]["result"]


def vm_export(vm_url: str, match: str, start: float, end: float) -> list[dict]:
    """Raw samples (VictoriaMetrics /api/v1/export: one JSON object per series and line)."""
    q = urllib.parse.urlencode({"match[]": match, "start": f"{start:.3f}",
                                "end": f"{end:.3f}"})
    rows = []
    for line in http_get(f"{vm_url}/api/v1/export?{q}", timeout=120).splitlines():
        if line.strip():
            rows.append(json.loads(line))
    return rows


def points(row: dict) -> list[tuple[float, float]]:
    # a null value is a staleness marker (the target stopped answering), not a sample
    return sorted((t / 1000, v) for t, v in zip(row["timestamps"], row["values"], strict=True)
                  if v is not None)


def scrape_targets(vm_url: str,
                   lab: Lab) -> tuple[dict[tuple[str, str], str], dict[str, list[str]]]:
    """(job, instance) -> the lab service that serves it (by the scrape URL's port), and
    service -> its jobs."""
    data = json.loads(http_get(f"{vm_url}/api/v1/targets"))["data"]["activeTargets"]
    # a guard answers for the service behind it (the probe guard for mysqld_exporter)
    by_port = {s.port: (s.extra or {}).get("fronts") or s.name
               for s in lab.services() if s.port}
    served, jobs = {}, {}
    for t in data:
        port = urllib.parse.urlsplit(t["scrapeUrl"]).port
        name = by_port.get(port)
        if name is None:
            continue
        name = "loadgen" if name.startswith("loadgen-") else name
        key = (t["labels"].get("job", ""), t["labels"].get("instance", ""))
        served[key] = name
        jobs.setdefault(name, [])
        if key[0] not in jobs[name]:
            jobs[name].append(key[0])
    return served, jobs


def alert_for(lab: Lab, door: str | None = None) -> dict[str, float]:
    """Each alerting rule's `for:` in seconds, from the running vmalerts (through the door
    when given: /vmalert/... and /vmalert-logs/..., door_config's routes)."""
    from clusterscope.lab import monitoring_part
    out: dict[str, float] = {}
    for name in (monitoring_part.VMALERT, monitoring_part.VMALERT_LOGS):
        svc = lab.service(name)
        if svc is None:
            continue
        base = f"{door}/{name}" if door else f"http://127.0.0.1:{svc.port}"
        url = f"{base}/api/v1/rules"
        groups = json.loads(http_get(url))["data"]["groups"]
        for g in groups:
            for r in g["rules"]:
                if r.get("type") == "alerting":
                    out[r["name"]] = float(r.get("duration") or 0)
    return out


