"""ndbinfo_exporter's door (`--web.config.file`) against Prometheus exporter-toolkit's own
test cases: TestYAMLFiles, TestServerBehaviour, TestConfigReloading and TestUsers in
prometheus/exporter-toolkit web/tls_config_test.go (19a7c2d, Jul 2026), one case each.

Each case starts the REAL exporter process with that case's config and makes the request
the upstream test makes: plain or TLS, with the same TLS version cap, cipher list, curve,
client certificate and basic-auth credentials (tests/webconfig_harness.py). Configs,
certificates and keys are written here (upstream's testdata is not used); the names,
values and SANs are our own. `upstream` says what exporter-toolkit's test expects; where
this exporter is deliberately stricter, `stricter` says why and the case asserts our
behaviour.
"""

from __future__ import annotations

import http.client
import re
import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from webconfig_harness import (
    ALL_CIPHERS,
    EXPECTED_HEADERS,
    HEADERS,
    NO_HTTP2_CIPHER,
    NOAUTH,
    PKI,
    SANS,
    SOME_CIPHERS,
    SOME_CIPHERS_NO_ORDER,
    SOME_CURVES,
    TLS,
    USERS,
    Client,
    Exporters,
    Rejected,
    Running,
    indented,
    new_pki,
    request,
    requests,
    running_exporters,
    users,
)

pytestmark = pytest.mark.tools("python")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    return new_pki(tmp_path_factory)


@pytest.fixture(scope="module")
def exporters(pki: PKI) -> Iterator[Exporters]:
    yield from running_exporters(pki)


@dataclass(frozen=True)
class Case:
    name: str  # upstream's test name
    config: Callable[[PKI], str | None]  # None: no --web.config.file
    upstream: str  # what exporter-toolkit's test expects
    client: Client = Client()
    rejected: str | None = None  # the exporter refuses the config at start: stderr matches
    status: int | None = None  # every request gets this status
    fails: str | None = None  # the request fails: the client's error matches
    body: str | None = None
    cipher: str | None = None
    headers: dict[str, str] | None = None
    path: Callable[[PKI], Path] | None = None  # a --web.config.file that is not written
    stricter: str = ""  # why we do not do what upstream does


def _c(text: str) -> Callable[[PKI], str]:
    return lambda pki: text


