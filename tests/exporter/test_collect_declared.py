"""What a collector module declares at its top is what it serves: every family a collector
fills, on every version profile, is one of its module's descriptors (name, help, labels,
type), and every descriptor is served on some version, so a reader can take the
declarations for the output without reading the functions."""

from __future__ import annotations

import sys

import pytest
from fake_context import fake_context
from ndbinfo_exporter import schema
from ndbinfo_exporter.collectors import ALL
from ndbinfo_exporter.collectors.base import Desc, HistogramDesc
from ndbinfo_exporter.families import Families, Family

Shape = tuple[str, str, tuple[str, ...], bool, str]


def _shape(f: Family) -> Shape:
    return (f.name, f.doc, tuple(f.labels), f.counter, type(f).__name__)


def _declared(value: object) -> list[Desc | HistogramDesc]:
    """The descriptors in a module-level value (alone, or in tuples, lists, dict values)."""
    if isinstance(value, Desc | HistogramDesc):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, tuple | list):
        return [d for v in value for d in _declared(v)]
    return []


def _module_shapes(module: str) -> dict[Shape, str]:
    out = {}
    for name, value in vars(sys.modules[module]).items():
        for d in _declared(value):
            out[_shape(d.of(Families()))] = f"{module}.{name}"
    return out


def _one_row_per_view(version: str) -> dict[str, list[dict[str, object]]]:
    """A row in every view, so the collectors take their paths past "no rows" (the LCP
    gauges are served only once table_fragments has rows)."""
    def value(c: schema.Column) -> object:
        if c.decode:
            return c.decode[0][1]
        return "x" if c.type.startswith("VARCHAR") else 1
    return {v.name: [{c.name: value(c) for c in v.columns_for(version)}]
            for v in schema.views_for(version)}


def _served(version: str) -> dict[Shape, str]:
    """Every family each collector this version supports fills: its shape -> "collector:
    module the collector is declared in"."""
    ctx = fake_context(_one_row_per_view(version), version=version)
    out = {}
    for c in ALL:
        if all(ctx.db.has(v) for v in c.views):
            fam = Families()
            c.collect(ctx, fam)
            out.update({_shape(f): c.collect.__module__ for f in fam})
    return out


@pytest.mark.parametrize("version", sorted(schema.PROFILES))
def test_every_family_a_collector_fills_is_declared_at_its_top(version: str) -> None:
    undeclared = [f"{module}: {shape[0]}" for shape, module in _served(version).items()
                  if shape not in _module_shapes(module)]
    assert undeclared == []


def test_every_declared_family_is_served_on_some_version() -> None:
    served = {shape for version in schema.PROFILES for shape in _served(version)}
    declared: dict[Shape, str] = {}
    for module in {c.collect.__module__ for c in ALL}:
        declared.update(_module_shapes(module))
    assert sorted(where for shape, where in declared.items() if shape not in served) == []
