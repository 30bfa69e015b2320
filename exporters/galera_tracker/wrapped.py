"""Error-log lines shipped inside a log collector's wrapper -> the error-log lines themselves.

Two wrappers are common where Galera runs on Kubernetes, and they nest:

- JSON, one object per line with the text in its `log` field. The Percona Operator's log
  collector (fluent-bit in the `logs` container of a PXC pod) writes
  `{"log":"2023-05-25T04:38:02.457961Z 0 [Note] [MY-000000] [Galera] Shifting PRIMARY ->
  JOINER (TO: 5861193)\\n","file":"/var/lib/mysql/mysqld-error.log"}`, as seen in the real
  logs of percona/percona-toolkit src/go/pt-galera-log-explainer/tests/logs/operator_*/.
  One object may carry several lines (`"...Quorum results:\\n\\tversion = 6,\\n..."`): the
  collector glued a message's continuation lines to it. Docker's json-file driver uses the
  same `log` field. Each object is taken as whole lines: the collector always ends `log`
  with a newline, and joining objects that lack one (docker's 16 KiB pieces) would glue
  the next line on when another shipper drops the newline; no line the tracker reads is
  that long.
- CRI, what the kubelet / container runtime writes for a container's stdout and stderr
  (`/var/log/pods/...`): `<RFC 3339 nano time> <stdout|stderr> <F|P> <content>`, where `P`
  marks a piece of a line the runtime split and `F` the piece that ends it. Format: the
  Kubernetes design proposal "CRI: Log management for container stdout/stderr streams"
  (kubernetes/design-proposals-archive, node/kubelet-cri-logging.md) and the kubelet's
  parser (kubernetes/kubernetes pkg/kubelet/kuberuntime/logs/logs.go); promtail's `cri`
  stage documents the same four fields. The content of a collector container's CRI line is
  the collector's JSON line, so CRI is unwrapped first, then JSON.

Anything else (a plain error log, the shell trace a collector container prints at start)
passes through unchanged, so the tracker never needs to be told which format a file has.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_CRI = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) "
                  r"(stdout|stderr) ([FP])(?: (.*))?$", re.DOTALL)
# A runaway series of P pieces (a binary blob on stdout) must not grow without bound.
MAX_PARTIAL = 1 << 20


@dataclass
class Unwrapper:
    """Stateful only for CRI `P` pieces, kept per stream: stdout and stderr interleave."""

    partial: dict[str, str] = field(default_factory=dict)

    def feed(self, raw: str) -> list[str]:
        """The error-log lines one raw line carries: none (a P piece), one, or several."""
        m = _CRI.match(raw)
        if m:
            stream, tag, content = m.group(2), m.group(3), m.group(4) or ""
            content = self.partial.pop(stream, "") + content
            if tag == "P" and len(content) < MAX_PARTIAL:
                self.partial[stream] = content
                return []
            raw = content
        if raw.startswith("{"):
            inner = _json_log(raw)
            if inner is not None:
                return inner.rstrip("\n").split("\n") if inner else [""]
        return [raw]

    def to_dict(self) -> dict:
        return {"partial": dict(self.partial)}

    @classmethod
    def from_dict(cls, d: object) -> Unwrapper:
        """The saved pieces; anything else in a damaged state (not a stream name, not
        text) is dropped rather than stopping the tracker at start."""
        partial = d.get("partial") if isinstance(d, dict) else None
        if not isinstance(partial, dict):
            return cls()
        return cls(partial={k: v for k, v in partial.items()
                            if k in ("stdout", "stderr") and isinstance(v, str)
                            and len(v) < MAX_PARTIAL})


def _json_log(raw: str) -> str | None:
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than json recurses
        return None
    if isinstance(obj, dict) and isinstance(obj.get("log"), str):
        return obj["log"]
    return None


def unwrap(raw: str) -> list[str]:
    """One raw line, stateless: a CRI `P` piece on its own yields nothing."""
    return Unwrapper().feed(raw)
