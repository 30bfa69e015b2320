# ruff: noqa: E501  (PromQL and runbook text read better unbroken)
"""NDB alerts on the ndbinfo_exporter itself: down, absent, a collector failing, slow."""

from __future__ import annotations

from clusterscope.rules.rule_model import Alert, Runbook


def _exporter_down(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    # the exporter process itself: the cluster's other NDB warnings are noise then (an
    # inhibition, alertmanager.py); a cluster it cannot read is NdbClusterUnreachable
    return Alert(name="NdbExporterDown",
                 expr=f"max by (cluster) (up{{{s}}}) == 0",
                 severity="warning",
                 summary="ndbinfo_exporter does not answer for NDB cluster {{ $labels.cluster }}",
                 description="No ndbinfo_exporter scrape of {{ $labels.cluster }} succeeds (up 0 on every"
                             " exporter of it): NDB monitoring of the cluster is blind, its other NDB"
                             " warnings are held back. Not a statement about the cluster itself.",
                 dashboard="ndb_overview",
                 for_=n["exporter_down_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="No scrape of ndbinfo_exporter for this cluster succeeds (`up` 0 on every"
                             " exporter that probes it). A cluster the exporter answers for but cannot"
                             " read is NdbClusterUnreachable, not this.",
                     impact="NDB monitoring of the cluster is blind; its other NDB warnings are held"
                            " back (an inhibition), critical alerts never are.",
                     diagnosis="- `curl http://<exporter>/metrics`; the exporter's log (`docker compose"
                               " logs ndbinfo-exporter`).\n"
                               "- VictoriaMetrics' `/targets`: the `ndbinfo` job's last error.",
                     mitigation="Restart the exporter; fix what stops it (its option file, the"
                                " description it reads, memory)."))


def _exporter_absent(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    inv = c["selectors"]["inventory"]
    return Alert(name="NdbExporterAbsent",
                 expr=f"max by (cluster) (clusterscope_cluster_info{{{inv},kind=\"ndb\"}})"
                      f" unless on (cluster) up{{{s}}}",
                 severity="warning",
                 summary="NDB cluster {{ $labels.cluster }} is described but not scraped",
                 description="{{ $labels.cluster }} is an NDB cluster of the description (clusterscope.yml),"
                             f" but no target of the scrape job selected by {s} covers it: the scrape"
                             " configuration does not take the inventory's targets.",
                 dashboard="ndb_overview",
                 for_=n["exporter_down_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="An NDB cluster of the description (clusterscope.yml) has no `up` series in"
                             " the ndbinfo job: no scrape of `/probe?cluster=<name>` covers it.",
                     impact="That cluster's NDB monitoring is blind, and NdbExporterDown cannot fire (no"
                            " `up` series).",
                     diagnosis="- The inventory's targets: `curl <inventory>/sd/ndbinfo` lists the"
                               " cluster?\n- The scrape configuration (`compose/config/scrape.yml` or"
                               " your vmagent/Prometheus config) and the collector's targets page.",
                     mitigation="Restore the scrape job (http_sd from the inventory, with the"
                                " multi-target relabelling), or remove the cluster from clusterscope.yml."))


def _exporter_collector_failing(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    return Alert(name="NdbExporterCollectorFailing",
                 expr=f"ndb_exporter_collector_success{{{s}}} == 0 and on (instance, collector)"
                      f" ndb_exporter_collector_supported{{{s}}} == 1"
                      f" unless on (instance) ndb_up{{{s}}} == 0",
                 severity="warning",
                 summary="ndbinfo_exporter collector {{ $labels.collector }} failing",
                 description="Collector {{ $labels.collector }} of {{ $labels.instance }} fails on every"
                             " scrape although the SQL node answers and its view exists: its metrics are"
                             " missing.",
                 dashboard="ndb_overview",
                 for_=n["collector_failing_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="One collector of ndbinfo_exporter has failed on every scrape for 5 minutes"
                             " although the SQL node answers (`ndb_up` 1) and its view exists in this NDB"
                             " version.",
                     impact="That collector's metrics (and the alerts built on them) are missing.",
                     diagnosis="- The exporter log for the collector's error (timeout, privilege).\n"
                               "- `ndb_exporter_collector_timeouts_total`, `ndb_exporter_collector_duration_seconds`.",
                     mitigation="Grant SELECT on the view, raise `--query.timeout`, or disable the"
                                " collector (`--no-collect.X`)."))


def _exporter_slow(c: dict) -> Alert:
    n = c["ndb"]
    s = c["selectors"]["ndb"]
    # the exporter's budget is the scrape timeout minus 0.5 s and VictoriaMetrics drops a
    # scrape past its timeout, so a duration above the timeout is never stored: "slow"
    # is close to the budget, for a while
    return Alert(name="NdbExporterSlow",
                 expr=f"max_over_time(ndb_exporter_scrape_duration_seconds{{{s}}}[1m])"
                      f" > {n['exporter_scrape_seconds_max']}"
                      f" or increase(ndb_exporter_collector_timeouts_total{{{s}}}[5m]) > 0",
                 severity="warning",
                 summary="ndbinfo_exporter {{ $labels.instance }} scrapes are slow or cut",
                 description="Scrapes of {{ $labels.instance }} took more than"
                             f" {n['exporter_scrape_seconds_max']} s (the budget is the scrape timeout minus"
                             " 0.5 s), or collectors hit their query timeout, for"
                             f" {n['exporter_slow_for']}: metrics go missing when a scrape is cut.",
                 dashboard="ndb_overview",
                 for_=n["exporter_slow_for"],
                 per_node=False,
                 runbook=Runbook(
                     meaning="Scrapes of ndbinfo_exporter took more than 3 s (its budget is the scrape"
                             " timeout, 4 s, minus 0.5 s; VictoriaMetrics drops a scrape past its timeout,"
                             " so a longer one is never stored), or its queries hit `--query.timeout`,"
                             " for 10 minutes.",
                     impact="Near the scrape timeout whole scrapes are lost; a collector cut at its"
                            " timeout drops its metrics (LCP progress, CPU, ...).",
                     diagnosis="- `ndb_exporter_collector_duration_seconds` per collector;"
                               " `ndb_exporter_collector_timeouts_total`.\n"
                               "- Schema size (per-fragment views grow with tables x fragments); SQL"
                               " node load.",
                     mitigation="Raise `--scrape.slow-interval` for the per-fragment collectors, raise"
                                " `--query.timeout`, or disable a collector (`--no-collect.X`)."))


def alerts(c: dict) -> list[Alert]:
    return [rule(c) for rule in (_exporter_down, _exporter_absent, _exporter_collector_failing,
                                 _exporter_slow)]
