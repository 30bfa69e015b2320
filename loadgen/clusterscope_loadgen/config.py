"""The experiments file: parsing and validation (errors name the experiment)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from clusterscope_loadgen import ddl
from clusterscope_loadgen.designs import DESIGNS
from clusterscope_loadgen.estimators import ESTIMATORS
from clusterscope_loadgen.variant import Variant

DEFAULT_CONFIG = Path(__file__).with_name("experiments.yaml")
LUA_DIR = Path(__file__).with_name("lua")
SCRIPTS = {"fk": "cs_fk.lua", "read_backup": "cs_readown.lua",
           "partitioning": "cs_part.lua", "batching_pk": "cs_batch.lua",
           "inject": "cs_inject.lua"}
EXPERIMENT_KEYS = {"kind", "description", "threads", "window", "warmup", "duration",
                   "max_rows", "table_rows", "options", "variants", "ndb_partition_balance",
                   "design", "estimator", "primary", "slot", "washout", "estimate_window",
                   "cycle"}
VARIANT_KEYS = {"name", "table", "baseline", "threads", "writers", "reader", "engines",
                "rows_per_event", "options", "design"}
DEFAULT_KEYS = {"window", "warmup", "duration", "max_rows", "table_rows", "design",
                "estimator", "slot", "washout", "estimate_window"}
# Variant names and option values travel to the Lua scripts in --mix (cs_common.lua).
_NAME = re.compile(r"^[A-Za-z0-9_]+$")
_MIX_UNSAFE = re.compile(r"[|;\s]")


class ConfigError(ValueError):
    """The experiments file is wrong; the message names the file and experiment."""


@dataclass(frozen=True)
class Experiment:
    name: str
    kind: str
    description: str
    threads: int
    window: float
    warmup: float
    duration: float
    max_rows: int
    options: dict[str, Any]
    variants: tuple[Variant, ...]
    ndb_partition_balance: str | None = None
    design: str | None = None  # None: designs.DEFAULT (or --design); a group's own wins
    estimator: str | None = None  # None: estimators.DEFAULT (or --estimator)
    table_rows: int = 0  # written tables are pre-filled to this many rows and held there
    primary: str | None = None  # the comparison shown at 95%; None: the first compared
    slot: float = 2.0  # time-sliced design: seconds per slot
    washout: float = 0.5  # time-sliced design: seconds left out after each switch
    estimate_window: float = 3600.0  # estimates cover the units of this many seconds
    cycle: bool = True  # part of `loadgen cycle`'s default set

    @property
    def compared(self) -> list[str]:
        """The variants compared with a baseline, primary first."""
        names = [v.name for v in self.variants if v.baseline]
        if self.primary in names:
            names.remove(self.primary)
            names.insert(0, self.primary)
        return names

    @property
    def script(self) -> Path:
        return LUA_DIR / SCRIPTS[self.kind]

    def tables(self, engine: str) -> dict[str, str]:
        """Table name -> CREATE TABLE for this experiment on an engine (parents first)."""
        options = ({"ndb_partition_balance": self.ndb_partition_balance}
                   if self.kind == "partitioning" else {})
        return ddl.tables_for(self.kind, engine, **options)

    def variants_for(self, engine: str, only: list[str] | None = None) -> list[Variant]:
        chosen = [v for v in self.variants if v.runs_on(engine)]
        if only:
            unknown = set(only) - {v.name for v in chosen}
            if unknown:
                raise ConfigError(f"experiment {self.name}: no variant(s) "
                                  f"{', '.join(sorted(unknown))} for engine {engine}")
            # A variant needs its baseline in the same run to be compared.
            wanted = set(only) | {v.baseline for v in chosen if v.name in only and v.baseline}
            chosen = [v for v in chosen if v.name in wanted]
        if not chosen:
            raise ConfigError(f"experiment {self.name}: no variant runs on engine {engine}")
        return chosen


def _fail(source: Path | str, exp: object, msg: str) -> ConfigError:
    where = f"{source}: experiment {exp}" if exp is not None else str(source)
    return ConfigError(f"{where}: {msg}")


# NDB_TABLE's PARTITION_BALANCE values (MySQL Reference Manual, "Setting NDB_TABLE
# Options"); the value goes into the CREATE TABLE's COMMENT, so nothing else may.
PARTITION_BALANCES = ("FOR_RP_BY_NODE", "FOR_RA_BY_NODE", "FOR_RP_BY_LDM", "FOR_RA_BY_LDM",
                      "FOR_RA_BY_LDM_X_2", "FOR_RA_BY_LDM_X_3", "FOR_RA_BY_LDM_X_4")
_OPTION = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")  # becomes a --name=value of sysbench


def _positive(value: Any, what: str, source: Path | str, exp: str) -> float:
    if (not isinstance(value, int | float) or isinstance(value, bool) or value < 0
            or not math.isfinite(value)):
        raise _fail(source, exp, f"{what} must be a non-negative number, not {value!r}")
    return float(value)


def _count(value: Any, what: str, source: Path | str, exp: str, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise _fail(source, exp, f"{what} must be an integer >= {least}, not {value!r}")
    return value


def _name(value: Any, what: str, source: Path | str, exp: str | None) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _fail(source, exp, f"{what} must be a name, not {value!r}")
    text = str(value)
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}", text):
        raise _fail(source, exp, f"{what} {text!r} must be letters, digits, _ . - (at most 64)")
    return text


def _mix_safe(opts: dict[str, Any], what: str, source: Path | str, exp: str
              ) -> dict[str, Any]:
    """A variant's options travel inside the interleaved design's `--mix` string
    (designs.py): no value may hold its separators."""
    for key, value in opts.items():
        if _MIX_UNSAFE.search(str(value)):
            raise _fail(source, exp, f"{what}: option {key}={value!r}: values have no |, ;"
                                     " or space")
    return opts


def _options(value: Any, what: str, source: Path | str, exp: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(source, exp, f"{what} must be a mapping, not {value!r}")
    for k, v in value.items():
        if not isinstance(k, str) or not _OPTION.fullmatch(k):
            raise _fail(source, exp, f"{what}: option name {k!r} must be letters, digits, _ -")
        if not isinstance(v, str | int | float | bool) or (
                isinstance(v, float) and not math.isfinite(v)):
            raise _fail(source, exp, f"{what}: option {k} must be a number, a string or"
                                     f" true/false, not {v!r}")
        if isinstance(v, str) and any(c in v for c in "\n\r\0"):
            raise _fail(source, exp, f"{what}: option {k} holds a control character")
    return dict(value)


def _variant(raw: Any, source: Path | str, exp: str) -> Variant:
    if not isinstance(raw, dict) or "name" not in raw or "table" not in raw:
        raise _fail(source, exp, f"each variant needs at least name and table: {raw!r}")
    name = _name(raw["name"], "variant name", source, exp)
    unknown = set(map(str, raw)) - VARIANT_KEYS
    if unknown:
        raise _fail(source, exp, f"variant {name}: unknown key(s) "
                                 f"{', '.join(sorted(unknown))}")
    threads = raw.get("threads", "N")
    if threads != "N" and (isinstance(threads, bool) or not isinstance(threads, int)
                           or threads < 1):
        raise _fail(source, exp, f"variant {name}: threads must be a positive integer"
                                 f" or N, not {threads!r}")
    writers = raw.get("writers", 1)
    if isinstance(writers, bool) or writers not in (1, 2):
        raise _fail(source, exp, f"variant {name}: writers must be 1 or 2")
    reader = raw.get("reader", "writer")
    if reader not in ("writer", "peer"):
        raise _fail(source, exp, f"variant {name}: reader must be writer or peer")
    rpe = raw.get("rows_per_event", 1)
    if isinstance(rpe, bool) or not isinstance(rpe, int) or rpe < 1:
        raise _fail(source, exp, f"variant {name}: rows_per_event must be >= 1")
    baseline = raw.get("baseline")
    if baseline is not None:
        baseline = _name(baseline, f"variant {name}: baseline", source, exp)
    design = raw.get("design")
    if design is not None and design not in DESIGNS:
        raise _fail(source, exp, f"variant {name}: design {design!r} is not one of"
                                 f" {', '.join(DESIGNS)}")
    if design is not None and raw.get("baseline") is not None:
        raise _fail(source, exp, f"variant {name}: design belongs on the baseline (it is the"
                                 " group's)")
    engines = raw.get("engines") or []
    if not isinstance(engines, list) or any(e not in ddl.ENGINES for e in engines):
        raise _fail(source, exp, f"variant {name}: engines must be a list of"
                                 f" {', '.join(ddl.ENGINES)}, not {engines!r}")
    return Variant(name=name, table=_name(raw["table"], f"variant {name}: table", source, exp),
                   baseline=baseline, threads=None if threads == "N" else threads,
                   writers=writers, reader=reader, engines=tuple(engines),
                   rows_per_event=rpe, design=design,
                   options=_mix_safe(_options(raw.get("options"), f"variant {name}: options",
                                              source, exp), f"variant {name}", source, exp))


def parse(data: Any, source: Path | str = "<config>") -> dict[str, Experiment]:
    if not isinstance(data, dict) or not isinstance(data.get("experiments"), dict):
        raise _fail(source, None, "needs a mapping `experiments:` of name -> experiment")
    unknown_top = set(map(str, data)) - {"defaults", "experiments"}
    if unknown_top:
        raise _fail(source, None, f"unknown key(s) {', '.join(sorted(unknown_top))}"
                                  " (known: defaults, experiments)")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise _fail(source, None, f"defaults must be a mapping, not {defaults!r}")
    if set(map(str, defaults)) - DEFAULT_KEYS:
        raise _fail(source, None, f"unknown defaults key(s) "
                                  f"{', '.join(sorted(set(map(str, defaults)) - DEFAULT_KEYS))}")
    out: dict[str, Experiment] = {}
    for key, raw in data["experiments"].items():
        name = _name(key, "the experiment name", source, None)
        if not isinstance(raw, dict):
            raise _fail(source, name, "must be a mapping")
        unknown = set(map(str, raw)) - EXPERIMENT_KEYS
        if unknown:
            raise _fail(source, name, f"unknown key(s) {', '.join(sorted(unknown))}")
        kind = raw.get("kind", name)
        if not isinstance(kind, str) or kind not in SCRIPTS:
            raise _fail(source, name, f"kind {kind!r} is not one of {', '.join(SCRIPTS)}")
        merged = {**defaults, **raw}
        for key, known in (("design", DESIGNS), ("estimator", tuple(ESTIMATORS))):
            if merged.get(key) is not None and merged[key] not in known:
                raise _fail(source, name, f"{key} {merged[key]!r} is not one of"
                                          f" {', '.join(known)}")
        window = _positive(merged.get("window", 10), "window", source, name)
        if window < 1:
            raise _fail(source, name, "window must be at least 1 second")
        threads = merged.get("threads", 4)
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise _fail(source, name, f"threads must be a positive integer, not {threads!r}")
        raw_variants = raw.get("variants") or []
        if not isinstance(raw_variants, list):
            raise _fail(source, name, f"variants must be a list, not {raw_variants!r}")
        variants = tuple(_variant(v, source, name) for v in raw_variants)
        if not variants:
            raise _fail(source, name, "has no variants")
        names = [v.name for v in variants]
        if len(set(names)) != len(names):
            raise _fail(source, name, "variant names must be unique")
        by_name = {v.name: v for v in variants}
        for v in variants:
            if v.baseline is None:
                continue
            base = by_name.get(v.baseline)
            if base is None:
                raise _fail(source, name, f"variant {v.name}: baseline {v.baseline!r} is not a"
                                          " variant of this experiment")
            if base.baseline is not None:
                raise _fail(source, name, f"variant {v.name}: its baseline {base.name} has a"
                                          " baseline itself; baselines must be plain")
            if set(v.engines or ()) - set(base.engines or v.engines or ()):
                raise _fail(source, name, f"variant {v.name} runs on engines its baseline"
                                          f" {base.name} does not")
        balance = raw.get("ndb_partition_balance")
        if balance is not None and balance not in PARTITION_BALANCES:
            raise _fail(source, name, f"ndb_partition_balance {balance!r} is not one of"
                                      f" {', '.join(PARTITION_BALANCES)}")
        description = raw.get("description", "")
        if not isinstance(description, str | None):
            raise _fail(source, name, "description must be text")
        max_rows = _positive(merged.get("max_rows", 200000), "max_rows", source, name)
        table_rows = _positive(merged.get("table_rows", 0), "table_rows", source, name)
        if table_rows >= max_rows:
            raise _fail(source, name, f"table_rows ({table_rows:g}) must be below max_rows"
                                      f" ({max_rows:g}): the tables grow between the two")
        primary = raw.get("primary")
        if primary is not None and primary not in [v.name for v in variants if v.baseline]:
            raise _fail(source, name, f"primary {primary!r} is not a variant compared with a"
                                      " baseline")
        slot = _positive(merged.get("slot", 2.0), "slot", source, name)
        washout = _positive(merged.get("washout", 0.5), "washout", source, name)
        if not 0.1 <= slot <= window or washout >= slot:
            raise _fail(source, name, f"slot must be 0.1 s..window and washout below it (slot"
                                      f" {slot:g}, washout {washout:g}, window {window:g})")
        estimate_window = _positive(merged.get("estimate_window", 3600), "estimate_window",
                                    source, name)
        if estimate_window < window:
            raise _fail(source, name, "estimate_window must hold at least one window")
        in_cycle = raw.get("cycle", True)
        if not isinstance(in_cycle, bool):
            raise _fail(source, name, f"cycle must be true or false, not {in_cycle!r}")
        out[name] = Experiment(
            name=name, kind=kind, description=(description or "").strip(),
            threads=threads, window=window,
            warmup=_positive(merged.get("warmup", 10), "warmup", source, name),
            duration=_positive(merged.get("duration", 120), "duration", source, name),
            max_rows=int(max_rows),
            options=_options(raw.get("options"), "options", source, name),
            variants=variants, ndb_partition_balance=balance,
            design=merged.get("design"), estimator=merged.get("estimator"),
            table_rows=int(table_rows), primary=primary, slot=slot, washout=washout,
            estimate_window=estimate_window, cycle=in_cycle)
    return out


def load(path: str | Path | None = None) -> dict[str, Experiment]:
    p = Path(path) if path else DEFAULT_CONFIG
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read experiments file {p}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{p}: not valid YAML: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"{p}: not valid YAML: nested too deeply") from None
    return parse(data, p)


def experiment(name: str, path: str | Path | None = None) -> Experiment:
    exps = load(path)
    if name not in exps:
        raise ConfigError(f"no experiment {name!r} in {path or DEFAULT_CONFIG} (known: "
                          f"{', '.join(exps)})")
    return exps[name]
