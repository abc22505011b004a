"""Wander (SPEC §1.4.1): each card's true speed drifts by an hourly AR(1) path."""

from __future__ import annotations

from .._fields import check_fields, declare
from .._pytree import pytree_dataclass


@pytree_dataclass
class Wander:
    """A card's true rate is ``r·q·(1 + u(h))``; ``u`` is constant within each hour of the
    clock and follows an AR(1) from hour to hour with stationary sd ``sd`` and
    correlation time ``hours`` (``ρ = exp(−1/hours)``), independent across cards.
    ``sd = 0`` (the default) is §1.4 exactly."""

    sd: float = declare(0.0, lo=0.0, hi=0.2, unit="share of true rate",
                        doc="stationary spread (1 sd) of a card's wander")
    hours: float = declare(168.0, lo=0.0, lo_open=True, hi=1e6, unit="h",
                           doc="correlation time of the wander (ρ = exp(−1 h/hours))")

    def __post_init__(self):
        check_fields(self, "wander")
