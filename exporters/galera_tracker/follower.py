"""Follow a log file across rotation, truncation and absence, yielding whole lines.

The position (inode, offset) is part of the caller's saved state, so a restarted tracker
continues where it stopped instead of reading a file twice.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

MAX_CHUNK = 1 << 20
# A "line" that never ends (a binary file, a log without newlines) is handed on in pieces
# of this size rather than kept whole in memory and in the state file.
MAX_PARTIAL = 1 << 20
HEAD = 128  # bytes of the file's start remembered to notice a truncate-and-refill


@dataclass
class LogFollower:
    path: str
    inode: int | None = None
    offset: int = 0
    partial: bytes = b""
    reopens: int = 0
    readable: bool = False
    head: bytes = b""
    seen: tuple[int, int] | None = None  # (size, mtime_ns) when the file was last read
    # called when the file starts over from its top (rotated, replaced, truncated): what
    # follows may be lines already read, under a new inode (an rsync copy)
    on_reset: Callable[[], None] | None = None

    def position(self) -> dict:
        return {"inode": self.inode, "offset": self.offset,
                "partial": self.partial.decode("utf-8", "surrogateescape"),
                "head": self.head.hex()}

    def restore(self, d: dict) -> None:
        self.inode = d.get("inode")
        self.offset = int(d.get("offset") or 0)
        self.partial = (d.get("partial") or "").encode("utf-8", "surrogateescape")
        self.head = bytes.fromhex(d.get("head") or "")

    def read_lines(self) -> Iterator[str]:
        """Every complete line added since the last call (a partial last line waits)."""
        try:
            st = os.stat(self.path)
        except OSError:
            self.readable = False
            return
        if self.inode is not None and st.st_ino != self.inode:
            # Rotated: the old file is gone from this path; start the new one from its top.
            self._reset(st.st_ino)
        elif st.st_size < self.offset:
            # Truncated in place (copytruncate or `> file`): its content starts over.
            self._reset(st.st_ino)
        elif (self.readable and st.st_size == self.offset
              and self.seen == (st.st_size, st.st_mtime_ns)):
            return  # a quiet log: nothing written since the last read, no open needed
        self.inode = st.st_ino
        self.seen = (st.st_size, st.st_mtime_ns)
        try:
            with open(self.path, "rb") as f:
                self.readable = True
                if self.head and f.read(len(self.head)) != self.head:
                    # Truncated and refilled past the old offset between two polls.
                    self._reset(st.st_ino)
                if len(self.head) < HEAD:
                    f.seek(0)
                    self.head = f.read(HEAD)
                f.seek(self.offset)
                while True:
                    chunk = f.read(MAX_CHUNK)
                    if not chunk:
                        break
                    self.offset += len(chunk)
                    data = self.partial + chunk
                    *lines, self.partial = data.split(b"\n")
                    if len(self.partial) > MAX_PARTIAL:
                        lines.append(self.partial)
                        self.partial = b""
                    for raw in lines:
                        yield raw.decode("utf-8", "replace").rstrip("\r")
        except OSError:
            self.readable = False

    def _reset(self, inode: int) -> None:
        self.inode = inode
        self.seen = None
        self.offset = 0
        self.partial = b""
        self.head = b""
        self.reopens += 1
        if self.on_reset is not None:
            self.on_reset()
