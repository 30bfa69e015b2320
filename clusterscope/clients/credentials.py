"""How a client proves who it is to the door (HTTP basic auth) and checks that the door is
the stack's (TLS against a CA file): the credentials come from a file or the environment,
never from the command line, and no error or repr ever shows the password.

A credentials file holds one line, `USER:PASSWORD` (the door's users are its roles: read,
write, operate), readable by its owner only. The environment may name such a file
(`<PREFIX>_CREDENTIALS`) or give `<PREFIX>_USER` and `<PREFIX>_PASSWORD`.
"""

from __future__ import annotations

import base64
import os
import ssl
import stat
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path


class CredentialsError(ValueError):
    """Credentials cannot be used; the message names the file or variable, never a secret."""


@dataclass(frozen=True)
class Credentials:
    user: str
    password: str = field(repr=False)

    def header(self) -> str:
        token = base64.b64encode(f"{self.user}:{self.password}".encode()).decode()
        return f"Basic {token}"


def read_file(path: str | os.PathLike) -> Credentials:
    p = Path(path).expanduser()
    try:
        text = p.read_text()
    except OSError as exc:
        raise CredentialsError(f"credentials file {p}: {exc.strerror}") from None
    if stat.S_IMODE(p.stat().st_mode) & 0o077:
        print(f"warning: credentials file {p} is readable by others (chmod 600)",
              file=sys.stderr)
    line = text.split("\n", 1)[0].strip("\r")
    user, sep, password = line.partition(":")
    if not sep or not user or not password:
        raise CredentialsError(f"credentials file {p}: its first line must be USER:PASSWORD")
    return Credentials(user, password)


def from_environment(prefix: str, env: dict[str, str] | None = None) -> Credentials | None:
    """`<PREFIX>_CREDENTIALS` (a file), else `<PREFIX>_USER` with `<PREFIX>_PASSWORD`."""
    env = os.environ if env is None else env
    if env.get(f"{prefix}_CREDENTIALS"):
        return read_file(env[f"{prefix}_CREDENTIALS"])
    user, password = env.get(f"{prefix}_USER"), env.get(f"{prefix}_PASSWORD")
    if user and password:
        return Credentials(user, password)
    if user or password:
        missing = f"{prefix}_PASSWORD" if user else f"{prefix}_USER"
        raise CredentialsError(f"{missing} is not set (it goes with"
                               f" {f'{prefix}_USER' if not user else f'{prefix}_PASSWORD'})")
    return None


def resolve(file: str | None, prefix: str) -> Credentials | None:
    """An option's file, else the environment's."""
    return read_file(file) if file else from_environment(prefix)


@dataclass(frozen=True)
class Access:
    """Credentials and the CA the server's certificate is checked against (None: the
    system's); a client opens every request through `open`."""
    credentials: Credentials | None = None
    ca_file: str | None = None

    def context(self) -> ssl.SSLContext | None:
        if self.ca_file is None:
            return None
        try:
            return ssl.create_default_context(cafile=self.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise CredentialsError(f"CA file {self.ca_file}: {exc}") from None

    def open(self, req: urllib.request.Request, timeout: float):  # noqa: ANN201 - urlopen's
        if self.credentials is not None:
            req.add_unredirected_header("Authorization", self.credentials.header())
        return urllib.request.urlopen(req, timeout=timeout, context=self.context())


NONE = Access()


def access(credentials_file: str | None, ca_file: str | None, prefix: str) -> Access:
    """The Access of a command's options, else of `<PREFIX>_CREDENTIALS`/`_USER`/`_PASSWORD`
    and `<PREFIX>_CA`."""
    ca = ca_file or os.environ.get(f"{prefix}_CA") or None
    return Access(resolve(credentials_file, prefix), ca)
