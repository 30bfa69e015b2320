"""`--web.config.file` in the Prometheus exporter-toolkit format: TLS and bcrypt basic auth.

    tls_server_config:
      cert_file: server.crt        # relative paths are relative to this file
      key_file: server.key
      client_auth_type: RequireAndVerifyClientCert   # optional, with client_ca_file
      client_ca_file: ca.crt
      min_version: TLS12           # optional
    basic_auth_users:
      prometheus: $2b$12$...       # bcrypt hash, never the password
"""

from __future__ import annotations

import hashlib
import hmac
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path

import bcrypt
import yaml

from ndbinfo_exporter.mycnf import ConfigError

_TOP = {"tls_server_config", "basic_auth_users", "http_server_config"}
_TLS = {"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version",
        "max_version", "cipher_suites", "curve_preferences", "prefer_server_cipher_suites",
        "client_allowed_sans"}
_CLIENT_AUTH = {"NoClientCert": ssl.CERT_NONE, "RequestClientCert": ssl.CERT_OPTIONAL,
                "RequireAnyClientCert": ssl.CERT_REQUIRED,
                "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
                "RequireAndVerifyClientCert": ssl.CERT_REQUIRED}
_VERSIONS = {"TLS10": ssl.TLSVersion.TLSv1, "TLS11": ssl.TLSVersion.TLSv1_1,
             "TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}


@dataclass
class WebConfig:
    ssl_context: ssl.SSLContext | None = None
    users: dict[str, bytes] = field(default_factory=dict)
    _ok_cache: set[bytes] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self, user: str, password: str) -> bool:
        """bcrypt is slow on purpose; remember a (user, password) pair once it has matched."""
        hashed = self.users.get(user)
        if hashed is None:
            return False
        key = hashlib.sha256(hashed + b"\0" + password.encode()).digest()
        with self._lock:
            if any(hmac.compare_digest(key, k) for k in self._ok_cache):
                return True
        ok = bcrypt.checkpw(password.encode(), hashed)
        if ok:
            with self._lock:
                self._ok_cache.add(key)
        return ok


def load(path: str | None) -> WebConfig:
    if not path:
        return WebConfig()
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text())
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the web config ({exc.strerror})") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{p}: not valid YAML: {str(exc).splitlines()[0]}") from exc
    if data is None:
        return WebConfig()
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: the web config must be a mapping")
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise ConfigError(f"{p}: unknown key(s) {', '.join(unknown)} (known: "
                          f"{', '.join(sorted(_TOP))})")
    cfg = WebConfig()
    users = data.get("basic_auth_users") or {}
    if not isinstance(users, dict):
        raise ConfigError(f"{p}: basic_auth_users must map user names to bcrypt hashes")
    for user, hashed in users.items():
        h = str(hashed or "")
        if not h.startswith(("$2a$", "$2b$", "$2y$")) or len(h) != 60:
            raise ConfigError(f"{p}: basic_auth_users.{user} is not a bcrypt hash"
                              " (expected $2b$..., 60 characters)")
        cfg.users[str(user)] = h.encode()
    tls = data.get("tls_server_config")
    if tls:
        cfg.ssl_context = _ssl_context(p, tls)
    return cfg


def _ssl_context(p: Path, tls: object) -> ssl.SSLContext:
    if not isinstance(tls, dict):
        raise ConfigError(f"{p}: tls_server_config must be a mapping")
    unknown = sorted(set(tls) - _TLS)
    if unknown:
        raise ConfigError(f"{p}: unknown key(s) in tls_server_config: {', '.join(unknown)}")

    def rel(key: str) -> str | None:
        v = tls.get(key)
        if not v:
            return None
        f = Path(str(v))
        f = f if f.is_absolute() else p.parent / f
        if not f.is_file():
            raise ConfigError(f"{p}: tls_server_config.{key} {f} does not exist")
        return str(f)

    cert, key = rel("cert_file"), rel("key_file")
    if not cert or not key:
        raise ConfigError(f"{p}: tls_server_config needs both cert_file and key_file")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if tls.get("min_version"):
        try:
            ctx.minimum_version = _VERSIONS[str(tls["min_version"])]
        except KeyError:
            raise ConfigError(f"{p}: tls_server_config.min_version {tls['min_version']!r} is"
                              f" not one of {', '.join(_VERSIONS)}") from None
    try:
        ctx.load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        raise ConfigError(f"{p}: cannot load cert_file/key_file: {exc}") from exc
    auth = str(tls.get("client_auth_type") or "NoClientCert")
    if auth not in _CLIENT_AUTH:
        raise ConfigError(f"{p}: tls_server_config.client_auth_type {auth!r} is not one of"
                          f" {', '.join(_CLIENT_AUTH)}")
    ca = rel("client_ca_file")
    if auth != "NoClientCert":
        if not ca:
            raise ConfigError(f"{p}: client_auth_type {auth} needs client_ca_file")
        ctx.load_verify_locations(ca)
        ctx.verify_mode = _CLIENT_AUTH[auth]
    return ctx
