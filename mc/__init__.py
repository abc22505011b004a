"""mc: Monte Carlo answers to money questions about GPU inference fleets.

One fleet-month is a pure function of (key, scenario); ``simulate`` runs N of
them, month ``i`` on key ``fold_in(key(seed), i)``, and summarises the
distribution.

``__all__`` is what a user calls: loading a scenario and its sections, running it
(``simulate``, one month with ``draw``/``fleet_month``/``outcome``), the studies
over it (``sweep``, ``calibrate``, ``sensitivity``), buying a fleet (``buy``,
``Procurement``, ``mix``), a card and its latency (``card``, ``Serving``,
``simulate_latency``, ``slo_rate``), telemetry emitted and fitted (``emit``,
``fit``) and eviction rules of one's own (``rule``, ``Policy``, ``declare``).

Packages, lowest layer first: ``kernels`` (exact numerics), ``engine`` (keys,
chunks, devices, streamed summaries), ``serving`` (SPEC §5), ``fleet`` (§1–§3, §6),
``buy`` (§4), ``files`` (inputs), ``telemetry`` (§8), ``studies`` (sweeps,
calibration, bench, presets), ``cli``. ``kernels``, ``engine`` and the studies'
NumPy month (``mc.studies.numpy_month``) are internals, reachable by their
packages but not part of this face.
"""

from . import _launch

_launch.starting()  # the mc command: a Ctrl-C while it imports is exit 130 and one line

from . import buy as buy  # noqa: E402
from . import engine as engine
from . import files as files
from . import fleet as fleet
from . import kernels as kernels
from . import serving as serving
from . import studies as studies
from . import telemetry as telemetry
from ._fields import declare as declare
from ._validate import ParamError as ParamError
from ._version import __version__ as __version__
from .buy import Procurement as Procurement
from .buy import mix as mix
from .files import load_procurement as load_procurement
from .files import load_scenario as load_scenario
from .fleet import BARGAIN as BARGAIN
from .fleet import FLAGSHIP as FLAGSHIP
from .fleet import OUTPUTS as OUTPUTS
from .fleet import Autoscaler as Autoscaler
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
from .fleet import policies as policies
from .fleet import presets as presets
from .fleet import simulate as simulate
from .fleet.policies import Policy as Policy
from .fleet.policies import rule as rule
from .serving import Serving as Serving
from .serving import card as card
from .serving import catalogue as catalogue
from .serving import simulate_latency as simulate_latency
from .serving import slo_rate as slo_rate
from .studies import Calibration as Calibration
from .studies import Sensitivity as Sensitivity
from .studies import Sweep as Sweep
from .studies import sweep as sweep
from .studies.calibrate import calibrate as calibrate
from .studies.sensitivity import sensitivity as sensitivity
from .telemetry import emit as emit
from .telemetry import fit as fit

# Names this package once had: each is a one-line error naming what replaced it.
_RENAMED = {"procurement": "mc.buy", "procurement_presets": "mc.buy.presets", "numpy_month": "mc.studies.numpy_month"}


def __getattr__(name: str):
    if name in _RENAMED:
        raise AttributeError(f"mc.{name} is now {_RENAMED[name]}")
    raise AttributeError(f"module 'mc' has no attribute {name!r}")


__all__ = [
    "ParamError", "__version__",
    # scenarios: loading, the sections, the presets
    "load_scenario", "presets", "Scenario", "Window", "Dips", "Lottery", "Demand", "Pool", "CardClass", "FLAGSHIP",
    "BARGAIN", "Eviction", "Checks", "Autoscaler", "Wander", "Swing",
    # running one: N months, or one month's draws, month and outcome
    "simulate", "Result", "OUTPUTS", "draw", "fleet_month", "outcome",
    # studies over it
    "studies", "sweep", "Sweep", "calibrate", "Calibration", "sensitivity", "Sensitivity",
    # buying a fleet
    "buy", "load_procurement", "Procurement", "mix",
    # a card and its latency
    "serving", "card", "catalogue", "Serving", "simulate_latency", "slo_rate",
    # telemetry, emitted and fitted
    "telemetry", "emit", "fit",
    # eviction rules of one's own
    "policies", "rule", "Policy", "declare",
    # the inputs and the chapters' packages
    "files", "fleet",
]
