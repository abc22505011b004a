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

import importlib

from . import _launch

_launch.starting()  # the mc command: a Ctrl-C while it imports is exit 130 and one line

from ._validate import ParamError as ParamError  # noqa: E402
from ._version import __version__ as __version__

# What each public name is, imported when first asked for (``mc.simulate``, ``from mc
# import card``), so ``import mc`` and the command line start without jax, NumPy and
# pandas until a name that needs them is used (``mc --help`` in a tenth of a second).
_PACKAGES = ("buy", "engine", "files", "fleet", "kernels", "serving", "studies", "telemetry")
_NAMES = {
    **dict.fromkeys(("declare",), "mc._fields"),
    **dict.fromkeys(("Procurement", "mix"), "mc.buy"),
    **dict.fromkeys(("load_procurement", "load_scenario"), "mc.files"),
    **dict.fromkeys(("BARGAIN", "FLAGSHIP", "OUTPUTS", "Autoscaler", "CardClass", "Checks", "Demand", "Dips",
                     "Eviction", "Lottery", "Pool", "Result", "Scenario", "Swing", "Wander", "Window", "draw",
                     "fleet_month", "outcome", "policies", "presets", "simulate"), "mc.fleet"),
    **dict.fromkeys(("Policy", "rule"), "mc.fleet.policies"),
    **dict.fromkeys(("Serving", "card", "catalogue", "simulate_latency", "slo_rate"), "mc.serving"),
    **dict.fromkeys(("Calibration", "Sensitivity", "Sweep", "sweep"), "mc.studies"),
    **dict.fromkeys(("calibrate",), "mc.studies.calibrate"),
    **dict.fromkeys(("sensitivity",), "mc.studies.sensitivity"),
    **dict.fromkeys(("emit", "fit"), "mc.telemetry"),
}

# Names this package once had: each is a one-line error naming what replaced it.
_RENAMED = {"procurement": "mc.buy", "procurement_presets": "mc.buy.presets", "numpy_month": "mc.studies.numpy_month"}


def __getattr__(name: str):
    if name in _PACKAGES:
        return importlib.import_module(f"mc.{name}")  # Python sets it on the package as it loads
    if name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name]), name)
        globals()[name] = value  # asked once
        return value
    if name in _RENAMED:
        raise AttributeError(f"mc.{name} is now {_RENAMED[name]}")
    raise AttributeError(f"module 'mc' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PACKAGES) | set(_NAMES))


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
