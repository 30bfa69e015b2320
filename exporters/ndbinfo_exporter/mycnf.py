"""Reading a MySQL option file (what `--config.my-cnf` names): `[client]`, or the section an
auth_module names (`[client.node2]`), in the format mysqld_exporter reads the same file.

Parsed here rather than by the driver so a malformed file fails at start-up with a message
naming the file and the problem, and so the password can come from the environment instead.
The loadgen reads its own option file here too.

No error quotes a line or a value of the file: a typo such as `password Tr0ub4dor&3` (no
`=`) makes the whole line one option name, so an unknown option is named by its section and
line number only; the other errors name the key.
"""

from __future__ import annotations

import configparser
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

from ndbinfo_exporter.errors import ConfigError

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
    section: str = "client"  # the option-file section it came from

    def at(self, address: str) -> ClientConfig:
        """The same login at another host:port (a node of the description)."""
        host, _, port = address.rpartition(":")
        return dataclasses.replace(self, host=host.strip("[]"), port=int(port), socket=None)

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


def expand_env(value: str, env: dict[str, str]) -> str:
    """`$NAME` and `${NAME}` replaced as Go's os.ExpandEnv does, because mysqld_exporter maps
    every value of this same file through it (prometheus/mysqld_exporter config/config.go
    v0.19.0: `cfg.ValueMapper = os.ExpandEnv`; the rules are golang/go src/os/env.go
    Expand/getShellName): an unset name becomes empty, `$$`, `$1`, `$*`... are shell special
    names (also empty), and a `$` followed by nothing name-like stays."""
    out: list[str] = []
    i = 0
    while i < len(value):
        c = value[i]
        if c != "$" or i + 1 == len(value):
            out.append(c)
            i += 1
            continue
        rest = value[i + 1:]
        if rest[0] == "{":
            if len(rest) > 2 and rest[1] in _SPECIAL and rest[2] == "}":
                name, width = rest[1], 3
            else:
                close = rest.find("}")
                if close == 1:
                    name, width = "", 2          # `${}`: bad syntax, eaten
                elif close > 1:
                    name, width = rest[1:close], close + 1
                else:
                    name, width = "", 1          # `${` unclosed: the brace is eaten
        elif rest[0] in _SPECIAL:
            name, width = rest[0], 1
        else:
            width = 0
            while width < len(rest) and (rest[width].isascii()
                                         and (rest[width].isalnum() or rest[width] == "_")):
                width += 1
            name = rest[:width]
        if name:
            out.append(env.get(name, ""))
        elif width == 0:
            out.append("$")                      # not followed by a name: kept
        i += 1 + width
    return "".join(out)


_SPECIAL = set("*#$@!?-0123456789")


