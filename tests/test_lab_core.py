"""The lab's process bookkeeping: start, idempotence, port conflicts, exact teardown."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from clusterscope.lab.core import Lab, LabError, pid_alive, port_in_use


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _http(lab: Lab, name: str, port: int):
    return lab.spawn(name, "test", "a test http server",
                     [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)],
                     port=port, ready_timeout=20)


@pytest.mark.tools("python")
def test_spawn_is_idempotent_and_stop_ends_exactly_that_process(tmp_path: Path) -> None:
    lab = Lab(tmp_path / "lab", port_base=30000)
    port = _free_port()
    first = _http(lab, "web", port)
    assert pid_alive(first.pid, first.start_time) and port_in_use(port)
    again = _http(lab, "web", port)
    assert again.pid == first.pid, "a second start of a running service must be a no-op"
    lab.stop("web")
    assert not pid_alive(first.pid, first.start_time)
    assert not port_in_use(port)
    assert lab.services() == []


def test_a_taken_port_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    lab = Lab(tmp_path / "lab", port_base=30000)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(LabError, match=str(port)):
            _http(lab, "web", port)
    assert lab.services() == []


@pytest.mark.tools("python")
def test_a_service_that_dies_at_start_reports_its_log(tmp_path: Path) -> None:
    lab = Lab(tmp_path / "lab", port_base=30000)
    argv = [sys.executable, "-c", "import sys; print('boom: bad config'); sys.exit(3)"]
    with pytest.raises(LabError, match="boom: bad config"):
        lab.spawn("broken", "test", "exits at once", argv, port=_free_port(), ready_timeout=10)
    assert lab.services() == []


def test_no_two_lab_ports_share_an_offset() -> None:
    from clusterscope.lab.ports import MAX_OFFSET, OFFSETS
    seen: dict[int, str] = {}
    for name, off in OFFSETS.items():
        assert off not in seen, f"{name} and {seen[off]} both use offset {off}"
        assert 0 <= off <= MAX_OFFSET, name
        seen[off] = name
