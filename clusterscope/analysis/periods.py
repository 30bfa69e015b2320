"""Time periods on the command line: `START..END` with ISO times, unix seconds, `now`, `-15m`."""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime

_REL = re.compile(r"^-(\d+(?:\.\d+)?)([smhd])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


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
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()
    except (ValueError, OverflowError) as exc:
        raise PeriodError(f"not a time: {text!r} (use ISO 8601, unix seconds, now or -15m)"
                          ) from exc


@dataclass(frozen=True)
class Period:
    start: float
    end: float

    @classmethod
    def parse(cls, text: str, now: float | None = None) -> Period:
        if ".." not in text:
            raise PeriodError(f"a period is START..END, got {text!r}")
        a, b = text.split("..", 1)
        p = cls(parse_time(a, now), parse_time(b, now))
        if p.end <= p.start:
            raise PeriodError(f"period {text!r} ends before it starts")
        return p

    def __str__(self) -> str:
        def iso(t: float) -> str:
            return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return f"{iso(self.start)}..{iso(self.end)}"
