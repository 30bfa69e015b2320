"""Pinning a baseline writes the series the rules compare against (real VictoriaMetrics)."""

from __future__ import annotations

import time

import pytest

from clusterscope.analysis.baseline import pin_to_vm


def test_pin_writes_current_baselines_that_rules_can_read_later(scratch_vm) -> None:
    now = time.time()
    ms = int((now - 60) * 1000)
    scratch_vm.import_prometheus(
        f'cluster_node:ndb_restart_total_seconds:baseline_median{{cluster="pin-t",node_id="2",'
        f'simulated="true"}} 409 {ms}\n'
        + "".join(f'experiment_variant:loadgen_{name}{{experiment="pin-t-fk",variant="fk2",'
                  f'baseline="nofk",cluster="pin-t",engine="galera"}} {value} {ms}\n'
                  for name, value in (("overhead_ratio:mean1h", 0.18),
                                      ("overhead_ratio:se1h", 0.004), ("units:increase1h", 40))))
    scratch_vm.flush()
    scratch_vm.wait_for('cluster_node:ndb_restart_total_seconds:baseline_median{cluster="pin-t"}',
                        timeout=20)
    counts = pin_to_vm(scratch_vm, "before-upgrade", at=now - 30)
    assert counts["clusterscope_pinned_restart_total_seconds"] >= 1
    # what the rules evaluate: one pinned sample still serves long after it was written
    got = scratch_vm.wait_for(
        'last_over_time(clusterscope_pinned_restart_total_seconds{pin="before-upgrade",'
        'node_id="2"}[400d])', timeout=20)
    assert float(got[0]["value"][1]) == 409.0
    assert got[0]["metric"]["cluster"] == "pin-t" and "simulated" not in got[0]["metric"]
    # and when it was pinned: the rules take the newest pin
    created = scratch_vm.wait_for(
        'last_over_time(clusterscope_pin_created_timestamp_seconds{pin="before-upgrade"}[400d])',
        timeout=20)
    assert abs(float(created[0]["value"][1]) - (now - 30)) < 1
    ov = scratch_vm.wait_for(
        'last_over_time(clusterscope_pinned_overhead_ratio{pin="before-upgrade",experiment="pin-t-fk"}[400d])',
        timeout=20)
    assert [float(r["value"][1]) for r in ov] == [0.18]
    assert ov[0]["metric"]["baseline"] == "nofk"
    # the records read the ratio of means: the pin says so, and the alert reads only such
    assert ov[0]["metric"]["estimator"] == "ratio-of-means"
    # the change alert compares intervals: the pin keeps the period's SE and units too
    for series, value in (("clusterscope_pinned_overhead_se_ratio", 0.004),
                          ("clusterscope_pinned_overhead_units", 40.0)):
        got = scratch_vm.wait_for(f'last_over_time({series}{{pin="before-upgrade",'
                                  'experiment="pin-t-fk"}[400d])', timeout=20)
        assert [float(r["value"][1]) for r in got] == [value], series


def test_pin_name_is_checked(scratch_vm) -> None:
    with pytest.raises(ValueError):
        pin_to_vm(scratch_vm, 'bad"name')
