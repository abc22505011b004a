"""A scenario's cards behind a router (SPEC §9): the speed factors of a §9 pool drawn
from the scenario's quality lottery (§1.2), lemons included, per replication.

A card's factor is its quality ``q`` (its true rate over the rated rate, the
rate §5's arithmetic gives the card). ``lemons = "median"`` draws the same
tickets but gives every lemon the median card's quality, ``clip(mean, lo, hi)``:
the same pool with its lemons replaced, on the same draws.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass

import jax
import jax.numpy as jnp

from .. import _validate as v
from ..kernels.random import uniforms
from .lottery import UNIFORMS, Lottery, draw, lemon, quality

LEMONS = ("drawn", "median")


@dataclass(frozen=True)
class Speeds:
    """A hashable draw of ``cards`` speed factors from a lottery: called as
    ``speeds(key, cards) -> (cards,) float32`` (``mc.serving.routed.RoutedPool``'s
    ``lottery``)."""

    lottery: tuple  # Lottery's fields, in order
    lemons: str = "drawn"

    def __post_init__(self):
        v.choice("lemons", self.lemons, LEMONS)

    @classmethod
    def of(cls, lottery: Lottery, lemons: str = "drawn") -> "Speeds":
        v.instance("lottery", lottery, Lottery, "a Lottery")
        return cls(tuple(float(x) for x in astuple(lottery)), lemons)

    def __call__(self, key: jax.Array, cards: int) -> jax.Array:
        p = Lottery(*self.lottery)
        d = draw(uniforms(key, (cards, UNIFORMS)))
        q = quality(d, p)
        if self.lemons == "median":
            q = jnp.where(lemon(d, p), jnp.float32(min(max(p.mean, p.lo), p.hi)), q)
        return q.astype(jnp.float32)

    def __repr__(self) -> str:
        p = Lottery(*self.lottery)
        return (f"lottery q ~ Normal({p.mean:g}, {p.sd:g}^2) clipped to [{p.lo:g}, {p.hi:g}], lemons "
                f"{p.lemon_rate:g} at x{p.lemon_factor:g}" + (" replaced by median cards" if self.lemons == "median"
                                                              else ""))


def scenario_speeds(scenario, lemons: str = "drawn") -> Speeds:
    """The speeds of a scenario's cards. Refused (one line): a pool of several card
    classes (a §9 pool is one §5 configuration; route one class at a time)."""
    classes = scenario.pool.classes
    if len(classes) != 1:
        v.fail("scenario", " + ".join(c.name for c in classes),
               "has several card classes; a routed pool is one class: give a one-class scenario or --speeds")
    return Speeds.of(scenario.lottery, lemons)


__all__ = ["LEMONS", "Speeds", "scenario_speeds"]
