"""How a fleet's monitoring samples a card (SPEC §8): every ``Δ`` over ``T`` hours.

A sample at time ``τ`` reports the card's mean rate over the ``Δ`` hours before it,
so card telemetry over ``[0, T)`` is ``floor(T/Δ)`` samples at ``τ_j = (j + 1)·Δ``,
``j = 0..n−1``. The card lives whole months of 730 hours from ``t = 0``; dips are
drawn month by month (SPEC §1.3 with no window before the month), so a span of
several months keeps the dip rate whatever the cap per month.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import _validate as v
from ..units import HOURS

# Samples per card: positions on the sample grid are float32 (exact integers up
# to 2**24), and one card's samples are one device array.
MAX_SAMPLES = 2**24
MAX_HOURS = 1e6
MINUTES = 60.0  # per hour


@dataclass(frozen=True)
class Sampling:
    """A sample every ``every`` minutes over ``hours`` hours (``T``), from ``t = 0``."""

    every: float = 5.0  # minutes, Δ
    hours: float = float(HOURS)  # T

    def __post_init__(self):
        every = v.number("every", self.every, lo=0.0, lo_open=True, hi=MAX_HOURS * MINUTES)
        hours = v.number("hours", self.hours, lo=0.0, lo_open=True, hi=MAX_HOURS)
        object.__setattr__(self, "every", float(every))
        object.__setattr__(self, "hours", float(hours))
        if self.samples < 1:
            v.fail("every", every, f"must be at most the span of {hours:g} hours ({hours * MINUTES:g} minutes): "
                   "no sample would be taken")
        if self.samples > MAX_SAMPLES:
            v.fail("hours", hours, f"holds {self.samples:,} samples a card at every={every:g} minutes, above the "
                   f"{MAX_SAMPLES:,} one card may hold (sample less often or over fewer hours)")

    @property
    def delta(self) -> float:
        """``Δ``, hours between samples (float64)."""
        return self.every / MINUTES

    @property
    def samples(self) -> int:
        """Samples per card, ``floor(T/Δ)`` (a ratio within 1e-9 of a whole number counts as it)."""
        return int(math.floor(self.hours * MINUTES / self.every + 1e-9))

    @property
    def months(self) -> int:
        """Months of 730 h whose dips the samples can see: ``ceil(n·Δ / 730)``."""
        return max(1, int(math.ceil(self.samples * self.delta / HOURS - 1e-9)))

    @property
    def span(self) -> float:
        """Hours the samples cover, ``n·Δ`` (``T`` when ``Δ`` divides it)."""
        return self.samples * self.delta

    def times(self) -> np.ndarray:
        """(samples,) float64 hours: each sample's time ``τ_j = (j + 1)·Δ``, the end of
        the ``Δ`` it averages."""
        return np.arange(1, self.samples + 1, dtype=np.float64) * self.delta

    def sigma(self, sigma_hour: float) -> float:
        """One sample's relative error ``σ(Δ) = sigma_hour · sqrt(1 h / Δ)`` (float64)."""
        return float(sigma_hour) * math.sqrt(1.0 / self.delta)
