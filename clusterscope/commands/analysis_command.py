"""`clusterscope compare`, `clusterscope baseline`, `clusterscope report`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import fields
from pathlib import Path

from clusterscope.analysis import change_verdicts, compare, report
from clusterscope.analysis.baseline import pin_to_vm
from clusterscope.analysis.periods import FORMS, Period, PeriodError
from clusterscope.analysis.quantities import default_quantities
from clusterscope.clients.vlogs import VLogsError
from clusterscope.clients.vm import VMError
from clusterscope.commands import vm_options
from clusterscope.commands.logs_command import parse_duration
from clusterscope.lab import endpoints
from clusterscope.lab.endpoints import Source

BASELINES_ENV = "CLUSTERSCOPE_BASELINES_DIR"


def add_arguments(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("compare", help="before/after comparison with 95%% intervals")
    c.add_argument("--before", metavar="START..END", help=f"a period; a time is {FORMS}")
    c.add_argument("--before-baseline", metavar="NAME", help="a pinned baseline instead")
    c.add_argument("--after", required=True, metavar="START..END", help="a period")
    c.add_argument("--experiment", help="only this loadgen experiment")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument("--all", action="store_true", dest="show_all",
                   help="also the aggregate rows (a restart phase that sums others)")
    _common(c)
    c.set_defaults(func=cmd_compare)

    b = sub.add_parser("baseline", help="pin a period's samples as a named baseline")
    bsub = b.add_subparsers(dest="baseline_cmd", required=True)
    pin = bsub.add_parser("pin", help="store the samples of a period under NAME")
    pin.add_argument("name")
    pin.add_argument("--period", required=True, metavar="START..END",
                     help=f"a period; a time is {FORMS}")
    _common(pin, write=True)
    ls = bsub.add_parser("list", help="the pinned baselines")
    _common(ls)
    b.set_defaults(func=cmd_baseline)

    r = sub.add_parser("report", help="write the self-contained HTML report")
    r.add_argument("--out", required=True, help="directory for index.html")
    r.add_argument("--period", default="now-30m..now", metavar="START..END",
                   help="the period shown (default: the last 30 minutes)")
    r.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                   help="also include a before/after comparison of two periods")
    r.add_argument("--before-baseline", metavar="NAME",
                   help="also include the comparison of a pinned baseline with --after")
    r.add_argument("--after", metavar="START..END",
                   help="with --before-baseline: the period after (default: --period)")
    r.add_argument("--change-settle", type=parse_duration, default=change_verdicts.default_settle(),
                   help="each change's comparison leaves this out after its last step"
                        " (default 2m)")
    r.add_argument("--change-period", type=parse_duration, default=change_verdicts.default_period(),
                   help="each side of a change's comparison (default 1h)")
    r.add_argument("--logs-url", help="the VictoriaLogs with the change lines (default"
                   f" ${endpoints.VLOGS_URL_ENV}, else the lab's); without one the report"
                   " lists no changes and says so")
    _common(r)
    r.set_defaults(func=cmd_report)


def _common(p: argparse.ArgumentParser, write: bool = False) -> None:
    vm_options.add_arguments(p, write=write)
    p.add_argument("--quantities", help="JSON file of quantities to compare (default: built-in)")
    p.add_argument("--only", metavar="NAME[,NAME]",
                   help="only these quantities, by name (e.g. ndb_restart_total,ndb_restart_phase)")
    p.add_argument("--baselines-dir",
                   help=f"where pinned baselines live (default ${BASELINES_ENV}, else"
                        " <lab>/baselines reading the lab, else"
                        " ~/.local/share/clusterscope/baselines)")


def _quantities(args: argparse.Namespace) -> list[compare.Quantity]:
    if not args.quantities:
        quantities = list(default_quantities())
    else:
        names = {f.name for f in fields(compare.Quantity)}
        items = json.loads(Path(args.quantities).read_text())
        quantities = [compare.Quantity(**{k: (tuple(v) if k in ("by", "aggregate") else v)
                                          for k, v in item.items() if k in names})
                      for item in items]
    if getattr(args, "only", None):
        wanted = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = wanted - {q.key for q in quantities}
        if unknown:
            raise ValueError(f"--only: unknown quantities {sorted(unknown)}; known: "
                             + ", ".join(q.key for q in quantities))
        quantities = [q for q in quantities if q.key in wanted]
    return quantities


def _baselines_dir(args: argparse.Namespace, src: Source | None) -> Path:
    if args.baselines_dir:
        return Path(args.baselines_dir)
    if os.environ.get(BASELINES_ENV):
        return Path(os.environ[BASELINES_ENV])
    if src is not None and src.lab:
        return Path(src.lab) / "baselines"
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "clusterscope" / "baselines"


def cmd_compare(args: argparse.Namespace) -> int:
    try:
        quantities = _quantities(args)
        src = vm_options.source(args)
        vm = src.vm
        after_p = Period.parse(args.after)
        after = compare.collect(vm, quantities, after_p, args.experiment)
        if args.before_baseline:
            path = _baselines_dir(args, src) / f"{args.before_baseline}.json"
            if not path.exists():
                print(f"compare: no pinned baseline {args.before_baseline!r} in {path.parent}",
                      file=sys.stderr)
                return 2
            before, before_p = compare.load_samples(path)
            if args.experiment:  # the pin holds every experiment's samples
                before = {q: {key: v for key, v in per.items()
                              if dict(key).get("experiment", args.experiment) == args.experiment}
                          for q, per in before.items()}
            before_label = f"baseline {args.before_baseline} ({before_p})"
        elif args.before:
            before_p = Period.parse(args.before)
            before = compare.collect(vm, quantities, before_p, args.experiment)
            before_label = str(before_p)
        else:
            print("compare: give --before START..END or --before-baseline NAME", file=sys.stderr)
            return 2
    except (PeriodError, VMError, OSError, ValueError) as exc:
        print(f"compare: {exc}", file=sys.stderr)
        return 1
    rows = compare.compare_samples(quantities, before, after)
    if args.json:
        print(json.dumps({"before": before_label, "after": str(after_p),
                          "source": src.vm.url, "clusters": compare.clusters(rows),
                          "rows": compare.rows_json(rows)}, indent=1))
    else:
        print(compare.render_table(rows, before_label, str(after_p), show_all=args.show_all,
                                   source=src.describe())
              if rows else
              f"compare: no data in either period in {src.describe()}")
    return 0


def cmd_baseline(args: argparse.Namespace) -> int:
    if args.baseline_cmd == "list":
        try:
            src: Source | None = vm_options.source(args)
        except VMError:
            src = None  # listing reads only files
        d = _baselines_dir(args, src)
        for f in sorted(d.glob("*.json")):
            data = json.loads(f.read_text())
            print(f"{f.stem}\t{Period(data['period']['start'], data['period']['end'])}")
        return 0
    try:
        period = Period.parse(args.period)
        quantities = _quantities(args)
        src = vm_options.source(args)
        samples = compare.collect(src.vm, quantities, period)
    except (PeriodError, VMError, OSError, ValueError) as exc:
        print(f"baseline: {exc}", file=sys.stderr)
        return 1
    d = _baselines_dir(args, src)
    compare.save_samples(d / f"{args.name}.json", samples, period,
                         {"name": args.name, "source": src.vm.url})
    n = sum(len(v) for per in samples.values() for v in per.values())
    print(f"baseline {args.name}: {n} samples of {period} pinned in {d / args.name}.json")
    # The alerting rules (NdbRestartTimeAbovePinned, ExperimentOverheadChanged) read the pin
    # from VictoriaMetrics, so the same baseline is also written there as series.

    try:
        counts = pin_to_vm(src.vm, args.name, period.end)
    except (VMError, OSError, ValueError) as exc:
        print(f"baseline: samples saved, but pinning in VictoriaMetrics failed: {exc}",
              file=sys.stderr)
        return 1
    print(f"baseline {args.name}: pinned for the alerting rules in {src.vm.write_url}: "
          + ", ".join(f"{k} {v} series" for k, v in sorted(counts.items())))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    try:
        src = vm_options.source(args)
        vm = src.vm
        period = Period.parse(args.period)
        comparison = None
        if args.compare and args.before_baseline:
            raise ValueError("give --compare BEFORE AFTER or --before-baseline NAME, not both")
        if args.compare:
            quantities = _quantities(args)
            pb, pa = Period.parse(args.compare[0]), Period.parse(args.compare[1])
            comparison = (pb, pa, compare.compare_samples(
                quantities, compare.collect(vm, quantities, pb),
                compare.collect(vm, quantities, pa)))
        elif args.before_baseline:
            quantities = _quantities(args)
            path = _baselines_dir(args, src) / f"{args.before_baseline}.json"
            if not path.exists():
                raise ValueError(f"no pinned baseline {args.before_baseline!r} in {path.parent}")
            before, pb = compare.load_samples(path)
            pa = Period.parse(args.after) if args.after else period
            comparison = (pb, pa, compare.compare_samples(
                quantities, before, compare.collect(vm, quantities, pa)))
        judged, notes = _changes(args, src, period)
        path = report.write(vm, period, Path(args.out), comparison, notes=notes,
                            source=src.describe(), changes=judged)
    except (PeriodError, VMError, OSError, ValueError) as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 1
    print(f"report: {path}")
    return 0


def _changes(args: argparse.Namespace, src: Source, period: Period
             ) -> tuple[list[change_verdicts.Judgement] | None, list[str]]:
    """The changes with a step in the report's period, each judged on its own; none (and a
    note saying why) without a VictoriaLogs to read them from."""
    try:
        vlogs = endpoints.logs_for(src, args.logs_url, getattr(args, "vm_credentials", None),
                                   getattr(args, "vm_ca", None))
        found = change_verdicts.read(vlogs, period.start, period.end)
    except VLogsError as exc:
        return None, [f"Configuration and version changes are not listed: {exc}"]
    quantities = _quantities(args)
    return [change_verdicts.judge(src.vm, c, found, quantities, settle=args.change_settle,
                          period=args.change_period) for c in found], []
