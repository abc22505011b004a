"""A request log (SPEC §7.1): rows of (arrival time, prompt tokens, answer tokens).

The log is held on the host in float64 seconds since its first arrival, sorted
(stably, so duplicate timestamps keep their order), with the wall-clock time of
that first arrival when the log had one. Reading files into a log is the files
layer's; this is the value the latency model and the demand profile consume.
"""

from __future__ import annotations

import datetime
import hashlib
from dataclasses import dataclass

import numpy as np

from .. import _validate as v
from .._fields import Field

MAX_ROWS = 2**24  # rows a log may hold (a month of a busy service at ~6 requests/s)
MAX_LOG_TOKENS = 2**31 - 1


@dataclass(frozen=True, eq=False)
class RequestLog:
    """A validated request log.

    ``time``: (rows,) float64 s since the first arrival, sorted, ``time[0] = 0``.
    ``prompt``: (rows,) int64 prompt tokens (>= 0). ``answer``: (rows,) int64
    answer tokens (>= 1: an answer of 0 tokens counts as 1). ``source``: the name
    shown for it (a file path). ``start``: the first arrival as ``numpy.datetime64``
    (ns) when the log gave wall-clock times, else None.

    Build one with ``RequestLog.of`` (sorts and validates). Two logs are equal when
    their rows and start are; ``sha256`` names the content.
    """

    time: np.ndarray
    prompt: np.ndarray
    answer: np.ndarray
    source: str = "<log>"
    start: np.datetime64 | None = None

    @classmethod
    def of(cls, time, prompt, answer, *, source: str = "<log>", start=None, rows=None) -> "RequestLog":
        """A log from arrival times (s, any origin), prompt and answer tokens, in any
        order (sorted here, stably). ``rows``: the numbers errors give each entry
        (default 0, 1, ...; a file reader passes its line numbers).

        Raises:
            ParamError: fewer than 2 rows, arrays of different lengths, a missing,
            negative or non-finite value (naming the row), or a span of zero.
        """
        source = v.instance("source", source, str, "the name shown for the log (a str)")
        if start is not None and not isinstance(start, (np.datetime64, datetime.datetime)) or \
                isinstance(start, np.datetime64) and np.isnat(start):
            raise TypeError(f"start must be a datetime (numpy.datetime64 or datetime.datetime) or None, "
                            f"not {v.one_line(start)[:60]}")
        arrays = []
        for name, x in (("time", time), ("prompt", prompt), ("answer", answer)):
            try:
                a = np.asarray(x, dtype=np.float64)
            except (TypeError, ValueError):
                v.fail(f"{source}: {name}", v.one_line(x)[:60], "must be numbers")
            if a.ndim != 1:
                v.fail(f"{source}: {name}", f"<array of shape {a.shape}>", "must be one column of numbers")
            arrays.append(a)
        t, p, a = arrays
        if not len(t) == len(p) == len(a):
            v.fail(f"{source}: rows", (len(t), len(p), len(a)), "time, prompt and answer must have one length")
        n = len(t)
        if n < 2:
            v.fail(f"{source}: rows", n, "a request log needs at least 2 rows")
        if n > MAX_ROWS:
            v.fail(f"{source}: rows", n, f"must be at most {MAX_ROWS:,}")
        label = np.arange(n) if rows is None else np.asarray(rows)
        for name, x, hi in (("time", t, 1e12), ("prompt", p, MAX_LOG_TOKENS), ("answer", a, MAX_LOG_TOKENS)):
            lo = -1e12 if name == "time" else 0.0
            bad = ~np.isfinite(x) | (x < lo) | (x > hi)
            if name != "time":
                bad |= x != np.floor(x)
            if bad.any():
                i = int(np.argmax(bad))
                what = "a finite number of seconds" if name == "time" else \
                    f"a whole number of tokens in [0, {MAX_LOG_TOKENS:,}]"
                v.fail(f"{source}: row {label[i]} {name}", float(x[i]), f"must be {what}")
        order = np.argsort(t, kind="stable")
        t, p, a = t[order], p[order], a[order]
        span = float(t[-1] - t[0])
        if not span > 0:
            v.fail(f"{source}: span", span, "must be positive: every request arrives at one instant")
        if start is not None:
            start = np.datetime64(start, "ns")
        return cls(time=t - t[0], prompt=p.astype(np.int64), answer=np.maximum(a, 1).astype(np.int64),
                   source=source, start=start)

    @property
    def rows(self) -> int:
        return int(self.time.size)

    @property
    def span(self) -> float:
        """s from the first arrival to the last."""
        return float(self.time[-1])

    @property
    def rate(self) -> float:
        """The log's own rate, requests/s: ``(rows - 1) / span``."""
        return (self.rows - 1) / self.span

    @property
    def context(self) -> np.ndarray:
        """(rows,) int64 final context of each request: prompt + answer tokens."""
        return self.prompt + self.answer

    def mean(self, what: str) -> float:
        """Mean ``prompt`` or ``answer`` tokens."""
        return float(np.mean(getattr(self, v.choice("what", what, ("prompt", "answer")))))

    @property
    def sha256(self) -> str:
        cached = self.__dict__.get("_sha256")
        if cached is None:
            h = hashlib.sha256()
            for x in (self.time, self.prompt, self.answer):
                h.update(np.ascontiguousarray(x).tobytes())
            h.update(str(self.start).encode())
            cached = h.hexdigest()
            object.__setattr__(self, "_sha256", cached)
        return cached

    def __eq__(self, other) -> bool:
        return isinstance(other, RequestLog) and other.sha256 == self.sha256

    def __hash__(self) -> int:
        return hash(self.sha256)

    def describe(self) -> dict:
        """What a manifest or ``--json`` records of the log: its source, rows, span
        (s), own rate (requests/s), mean lengths and content hash."""
        return {"source": self.source, "rows": self.rows, "span_s": self.span, "rate": self.rate,
                "prompt_mean": self.mean("prompt"), "answer_mean": self.mean("answer"),
                "start": None if self.start is None else str(self.start), "sha256": self.sha256}

    def __repr__(self) -> str:
        return (f"RequestLog({self.source!r}, {self.rows:,} rows over {self.span:.6g} s, "
                f"{self.rate:.4g} req/s)")


# The bootstrap's block of log time (``Serving.block`` declares it with this).
BLOCK = Field(None, lo=0.0, lo_open=True, hi=1e9, unit="s of log time", doc="bootstrap block of log time")


def check_block(block: float, log: RequestLog) -> float:
    """The bootstrap's block (s of log time): positive, at most the log's span."""
    v.instance("log", log, RequestLog, "a RequestLog")
    block = BLOCK.check("block", block)
    if block is None:  # the field's unset default is the caller's to fill, not a value
        v.fail("block", block, f"must be a number in {BLOCK.allowed()}")
    if block > log.span:
        v.fail("block", block, f"must be at most the log's span, {log.span:.6g} s ({log.source})")
    return block


__all__ = ["RequestLog", "MAX_ROWS", "check_block"]
