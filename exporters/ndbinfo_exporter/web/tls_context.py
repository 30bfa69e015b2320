"""The TLS side of the web config: tls_server_config checked and turned into the server's
`ssl.SSLContext` (versions, cipher suites, curves, client certificates), and the client
certificate's SANs checked against client_allowed_sans.

The reference is prometheus/exporter-toolkit at 19a7c2d (Jul 2026), web/tls_config.go
(ConfigToTLSConfig, VerifyPeerCertificate). Where this is stricter than upstream, the rule
says why ("stricter:").
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import ssl
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509

from ndbinfo_exporter.errors import ConfigError
from ndbinfo_exporter.web.fields import boolean, read_file, string, string_list

KEYS = ("cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type",
        "client_ca_file", "cipher_suites", "curve_preferences", "min_version", "max_version",
        "prefer_server_cipher_suites", "client_allowed_sans")
# The keys that turn TLS on (TLSConfig.IsEnabled in tls_config.go).
_ENABLING = ("cert_file", "cert", "key_file", "key", "client_ca_file", "client_ca",
             "client_auth_type")

_VERSIONS = {"TLS10": ssl.TLSVersion.TLSv1, "TLS11": ssl.TLSVersion.TLSv1_1,
             "TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
# The names exporter-toolkit accepts are Go's tls.CipherSuites() (golang/go
# src/crypto/tls/cipher_suites.go, the ECDHE-only list of current releases), mapped to
# OpenSSL's names as `openssl ciphers -stdname` prints them (checked by the tests). The TLS
# 1.3 suites are accepted and change nothing, as in Go, whose Config.CipherSuites does not
# apply to TLS 1.3 (src/crypto/tls/common.go); Python's ssl cannot set them either.
CIPHERS: dict[str, str | None] = {
    "TLS_AES_128_GCM_SHA256": None,
    "TLS_AES_256_GCM_SHA384": None,
    "TLS_CHACHA20_POLY1305_SHA256": None,
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
}
# Go's HTTP/2 server refuses a TLS 1.2 cipher list without one of these (RFC 7540 9.2.2;
# golang/go src/net/http/h2_bundle.go, http2ConfigureServer), so upstream fails to serve.
_HTTP2_REQUIRED = ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                   "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")
# exporter-toolkit's `curves` map -> OpenSSL group names
_CURVES = {"CurveP256": "prime256v1", "CurveP384": "secp384r1", "CurveP521": "secp521r1",
           "X25519": "X25519"}
_CLIENT_AUTH = ("NoClientCert", "RequestClientCert", "RequireAnyClientCert",
                "RequireClientCert", "VerifyClientCertIfGiven", "RequireAndVerifyClientCert")


@dataclass
class _Asked:
    """What tls_server_config asks for, every name in it checked."""

    strings: dict[str, str]
    ciphers: list[str]
    curves: list[str]
    sans: frozenset[str] | None
    prefer: bool
    versions: dict[str, str]


def build(path: Path, tls: dict, http2: bool, warn: list[str]
          ) -> tuple[ssl.SSLContext, frozenset[str] | None, tuple[tuple[Path, bytes], ...]]:
    """(the server's context, the allowed SANs or None, (path, sha256) of each file read);
    warnings for the log are appended to `warn`."""
    where = str(path)
    asked = _asked(where, tls)
    files: list[tuple[Path, bytes]] = []
    cert = _material(path, asked.strings, files, "cert_file", "cert")
    key = _material(path, asked.strings, files, "key_file", "key")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _load_pair(where, ctx, cert, key)
    _protocol(where, ctx, asked, http2, warn)
    _client_auth(path, ctx, asked, files, warn)
    return ctx, asked.sans, tuple(files)


def _asked(where: str, tls: dict) -> _Asked:
    strings = {k: string(where, f"tls_server_config.{k}", tls.get(k))
               for k in ("cert", "key", "client_ca", "cert_file", "key_file",
                         "client_auth_type", "client_ca_file", "min_version", "max_version")}
    ciphers = string_list(where, "tls_server_config.cipher_suites", tls.get("cipher_suites"))
    curves = string_list(where, "tls_server_config.curve_preferences",
                         tls.get("curve_preferences"))
    sans_v = tls.get("client_allowed_sans")
    sans = None if sans_v is None else frozenset(
        string_list(where, "tls_server_config.client_allowed_sans", sans_v))
    prefer = boolean(where, "tls_server_config.prefer_server_cipher_suites",
                     tls.get("prefer_server_cipher_suites"), True)
    # Unknown names are YAML errors upstream (Cipher/Curve/TLSVersion UnmarshalYAML).
    for c in ciphers:
        if c not in CIPHERS:
            raise ConfigError(f"{where}: tls_server_config.cipher_suites: unknown cipher: {c}"
                              f" (known: {', '.join(CIPHERS)})")
    for c in curves:
        if c not in _CURVES:
            raise ConfigError(f"{where}: tls_server_config.curve_preferences: unknown curve:"
                              f" {c} (known: {', '.join(_CURVES)})")
    versions = {}
    for key, default in (("min_version", "TLS12"), ("max_version", "TLS13")):
        name = strings[key] or default
        if name not in _VERSIONS:
            raise ConfigError(f"{where}: tls_server_config.{key}: unknown TLS version: {name}"
                              f" (known: {', '.join(_VERSIONS)})")
        versions[key] = name
    if not any(strings[k] for k in _ENABLING):
        # Upstream serves plain HTTP when none of the enabling keys is set, whatever else
        # tls_server_config says. Stricter: a config that asks for TLS settings without a
        # certificate is a mistake, not a wish for plain HTTP.
        raise ConfigError(f"{where}: tls_server_config sets {', '.join(map(str, tls))} but"
                          " no certificate: missing one of cert or cert_file")
    if not strings["cert_file"] and not strings["cert"]:
        raise ConfigError(f"{where}: tls_server_config: missing one of cert or cert_file")
    if not strings["key_file"] and not strings["key"]:
        raise ConfigError(f"{where}: tls_server_config: missing one of key or key_file")

    return _Asked(strings, ciphers, curves, sans, prefer, versions)


def _material(path: Path, strings: dict[str, str], files: list[tuple[Path, bytes]],
              file_key: str, inline_key: str) -> bytes:
    if strings[file_key]:  # the file wins over inline text, as upstream
        f = Path(strings[file_key])
        f = f if f.is_absolute() else path.parent / f
        data = read_file(str(path), f"tls_server_config.{file_key}", f)
        files.append((f, hashlib.sha256(data).digest()))
        return data
    return strings[inline_key].encode()


def _protocol(where: str, ctx: ssl.SSLContext, asked: _Asked, http2: bool,
              warn: list[str]) -> None:
    """Versions, cipher suites, their order and the key-exchange curve."""
    versions, ciphers, curves = asked.versions, asked.ciphers, asked.curves
    lo, hi = _VERSIONS[versions["min_version"]], _VERSIONS[versions["max_version"]]
    if lo > hi:
        # Go fails every handshake then ("no supported versions satisfy MinVersion and
        # MaxVersion"). Stricter: said at load time.
        raise ConfigError(f"{where}: tls_server_config: min_version {versions['min_version']}"
                          f" is above max_version {versions['max_version']}")
    with warnings.catch_warnings():  # ssl warns that TLS 1.0/1.1 are deprecated: they are
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.minimum_version, ctx.maximum_version = lo, hi
    if lo < ssl.TLSVersion.TLSv1_2:
        warn.append(f"min_version {versions['min_version']}: OpenSSL's default security"
                    " level still refuses TLS 1.0 and 1.1 handshakes here")
    tls12 = [CIPHERS[c] for c in ciphers if CIPHERS[c]]
    if tls12:
        ctx.set_ciphers(":".join(tls12))
    elif ciphers and lo < ssl.TLSVersion.TLSv1_3:
        # Only TLS 1.3 suites listed: Go then has no TLS 1.2 suite left, so only TLS 1.3
        # connects. OpenSSL needs at least one TLS 1.2 cipher, so say it with the version.
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    if http2 and ciphers and lo < ssl.TLSVersion.TLSv1_3 and not set(ciphers) & set(
            _HTTP2_REQUIRED):
        raise ConfigError(f"{where}: http2 (on by default) needs one of"
                          f" {' or '.join(_HTTP2_REQUIRED)} in tls_server_config.cipher_suites"
                          " (Go's HTTP/2 server refuses to serve without it; this exporter"
                          " speaks HTTP/1.1 only, so `http_server_config: {http2: false}`"
                          " changes nothing else)")
    # Go ignores PreferServerCipherSuites since 1.17 and orders suites itself (AES-128-GCM
    # first); OpenSSL has a real switch: the configured order when true (the default),
    # the client's when false. Both of upstream's cipher-order cases pick what Go picks.
    if asked.prefer:
        ctx.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    else:
        ctx.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
    if curves:
        # Python's ssl sets one key-exchange group (SSLContext.set_ecdh_curve, which is
        # SSL_CTX_set1_groups with one group on OpenSSL 3): the first preferred curve.
        # Stricter: a client that supports only a later one is refused.
        ctx.set_ecdh_curve(_CURVES[curves[0]])
        if len(set(curves)) > 1:
            warn.append(f"curve_preferences: only {curves[0]}, the first listed, is offered"
                        " (Python's ssl module sets a single key-exchange group)")



def _client_auth(path: Path, ctx: ssl.SSLContext, asked: _Asked,
                 files: list[tuple[Path, bytes]], warn: list[str]) -> None:
    """Which client certificates are asked for and what they are verified against."""
    where, strings, sans = str(path), asked.strings, asked.sans
    ca = b""
    if strings["client_ca_file"]:
        f = Path(strings["client_ca_file"])
        f = f if f.is_absolute() else path.parent / f
        ca = read_file(where, "tls_server_config.client_ca_file", f)
        files.append((f, hashlib.sha256(ca).digest()))
    elif strings["client_ca"]:
        ca = strings["client_ca"].encode()
    has_ca = bool(strings["client_ca_file"] or strings["client_ca"])
    auth = strings["client_auth_type"] or "NoClientCert"
    if auth not in _CLIENT_AUTH:
        raise ConfigError(f"{where}: tls_server_config.client_auth_type: invalid ClientAuth:"
                          f" {auth} (known: {', '.join(_CLIENT_AUTH)})")
    if has_ca and auth == "NoClientCert":
        raise ConfigError(f"{where}: tls_server_config: client CA's have been configured"
                          " without a Client Auth Policy (set client_auth_type, e.g."
                          " RequireAndVerifyClientCert; without it no client certificate"
                          " would be asked for)")
    if auth in ("RequestClientCert", "RequireAnyClientCert", "RequireClientCert") and (
            not has_ca):
        # Stricter: these types take any client certificate without checking who signed
        # it, which Python's ssl module cannot do (it has no verify callback: a presented
        # certificate is always verified), and a certificate anybody can make proves
        # nothing. With a client CA the certificate is verified against it.
        raise ConfigError(f"{where}: tls_server_config: client_auth_type {auth} needs"
                          " client_ca_file here: this exporter verifies every client"
                          " certificate it asks for (an unverified one anybody can make);"
                          " give the CA that signs your clients' certificates")
    if sans is not None and auth == "NoClientCert":
        # Stricter: upstream never asks for a certificate then, so the list is silently
        # not applied.
        raise ConfigError(f"{where}: tls_server_config: client_allowed_sans needs a"
                          " client_auth_type that asks for a certificate (e.g."
                          " RequireAndVerifyClientCert)")
    if has_ca:
        if b"-----BEGIN CERTIFICATE-----" not in ca:
            raise ConfigError(f"{where}: tls_server_config.client_ca"
                              f"{'_file' if strings['client_ca_file'] else ''} holds no PEM"
                              " certificate")
        try:
            ctx.load_verify_locations(cadata=ca.decode("ascii", "replace"))
        except (ssl.SSLError, ValueError) as exc:
            raise ConfigError(f"{where}: tls_server_config: cannot load the client CA: {exc}"
                              ) from None
    elif auth in ("VerifyClientCertIfGiven", "RequireAndVerifyClientCert"):
        # Go verifies against the system's roots then. Stricter: against nothing, so no
        # client certificate verifies (VerifyClientCertIfGiven: send none).
        if auth == "RequireAndVerifyClientCert":
            warn.append("client_auth_type RequireAndVerifyClientCert without client_ca_file:"
                        " no client certificate can verify, every connection is refused")
    if auth != "NoClientCert":
        required = auth in ("RequireAnyClientCert", "RequireClientCert",
                            "RequireAndVerifyClientCert")
        ctx.verify_mode = ssl.CERT_REQUIRED if required else ssl.CERT_OPTIONAL

def _load_pair(where: str, ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """load_cert_chain reads files only: inline PEM goes through an in-memory file."""
    with _memfile(cert) as cert_path, _memfile(key) as key_path:
        try:
            # a passphrase-protected key fails instead of prompting on the terminal
            ctx.load_cert_chain(cert_path, key_path, password=lambda: b"")
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise ConfigError(f"{where}: tls_server_config: failed to load the certificate"
                              f" and key ({getattr(exc, 'reason', None) or exc}): they must"
                              " be a PEM certificate and its unencrypted PEM private key"
                              ) from None


class _memfile:
    """A path holding `data` for a moment: a memfd (never on disk) on Linux, else a
    private temporary file."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.fd: int | None = None
        self.tmp: str | None = None

    def __enter__(self) -> str:
        if hasattr(os, "memfd_create"):
            self.fd = os.memfd_create("ndbinfo-exporter-pem", os.MFD_CLOEXEC)
            os.write(self.fd, self.data)
            return f"/proc/self/fd/{self.fd}"
        fd, self.tmp = tempfile.mkstemp(prefix="ndbinfo-exporter-")
        with os.fdopen(fd, "wb") as f:
            f.write(self.data)
        return self.tmp

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
        if self.tmp is not None:
            os.unlink(self.tmp)


def allowed_sans_reject(sans: frozenset[str], der: bytes | None) -> str | None:
    """None if the client certificate names an allowed SAN, else why not. The values
    compared are upstream's (TLSConfig.VerifyPeerCertificate): DNS names, e-mail addresses,
    IP addresses as Go prints them and URIs, matched exactly."""
    if der is None:
        return "no client certificate"
    try:
        cert = x509.load_der_x509_certificate(der)
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return "the client certificate has no subject alternative name"
    except ValueError as exc:
        return f"unreadable client certificate ({exc})"
    values = [*ext.get_values_for_type(x509.DNSName), *ext.get_values_for_type(x509.RFC822Name),
              *ext.get_values_for_type(x509.UniformResourceIdentifier)]
    for ip in ext.get_values_for_type(x509.IPAddress):
        # Go's net.IP.String(): an IPv4-mapped IPv6 address prints as IPv4
        mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
        values.append(str(mapped or ip))
    if any(v in sans for v in values):
        return None
    return f"none of the client certificate's SANs ({', '.join(values)}) is allowed"

