"""mc: Monte Carlo answers to money questions about GPU inference fleets.

One fleet-month is a pure function of (key, scenario); ``simulate`` runs N of
them, month ``i`` on key ``fold_in(key(seed), i)``, and summarises the
distribution.
"""

from . import catalogue as catalogue
from . import mix as mix
from . import presets as presets
from . import procurement as procurement
from . import procurement_presets as procurement_presets
from . import serving as serving
from ._validate import ParamError as ParamError
from .checks import Checks as Checks
from .demand import Demand as Demand
from .dips import Dips as Dips
from .eviction import Eviction as Eviction
from .fleet import OUTPUTS as OUTPUTS
from .fleet import draw as draw
from .fleet import fleet_month as fleet_month
from .fleet import outcome as outcome
from .lottery import Lottery as Lottery
from .pool import BARGAIN as BARGAIN
from .pool import FLAGSHIP as FLAGSHIP
from .pool import CardClass as CardClass
from .pool import Pool as Pool
from .procurement import Procurement as Procurement
from .scenario import Scenario as Scenario
from .scenario import load as load_scenario
from .simulate import Result as Result
from .simulate import simulate as simulate
from .window import Window as Window

__version__ = "0.1.0"
