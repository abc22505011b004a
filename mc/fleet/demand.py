"""Hourly demand profiles (SPEC §1.7)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from .. import _validate as v
from ..kernels import per_hour
from ..units import HOURS
from .._pytree import pytree_dataclass
from ..kernels import poisson_capped

SHAPES = ("flat", "diurnal", "weekly", "bursty", "trace")


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


@pytree_dataclass(static=("shape", "max_bursts"))
class Demand:
    """Hourly demand ``D_h`` in tok/s.

    - ``flat``: ``level``.
    - ``diurnal``: ``level·(1 + amplitude·cos(2π(h − peak_hour)/24))``.
    - ``weekly``: diurnal, times ``weekend_factor`` on days 5 and 6 of each week.
    - ``bursty``: ``level`` plus ``Poisson(burst_rate)`` bursts a month (at most
      ``max_bursts``), each ``burst_height`` tok/s for ``burst_hours`` from a
      uniform start, drawn per fleet-month.
    - ``trace``: ``trace``, 730 hourly values.
    """

    shape: str = "flat"
    level: float = 60000.0
    amplitude: float = 0.3
    peak_hour: float = 14.0
    weekend_factor: float = 0.6
    burst_rate: float = 4.0
    burst_height: float = 30000.0
    burst_hours: float = 6.0
    max_bursts: int = 16
    trace: np.ndarray | None = None

    def __post_init__(self):
        v.choice("demand.shape", self.shape, SHAPES)
        object.__setattr__(self, "level", v.nonneg("demand.level", self.level))
        object.__setattr__(self, "amplitude", v.number("demand.amplitude", self.amplitude, lo=0.0, hi=1.0))
        object.__setattr__(self, "peak_hour", v.number("demand.peak_hour", self.peak_hour, lo=0.0, hi=24.0))
        object.__setattr__(self, "weekend_factor", v.nonneg("demand.weekend_factor", self.weekend_factor))
        object.__setattr__(self, "burst_rate", v.nonneg("demand.burst_rate", self.burst_rate))
        object.__setattr__(self, "burst_height", v.nonneg("demand.burst_height", self.burst_height))
        object.__setattr__(self, "burst_hours", v.positive("demand.burst_hours", self.burst_hours))
        object.__setattr__(self, "max_bursts", v.count("demand.max_bursts", self.max_bursts, lo=1, hi=1024))
        if self.shape == "trace":
            if self.trace is None:
                v.fail("demand.trace", None, "must be given (730 hourly values) when shape is 'trace'")
            object.__setattr__(self, "trace", check_trace(self.trace))
        elif self.trace is not None:
            v.fail("demand.trace", "<values>", f"is only used with shape 'trace', not {self.shape!r}")

    def peak(self) -> tuple[float, str]:
        """An upper bound on ``D_h`` (tok/s, float64) and the fields it comes from."""
        top = self.level * (1.0 + self.amplitude)
        if self.shape == "flat":
            return self.level, "demand.level"
        if self.shape == "diurnal":
            return top, "demand.level and demand.amplitude"
        if self.shape == "weekly":
            return top * max(1.0, self.weekend_factor), "demand.level, amplitude and weekend_factor"
        if self.shape == "bursty":  # every burst on one hour at worst
            return self.level + self.max_bursts * self.burst_height, "demand.level, max_bursts and burst_height"
        return float(np.max(self.trace)), "demand.trace"

    @classmethod
    def from_fields(cls, fields: dict, given: dict) -> "Demand":
        """From merged plain fields; a base's trace is dropped when the shape given
        is not ``trace`` (a trace given with another shape is an error)."""
        for name, table in (("fields", fields), ("given", given)):
            v.instance(name, table, Mapping, "a dict of demand fields")
        known = [f.name for f in dataclasses.fields(cls)]
        for key in fields:
            if key not in known:
                v.fail(f"demand.{key}", fields[key], "is not a field of demand; known: " + ", ".join(known))
        if not (isinstance(fields.get("shape"), str) and fields["shape"] == "trace") and "trace" not in given:
            fields = {k: x for k, x in fields.items() if k != "trace"}
        return cls(**fields)


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
