"""The deployed rule on backfilled series: the unit counters of replayed comparisons are
imported into a VictoriaMetrics of their own, vmalert replays the committed rule file over
them (`-replay.timeFrom/-replay.timeTo`: it evaluates every rule over the range through
range queries and writes records and ALERTS back), and each comparison's firing
evaluations are read from the stored ALERTS samples. Both at the versions compose pins
(clusterscope gotools), so the replica's figures can be checked against what a deployment
would evaluate: VictoriaMetrics' increase() does not extrapolate to the range's ends as
Prometheus' does (it takes the sample before the range), and vmalert reads records a
remote write later.
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

from clusterscope_loadgen.unitstream import SUMS

from clusterscope import gotools
from clusterscope.bench.alarm_replica import COLUMNS, Counters
from clusterscope.clients.vm import VM
from clusterscope.lab import ports
from clusterscope.lab.core import wait_for_port
from clusterscope.paths import REPO

LABELS = {"job": "loadgen", "instance": "127.0.0.1:1", "cluster": "replay", "engine": "galera",
          "target": "127.0.0.1:3306", "experiment": "fk", "baseline": "nofk"}
# the replica's columns and the counters they stand for (unitstream.SUMS, in its order)
NAMES = tuple(zip(COLUMNS, (f"{name}_total" for name in SUMS), strict=True))


def _rfc3339(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _import(vm: VM, series: dict[str, Counters], t0: float) -> None:
    for variant, c in series.items():
        inner = ",".join(f'{k}="{v}"' for k, v in sorted({**LABELS, "variant": variant}.items()))
        for column, name in NAMES:
            col = c.cols[column]
            lines = [f"{name}{{{inner}}} {v!r} {int((t0 + t) * 1000)}"
                     for t, v in zip(c.t, col, strict=True)]
            for i in range(0, len(lines), 20000):
                vm.import_prometheus("\n".join(lines[i:i + 20000]) + "\n")
    vm.flush()


def _firing(url: str, t0: float, start: float, end: float) -> dict[str, list[float]]:
    """Each variant's evaluations (seconds from t0) with the alert firing, from the raw
    ALERTS samples vmalert wrote (an export: no lookback between samples)."""
    q = urllib.parse.urlencode({"match[]": 'ALERTS{alertname="ExperimentOverheadChanged",'
                                           'alertstate="firing"}',
                                "start": f"{t0 + start:.0f}", "end": f"{t0 + end:.0f}"})
    with urllib.request.urlopen(f"{url}/api/v1/export?{q}", timeout=60) as resp:
        body = resp.read().decode()
    out: dict[str, list[float]] = {}
    for line in filter(None, body.splitlines()):
        row = json.loads(line)
        times = [ts / 1000 - t0 for ts, v in zip(row["timestamps"], row["values"], strict=True)
                 if v == 1]
        out.setdefault(row["metric"]["variant"], []).extend(sorted(times))
    return out


def replay(series: dict[str, Counters], start: float, end: float, port_base: int,
           interval: float = 60.0, rules_delay: float = 10.0, timeout: float = 1800.0
           ) -> dict[str, list[float]]:
    """Firing evaluations per variant (seconds from the series' zero), between `start` and
    `end`, of vmalert replaying rules/loadgen.yml over these counters (from their start: the
    records a day earlier, which the alert reads, must exist too). vmalert replays rule
    after rule over the whole range; `rules_delay` between them lets VictoriaMetrics make
    the records written so far searchable before the alert reads them (without it the
    alert saw none and never fired)."""
    now = datetime.datetime.now(datetime.UTC).timestamp()
    t0 = (now - end - 2 * 86400) // 3600 * 3600  # an hour boundary, the data in the past
    work = Path(tempfile.mkdtemp(prefix="cs-alarm-replay-"))
    port = ports.port(port_base, "replay-vm")
    vm_proc = subprocess.Popen(
        [str(gotools.path_of("victoria-metrics")), f"-storageDataPath={work / 'data'}",
         f"-httpListenAddr=127.0.0.1:{port}", "-search.latencyOffset=0s",
         "-retentionPeriod=100y", "-search.disableCache", "-loggerLevel=ERROR"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(port, 60, alive=lambda: vm_proc.poll() is None)
        _import(VM(url), series, t0)
        subprocess.run(
            [str(gotools.path_of("vmalert")), f"-rule={REPO / 'rules' / 'loadgen.yml'}",
             f"-datasource.url={url}", f"-remoteWrite.url={url}",
             f"-evaluationInterval={interval:g}s", f"-replay.timeFrom={_rfc3339(t0)}",
             f"-replay.timeTo={_rfc3339(t0 + end)}", "-replay.disableProgressBar",
             f"-httpListenAddr=127.0.0.1:{ports.port(port_base, 'replay-vmalert')}",
             f"-replay.rulesDelay={rules_delay:g}s", "-loggerLevel=ERROR"], check=True,
            capture_output=True, timeout=timeout, env={**os.environ, "TZ": "UTC"})
        VM(url).flush()
        return _firing(url, t0, start, end)
    finally:
        vm_proc.terminate()
        try:
            vm_proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            vm_proc.kill()
        shutil.rmtree(work, ignore_errors=True)
