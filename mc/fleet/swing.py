"""Fleet-wide swing (SPEC §1.4.1): every card's rate moves together, by the hour of day
and by one shared AR(1) path."""

from __future__ import annotations

from .._fields import check_fields, declare
from .._pytree import pytree_dataclass


@pytree_dataclass
class Swing:
    """Every card's rate is multiplied by ``1 + c(h)``, ``c(h) = −diurnal·cos(2π(clock(h) −
    hot_hour)/24) + v(h)``, ``clock(h) = (start_hour + h) mod 24``; ``v`` is one AR(1) path
    shared by all cards (stationary sd ``sd``, correlation time ``hours``). All zero (the
    default) is §1.4 exactly."""

    diurnal: float = declare(0.0, lo=0.0, hi=0.5, unit="share of true rate",
                             doc="half the day's peak-to-trough swing, slowest at hot_hour")
    hot_hour: float = declare(15.0, lo=0.0, hi=24.0, hi_open=True, unit="hour of day",
                              doc="clock hour the fleet is slowest (mid-day heat)")
    start_hour: float = declare(0.0, lo=0.0, hi=24.0, hi_open=True, unit="hour of day",
                                doc="clock hour at which the month (and the §1 decision) starts")
    sd: float = declare(0.0, lo=0.0, hi=0.2, unit="share of true rate",
                        doc="stationary spread (1 sd) of the shared, non-diurnal swing")
    hours: float = declare(24.0, lo=0.0, lo_open=True, hi=1e6, unit="h",
                           doc="correlation time of the shared swing")

    def __post_init__(self):
        check_fields(self, "swing")
