"""The six seed stories of SPEC §3 and the autoscaler's stories of SPEC §6, by name."""

from __future__ import annotations

from typing import Callable

from .. import _validate as v
from .demand import Demand
from .eviction import Eviction
from .lottery import Lottery
from .pool import Pool
from .rounds import Autoscaler
from .scenario import Scenario
from .window import Window


def _golden_idler() -> Scenario:
    return Scenario(pool=Pool.of(("flagship", 32)), window=Window(hours="week"),
                    eviction=Eviction(share=0.20), runset="all", demand=Demand(level=60_000))


def _noise_evictor() -> Scenario:
    return Scenario(pool=Pool.of(("flagship", 32)), window=Window(hours="hour"),
                    eviction=Eviction(share=0.375), runset="steady", demand=Demand(level=142_000))


def _bargain_shortfall() -> Scenario:
    return Scenario(pool=Pool.of(("bargain", 24)), window=Window(hours="week"),
                    eviction=Eviction(share=0.20), runset="steady", demand=Demand(level=90_000))


def _lemon_hunter() -> Scenario:
    # A tight pool (diurnal peak near what 32 cards serve) with lemons: daily
    # threshold eviction on a day's window, each evicted card replaced.
    return Scenario(pool=Pool.of(("flagship", 32)), window=Window(hours="day"),
                    eviction=Eviction(policy="threshold", theta=0.8), runset="peak",
                    demand=Demand(shape="diurnal", level=150_000, amplitude=0.3),
                    lottery=Lottery(lemon_rate=0.1), autoscaler=Autoscaler(period=24, replace=True))


_PRESETS: dict[str, Callable[[], Scenario]] = {
    "golden-idler": _golden_idler,
    "noise-evictor": _noise_evictor,
    "bargain-shortfall": _bargain_shortfall,
    # The fixes: one change each.
    "golden-idler-steady": lambda: _golden_idler().replace(runset="steady"),
    "noise-evictor-day": lambda: _noise_evictor().replace({"window.hours": "day", "eviction.share": 0.10}),
    "bargain-flagship": lambda: _bargain_shortfall().replace(pool="24 x flagship"),
    # SPEC §6, the autoscaler over a month: the lemon hunter, then one change each.
    "lemon-hunter": _lemon_hunter,
    "dip-chaser": lambda: _lemon_hunter().replace({"window.hours": "hour"}),
    "steady-hand": lambda: _lemon_hunter().replace({"window.hours": "hour", "autoscaler.strikes": 3}),
}
SEED_STORIES = ("golden-idler", "noise-evictor", "bargain-shortfall", "golden-idler-steady", "noise-evictor-day",
                "bargain-flagship")


def names() -> list[str]:
    """The preset names: SPEC §3's verdicts, their fixes, then SPEC §6's stories."""
    return list(_PRESETS)


def get(name: str) -> Scenario:
    """A preset scenario by name."""
    v.choice("preset", name, _PRESETS)
    return _PRESETS[name]()
