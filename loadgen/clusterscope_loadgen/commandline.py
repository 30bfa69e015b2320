"""`clusterscope-loadgen run|cycle|ddl|list` (also `clusterscope loadgen ...` in the toolkit).

The product's own command line: the container runs it, the toolkit embeds the same parser
and adds its lab commands (`start`, `stop`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from clusterscope_loadgen import config, ddl, designs, estimators

HELP = "continuous A/B experiments (FK, read backup, partitioning, batching/PK) through sysbench"


def add_arguments(sub: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """Add `loadgen` to a parent parser's sub-commands; returns loadgen's own sub-commands."""
    p = sub.add_parser("loadgen", help=HELP)
    lsub = p.add_subparsers(dest="loadgen_cmd", required=True)
    add_commands(lsub)
    return lsub


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="clusterscope-loadgen", description=HELP)
    add_commands(p.add_subparsers(dest="loadgen_cmd", required=True))
    args = p.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


def add_commands(lsub: argparse._SubParsersAction) -> None:

    def common(q: argparse.ArgumentParser) -> None:
        q.add_argument("--config", help=f"experiments file (default {config.DEFAULT_CONFIG})")
        q.add_argument("--target", action="append", required=True, metavar="CNF",
                       help="0600 [client] option file of the node to load; repeat for the"
                            " second Galera node (else found via wsrep_incoming_addresses)")
        q.add_argument("--engine", choices=ddl.ENGINES, default="galera")
        q.add_argument("--threads", type=int, help="the N of the experiment's variants")
        q.add_argument("--window", type=float, help="seconds per window")
        q.add_argument("--warmup", type=float, help="warm-up seconds before the first round")
        q.add_argument("--design", choices=designs.DESIGNS,
                       help="how the variants share the time, for every group (default: each"
                            f" group's, else the experiment's, else {designs.DEFAULT});"
                            " timesliced, windows and abba estimate the whole-workload"
                            " effect, interleaved the mixed-statement one")
        q.add_argument("--slot", type=float,
                       help="time-sliced design: seconds per slot (default: the experiment's)")
        q.add_argument("--washout", type=float,
                       help="time-sliced design: seconds left out after each switch")
        q.add_argument("--estimate-window", type=float,
                       help="estimates cover the units of the last this many seconds"
                            " (default: the experiment's, 3600)")
        q.add_argument("--estimator", choices=list(estimators.ESTIMATORS),
                       help="the overhead estimate and interval printed and exported"
                            f" (default: the experiment's, else {estimators.DEFAULT});"
                            " the JSON and the summary have every estimator")
        q.add_argument("--metrics-port", type=int, help="serve /metrics on ADDR:PORT")
        q.add_argument("--metrics-addr", default="127.0.0.1",
                       help="address for /metrics (default 127.0.0.1; 0.0.0.0 in a container)")
        q.add_argument("--cluster", help="the cluster of the description to write to; it must"
                       " say `loadgen: true` and list every --target (also the `cluster`"
                       " label of the results)")
        q.add_argument("--description", metavar="FILE",
                       help="the description of the clusters (clusterscope.yml): the loadgen"
                            " writes only to a cluster it allows (guard.py)")
        q.add_argument("--json-out", help="write windows, estimates and row checks as JSON")
        q.add_argument("--linger", type=float, default=0.0,
                       help="keep serving /metrics this many seconds after the end (so a"
                            " scraper sees the final values)")

    r = lsub.add_parser("run", help="run one experiment and print the overheads")
    r.add_argument("--experiment", required=True)
    r.add_argument("--variants", help="comma-separated subset (their baselines come along)")
    common(r)
    how = r.add_mutually_exclusive_group()
    how.add_argument("--duration", type=float, help="seconds (default: the experiment's)")
    how.add_argument("--rounds", type=int, help="number of rounds instead of a duration")
    how.add_argument("--forever", action="store_true", help="until stopped (SIGTERM)")
    r.set_defaults(func=cmd_run)

    c = lsub.add_parser("cycle", help="always-on: run the configured experiments in turn;"
                        " each experiment's estimates gather its units across the cycles")
    c.add_argument("--experiments", help="comma-separated (default: every experiment for the"
                   " engine that is not `cycle: false`)")
    common(c)
    c.add_argument("--duration", type=float,
                   help="seconds per experiment (default: each experiment's own)")
    c.add_argument("--forever", action="store_true", help="cycle until stopped")
    c.set_defaults(func=cmd_cycle)

    d = lsub.add_parser("ddl", help="print an experiment's DDL for an engine")
    d.add_argument("--experiment", required=True)
    d.add_argument("--engine", choices=ddl.ENGINES, default="galera")
    d.add_argument("--config")
    d.set_defaults(func=cmd_ddl)

    ls = lsub.add_parser("list", help="the configured experiments and variants")
    ls.add_argument("--config")
    ls.set_defaults(func=cmd_list)

    rx = lsub.add_parser("relaxation", help="measure throughput per bin after a switch of"
                         " variant (what the time-sliced design's washout must cover)")
    rx.add_argument("--experiment", required=True)
    rx.add_argument("--variants", help="comma-separated subset (their baselines come along)")
    common(rx)
    rx.add_argument("--duration", type=float, default=600.0, help="seconds (default 600)")
    rx.add_argument("--bin-ms", type=int, default=100, help="bin width (default 100 ms)")
    rx.set_defaults(func=cmd_relaxation)


def _runner_args(args: argparse.Namespace, metrics: object) -> dict:
    return {"threads": args.threads, "window": args.window, "warmup": args.warmup,
            "metrics": metrics, "cluster": args.cluster, "design": args.design,
            "estimator": args.estimator, "slot": args.slot, "washout": args.washout,
            "estimate_window": args.estimate_window}


def _targets(args: argparse.Namespace) -> list:
    """The targets, once they pass the guard: a cluster the description allows, an account
    with nothing beyond cs_* schemas, TLS as the option file asks (guard.py)."""
    from clusterscope_loadgen import guard, sysbench
    from clusterscope_loadgen.target import Target, TargetError, check_ndb
    targets = [Target.from_cnf(p) for p in args.target]
    guard.allowed_cluster(args.description, args.cluster, args.engine, targets)
    if args.engine == "ndb":
        for t in targets:  # an SQL node without the NDB engine is named before its grants
            check_ndb(t)
    guard.check(args.description, args.cluster, args.engine, targets,
                say=lambda m: print(m, file=sys.stderr, flush=True))
    try:
        sysbench.use_tls(targets[0].tls)
    except ValueError as exc:
        raise TargetError(f"{targets[0].path}: {exc}") from None
    return targets


def _metrics(args: argparse.Namespace):  # noqa: ANN202
    from clusterscope_loadgen.metrics import Metrics
    m = Metrics()
    if args.metrics_port:
        m.serve(args.metrics_port, args.metrics_addr)
        print(f"loadgen: metrics on http://{args.metrics_addr}:{args.metrics_port}/metrics",
              flush=True)
    return m


def _errors() -> tuple[type[Exception], ...]:
    from clusterscope_loadgen.guard import GuardError
    from clusterscope_loadgen.runner import RunError
    from clusterscope_loadgen.target import TargetError
    return (config.ConfigError, RunError, TargetError, GuardError, ddl.DDLError, OSError)


def cmd_run(args: argparse.Namespace) -> int:
    from clusterscope_loadgen.runner import Runner
    try:
        exp = config.experiment(args.experiment, args.config)
        only = [v.strip() for v in args.variants.split(",")] if args.variants else None
        targets = _targets(args)
        runner = Runner(exp, args.engine, targets, only=only,
                        **_runner_args(args, _metrics(args)))
        result = runner.run(duration=args.duration, rounds=args.rounds, forever=args.forever)
    except _errors() as exc:
        print(f"loadgen: {exc}", file=sys.stderr)
        return 2
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=1, default=str))
    _linger(args)
    bad = [v for v in result["verification"] if v.get("ok") is False]
    return 1 if bad else 0


def cycle_names(exps: dict, engine: str, asked: str | None) -> list[str]:
    """The experiments a cycle runs: those asked for, else every one for the engine that is
    part of the always-on set."""
    if asked:
        names = [n.strip() for n in asked.split(",")]
        unknown = [n for n in names if n not in exps]
        if unknown:
            raise config.ConfigError(f"no experiment(s) {', '.join(unknown)} in the config")
        return names
    return [n for n, e in exps.items() if e.cycle
            and any(v.runs_on(engine) for v in e.variants)
            and not (e.kind == "read_backup" and engine == "innodb")]


def cmd_cycle(args: argparse.Namespace) -> int:
    from clusterscope_loadgen.runner import Runner
    try:
        exps = config.load(args.config)
        names = cycle_names(exps, args.engine, args.experiments)
        targets = _targets(args)  # the guard, before /metrics is served
        metrics = _metrics(args)
        # One runner per experiment for the whole cycle: each keeps its units, so its
        # estimates gather the units of every pass inside their sliding window.
        runners = {name: Runner(exps[name], args.engine, targets,
                                **_runner_args(args, metrics)) for name in names}
        results = []
        stopped = False
        while not stopped:
            for runner in runners.values():
                results.append(runner.run(duration=args.duration))
                stopped = runner.stopped
                if stopped:
                    break
            if not args.forever:
                break
            if args.json_out:  # a forever cycle keeps only its newest pass per experiment
                results = results[-len(runners):]
    except _errors() as exc:
        print(f"loadgen: {exc}", file=sys.stderr)
        return 2
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(results, indent=1, default=str))
    _linger(args)
    return 0


def cmd_relaxation(args: argparse.Namespace) -> int:
    from clusterscope_loadgen import relaxation
    from clusterscope_loadgen.runner import Runner
    try:
        exp = config.experiment(args.experiment, args.config)
        only = [v.strip() for v in args.variants.split(",")] if args.variants else None
        runner = Runner(exp, args.engine, _targets(args), only=only,
                        **_runner_args(args, None))
        result = relaxation.measure(runner, args.duration, args.bin_ms)
    except _errors() as exc:
        print(f"loadgen: {exc}", file=sys.stderr)
        return 2
    print(relaxation.render(result))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=1, default=str))
    return 0


def _linger(args: argparse.Namespace) -> None:
    if args.metrics_port and args.linger > 0:
        import time
        try:
            time.sleep(args.linger)
        except KeyboardInterrupt:
            pass


def cmd_ddl(args: argparse.Namespace) -> int:
    try:
        exp = config.experiment(args.experiment, args.config)
        tables = exp.tables(args.engine)
    except (config.ConfigError, ddl.DDLError) as exc:
        print(f"loadgen: {exc}", file=sys.stderr)
        return 2
    for stmt in tables.values():
        print(stmt + ";\n")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    try:
        exps = config.load(args.config)
    except config.ConfigError as exc:
        print(f"loadgen: {exc}", file=sys.stderr)
        return 2
    for e in exps.values():
        print(f"{e.name} ({e.kind}){'' if e.cycle else ' [not in cycle]'}: {e.description}")
        for v in e.variants:
            vs = f" vs {v.baseline}" if v.baseline else " (baseline)"
            eng = f" [{', '.join(v.engines)}]" if v.engines else ""
            print(f"  {v.name}{vs}{eng}")
    return 0
