"""One reading of the web config file: its content checked key by key into `Settings`.

The reference is prometheus/exporter-toolkit at 19a7c2d (Jul 2026): web/tls_config.go
(getConfig) and web/handler.go (validateHeaderConfig). Where this reader is stricter than
upstream, the rule says why ("stricter:").
"""

from __future__ import annotations

import re
import ssl
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ndbinfo_exporter.errors import ConfigError
from ndbinfo_exporter.web import tls_context
from ndbinfo_exporter.web.fields import (
    Loader,
    boolean,
    check_keys,
    kind,
    mapping,
    string,
)

MAX_CONFIG_BYTES = 1 << 20  # a web config is a few hundred bytes; a huge one is a mistake
_TOP = ("tls_server_config", "http_server_config", "rate_limit", "basic_auth_users")
_HTTP = ("http2", "headers")
_RATE = ("burst", "interval")
# handler.go extraHTTPHeaders: the only headers a config may set, and the fixed values
# of the two that are enumerations (None: any value).
_HEADERS: dict[str, tuple[str, ...] | None] = {
    "Strict-Transport-Security": None,
    "X-Content-Type-Options": ("nosniff",),
    "X-Frame-Options": ("deny", "sameorigin"),
    "X-XSS-Protection": None,
    "Content-Security-Policy": None,
}
# bcrypt's modular-crypt form; x/crypto/bcrypt accepts costs 4..31. Stricter: only the
# $2a$/$2b$/$2y$ variants the Python bcrypt package can check (Go accepts any minor letter).
_BCRYPT = re.compile(r"\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}")
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
          "h": 3600.0}


@dataclass
class Settings:
    """What one version of the file says, ready to serve with."""

    users: dict[bytes, bytes] = field(default_factory=dict)  # user (UTF-8) -> bcrypt hash
    headers: tuple[tuple[str, str], ...] = ()
    rate: tuple[float, int] | None = None  # (seconds per request, burst)
    ssl_context: ssl.SSLContext | None = None
    allowed_sans: frozenset[str] | None = None
    files: tuple[tuple[Path, bytes], ...] = ()  # (path, sha256) of the files read
    warnings: tuple[str, ...] = ()

    @property
    def dummy_cost(self) -> int:
        """The bcrypt cost an unknown user is checked at: the most common among the users,
        so an unknown name costs what a known one does (upstream uses a fixed cost 10)."""
        costs = Counter(int(h[4:6]) for h in self.users.values())
        return costs.most_common(1)[0][0] if costs else 10


