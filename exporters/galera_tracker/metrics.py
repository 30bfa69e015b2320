"""Prometheus view of the tracker's state (names and labels: README, section Galera)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.registry import Collector

from galera_tracker.state import BUCKETS, STATES, Tracker


class TrackerCollector(Collector):
    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    def collect(self) -> Iterator:
        with self.tracker.lock:
            yield from self._collect()

    def _collect(self) -> Iterator:
        state = GaugeMetricFamily("galera_state", "1 for the node's current wsrep state (from"
                                  " its error log)", labels=["node", "state"])
        since = GaugeMetricFamily("galera_state_last_change_timestamp_seconds",
                                  "log time of the last state change", labels=["node"])
        trans = CounterMetricFamily("galera_state_transitions", "wsrep state changes seen in"
                                    " the error log", labels=["node", "from", "to"])
        inprog = GaugeMetricFamily("galera_recovery_in_progress", "1 while the node is"
                                   " between JOINER and SYNCED", labels=["node"])
        started = GaugeMetricFamily("galera_recovery_started_timestamp_seconds",
                                    "log time the recovery in progress began", labels=["node"])
        total = CounterMetricFamily("galera_recoveries", "completed recoveries (JOINER ->"
                                    " SYNCED)", labels=["node", "kind", "method"])
        aborted = CounterMetricFamily("galera_recoveries_aborted", "recoveries cut short by a"
                                      " restart or a fall back to CLOSED/OPEN", labels=["node"])
        last_labels = ["node", "kind", "method", "donor"]
        last = GaugeMetricFamily("galera_recovery_last_duration_seconds", "duration of the"
                                 " node's latest completed recovery", labels=last_labels)
        last_end = GaugeMetricFamily("galera_recovery_last_end_timestamp_seconds",
                                     "log time the latest recovery ended", labels=last_labels)
        hist = HistogramMetricFamily("galera_recovery_duration_seconds", "recovery durations",
                                     labels=["node", "kind", "method"])
        log_up = GaugeMetricFamily("galera_tracker_log_up", "1 if the node's error log is"
                                   " readable", labels=["node"])
        lines = CounterMetricFamily("galera_tracker_lines", "log lines read", labels=["node"])
        reopens = CounterMetricFamily("galera_tracker_log_reopens", "log rotations or"
                                      " truncations seen", labels=["node"])
        for name, node in self.tracker.nodes.items():
            s = node.stats
            for st in STATES:
                state.add_metric([name, st], 1.0 if s.state == st else 0.0)
            if s.state_since is not None:
                since.add_metric([name], s.state_since)
            for key, n in s.transitions.items():
                frm, to = key.split(">", 1)
                trans.add_metric([name, frm, to], n)
            begun = node.in_progress_since()
            inprog.add_metric([name], 0.0 if begun is None else 1.0)
            if begun is not None:
                started.add_metric([name], begun)
            for key, n in s.recoveries.items():
                kind, method = key.split("|", 1)
                total.add_metric([name, kind, method], n)
            aborted.add_metric([name], s.aborted)
            if s.last:
                lv = [name, s.last["kind"], s.last["method"], s.last["donor"]]
                last.add_metric(lv, s.last["duration"])
                last_end.add_metric(lv, s.last["end"])
            for key, h in s.hist.items():
                kind, method = key.split("|", 1)
                buckets = [(str(float(b)), c) for b, c in zip(BUCKETS, h["buckets"],
                                                               strict=True)]
                buckets.append(("+Inf", h["count"]))
                hist.add_metric([name, kind, method], buckets, h["sum"])
            log_up.add_metric([name], 1.0 if node.follower.readable else 0.0)
            lines.add_metric([name], s.lines)
            reopens.add_metric([name], node.follower.reopens)
        yield from (state, since, trans, inprog, started, total, aborted, last, last_end, hist,
                    log_up, lines, reopens)
