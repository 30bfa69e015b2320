"""What the tests share: the repository root, reading /metrics into samples, and waiting
for a condition (never a fixed sleep)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"  # the steering repository's shared/, where it exists
# Recorded output copied from other repositories (the Percona Toolkit's PXC logs, the
# MySQL team's ndbinfo results) is never committed here: tests read it in shared/.
SHARED_FIXTURES = SHARED / "fixtures"


def shared_fixture(*parts: str) -> Path:
    """A file or directory of shared/fixtures; the test is skipped, saying which, where the
    shared directory is not on the machine (a clone outside the workspace)."""
    import pytest

    path = SHARED_FIXTURES.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path}: shared fixtures are not on this machine")
    return path

T = TypeVar("T")
Key = tuple[str, tuple[tuple[str, str], ...]]


class Samples(dict[Key, float]):
    """(sample name, sorted labels) -> value, from an exposition or collected families."""

    @classmethod
    def of_families(cls, families: Iterable) -> Samples:
        out = cls()
        for fam in families:
            for s in fam.samples:
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
        return out

    @classmethod
    def of_text(cls, text: str) -> Samples:
        return cls.of_families(text_string_to_metric_families(text))


def scrape_text(port: int, path: str = "/metrics", timeout: float = 20.0) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as r:
        return r.read().decode()


def scrape(port: int, path: str = "/metrics", timeout: float = 20.0) -> Samples:
    return Samples.of_text(scrape_text(port, path, timeout))


def val(ss: dict, name: str, **labels: object) -> float | None:
    """The value of the sample with exactly these labels, or None."""
    return ss.get((name, tuple(sorted((k, str(v)) for k, v in labels.items()))))


def series(ss: dict, name: str) -> list[tuple[dict[str, str], float]]:
    """Every sample of a name: (labels, value)."""
    return [(dict(lbl), v) for (n, lbl), v in ss.items() if n == name]


def epoch(rfc3339: str | None) -> float:
    """An RFC 3339 time with nanoseconds (vmalert's activeAt, Alertmanager's startsAt) as
    unix seconds; unknown: now."""
    if not rfc3339:
        return time.time()
    stamp = re.sub(r"(\.\d{6})\d*", r"\1", rfc3339).replace("Z", "+00:00")
    return datetime.fromisoformat(stamp).timestamp()


def eventually(probe: Callable[[], T], timeout: float, what: str,
               interval: float = 0.5) -> T:
    """Poll `probe` until it returns something truthy; that value. A probe that raises is
    "not yet". At the deadline the assertion names `what` and the last answer."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            last = probe()
        except Exception as exc:  # noqa: BLE001 - a probe failing is "not yet"
            last = exc
        else:
            if last:
                return last  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s (last: {last!r:.500})")
        time.sleep(interval)


CHROMIUM = shutil.which("chromium")


def render_in_chromium(page: Path, shot: Path) -> list[str]:
    """Load a page in headless Chromium (Debian's, no network), keep a screenshot of what a
    person sees and return the page's console lines."""
    shot.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [CHROMIUM or "chromium", "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}",
             "--enable-logging=stderr", "--v=0", "--window-size=1200,2600",
             f"--screenshot={shot}", page.as_uri()],
            capture_output=True, text=True, timeout=120)
    return [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln]

