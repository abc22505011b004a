"""The fleet month (SPEC §1–§3, §6): a rented pool's month, billed and judged.

Data flows one way: ``lottery → dips → window → eviction → runset → demand →
accounting → checks``, composed by ``month.fleet_month(key, scenario)`` and run
by the engine (``simulation.simulate``). A scenario with an ``autoscaler``
section (``rounds.Autoscaler``) is SPEC §6's month instead,
``autoscaler.autoscaler_month``: the same functions round after round.
``presets`` holds the seed stories and the autoscaler's; ``policies`` the eviction
rules (SPEC §1.5), each a value with its fields, its JAX rule and its NumPy twin.
"""

from . import autoscaler as autoscaler
from . import policies as policies
from . import presets as presets
from .checks import Checks as Checks
from .demand import Demand as Demand
from .dips import Dips as Dips
from .eviction import Eviction as Eviction
from .lottery import Lottery as Lottery
from .month import OUTPUTS as OUTPUTS
from .month import Draws as Draws
from .month import draw as draw
from .month import fleet_month as fleet_month
from .month import outcome as outcome
from .month import schema as schema
from .pool import BARGAIN as BARGAIN
from .pool import FLAGSHIP as FLAGSHIP
from .pool import CardClass as CardClass
from .pool import Pool as Pool
from .rounds import Autoscaler as Autoscaler
from .scenario import Scenario as Scenario
from .scenario import field_names as field_names
from .simulation import Result as Result
from .simulation import model as model
from .simulation import simulate as simulate
from .swing import Swing as Swing
from .wander import Wander as Wander
from .window import Window as Window

__all__ = ["autoscaler", "policies", "presets", "Checks", "Demand", "Dips", "Eviction", "Lottery", "OUTPUTS", "Draws", "draw",
           "fleet_month", "outcome", "schema", "BARGAIN", "FLAGSHIP", "CardClass", "Pool", "Autoscaler",
           "Scenario", "field_names", "Result", "model", "simulate", "Swing", "Wander", "Window"]
