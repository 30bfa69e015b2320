"""A STAND-IN for a MySQL 8.0/8.4 SQL node's login, for what cannot run here.

MariaDB (the only server on this machine) cannot serve `caching_sha2_password`, the default
account plugin of MySQL 8.0 and 8.4, so the exporter's login to a default NDB 8.x SQL node is
tested against this socket server. It speaks the client/server protocol's handshake as
mysql/mysql-server does for that plugin (sql/auth/sha2_password.cc, "full authentication"
on a cache miss over a connection without TLS):

  greeting (HandshakeV10, plugin caching_sha2_password, 20-byte scramble)
  <- HandshakeResponse41 with the fast-auth scramble
  -> AuthMoreData 0x01 0x04: perform full authentication (the first login after a start)
  <- 0x02: request the server's RSA public key (unless the client has it)
  -> AuthMoreData 0x01 + PEM public key
  <- RSA-OAEP(SHA-1) of (password + NUL) XOR scramble
  -> OK, or ERR 1045 when the decrypted password is wrong

Then it answers OK to any command until COM_QUIT. Nothing else of a server is here.
"""

from __future__ import annotations

import os
import socket
import struct
import threading

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

CLIENT_PROTOCOL_41 = 0x200
CLIENT_SECURE_CONNECTION = 0x8000
CLIENT_PLUGIN_AUTH = 0x80000
CLIENT_LONG_PASSWORD = 0x1
CLIENT_TRANSACTIONS = 0x2000
CLIENT_CONNECT_WITH_DB = 0x8
CAPABILITIES = (CLIENT_LONG_PASSWORD | CLIENT_CONNECT_WITH_DB | CLIENT_PROTOCOL_41
                | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH)
SERVER_STATUS_AUTOCOMMIT = 0x2


class MySQL8Standin:
    def __init__(self, password: str, version: str = "8.4.6-cluster") -> None:
        self.password = password.encode()
        self.version = version
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.public_pem = self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.logins: list[dict] = []  # per connection: what the client did
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.sock.close()

    # -- protocol ----------------------------------------------------------------------
    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._session, args=(conn,), daemon=True).start()

    @staticmethod
    def _send(conn: socket.socket, seq: int, payload: bytes) -> None:
        conn.sendall(struct.pack("<I", len(payload))[:3] + bytes([seq & 0xFF]) + payload)

    @staticmethod
    def _recv(conn: socket.socket) -> tuple[int, bytes]:
        head = _read_exact(conn, 4)
        length = int.from_bytes(head[:3], "little")
        return head[3], _read_exact(conn, length)

    def _session(self, conn: socket.socket) -> None:
        login: dict = {"requested_public_key": False, "password_ok": False}
        self.logins.append(login)
        try:
            scramble = bytes(b % 94 + 33 for b in os.urandom(20))  # printable, no NUL
            greeting = (b"\x0a" + self.version.encode() + b"\0" + struct.pack("<I", 7)
                        + scramble[:8] + b"\0"
                        + struct.pack("<H", CAPABILITIES & 0xFFFF) + b"\xff"
                        + struct.pack("<H", SERVER_STATUS_AUTOCOMMIT)
                        + struct.pack("<H", CAPABILITIES >> 16) + bytes([21]) + b"\0" * 10
                        + scramble[8:] + b"\0" + b"caching_sha2_password\0")
            self._send(conn, 0, greeting)
            seq, response = self._recv(conn)
            login["user"] = response[32:response.index(b"\0", 32)].decode()
            # a cache miss: the server asks for the full authentication
            self._send(conn, seq + 1, b"\x01\x04")
            seq, data = self._recv(conn)
            if data == b"\x02":
                login["requested_public_key"] = True
                self._send(conn, seq + 1, b"\x01" + self.public_pem)
                seq, data = self._recv(conn)
            plain = self.key.decrypt(data, padding.OAEP(
                mgf=padding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(),
                label=None))
            password = bytes(b ^ scramble[i % len(scramble)] for i, b in enumerate(plain))
            login["password_ok"] = password == self.password + b"\0"
            if not login["password_ok"]:
                message = f"Access denied for user '{login['user']}'@'localhost'"
                self._send(conn, seq + 1, b"\xff" + struct.pack("<H", 1045) + b"#28000"
                           + message.encode())
                return
            self._send(conn, seq + 1, _ok())
            while True:
                seq, command = self._recv(conn)
                if not command or command[0] == 0x01:  # COM_QUIT
                    return
                self._send(conn, seq + 1, _ok())
        except (OSError, ValueError):
            return
        finally:
            conn.close()


def _ok() -> bytes:
    return b"\x00\x00\x00" + struct.pack("<HH", SERVER_STATUS_AUTOCOMMIT, 0)


def _read_exact(conn: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = conn.recv(n - len(out))
        if not chunk:
            raise OSError("client closed the connection")
        out += chunk
    return out
