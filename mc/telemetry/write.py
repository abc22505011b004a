"""Telemetry files: the rows streamed to Parquet or CSV as they are made, and the
truth in two tables beside them, each written atomically.

For ``--out x.parquet`` (or ``x.csv``) the files are

- ``x.parquet``: one row per sample (``columns.SAMPLES``), card by card;
- ``x.truth.parquet``: one row per card (``columns.TRUTH``);
- ``x.dips.parquet``: one row per dip that begins within the samples' span
  (``columns.DIPS``);

all in the format the extension names, a Parquet file's fields carrying their
units and meanings. Memory is bounded by the engine's chunk, not by the number of rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..files import atomic_write, check_output, write_table
from .columns import DIPS, TRUTH, with_units
from .emit import Emitted, emit

FORMATS = (".parquet", ".csv")


def paths(out: Any) -> tuple[Path, Path, Path]:
    """``(rows, truth, dips)`` file paths for ``out``, checked before anything runs
    (one-line errors): ``x.parquet`` -> ``x.truth.parquet``, ``x.dips.parquet``."""
    out = check_output(out, FORMATS)
    ext = out.suffix
    return out, out.with_name(out.stem + ".truth" + ext), out.with_name(out.stem + ".dips" + ext)


def _described(frame, table, path: Path):
    """The frame as Parquet takes it, each field with its units and meaning
    (``columns.with_units``); a CSV file has nowhere to keep them: the frame as it is."""
    if path.suffix.lower() != ".parquet":
        return frame
    import pyarrow as pa

    return with_units(pa.Table.from_pandas(frame, preserve_index=False), table)


class Stopped(Exception):
    """A Ctrl-C stopped the run: the rows file is abandoned (``atomic_write`` removes
    its temporary), and nothing is written."""


class _Writer:
    """The rows sink: a Parquet or CSV writer over an open file, made at the first chunk."""

    def __init__(self, fh, ext: str, metadata: str | None):
        self.fh, self.ext, self.metadata, self.writer = fh, ext, metadata, None

    def __call__(self, table) -> None:
        if self.ext == ".parquet" and self.metadata is not None:
            table = table.replace_schema_metadata({b"mc": self.metadata.encode()})
        if self.writer is None:
            if self.ext == ".parquet":
                import pyarrow.parquet as pq

                self.writer = pq.ParquetWriter(self.fh, table.schema)
            else:
                import pyarrow.csv as pc

                self.writer = pc.CSVWriter(self.fh, table.schema)
        self.writer.write_table(table)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def write(out: Any, scenario, sampling=None, *, metadata: str | None = None, **kw) -> tuple[Emitted, dict]:
    """Emit telemetry (``emit``'s arguments) straight into ``out`` and its truth files.

    Returns ``(emitted, {path: digest})``; a run a Ctrl-C stopped writes nothing
    (``emitted.partial``, and no digests). ``metadata``: text for the Parquet
    files' schema metadata under ``mc`` (a manifest's JSON).
    """
    rows_path, truth_path, dips_path = paths(out)
    result: list[Emitted] = []

    def rows(tmp: str) -> None:
        with open(tmp, "wb") as fh:
            w = _Writer(fh, rows_path.suffix.lower(), metadata)
            try:
                made = emit(scenario, sampling, sink=w, **kw)
            finally:
                w.close()
        result.append(made)
        if made.partial:
            raise Stopped

    try:
        digests = {rows_path: atomic_write(rows_path, rows)}
    except Stopped:
        return result[0], {}
    made = result[0]
    digests[truth_path] = write_table(_described(made.cards, TRUTH, truth_path), truth_path, metadata)
    digests[dips_path] = write_table(_described(made.dips, DIPS, dips_path), dips_path, metadata)
    return made, digests

