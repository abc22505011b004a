"""Request logs in (SPEC §7.1): Azure, BurstGPT and Mooncake traces, or any CSV or
Parquet file with named time, prompt and answer columns, read into a ``RequestLog``
with one-line errors that name the file, the line and the value. Which file and
which columns are told here; the columns become numbers in ``logvalues``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .. import _validate as v
from ..serving.traffic import RequestLog
from .logvalues import Shown, times, tokens
from .paths import input_file

MAX_LOG_BYTES = 4 << 30  # request logs may be far larger than other inputs
_CHUNK = 16 << 20


class LogFormat(NamedTuple):
    """A known request-log layout: its name, its (time, prompt, answer) columns,
    the unit of its time column ("datetime", "s" or "ms") and a description."""

    name: str
    columns: tuple[str, str, str]
    time: str
    what: str


LOG_FORMATS = (
    LogFormat("azure", ("TIMESTAMP", "ContextTokens", "GeneratedTokens"), "datetime",
              "Azure LLM inference traces (CSV, TIMESTAMP a date-time)"),
    LogFormat("burstgpt", ("Timestamp", "Request tokens", "Response tokens"), "s",
              "BurstGPT (CSV, Timestamp in s)"),
    LogFormat("mooncake", ("timestamp", "input_length", "output_length"), "ms",
              "Mooncake (JSONL, timestamp in ms)"),
)
_GENERIC = LogFormat("columns", ("time", "prompt", "answer"), "auto", "named columns")


def read_request_log(path: str | Path, *, columns: str | tuple | list | None = None) -> RequestLog:
    """A request log read from a file, its rows sorted by arrival (stably:
    duplicate timestamps are legal and keep their order).

    Formats, told apart by content (a Parquet file's magic bytes, a JSON object on
    the first line) and then by the header:

    - Azure LLM inference traces, CSV ``TIMESTAMP, ContextTokens, GeneratedTokens``
      (TIMESTAMP a date-time such as ``2023-11-16 18:15:46.6805900``);
    - BurstGPT, CSV ``Timestamp, Request tokens, Response tokens`` (Timestamp in s;
      its other columns are ignored);
    - Mooncake, JSONL: one object a line with ``timestamp`` (ms), ``input_length``
      and ``output_length`` (other keys ignored);
    - any CSV, JSONL or Parquet file with ``columns``: the time, prompt and answer
      columns, as ``"time,prompt,answer"`` or a 3-tuple of names. ``columns`` also
      overrides the detection above; naming a known layout's three columns keeps
      that layout's time unit.

    Times are date-times (text pandas parses, or a Parquet timestamp column; time
    zones are converted to UTC) or numbers of seconds (Mooncake's ms are divided
    by 1000). With date-times the log's ``start`` is the earliest arrival
    (``numpy.datetime64``, ns) and times are float64 s since it; with numbers
    ``start`` is None. Prompt and answer are whole numbers of tokens; an answer of
    0 tokens counts as 1. Blank lines at the end of a CSV are ignored.

    Raises:
        FileNotFoundError: no such file.
        ParamError: one line, naming the file: a folder, a file larger than 4 GiB,
            an unreadable, non-UTF-8 (naming its line), empty or malformed file, an
            invalid JSON line (naming it), a header of no known layout with no
            ``columns`` (listing the header and the layouts), a column not in the
            file; or a missing, unparseable, negative, non-finite, out-of-range or (tokens)
            fractional value, naming its line (``line N``: the line of the file,
            the CSV header being line 1) or, in Parquet, its 1-based ``row N``, and
            the value; fewer than 2 rows, or a span of zero.
        TypeError: ``columns`` is not a str, tuple or list of three names.
    """
    names = _columns(columns)
    path = input_file(path, "request log", limit=MAX_LOG_BYTES)
    src = str(path)
    kind = _kind(src, path)
    if kind != "parquet":
        _check_utf8(src, path)
    read = {"csv": _read_csv, "jsonl": _read_jsonl, "parquet": _read_parquet}[kind]
    fmt, frame, where, nulls = read(src, path, names)
    if len(frame) == 0:
        v.fail(f"{src}: rows", 0, "a request log needs at least 2 rows (the file holds none)")
    tcol, pcol, acol = frame.columns
    time, start = times(src, frame[tcol], tcol, fmt, Shown(where, nulls.get(tcol)))
    prompt = tokens(src, frame[pcol], pcol, Shown(where, nulls.get(pcol)))
    answer = tokens(src, frame[acol], acol, Shown(where, nulls.get(acol)))
    rows = None if kind == "jsonl" else np.arange(len(frame)) + (2 if kind == "csv" else 1)
    return RequestLog.of(time, prompt, answer, source=src, start=start, rows=rows)


# -- which file, which columns -------------------------------------------------------------

def _columns(columns) -> tuple[str, str, str] | None:
    if columns is None:
        return None
    v.instance("columns", columns, (str, tuple, list), "'time,prompt,answer' or a tuple of three column names")
    names = columns.split(",") if isinstance(columns, str) else list(columns)
    if not all(isinstance(n, str) for n in names):
        raise TypeError(f"columns must name three columns (str), not {v.one_line(columns)[:80]}")
    names = [n.strip() for n in names]
    if len(names) != 3 or not all(names) or len(set(names)) != 3:
        v.fail("columns", columns, "must name three different columns: time, prompt and answer, "
               "e.g. 'time,prompt,answer'")
    return tuple(names)


def _kind(src: str, path: Path) -> str:
    """"parquet", "jsonl" or "csv", from the first bytes and the extension."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except PermissionError:
        v.fail(src, "file", "cannot be read (permission denied)")
    except OSError as err:
        v.fail(src, "file", f"cannot be read ({err.strerror or type(err).__name__})")
    if not head.strip():
        v.fail(src, "file", "is empty: a request log needs a header and at least 2 rows")
    suffix = path.suffix.lower()
    if head.startswith(b"PAR1") or suffix in (".parquet", ".pq"):
        return "parquet"
    if head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"{") or suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    return "csv"


