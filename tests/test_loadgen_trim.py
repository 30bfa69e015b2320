"""A trim the cluster refuses (a node down, no primary component) is put off to the next
window instead of ending the run; one refused half-way leaves the books to be re-read.
No database: the cluster's refusal is pymysql's error for a Galera node without a primary
component (1047), raised where the real count or delete would run."""

from __future__ import annotations

from pathlib import Path

import pymysql
from clusterscope_loadgen import config
from clusterscope_loadgen.loadgen_tables import Tables
from clusterscope_loadgen.results import RowBook
from clusterscope_loadgen.target import Target

REFUSED = pymysql.err.OperationalError(1047, "WSREP has not yet prepared node for"
                                             " application use")


def _tables(said: list[str]) -> Tables:
    exp = config.experiment("fk")
    target = Target(Path("-"), "u", None, "127.0.0.1", 3306)
    t = Tables(exp, "galera", target, "cs_fk", exp.variants, [], out=said.append)
    t.books = {"users_posts": RowBook(exp.max_rows, exp.max_rows),
               "users_posts_fk": RowBook(exp.max_rows - 5, exp.max_rows - 5)}
    return t


def test_a_refused_row_check_puts_the_trim_off() -> None:
    said: list[str] = []
    t = _tables(said)

    def verify(before_trim: bool = False) -> list[dict]:
        raise REFUSED

    t.verify = verify  # type: ignore[method-assign]
    assert t.maybe_trim() is False
    assert t.trims == 0 and not any(b.rebase for b in t.books.values())
    assert "trim put off to the next window" in said[-1] and "1047" in said[-1]


def test_a_trim_refused_half_way_has_the_books_re_read() -> None:
    said: list[str] = []
    t = _tables(said)
    t.verify = lambda before_trim=False: []  # type: ignore[method-assign]

    def trim() -> bool:
        raise REFUSED

    t._trim = trim  # type: ignore[method-assign]
    assert t.maybe_trim() is False
    assert all(b.rebase.startswith("a trim was interrupted") for b in t.books.values())
    # the next window tries again: the books still say a table reached max_rows
    assert max(b.high for b in t.books.values()) >= t.exp.max_rows
