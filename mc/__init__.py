"""mc: Monte Carlo answers to money questions about GPU inference fleets.

One fleet-month is a pure function of (key, scenario); ``simulate`` runs N of
them, month ``i`` on key ``fold_in(key(seed), i)``, and summarises the
distribution.

Packages, lowest layer first: ``kernels`` (exact numerics), ``engine`` (keys,
chunks, devices, streamed summaries), ``serving`` (SPEC §5), ``fleet`` (§1–§3, §6),
``buy`` (§4), ``files`` (inputs), ``studies`` (sweeps, calibration, bench,
reports), ``cli``.
"""

from . import buy as buy
from . import engine as engine
from . import files as files
from . import fleet as fleet
from . import kernels as kernels
from . import serving as serving
from . import studies as studies
from ._validate import ParamError as ParamError
from ._version import __version__ as __version__
from .buy import Procurement as Procurement
from .buy import mix as mix
from .fleet import BARGAIN as BARGAIN
from .fleet import Autoscaler as Autoscaler
from .fleet import FLAGSHIP as FLAGSHIP
from .fleet import OUTPUTS as OUTPUTS
from .fleet import CardClass as CardClass
from .fleet import Checks as Checks
from .fleet import Demand as Demand
from .fleet import Dips as Dips
from .fleet import Eviction as Eviction
from .fleet import Lottery as Lottery
from .fleet import Pool as Pool
from .fleet import Result as Result
from .fleet import Scenario as Scenario
from .fleet import Swing as Swing
from .fleet import Wander as Wander
from .fleet import Window as Window
from .fleet import draw as draw
from .fleet import fleet_month as fleet_month
from .fleet import outcome as outcome
from .fleet import presets as presets
from .fleet import simulate as simulate
from .files import load_scenario as load_scenario
from .serving import Serving as Serving
from .serving import catalogue as catalogue
from .serving import simulate_latency as simulate_latency
from .serving import slo_rate as slo_rate
from .studies import numpy_month as numpy_month


# Earlier names of the buying-the-fleet modules, kept working.
procurement = buy
procurement_presets = buy.presets

__all__ = ["buy", "engine", "files", "fleet", "kernels", "serving", "studies", "ParamError", "__version__",
           "Procurement", "mix", "Autoscaler", "BARGAIN", "FLAGSHIP", "OUTPUTS", "CardClass", "Checks", "Demand", "Dips",
           "Eviction", "Lottery", "Pool", "Result", "Scenario", "Swing", "Wander", "Window", "draw", "fleet_month", "outcome",
           "presets", "simulate", "load_scenario", "Serving", "catalogue", "simulate_latency", "slo_rate", "numpy_month", "procurement",
           "procurement_presets"]
