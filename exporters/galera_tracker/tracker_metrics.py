"""Prometheus view of the tracker's state (names and labels: docs/galera.md)."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.registry import Collector

from galera_tracker.tracker import BUCKETS, STATES, Tracker

# every series names its node and the cluster it belongs to (the description's names)
NODE = ["cluster", "node"]


class TrackerCollector(Collector):
    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    def collect(self) -> Iterator:
        with self.tracker.lock:
            yield from self._collect()

    def _collect(self) -> Iterator:
        state = GaugeMetricFamily("galera_state", "1 for the node's current wsrep state (from"
                                  " its error log)", labels=[*NODE, "state"])
        since = GaugeMetricFamily("galera_state_last_change_timestamp_seconds",
                                  "log time of the last state change", labels=NODE)
        trans = CounterMetricFamily("galera_state_transitions", "wsrep state changes seen in"
                                    " the error log", labels=[*NODE, "from", "to"])
        inprog = GaugeMetricFamily("galera_recovery_in_progress", "1 while the node is"
                                   " between JOINER and SYNCED", labels=NODE)
        started = GaugeMetricFamily("galera_recovery_started_timestamp_seconds",
                                    "log time the recovery in progress began", labels=NODE)
        total = CounterMetricFamily("galera_recoveries", "completed recoveries (JOINER ->"
                                    " SYNCED)", labels=[*NODE, "kind", "method"])
        aborted = CounterMetricFamily("galera_recoveries_aborted", "recoveries cut short by a"
                                      " restart or a fall back to CLOSED/OPEN", labels=NODE)
        last_labels = [*NODE, "kind", "method", "donor"]
        last = GaugeMetricFamily("galera_recovery_last_duration_seconds", "duration of the"
                                 " node's latest completed recovery", labels=last_labels)
        last_end = GaugeMetricFamily("galera_recovery_last_end_timestamp_seconds",
                                     "log time the latest recovery ended", labels=last_labels)
        hist = HistogramMetricFamily("galera_recovery_duration_seconds", "recovery durations",
                                     labels=[*NODE, "kind", "method"])
        log_up = GaugeMetricFamily("galera_tracker_log_up", "1 if the node's error log is"
                                   " readable", labels=NODE)
        lines = CounterMetricFamily("galera_tracker_lines", "log lines read", labels=NODE)
        reopens = CounterMetricFamily("galera_tracker_log_reopens", "log rotations or"
                                      " truncations seen", labels=NODE)
        skipped = CounterMetricFamily("galera_tracker_lines_skipped", "lines read again after"
                                      " the log started over (a copy or a rotation), at or"
                                      " before the log time already read: not counted twice",
                                      labels=NODE)
        for node in self.tracker.nodes.values():
            name, c = node.name, node.cluster
            s = node.stats
            for st in STATES:
                state.add_metric([c, name, st], 1.0 if s.state == st else 0.0)
            if s.state_since is not None:
                since.add_metric([c, name], s.state_since)
            for key, n in s.transitions.items():
                frm, to = key.split(">", 1)
                trans.add_metric([c, name, frm, to], n)
            begun = node.in_progress_since()
            inprog.add_metric([c, name], 0.0 if begun is None else 1.0)
            if begun is not None:
                started.add_metric([c, name], begun)
            for key, n in s.recoveries.items():
                kind, method = key.split("|", 1)
                total.add_metric([c, name, kind, method], n)
            aborted.add_metric([c, name], s.aborted)
            if s.last:
                lv = [c, name, s.last["kind"], s.last["method"], s.last["donor"]]
                last.add_metric(lv, s.last["duration"])
                last_end.add_metric(lv, s.last["end"])
            for key, h in s.hist.items():
                kind, method = key.split("|", 1)
                buckets = [(str(float(b)), c) for b, c in zip(BUCKETS, h["buckets"],
                                                               strict=True)]
                buckets.append(("+Inf", h["count"]))
                hist.add_metric([c, name, kind, method], buckets, h["sum"])
            log_up.add_metric([c, name], 1.0 if node.follower.readable else 0.0)
            lines.add_metric([c, name], s.lines)
            reopens.add_metric([c, name], node.follower.reopens)
            skipped.add_metric([c, name], node.skipped)
        yield from (state, since, trans, inprog, started, total, aborted, last, last_end, hist,
                    log_up, lines, reopens, skipped)
