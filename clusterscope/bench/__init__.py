"""The benchmarks (`make bench`, `clusterscope bench`): each measures and returns its figures.

Speed and memory targets live here, not in timed tests: the figures depend on a machine
that other work shares, so they are reported, compared within one run, and never asserted.
"""

from __future__ import annotations

from collections.abc import Callable

from clusterscope.bench import (
    ab_alarms,
    ab_calibration,
    ab_validity,
    change_detection,
    exporter_bench,
    galera_bench,
    loadgen_ab,
    loadgen_bench,
    logs_bench,
    monitoring_bench,
    ndbsim_bench,
    soak,
)

# name -> a function of no arguments returning a dict of figures (at least one key
# containing "ratio").
BENCHMARKS: dict[str, Callable[[], dict]] = {
    "loadgen": loadgen_bench.run,
    "loadgen-designs": loadgen_ab.run_designs,
    # A/A on two tables and injected server-side costs: false positives and coverage
    "loadgen-calibration": ab_calibration.run,
    # known server-side costs: what the A/B designs measure, against long separate runs
    "ab-validity": ab_validity.run,
    # the change alert on replayed weeks of A/A units: false alarms, time to detect a step
    "ab-alarms": ab_alarms.run,
    "galera": galera_bench.run,
    "exporter": exporter_bench.run,
    "ndbsim": ndbsim_bench.run,
    "logs": logs_bench.run,
    "monitoring": monitoring_bench.run,
    "changes": change_detection.run,
    # the always-on soak: faults for --minutes, judged; `ok` false fails the bench
    "soak": soak.run,
}
# benchmarks that take the bench's options: name -> option -> keyword of its function
OPTIONS = {"soak": {"minutes": "minutes"}, "ab-validity": {"quick": "quick"},
           "loadgen-calibration": {"quick": "quick", "aa_runs": "aa_runs",
                                   "estimand": "estimand", "coverage_only": "coverage_only",
                                   "replay": "replay_file"},
           "ab-alarms": {"quick": "quick"}}
