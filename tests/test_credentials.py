"""The toolkit's credentials for the door come from a file or the environment, never from
its command line, and nothing it says repeats a password."""

from __future__ import annotations

import argparse

import pytest

from clusterscope.cli import build_parser
from clusterscope.clients import credentials
from clusterscope.clients.credentials import Credentials, CredentialsError

SECRET = "Zq-not-to-be-seen-0123"


def _options(parser: argparse.ArgumentParser, path: str = "clusterscope") -> list[str]:
    out = []
    for action in parser._actions:
        out += [f"{path} {o}" for o in action.option_strings]
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _options(sub, f"{path} {name}")
    return out


def test_no_command_takes_a_secret_on_its_command_line() -> None:
    options = _options(build_parser())
    assert any(o.endswith("--vm-credentials") for o in options)
    assert any(o.endswith("--alertmanager-credentials") for o in options)
    leaky = [o for o in options
             if any(w in o.split()[-1] for w in ("password", "passwd", "token", "secret"))]
    assert leaky == []


def test_a_credentials_file_and_its_errors(tmp_path, capsys) -> None:
    f = tmp_path / "door-read"
    f.write_text(f"read:{SECRET}\n")
    f.chmod(0o600)
    c = credentials.read_file(f)
    assert (c.user, c.password) == ("read", SECRET) and SECRET not in repr(c)
    assert c.header().startswith("Basic ")
    f.write_text(f"{SECRET}\n")  # no user
    with pytest.raises(CredentialsError, match="USER:PASSWORD") as err:
        credentials.read_file(f)
    assert SECRET not in str(err.value)
    f.write_text(f"read:{SECRET}\n")
    f.chmod(0o644)
    credentials.read_file(f)
    assert "readable by others" in capsys.readouterr().err
    with pytest.raises(CredentialsError, match="No such file"):
        credentials.read_file(tmp_path / "nope")


def test_the_environment_names_a_file_or_gives_user_and_password(tmp_path) -> None:
    f = tmp_path / "c"
    f.write_text(f"write:{SECRET}\n")
    assert credentials.from_environment("X", {"X_CREDENTIALS": str(f)}) == \
        Credentials("write", SECRET)
    assert credentials.from_environment("X", {"X_USER": "read", "X_PASSWORD": SECRET}) == \
        Credentials("read", SECRET)
    assert credentials.from_environment("X", {}) is None
    with pytest.raises(CredentialsError, match="X_PASSWORD is not set") as err:
        credentials.from_environment("X", {"X_USER": "read"})
    assert SECRET not in str(err.value)
    # an option's file wins over the environment; the CA comes with it
    access = credentials.access(str(f), None, "NOPE_PREFIX")
    assert access.credentials == Credentials("write", SECRET) and access.ca_file is None