def _check_utf8(src: str, path: Path) -> None:
    """A one-line error naming the line of the first byte that is not UTF-8."""
    base, lines, carry = 0, 0, b""
    with path.open("rb") as fh:
        while True:
            chunk = fh.read(_CHUNK)
            data = carry + chunk
            try:
                data.decode("utf-8")
                carry = b""
            except UnicodeDecodeError as err:
                if chunk and err.reason == "unexpected end of data" and err.start >= len(data) - 3:
                    data, carry = data[:err.start], data[err.start:]
                else:
                    line = lines + data.count(b"\n", 0, err.start) + 1
                    v.fail(f"{src}: line {line}", "text", f"is not UTF-8 (byte {base + err.start})")
            if not chunk:
                return
            base, lines = base + len(data), lines + data.count(b"\n")


def _pick(src: str, header: list, names) -> tuple[LogFormat, tuple[str, str, str]]:
    """The layout and the file's own names of the three columns to read."""
    header = [str(h) for h in header]
    stripped = {h.strip(): h for h in header}
    shown = ",".join(header)
    shown = shown if len(shown) <= 200 else shown[:197] + "..."
    if names is None:
        for fmt in LOG_FORMATS:
            if all(c in stripped for c in fmt.columns):
                return fmt, tuple(stripped[c] for c in fmt.columns)
        known = "; ".join(f"{f.what}: {','.join(f.columns)}" for f in LOG_FORMATS)
        v.fail(f"{src}: header", shown, f"is no known request-log layout ({known}); "
               "pass columns='time,prompt,answer' naming its time, prompt and answer columns")
    for name in names:
        if name not in header and name not in stripped:
            v.fail(f"{src}: columns", ",".join(names), f"names {name!r}, which is not in the header {shown!r}")
    actual = tuple(n if n in header else stripped[n] for n in names)
    fmt = next((f for f in LOG_FORMATS if f.columns == names), _GENERIC)
    return fmt, actual


# -- readers: (layout, frame of the three columns in file order, row -> where, nulls) --------
# ``nulls``: column -> rows that are null (Arrow readers, where NaN is another value).

