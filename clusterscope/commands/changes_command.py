"""`clusterscope changes`: the configuration and version changes found on the clusters,
grouped across rolling steps, each with its before/after comparison once its period is
over (`--notify` writes the verdicts for the alert rules; `--watch` keeps doing it)."""

from __future__ import annotations

import argparse
import json
import sys
import time

from clusterscope.analysis import change_verdicts, compare
from clusterscope.analysis.periods import FORMS, PeriodError, parse_time
from clusterscope.clients.vlogs import VLogsError
from clusterscope.clients.vm import VMError
from clusterscope.commands import vm_options
from clusterscope.commands.analysis_command import _quantities
from clusterscope.commands.logs_command import parse_duration
from clusterscope.lab import endpoints

ROWS_SHOWN = 8


def add_arguments(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("changes", help="configuration and version changes, each compared"
                       " before/after on its own")
    p.add_argument("--since", default="24h", metavar="DURATION|TIME",
                   help=f"changes from (a duration back from now, e.g. 2h, or a time: {FORMS});"
                        " default 24h")
    p.add_argument("--until", default="now", metavar="TIME", help="changes up to (default now)")
    p.add_argument("--cluster", help="only this cluster")
    p.add_argument("--settle", type=parse_duration, default=change_verdicts.default_settle(),
                   help="left out after a change's last step before the period after"
                        " (default 2m)")
    p.add_argument("--period", type=parse_duration, default=change_verdicts.default_period(),
                   help="each side of the comparison; long enough for the loadgen's cycle"
                        " to run every experiment on both sides (default 1h)")
    p.add_argument("--experiment", help="compare only this loadgen experiment")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--all", action="store_true", dest="show_all",
                   help="every compared row (default: the telling ones, at most"
                        f" {ROWS_SHOWN} per change)")
    p.add_argument("--notify", action="store_true",
                   help="write each judged change's effects to VictoriaMetrics, where the"
                        " alert rules notify a significant one")
    p.add_argument("--watch", type=parse_duration, metavar="INTERVAL",
                   help="with --notify: repeat every INTERVAL until interrupted")
    p.add_argument("--logs-url", help="the VictoriaLogs the change lines are in (default"
                   f" ${endpoints.VLOGS_URL_ENV}, else the lab's with the lab's VictoriaMetrics)")
    vm_options.add_arguments(p, write=True)
    p.add_argument("--quantities", help="JSON file of quantities to compare (default: built-in)")
    p.add_argument("--only", metavar="NAME[,NAME]", help="only these quantities, by name")
    p.set_defaults(func=cmd_changes)


def _since(text: str, now: float) -> float:
    try:
        return now - parse_duration(text)
    except argparse.ArgumentTypeError:
        return parse_time(text, now)


def _once(args: argparse.Namespace) -> tuple[list[change_verdicts.Judgement], str]:
    now = time.time()
    src = vm_options.source(args)
    vlogs = endpoints.logs_for(src, args.logs_url, getattr(args, "vm_credentials", None),
                               getattr(args, "vm_ca", None))
    start, end = _since(args.since, now), parse_time(args.until, now)
    quantities = _quantities(args)
    found = change_verdicts.read(vlogs, start, end, args.cluster)
    judged = [change_verdicts.judge(src.vm, c, found, quantities, settle=args.settle,
                            period=args.period, experiment=args.experiment, now=now)
              for c in found]
    if args.notify:
        change_verdicts.notify(src.vm, judged)
    where = f"changes in {vlogs.url}, compared in {src.describe()}"
    return judged, where


def cmd_changes(args: argparse.Namespace) -> int:
    if args.watch and not args.notify:
        print("changes: --watch repeats --notify; give both", file=sys.stderr)
        return 2
    while True:
        try:
            judged, where = _once(args)
        except (PeriodError, VMError, VLogsError, OSError, ValueError) as exc:
            print(f"changes: {exc}", file=sys.stderr)
            if not args.watch:
                return 1
        else:
            if args.watch:  # a daemon's log: one line per round, not the listing
                done = [j for j in judged if not j.pending]
                print(f"changes: {len(judged)} listed, {len(done)} judged"
                      f" ({sum(1 for j in done if j.verdict.startswith(('better', 'worse')))}"
                      " with a significant effect); effects written", flush=True)
            elif args.json:
                print(json.dumps({"source": where, "settle": args.settle,
                                  "period": args.period,
                                  "changes": [change_verdicts.judgement_json(j) for j in judged]},
                                 indent=1), flush=True)
            else:
                print(render(judged, where, args.settle, args.period, args.show_all),
                      flush=True)
        if not args.watch:
            return 0
        time.sleep(args.watch)


def _ts(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(t))


def render(judged: list[change_verdicts.Judgement], where: str, settle: float, period: float,
           show_all: bool = False) -> str:
    lines = [f"{len(judged)} change(s); {where}; each compared over {period:g} s before its"
             f" first step and {period:g} s after its last step + {settle:g} s to settle"]
    for j in judged:
        c = j.change
        when = _ts(c.start) + (f" .. {_ts(c.end)}" if c.end > c.start else "")
        sim = "  SIMULATED" if c.simulated else ""
        lines += ["", f"{when}  {c.cluster}  {c.kind}: {c.what()}{sim}",
                  f"    where   {c.where()}",
                  f"    change  {c.change_id}"
                  + (f" (first seen after {_ts(c.first.since)})" if c.first.since else "")]
        verdict = f"    verdict {j.verdict}"
        if not j.pending:
            verdict += f" (before {j.before}, after {j.after})"
        lines.append(verdict)
        if j.overlaps:
            lines.append("    note    the periods also hold change(s) " + ", ".join(j.overlaps)
                         + ": the comparison sees them too")
        lines += [f"      {row}" for row in _rows(j, show_all)]
    return "\n".join(lines)


def _rows(j: change_verdicts.Judgement, show_all: bool) -> list[str]:
    both = [r for r in j.rows if r.before.n and r.after.n and not r.aggregate]
    ordered = [r for group in compare.ranked(both) for r in group]
    shown = ordered if show_all else ordered[:ROWS_SHOWN]
    out = []
    for r in shown:
        series = " ".join(v for k, v in r.series.items()
                          if v and k not in ("cluster", compare.SIMULATED_LABEL))
        out.append(f"{r.group}: {r.title} {series}: {compare.cell(r.before, r.unit)} ->"
                   f" {compare.cell(r.after, r.unit)}; {compare.difference_text(r)}"
                   f"  {r.verdict}{' (SIMULATED)' if r.simulated else ''}")
    if len(ordered) > len(shown):
        out.append(f"({len(ordered) - len(shown)} more rows: --all)")
    return out
