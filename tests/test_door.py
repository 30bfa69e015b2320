"""The door: through the lab's real vmauth (the release compose pins, with compose's routes),
in front of the lab's real VictoriaMetrics and Alertmanager, a request without credentials
is refused (401), a role is refused what it may not do (403), and the roles do their work:
read queries, write pins, operate silences. The toolkit reaches the lab through it, its
password never in argv."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
from helpers import eventually

from clusterscope import maintenance
from clusterscope.clients.credentials import read_file
from clusterscope.lab import door_service
from clusterscope.lab.core import Lab

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def door(monitoring_lab) -> dict:
    lab = Lab(monitoring_lab.root, monitoring_lab.port_base)
    return {"url": door_service.url(lab), "ca": str(door_service.ca_file(lab)),
            "creds": {r: read_file(door_service.credentials_file(lab, r))
                      for r in ("read", "write", "operate")}}


def call(door: dict, path: str, role: str | None = None, method: str = "GET",
         body: bytes | None = None, ctype: str = "application/json") -> tuple[int, bytes]:
    req = urllib.request.Request(f"{door['url']}{path}", data=body, method=method,
                                 headers={"Content-Type": ctype})
    if role is not None:
        req.add_header("Authorization", door["creds"][role].header())
    ctx = ssl.create_default_context(cafile=door["ca"])
    try:
        with urllib.request.urlopen(req, timeout=15, context=ctx) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def silence(comment: str) -> bytes:
    now = datetime.now(UTC)
    return json.dumps({"matchers": [{"name": "cluster", "value": "door-test", "isRegex": False,
                                     "isEqual": True}],
                       "startsAt": now.isoformat(),
                       "endsAt": (now + timedelta(minutes=5)).isoformat(),
                       "createdBy": "tests/test_door.py", "comment": comment}).encode()


DELETE = "/api/v1/admin/tsdb/delete_series?match[]=%7B__name__%3D~%22.%2B%22%7D"
SILENCES = "/alertmanager/api/v2/silences"


def test_without_credentials_nothing_gets_through(door) -> None:
    assert call(door, DELETE, method="POST")[0] == 401
    assert call(door, SILENCES, method="POST", body=silence("anonymous"))[0] == 401
    assert call(door, "/api/v1/query?query=up")[0] == 401
    assert call(door, "/select/logsql/query?query=*")[0] == 401
    # a wrong password is no better than none
    bad = dict(door, creds={"read": type(door["creds"]["read"])("read", "not-the-password")})
    assert call(bad, "/api/v1/query?query=up", "read")[0] == 401


def test_the_read_role_reads_and_is_refused_every_write(door, monitoring_lab) -> None:
    code, body = call(door, "/api/v1/query?query=up", "read")
    assert code == 200 and json.loads(body)["status"] == "success"
    # refused by name: 403 and the role, from the inventory's /door/denied
    for path, method, data in ((DELETE, "POST", None),
                               (SILENCES, "POST", silence("read role")),
                               ("/api/v1/import/prometheus", "POST", b"door_test 1\n"),
                               ("/alertmanager/api/v2/alerts", "POST", b"[]"),
                               ("/snapshot/create", "GET", None),
                               ("/debug/pprof/heap", "GET", None)):
        code, body = call(door, path, "read", method, data)
        assert code == 403, (path, code, body)
        assert b"read role" in body, body
    # nothing the read role sent reached Alertmanager
    am = f"http://127.0.0.1:{monitoring_lab.port('alertmanager')}"
    assert not [s for s in maintenance.ours(am) if s.get("comment") == "read role"]
    with urllib.request.urlopen(f"{am}/api/v2/silences", timeout=10) as r:
        assert not [s for s in json.loads(r.read()) if s["comment"] == "read role"]


def test_the_operate_role_silences_and_the_write_role_pins(door, monitoring_lab) -> None:
    code, body = call(door, SILENCES, "operate", "POST", silence("operate role"))
    assert code == 200, body
    sid = json.loads(body)["silenceID"]
    am = f"http://127.0.0.1:{monitoring_lab.port('alertmanager')}"
    with urllib.request.urlopen(f"{am}/api/v2/silence/{sid}", timeout=10) as r:
        assert json.loads(r.read())["comment"] == "operate role"
    assert call(door, f"/alertmanager/api/v2/silence/{sid}", "operate", "DELETE")[0] == 200
    # operate may not write series, write may not silence
    assert call(door, "/api/v1/import/prometheus", "operate", "POST", b"x 1\n")[0] == 403
    assert call(door, SILENCES, "write", "POST", silence("write role"))[0] == 403
    stamp = int(time.time())
    code, _ = call(door, "/api/v1/import/prometheus", "write", "POST",
                   f'door_test_pin{{run="{stamp}"}} 42\n'.encode(), "text/plain")
    assert code == 204
    assert call(door, "/internal/force_flush", "write")[0] == 200

    def pinned() -> list:
        code, body = call(door, f"/api/v1/query?query=door_test_pin%7Brun%3D%22{stamp}%22%7D",
                          "read")
        return json.loads(body)["data"]["result"]
    # searchable once VictoriaMetrics' 1 s latency offset has passed
    assert eventually(pinned, 15, "the pin through the door")[0]["value"][1] == "42"


def test_the_toolkit_reaches_the_lab_through_the_door(monitoring_lab) -> None:
    """`clusterscope maintenance` with the operate role's credentials file (never the
    password in argv); `logs query` through the door with the lab's own credentials."""
    lab = Lab(monitoring_lab.root, monitoring_lab.port_base)
    creds = door_service.credentials_file(lab, "operate")
    ca = door_service.ca_file(lab)
    am = f"{door_service.url(lab)}/alertmanager"
    out = monitoring_lab.cli("maintenance", "--alertmanager", am, "--alertmanager-credentials",
                             str(creds), "--alertmanager-ca", str(ca), "start", "--cluster",
                             "door-test", "--duration", "5m").stdout
    assert "silence" in out
    listed = monitoring_lab.cli("maintenance", "--alertmanager", am,
                                "--alertmanager-credentials", str(creds), "--alertmanager-ca",
                                str(ca), "list", "--cluster", "door-test").stdout
    assert "cluster=door-test" in listed
    monitoring_lab.cli("maintenance", "--alertmanager", am, "--alertmanager-credentials",
                       str(creds), "--alertmanager-ca", str(ca), "stop", "--cluster",
                       "door-test")
    # with the read role's credentials a silence is refused, and the error says 403
    proc = monitoring_lab.cli("maintenance", "--alertmanager", am, "--alertmanager-credentials",
                              str(door_service.credentials_file(lab, "read")),
                              "--alertmanager-ca", str(ca), "start", "--cluster",
                              "door-test", check=False)
    assert proc.returncode == 1 and "403" in proc.stderr
    password = read_file(creds).password
    assert password not in proc.stderr + proc.stdout
    # no CA: the lab's certificate is not trusted, and that is what the error says
    proc = monitoring_lab.cli("maintenance", "--alertmanager", am, "--alertmanager-credentials",
                              str(creds), "list", check=False)
    assert proc.returncode == 1 and "CERTIFICATE_VERIFY_FAILED" in proc.stderr
    status = monitoring_lab.cli("logs", "query", "*", "--since", "10m", "--limit", "1",
                                "--json").stdout
    assert status.strip()
