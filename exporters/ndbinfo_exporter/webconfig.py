"""`--web.config.file`: the Prometheus exporter-toolkit web config, read as exporter-toolkit
reads it and re-read while the exporter serves.

    tls_server_config:             # paths are relative to this file
      cert_file: server.crt        # or `cert: <PEM>` inline
      key_file: server.key         # or `key: <PEM>` inline
      client_auth_type: RequireAndVerifyClientCert
      client_ca_file: ca.crt       # or `client_ca: <PEM>` inline
      client_allowed_sans: [prometheus.example]
      min_version: TLS12           # TLS10..TLS13; max_version likewise (default TLS13)
      cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]   # TLS 1.2 and below
      curve_preferences: [CurveP256]
      prefer_server_cipher_suites: true
    http_server_config:
      headers: {Strict-Transport-Security: max-age=31536000}
      http2: true                  # accepted for compatibility: this server speaks HTTP/1.1
    rate_limit: {interval: 1s, burst: 10}
    basic_auth_users:
      prometheus: $2b$12$...       # bcrypt hash, never the password

The reference is prometheus/exporter-toolkit at 19a7c2d (Jul 2026): web/tls_config.go
(getConfig, ConfigToTLSConfig, Serve), web/handler.go (validateHeaderConfig, ServeHTTP) and
web/cache.go. Like upstream, the file is read again for every TLS connection and every
request, so a removed user or a tightened TLS setting applies without a restart; an invalid
file then refuses connections and requests (500) until it is fixed, and whether the port
speaks TLS at all is decided at start. Where this reader is stricter than upstream, the rule
says why ("stricter:").
"""

from __future__ import annotations

import errno
import hashlib
import ipaddress
import logging
import os
import re
import secrets
import ssl
import stat
import tempfile
import threading
import time
import warnings
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import bcrypt
import yaml
from cryptography import x509

from ndbinfo_exporter.mycnf import ConfigError

log = logging.getLogger("ndbinfo_exporter.web")

MAX_CONFIG_BYTES = 1 << 20  # a web config is a few hundred bytes; a huge one is a mistake
MAX_PEM_BYTES = 4 << 20  # a CA bundle (the system's is ~200 KB)

_TOP = ("tls_server_config", "http_server_config", "rate_limit", "basic_auth_users")
_TLS = ("cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type",
        "client_ca_file", "cipher_suites", "curve_preferences", "min_version", "max_version",
        "prefer_server_cipher_suites", "client_allowed_sans")
_HTTP = ("http2", "headers")
_RATE = ("burst", "interval")
# The keys that turn TLS on (TLSConfig.IsEnabled in tls_config.go).
_ENABLING = ("cert_file", "cert", "key_file", "key", "client_ca_file", "client_ca",
             "client_auth_type")

_VERSIONS = {"TLS10": ssl.TLSVersion.TLSv1, "TLS11": ssl.TLSVersion.TLSv1_1,
             "TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
# The names exporter-toolkit accepts are Go's tls.CipherSuites() (golang/go
# src/crypto/tls/cipher_suites.go, the ECDHE-only list of current releases), mapped to
# OpenSSL's names as `openssl ciphers -stdname` prints them (checked by the tests). The TLS
# 1.3 suites are accepted and change nothing, as in Go, whose Config.CipherSuites does not
# apply to TLS 1.3 (src/crypto/tls/common.go); Python's ssl cannot set them either.
_CIPHERS: dict[str, str | None] = {
    "TLS_AES_128_GCM_SHA256": None,
    "TLS_AES_256_GCM_SHA384": None,
    "TLS_CHACHA20_POLY1305_SHA256": None,
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
}
# Go's HTTP/2 server refuses a TLS 1.2 cipher list without one of these (RFC 7540 9.2.2;
# golang/go src/net/http/h2_bundle.go, http2ConfigureServer), so upstream fails to serve.
_HTTP2_REQUIRED = ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                   "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")
# exporter-toolkit's `curves` map -> OpenSSL group names
_CURVES = {"CurveP256": "prime256v1", "CurveP384": "secp384r1", "CurveP521": "secp521r1",
           "X25519": "X25519"}
