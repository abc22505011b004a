"""Telemetry's columns (SPEC §8), each declared once with its kind, unit and meaning
(``mc.engine.Column``): the three tables ``mc telemetry`` writes and the rows
``mc fit`` reads. The files' Parquet schema, ``mc telemetry --json``'s ``units``,
the command's help and docs/model.md §8's tables are read from (or checked against)
these tables.
"""

from __future__ import annotations

from typing import Mapping

from ..engine import Column

CLASS = Column("text", "", "the card's class name")
CARD = Column("count", "", "the card's index, class by class as the pool lays its cards out")
RATED = Column("float", "tok/s", "the class's rated rate")

# x.parquet: one row per sample.
SAMPLES = {"card": CARD, "class": CLASS,
           "time": Column("float", "h", "the end τ of the Δ hours the sample averages"),
           "rate": Column("float", "tok/s", "the card's mean rate over those hours, after its dips, with noise")}
# x.truth.parquet: one row per card.
TRUTH = {"card": CARD, "class": CLASS, "rated": RATED,
         "q": Column("float", "× rated", "the card's quality, lemon factor included"),
         "lemon": Column("flag", "", "whether the card is a lemon"),
         "true_rate": Column("float", "tok/s", "the card's rate outside dips, rated × q"),
         "dips": Column("count", "dips", "how many of its dips begin within the samples' span")}
# x.dips.parquet: one row per dip that begins within the samples' span.
DIPS = {"card": CARD, "start": Column("float", "h", "when the dip begins"),
        "hours": Column("float", "h", "its whole length, past the span too"),
        "depth": Column("float", "share", "the share of the card's true rate it takes")}
# What a fit reads, in this order; the first three are needed (``REQUIRED``).
READ = {"card": Column("text", "", "the card's id (any value; mc telemetry writes its index)"),
        "time": Column("float", "h", "the sample's time: hours, or datetimes read as hours since the earliest"),
        "rate": Column("float", "tok/s", "the card's mean rate over the interval before the sample"), "class": CLASS,
        "rated": Column("float", "tok/s", "the class's rated rate: one value a class, blank where not given")}
REQUIRED = ("card", "time", "rate")
FILES = {"rows": SAMPLES, "truth": TRUTH, "dips": DIPS}


def units(table: Mapping[str, Column]) -> dict[str, str]:
    """``{column: units}`` of a table (``""`` where a column has none)."""
    return {name: col.units for name, col in table.items()}


def describe(table: Mapping[str, Column]) -> str:
    """A table's columns as a sentence reads them: ``"card, class, time (h), rate (tok/s)"``."""
    return ", ".join(f"{name} ({col.units})" if col.units else name for name, col in table.items())


def with_units(arrow_table, table: Mapping[str, Column]):
    """A ``pyarrow.Table`` whose fields carry their column's ``units`` and ``doc`` as
    field metadata (a Parquet file keeps them)."""
    import pyarrow as pa

    fields = [f.with_metadata({"units": table[f.name].units, "doc": table[f.name].doc}) for f in arrow_table.schema]
    return pa.Table.from_arrays(arrow_table.columns, schema=pa.schema(fields, metadata=arrow_table.schema.metadata))


__all__ = ["CARD", "CLASS", "RATED", "SAMPLES", "TRUTH", "DIPS", "READ", "REQUIRED", "FILES", "units", "describe",
           "with_units"]
