"""`make bench` entry `monitoring`: what monitoring costs the monitored cluster, and which
part costs what.

A lab Galera (and the NDB simulator) runs sysbench oltp_read_write on Galera node1 in
alternating windows: every exporter scraped every 5 s (the normal scrape config) vs none
scraped (an empty scrape config, which VictoriaMetrics re-reads within 5 s). Alternating
windows in one run let drift cancel; the headline is the mean paired throughput ratio
(scraped / not scraped) with its 95% interval. Target: at most 1% lower.

Attribution, per scraped component (each mysqld_exporter, the ndbinfo exporter, the
recovery tracker): its process CPU per scrape (CPU in scraped windows minus the same
time unscraped, over the scrapes VictoriaMetrics recorded as `up` samples) and the
database time it causes per scrape (MariaDB's USER_STATISTICS for its account: BUSY_TIME,
CPU_TIME and statements, on the server it reads). The stack's own processes
(VictoriaMetrics, vmalert, Alertmanager) are reported as CPU per second scraped vs not.

Two costs are separated: the database's (what a staging cluster pays when the stack runs on
another host) is the scrapes' CPU_TIME on node1 against node1's total server CPU for the
window; co-location is the rest of the drop: every process above competing for this
machine's 2 cores with sysbench and the three Galera nodes.
"""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from clusterscope.bench.cli_runner import fresh_lab, run_cli
from clusterscope.inference import paired

EXPORTER_ACCOUNTS = {"mysqld-exporter": "clusterscope_exporter",
                     "ndb-exporter": "ndbinfo_exporter"}
# The multi-target exporters are scraped once per probed target (the inventory's targets):
# their scrapes are counted by job; the database cost of a scrape is counted on one server,
# per probe that reached it.
PROBES = {"mysqld-exporter": 'up{job=~"galera|ndb_sql"}', "ndb-exporter": 'up{job="ndbinfo"}'}
DB_PROBES = {"mysqld-exporter": ("galera-node1", 'up{job="galera",node="node1"}'),
             "ndb-exporter": ("ndb-sql", 'up{job="ndbinfo"}')}
STACK = ("victoria-metrics", "vmalert", "alertmanager")

WINDOW_SECONDS = int(os.environ.get("CLUSTERSCOPE_BENCH_MONITORING_WINDOW", "10"))
PAIRS = int(os.environ.get("CLUSTERSCOPE_BENCH_MONITORING_PAIRS", "12"))
OLTP = "/usr/share/sysbench/oltp_read_write.lua"



def _sysbench(cnf: Path, command: str, seconds: int = 0) -> float:
    c = configparser.ConfigParser()
    c.read(cnf)
    cl = c["client"]
    env = dict(os.environ, MYSQL_PWD=cl["password"])  # never in argv
    argv = ["sysbench", OLTP, f"--mysql-host={cl['host']}", f"--mysql-port={cl['port']}",
            f"--mysql-user={cl['user']}", "--mysql-db=sbtest", "--tables=2",
            "--table-size=10000", "--threads=4", "--db-ps-mode=disable"]
    if command == "run":
        argv += [f"--time={seconds}", "--events=0"]
    proc = subprocess.run([*argv, command], env=env, capture_output=True, text=True,
                          timeout=seconds + 300)
    if proc.returncode != 0:
        raise RuntimeError(f"sysbench {command}: {proc.stderr[-1500:] or proc.stdout[-1500:]}")
    m = re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", proc.stdout)
    return float(m.group(1)) if m else 0.0


def _cpu(pid: int | None) -> float:
    if not pid:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _user_stats(sock: Path) -> dict[str, tuple[float, float, int]]:
    """account -> (BUSY_TIME s, CPU_TIME s, statements) since userstat was switched on."""
    from clusterscope.lab import mariadb
    conn = mariadb.socket_connect(sock)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT USER, BUSY_TIME, CPU_TIME, SELECT_COMMANDS + UPDATE_COMMANDS"
                        " + OTHER_COMMANDS FROM information_schema.USER_STATISTICS")
            return {u: (float(b), float(c), int(n)) for u, b, c, n in cur.fetchall()}
    finally:
        conn.close()


def _set_userstat(sock: Path, on: bool) -> None:
    from clusterscope.lab import mariadb
    mariadb.execute(sock, [f"SET GLOBAL userstat = {1 if on else 0}",
                           "FLUSH USER_STATISTICS"])