_CLIENT_AUTH = ("NoClientCert", "RequestClientCert", "RequireAnyClientCert",
                "RequireClientCert", "VerifyClientCertIfGiven", "RequireAndVerifyClientCert")
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
_BOOLS = {**dict.fromkeys(("true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On",
                           "ON"), True),
          **dict.fromkeys(("false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off",
                           "OFF"), False)}
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0,
          "h": 3600.0}
BCRYPT_MAX_PASSWORD = 72  # bcrypt only reads this many bytes of a password


# -- YAML as go-yaml v2's UnmarshalStrict reads it -------------------------------------------
class _Loader(yaml.SafeLoader):
    """Scalars keep their text: go-yaml sets a string field to the scalar as written
    (go-yaml/yaml decode.go, scalar(): `out.SetString(n.Value)`), so a user `yes` stays
    "yes" and a header value `1` stays "1". Only null is resolved; booleans, integers and
    durations are parsed by the field that wants them. A key written twice is an error, as
    in UnmarshalStrict (PyYAML would keep the last one silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[tuple[str, str], yaml.Mark] = {}
        for key, _ in node.value:
            if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                if (key.tag, key.value) in seen:
                    raise yaml.constructor.ConstructorError(
                        "while reading a mapping", seen[(key.tag, key.value)],
                        f"key {key.value!r} appears twice", key.start_mark)
                seen[(key.tag, key.value)] = key.start_mark
        return super().construct_mapping(node, deep)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers
            if tag in ("tag:yaml.org,2002:null", "tag:yaml.org,2002:merge")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


# -- one reading of the file -----------------------------------------------------------------
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
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise ConfigError(f"{where}: not valid YAML: nested too deeply") from None
    if data is None or data == "":
        return Settings()
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the web config must be a mapping of "
                          f"{', '.join(_TOP)}, not a {_kind(data)}")
    _known(where, "", data, _TOP)
    s = Settings()
    warn: list[str] = []
    s.users = _users(where, data.get("basic_auth_users"))
    http = _mapping(where, "http_server_config", data.get("http_server_config"))
    _known(where, "http_server_config.", http, _HTTP)
    http2 = _bool(where, "http_server_config.http2", http.get("http2"), True)
    s.headers = _headers(where, http.get("headers"))
    s.rate = _rate(where, _mapping(where, "rate_limit", data.get("rate_limit")))
    tls = _mapping(where, "tls_server_config", data.get("tls_server_config"))
    _known(where, "tls_server_config.", tls, _TLS)
    if tls:
        s.ssl_context, s.allowed_sans, s.files = _tls(path, tls, http2, warn)
    s.warnings = tuple(warn)
    return s


def _kind(v: object) -> str:
    return {dict: "mapping", list: "list", str: "string"}.get(type(v), type(v).__name__)


def _known(where: str, prefix: str, d: dict, known: tuple[str, ...]) -> None:
    unknown = [str(k) for k in d if k not in known]
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(prefix + k for k in unknown)}"
                          f" (known: {', '.join(known)})")


def _mapping(where: str, key: str, v: object) -> dict:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise ConfigError(f"{where}: {key} must be a mapping, not a {_kind(v)}")
    return v


def _str(where: str, key: str, v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, int | float) and not isinstance(v, bool):  # an explicit !!int tag
        return str(v)
    raise ConfigError(f"{where}: {key} must be a string, not a {_kind(v)}")


def _list(where: str, key: str, v: object) -> list[str]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise ConfigError(f"{where}: {key} must be a list, not a {_kind(v)}")
    return [_str(where, f"{key}[{i}]", x) for i, x in enumerate(v)]


def _bool(where: str, key: str, v: object, default: bool) -> bool:
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v in _BOOLS:
        return _BOOLS[v]
    raise ConfigError(f"{where}: {key} must be true or false, not {v!r}")


def _users(where: str, v: object) -> dict[bytes, bytes]:
    users = _mapping(where, "basic_auth_users", v)
    out: dict[bytes, bytes] = {}
    for user, hashed in users.items():
        if not isinstance(user, str):
            raise ConfigError(f"{where}: basic_auth_users: a user name must be a string,"
                              f" not {user!r}")
        h = _str(where, f"basic_auth_users.{user}", hashed)
        if not _BCRYPT.fullmatch(h):
            # upstream: bcrypt.Cost() fails ("hashedSecret too short to be a bcrypted
            # password" for `john: doe`, testdata/web_config_auth_user_list_invalid.bad.yml)
            raise ConfigError(f"{where}: basic_auth_users.{user} is not a bcrypt hash"
                              " (expected $2b$<cost 04..31>$ and 53 characters, 60 in all;"
                              " make one with `htpasswd -nBC 10 \"\" | tr -d ':'`)")
        out[user.encode("utf-8", "surrogateescape")] = h.encode()
    return out


def _headers(where: str, v: object) -> tuple[tuple[str, str], ...]:
    headers = _mapping(where, "http_server_config.headers", v)
    out = []
    for name, value in headers.items():
        if name not in _HEADERS:
            raise ConfigError(f"{where}: HTTP header {name!r} can not be configured (allowed:"
                              f" {', '.join(_HEADERS)})")
        text = _str(where, f"http_server_config.headers.{name}", value)
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
    _known(where, "rate_limit.", rate, _RATE)
    interval_v, burst_v = rate.get("interval"), rate.get("burst")
    text = _str(where, "rate_limit.interval", interval_v)
    try:
        # a bare integer is nanoseconds, as go-yaml v2 reads it into a time.Duration
        interval = int(text) * 1e-9 if re.fullmatch(r"[-+]?\d+", text) else (
            parse_go_duration(text) if text else 0.0)
    except ValueError as exc:
        raise ConfigError(f"{where}: rate_limit.interval: {exc}") from None
    burst_text = _str(where, "rate_limit.burst", burst_v) or "0"
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


# -- TLS --------------------------------------------------------------------------------------
def _read(where: str, key: str, path: Path, limit: int = MAX_PEM_BYTES) -> bytes:
    """A referenced file's bytes; never blocks on a FIFO, never reads without bound."""
    what = f"{where}: cannot read the web config" if key == "web config" else (
        f"{where}: {key} {path}: cannot read it")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        msg = "no such file" if exc.errno == errno.ENOENT else exc.strerror
        raise ConfigError(f"{what} ({msg})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            raise ConfigError(f"{where}: {key} {path} is not a file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise ConfigError(f"{what} ({exc.strerror})") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise ConfigError(f"{where}: {key} {path} is larger than {limit >> 20} MiB")
    return data


def _tls(path: Path, tls: dict, http2: bool, warn: list[str]
         ) -> tuple[ssl.SSLContext, frozenset[str] | None, tuple[tuple[Path, bytes], ...]]:
    where = str(path)
    strings = {k: _str(where, f"tls_server_config.{k}", tls.get(k))
               for k in ("cert", "key", "client_ca", "cert_file", "key_file",
                         "client_auth_type", "client_ca_file", "min_version", "max_version")}
    ciphers = _list(where, "tls_server_config.cipher_suites", tls.get("cipher_suites"))
    curves = _list(where, "tls_server_config.curve_preferences", tls.get("curve_preferences"))
    sans_v = tls.get("client_allowed_sans")
    sans = None if sans_v is None else frozenset(
        _list(where, "tls_server_config.client_allowed_sans", sans_v))
    prefer = _bool(where, "tls_server_config.prefer_server_cipher_suites",
                   tls.get("prefer_server_cipher_suites"), True)
    # Unknown names are YAML errors upstream (Cipher/Curve/TLSVersion UnmarshalYAML).
    for c in ciphers:
        if c not in _CIPHERS:
            raise ConfigError(f"{where}: tls_server_config.cipher_suites: unknown cipher: {c}"
                              f" (known: {', '.join(_CIPHERS)})")
    for c in curves:
        if c not in _CURVES:
            raise ConfigError(f"{where}: tls_server_config.curve_preferences: unknown curve:"
                              f" {c} (known: {', '.join(_CURVES)})")
    versions = {}
    for key, default in (("min_version", "TLS12"), ("max_version", "TLS13")):
        name = strings[key] or default
        if name not in _VERSIONS:
            raise ConfigError(f"{where}: tls_server_config.{key}: unknown TLS version: {name}"
                              f" (known: {', '.join(_VERSIONS)})")
        versions[key] = name
    if not any(strings[k] for k in _ENABLING):
        # Upstream serves plain HTTP when none of the enabling keys is set, whatever else
        # tls_server_config says. Stricter: a config that asks for TLS settings without a
        # certificate is a mistake, not a wish for plain HTTP.
        raise ConfigError(f"{where}: tls_server_config sets {', '.join(map(str, tls))} but"
                          " no certificate: missing one of cert or cert_file")
    if not strings["cert_file"] and not strings["cert"]:
        raise ConfigError(f"{where}: tls_server_config: missing one of cert or cert_file")
    if not strings["key_file"] and not strings["key"]:
        raise ConfigError(f"{where}: tls_server_config: missing one of key or key_file")

    files: list[tuple[Path, bytes]] = []

    def material(file_key: str, inline_key: str) -> bytes:
        if strings[file_key]:  # the file wins over inline text, as upstream
            f = Path(strings[file_key])
            f = f if f.is_absolute() else path.parent / f
            data = _read(where, f"tls_server_config.{file_key}", f)
            files.append((f, hashlib.sha256(data).digest()))
            return data
        return strings[inline_key].encode()

    cert, key = material("cert_file", "cert"), material("key_file", "key")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _load_pair(where, ctx, cert, key)
    lo, hi = _VERSIONS[versions["min_version"]], _VERSIONS[versions["max_version"]]
    if lo > hi:
        # Go fails every handshake then ("no supported versions satisfy MinVersion and
        # MaxVersion"). Stricter: said at load time.
        raise ConfigError(f"{where}: tls_server_config: min_version {versions['min_version']}"
                          f" is above max_version {versions['max_version']}")
    with warnings.catch_warnings():  # ssl warns that TLS 1.0/1.1 are deprecated: they are
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.minimum_version, ctx.maximum_version = lo, hi
    if lo < ssl.TLSVersion.TLSv1_2:
        warn.append(f"min_version {versions['min_version']}: OpenSSL's default security"
                    " level still refuses TLS 1.0 and 1.1 handshakes here")
    tls12 = [_CIPHERS[c] for c in ciphers if _CIPHERS[c]]
    if tls12:
        ctx.set_ciphers(":".join(tls12))
    elif ciphers and lo < ssl.TLSVersion.TLSv1_3:
        # Only TLS 1.3 suites listed: Go then has no TLS 1.2 suite left, so only TLS 1.3
        # connects. OpenSSL needs at least one TLS 1.2 cipher, so say it with the version.
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    if http2 and ciphers and lo < ssl.TLSVersion.TLSv1_3 and not set(ciphers) & set(
            _HTTP2_REQUIRED):
        raise ConfigError(f"{where}: http2 (on by default) needs one of"
                          f" {' or '.join(_HTTP2_REQUIRED)} in tls_server_config.cipher_suites"
                          " (Go's HTTP/2 server refuses to serve without it; this exporter"
                          " speaks HTTP/1.1 only, so `http_server_config: {http2: false}`"
                          " changes nothing else)")
    # Go ignores PreferServerCipherSuites since 1.17 and orders suites itself (AES-128-GCM
    # first); OpenSSL has a real switch: the configured order when true (the default),
    # the client's when false. Both of upstream's cipher-order cases pick what Go picks.
    if prefer:
        ctx.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    else:
        ctx.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
    if curves:
        # Python's ssl sets one key-exchange group (SSLContext.set_ecdh_curve, which is
        # SSL_CTX_set1_groups with one group on OpenSSL 3): the first preferred curve.
        # Stricter: a client that supports only a later one is refused.
        ctx.set_ecdh_curve(_CURVES[curves[0]])
        if len(set(curves)) > 1:
            warn.append(f"curve_preferences: only {curves[0]}, the first listed, is offered"
                        " (Python's ssl module sets a single key-exchange group)")

    ca = b""
    if strings["client_ca_file"]:
        f = Path(strings["client_ca_file"])
        f = f if f.is_absolute() else path.parent / f
        ca = _read(where, "tls_server_config.client_ca_file", f)
        files.append((f, hashlib.sha256(ca).digest()))
    elif strings["client_ca"]:
        ca = strings["client_ca"].encode()
    has_ca = bool(strings["client_ca_file"] or strings["client_ca"])
    auth = strings["client_auth_type"] or "NoClientCert"
    if auth not in _CLIENT_AUTH:
        raise ConfigError(f"{where}: tls_server_config.client_auth_type: invalid ClientAuth:"
                          f" {auth} (known: {', '.join(_CLIENT_AUTH)})")
    if has_ca and auth == "NoClientCert":
        raise ConfigError(f"{where}: tls_server_config: client CA's have been configured"
                          " without a Client Auth Policy (set client_auth_type, e.g."
                          " RequireAndVerifyClientCert; without it no client certificate"
                          " would be asked for)")
    if auth in ("RequestClientCert", "RequireAnyClientCert", "RequireClientCert") and (
            not has_ca):
        # Stricter: these types take any client certificate without checking who signed
        # it, which Python's ssl module cannot do (it has no verify callback: a presented
        # certificate is always verified), and a certificate anybody can make proves
        # nothing. With a client CA the certificate is verified against it.
        raise ConfigError(f"{where}: tls_server_config: client_auth_type {auth} needs"
                          " client_ca_file here: this exporter verifies every client"
                          " certificate it asks for (an unverified one anybody can make);"
                          " give the CA that signs your clients' certificates")
    if sans is not None and auth == "NoClientCert":
        # Stricter: upstream never asks for a certificate then, so the list is silently
        # not applied.
        raise ConfigError(f"{where}: tls_server_config: client_allowed_sans needs a"
                          " client_auth_type that asks for a certificate (e.g."
                          " RequireAndVerifyClientCert)")
    if has_ca:
        if b"-----BEGIN CERTIFICATE-----" not in ca:
            raise ConfigError(f"{where}: tls_server_config.client_ca"
                              f"{'_file' if strings['client_ca_file'] else ''} holds no PEM"
                              " certificate")
        try:
            ctx.load_verify_locations(cadata=ca.decode("ascii", "replace"))
        except (ssl.SSLError, ValueError) as exc:
            raise ConfigError(f"{where}: tls_server_config: cannot load the client CA: {exc}"
                              ) from None
    elif auth in ("VerifyClientCertIfGiven", "RequireAndVerifyClientCert"):
        # Go verifies against the system's roots then. Stricter: against nothing, so no
        # client certificate verifies (VerifyClientCertIfGiven: send none).
        if auth == "RequireAndVerifyClientCert":
            warn.append("client_auth_type RequireAndVerifyClientCert without client_ca_file:"
                        " no client certificate can verify, every connection is refused")
    if auth != "NoClientCert":
        required = auth in ("RequireAnyClientCert", "RequireClientCert",
                            "RequireAndVerifyClientCert")
        ctx.verify_mode = ssl.CERT_REQUIRED if required else ssl.CERT_OPTIONAL
    return ctx, sans, tuple(files)


def _load_pair(where: str, ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """load_cert_chain reads files only: inline PEM goes through an in-memory file."""
    with _memfile(cert) as cert_path, _memfile(key) as key_path:
        try:
            # a passphrase-protected key fails instead of prompting on the terminal
            ctx.load_cert_chain(cert_path, key_path, password=lambda: b"")
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise ConfigError(f"{where}: tls_server_config: failed to load the certificate"
                              f" and key ({getattr(exc, 'reason', None) or exc}): they must"
                              " be a PEM certificate and its unencrypted PEM private key"
                              ) from None


class _memfile:
    """A path holding `data` for a moment: a memfd (never on disk) on Linux, else a
    private temporary file."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.fd: int | None = None
        self.tmp: str | None = None

    def __enter__(self) -> str:
        if hasattr(os, "memfd_create"):
            self.fd = os.memfd_create("ndbinfo-exporter-pem", os.MFD_CLOEXEC)
            os.write(self.fd, self.data)
            return f"/proc/self/fd/{self.fd}"
        fd, self.tmp = tempfile.mkstemp(prefix="ndbinfo-exporter-")
        with os.fdopen(fd, "wb") as f:
            f.write(self.data)
        return self.tmp

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
        if self.tmp is not None:
            os.unlink(self.tmp)


def allowed_sans_reject(sans: frozenset[str], der: bytes | None) -> str | None:
    """None if the client certificate names an allowed SAN, else why not. The values
    compared are upstream's (TLSConfig.VerifyPeerCertificate): DNS names, e-mail addresses,
    IP addresses as Go prints them and URIs, matched exactly."""
    if der is None:
        return "no client certificate"
    try:
        cert = x509.load_der_x509_certificate(der)
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return "the client certificate has no subject alternative name"
    except ValueError as exc:
        return f"unreadable client certificate ({exc})"
    values = [*ext.get_values_for_type(x509.DNSName), *ext.get_values_for_type(x509.RFC822Name),
              *ext.get_values_for_type(x509.UniformResourceIdentifier)]
    for ip in ext.get_values_for_type(x509.IPAddress):
        # Go's net.IP.String(): an IPv4-mapped IPv6 address prints as IPv4
        mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
        values.append(str(mapped or ip))
    if any(v in sans for v in values):
        return None
    return f"none of the client certificate's SANs ({', '.join(values)}) is allowed"


# -- the live config -------------------------------------------------------------------------
class _Bucket:
    """golang.org/x/time/rate's Limiter as exporter-toolkit uses it (Allow()): `burst`
    tokens, one more every `interval`, starting full."""

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


class WebConfig:
    """The web config as the server uses it: `current()` re-reads the file when it or a
    file it names changed. `tls` is fixed at start, as upstream's Serve decides once."""

    CACHE_SIZE = 100  # web/cache.go cacheSize

    def __init__(self, path: Path | None = None, settings: Settings | None = None,
                 raw: bytes = b"") -> None:
        self.path = path
        self._settings = settings or Settings()
        self._digest = hashlib.sha256(raw).digest()
        self._error: str | None = None
        self.tls = self._settings.ssl_context is not None
        self._lock = threading.Lock()
        self._bucket: _Bucket | None = None
        self._cache: OrderedDict[bytes, bool] = OrderedDict()
        self._cache_lock = threading.Lock()
        # bcrypt is CPU-heavy on purpose: one check at a time (handler.go bcryptMtx)
        self._bcrypt_lock = threading.Lock()
        self._dummy: dict[int, bytes] = {}
        self._dummy_lock = threading.Lock()

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
                raw = _read(str(self.path), "web config", self.path, MAX_CONFIG_BYTES)
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
                data = _read(str(self.path), "", f)
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
                self._bucket = _Bucket(*s.rate)
            bucket = self._bucket
        return bucket.allow()

    def authorised(self, s: Settings, user: bytes | None, password: bytes | None) -> bool:
        """Basic auth as handler.go does it: an unknown user is checked against a dummy
        hash of the users' usual cost, so the answer takes as long as for a known user;
        results (good and bad) are cached by (user, hash, password)."""
        if not s.users:
            return True
        if user is None or password is None:
            return False
        hashed = s.users.get(user)
        known = hashed is not None
        if hashed is None:
            hashed = self._dummy_hash(s.dummy_cost)
        if len(password) > BCRYPT_MAX_PASSWORD:
            # bcrypt reads 72 bytes at most; Go compares that prefix, the bcrypt package
            # refuses. Stricter: refused (the hash cannot hold the rest of it).
            return False
        # length-prefixed, so no user/password split can collide (CVE-2022-46146)
        key = hashlib.sha256(b"".join(len(x).to_bytes(4, "big") + x
                                      for x in (user, hashed, password))).digest()
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit and known
        with self._bcrypt_lock:
            try:
                ok = bcrypt.checkpw(password, hashed)
            except ValueError:
                ok = False
        ok = ok and known
        with self._cache_lock:
            self._cache[key] = ok
            while len(self._cache) > self.CACHE_SIZE:
                self._cache.popitem(last=False)
        return ok

    def _dummy_hash(self, cost: int) -> bytes:
        # its own lock: making the hash takes a bcrypt, which must not hold up current()
        with self._dummy_lock:
            h = self._dummy.get(cost)
            if h is None:
                # a random secret: nobody can log in with it, whatever the user name
                h = bcrypt.hashpw(secrets.token_hex(16).encode(), bcrypt.gensalt(rounds=cost))
                self._dummy[cost] = h
            return h


def load(path: str | None) -> WebConfig:
    """Read and check the file at start-up (ConfigError stops the exporter)."""
    if not path:
        return WebConfig()
    p = Path(path)
    raw = _read(str(p), "web config", p, MAX_CONFIG_BYTES)
    settings = parse(p, raw)
    for w in settings.warnings:
        log.warning("web config %s: %s", p, w)
    return WebConfig(p, settings, raw)
