"""Reading the `[client]` section of a MySQL option file (what `--config.my-cnf` names).

Parsed here rather than by the driver so a malformed file fails at start-up with a message
naming the file and the problem, and so the password can come from the environment instead.
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass, field
from pathlib import Path

PASSWORD_ENV = "NDBINFO_EXPORTER_PASSWORD"

# option-file keys we understand (dashes and underscores are the same to the mysql client)
_KNOWN = {"user", "password", "host", "port", "socket", "ssl_ca", "ssl_cert", "ssl_key",
          "ssl_verify_server_cert", "ssl", "ssl_mode", "database", "server_public_key_path",
          "get_server_public_key"}
# MySQL client --ssl-mode values (MySQL 8.0/8.4 reference manual, "Command Options for
# Encrypted Connections"); MariaDB's client spells the same intent `ssl` and
# `ssl-verify-server-cert`, which map onto them below.
SSL_MODES = ("DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY")
_TRUE = ("1", "on", "true", "yes", "")


class ConfigError(ValueError):
    """A configuration file is unusable; the message names the file and the problem."""


@dataclass
class ClientConfig:
    path: str
    user: str
    password: str | None = None
    host: str = "127.0.0.1"
    port: int = 3306
    socket: str | None = None
    ssl_mode: str = "PREFERRED"
    ssl: dict[str, object] = field(default_factory=dict)  # ca, cert, key files
    server_public_key: bytes | None = None  # PEM, for caching_sha2_password without TLS

    def target(self) -> str:
        """Where we connect, for log lines (never includes the password)."""
        return f"unix:{self.socket}" if self.socket else f"{self.host}:{self.port}"

    def connect_kwargs(self) -> dict[str, object]:
        kw: dict[str, object] = {"user": self.user, "password": self.password or ""}
        if self.socket:
            kw["unix_socket"] = self.socket
        else:
            kw["host"], kw["port"] = self.host, self.port
        kw.update(self.ssl_kwargs())
        if self.server_public_key:
            kw["server_public_key"] = self.server_public_key
        return kw

    def ssl_kwargs(self) -> dict[str, object]:
        """PyMySQL's TLS arguments for the ssl-mode (PyMySQL >= 1.1 semantics: no argument
        is PREFERRED, TLS when the server offers it; `ssl` given makes TLS required)."""
        if self.ssl_mode == "DISABLED":
            return {"ssl_disabled": True}
        if self.ssl_mode == "PREFERRED" and not self.ssl:
            return {}
        verify = self.ssl_mode in ("VERIFY_CA", "VERIFY_IDENTITY")
        ssl: dict[str, object] = dict(self.ssl)
        # a non-empty dict: PyMySQL requires TLS (and fails if the server has none)
        ssl["check_hostname"] = self.ssl_mode == "VERIFY_IDENTITY"
        ssl["verify_mode"] = verify
        return {"ssl": ssl}


def _unquote(value: str) -> str:
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


def load(path: str | os.PathLike, env: dict[str, str] | None = None) -> ClientConfig:
    env = os.environ if env is None else env
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the option file ({exc.strerror})") from exc
    parser = configparser.ConfigParser(allow_no_value=True, interpolation=None, strict=False,
                                       delimiters=("=",), comment_prefixes=("#", ";"),
                                       inline_comment_prefixes=None)
    # `!include`/`!includedir` lines are not supported; say so instead of misreading them
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("!"):
            raise ConfigError(f"{p}:{n}: `{line.split()[0]}` directives are not supported;"
                              " put the [client] options in this file")
    try:
        parser.read_string(text, source=str(p))
    except configparser.Error as exc:
        first = str(exc).splitlines()[0]
        raise ConfigError(f"{p}: not a valid option file: {first}") from exc
    if not parser.has_section("client"):
        raise ConfigError(f"{p}: no [client] section (found: "
                          f"{', '.join(parser.sections()) or 'no sections'})")
    opts = {k.replace("-", "_"): (_unquote(v) if v is not None else None)
            for k, v in parser.items("client")}
    unknown = sorted(set(opts) - _KNOWN)
    if unknown:
        raise ConfigError(f"{p}: unknown option(s) in [client]: {', '.join(unknown)}")
    user = opts.get("user")
    if not user:
        raise ConfigError(f"{p}: [client] has no `user`")
    try:
        port = int(opts.get("port") or 3306)
    except ValueError:
        raise ConfigError(f"{p}: [client] port {opts.get('port')!r} is not a number") from None
    if not 0 < port < 65536:
        raise ConfigError(f"{p}: [client] port {port} is out of range")
    ssl: dict[str, object] = {}
    for key, target in (("ssl_ca", "ca"), ("ssl_cert", "cert"), ("ssl_key", "key")):
        if opts.get(key):
            f = Path(str(opts[key]))
            if not f.is_file():
                raise ConfigError(f"{p}: [client] {key} file {f} does not exist")
            ssl[target] = str(f)
    mode = _ssl_mode(p, opts, ssl)
    key = None
    if opts.get("server_public_key_path"):
        f = Path(str(opts["server_public_key_path"]))
        try:
            key = f.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{p}: [client] server-public-key-path {f}: {exc.strerror}"
                              ) from exc
    password = env.get(PASSWORD_ENV) or opts.get("password")
    return ClientConfig(path=str(p), user=user, password=password,
                        host=opts.get("host") or "127.0.0.1", port=port,
                        socket=opts.get("socket") or None, ssl_mode=mode, ssl=ssl,
                        server_public_key=key)


def _ssl_mode(p: Path, opts: dict[str, str | None], ssl: dict[str, object]) -> str:
    """The effective ssl-mode, as the mysql client would use it."""
    if opts.get("ssl_mode") is not None:
        mode = str(opts["ssl_mode"]).upper()
        if mode not in SSL_MODES:
            raise ConfigError(f"{p}: [client] ssl-mode {opts['ssl_mode']!r}: one of"
                              f" {', '.join(SSL_MODES)}")
        if mode in ("VERIFY_CA", "VERIFY_IDENTITY") and "ca" not in ssl:
            raise ConfigError(f"{p}: [client] ssl-mode {mode} needs ssl-ca")
        return mode
    verify = opts.get("ssl_verify_server_cert")
    if verify is not None and str(verify).lower() in _TRUE:
        return "VERIFY_IDENTITY" if "ca" in ssl else "REQUIRED"
    if "ssl" in opts:
        return "REQUIRED" if str(opts["ssl"] or "").lower() in _TRUE else "DISABLED"
    # an ssl-ca without a mode means VERIFY_CA to the mysql client: mysql/mysql-server
    # include/sslopt-case.h, `case OPT_SSL_CA: ... if (!ssl_mode_set_explicitly)
    # opt_ssl_mode = SSL_MODE_VERIFY_CA`
    return "VERIFY_CA" if "ca" in ssl else "PREFERRED"
