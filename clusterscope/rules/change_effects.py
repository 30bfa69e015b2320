# ruff: noqa: E501  (PromQL and template text read better unbroken)
"""Changes: a configuration or version change whose own comparison found an effect.

`clusterscope changes --notify` (in the lab the service change-judge; analysis/change_verdicts.py)
compares each change once its period after has ended and writes each compared row's
effect as `clusterscope_change_effect_ratio` (and `_lower_ratio`/`_upper_ratio`, its 95%
interval) at the end of that period, labelled with the change's kind and name, the
quantity, the row's own series and the verdict. An effect whose interval excludes zero
(verdict better or worse) is notified once, as info, through the same Alertmanager routes
as every alert; the sample is held `changes.effect_hold` so the notification goes out.
"""

from __future__ import annotations

from clusterscope.rules.rule_model import Alert, Group, Runbook

FIRST_STEPS = """First, with the toolkit pointed at the stack's VictoriaMetrics and VictoriaLogs
(`--vm URL --logs-url URL`, or the environment):

```sh
clusterscope changes --since 1d --cluster <cluster>   # what moved from what to what, where, when,
                                                      # and each change's whole comparison
clusterscope report --out report                      # a page per change: changes/<id>.html
```"""

# the labels a row's series may carry (compare's Quantity.by), matched to read its interval
ROW_LABELS = ("cluster", "quantity", "change_kind", "change_name", "experiment", "variant",
              "baseline", "node_id", "phase", "node", "kind", "verdict")


def groups(c: dict) -> list[Group]:
    return [Group("changes", "changes.yml", alerts=[_effect(c)], first_steps=FIRST_STEPS)]


def _bound(name: str, hold: str) -> str:
    """The row's interval bound, read in the description's template."""
    matchers = ",".join(f"{k}=%q" for k in ROW_LABELS)
    args = " ".join(f"$labels.{k}" for k in ROW_LABELS)
    return (f'{{{{ with query (printf "last_over_time(clusterscope_change_effect_{name}_ratio'
            f'{{{matchers}}}[{hold}])" {args}) }}}}{{{{ . | first | value | humanizePercentage }}}}'
            "{{ end }}")


def _effect(c: dict) -> Alert:
    hold = c["changes"]["effect_hold"]
    return Alert(
        name="ChangeEffectSignificant",
        expr=f'last_over_time(clusterscope_change_effect_ratio{{verdict=~"better|worse"}}[{hold}])',
        severity="info",
        summary="{{ $labels.change_name }} ({{ $labels.change_kind }}) on {{ $labels.cluster }}:"
                " {{ $labels.quantity }} {{ $labels.verdict }} by {{ $value | humanizePercentage }}",
        description="The {{ $labels.change_kind }} change of {{ $labels.change_name }} on"
                    " {{ $labels.cluster }}, compared on its own (the period before its first step"
                    " against the period after its last step and a settle window), moved"
                    " {{ $labels.quantity }} {{ $labels.experiment }} {{ $labels.variant }}"
                    "{{ $labels.node_id }}{{ $labels.phase }} by {{ $value | humanizePercentage }}"
                    " (after - before, relative to before; percentage points for an overhead),"
                    f" 95% interval {_bound('lower', hold)} to {_bound('upper', hold)}:"
                    " {{ $labels.verdict }}. `clusterscope changes --cluster {{ $labels.cluster }}`"
                    " has the change (from what to what, where, when) and its whole comparison.",
        dashboard="experiments",
        per_node=False,
        runbook=Runbook(
            meaning="A configuration or version change (a global variable, a wsrep provider"
                    " option, an NDB parameter, a version; found by the change detector) was"
                    " compared on its own once its period after had ended, and a quantity the"
                    " stack measures (loadgen throughput or latency, an experiment's overhead,"
                    " NDB restart time, LDM CPU, Galera recovery time) differs between the"
                    " period before its first step and the period after its last step, with a"
                    " 95% interval that excludes no change.",
            impact="Information: the change costs or saves what the effect says, on this staging"
                   " cluster under the loadgen's workload. Decide whether it goes to production.",
            diagnosis="- The change's rows: which quantities moved, with both periods' n; a row"
                      " with few samples on a side is weak evidence.\n"
                      "- Another change inside the periods (the listing says so) or a loadgen"
                      " that changed its own setup makes the comparison see both.",
            mitigation="If the effect is unwanted, revert the change (SET GLOBAL, the option file, the"
                       " package) and let the detector find the revert: it gets its own"
                       " comparison. If it is wanted, nothing to do.",
            benign="a change made while the cluster's load changed for another reason (the"
                   " comparison cannot tell them apart); a period too short for the loadgen's"
                   " cycle (`--period`, `changes.period` in rules/config.yaml)."))
