"""The detector's metrics: changes as counters, never a series per value.

- `clusterscope_changes_total{cluster, node, kind}` (counter): things that changed (a
  variable, a provider option, an NDB parameter, a version);
- `clusterscope_change_last_timestamp_seconds{cluster, node, kind, name}`: when `name` last
  changed (bounded by the names a server has, never by values);
- `clusterscope_changes_node_up{cluster, node}`: 1 = the node's last reading worked
  (node `data`: an NDB cluster's data nodes, read through an SQL node);
- `clusterscope_changes_unwritten_lines`: lines queued because the changes file cannot be
  written; `clusterscope_changes_poll_duration_seconds`: the last poll of every node;
  `clusterscope_changes_polls_total`: polls since the start;
  `clusterscope_changes_description_ok`: 0 = the description's last edit does not parse
  (the last good one is used).

A simulated cluster's series carry `simulated="true"`.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from clusterscope_changes.poller import Detector


class DetectorCollector(Collector):
    def __init__(self, detector: Detector) -> None:
        self.d = detector

    def _simulated(self) -> set[str]:
        desc = self.d.desc
        return {c.name for c in desc.clusters if c.simulated} if desc else set()

    def collect(self) -> Iterator:
        sim = self._simulated()

        def labels(cluster: str, *rest: str) -> list[str]:
            return [cluster, *rest, "true" if cluster in sim else ""]

        total = CounterMetricFamily("clusterscope_changes", "Things that changed (a global"
                                    " variable, a wsrep provider option, an NDB parameter, a"
                                    " version), per node and kind",
                                    labels=["cluster", "node", "kind", "simulated"])
        last = GaugeMetricFamily("clusterscope_change_last_timestamp_seconds",
                                 "When a variable, option, parameter or version last changed",
                                 labels=["cluster", "node", "kind", "name", "simulated"])
        up = GaugeMetricFamily("clusterscope_changes_node_up", "1 = the node's last reading"
                               " worked", labels=["cluster", "node", "simulated"])
        st = self.d.state
        with st.lock:
            for key, n in sorted(st.counts.items()):
                cluster, node, kind = key.split("\t")
                total.add_metric(labels(cluster, node, kind), n)
            for key, t in sorted(st.last.items()):
                cluster, node, kind, name = key.split("\t", 3)
                last.add_metric(labels(cluster, node, kind, name), t)
            described = self._described()
            for key, ns in sorted(st.nodes.items()):
                cluster, _, node = key.partition("/")
                if "/" in node or (cluster, node) not in described:
                    continue  # a data node's own key, or a node no longer described
                up.add_metric(labels(cluster, node), 1.0 if ns.up else 0.0)
            unwritten = len(self.d.changes.pending)
        yield total
        yield last
        yield up
        yield GaugeMetricFamily("clusterscope_changes_unwritten_lines", "Change lines queued"
                                " because the changes file cannot be written", value=unwritten)
        yield GaugeMetricFamily("clusterscope_changes_poll_duration_seconds", "How long the"
                                " last poll of every node took", value=self.d.poll_seconds)
        yield CounterMetricFamily("clusterscope_changes_polls", "Polls of every node since"
                                  " the detector started", value=self.d.polls)
        yield GaugeMetricFamily("clusterscope_changes_description_ok", "0 = the description's"
                                " last edit does not parse", value=0.0 if self.d.desc_error
                                else 1.0)

    def _described(self) -> set[tuple[str, str]]:
        desc = self.d.desc
        out: set[tuple[str, str]] = set()
        for c in desc.clusters if desc else []:
            out |= {(c.name, n.name) for n in c.mysqld_nodes}
            if c.kind == "ndb":
                out.add((c.name, "data"))
        return out
