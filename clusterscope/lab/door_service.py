"""The lab's door: the vmauth compose publishes, run the same way in front of the lab's
VictoriaMetrics, VictoriaLogs, vmalerts, Alertmanager and exporters' /metrics, with the
routes of clusterscope.deploy.door_config (lab addresses instead of compose's names).

Its secrets live in `<lab>/monitoring/door/` (0700): a password per role (`<role>.password`),
the same as a toolkit credentials file (`<role>.credentials`, USER:PASSWORD), and a CA with
the door's certificate for 127.0.0.1 (TLS as compose serves it with the user's
certificate). vmauth gets the passwords in its environment (the `%{DOOR_<ROLE>_PASSWORD}`
of its configuration), never in argv. The toolkit reaches the lab's VictoriaMetrics and
VictoriaLogs through it (clusterscope/lab/endpoints.py); the lab's own services talk to
each other directly, as compose's do on their network.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
from pathlib import Path

import yaml

from clusterscope import gotools
from clusterscope.clients.credentials import Access, read_file
from clusterscope.deploy import door_config
from clusterscope.lab.core import Lab, LabError, wait_http

NAME = "door"
INTERNAL = "door-internal"
PART = "monitoring"


def home(lab: Lab) -> Path:
    d = lab.path("monitoring", "door")
    d.chmod(0o700)
    return d


def url(lab: Lab) -> str:
    return f"https://127.0.0.1:{lab.port(NAME)}"


def ca_file(lab: Lab) -> Path:
    return home(lab) / "ca.pem"


def credentials_file(lab: Lab, role: str) -> Path:
    return home(lab) / f"{role}.credentials"


def access(lab: Lab, role: str = "write") -> Access:
    """What a client of the lab's door needs: the role's credentials and the lab's CA."""
    return Access(read_file(credentials_file(lab, role)), str(ca_file(lab)))


def _secret(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.chmod(0o600)
    tmp.replace(path)


def passwords(lab: Lab) -> dict[str, str]:
    """Each role's password, made once (and its credentials file beside it)."""
    out = {}
    for role in door_config.ROLES:
        f = home(lab) / f"{role}.password"
        if not f.exists():
            _secret(f, secrets.token_urlsafe(24) + "\n")
        pw = f.read_text().strip()
        if not door_config.PASSWORD.match(pw):
            raise LabError(f"{f}: a door password is {door_config.MIN_PASSWORD}+ characters of"
                           f" {door_config.PASSWORD_CHARS}; remove the file to make a new one")
        _secret(credentials_file(lab, role), f"{role}:{pw}\n")
        out[role] = pw
    return out


def certificate(lab: Lab) -> tuple[Path, Path]:
    """(certificate, key) of the door for 127.0.0.1, signed by the lab's CA (made once)."""
    cert, key = home(lab) / "cert.pem", home(lab) / "key.pem"
    if cert.exists() and key.exists() and ca_file(lab).exists():
        return cert, key
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def build(subject: str, public, issuer: x509.Name | None, signer, ca: bool):  # noqa: ANN001,ANN202
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        b = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer or name)
             .public_key(public).serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(hours=1))
             .not_valid_after(now + datetime.timedelta(days=3650))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            b = b.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                 x509.DNSName("localhost")]), critical=False)
        return b.sign(signer, hashes.SHA256())

    ca_key, door_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(
        ec.SECP256R1())
    ca = build("clusterscope lab CA", ca_key.public_key(), None, ca_key, True)
    door = build("clusterscope lab door", door_key.public_key(), ca.subject, ca_key, False)
    pem = serialization.Encoding.PEM
    _secret(key, door_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption()).decode())
    _secret(cert, door.public_bytes(pem).decode())
    ca_file(lab).write_bytes(ca.public_bytes(pem))
    return cert, key


def backends(lab: Lab) -> door_config.Backends:
    def at(name: str) -> str:
        return f"http://127.0.0.1:{lab.port(name)}"

    exporters = {"inventory": f"{at('inventory')}/metrics",
                 "ndbinfo-exporter": f"{at('ndb-exporter')}/metrics",
                 "galera-tracker": f"{at('galera-tracker')}/metrics",
                 "change-detector": f"{at('change-detector')}/metrics"}
    return door_config.Backends(
        query=at("victoria-metrics"), write=at("victoria-metrics"), logs=at("victoria-logs"),
        vmalert=at("vmalert"), vmalert_logs=at("vmalert-logs"),
        alertmanager=at("alertmanager"), denied=f"{at('inventory')}/door/denied",
        targets=at("victoria-metrics"), exporters=exporters)


def write_config(lab: Lab) -> Path:
    path = home(lab) / "door.yml"
    text = yaml.safe_dump(door_config.config(backends(lab)), sort_keys=False)
    if not path.exists() or path.read_text() != text:
        _secret(path, text)
    return path


def listen_flags(public: str, cert: str, key: str, internal: str) -> list[str]:
    """TLS on the public address, plain HTTP on the internal one (/health, /metrics).

    vmauth's -tls, -tlsCertFile and -tlsKeyFile are lists indexed like the addresses of each
    server, and both servers count from 0 (VictoriaMetrics v1.151.0 lib/httpserver/
    httpserver.go serve: `tlsEnable.GetOptionalArg(idx)`; app/vmauth/main.go serves
    -httpInternalListenAddr through the same Serve), so `-tls` alone would put the internal
    address on TLS too. The public address goes second, after an empty one Serve skips
    (`if addr == "" { continue }`), and only index 1 has TLS."""
    return [f"-httpListenAddr=,{public}", "-tls=false,true", f"-tlsCertFile=,{cert}",
            f"-tlsKeyFile=,{key}", f"-httpInternalListenAddr={internal}"]


def up(lab: Lab) -> None:
    """Start the door (idempotent); its routes are re-read every 5 s."""
    try:
        binary = str(gotools.build(gotools.TOOLS["vmauth"]))
    except gotools.ToolError as exc:
        raise LabError(f"door: {exc}") from exc
    env = dict(os.environ)
    env.update({door_config.password_env(r): pw for r, pw in passwords(lab).items()})
    cert, key = certificate(lab)
    cfg = write_config(lab)
    internal = f"http://127.0.0.1:{lab.port(INTERNAL)}"
    lab.spawn(NAME, PART, "the door: vmauth authenticating every API request (TLS)",
              [binary, f"-auth.config={cfg}",
               *listen_flags(f"127.0.0.1:{lab.port(NAME)}", str(cert), str(key),
                             f"127.0.0.1:{lab.port(INTERNAL)}"),
               "-configCheckInterval=5s", "-loggerLevel=WARN"],
              port=lab.port(NAME), env=env,
              extra={"url": url(lab), "internal": internal, "ca": str(ca_file(lab)),
                     "credentials": {r: str(credentials_file(lab, r))
                                     for r in door_config.ROLES}},
              wait_ready=lambda: wait_http(f"{internal}/health", 60,
                                           lambda: lab.running(NAME)))
