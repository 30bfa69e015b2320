"""The HTML report: built from a real VictoriaMetrics, rendered by headless Chromium."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
from helpers import render_in_chromium

from clusterscope.analysis import report
from clusterscope.analysis.periods import Period

T1 = 1_700_100_000


def _samples(name: str, labels: str, points: list[tuple[float, float]]) -> list[str]:
    return [f"{name}{{{labels}}} {v} {int(t * 1000)}" for t, v in points]


@pytest.fixture(scope="module")
def filled(scratch_vm):
    lines: list[str] = []
    ts = [T1 + 5 * i for i in range(120)]  # ten minutes at a 5 s scrape interval
    for var, base in (("fk0", 2000.0), ("fk2", 1700.0)):
        lines += _samples("loadgen_window_tps", f'experiment="fk",variant="{var}"',
                          [(t, base + (i // 2) % 7) for i, t in enumerate(ts)])
        lines += _samples("loadgen_window_latency_seconds",
                          f'experiment="fk",variant="{var}",quantile="0.95"',
                          [(t, 0.004) for t in ts])
    pair = 'experiment="fk",variant="fk2",baseline="fk0"'
    # the first pairs' interval is wide (-300 %..+200 %): the band waits for 5 pairs
    for suffix, v, early in (("", -0.15, -0.5), ("_lower", -0.2, -3.0), ("_upper", -0.1, 2.0)):
        lines += _samples(f"loadgen_overhead_ratio{suffix}", pair,
                          [(t, early if i < 24 else v) for i, t in enumerate(ts)])
    lines += _samples("loadgen_overhead_pairs", pair, [(t, 1 + i // 6) for i, t in enumerate(ts)])
    # Three completed restarts of node 2: two 7.6-like ones of the same 409 s, then a
    # 7.5-like one; each restart in progress (status 12) in between has no total yet.
    sim = 'cluster="lab-ndb",simulated="true",node_id="2"'
    done = {0: 409, 40: 409, 80: 1151}  # sample index of each completion -> total
    status, total, stamp, phases = [], [], [], defaultdict(list)
    current = None
    for i, t in enumerate(ts):
        if i in done:
            current = (t, done[i])
        in_progress = any(c - 10 <= i < c for c in done if c)
        status.append((t, 12 if in_progress else 19))
        stamp.append((t, current[0]))
        if not in_progress:
            total.append((t, current[1]))
        for phase, a, b in (("restore_fragments", 135, 111), ("exec_redo_log", 35, 51),
                            ("index_rebuild", 77, 124), ("wait_lcp_for_restart", 128, 828),
                            ("for_local_recovery", 247, 286)):  # sums the first three
            phases[phase].append((t, a if current[1] == 409 else b))
    lines += _samples("ndb_restart_status", sim, status)
    lines += _samples("ndb_restart_total_seconds", sim, total)
    lines += _samples("ndb_restart_last_completed_timestamp_seconds", sim, stamp)
    for phase, points in phases.items():
        lines += _samples("ndb_restart_phase_seconds", f'{sim},phase="{phase}"', points)
    lines += _samples("ndb_thread_cpu_percent",
                      f'{sim},thr_no="1",thread_name="ldm",mode="exec"',
                      [(t, 40 + i % 5) for i, t in enumerate(ts)])
    rec = 'cluster="lab-galera",node="node3",kind="ist",method="ist",donor="node1"'
    lines += _samples("galera_recovery_last_duration_seconds", rec, [(t, 8.5) for t in ts[30:]])
    lines += _samples("galera_recovery_last_end_timestamp_seconds", rec,
                      [(t, ts[30]) for t in ts[30:]])
    lines += _samples("mysql_global_status_wsrep_cluster_size",
                      'job="galera",cluster="lab-galera",node="node1"',
                      [(t, 3 if i < 20 or i > 30 else 2) for i, t in enumerate(ts)])
    scratch_vm.import_prometheus("\n".join(lines) + "\n")
    scratch_vm.flush()
    return scratch_vm, Period(T1, ts[-1])


def test_the_report_shows_each_section_and_marks_simulated_figures(filled) -> None:
    vm, period = filled
    page = report.build(vm, period)
    assert page.count("<svg") >= 6
    ndb = page[page.index("<h2>NDB restarts"):page.index("<h2>Galera")]
    assert "SIMULATED" in ndb.split("</h2>")[0], "the NDB heading must say it is simulated"
    # every completed restart appears as a phase breakdown, with its total
    assert len(re.findall(r"node 2 @ \d\d:\d\d:\d\d", ndb)) == 3
    assert ndb.count(">409 s<") == 2 and ">1,151 s<" in ndb
    galera = page[page.index("<h2>Galera"):]
    assert "SIMULATED" not in galera.split("</h2>")[0]
    assert "<td>node3</td><td>ist</td><td>ist</td><td>node1</td><td>8.5 s</td>" in galera


@pytest.mark.tools("chromium")
def test_the_report_renders_in_headless_chromium(filled, artifacts: Path) -> None:
    vm, period = filled
    out = report.write(vm, period, artifacts / "report")
    shot = artifacts / "report.png"
    console = render_in_chromium(out, shot)
    assert any("clusterscope-report-rendered svg=" in ln for ln in console), console
    assert not [ln for ln in console if "Uncaught" in ln or "Error" in ln], console
    assert shot.exists() and shot.stat().st_size > 20_000


def test_each_restart_bar_ends_at_its_total(filled) -> None:
    vm, period = filled
    bars = report.restart_breakdown(vm, period)
    assert [round(sum(v for _, v in segs)) for _, segs in bars] == [409, 409, 1151]
    assert all("for_local_recovery" not in dict(segs) for _, segs in bars)


def tick_labels(chart: str) -> list[str]:
    return re.findall(r'class="tick" text-anchor="end">([^<]*)</text>', chart)


def test_axes_of_non_negative_quantities_never_go_below_zero(filled) -> None:
    vm, period = filled
    page = report.build(vm, period)
    charts = re.findall(r"<svg.*?</svg>", page, re.S)
    for chart in charts:
        title = re.search(r'class="title">([^<]*)<', chart).group(1)
        ticks = tick_labels(chart)
        if "overhead" in title:  # an overhead can be negative (the variant is faster)
            continue
        assert ticks and not [t for t in ticks if t.startswith("-")], (title, ticks)


def test_the_overhead_band_starts_once_enough_pairs_stand_behind_it(filled) -> None:
    vm, period = filled
    lines = report._lines(vm, "loadgen_overhead_ratio", period, "{experiment}/{variant}", 100.0,
                          (f"loadgen_overhead_ratio_lower and on(experiment, variant, baseline)"
                           f" loadgen_overhead_pairs >= {report.MIN_BAND_PAIRS}",
                           f"loadgen_overhead_ratio_upper and on(experiment, variant, baseline)"
                           f" loadgen_overhead_pairs >= {report.MIN_BAND_PAIRS}"))
    band = lines[0].band
    assert band and min(lo for _, lo, _ in band) > -100  # the -300 % start is not drawn
    assert band[0][0] >= T1 + 5 * 6 * (report.MIN_BAND_PAIRS - 1)


def test_restart_totals_leave_a_gap_while_a_restart_runs(filled) -> None:
    vm, period = filled
    chart = next(c for c in re.findall(r"<svg.*?</svg>", report.build(vm, period), re.S)
                 if "restart total seconds" in c)
    assert chart.count("<polyline") == 3  # three completed stretches, no line to 0 between


def test_phases_get_distinct_colours() -> None:
    from clusterscope.analysis import svg
    names = [f"phase_{i}" for i in range(19)]
    chart = svg.stacked_bars([("r", [(n, 1.0) for n in names])], "t")
    fills = re.findall(r'<rect x="[\d.]+" y="\d+" width="10" height="10" fill="([^"]+)"', chart)
    assert len(fills) == 19 and len(set(fills)) == 19


def test_a_series_that_touches_zero_has_no_negative_tick() -> None:
    from clusterscope.analysis import svg
    chart = svg.line_chart([svg.Line("cpu", [(T1 + i, float(v)) for i, v in
                                             enumerate([0, 5, 10, 3, 0])])], "cpu", "%")
    assert tick_labels(chart)[0] == "0%" and not [t for t in tick_labels(chart) if "-" in t]
    # an overhead may be negative: its axis follows the data
    both = svg.line_chart([svg.Line("o", [(T1, -20.0), (T1 + 1, 10.0)])], "o", "%",
                          nonneg=False)
    assert tick_labels(both)[0].startswith("-")


# -- where the figures come from -------------------------------------------------------------
T3 = T1 + 20_000  # a period of its own in the scratch database


@pytest.fixture(scope="module")
def real_ndb(scratch_vm):
    """A real NDB cluster's restarts (no `simulated` label), as a staging cluster's
    exporter would give them: the report must not call them simulated."""
    lines: list[str] = []
    ts = [T3 + 5 * i for i in range(60)]
    labels = 'cluster="staging-ndb",node_id="3"'
    lines += _samples("ndb_restart_status", labels, [(t, 19) for t in ts])
    lines += _samples("ndb_restart_total_seconds", labels, [(t, 402) for t in ts])
    # one restart, seen completing at the 11th scrape
    lines += _samples("ndb_restart_last_completed_timestamp_seconds", labels,
                      [(t, ts[10]) for t in ts[10:]])
    lines += _samples("ndb_restart_phase_seconds", f'{labels},phase="restore_fragments"',
                      [(t, 120) for t in ts])
    lines += _samples("mysql_global_status_wsrep_cluster_size",
                      'job="galera",cluster="staging-galera",node="g1"', [(t, 3) for t in ts])
    scratch_vm.import_prometheus("\n".join(lines) + "\n")
    scratch_vm.flush()
    return scratch_vm, Period(T3, ts[-1])


def test_real_ndb_figures_are_named_by_their_cluster_not_marked_simulated(real_ndb) -> None:
    vm, period = real_ndb
    page = report.build(vm, period, source="http://vmselect.staging:8481/select/0/prometheus")
    assert "SIMULATED" not in page  # the CSS class is lower-case
    assert "read from VictoriaMetrics at http://vmselect.staging:8481/select/0/prometheus" in page
    ndb = page[page.index("<h2>NDB restarts"):page.index("<h2>NDB LDM")]
    assert "measured on staging-ndb" in ndb.split("</h2>")[0]
    assert len(re.findall(r"node 3 @ \d\d:\d\d:\d\d", ndb)) == 1
    galera = page[page.index("<h2>Galera"):]
    assert "measured on staging-galera" in galera.split("</h2>")[0]


def test_the_simulated_mark_comes_from_the_series_label(filled) -> None:
    vm, period = filled
    page = report.build(vm, period)
    head = page[:page.index("<h2>")]
    assert re.search(r"Measured on [^<]*lab-galera", head) and "(lab-ndb)" in head
    assert "(SIMULATED)" in page[page.index("<h2>NDB restarts"):page.index("<h2>Galera")]
    # the loadgen's series of the fixture carry no cluster: named as such, never simulated
    exp = page[page.index("<h2>Experiments"):page.index("<h2>NDB restarts")]
    assert "SIMULATED" not in exp


def test_a_plain_mariadb_sql_node_is_no_galera_node(real_ndb) -> None:
    """mysqld_exporter probes NDB SQL nodes too (job ndb_sql), and MariaDB reports
    wsrep_cluster_size without Galera: the Galera section keeps to the galera job."""
    vm, period = real_ndb
    vm.import_prometheus("\n".join(_samples(
        "mysql_global_status_wsrep_cluster_size", 'job="ndb_sql",cluster="lab-ndb",'
        'simulated="true",node="sql1"', [(period.start + 5 * i, 0) for i in range(60)])) + "\n")
    vm.flush()
    page = report.build(vm, period)
    galera = page[page.index("<h2>Galera"):]
    assert "SIMULATED" not in galera and "lab-ndb" not in galera
