"""The web config's YAML as exporter-toolkit reads it (go-yaml v2, UnmarshalStrict), and
its scalar fields as the Go types they land in read them: every value keeps its text, a
field parses what it wants, and each error names the file and the key."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import yaml

from ndbinfo_exporter.errors import ConfigError

MAX_PEM_BYTES = 4 << 20  # a CA bundle (the system's is ~200 KB)
_BOOLS = {**dict.fromkeys(("true", "True", "TRUE", "y", "Y", "yes", "Yes", "YES", "on", "On",
                           "ON"), True),
          **dict.fromkeys(("false", "False", "FALSE", "n", "N", "no", "No", "NO", "off", "Off",
                           "OFF"), False)}


class Loader(yaml.SafeLoader):
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


Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers
            if tag in ("tag:yaml.org,2002:null", "tag:yaml.org,2002:merge")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}



def kind(v: object) -> str:
    return {dict: "mapping", list: "list", str: "string"}.get(type(v), type(v).__name__)


def check_keys(where: str, prefix: str, d: dict, known: tuple[str, ...]) -> None:
    unknown = [str(k) for k in d if k not in known]
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(prefix + k for k in unknown)}"
                          f" (known: {', '.join(known)})")


def mapping(where: str, key: str, v: object) -> dict:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise ConfigError(f"{where}: {key} must be a mapping, not a {kind(v)}")
    return v


def string(where: str, key: str, v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, int | float) and not isinstance(v, bool):  # an explicit !!int tag
        return str(v)
    raise ConfigError(f"{where}: {key} must be a string, not a {kind(v)}")


def string_list(where: str, key: str, v: object) -> list[str]:
    if v is None:
        return []
    if not isinstance(v, list):
        raise ConfigError(f"{where}: {key} must be a list, not a {kind(v)}")
    return [string(where, f"{key}[{i}]", x) for i, x in enumerate(v)]


def boolean(where: str, key: str, v: object, default: bool) -> bool:
    if v is None:
        return default
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v in _BOOLS:
        return _BOOLS[v]
    raise ConfigError(f"{where}: {key} must be true or false, not {v!r}")



def read_file(where: str, key: str, path: Path, limit: int = MAX_PEM_BYTES) -> bytes:
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

