"""What a collector's failure means for the scrape, one policy at a time: the exceptions
the database layer raises (ndbinfo_exporter/db.py) each map to their own outcome, and
anything else, a collector's own bug included, fails only that collector."""

from __future__ import annotations

import pytest
from ndbinfo_exporter.db import (
    NdbinfoOffline,
    QueryTimeout,
    SchemaChanged,
    Unavailable,
    ViewUnavailable,
)
from ndbinfo_exporter.scraper import Outcome, outcome_of


@pytest.mark.parametrize("exc,outcome,problem", [
    (QueryTimeout("3.0 s"), Outcome.TIMEOUT, "timed out (3.0 s)"),
    (ViewUnavailable("ndbinfo.cpudata"), Outcome.NOT_SERVED, "ndbinfo.cpudata"),
    (NdbinfoOffline("offline"), Outcome.NOT_SERVED, "offline"),
    (SchemaChanged("no column x"), Outcome.SCHEMA_CHANGED, "schema changed (no column x)"),
    (Unavailable("2013 lost"), Outcome.NODE_LOST, "2013 lost"),
    (KeyError("node_id"), Outcome.FAILED, "KeyError: 'node_id'"),
    (ZeroDivisionError("division by zero"), Outcome.FAILED,
     "ZeroDivisionError: division by zero"),
])
def test_each_failure_has_its_outcome_and_says_what_happened(
        exc: Exception, outcome: Outcome, problem: str) -> None:
    assert outcome_of(exc) == (outcome, problem)
