"""The web config while the exporter serves: read and checked at start (`load`), read again
for every TLS connection and every request, so a removed user or a tightened TLS setting
applies without a restart, as exporter-toolkit does (web/tls_config.go getConfig,
web/handler.go ServeHTTP). An invalid file then refuses connections and requests (500)
until it is fixed; whether the port speaks TLS at all is decided at start."""

from __future__ import annotations

import hashlib
import logging
import ssl
import threading
from pathlib import Path

from ndbinfo_exporter.errors import ConfigError
from ndbinfo_exporter.web.auth import BasicAuth
from ndbinfo_exporter.web.fields import read_file
from ndbinfo_exporter.web.ratelimit import Bucket
from ndbinfo_exporter.web.settings import MAX_CONFIG_BYTES, Settings, parse

log = logging.getLogger("ndbinfo_exporter.web")


class WebConfig:
    """The web config as the server uses it: `current()` re-reads the file when it or a
    file it names changed. `tls` is fixed at start, as upstream's Serve decides once."""

    def __init__(self, path: Path | None = None, settings: Settings | None = None,
                 raw: bytes = b"") -> None:
        self.path = path
        self._settings = settings or Settings()
        self._digest = hashlib.sha256(raw).digest()
        self._error: str | None = None
        self.tls = self._settings.ssl_context is not None
        self._lock = threading.Lock()
        self._bucket: Bucket | None = None
        self._auth = BasicAuth()

    @property
    def ssl_context(self) -> ssl.SSLContext | None:
        return self._settings.ssl_context

    @property
    def users(self) -> dict[bytes, bytes]:
        return self._settings.users

    def current(self) -> Settings:
        """The settings now in force; ConfigError (logged once) while the file is invalid."""
        if self.path is None:
            return self._settings
        with self._lock:
            try:
                raw = read_file(str(self.path), "web config", self.path, MAX_CONFIG_BYTES)
                digest = hashlib.sha256(raw).digest()
                same = digest == self._digest and self._unchanged()
                if self._error is None and same:
                    return self._settings
                settings = parse(self.path, raw)
            except ConfigError as exc:
                if str(exc) != self._error:
                    log.error("web config invalid, refusing connections and requests until"
                              " it is fixed: %s", exc)
                self._error = str(exc)
                raise
            if self._error is not None or not same:
                log.info("web config %s re-read", self.path)
                for w in settings.warnings:
                    log.warning("web config %s: %s", self.path, w)
            self._settings, self._digest, self._error = settings, digest, None
            return settings

    def _unchanged(self) -> bool:
        for f, digest in self._settings.files:
            try:
                data = read_file(str(self.path), "", f)
            except ConfigError:
                return False
            if hashlib.sha256(data).digest() != digest:
                return False
        return True

    def allow(self, s: Settings) -> bool:
        """The rate limit (upstream applies it before authentication, to every request)."""
        if s.rate is None:
            return True
        with self._lock:
            if self._bucket is None or self._bucket.key != s.rate:
                self._bucket = Bucket(*s.rate)
            bucket = self._bucket
        return bucket.allow()

    def authorised(self, s: Settings, user: bytes | None, password: bytes | None) -> bool:
        """Basic auth against the settings in force (auth.py)."""
        return self._auth.check(s.users, s.dummy_cost, user, password)


def load(path: str | None) -> WebConfig:
    """Read and check the file at start-up (ConfigError stops the exporter)."""
    if not path:
        return WebConfig()
    p = Path(path)
    raw = read_file(str(p), "web config", p, MAX_CONFIG_BYTES)
    settings = parse(p, raw)
    for w in settings.warnings:
        log.warning("web config %s: %s", p, w)
    return WebConfig(p, settings, raw)