def _read_csv(src: str, path: Path, names):
    import pandas as pd

    def read(**kw):
        try:
            return pd.read_csv(path, encoding="utf-8", **kw)
        except pd.errors.EmptyDataError:
            v.fail(src, "file", "is empty: a request log needs a header and at least 2 rows")
        except (pd.errors.ParserError, ValueError) as err:
            v.fail(src, "CSV", f"is not a valid CSV file ({_first_line(err)})")

    fmt, cols = _pick(src, list(read(nrows=0).columns), names)
    frame = read(usecols=list(cols), skip_blank_lines=False, keep_default_na=False, na_values=[""],
                 low_memory=False)[list(cols)]
    kept = np.flatnonzero(frame.notna().any(axis=1).to_numpy())  # blank lines at the end: dropped
    frame = frame.iloc[:kept[-1] + 1 if kept.size else 0]
    return fmt, frame, lambda i: f"line {i + 2}", {}


def _read_jsonl(src: str, path: Path, names):
    import pyarrow as pa
    import pyarrow.json as pj

    first = None
    with path.open("rb") as fh:
        for no, line in enumerate(fh, 1):
            if line.strip():
                first = _json_object(src, no, line)
                break
    if first is None:
        v.fail(src, "file", "is empty: a request log needs at least 2 rows")
    fmt, cols = _pick(src, list(first), names)
    time_text = isinstance(first.get(cols[0]), str)
    schema = pa.schema([(cols[0], pa.string() if time_text else pa.float64()),
                        (cols[1], pa.float64()), (cols[2], pa.float64())])
    try:
        table = pj.read_json(path, read_options=pj.ReadOptions(block_size=_CHUNK),
                             parse_options=pj.ParseOptions(explicit_schema=schema,
                                                           unexpected_field_behavior="ignore"))
    except pa.ArrowException as err:
        _scan_jsonl(src, path, cols, time_text)  # finds the line, or returns
        v.fail(src, "JSONL", f"cannot be read ({_first_line(err)})")
    return fmt, table.to_pandas(), lambda i: f"line {_jsonl_line(path, i)}", _nulls(table)


def _json_object(src: str, no: int, line: bytes) -> dict:
    text = line.decode("utf-8").strip().removeprefix("\ufeff")
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        v.fail(f"{src}: line {no}", text[:60], f"is not valid JSON ({getattr(err, 'msg', 'nested too deeply')})")
    if not isinstance(obj, dict):
        v.fail(f"{src}: line {no}", text[:60], "must be a JSON object")
    return obj


def _scan_jsonl(src: str, path: Path, cols, time_text: bool) -> None:
    """After the fast reader failed: the first line that is not a JSON object, or
    whose time, prompt or answer is of the wrong type, as a one-line error."""
    with path.open("rb") as fh:
        for no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            obj = _json_object(src, no, line)
            for k, col in enumerate(cols):
                x = obj.get(col)
                if x is None:
                    continue  # missing: found and named once the file is read
                if k == 0 and time_text:
                    ok, want = isinstance(x, str), "a date-time (text), as on the first line"
                else:
                    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x)
                    want = "a finite number"
                if not ok:
                    v.fail(f"{src}: line {no} {col}", x if not isinstance(x, str) else x[:60], f"must be {want}")


def _jsonl_line(path: Path, row: int) -> int:
    """The line of a JSONL file that holds row ``row`` (0-based; blank lines skipped)."""
    seen = -1
    with path.open("rb") as fh:
        for no, line in enumerate(fh, 1):
            seen += bool(line.strip())
            if seen == row:
                return no
    return row + 1


def _read_parquet(src: str, path: Path, names):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        header = pq.read_schema(path).names
        fmt, cols = _pick(src, header, names)
        table = pq.read_table(path, columns=list(cols))
        frame = table.to_pandas()
    except (pa.ArrowException, OSError) as err:
        v.fail(src, "Parquet", f"is not a readable Parquet file ({_first_line(err)})")
    return fmt, frame[list(cols)], lambda i: f"row {i + 1}", _nulls(table)


def _nulls(table) -> dict:
    return {name: table.column(name).is_null().to_numpy(zero_copy_only=False) for name in table.column_names}


def _first_line(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:160]


__all__ = ["read_request_log", "LOG_FORMATS", "LogFormat", "MAX_LOG_BYTES"]
