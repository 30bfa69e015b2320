# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""NDB rules: restart regression, restarts stuck, data nodes, LCP, REDO/UNDO, memory, CPU,
transporters, versions, exporter health.

Restart regression, the one non-obvious design: a restart becomes a *completion event* while
`time() - ndb_restart_last_completed_timestamp_seconds` is below the event window. The
exporter persists that timestamp with the count, so a gap in the series (SQL node or exporter
down, a collector timing out) never makes an old restart look new, and a counter appearing
at 0 is no event at all. During the event the `...:completion` series carry the restart's
total, phases and count; the baseline is the median of those samples from before the window
(`offset`), so the latest restart is judged against earlier ones only: the node's own when
it has enough earlier restarts, else the cluster's (every node's restarts pooled), on the
same version; an upgrade's first restarts are judged against the version before
(rules/ndb_restart_versions.py). The
verdicts are recorded only inside the window and held afterwards with `last_over_time`, so
an alert stays until the next restart gives a new verdict (or the hold ends) instead of
fading once the latest restart enters its own baseline.

The alerts repeat some recorded expressions instead of reading the records: vmalert writes a
group's records back asynchronously, so an alert reading a record of the same evaluation
could see the previous one. Records read with an `offset` or `last_over_time` are safe.
"""

from __future__ import annotations

from clusterscope.rules.fragments import restart_completed, restart_in_progress, restart_status_in
from clusterscope.rules.ndb_first_steps import FIRST_STEPS, LCP_Q, RESTART_Q, STATUS_TABLE
from clusterscope.rules.ndb_restart_versions import INFO, Inputs, baseline
from clusterscope.rules.ndb_restart_versions import info as baseline_info
from clusterscope.rules.ndb_restart_versions import records as version_records
from clusterscope.rules.rule_model import WITHOUT, Alert, Group, Runbook, seconds

COMPLETED = "cluster_node:ndb_restart_total_seconds:completed"
# restart states whose length grows with the data a node holds (wait for the running LCP
# before the dictionary copy, restore fragments, undo, REDO, index build, copy/sync, wait
# for an LCP; 22/23 the same seen by a later master). State 9 (WAIT_LCP_TO_COPY_DICT) waits
# for the LCP under way, which grows with the data.
DATA_BOUND_STATES = (9, 12, 13, 14, 15, 16, 17, 22, 23)


def _grew_most(c: dict) -> str:
    """The phase that grew most against its own median, as a label for the verdict."""
    n = c["ndb"]
    return (f"0 * topk by (cluster, node_id) (1, last_over_time("
            f"cluster_node_phase:ndb_restart_phase_seconds:growth_over_baseline"
            f"{{phase!~\"{n['restart_phase_exclude']}\"}}[{n['restart_verdict_hold']}]))")


def unchanged_for(s: str, window: str) -> str:
    """The same restart state for the whole window, and the series already existed at its
    start (a fresh exporter or a restart that just began has no full window)."""
    return (f"max {WITHOUT} (changes(ndb_restart_status{{{s}}}[{window}])) == 0"
            f" and on (cluster, node_id) max {WITHOUT} (ndb_restart_status{{{s}}} offset {window})")


def restarts(c: dict) -> Group:
    """Completion events, baselines and verdicts of data node restarts (the module's
    docstring), with the alerts on them."""
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    w = n["restart_event_window"]
    hist = n["restart_history"]
    need = n["restart_min_earlier"]
    done = restart_completed(f"max {WITHOUT} (ndb_restart_status{{{s}}})")
    recent = (f"(time() - max {WITHOUT} (ndb_restart_last_completed_timestamp_seconds{{{s}}})"
              f" < {seconds(w)})")
    total_done = f"max {WITHOUT} (ndb_restart_total_seconds{{{s}}}) and on (cluster, node_id) ({done})"
    phase_done = f"max {WITHOUT} (ndb_restart_phase_seconds{{{s}}}) and on (cluster, node_id) ({done})"
    ev_total = "cluster_node:ndb_restart_total_seconds:completion"
    ev_phase = "cluster_node_phase:ndb_restart_phase_seconds:completion"
    ev_count = "cluster_node:ndb_restarts_completed:completion"
    cl_total = "cluster:ndb_restart_total_seconds:completion"
    cl_phase = "cluster_phase:ndb_restart_phase_seconds:completion"
    cl_count = "cluster:ndb_restarts_completed:completion"

    def earlier(series: str) -> str:
        # completion events before this one: the count moved by one per event
        return (f"(max_over_time({series}[{hist}] offset {w}) - min_over_time({series}[{hist}]"
                f" offset {w}) + 1 >= {need})")

    def median(series: str) -> str:
        return f"quantile_over_time(0.5, {series}[{hist}] offset {w})"

    # the node's own median when it has enough earlier restarts, else the cluster's
    base_total = (f"({median(ev_total)} and on (cluster, node_id) {earlier(ev_count)})"
                  f" or on (cluster, node_id) (0 * ({total_done}) + on (cluster) group_left ()"
                  f" ({median(cl_total)} and on (cluster) {earlier(cl_count)}))")
    base_phase = (f"({median(ev_phase)} and on (cluster, node_id) {earlier(ev_count)})"
                  f" or on (cluster, node_id, phase) (0 * ({phase_done}) + on (cluster, phase)"
                  f" group_left () ({median(cl_phase)} and on (cluster) {earlier(cl_count)}))")
    # ...by version: the same version's restarts, else the version before's (an upgrade's
    # first restarts), else version-blind where the version is unknown (ndb_restart_versions)
    by_version = Inputs(s, w, hist, need, total_done, phase_done, recent)
    base_v = baseline(by_version, base_total)
    base_total = f"max without (version) ({base_v})"
    base_phase = f"max without (version) ({baseline(by_version, base_phase, phase=True)})"
    # the newest pin (`clusterscope baseline pin`), kept alive by this record itself once
    # the pinned sample has aged out of VictoriaMetrics' retention
    lb = n["restart_pinned_lookback"]
    pinned_rec = "cluster_node:ndb_restart_total_seconds:pinned"
    pinned = (f"max without (pin) (last_over_time(clusterscope_pinned_restart_total_seconds[{lb}])"
              f" and on (pin) topk(1, last_over_time(clusterscope_pin_created_timestamp_seconds[{lb}])))"
              f" or max without (pin) (last_over_time(clusterscope_pinned_restart_total_seconds[{lb}]))"
              f" or last_over_time({pinned_rec}[{lb}])")
    g = Group("ndb-restarts", "ndb.yml", first_steps=FIRST_STEPS, records=[
        (COMPLETED, total_done),
        ("cluster_node_phase:ndb_restart_phase_seconds:completed", phase_done),
        (ev_total, f"({total_done}) and on (cluster, node_id) {recent}"),
        (ev_phase, f"({phase_done}) and on (cluster, node_id) {recent}"),
        (ev_count, f"max {WITHOUT} (ndb_restarts_completed_total{{{s}}}) and on (cluster, node_id) {recent}"),
        # every node's events pooled (a rolling restart completes one node at a time)
        (cl_total, f"max without (node_id) (({total_done}) and on (cluster, node_id) {recent})"),
        (cl_phase, f"max without (node_id) (({phase_done}) and on (cluster, node_id) {recent})"),
        (cl_count, f"sum by (cluster) (max {WITHOUT} (ndb_restarts_completed_total{{{s}}}))"
                   f" and on (cluster) count by (cluster) ({recent})"),
        ("cluster_node:ndb_restart_total_seconds:baseline_median", median(ev_total)),
        ("cluster_node_phase:ndb_restart_phase_seconds:baseline_median", median(ev_phase)),
        ("cluster:ndb_restart_total_seconds:baseline_median", median(cl_total)),
        *version_records(by_version),
        (INFO, baseline_info(by_version, base_v)),
        # the verdicts: only inside the event window, with enough earlier restarts
        ("cluster_node:ndb_restart_total_seconds:ratio_to_baseline",
         f"({total_done}) / on (cluster, node_id) group_left () ({base_total})"
         f" and on (cluster, node_id) {recent}"),
        ("cluster_node:ndb_restart_total_seconds:growth_over_baseline",
         f"({total_done}) - on (cluster, node_id) group_left () ({base_total})"
         f" and on (cluster, node_id) {recent}"),
        ("cluster_node_phase:ndb_restart_phase_seconds:growth_over_baseline",
         f"({phase_done}) - on (cluster, node_id, phase) group_left () ({base_phase})"
         f" and on (cluster, node_id) {recent}"),
        (pinned_rec, pinned),
        ("cluster_node:ndb_restart_total_seconds:ratio_to_pinned",
         f"({total_done}) / on (cluster, node_id) group_left () max without (pin) ({pinned})"
         f" and on (cluster, node_id) {recent}"),
        ("cluster_node:ndb_restart_total_seconds:growth_over_pinned",
         f"({total_done}) - on (cluster, node_id) group_left () max without (pin) ({pinned})"
         f" and on (cluster, node_id) {recent}"),
    ])
    g.alerts += [rule(c) for rule in (_time_regressed, _time_above_pinned, _stuck)]
    return g


def _cause(c: dict) -> str:
    """The description's second half: which version the restart ran and which it was judged
    against (an upgrade's first restarts: the version before), and the NDB changes of the
    cluster shortly before (the change detector's clusterscope_change_last_timestamp_seconds:
    kind and name, never values). `query` runs PromQL from the template, in vmalert and in
    promtool alike (VictoriaMetrics app/vmalert/templates/template.go @0ac1cdfff59f, query,
    humanizeTimestamp; Prometheus' template reference)."""
    hold = c["ndb"]["restart_verdict_hold"]
    window = seconds(c["ndb"]["restart_cause_window"])
    versions = ("topk(1, last_over_time(cluster_node:ndb_restart_baseline_version:info"
                f"{{cluster=%q,node_id=%q}}[{hold}]))")
    changed = ("sort_desc(topk(3, max by (kind, name) (clusterscope_change_last_timestamp_seconds"
               "{cluster=%q,kind=~`ndb_version|ndb_config`})" f" > time() - {window}))")
    return (f' {{{{ with query (printf "{versions}" $labels.cluster $labels.node_id) }}}}'
            "{{ with index . 0 }}{{ if ne .Labels.version .Labels.baseline_version }}It ran"
            " {{ .Labels.version }} and is judged against the restarts on"
            " {{ .Labels.baseline_version }}, the version before (too few restarts on the new"
            " one yet).{{ else }}Judged against restarts on the same version"
            " ({{ .Labels.version }}).{{ end }}{{ end }}{{ end }}"
            f' {{{{ with query (printf "{changed}" $labels.cluster) }}}}NDB changes before it'
            f" (the last {c['ndb']['restart_cause_window']}):{{{{ range . }}}} {{{{ .Labels.name }}}}"
            " ({{ .Labels.kind }}) at {{ .Value | humanizeTimestamp }};{{ end }} `clusterscope"
            " changes` shows from what to what.{{ end }}")


def _time_regressed(c: dict) -> Alert:
    hold = c["ndb"]["restart_verdict_hold"]
    need = c["ndb"]["restart_min_earlier"]
    factor = c["ndb"]["restart_regression_factor"]
    grow = c["ndb"]["restart_regression_min_growth_seconds"]
    grew_most = _grew_most(c)
    return Alert(name="NdbRestartTimeRegressed",
                 expr=f"(last_over_time(cluster_node:ndb_restart_total_seconds:ratio_to_baseline[{hold}])"
                      f" > {factor} and on (cluster, node_id)"
                      f" last_over_time(cluster_node:ndb_restart_total_seconds:growth_over_baseline[{hold}])"
                      f" > {grow})"
                      f" + on (cluster, node_id) group_left (phase) {grew_most}",
                 severity="warning",
                 summary="NDB node {{ $labels.node_id }} restarted {{ $value | printf \"%.2f\" }}x slower than"
                         " its baseline; phase {{ $labels.phase }} grew most",
                 description="The latest completed restart of data node {{ $labels.node_id }} in cluster"
                             " {{ $labels.cluster }} took {{ $value | printf \"%.2f\" }} times the median of the"
                             f" earlier restarts on the same version (the node's own when it has {need}, else the"
                             " cluster's; while the new version has fewer: the restarts on the version before;"
                             f" more than {factor}x and more than {grow} s longer). The phase that grew most against its own"
                             " median is {{ $labels.phase }}." + _cause(c),
                 dashboard="ndb_restarts",
                 runbook=Runbook(
                     meaning="The latest completed restart of a data node took longer than its baseline"
                             " (the median of the node's earlier completed restarts on the same"
                             " version, or of the whole cluster's when the node has too few; after an"
                             " upgrade, while the new version has too few restarts, those of the"
                             " version before) by more than the factor and the seconds in the"
                             " description. The `phase` label names the restart_info phase that grew"
                             " most against its own median; the description names the version the"
                             " restart ran, the one it was judged against, and the NDB changes (new"
                             " version, changed parameters) found shortly before it.",
                     impact="While a data node restarts the cluster runs with reduced redundancy; a"
                            " slower restart widens that window (field facts: 6m49s on 7.6 vs 19m11s on"
                            " 7.5 for the same data, mostly the wait for a local checkpoint).",
                     diagnosis=f"- Phase durations of the last restart: `{RESTART_Q}`\n"
                               "- The phases against their medians: \"Phase vs its median\" on the NDB"
                               " restarts dashboard (`cluster_node_phase:ndb_restart_phase_seconds:baseline_median`).\n"
                               "- `wait_lcp_for_restart` grew: check LCP speed (`ndbinfo.disk_write_speed_aggregate`,"
                               " `ndb_lcp_last_duration_seconds`), data size, `MaxDiskWriteSpeed*` settings,"
                               " and whether partial LCP (7.6 `EnablePartialLcp`) is on.\n"
                               "- `index_rebuild` grew: `BuildIndexThreads`, LDM count.\n"
                               "- Cluster log: `Node N: Start phase ...` and `LCP ... completed` lines.",
                     mitigation="If a configuration or version change came before it, compare against the"
                                " baseline pinned before the change (`clusterscope baseline pin`) and roll"
                                " back or tune (disk write speed for LCPs, partial LCP, index build"
                                " threads). Plan further rolling restarts with the longer window in mind.",
                     benign="an `--initial` restart (a full copy: `to_synchronize_starting_node` grew),"
                            " the first restart after a bulk data load."))


def _time_above_pinned(c: dict) -> Alert:
    hold = c["ndb"]["restart_verdict_hold"]
    factor = c["ndb"]["restart_regression_factor"]
    grow = c["ndb"]["restart_regression_min_growth_seconds"]
    return Alert(name="NdbRestartTimeAbovePinned",
                 expr=f"last_over_time(cluster_node:ndb_restart_total_seconds:ratio_to_pinned[{hold}]) > {factor}"
                      f" and on (cluster, node_id)"
                      f" last_over_time(cluster_node:ndb_restart_total_seconds:growth_over_pinned[{hold}]) > {grow}",
                 severity="warning",
                 summary="NDB node {{ $labels.node_id }} restarted {{ $value | printf \"%.2f\" }}x slower than"
                         " the pinned baseline",
                 description="The latest completed restart of data node {{ $labels.node_id }} in cluster"
                             " {{ $labels.cluster }} took {{ $value | printf \"%.2f\" }} times the restart time"
                             " of the newest baseline pinned with `clusterscope baseline pin` (more than"
                             f" {factor}x and more than {grow} s longer). Held until the next restart or {hold}.",
                 dashboard="ndb_restarts",
                 runbook=Runbook(
                     meaning="The latest completed restart of a data node took longer than the restart"
                             " time pinned before a change (`clusterscope baseline pin --name NAME`,"
                             " series `clusterscope_pinned_restart_total_seconds`) by the configured"
                             " factor and seconds. Unlike NdbRestartTimeRegressed it keeps comparing with"
                             " the state before the change, also after the rolling median has adapted.",
                     impact="As NdbRestartTimeRegressed: a longer window with reduced redundancy on every"
                            " restart since the change.",
                     diagnosis=f"- `{RESTART_Q}`\n- Compare with the pinned period: `clusterscope compare"
                               " --before-baseline NAME`.\n- What changed since the pin (version, data"
                               " size, `MaxDiskWriteSpeed*`, partial LCP).",
                     mitigation="Revert or tune the change; if the new restart time is accepted, pin a new"
                                " baseline."))


def _stuck(c: dict) -> Alert:
    s = c["selectors"]["ndb"]
    stuck = c["ndb"]["restart_stuck_after"]
    stuck_data = c["ndb"]["restart_stuck_after_data_phases"]
    status = f"max {WITHOUT} (ndb_restart_status{{{c['selectors']['ndb']}}})"
    return Alert(name="NdbRestartStuck",
                 expr=f"(({restart_in_progress(status, failure=False)})"
                      f" unless on (cluster, node_id) ({restart_status_in(status, DATA_BOUND_STATES)})"
                      f" and on (cluster, node_id) ({unchanged_for(s, stuck)}))"
                      f" or (({restart_status_in(status, DATA_BOUND_STATES)})"
                      f" and on (cluster, node_id) ({unchanged_for(s, stuck_data)}))",
                 severity="warning",
                 summary="NDB node {{ $labels.node_id }} restart made no progress (state {{ $value }})",
                 description="Data node {{ $labels.node_id }} in cluster {{ $labels.cluster }} has been in restart"
                             " state {{ $value }} (ndbinfo.restart_info.node_restart_status_int; the runbook names"
                             f" each state) for at least {stuck}, or {stuck_data} in a state that grows with the"
                             " data (restore, undo, REDO, index build, copy, wait for an LCP).",
                 dashboard="ndb_restarts",
                 runbook=Runbook(
                     meaning="A data node's restart state (`node_restart_status_int`, the data node"
                             " kernel's NodeRecoveryStatus) has not changed for 30 minutes, or for 2 hours"
                             " in a state whose length grows with the data (9, the wait for the running"
                             " LCP before the dictionary copy, and 12-17). A node in failure handling"
                             " (2-3) is down, not restarting: that is NdbDataNodeDown.\n\n"
                             + STATUS_TABLE,
                     impact="The node is not serving and redundancy stays reduced until it finishes.",
                     diagnosis=f"- `{RESTART_Q}`\n- `ndb_mgm -e \"N STATUS\"` (start phase)\n"
                               "- The data node's out/error log and the cluster log for the last"
                               " `Start phase` line; states 9 and 17 wait for an LCP:"
                               f" `{LCP_Q}`",
                     mitigation="If an LCP is progressing, wait. If the node waits for the master or for"
                                " metadata copy, check the other nodes' health and the network. As a last"
                                " resort stop the node and start it with `--initial`, and only if every"
                                " other node of its node group is STARTED (`ndb_mgm -e show`): `--initial`"
                                " discards the node's local data, which is then copied from its partner.",
                     benign="a very large node restoring or rebuilding indexes for longer than 2 hours;"
                            " an `--initial` restart copying all data (state 16)."))