CASES = [
    # -- TestYAMLFiles (upstream runs each through ListenAndServe and Validate) --
    Case("path to config yml invalid", _c(""), "error: no such file",
         path=lambda pki: pki.dir / "no-such-web.yml", rejected=r"no such file"),
    Case("empty config yml", _c(""), "200 over plain HTTP", status=200),
    Case("invalid config yml (invalid structure)",
         _c("Qm3xVt8RaLp0Ze2Yk\nWs7oJb4NcUd1Fh9Gi\nTr5vEn6XyPa2Ml0Kq\n"), "error: yaml",
         rejected=r"must be a mapping"),
    Case("invalid config yml (invalid key)", _c("tls_server_config:\n  cert_flie: a.crt\n"),
         "error: yaml (unknown field)", rejected=r"unknown key\(s\) tls_server_config\.cert_flie"),
    Case("invalid config yml (cert path empty)",
         _c("tls_server_config:\n  cert_file: ''\n  key_file: server.key\n"),
         "error: missing one of cert or cert_file", rejected=r"missing one of cert or cert_file"),
    Case("invalid config yml (cert empty)",
         _c("tls_server_config:\n  cert: ''\n  key_file: server.key\n"),
         "error: missing one of cert or cert_file", rejected=r"missing one of cert or cert_file"),
    Case("invalid config yml (key path empty)",
         _c("tls_server_config:\n  cert_file: server.crt\n  key_file: ''\n"),
         "error: missing one of key or key_file", rejected=r"missing one of key or key_file"),
    Case("invalid config yml (key empty)",
         _c("tls_server_config:\n  cert_file: server.crt\n  key: ''\n"),
         "error: missing one of key or key_file", rejected=r"missing one of key or key_file"),
    Case("invalid config yml (cert path and key path empty)",
         _c("tls_server_config:\n  cert_file: ''\n  key_file: ''\n  client_auth_type: Z\n"),
         "error: missing one of cert or cert_file", rejected=r"missing one of cert or cert_file"),
    Case("invalid config yml (cert path invalid)",
         _c("tls_server_config:\n  cert_file: nothere.crt\n  key_file: server.key\n"),
         "error: no such file", rejected=r"cert_file .*nothere\.crt: cannot read it \(no such"),
    Case("invalid config yml (key path invalid)",
         _c("tls_server_config:\n  cert_file: server.crt\n  key_file: nothere.key\n"),
         "error: no such file", rejected=r"key_file .*nothere\.key: cannot read it \(no such"),
    Case("invalid config yml (cert path and key path invalid)",
         _c("tls_server_config:\n  cert_file: nothere.crt\n  key_file: nothere.key\n"),
         "error: no such file", rejected=r"nothere\.crt: cannot read it \(no such file"),
    Case("invalid config yml (invalid ClientAuth)", _c(TLS + "  client_ca_file: /dev/null\n"),
         "error: client CA's have been configured without a Client Auth Policy",
         rejected=r"client CA's have been configured without a Client Auth Policy"),
    Case("invalid config yml (invalid ClientCAs filepath)",
         _c(TLS + "  client_ca_file: nothere-ca.pem\n"), "error: no such file",
         rejected=r"client_ca_file .*nothere-ca\.pem: cannot read it \(no such file"),
    Case("invalid config yml (invalid user list)",
         _c(TLS + "basic_auth_users:\n  operator: hunter2\n"),
         "error: hashedSecret too short to be a bcrypted password",
         rejected=r"basic_auth_users\.operator is not a bcrypt hash"),
    Case("invalid config yml (bad cipher)",
         _c(NOAUTH + "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_512_GCM_SHA1024]\n"),
         "error: unknown cipher", rejected=r"unknown cipher: TLS_ECDHE_RSA_WITH_AES_512_GCM"),
    Case("invalid config yml (bad curves)", _c(NOAUTH + "  curve_preferences: [CurveP300]\n"),
         "error: unknown curve", rejected=r"unknown curve: CurveP300"),
    Case("invalid config yml (bad TLS version)", _c(NOAUTH + "  min_version: TLS14\n"),
         "error: unknown TLS version", rejected=r"unknown TLS version: TLS14"),
    # -- TestServerBehaviour --
    Case("empty string YAMLConfigPath and default client", lambda pki: None, "200",
         status=200),
    Case("empty string YAMLConfigPath and TLS client", lambda pki: None,
         "error: server gave HTTP response to HTTPS client", client=Client(tls=True),
         fails=r"WRONG_VERSION_NUMBER|wrong version number"),
    Case("valid tls config yml and default client", _c(NOAUTH),
         "error: 400 'Client sent an HTTP request to an HTTPS server.'", status=400,
         body=r"^Client sent an HTTP request to an HTTPS server\.\n$"),
    Case("valid tls config yml and tls client", _c(NOAUTH), "200", client=Client(tls=True),
         status=200),
    Case("valid tls config yml (cert and key inline) and tls client",
         lambda pki: ("tls_server_config:\n  cert: |\n" + indented(pki.text("server.crt"))
                      + "  key: |\n" + indented(pki.text("server.key"))
                      + "  client_auth_type: VerifyClientCertIfGiven\n"),
         "200", client=Client(tls=True), status=200),
    Case("valid tls config yml with TLS 1.1 client", _c(NOAUTH),
         "error: protocol version not supported",
         client=Client(tls=True, max_version=ssl.TLSVersion.TLSv1_1),
         fails=r"TLSV1_ALERT_PROTOCOL_VERSION|UNSUPPORTED_PROTOCOL"),
    Case("valid tls config yml with all ciphers",
         _c(NOAUTH + "  cipher_suites:\n" + "".join(f"    - {c}\n" for c in ALL_CIPHERS)),
         "200", client=Client(tls=True), status=200),
    Case("valid tls config yml with some ciphers", _c(SOME_CIPHERS), "200",
         client=Client(tls=True, ciphers="ECDHE-RSA-AES128-GCM-SHA256"), status=200,
         cipher="ECDHE-RSA-AES128-GCM-SHA256"),
    Case("valid tls config yml with no common cipher", _c(SOME_CIPHERS),
         "error: handshake failure", client=Client(tls=True, ciphers="ECDHE-RSA-AES256-SHA"),
         fails=r"HANDSHAKE_FAILURE|handshake failure"),
    Case("valid tls config yml with multiple client ciphers", _c(SOME_CIPHERS),
         "200 with TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
         client=Client(tls=True, ciphers="ECDHE-RSA-AES128-GCM-SHA256:"
                                         "ECDHE-RSA-AES256-GCM-SHA384"),
         status=200, cipher="ECDHE-RSA-AES128-GCM-SHA256"),
    Case("valid tls config yml with multiple client ciphers, client chooses cipher",
         _c(SOME_CIPHERS_NO_ORDER), "200 with TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
         client=Client(tls=True, ciphers="ECDHE-RSA-AES128-GCM-SHA256:"
                                         "ECDHE-RSA-AES256-GCM-SHA384"),
         status=200, cipher="ECDHE-RSA-AES128-GCM-SHA256"),
    Case("valid tls config yml with all curves",
         _c(NOAUTH + "  curve_preferences: [CurveP256, CurveP384, CurveP521, X25519]\n"),
         "200", client=Client(tls=True), status=200),
    Case("valid tls config yml with some curves", _c(SOME_CURVES), "200",
         client=Client(tls=True, curve="secp521r1"), status=200),
    Case("valid tls config yml with no common curves", _c(SOME_CURVES),
         "error: handshake failure", client=Client(tls=True, curve="secp384r1"),
         fails=r"HANDSHAKE_FAILURE|handshake failure"),
    Case("valid tls config yml with non-http2 ciphers",
         _c(NO_HTTP2_CIPHER + "http_server_config:\n  http2: false\n"), "200",
         client=Client(tls=True), status=200, cipher="ECDHE-RSA-AES256-GCM-SHA384"),
    Case("valid tls config yml with non-http2 ciphers but http2 enabled", _c(NO_HTTP2_CIPHER),
         "error: TLSConfig.CipherSuites is missing an HTTP/2-required AES_128_GCM_SHA256",
         client=Client(tls=True), rejected=r"http2 \(on by default\) needs one of"
                                            r" TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
    Case("valid headers config", _c(HEADERS), "200 (TestHTTPHeaders: the headers are sent)",
         status=200, headers=EXPECTED_HEADERS),
    Case("invalid X-Content-Type-Options headers config",
         _c("http_server_config:\n  headers:\n    X-Content-Type-Options: sniffing\n"),
         "error: invalid value for", rejected=r"invalid value for X-Content-Type-Options"),
    Case("invalid X-Frame-Options headers config",
         _c("http_server_config:\n  headers:\n    X-Frame-Options: allow-all\n"),
         "error: invalid value for", rejected=r"invalid value for X-Frame-Options"),
    Case("HTTP header that can not be overridden",
         _c("http_server_config:\n  headers:\n    Server: nginx\n"),
         "error: HTTP header can not be configured",
         rejected=r"HTTP header 'Server' can not be configured"),
    Case("valid tls config yml and tls client with RequireAnyClientCert (present certificate)",
         _c(TLS + "  client_auth_type: RequireAnyClientCert\n"), "200",
         client=Client(tls=True, cert="client"),
         rejected=r"client_auth_type RequireAnyClientCert needs client_ca_file",
         stricter="RequireAnyClientCert takes any certificate unverified; Python's ssl "
                  "verifies every certificate it asks for, and an unverified one proves "
                  "nothing: refused at start without client_ca_file"),
    Case("valid tls config yml (cert from file, key inline) and tls client with "
         "RequireAnyClientCert (present certificate)",
         lambda pki: ("tls_server_config:\n  cert_file: server.crt\n  key: |\n"
                      + indented(pki.text("server.key"))
                      + "  client_auth_type: RequireAnyClientCert\n"),
         "200", client=Client(tls=True, cert="client"),
         rejected=r"client_auth_type RequireAnyClientCert needs client_ca_file",
         stricter="as above (the key inline is read first: the refusal is the auth type's)"),
    Case("valid tls config yml and tls client with RequireAndVerifyClientCert "
         "(present certificate)",
         _c(TLS + "  client_auth_type: RequireAndVerifyClientCert\n"
                  "  client_ca_file: client.pem\n"),
         "200", client=Client(tls=True, cert="client"), status=200),
    Case("valid tls config yml and tls client with VerifyPeerCertificate "
         "(present good SAN DNS entry)",
         _c(TLS + SANS + "    - nobody.example\n    - spiffe://clusterscope/prometheus\n"),
         "200", client=Client(tls=True, cert="client2"), status=200),
    Case("valid tls config yml and tls client with VerifyPeerCertificate "
         "(present invalid SAN DNS entries)",
         _c(TLS + SANS + "    - nobody.example\n"), "error: bad certificate",
         client=Client(tls=True, cert="client2"),
         fails=r"EOF|closed|reset|RemoteDisconnected|Broken pipe|BAD_CERTIFICATE"),
    Case("valid rate limiter (no rate limiter set up) that doesn't block",
         _c("rate_limit:\n  interval: 0\n  burst: 0\n"), "11 x 200",
         client=Client(requests=10), status=200),
    Case("valid rate limiter with an interval of one second",
         _c("rate_limit:\n  interval: 1s\n  burst: 0\n"), "error: Too Many Requests",
         client=Client(requests=10), status=429, body=r"^Too Many Requests\n$"),
    # -- TestUsers --
    Case("without basic auth", lambda pki: users(pki, tls=False), "error: Unauthorized",
         status=401, body=r"^Unauthorized\n$"),
    Case("with correct basic auth", lambda pki: users(pki, tls=False), "200",
         client=Client(user="scraper", password=USERS["scraper"]), status=200),
    Case("without basic auth and TLS", lambda pki: users(pki, tls=True), "error: Unauthorized",
         client=Client(tls=True), status=401, body=r"^Unauthorized\n$"),
    Case("with correct basic auth and TLS", lambda pki: users(pki, tls=True), "200",
         client=Client(tls=True, user="scraper", password=USERS["scraper"]), status=200),
    Case("with another correct basic auth and TLS", lambda pki: users(pki, tls=True), "200",
         client=Client(tls=True, user="grafana", password=USERS["grafana"]), status=200),
    Case("with bad password and TLS", lambda pki: users(pki, tls=True), "error: Unauthorized",
         client=Client(tls=True, user="scraper", password="bad"), status=401),
    Case("with bad username and TLS", lambda pki: users(pki, tls=True), "error: Unauthorized",
         client=Client(tls=True, user="nonexistent", password="nonexistent"), status=401),
]
# TestConfigReloading is test_config_reloading below: 52 table cases + 1 = upstream's 53.


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_upstream_case(case: Case, pki: PKI, exporters: Exporters) -> None:
    config = case.config(pki)
    started = exporters.start(config, path=case.path(pki) if case.path else None)
    if case.rejected:
        assert isinstance(started, Rejected), f"started, but upstream: {case.upstream}"
        assert started.code == 2
        assert re.search(case.rejected, started.stderr), started.stderr
        assert "Traceback" not in started.stderr
        return
    assert isinstance(started, Running), started
    if case.fails:
        with pytest.raises((OSError, http.client.HTTPException)) as err:
            requests(pki, case.client)
        assert re.search(case.fails, f"{type(err.value).__name__}: {err.value}"), err.value
        assert started.proc.poll() is None  # the exporter serves on
        return
    for r in requests(pki, case.client):
        assert r.status == case.status, (r.status, r.body)
        if case.status == 200:
            assert "ndbinfo_exporter" in r.body  # the landing page, as upstream's handler
        if case.body:
            assert re.search(case.body, r.body), r.body
        if case.cipher:
            assert r.cipher == case.cipher and r.version == "TLSv1.2", (r.cipher, r.version)
        if case.headers:
            for k, v in case.headers.items():
                assert r.headers.get(k) == v, (k, r.headers)


def test_config_reloading(pki: PKI, exporters: Exporters) -> None:
    """TestConfigReloading: started with a config that blocks the client (a certificate is
    required, none is sent), the file swapped for one that does not: the next connection
    gets in, no restart."""
    path = pki.dir / "reload.yml"
    path.write_text(TLS + "  client_auth_type: RequireAndVerifyClientCert\n")
    running = exporters.start(None, path=path)
    assert isinstance(running, Running)
    with pytest.raises(OSError):
        request(pki, Client(tls=True))
    path.write_text(NOAUTH)
    assert request(pki, Client(tls=True)).status == 200
    assert running.proc.poll() is None
    assert "no client certificate can verify" in running.log_text()  # warned at start
    exporters.stop()
