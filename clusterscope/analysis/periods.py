"""Time periods on the command line: `START..END`.

A time is `now`, relative to now as Grafana writes it (`now-2h`, `now-30m`, `now-1d`,
`now-1w`) or in the short form `-2h`, an RFC 3339 / ISO 8601 time (`2025-11-26T10:00:00Z`,
`2025-11-26 10:00:00+01:00`, `2025-11-26`; no zone means UTC) or unix seconds.

The short form starts with '-', which argparse takes for an option (`--before -2h..-1h`
fails with "expected one argument"); `argv_with_periods` rewrites such a value to the
`now-` form before argparse sees it.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

_REL = re.compile(r"^(?:now)?-(\d+(?:\.\d+)?)([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
# a period value argparse would mistake for an option: it starts with the short form
_SHORT_PERIOD = re.compile(r"^-\d+(?:\.\d+)?[smhdw]\.\.")

FORMS = "now, now-2h (or -2h), RFC 3339 like 2025-11-26T10:00:00Z, or unix seconds"


class PeriodError(ValueError):
    pass


# Times a period may hold: from the epoch (VictoriaMetrics stores nothing earlier) to the
# last second datetime can print (Period.__str__).
EARLIEST, LATEST = 0.0, datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()


def parse_time(text: str, now: float | None = None) -> float:
    now = time.time() if now is None else now
    t = _parse_time(text.strip(), now)
    # float() reads "nan", "inf" and 1e400; an ISO time may lie before 1970
    if not (math.isfinite(t) and EARLIEST <= t <= LATEST):
        raise PeriodError(f"time {text.strip()!r} is outside 1970-01-01..9999-12-31")
    return t


def _parse_time(text: str, now: float) -> float:
    if text == "now":
        return now
    if m := _REL.match(text):
        return now - float(m.group(1)) * _UNIT[m.group(2)]
    try:
        return float(text)
    except ValueError:
        pass
    # RFC 3339 allows a lower-case t and z (section 5.6); fromisoformat wants them upper-case
    iso = re.sub(r"^(\d{4}-\d\d-\d\d)t", r"\1T", text)
    iso = re.sub(r"[zZ]$", "+00:00", iso)
    try:
        dt = datetime.fromisoformat(iso)
        return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()
    except (ValueError, OverflowError) as exc:
        raise PeriodError(f"not a time: {text!r} (use {FORMS})") from exc


@dataclass(frozen=True)
class Period:
    start: float
    end: float

    @classmethod
    def parse(cls, text: str, now: float | None = None) -> Period:
        if ".." not in text:
            raise PeriodError(f"a period is START..END, got {text!r} (e.g. now-2h..now-1h)")
        a, b = text.split("..", 1)
        now = time.time() if now is None else now  # both ends against the same now
        p = cls(parse_time(a, now), parse_time(b, now))
        if p.end <= p.start:
            raise PeriodError(f"period {text!r} ends before it starts")
        return p

    def __str__(self) -> str:
        def iso(t: float) -> str:
            return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return f"{iso(self.start)}..{iso(self.end)}"


def _long_form(value: str) -> str:
    a, b = value.split("..", 1)
    return "..".join("now" + x if _REL.match(x) and x.startswith("-") else x for x in (a, b))


def argv_with_periods(argv: Iterable[str]) -> list[str]:
    """argv with every period value in the short form (`-2h..-1h`) rewritten as
    `now-2h..now-1h`, so argparse reads it as a value, not as an option."""
    return [_long_form(a) if _SHORT_PERIOD.match(a) else a for a in argv]
