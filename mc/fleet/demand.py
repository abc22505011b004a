"""Hourly demand profiles (SPEC §1.7), from a formula, a trace or a request log."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as v
from ..kernels import per_hour
from ..serving.traffic import RequestLog
from ..units import HOURS
from .._fields import check_fields, declare
from .._pytree import fields_dict, pytree_dataclass, set_field
from ..kernels import poisson_capped
from . import logdemand

SHAPES = ("flat", "diurnal", "weekly", "bursty", "trace", "log")
LEVEL = 60000.0  # tok/s: the level of every shape but a log's when none is given
LOG_FIELDS = ("log", "columns", "scale", "log_sha256")  # used with shape "log" only


class _Shown:
    """A value as an error shows it: its one-line repr, cut short past 60 characters."""

    def __init__(self, value):
        text = v.one_line(value)
        self.text = text if len(text) <= 60 else text[:57] + "..."

    def __repr__(self) -> str:
        return self.text


def check_trace(values) -> np.ndarray:
    """A trace: exactly 730 finite, non-negative hourly demands (tok/s), one
    dimension of real numbers (booleans, complex numbers, strings and other
    objects are refused, not converted)."""
    allowed = "must be 730 numbers (tok/s per hour), a list or a 1-D array of integers or floats"
    if isinstance(values, (str, bytes, dict)):
        v.fail("demand.trace", _Shown(values), allowed)
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError, OverflowError):  # ragged lists, unconvertible objects
        v.fail("demand.trace", _Shown(values), allowed)
    if arr.ndim == 0:  # one number (or one other object), not a list
        v.fail("demand.trace", _Shown(values), allowed)
    if arr.dtype.kind not in "iuf":
        kind = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes"}.get(arr.dtype.kind)
        v.fail("demand.trace", f"<{kind or arr.dtype.name + ' values'}>", allowed)
    if arr.ndim != 1:
        v.fail("demand.trace", f"<array of shape {arr.shape}>", allowed)
    arr = arr.astype(np.float64)
    if arr.size != HOURS:
        v.fail("demand.trace", f"<{arr.size} values>", "must hold exactly 730 hourly values")
    bad = np.flatnonzero(~np.isfinite(arr) | (arr < 0) | (arr > v.FLOAT32_MAX) | (arr > 0) & (arr < v.FLOAT32_TINY))
    if bad.size:
        v.fail(f"demand.trace[{bad[0]}]", float(arr[bad[0]]),
               f"must be a number >= 0 that float32 holds (0, or magnitude {v.FLOAT32_TINY:.4g} to "
               f"{v.FLOAT32_MAX:.4g})")
    return arr.astype(np.float32)


def _request_log(field: str, value):
    if not isinstance(value, RequestLog):
        v.fail(field, _Shown(value), "must be a RequestLog (mc.files.read_request_log reads one; "
               "a scenario file names it as log = \"FILE\")")
    return value


def _text(field: str, value):
    if not isinstance(value, str):
        v.fail(field, _Shown(value), "must be a str")
    return value


@pytree_dataclass(static=("shape", "max_bursts", "log", "columns", "log_sha256"))
class Demand:
    """Hourly demand ``D_h`` in tok/s.

    - ``flat``: ``level``.
    - ``diurnal``: ``level·(1 + amplitude·cos(2π(h − peak_hour)/24))``.
    - ``weekly``: diurnal, times ``weekend_factor`` on days 5 and 6 of each week.
    - ``bursty``: ``level`` plus ``Poisson(burst_rate)`` bursts a month (at most
      ``max_bursts``), each ``burst_height`` tok/s for ``burst_hours`` from a
      uniform start, drawn per fleet-month.
    - ``trace``: ``trace``, 730 hourly values.
    - ``log``: the answer tokens of ``log`` (a ``RequestLog``) arriving in each
      hour / 3600, tiled over the month by hour of the week or day, or its mean
      (``logdemand`` says how, alignment and edge hours included); times
      ``scale``, or scaled to mean ``level`` (at most one of them). Computed once
      on the host and held in ``trace``, so the month sees 730 values as for a
      trace. ``columns``: how the log's file was read (``"time,prompt,answer"``,
      kept for its plain data); ``log_sha256``: the log's content hash as plain
      data records it (given, the log must match it).

    ``level`` None (the default) is 60,000 tok/s for every shape but ``log``,
    whose level is then its own mean.
    """

    shape: str = declare("flat", kind="choice", options=SHAPES,
                         doc="profile: flat, diurnal, weekly, bursty, trace or log")
    level: float | None = declare(None, lo=0.0, unit="tok/s", doc="base or mean demand")
    amplitude: float = declare(0.3, lo=0.0, hi=1.0, unit="share of level", doc="daily swing either side")
    peak_hour: float = declare(14.0, lo=0.0, hi=24.0, unit="hour of day", doc="busiest hour")
    weekend_factor: float = declare(0.6, lo=0.0, unit="× weekday", doc="weekend demand, × weekday (weekly)")
    burst_rate: float = declare(4.0, lo=0.0, unit="bursts per month", doc="mean number of bursts (bursty)")
    burst_height: float = declare(30000.0, lo=0.0, unit="tok/s", doc="extra demand during a burst")
    burst_hours: float = declare(6.0, lo=0.0, lo_open=True, unit="h", doc="burst duration")
    max_bursts: int = declare(16, lo=1, hi=1024, kind="integer", unit="bursts", doc="cap on bursts a month")
    trace: np.ndarray | None = declare(None, kind="any", unit="tok/s", doc="730 hourly demands (trace)")
    log: RequestLog | None = declare(None, kind="any", parse=_request_log, unit="path",
                                     doc="request log the demand is read from (log)")
    columns: str | None = declare(None, kind="any", parse=_text, doc="the log's time, prompt and answer columns")
    scale: float | None = declare(None, lo=0.0, unit="×", doc="multiplies the log's hourly profile")
    log_sha256: str | None = declare(None, kind="any", parse=_text, doc="the log's content hash; the log must match it")

    def __post_init__(self):
        check_fields(self, "demand")
        if self.level is None and self.shape != "log":
            set_field(self, "level", LEVEL)
        is_log = self.shape == "log"
        self._check_log_fields()
        if self.shape == "trace":
            if self.trace is None:
                v.fail("demand.trace", None, "must be given (730 hourly values) when shape is 'trace'")
            set_field(self, "trace", check_trace(self.trace))
        elif is_log:
            given = self.trace
            set_field(self, "trace", self._log_profile())
            if given is not None and not np.array_equal(np.asarray(given, np.float32), self.trace):
                v.fail("demand.trace", "<values>", "is the log's profile with shape 'log', not given: give the "
                       "log (and scale or level) and leave trace out")
        elif self.trace is not None:
            v.fail("demand.trace", "<values>", f"is only used with shape 'trace', not {self.shape!r}")

    def _check_log_fields(self) -> None:
        """The log fields go with shape ``log`` only, and a given hash must match the log."""
        if self.shape != "log":
            for name in LOG_FIELDS:
                if getattr(self, name) is not None:
                    shown = "<log>" if name == "log" else _Shown(getattr(self, name))
                    v.fail(f"demand.{name}", shown, f"is only used with shape 'log', not {self.shape!r}")
            return
        if self.log is None:
            v.fail("demand.log", None, "must be given (a RequestLog) when shape is 'log'")
        if self.scale is not None and self.level is not None:
            v.fail("demand.scale", self.scale, f"cannot be given with demand.level={self.level:g}: scale multiplies "
                   "the log's profile, level sets its mean; give one")
        if self.log_sha256 is not None and self.log_sha256 != self.log.sha256:
            v.fail("demand.log_sha256", self.log_sha256, f"does not match the log read from {self.log.source} "
                   f"(sha256 {self.log.sha256}): the log has changed")

    def _log_profile(self) -> np.ndarray:
        """(730,) float32 tok/s: the log's profile, scaled; values float32 cannot
        hold are refused naming the field that made them."""
        base, _ = logdemand.hourly_profile(self.log)
        field, factor = "demand.log", 1.0
        if self.scale is not None:
            field, factor = "demand.scale", self.scale
        elif self.level is not None:
            field, factor = "demand.level", self.level / float(base.mean())
        out = base * factor
        bad = np.flatnonzero((out > v.FLOAT32_MAX) | (out > 0) & (out < v.FLOAT32_TINY))
        if bad.size:
            given = self.log.source if field == "demand.log" else getattr(self, field.split(".")[1])
            v.fail(field, given, f"makes hour {bad[0]}'s demand {out[bad[0]]:.4g} tok/s, which float32 does not "
                   f"hold (0, or magnitude {v.FLOAT32_TINY:.4g} to {v.FLOAT32_MAX:.4g})")
        return out.astype(np.float32)

    def peak(self) -> tuple[float, str]:
        """An upper bound on ``D_h`` (tok/s, float64) and the fields it comes from."""
        if self.shape in ("trace", "log"):
            by = {"trace": "demand.trace", "log": "demand.log" + (" and demand.scale" if self.scale is not None else
                                                                  " and demand.level" if self.level is not None
                                                                  else "")}
            return float(np.max(self.trace)), by[self.shape]
        top = self.level * (1.0 + self.amplitude)
        if self.shape == "flat":
            return self.level, "demand.level"
        if self.shape == "diurnal":
            return top, "demand.level and demand.amplitude"
        if self.shape == "weekly":
            return top * max(1.0, self.weekend_factor), "demand.level, amplitude and weekend_factor"
        # bursty: every burst on one hour at worst
        return self.level + self.max_bursts * self.burst_height, "demand.level, max_bursts and burst_height"

    def minute_peak(self) -> dict | None:
        """For a log: its busiest minute's peak-to-mean within each hour,
        ``{"median", "max", "hours", "window_s"}`` (``logdemand.minute_peak``);
        None for other shapes."""
        if self.shape != "log":
            return None
        cached = self.__dict__.get("_minute_peak")
        if cached is None:
            cached = logdemand.minute_peak(self.log)
            object.__setattr__(self, "_minute_peak", cached)
        return dict(cached)

    def to_data(self) -> dict:
        """Plain data (a TOML table): the fields, ``None`` left out; a log as its
        path (``log = "FILE"``) with its ``log_sha256``, never its 730 values."""
        out = fields_dict(self)
        if self.shape == "log":
            out.pop("trace", None)
            out["log"], out["log_sha256"] = self.log.source, self.log.sha256
        return out

    @classmethod
    def from_fields(cls, fields: dict, given: dict) -> "Demand":
        """From merged plain fields (a base's, then those given). A base's trace
        is dropped when the shape given is not ``trace``, and its log fields when
        the shape is not ``log`` (a trace or a log given with another shape is an
        error). A log given anew starts from its own mean: the base's ``level``,
        ``scale``, ``columns`` and ``log_sha256`` go unless given with it; and
        ``scale`` or ``level`` given alone replaces the other."""
        for name, table in (("fields", fields), ("given", given)):
            v.instance(name, table, Mapping, "a dict of demand fields")
        known = [f.name for f in dataclasses.fields(cls)]
        for key in fields:
            if key not in known:
                v.fail(f"demand.{key}", fields[key], "is not a field of demand; known: " + ", ".join(known))
        shape = fields["shape"] if isinstance(fields.get("shape"), str) else None
        drop = set()
        if shape != "trace" and "trace" not in given:
            drop.add("trace")
        if shape != "log":
            drop |= {k for k in LOG_FIELDS if k not in given}
        else:
            if "log" in given:
                drop |= {k for k in ("level", "scale", "columns", "log_sha256") if k not in given}
            for one, other in (("scale", "level"), ("level", "scale")):
                if one in given and other not in given:
                    drop.add(other)
        return cls(**{k: x for k, x in fields.items() if k not in drop})


class BurstDraws(NamedTuple):
    u_count: jax.Array  # () float32 open uniform
    u_begin: jax.Array  # (max_bursts,) float32 open uniform


def uniforms_needed(p: Demand) -> int:
    """Open uniforms a month's demand uses: a count and a start per burst."""
    return 1 + p.max_bursts if p.shape == "bursty" else 0


def draw(u: jax.Array, p: Demand) -> BurstDraws | None:
    """From (uniforms_needed(p),) open uniforms; None for shapes with no randomness."""
    if p.shape != "bursty":
        return None
    return BurstDraws(u[0], u[1:])


def _diurnal(p: Demand) -> jax.Array:
    h = jnp.arange(HOURS, dtype=jnp.float32)
    return p.level * (1.0 + p.amplitude * jnp.cos(2.0 * jnp.pi * (h - p.peak_hour) / 24.0))


def profile(d: BurstDraws | None, p: Demand) -> jax.Array:
    """(730,) float32 tok/s hourly demand ``D_h``."""
    if p.shape == "flat":
        return jnp.full(HOURS, p.level, jnp.float32)
    if p.shape == "diurnal":
        return _diurnal(p)
    if p.shape == "weekly":
        day = jnp.arange(HOURS) // 24 % 7
        return _diurnal(p) * jnp.where(day >= 5, p.weekend_factor, 1.0)
    if p.shape == "bursty":
        n = poisson_capped(d.u_count, p.burst_rate, p.max_bursts)
        begin = d.u_begin * HOURS
        height = jnp.where(jnp.arange(p.max_bursts) < n, p.burst_height, 0.0)
        return p.level + per_hour(begin, begin + p.burst_hours, height)
    return jnp.asarray(p.trace, jnp.float32)
