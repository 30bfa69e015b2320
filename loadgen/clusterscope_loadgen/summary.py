"""A run's result as the text `loadgen run` prints: every figure with what it estimates."""

from __future__ import annotations

import math

ESTIMAND_TEXT = {
    "whole_workload": "whole_workload: every thread on the variant vs every thread on the"
                      " baseline",
    "mixed_statement": "mixed_statement: relative per-statement latency in a load that mixes"
                       " the variants (equals the whole-workload effect only for some costs)",
}


def _pct(x: float | None) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x * 100:+.1f}%"


def _points(x: float | None) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x * 100:.1f} points"


def _variants(ws: list[dict]) -> list[str]:
    lines = []
    for name in dict.fromkeys(w["variant"] for w in ws):
        mine = [w for w in ws if w["variant"] == name]
        ok = [w for w in mine if w["valid"]]
        tp = sum(w["throughput"] for w in ok) / len(ok) if ok else math.nan
        p95 = sum(w["latency"].get("0.95", 0) for w in ok) / len(ok) if ok else math.nan
        sat = sum(1 for w in mine if w["saturated"])
        stale = sum(w["stale"] for w in ok)
        lines.append(f"  {name:<16} {tp:10.1f}/s  p95 {p95 * 1000:8.2f} ms  valid"
                     f" {len(ok)}/{len(mine)} windows"
                     + (f"  stale reads {stale / max(1, sum(w['transactions'] for w in ok)):.1%}"
                        if stale else "")
                     + (f"  (loadgen saturated in {sat})" if sat else ""))
    return lines


def _estimate(name: str, est: dict) -> list[str]:
    o, lr = est["overhead"], est["latency_ratio"]
    level = est.get("confidence", 0.95)
    primary = " (primary)" if est.get("primary") else ""
    span = est.get("window_seconds")
    units = f"{o['n']} units" + (f" of the last {span:g} s" if span else "")
    holm = est.get("holm_p_value")
    verdict = ("" if holm is None or math.isnan(holm) else
               f"; {'significant' if est.get('significant') else 'not significant'}"
               f" (Holm p {holm:.3f})")
    lines = [f"  overhead {name} vs {est['baseline']}{primary} [{est.get('estimand', '?')}]:"
             f" {_pct(o['mean'])} [{level * 100:.4g}% CI {_pct(o['low'])}, {_pct(o['high'])}] over"
             f" {units}{verdict}",
             f"    detectable change (95%, 80% power): {_points(o['min_detectable'])} vs 0,"
             f" {_points(o.get('min_detectable_difference'))} before/after;"
             f" p95 latency x{lr['mean']:.2f}"]
    others = [f"{key} {_pct(e['mean'])} [{_pct(e['low'])}, {_pct(e['high'])}]"
              for key, e in est.get("estimators", {}).items()
              if key != est.get("estimator") and not math.isnan(e["low"])]
    if others:
        lines.append("    by other estimators: " + "; ".join(others))
    return lines


def _rows(verification: list[dict]) -> list[str]:
    lines = []
    earlier = [v for v in verification if v.get("before_truncate")]
    if earlier and all(v["ok"] for v in earlier):
        tables = len({v["table"] for v in earlier})
        lines.append(f"  rows: checked before each of {len(earlier) // tables} truncations"
                     " (trims back to the pre-fill) at max_rows: all OK")
    for v in verification:
        if v.get("before_truncate") and v["ok"]:
            continue
        if v.get("ok") is None:
            lines.append(f"  rows {v.get('table', '')}: {v['note']}")
            continue
        if v.get("note"):
            lines.append(f"  rows {v['table']}: {v['note']}")
        lines.append(f"  rows {v['table']}: found {v['found']}, expected"
                     f" {v['expected_low']}..{v['expected_high']}:"
                     f" {'OK' if v['ok'] else 'MISMATCH'}")
    return lines


def summary(result: dict) -> str:
    ws = [w for w in result["windows"] if not w["warmup"]]
    how = (f", design {result['design']}, estimator {result['estimator']}"
           if "design" in result else "")
    lines = [f"experiment {result['experiment']} ({result['engine']}, {result['target']}"
             f"{how}):", *_variants(ws)]
    estimands = result.get("estimands") or sorted(
        {e.get("estimand", "") for e in result["estimates"].values()} - {""})
    for key in estimands:
        lines.append(f"  estimand {ESTIMAND_TEXT.get(key, key)}")
    if result["estimates"] and result.get("intervals"):
        lines.append(f"  {result['intervals']}")
    for name, est in result["estimates"].items():
        lines += _estimate(name, est)
    lines += _rows(result["verification"])
    return "\n".join(lines)
