"""Every collector on every version profile that serves its views: an empty cluster is
no error, and the families it declares follow the exposition rules."""

from __future__ import annotations

import pytest
from fake_context import fake_context
from ndbinfo_exporter import schema
from ndbinfo_exporter.collectors import ALL
from ndbinfo_exporter.families import Families


@pytest.mark.parametrize("version", sorted(schema.PROFILES))
def test_every_supported_collector_answers_an_empty_cluster(version: str) -> None:
    ctx = fake_context({}, version=version)
    ran = 0
    for c in ALL:
        if not all(ctx.db.has(v) for v in c.views):
            continue  # unsupported on this version, by the scrape's own rule
        fam = Families()
        c.collect(ctx, fam)
        ran += 1
        for f in fam:
            assert f.name.startswith("ndb_"), f.name
            # prometheus_client's rule: a counter family is named without _total
            assert not f.name.endswith("_total"), f.name
    assert ran >= len(ALL) // 2
