"""Buying the fleet (SPEC §4): own, rent or pay an API per token, for a month of demand.

``catalogue`` prices models and chips; ``plan`` is one mix against a forecast
(``Procurement``); ``month`` its month on the device; ``settle`` the money and the
engine run (``simulate``); ``presets`` the three buying stories; ``mix`` the
cheapest mix that passes; ``terms`` and ``losses`` owned cards that fail and spot
cards taken back.
"""

from . import mix as mix
from . import presets as presets
from .catalogue import CHIP_NAMES as CHIP_NAMES
from .catalogue import CHIPS as CHIPS
from .catalogue import MODELS as MODELS
from .catalogue import RENT_PREMIUM as RENT_PREMIUM
from .catalogue import BuyModel as BuyModel
from .catalogue import Chip as Chip
from .catalogue import api_bill as api_bill
from .catalogue import buy_model as buy_model
from .catalogue import card_rate as card_rate
from .catalogue import chip as chip
from .catalogue import fleet_tokens as fleet_tokens
from .catalogue import rent_to_fill as rent_to_fill
from .plan import BuyChecks as BuyChecks
from .plan import Procurement as Procurement
from .settle import COLUMNS as COLUMNS
from .settle import BuyResult as BuyResult
from .settle import default_chunk as default_chunk
from .settle import schema as schema
from .settle import settle as settle
from .settle import simulate as simulate
from .terms import Repairs as Repairs
from .terms import SpotMarket as SpotMarket

__all__ = ["mix", "presets", "Repairs", "SpotMarket", "CHIP_NAMES", "CHIPS", "MODELS", "RENT_PREMIUM", "BuyModel", "Chip", "api_bill",
           "buy_model", "card_rate", "chip", "fleet_tokens", "rent_to_fill", "BuyChecks", "Procurement",
           "COLUMNS", "BuyResult", "default_chunk", "schema", "settle", "simulate"]
