"""What a model's month returns, and how the engine summarises each column.

A model hands the engine a ``Schema``; the engine knows no model. Columns are
one of five kinds:

- ``money``: int32 cents; counted exactly against an enumerated ``support``
  (sorted int cents the column can take), or on the host when ``None``.
- ``counts``: int32 in ``0..size-1``; counted exactly.
- ``floats``: binned on the devices (Welford moments and a histogram).
- ``kept``: values brought to the host (exact quantiles; memory grows with N).
- ``passes``: bool checks; counted.

``modes`` names the money and count columns whose modal value the summary gives.
``derive`` (host, optional) turns a chunk's kept columns, as float64 / int64 /
bool NumPy arrays, into the columns the summary reports (e.g. bills settled in
float64 from token flows); its ``pass_*`` columns become pass rates.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Mapping

import numpy as np

KINDS = ("money", "counts", "floats", "kept", "passes")


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

    def kind(self, col: str) -> str:
        for name in KINDS:
            if col in getattr(self, name):
                return name
        raise KeyError(col)