def read_sections(path: str | os.PathLike) -> tuple[Path, configparser.ConfigParser]:
    """The option file parsed (every section), or a ConfigError naming the problem."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read the option file ({exc.strerror})") from exc
    parser = configparser.ConfigParser(allow_no_value=True, interpolation=None, strict=False,
                                       delimiters=("=",), comment_prefixes=("#", ";"),
                                       inline_comment_prefixes=None,
                                       # MySQL option files have no [DEFAULT] section:
                                       # a section of that name is an ordinary one
                                       default_section="\0")
    parser.optionxform = str  # type: ignore[assignment, method-assign] - keys as written
    # `!include`/`!includedir` lines are not supported; say so instead of misreading them
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("!include ", "!includedir ")):
            raise ConfigError(f"{p}:{n}: `!include` directives are not supported; put the"
                              " options in this file")
        if line.lstrip().startswith("!"):
            raise ConfigError(f"{p}:{n}: a line starting with `!` is not an option")
    try:
        parser.read_string(text, source=str(p))
    except configparser.Error as exc:
        # configparser's own text quotes the offending line (which may be a password)
        where = getattr(exc, "lineno", None)
        at = f" at line {where}" if where else ""
        raise ConfigError(f"{p}: not a valid option file{at}: {_kind_of(exc)}") from None
    parser.lines = _line_numbers(text)  # type: ignore[attr-defined]
    return p, parser


def _kind_of(exc: configparser.Error) -> str:
    if isinstance(exc, configparser.MissingSectionHeaderError):
        return "an option before the first [section]"
    if isinstance(exc, configparser.DuplicateSectionError):
        return "a [section] given twice"
    return "a line that is neither a [section] nor an option"


def _line_numbers(text: str) -> dict[tuple[str, str], int]:
    """(section, option name as configparser keys it) -> its line number."""
    out: dict[tuple[str, str], int] = {}
    section = None
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1]
            continue
        if section is not None:
            out.setdefault((section, stripped.split("=", 1)[0].strip()), n)
    return out


def section_options(p: Path, parser: configparser.ConfigParser, section: str,
                    env: dict[str, str] | None) -> dict[str, str | None]:
    """A section's options, each looked up in the section and then in its dotted parents
    (`client.node2` falls back to `client`), as mysqld_exporter's ini library does for the
    same file (go-ini Section.GetKey: "Check if it is a child-section"; mysqld_exporter
    config.go: "no user specified in section or parent"). `env` None: values are taken as
    written (a file only we read), else `$NAME` is expanded as mysqld_exporter does.

    An option this module does not know is kept under the key `?<line>`, so the caller can
    refuse it by section and line without repeating it."""
    if not parser.has_section(section):
        raise ConfigError(f"{p}: no [{section}] section (found: "
                          f"{', '.join(parser.sections()) or 'no sections'})")
    chain = [section]
    while "." in chain[-1]:
        chain.append(chain[-1].rsplit(".", 1)[0])
    opts: dict[str, str | None] = {}
    lines: dict[tuple[str, str], int] = getattr(parser, "lines", {})
    for name in reversed(chain):  # the parents first, the section itself wins
        if not parser.has_section(name):
            continue
        for k, v in parser.items(name, raw=True):
            key = k.lower().replace("-", "_")
            if key not in _KNOWN:
                key = f"?{lines.get((name, k), 0)}"
            value = _unquote(v) if v is not None else None
            opts[key] = expand_env(value, env) if value is not None and env is not None \
                else value
    return opts


def load(path: str | os.PathLike, env: dict[str, str] | None = None,
         section: str = "client", expand: bool = True) -> ClientConfig:
    """The login of one section (`client` by default, or an auth_module such as
    `client.node2`); host and port may be overridden by the caller (the description's
    address of the node)."""
    env = dict(os.environ if env is None else env)
    p, parser = read_sections(path)
    return from_section(p, parser, section, env if expand else None)


def from_section(p: Path, parser: configparser.ConfigParser, section: str,
                 env: dict[str, str] | None) -> ClientConfig:
    """`env` None: values as written, and no password from NDBINFO_EXPORTER_PASSWORD."""
    opts = section_options(p, parser, section, env)
    where = f"[{section}]"
    unknown = sorted(int(k[1:]) for k in opts if k.startswith("?"))
    if unknown:
        lines = ", ".join(str(n) for n in unknown)
        raise ConfigError(f"{p}: {where} (or a section it inherits from): line(s) {lines} set"
                          " no option this reader knows: a misspelt name, or a missing `=`"
                          " (the line is not repeated here: it may hold a password)")
    user = opts.get("user")
    if not user:
        raise ConfigError(f"{p}: {where} has no `user` (nor its parent section)")
    try:
        port = int(opts.get("port") or 3306)
    except ValueError:
        raise ConfigError(f"{p}: {where} port is not a number") from None
    if not 0 < port < 65536:
        raise ConfigError(f"{p}: {where} port {port} is out of range")
    ssl: dict[str, object] = {}
    for key, target in (("ssl_ca", "ca"), ("ssl_cert", "cert"), ("ssl_key", "key")):
        if opts.get(key):
            f = Path(str(opts[key]))
            if not f.is_file():
                raise ConfigError(f"{p}: {where} {key} file {f} does not exist")
            ssl[target] = str(f)
    mode = _ssl_mode(p, opts, ssl, where)
    key = None
    if opts.get("server_public_key_path"):
        f = Path(str(opts["server_public_key_path"]))
        try:
            key = f.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{p}: {where} server-public-key-path {f}: {exc.strerror}"
                              ) from exc
    password = opts.get("password")
    if section == "client" and env is not None:
        password = env.get(PASSWORD_ENV) or password
    return ClientConfig(path=str(p), user=user, password=password,
                        host=opts.get("host") or "127.0.0.1", port=port,
                        socket=opts.get("socket") or None, ssl_mode=mode, ssl=ssl,
                        server_public_key=key, section=section)


def _ssl_mode(p: Path, opts: dict[str, str | None], ssl: dict[str, object],
              where: str = "[client]") -> str:
    """The effective ssl-mode, as the mysql client would use it."""
    if opts.get("ssl_mode") is not None:
        mode = str(opts["ssl_mode"]).upper()
        if mode not in SSL_MODES:
            raise ConfigError(f"{p}: {where} ssl-mode is not one of {', '.join(SSL_MODES)}")
        if mode in ("VERIFY_CA", "VERIFY_IDENTITY") and "ca" not in ssl:
            raise ConfigError(f"{p}: {where} ssl-mode {mode} needs ssl-ca")
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
