"""What the web-config tests share: the PKI they make (a CA, server and client
certificates, keys of each kind), the real exporter process started with one config at a
time (`python -m ndbinfo_exporter`, no database behind it: it serves `ndb_up 0`), the client
that makes upstream's requests through Python's ssl and http.client, and the configs the
cases are built from."""

from __future__ import annotations

import base64
import datetime
import http.client
import ipaddress
import os
import socket
import ssl
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import bcrypt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from ndbinfo_exporter.web import tls_context

from clusterscope.lab.ports import port as lab_port

PORT = lab_port(int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300")), "exporter-test-web")
USERS = {"scraper": "scr4pe-Me!", "grafana": "gr@fana-7"}  # our own; cost 10 like upstream's
BCRYPT_COST = 10
# client2's SANs: one of each kind upstream compares (DNS, e-mail, IP, URI)
CLIENT2_SANS = ("scraper.example", "ops@example.org", "127.0.0.2",
                "spiffe://clusterscope/prometheus")


# -- certificates and keys, made once per session --------------------------------------------
def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _cert(subject: str, key, issuer_name: x509.Name | None = None, issuer_key=None, *,
          ca: bool = False, sans: list[x509.GeneralName] | None = None,
          usage: x509.ObjectIdentifier | None = None) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    b = (x509.CertificateBuilder().subject_name(_name(subject))
         .issuer_name(issuer_name or _name(subject)).public_key(key.public_key())
         .serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(hours=1))
         .not_valid_after(now + datetime.timedelta(days=2))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    if usage:
        b = b.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    return b.sign(issuer_key or key, hashes.SHA256())


def _pem(obj) -> bytes:
    if isinstance(obj, x509.Certificate):
        return obj.public_bytes(serialization.Encoding.PEM)
    return obj.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


@dataclass
class PKI:
    dir: Path
    files: dict[str, Path] = field(default_factory=dict)
    hashes: dict[str, str] = field(default_factory=dict)
    ca_key: ec.EllipticCurvePrivateKey | None = None

    def __getitem__(self, name: str) -> Path:
        return self.files[name]

    def text(self, name: str) -> str:
        return self.files[name].read_text()


def new_pki(tmp_path_factory: pytest.TempPathFactory) -> PKI:
    """A CA, the server's certificate and key, and client certificates of each kind."""
    d = tmp_path_factory.mktemp("webconfig")
    p = PKI(d)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _cert("clusterscope test CA", ca_key, ca=True)
    # RSA: the TLS 1.2 cases use TLS_ECDHE_RSA_* suites, as upstream's server key is RSA
    srv_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    srv = _cert("localhost", srv_key, ca.subject, ca_key, usage=ExtendedKeyUsageOID.SERVER_AUTH,
                sans=[x509.DNSName("localhost"),
                      x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    # self-signed client certificates, each its own CA in the configs that trust it
    c1_key = ec.generate_private_key(ec.SECP256R1())
    c1 = _cert("clusterscope client", c1_key, ca=True, usage=ExtendedKeyUsageOID.CLIENT_AUTH,
               sans=[x509.DNSName("client.example")])
    c2_key = ec.generate_private_key(ec.SECP256R1())
    c2 = _cert("clusterscope client 2", c2_key, ca=True,
               usage=ExtendedKeyUsageOID.CLIENT_AUTH, sans=[
                   x509.DNSName(CLIENT2_SANS[0]), x509.RFC822Name(CLIENT2_SANS[1]),
                   x509.IPAddress(ipaddress.ip_address(CLIENT2_SANS[2])),
                   x509.UniformResourceIdentifier(CLIENT2_SANS[3])])
    stranger_key = ec.generate_private_key(ec.SECP256R1())
    stranger = _cert("nobody's client", stranger_key, ca=True,
                     usage=ExtendedKeyUsageOID.CLIENT_AUTH, sans=[x509.DNSName("stranger")])
    for name, obj in {"ca.pem": ca, "server.crt": srv, "server.key": srv_key,
                      "client.pem": c1, "client.key": c1_key, "client2.pem": c2,
                      "client2.key": c2_key, "stranger.pem": stranger,
                      "stranger.key": stranger_key}.items():
        f = d / name
        f.write_bytes(_pem(obj))
        p.files[name] = f
    p.ca_key = ca_key
    p.hashes = {u: bcrypt.hashpw(pw.encode(), bcrypt.gensalt(rounds=BCRYPT_COST)).decode()
                for u, pw in USERS.items()}
    cnf = d / "my.cnf"  # an SQL node nobody listens on: the exporter serves ndb_up 0
    cnf.write_text(f"[client]\nuser=ndbinfo_exporter\nhost=127.0.0.1\nport={PORT}\n")
    cnf.chmod(0o600)
    p.files["my.cnf"] = cnf
    return p


# -- the exporter process ---------------------------------------------------------------------
@dataclass
class Running:
    proc: subprocess.Popen
    config: str
    log: Path

    def log_text(self) -> str:
        return self.log.read_text()


@dataclass
class Rejected:
    code: int
    stderr: str


class Exporters:
    """One exporter at a time on the test port; the same config reuses the running one."""

    def __init__(self, pki: PKI) -> None:
        self.pki = pki
        self.current: Running | None = None
        self.n = 0

    def start(self, config: str | None, *, path: Path | None = None) -> Running | Rejected:
        if self.current and self.current.config == config and path is None:
            if self.current.proc.poll() is None:
                return self.current
        self.stop()
        self.n += 1
        argv = [sys.executable, "-m", "ndbinfo_exporter", "--config.my-cnf",
                str(self.pki["my.cnf"]), "--web.listen-address", f"127.0.0.1:{PORT}",
                "--state.file", str(self.pki.dir / "state.json"), "--log.level", "debug"]
        if path is None and config is not None:
            path = self.pki.dir / f"web-{self.n}.yml"
            path.write_text(config)
        if path is not None:
            argv += ["--web.config.file", str(path)]
        log = self.pki.dir / f"exporter-{self.n}.log"
        with open(log, "w") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return Rejected(proc.returncode, log.read_text())
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", PORT)) == 0:
                    self.current = Running(proc, config or "", log)
                    return self.current
            time.sleep(0.05)
        proc.kill()
        raise AssertionError(f"exporter neither listened nor exited:\n{log.read_text()}")

    def stop(self) -> None:
        if self.current is not None:
            self.current.proc.terminate()
            self.current.proc.wait(timeout=20)
            self.current = None


def running_exporters(pki: PKI) -> Iterator[Exporters]:
    """Exporters on the test port, the last one stopped at the end."""
    e = Exporters(pki)
    try:
        yield e
    finally:
        e.stop()


# -- the client -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Client:
    tls: bool = False
    max_version: ssl.TLSVersion | None = None
    ciphers: str | None = None  # OpenSSL names, the client's order
    curve: str | None = None  # the only group the client offers
    cert: str | None = None  # "client", "client2", "stranger"
    user: str | None = None
    password: str | None = None
    requests: int = 1  # upstream's `Requests`: it makes Requests + 1


@dataclass
class Response:
    status: int
    body: str
    headers: dict[str, str]
    cipher: str | None
    version: str | None


def context(pki: PKI, c: Client) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(pki["ca.pem"])
    if c.max_version is not None:
        # a client that really offers TLS 1.1 (OpenSSL 3's level 0), so the refusal seen
        # is the server's, as with upstream's Go client
        ctx.set_ciphers("ALL:@SECLEVEL=0")
        with warnings.catch_warnings():  # ssl deprecates TLS 1.1: that is the point
            warnings.simplefilter("ignore", DeprecationWarning)
            ctx.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
            ctx.maximum_version = c.max_version
    if c.ciphers:
        ctx.set_ciphers(c.ciphers)
    if c.curve:
        ctx.set_ecdh_curve(c.curve)
    if c.cert:
        ctx.load_cert_chain(pki[f"{c.cert}.pem"], pki[f"{c.cert}.key"])
    return ctx


def request(pki: PKI, c: Client, path: str = "/") -> Response:
    if c.tls:
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            "127.0.0.1", PORT, context=context(pki, c), timeout=15)
    else:
        conn = http.client.HTTPConnection("127.0.0.1", PORT, timeout=15)
    headers = {}
    if c.user is not None:
        token = base64.b64encode(f"{c.user}:{c.password}".encode()).decode()
        headers["Authorization"] = f"Basic {token}"
    try:
        conn.request("GET", path, headers=headers)
        sock = conn.sock  # before the response: http.client drops it once read
        cipher = sock.cipher()[0] if isinstance(sock, ssl.SSLSocket) else None
        version = sock.version() if isinstance(sock, ssl.SSLSocket) else None
        r = conn.getresponse()
        body = r.read().decode(errors="replace")
        return Response(r.status, body, dict(r.getheaders()), cipher, version)
    finally:
        conn.close()


def requests(pki: PKI, c: Client) -> list[Response]:
    return [request(pki, c) for _ in range(c.requests + 1)]


# -- the cases --------------------------------------------------------------------------------
TLS = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
NOAUTH = TLS + "  client_auth_type: VerifyClientCertIfGiven\n"
SOME_CIPHERS = NOAUTH + ("  cipher_suites:\n"
                         "    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
                         "    - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\n"
                         "  min_version: TLS12\n  max_version: TLS12\n")
SOME_CIPHERS_NO_ORDER = NOAUTH + ("  cipher_suites:\n"
                                  "    - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\n"
                                  "    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
                                  "  prefer_server_cipher_suites: false\n"
                                  "  min_version: TLS12\n  max_version: TLS12\n")
SOME_CURVES = NOAUTH + "  min_version: TLS13\n  curve_preferences: [CurveP521]\n"
NO_HTTP2_CIPHER = NOAUTH + ("  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]\n"
                            "  max_version: TLS12\n")
HEADERS = ("http_server_config:\n  headers:\n"
           "    Strict-Transport-Security: max-age=63072000\n"
           "    X-Frame-Options: sameorigin\n    X-Content-Type-Options: nosniff\n"
           "    X-XSS-Protection: 0\n    Content-Security-Policy: \"default-src 'none'\"\n")
EXPECTED_HEADERS = {"Strict-Transport-Security": "max-age=63072000",
                    "X-Frame-Options": "sameorigin", "X-Content-Type-Options": "nosniff",
                    "X-XSS-Protection": "0", "Content-Security-Policy": "default-src 'none'"}
SANS = ("  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: client2.pem\n"
        "  client_allowed_sans:\n")
ALL_CIPHERS = [c for c in tls_context.CIPHERS]  # every name Go's tls.CipherSuites() has


def users(pki: PKI, tls: bool) -> str:
    return (TLS if tls else "") + "basic_auth_users:\n" + "".join(
        f"  {u}: {h}\n" for u, h in pki.hashes.items())


def indented(text: str, n: int = 4) -> str:
    return "".join(" " * n + line + "\n" for line in text.splitlines())
