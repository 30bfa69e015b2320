"""A real MariaDB that requires TLS, with a CA made here (what the tests of the exporters'
and the loadgen's TLS connect to): `server()` starts it, `client_cert()` signs a client
certificate with its CA. The server's certificate is for 127.0.0.1; another CA's
certificate stands for a wrong `ssl-ca`."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from clusterscope.lab import mariadb
from clusterscope.lab.core import Lab, chown

SERVICE = "exporter-test-tls-sql"


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def cert(subject: str, key: rsa.RSAPrivateKey, issuer: x509.Name | None = None,
         issuer_key: rsa.RSAPrivateKey | None = None, ca: bool = False) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer or name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(hours=1))
               .not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(issuer_key or key, hashes.SHA256())


def write(path: Path, certificate: x509.Certificate | None = None,
          key: rsa.RSAPrivateKey | None = None) -> Path:
    if certificate is not None:
        path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    else:
        assert key is not None
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.TraditionalOpenSSL,
                                           serialization.NoEncryption()))
    return path


@contextlib.contextmanager
def server(statements: Iterable[str] = ()) -> Iterator[dict]:
    """The TLS server, `statements` run as root first; yields its port, the file paths
    (ca, cert, key, other_ca), its socket, and `sign(dir)` making a client certificate."""
    root = Path(tempfile.mkdtemp(prefix="cs-tls-"))
    root.chmod(0o755)
    lab = Lab(root, int(os.environ.get("CLUSTERSCOPE_TEST_PORT_BASE", "23300")))
    certs = lab.path("certs")
    ca_key, srv_key, other_key = _key(), _key(), _key()
    ca = cert("clusterscope test CA", ca_key, ca=True)
    files = {"ca": write(certs / "ca.pem", ca),
             "cert": write(certs / "server.pem", cert("127.0.0.1", srv_key, ca.subject,
                                                      ca_key)),
             "key": write(certs / "server-key.pem", key=srv_key),
             "other_ca": write(certs / "other-ca.pem", cert("another CA", other_key, ca=True))}
    for f in certs.iterdir():
        f.chmod(0o644)
    chown(certs, mariadb.MYSQL_USER)
    base, port = lab.path("tls-sql"), lab.port(SERVICE)

    def sign(where: Path, name: str = "client") -> dict[str, Path]:
        """A client certificate (and key) this server's CA signed."""
        k = _key()
        return {"cert": write(where / f"{name}.pem", cert(name, k, ca.subject, ca_key)),
                "key": write(where / f"{name}-key.pem", key=k)}

    mariadb.prepare_instance(base, port, {"innodb_buffer_pool_size": "16M",
                                          "innodb_log_file_size": "8M",
                                          "ssl_ca": files["ca"], "ssl_cert": files["cert"],
                                          "ssl_key": files["key"]})
    mariadb.start_server(lab, SERVICE, "test", "TLS test server", base, port)
    try:
        mariadb.execute(base / "mysqld.sock", list(statements))
        yield {"port": port, "socket": base / "mysqld.sock", "sign": sign, **files}
    finally:
        lab.stop(SERVICE)
        shutil.rmtree(root, ignore_errors=True)
