"""The web config's basic_auth_users at request time, as exporter-toolkit's web/handler.go
checks them: bcrypt one check at a time, an unknown user checked against a dummy hash of the
users' usual cost (so the answer takes as long as for a known user), and results, good and
bad, cached by (user, hash, password) (web/cache.go)."""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections import OrderedDict

import bcrypt

BCRYPT_MAX_PASSWORD = 72  # bcrypt only reads this many bytes of a password
CACHE_SIZE = 100  # web/cache.go cacheSize


class BasicAuth:
    def __init__(self) -> None:
        self._cache: OrderedDict[bytes, bool] = OrderedDict()
        self._cache_lock = threading.Lock()
        # bcrypt is CPU-heavy on purpose: one check at a time (handler.go bcryptMtx)
        self._bcrypt_lock = threading.Lock()
        self._dummy: dict[int, bytes] = {}
        self._dummy_lock = threading.Lock()

    def check(self, users: dict[bytes, bytes], dummy_cost: int, user: bytes | None,
              password: bytes | None) -> bool:
        """Whether (user, password) may in; every request when there are no users."""
        if not users:
            return True
        if user is None or password is None:
            return False
        hashed = users.get(user)
        known = hashed is not None
        if hashed is None:
            hashed = self._dummy_hash(dummy_cost)
        if len(password) > BCRYPT_MAX_PASSWORD:
            # bcrypt reads 72 bytes at most; Go compares that prefix, the bcrypt package
            # refuses. Stricter: refused (the hash cannot hold the rest of it).
            return False
        # length-prefixed, so no user/password split can collide (CVE-2022-46146)
        key = hashlib.sha256(b"".join(len(x).to_bytes(4, "big") + x
                                      for x in (user, hashed, password))).digest()
        with self._cache_lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
                return hit and known
        with self._bcrypt_lock:
            try:
                ok = bcrypt.checkpw(password, hashed)
            except ValueError:
                ok = False
        ok = ok and known
        with self._cache_lock:
            self._cache[key] = ok
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return ok

    def _dummy_hash(self, cost: int) -> bytes:
        # its own lock: making the hash takes a bcrypt, which must not hold up a reload
        with self._dummy_lock:
            h = self._dummy.get(cost)
            if h is None:
                # a random secret: nobody can log in with it, whatever the user name
                h = bcrypt.hashpw(secrets.token_hex(16).encode(), bcrypt.gensalt(rounds=cost))
                self._dummy[cost] = h
            return h
