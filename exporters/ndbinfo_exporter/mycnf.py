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
          "ssl_verify_server_cert", "ssl", "ssl_mode", "database"}


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
    ssl: dict[str, object] = field(default_factory=dict)

    def target(self) -> str:
        """Where we connect, for log lines (never includes the password)."""
        return f"unix:{self.socket}" if self.socket else f"{self.host}:{self.port}"

    def connect_kwargs(self) -> dict[str, object]:
        kw: dict[str, object] = {"user": self.user, "password": self.password or ""}
        if self.socket:
            kw["unix_socket"] = self.socket
        else:
            kw["host"], kw["port"] = self.host, self.port
        if self.ssl:
            kw["ssl"] = dict(self.ssl)
        return kw


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
    if "ssl_verify_server_cert" in opts:
        ssl["check_hostname"] = (opts["ssl_verify_server_cert"] or "1") not in ("0", "OFF",
                                                                                "off", "false")
    password = env.get(PASSWORD_ENV) or opts.get("password")
    return ClientConfig(path=str(p), user=user, password=password,
                        host=opts.get("host") or "127.0.0.1", port=port,
                        socket=opts.get("socket") or None, ssl=ssl)