class Meter:
    """Process CPU, per-account database time and scrape counts over one window."""

    def __init__(self, lab, vm_url: str, socks: dict[str, Path]) -> None:
        from clusterscope.clients.vm import VM
        self.lab, self.vm, self.socks = lab, VM(vm_url), socks
        self.services = {s.name: s for s in lab.services() if s.pid}
        self.scraped = {s.name: f"{s.host}:{s.port}" for s in self.services.values()
                        if (s.extra or {}).get("scrape") and s.port}

    def snapshot(self) -> dict:
        return {"t": time.time(),
                "cpu": {n: _cpu(s.pid) for n, s in self.services.items()},
                "db": {server: _user_stats(sock) for server, sock in self.socks.items()},
                "server_cpu": {server: _cpu(self.services[server].pid)
                               for server in self.socks if server in self.services}}

    def scrapes(self, start: float, end: float) -> dict[str, int]:
        """Scrapes per component in [start, end]; `<name>@db`: probes that reached the
        server whose cost DB_PROBES attributes to it."""
        time.sleep(2)  # VictoriaMetrics answers with a 1 s latency offset
        window = int(end - start)
        selectors = {name: f'up{{instance="{instance}"}}'
                     for name, instance in self.scraped.items()}
        selectors.update({n: sel for n, sel in PROBES.items() if n in self.services})
        selectors.update({f"{n}@db": sel for n, (_, sel) in DB_PROBES.items()
                          if n in self.services})
        out = {}
        for name, sel in selectors.items():
            r = self.vm.query(f"sum(count_over_time({sel}[{window}s]))", end)
            out[name] = int(float(r[0]["value"][1])) if r else 0
        return out


def _delta(a: dict, b: dict) -> dict:
    out: dict = {"seconds": b["t"] - a["t"],
                 "cpu": {n: b["cpu"][n] - a["cpu"].get(n, 0.0) for n in b["cpu"]},
                 "server_cpu": {n: b["server_cpu"][n] - a["server_cpu"].get(n, 0.0)
                                for n in b["server_cpu"]},
                 "db": {}}
    for server, users in b["db"].items():
        before = a["db"].get(server, {})
        out["db"][server] = {u: tuple(x - y for x, y in zip(v, before.get(u, (0, 0, 0)),
                                                              strict=True))
                             for u, v in users.items()}
    return out


def _add(total: dict | None, d: dict) -> dict:
    if total is None:
        return d
    total["seconds"] += d["seconds"]
    for k in ("cpu", "server_cpu"):
        for n, v in d[k].items():
            total[k][n] = total[k].get(n, 0.0) + v
    for server, users in d["db"].items():
        for u, v in users.items():
            old = total["db"].setdefault(server, {}).get(u, (0, 0, 0))
            total["db"][server][u] = tuple(x + y for x, y in zip(old, v, strict=True))
    return total


def attribution(on: dict, off: dict, scrapes: dict[str, int], socks: dict[str, Path],
                server_of: dict[str, str]) -> dict:
    """Per component: CPU s/scrape (scraped minus unscraped, per second of window), database
    busy and CPU s/scrape and statements/scrape on the server it reads."""
    table: dict[str, dict] = {}
    for name, n in sorted(scrapes.items()):
        if not n or name.endswith("@db"):
            continue
        cpu_on = on["cpu"].get(name, 0.0)
        cpu_off = off["cpu"].get(name, 0.0) * on["seconds"] / max(off["seconds"], 1e-9)
        row = {"scrapes": n, "cpu_seconds_per_scrape": round((cpu_on - cpu_off) / n, 5),
               "idle_cpu_percent": round(100 * off["cpu"].get(name, 0.0)
                                         / max(off["seconds"], 1e-9), 2)}
        server = server_of.get(name)
        account = next((a for prefix, a in EXPORTER_ACCOUNTS.items()
                        if name.startswith(prefix)), None)
        probes = scrapes.get(f"{name}@db", n)
        if server and account and probes:
            busy, cpu, stmts = on["db"].get(server, {}).get(account, (0.0, 0.0, 0))
            row.update({"db_server": server,
                        "db_busy_seconds_per_scrape": round(busy / probes, 5),
                        "db_cpu_seconds_per_scrape": round(cpu / probes, 5),
                        "db_statements_per_scrape": round(stmts / probes, 1)})
        table[name] = row
    for name in STACK:
        if name in on["cpu"]:
            table[name] = {
                "cpu_percent_scraped": round(100 * on["cpu"][name] / on["seconds"], 2),
                "cpu_percent_unscraped": round(100 * off["cpu"].get(name, 0.0)
                                               / off["seconds"], 2)}
    return table


