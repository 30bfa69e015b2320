"""The web config's rate_limit: golang.org/x/time/rate's Limiter as exporter-toolkit uses it
(web/handler.go, Allow() before authentication, on every request)."""

from __future__ import annotations

import threading
import time


class Bucket:
    """`burst` tokens, one more every `interval` seconds, starting full."""

    def __init__(self, interval: float, burst: int) -> None:
        self.key = (interval, burst)
        self.interval, self.burst = interval, burst
        self.tokens = float(burst)
        self.last = time.monotonic()
        self.lock = threading.Lock()

    def allow(self) -> bool:
        with self.lock:
            now = time.monotonic()
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) / self.interval)
            self.last = now
            if self.burst >= 1 and self.tokens >= 1:
                self.tokens -= 1
                return True
            return False
