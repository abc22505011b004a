"""The three buying stories of SPEC §4, by name; each fails a different check.

Their parameters come from the stories alone; what they report is whatever the
model gives. All three share one demand: a daily cycle of ±30% peaking at 14:00
(the fleet demand's default diurnal) and a forecast good to about ±15% (sigma 0.15).
"""

from __future__ import annotations

from typing import Callable

from .. import _validate as v
from ..fleet.demand import Demand
from .catalogue import rent_to_fill
from .plan import Procurement

DEMAND = Demand(shape="diurnal", amplitude=0.3, peak_hour=14.0)
SIGMA = 0.15


def used_chip_bargain() -> Procurement:
    """Cheap per card, expensive per token: a premium-70b product (5T tokens/month)
    owns the used A100s that carry its forecast and rents more used A100s for the
    peak. A used A100 is $1,400 for 0.45 of an H100, $3,111 per H100-equivalent."""
    forecast = 5e12
    cards = rent_to_fill("premium-70b", forecast, "a100-used")  # whole cards carrying the forecast
    return Procurement(model="premium-70b", forecast_tokens=forecast, sigma=SIGMA, demand=DEMAND,
                       owned={"a100-used": cards}, rent_cap={"a100-used": cards})


# $441M of owned B200 card-months at $2,900 each.
SHINY_CARDS = round(441e6 / 2900)  # 152,069


def shiny_chip_bet() -> Procurement:
    """A $441M commitment to B200s for demand that had not arrived. The demand that
    did arrive is the story's: 29% of what the commitment carries at rated rate
    (it runs about 71% idle), 0.29 × 152,069 × 1,680 tok/s × 2,628,000 s ≈ 195T
    tokens/month of premium-70b. Nothing rented; the API stays on for overflow."""
    return Procurement(model="premium-70b", forecast_tokens=195e12, sigma=SIGMA, demand=DEMAND,
                       owned={"b200": SHINY_CARDS})


def api_tax() -> Procurement:
    """The overflow meant to catch spikes swallows the month: a chat-8b product
    (10T tokens/month) owns H100s for its base load (the 70% trough of the daily
    cycle), rents nothing, and leaves everything above the trough to the API."""
    forecast = 10e12
    cards = rent_to_fill("chat-8b", (1 - DEMAND.amplitude) * forecast, "h100")
    return Procurement(model="chat-8b", forecast_tokens=forecast, sigma=SIGMA, demand=DEMAND,
                       owned={"h100": cards})


_PRESETS: dict[str, Callable[[], Procurement]] = {
    "used-chip-bargain": used_chip_bargain,
    "shiny-chip-bet": shiny_chip_bet,
    "api-tax": api_tax,
}


def names() -> list[str]:
    return list(_PRESETS)


def get(name: str) -> Procurement:
    """A buying preset by name."""
    v.choice("preset", name, _PRESETS)
    return _PRESETS[name]()