def run() -> dict:
    root, env = fresh_lab("cs-bench-mon-")
    try:
        run_cli(env, "lab", "up", "--galera", "--ndb", "--monitoring")
        from clusterscope.lab import galera_nodes
        from clusterscope.lab.core import Lab
        from clusterscope.lab.ndb_part import _sock as ndb_sock
        lab = Lab(root)
        cnf = Path(lab.service("galera-node1").client_config)
        scrape = Path(lab.service("victoria-metrics").extra["scrape_config"])
        full = scrape.read_text()
        none = yaml.safe_dump({"global": yaml.safe_load(full)["global"], "scrape_configs": []})
        socks = {f"galera-node{n}": galera_nodes.base(lab, n) / "mysqld.sock" for n in (1, 2, 3)}
        socks["ndb-sql"] = ndb_sock(lab)
        server_of = {name: server for name, (server, _) in DB_PROBES.items()}
        for sock in socks.values():
            _set_userstat(sock, True)
        meter = Meter(lab, f"http://127.0.0.1:{lab.service('victoria-metrics').port}", socks)
        _sysbench(cnf, "prepare")
        _sysbench(cnf, "run", 5)  # warm-up
        ratios, on_tps, off_tps = [], [], []
        on_total: dict | None = None
        off_total: dict | None = None
        scrapes: dict[str, int] = {}
        db_ratios = []
        for i in range(PAIRS):
            # alternate which goes first so a trend within a pair cancels over pairs
            order = ("on", "off") if i % 2 == 0 else ("off", "on")
            got = {}
            for mode in order:
                scrape.write_text(full if mode == "on" else none)
                time.sleep(6)  # VM re-reads the scrape file every 5 s
                a = meter.snapshot()
                got[mode] = _sysbench(cnf, "run", WINDOW_SECONDS)
                b = meter.snapshot()
                d = _delta(a, b)
                if mode == "on":
                    on_total = _add(on_total, d)
                    for name, n in meter.scrapes(a["t"], b["t"]).items():
                        scrapes[name] = scrapes.get(name, 0) + n
                    # the database's share: what the scrapes' statements took of node1's CPU
                    node1 = d["db"].get("galera-node1", {})
                    scrape_cpu = node1.get(EXPORTER_ACCOUNTS["mysqld-exporter"], (0, 0, 0))[1]
                    server = d["server_cpu"].get("galera-node1", 0.0)
                    if server > 0:
                        db_ratios.append(1 - scrape_cpu / server)
                else:
                    off_total = _add(off_total, d)
            on_tps.append(got["on"])
            off_tps.append(got["off"])
            ratios.append(got["on"] / got["off"])
        for sock in socks.values():
            _set_userstat(sock, False)
        est = paired(ratios)
        mean, lo, hi = est.mean, est.low, est.high
        figures = {"pairs": PAIRS, "window_seconds": WINDOW_SECONDS,
                   "tps_scraped_mean": round(sum(on_tps) / PAIRS, 1),
                   "tps_unscraped_mean": round(sum(off_tps) / PAIRS, 1),
                   "tps_ratio_scraped_vs_not": round(mean, 4),
                   "tps_ratio_ci95": [round(lo, 4), round(hi, 4)],
                   "target": "ratio >= 0.99"}
        if db_ratios:
            db = paired(db_ratios)
            figures["db_side_tps_ratio_estimate"] = round(db.mean, 5)
            figures["db_side_tps_ratio_ci95"] = [round(db.low, 5), round(db.high, 5)]
            figures["colocation_share_of_the_drop"] = (
                round((db.mean - mean) / (1 - mean), 2) if mean < 1 else None)
        assert on_total and off_total
        figures["attribution"] = attribution(on_total, off_total, scrapes, socks, server_of)
        return figures
    finally:
        subprocess.run([sys.executable, "-m", "clusterscope.cli", "lab", "down"], env=env,
                       capture_output=True, timeout=600)
        shutil.rmtree(root, ignore_errors=True)