def parse(path: Path, raw: bytes) -> Settings:
    """The file's content -> Settings; ConfigError naming the file and the key otherwise."""
    where = str(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    try:
        data = yaml.load(text, Loader=Loader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise ConfigError(f"{where}: not valid YAML: nested too deeply") from None
    if data is None or data == "":
        return Settings()
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the web config must be a mapping of "
                          f"{', '.join(_TOP)}, not a {kind(data)}")
    check_keys(where, "", data, _TOP)
    s = Settings()
    warn: list[str] = []
    s.users = _users(where, data.get("basic_auth_users"))
    http = mapping(where, "http_server_config", data.get("http_server_config"))
    check_keys(where, "http_server_config.", http, _HTTP)
    http2 = boolean(where, "http_server_config.http2", http.get("http2"), True)
    s.headers = _headers(where, http.get("headers"))
    s.rate = _rate(where, mapping(where, "rate_limit", data.get("rate_limit")))
    tls = mapping(where, "tls_server_config", data.get("tls_server_config"))
    check_keys(where, "tls_server_config.", tls, tls_context.KEYS)
    if tls:
        s.ssl_context, s.allowed_sans, s.files = tls_context.build(path, tls, http2, warn)
    s.warnings = tuple(warn)
    return s


def _users(where: str, v: object) -> dict[bytes, bytes]:
    users = mapping(where, "basic_auth_users", v)
    out: dict[bytes, bytes] = {}
    for user, hashed in users.items():
        if not isinstance(user, str):
            raise ConfigError(f"{where}: basic_auth_users: a user name must be a string,"
                              f" not {user!r}")
        h = string(where, f"basic_auth_users.{user}", hashed)
        if not _BCRYPT.fullmatch(h):
            # upstream: bcrypt.Cost() fails ("hashedSecret too short to be a bcrypted
            # password" for `john: doe`, testdata/web_config_auth_user_list_invalid.bad.yml)
            raise ConfigError(f"{where}: basic_auth_users.{user} is not a bcrypt hash"
                              " (expected $2b$<cost 04..31>$ and 53 characters, 60 in all;"
                              " make one with `htpasswd -nBC 10 \"\" | tr -d ':'`)")
        out[user.encode("utf-8", "surrogateescape")] = h.encode()
    return out


def _headers(where: str, v: object) -> tuple[tuple[str, str], ...]:
    headers = mapping(where, "http_server_config.headers", v)
    out = []
    for name, value in headers.items():
        if name not in _HEADERS:
            raise ConfigError(f"{where}: HTTP header {name!r} can not be configured (allowed:"
                              f" {', '.join(_HEADERS)})")
        text = string(where, f"http_server_config.headers.{name}", value)
        allowed = _HEADERS[name]
        if allowed is not None and text not in allowed:
            raise ConfigError(f"{where}: invalid value for {name}: {text!r} (expected one of"
                              f" {', '.join(allowed)})")
        # Stricter: Go's net/http turns CR/LF in a header value into spaces; http.server
        # would write them, splitting the response. Refused outright.
        if any(ord(c) < 0x20 and c != "\t" or ord(c) == 0x7F for c in text):
            raise ConfigError(f"{where}: header {name} holds a control character")
        out.append((str(name), text))
    return tuple(out)


def parse_go_duration(text: str) -> float:
    """Go's time.ParseDuration (`1s`, `1m30s`, `250ms`) -> seconds; ValueError otherwise."""
    t = text.strip()
    sign = -1.0 if t.startswith("-") else 1.0
    t = t.lstrip("+-")
    if t == "0":
        return 0.0
    pos, total = 0, 0.0
    for m in _DURATION.finditer(t):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(t) or not t:
        raise ValueError(f"not a duration: {text!r} (Go syntax: 1s, 1m30s, 250ms)")
    return sign * total


def _rate(where: str, rate: dict) -> tuple[float, int] | None:
    check_keys(where, "rate_limit.", rate, _RATE)
    interval_v, burst_v = rate.get("interval"), rate.get("burst")
    text = string(where, "rate_limit.interval", interval_v)
    try:
        # a bare integer is nanoseconds, as go-yaml v2 reads it into a time.Duration
        interval = int(text) * 1e-9 if re.fullmatch(r"[-+]?\d+", text) else (
            parse_go_duration(text) if text else 0.0)
    except ValueError as exc:
        raise ConfigError(f"{where}: rate_limit.interval: {exc}") from None
    burst_text = string(where, "rate_limit.burst", burst_v) or "0"
    if not re.fullmatch(r"[-+]?\d{1,18}", burst_text):
        raise ConfigError(f"{where}: rate_limit.burst must be an integer, not {burst_text!r}")
    burst = int(burst_text)
    if interval == 0:
        return None  # upstream: no limiter when the interval is 0 (whatever the burst)
    # Stricter: a negative interval or burst means "unlimited" or "nothing" to x/time/rate;
    # neither is something to write on purpose.
    if interval < 0 or burst < 0:
        raise ConfigError(f"{where}: rate_limit interval and burst must not be negative")
    # Upstream's limiter (golang.org/x/time/rate, NewLimiter(Every(interval), burst)) lets
    # `burst` requests through at once and one more every `interval`; burst 0 lets none.
    return interval, burst
