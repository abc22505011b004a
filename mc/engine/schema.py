"""What a model's month returns, and how the engine summarises each column.

A model hands the engine a ``Schema``; the engine knows no model. Columns are
one of five kinds:

- ``money``: int32 cents; counted exactly against an enumerated ``support``
  (sorted int cents the column can take), or on the host when ``None``.
- ``counts``: int32 in ``0..size-1``; counted exactly.
- ``floats``: binned on the devices (Welford moments and a histogram).
- ``kept``: values brought to the host (exact quantiles; memory grows with N).
- ``passes``: bool checks; counted.

A model states its outputs once, as a table of name -> ``Column`` (each one's
kind, ``money``, ``count``, ``float`` or ``pass``, and its units), builds its
schema from that table with ``Schema.of``, and reports read their units from it.

``modes`` names the money and count columns whose modal value the summary gives.
``derive`` (host, optional) turns a chunk's kept columns, as float64 / int64 /
bool NumPy arrays, into the columns the summary reports (e.g. bills settled in
float64 from token flows); its ``pass_*`` columns become pass rates.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Mapping, NamedTuple

import numpy as np

KINDS = ("money", "counts", "floats", "kept", "passes")
# What a column holds. The first four a month's schema summarises; "text" (a label
# such as a card's class) and "flag" (a bool that is a fact, not a check) are
# columns of rows a model writes out (telemetry), never summarised: ``Schema.of``
# refuses them.
COLUMN_KINDS = ("money", "count", "float", "pass", "text", "flag")


class Column(NamedTuple):
    """One output column of a model: what it holds, in what units, and what it means."""

    kind: str  # "money" int32 cents, "count" int32, "float" float32, "pass" bool (a check); "text", "flag" bool
    units: str  # as ``figure`` writes them: "$", "cards", "tokens", "share" (a check's pass rate), "h"; "" a ratio
    doc: str = ""  # its meaning, where the docs state it from here (telemetry's columns)


def of_kind(table: Mapping[str, Column], kind: str) -> tuple[str, ...]:
    """The columns of ``table`` of one ``kind`` (``COLUMN_KINDS``), in table order."""
    if kind not in COLUMN_KINDS:
        raise ValueError(f"column kind {kind!r}: must be one of {', '.join(COLUMN_KINDS)}")
    return tuple(c for c, col in table.items() if col.kind == kind)


def column_units(table: Mapping[str, Column]) -> dict[str, str]:
    """``{column: units}`` of a model's column table, its checks left out (a check's
    figure is its pass rate, ``pass_figure``)."""
    return {c: col.units for c, col in table.items() if col.kind != "pass"}


@dataclasses.dataclass(frozen=True, eq=False)
class Schema:
    """Column names in output order, each assigned one kind (see the module)."""

    columns: tuple[str, ...]
    money: Mapping[str, np.ndarray | None] = dataclasses.field(default_factory=dict)
    counts: Mapping[str, int] = dataclasses.field(default_factory=dict)
    floats: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    passes: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    derive: Callable[[dict], dict] | None = None

    def __post_init__(self):
        groups = [tuple(self.money), tuple(self.counts), self.floats, self.kept, self.passes]
        named = [c for g in groups for c in g]
        if sorted(named) != sorted(self.columns) or len(set(named)) != len(named):
            raise ValueError(f"schema: every column needs exactly one kind; columns {self.columns}, "
                             f"kinds {dict(zip(KINDS, groups))}")
        for c in self.modes:
            if c not in self.money and c not in self.counts:
                raise ValueError(f"schema: mode column {c!r} must be a money or count column")

    @classmethod
    def of(cls, table: Mapping[str, Column], *, money: Mapping[str, np.ndarray | None], counts: Mapping[str, int],
           modes: tuple[str, ...] = (), derive: Callable[[dict], dict] | None = None) -> "Schema":
        """The schema of a model's column table, in table order: ``money`` gives each
        money column's support, ``counts`` each count column's size; float and pass
        columns are summarised as such."""
        rows_only = [c for c, col in table.items() if col.kind in ("text", "flag")]
        if rows_only:
            raise ValueError(f"schema: columns {rows_only} are text or flags, which no summary takes")
        for kind, given in (("money", money), ("count", counts)):
            if set(given) != set(of_kind(table, kind)):
                raise ValueError(f"schema: {kind} columns {of_kind(table, kind)}, given {tuple(given)}")
        return cls(columns=tuple(table), money=money, counts=counts, floats=of_kind(table, "float"),
                   passes=of_kind(table, "pass"), modes=modes, derive=derive)

    def kind(self, col: str) -> str:
        for name in KINDS:
            if col in getattr(self, name):
                return name
        raise KeyError(col)
