"""The six seed stories of SPEC §3, by name."""

from __future__ import annotations

from typing import Callable

from .. import _validate as v
from .demand import Demand
from .eviction import Eviction
from .pool import Pool
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


_PRESETS: dict[str, Callable[[], Scenario]] = {
    "golden-idler": _golden_idler,
    "noise-evictor": _noise_evictor,
    "bargain-shortfall": _bargain_shortfall,
    # The fixes: one change each.
    "golden-idler-steady": lambda: _golden_idler().replace(runset="steady"),
    "noise-evictor-day": lambda: _noise_evictor().replace({"window.hours": "day", "eviction.share": 0.10}),
    "bargain-flagship": lambda: _bargain_shortfall().replace(pool="24 x flagship"),
}


def names() -> list[str]:
    """The preset names, verdicts first then their fixes."""
    return list(_PRESETS)


def get(name: str) -> Scenario:
    """A preset scenario by name."""
    v.choice("preset", name, _PRESETS)
    return _PRESETS[name]()
