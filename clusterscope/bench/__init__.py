"""The benchmarks (`make bench`, `clusterscope bench`): each measures and returns its figures.

Speed and memory targets live here, not in timed tests: the figures depend on a machine
that other work shares, so they are reported, compared within one run, and never asserted.
"""

from __future__ import annotations

from collections.abc import Callable

from clusterscope.bench import (
    exporter,
    galera,
    loadgen,
    loadgen_ab,
    logs,
    monitoring,
    ndbsim,
    soak,
)

# name -> a function of no arguments returning a dict of figures (at least one key
# containing "ratio").
BENCHMARKS: dict[str, Callable[[], dict]] = {
    "loadgen": loadgen.run,
    "loadgen-designs": loadgen_ab.run_designs,
    "loadgen-calibration": loadgen_ab.run_calibration,
    "galera": galera.run,
    "exporter": exporter.run,
    "ndbsim": ndbsim.run,
    "logs": logs.run,
    "monitoring": monitoring.run,
    # the always-on soak (issue 28): faults for --minutes, judged; `ok` false fails the bench
    "soak": soak.run,
}
# benchmarks that take the bench's options: name -> option -> keyword of its function
OPTIONS = {"soak": {"minutes": "minutes"}}
