"""Time periods on the command line: `START..END` with ISO times, unix seconds, `now`, `-15m`."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime

_REL = re.compile(r"^-(\d+(?:\.\d+)?)([smhd])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class PeriodError(ValueError):
    pass


def parse_time(text: str, now: float | None = None) -> float:
    now = time.time() if now is None else now
    text = text.strip()
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
    except ValueError as exc:
        raise PeriodError(f"not a time: {text!r} (use ISO 8601, unix seconds, now or -15m)"
                          ) from exc
    return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()


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
