"""Every public callable of the Python API, given a wrong type in each argument.

The project's rule: an input is validated where it enters, so a wrong type is a
``TypeError`` or a ``ValueError`` (``mc.ParamError``) whose one-line message names
the argument or the field, never an ``AttributeError``, ``IndexError``,
``KeyError``, "unhashable type" or a numpy error from deep inside.

The walk covers the ``__all__`` of ``mc``, ``mc.buy``, ``mc.fleet``, ``mc.serving``
and ``mc.studies`` (and the public functions of the modules named in ``EXPAND``).
Every public callable that takes arguments is either walked (``CASES``: good
values for its other arguments) or skipped with a reason (``SKIP``);
``test_every_public_callable_is_walked_or_skipped`` fails on a new public name
until it is listed, so it inherits the check. An argument known to fail would be a
strict expected failure (``ELSEWHERE``, empty today), so its fix shows up. Then every field of the plain-data forms (a scenario's dotted
fields, a procurement's, a pool entry's) gets the same values. Calls that run the
engine use tiny sizes (16 months, chunk 16; 16 requests, 2 replications).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import re
from types import ModuleType
from typing import Any, Callable

import jax
import numpy as np
import pytest

import mc

pytestmark = pytest.mark.slow

HOSTILE = {"None": None, "int": 5, "float": 1.5, "str": "x", "bytes": b"x", "list": [1], "dict": {"a": 1},
           "object": object(), "True": True, "nan": float("nan"), "complex": complex(1, 1),
           "array": np.zeros((2, 2))}

# The namespaces walked, and modules in them whose own public functions are walked too.
NAMESPACES = ("mc", "mc.buy", "mc.fleet", "mc.serving", "mc.studies")
EXPAND = ("mc.fleet.presets", "mc.buy.presets", "mc.serving.catalogue", "mc.serving.latency", "mc.serving.slo", "mc.serving.traffic",
          "mc.buy.mix")


# -- good values ---------------------------------------------------------------------------

@functools.cache
def scenario() -> mc.Scenario:
    return mc.presets.get("golden-idler").replace(pool="4 x flagship")


@functools.cache
def key():
    return jax.random.key(0)


@functools.cache
def draws():
    return mc.draw(key(), scenario())


@functools.cache
def plan() -> mc.Procurement:
    return mc.Procurement(model="chat-8b", forecast_tokens=1e9, owned={"h100": 1})


@functools.cache
def serving() -> mc.Serving:
    return mc.Serving("llama-3-8b", "h100", n=16, warmup=0)


# -- the table -----------------------------------------------------------------------------

@dataclasses.dataclass
class Case:
    """``good``: values for the arguments not under test (those left out take their
    defaults; ``*name`` is a var-positional's list). ``names``: other names an error
    about an argument may use (a field name). ``fixed``: arguments not walked, with
    the reason. ``allow``: other exceptions an argument may raise, with the reason
    (e.g. a missing file). ``fn``: the callable when it is not the public object
    itself (an instance method)."""

    good: Callable[[], dict] = dict
    names: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    fixed: dict[str, str] = dataclasses.field(default_factory=dict)
    allow: dict[str, tuple[type, ...]] = dataclasses.field(default_factory=dict)
    fn: Callable[[], Callable] | None = None


SIM = dict(n=16, chunk=16)
CASES: dict[str, Case] = {
    # mc
    "mc.Procurement": Case(),
    "mc.Procurement.from_dict": Case(lambda: {"data": {}}),
    "mc.Procurement.replace": Case(lambda: {}, fn=lambda: plan().replace),
    "mc.Autoscaler": Case(),
    "mc.CardClass": Case(lambda: {"name": "c", "rated": 100.0, "price": 10.0}),
    "mc.CardClass.from_serving": Case(lambda: {"model": "8b", "gpu": "h100", "price": 10.0, "batch": 4}),
    "mc.Checks": Case(),
    "mc.Demand": Case(),
    "mc.Demand.from_fields": Case(lambda: {"fields": {}, "given": {}}, names={"fields": ("demand",),
                                                                             "given": ("demand",)}),
    "mc.Dips": Case(),
    "mc.Eviction": Case(),
    "mc.Eviction.from_fields": Case(lambda: {"merged": {}, "given": {}}, names={"merged": ("eviction",),
                                                                             "given": ("eviction",)}),
    "mc.Lottery": Case(names={"lo": ("lottery.hi",)}),  # lo above the default hi: hi is out of range
    "mc.Window": Case(),
    "mc.Wander": Case(),
    "mc.Swing": Case(),
    "mc.Pool": Case(lambda: {"groups": ((mc.FLAGSHIP, 2),)}, names={"groups": ("pool",)}),
    "mc.Pool.of": Case(lambda: {"*groups": [("flagship", 2)]}, names={"groups": ("pool",)}),
    "mc.Scenario": Case(lambda: {"pool": scenario().pool}),
    "mc.Scenario.from_dict": Case(lambda: {"data": {"pool": "4 x flagship"}}),
    "mc.Scenario.replace": Case(lambda: {"updates": {}}, fn=lambda: scenario().replace),
    "mc.draw": Case(lambda: {"key": key(), "sc": scenario()}),
    "mc.fleet_month": Case(lambda: {"key": key(), "sc": scenario()}),
    "mc.outcome": Case(lambda: {"d": draws(), "sc": scenario()}),
    "mc.simulate": Case(lambda: {"scenario": scenario(), **SIM}),
    "mc.load_scenario": Case(lambda: {"path": "s.toml"},  # written in the test's folder
                             allow={"path": (FileNotFoundError,)}),  # documented: a missing file
    "mc.Serving": Case(lambda: {"model": "llama-3-8b", "gpu": "h100", "n": 16, "warmup": 0}),
    "mc.Serving.params": Case(lambda: {"rate": 5.0}, fn=lambda: serving().params),
    "mc.simulate_latency": Case(lambda: {"s": serving(), "rate": 5.0, "replications": 2, "chunk": 2}),
    # A low percentile meets the SLO at every rate: the search's error names slo_ttft.
    "mc.slo_rate": Case(lambda: {"s": serving(), "slo_ttft": 1.0, "replications": 2, "rel_tol": 1.0, "chunk": 2},
                        names={"percentile": ("slo_ttft",)}),
    "mc.fleet.presets.get": Case(lambda: {"name": "golden-idler"}, names={"name": ("preset",)}),
    "mc.serving.catalogue.model": Case(lambda: {"name": "8b"}, names={"name": ("model",)}),
    "mc.serving.catalogue.gpu": Case(lambda: {"name": "h100"}, names={"name": ("gpu",)}),
    # mc.buy
    "mc.buy.BuyModel": Case(lambda: {"name": "m", "h100_rate": 100.0, "api_price": 1.0}),
    "mc.buy.Chip": Case(lambda: {"name": "c", "ratio": 1.0, "price": 100.0}),
    "mc.buy.BuyChecks": Case(),
    "mc.buy.Repairs": Case(),
    "mc.buy.SpotMarket": Case(),
    "mc.buy.api_bill": Case(lambda: {"model": "chat-8b", "tokens": 1e6}),
    "mc.buy.buy_model": Case(lambda: {"model": "chat-8b"}),
    "mc.buy.card_rate": Case(lambda: {"model": "chat-8b", "chip_": "h100"}, names={"chip_": ("chip",)}),
    "mc.buy.chip": Case(lambda: {"name": "h100"}, names={"name": ("chip",)}),
    "mc.buy.fleet_tokens": Case(lambda: {"model": "chat-8b", "cards": {"h100": 2}}),
    "mc.buy.rent_to_fill": Case(lambda: {"model": "chat-8b", "shortfall_tokens": 1e12, "chip_": "h100"},
                                names={"chip_": ("chip",)}),
    "mc.buy.default_chunk": Case(lambda: {"p": plan()}),
    "mc.buy.schema": Case(lambda: {"p": plan()}),
    "mc.buy.simulate": Case(lambda: {"p": plan(), **SIM}),
    "mc.buy.presets.get": Case(lambda: {"name": "api-tax"}, names={"name": ("preset",)}),
    "mc.buy.mix.candidates": Case(lambda: {"base": plan(), "owned_chips": ("h100",), "rent_chips": ("h100",),
                                           "owned_fractions": (1.0,), "rent_fractions": (0.0,)},
                                  names={"owned_chips": ("chip",), "rent_chips": ("chip",)}),
    "mc.buy.mix.optimise": Case(lambda: {"base": plan(), "n": 16, "owned_chips": ("h100",), "rent_chips": ("h100",),
                                         "owned_fractions": (1.0,), "rent_fractions": (0.0,)}),
    "mc.buy.mix.evaluate": Case(lambda: {"plans": [plan()], "n": 16}),
    # mc.fleet: the unchecked forms of mc.draw, mc.fleet_month, mc.outcome
    "mc.fleet.draw": Case(lambda: {"key": key(), "sc": scenario()}),
    "mc.fleet.fleet_month": Case(lambda: {"key": key(), "sc": scenario()}),
    "mc.fleet.outcome": Case(lambda: {"d": draws(), "sc": scenario()}),
    "mc.fleet.schema": Case(lambda: {"sc": scenario()}),
    "mc.fleet.model": Case(lambda: {"scenario": scenario()}),
    # mc.serving
    "mc.serving.card": Case(lambda: {"model": "8b", "gpu": "h100"},
                            names={"weight_bytes_per_param": ("weight_bytes",),
                                   "kv_bytes_per_element": ("kv_bytes",)}),
    "mc.serving.slo.check_slo": Case(lambda: {"slo_ttft": 1.0}),
    "mc.serving.latency.check_replications": Case(lambda: {"s": serving(), "replications": 2}),
    "mc.serving.RequestLog.of": Case(lambda: {"time": [0.0, 1.0], "prompt": [1, 2], "answer": [1, 2]}),
    "mc.serving.traffic.check_block": Case(lambda: {"block": 1.0, "log": mc.serving.RequestLog.of([0, 2], [1, 1], [1, 1])}),
    "mc.serving.latency.default_chunk": Case(lambda: {"s": serving()}),
    "mc.serving.latency.short_of_seats": Case(lambda: {"s": serving(), "cards": 1}),
    "mc.serving.latency.check_seats": Case(lambda: {"s": mc.Serving("llama-3-8b", "h100", n=64, warmup=16),
                                                    "prefix": "q.", "cards": 1}),
    "mc.serving.latency.seats_note": Case(lambda: {"s": serving(), "cards": 1}),
    "mc.serving.slo.rated_tok_s": Case(lambda: {"s": serving(), "rate": 2.0}),
    # mc.studies
    "mc.studies.Sweep": Case(lambda: {"base": scenario(), "grid": {"window.hours": (1, 24)}, "n": 16}),
    "mc.studies.Sweep.from_dict": Case(lambda: {"data": {"preset": "golden-idler", "grid": {"window.hours": [1]}}},
                                       names={"data": ("sweep",)}),
}

RECORD = "an output record the library builds (a result or a catalogue entry), not an input"
DEVICE = "a device function or record on values already validated by the constructors walked here"
FORMULA = ("a SPEC §5 formula over plain numbers or NumPy arrays, unvalidated by design (its module says so); "
           "mc.serving.card validates and calls it")
STUDY = "a studies module: the CLI's sweep/calibration/sensitivity/bench machinery (mc/studies), not walked here"
SKIP: dict[str, str] = {
    "mc.files": "file readers (mc/files.py); load_scenario is walked, the rest take paths the CLI checks",
    "mc.ParamError": "the exception class itself",
    "mc.Result": RECORD,
    "mc.buy.BuyResult": RECORD,
    "mc.buy.settle": "settles the device's token flows of a validated Procurement (mc.buy.simulate's derive step)",
    "mc.buy.mix.MixResult": RECORD,
    "mc.buy.mix.candidates_month": DEVICE,
    "mc.fleet.autoscaler": "SPEC §6's device month on a validated Scenario (run by mc.simulate)",
    "mc.fleet.policies": "the eviction rules and their registry: each rule's fields are scenario fields, walked "
                         "through mc.Eviction and Scenario.replace (test_every_scenario_field_names_itself)",
    "mc.fleet.Draws": DEVICE,
    "mc.serving.Card": RECORD,
    "mc.serving.LatencyResult": RECORD,
    "mc.serving.SLORating": RECORD,
    "mc.serving.RequestLog": "a request log's record of validated arrays; RequestLog.of (walked) builds one",
    "mc.serving.catalogue.ModelSpec": RECORD,
    "mc.serving.catalogue.GPUSpec": RECORD,
    "mc.serving.queue": "Serving's module: Serving (walked as mc.Serving) and the device Params it makes",
    "mc.serving.arrivals": DEVICE,
    "mc.serving.loop": DEVICE,
    "mc.serving.routedloop": DEVICE,
    "mc.serving.routers": "the routers' registry (SPEC §9): each router a device function the pool's loop calls",
    "mc.serving.routed": "the pool's module (SPEC §9): RoutedPool and simulate, walked through mc latency --cards by "
                         "tests/cli/test_routed_cli.py",
    "mc.serving.slo.card_rating": "mc card's SLO rating of a Card that mc.serving.card validated (walked as mc.serving.card; "
                                  "tests/cli/test_card_slo.py)",
    "mc.serving.slo.format_card_rating": "the text of card_rating's dict (tests/cli/test_card_slo.py)",
    "mc.serving.slo.card_queue": "the queue card_rating searches for a Card that mc.serving.card validated (walked as "
                                 "mc.serving.card; tests/serving/test_ratings.py)",
    "mc.serving.latency.request_figures": DEVICE,
    "mc.serving.latency.requests": DEVICE,
    "mc.serving.latency.replication": DEVICE,
    "mc.serving.allreduce_seconds": FORMULA,
    "mc.serving.kv_bytes_per_token": FORMULA,
    "mc.serving.prefill_seconds": FORMULA,
    "mc.serving.seats": FORMULA,
    "mc.serving.step_seconds": FORMULA,
    "mc.serving.tokens_per_dollar": FORMULA,
    "mc.serving.weight_bytes": FORMULA,
    "mc.studies.bench": STUDY,
    "mc.studies.calibrate": STUDY,
    "mc.studies.figures": STUDY,
    "mc.studies.grid": STUDY,
    "mc.studies.manifest": STUDY,
    "mc.studies.where": STUDY,
    "mc.studies.numpy_month": STUDY,
    "mc.studies.presets": STUDY,
    "mc.studies.sensitivity": STUDY,
    "mc.studies.sweep": STUDY,
    "mc.studies.Calibration": RECORD,
    "mc.calibrate": STUDY,
    "mc.sensitivity": STUDY,
    "mc.load_procurement": "a file reader, as mc.files's: it takes a path the CLI checks",
    "mc.telemetry": "the telemetry package (SPEC §8): its readers are fuzzed by tests/telemetry/test_fit_inputs.py",
    "mc.emit": "SPEC §8's telemetry of a Scenario walked here, run through the engine with a validated Sampling",
    "mc.fit": "fits a Series that mc.telemetry.read and from_frame validate (tests/telemetry/test_fit_inputs.py)",
    "mc.rule": "a class decorator for a rule of one's own; what it refuses is tested in tests/fleet/test_policies.py",
    "mc.declare": "a field's declaration, written in source: its default and grid are checked where it is made",
    "mc.studies.Sensitivity": RECORD,
}

# Known failures: (path, argument) -> reason, each a strict expected failure, so a fix
# shows up as an unexpected pass and its entry is removed. None today.
ELSEWHERE: dict[tuple[str, str], str] = {}


# -- the public names ----------------------------------------------------------------------

def _members(path: str, obj: Any) -> dict[str, Any]:
    """``path`` and, for a class, its public classmethods and ``replace``."""
    out = {path: obj}
    if isinstance(obj, type):
        for name, attr in vars(obj).items():
            if not name.startswith("_") and (isinstance(attr, classmethod) or name == "replace" and callable(attr)):
                out[f"{path}.{name}"] = getattr(obj, name)
    return out


@functools.cache
def public() -> dict[str, Any]:
    """Every public callable or module by dotted path (a module by its own name)."""
    out: dict[str, Any] = {}
    for ns in NAMESPACES:
        pkg = importlib.import_module(ns)
        for name in pkg.__all__:
            obj = getattr(pkg, name)
            if isinstance(obj, ModuleType):
                if obj.__name__ in NAMESPACES:
                    continue  # walked on its own
                if obj.__name__ not in EXPAND:
                    out[obj.__name__] = obj
                    continue
                for n, o in vars(obj).items():
                    if not n.startswith("_") and callable(o) and getattr(o, "__module__", None) == obj.__name__:
                        out.update(_members(f"{obj.__name__}.{n}", o))
            elif callable(obj):
                out.update(_members(f"{ns}.{name}", obj))
    return out


def _groups() -> list[list[str]]:
    """Paths naming the same object together (``mc.Scenario`` is ``mc.fleet.Scenario``)."""
    by_id: dict[Any, list[str]] = {}
    for path, obj in public().items():
        ident = (id(obj.__self__), obj.__func__) if inspect.ismethod(obj) else id(obj)
        by_id.setdefault(ident, []).append(path)
    return list(by_id.values())


def _walkable(fn: Callable) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(fn).parameters.values() if p.kind is not p.VAR_KEYWORD]


def _needs_listing(obj: Any) -> bool:
    """A module, or a callable that takes arguments (or whose signature is unknown)."""
    if isinstance(obj, ModuleType):
        return True
    try:
        return bool(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return True


def test_every_public_callable_is_walked_or_skipped():
    listed = set(CASES) | set(SKIP)
    missing = [g[0] for g in _groups() if not listed & set(g) and _needs_listing(public()[g[0]])]
    assert not missing, f"public callables neither in CASES nor in SKIP (with a reason): {missing}"
    stale = sorted(p for p in listed - set(public()) if not (p in CASES and CASES[p].fn))  # fn: a method
    assert not stale, f"CASES or SKIP name what is not public: {stale}"
    both = sorted(set(CASES) & set(SKIP))
    assert not both, f"both walked and skipped: {both}"
    assert all(reason.strip() for reason in SKIP.values())
    unknown = [(path, arg) for path, arg in ELSEWHERE
               if path not in CASES or arg not in inspect.signature(_target(path)).parameters]
    assert not unknown, f"ELSEWHERE names no walked argument: {unknown}"


# -- the walk ------------------------------------------------------------------------------

def _target(path: str) -> Callable:
    case = CASES[path]
    return case.fn() if case.fn is not None else public()[path]


def _call(fn: Callable, good: dict, arg: str, value: Any):
    args, kwargs = [], {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_KEYWORD:
            continue
        if p.kind is p.VAR_POSITIONAL:
            vals = list(good.get("*" + p.name, ()))
            args.extend([value] + vals[1:] if p.name == arg else vals)
            continue
        if p.name == arg:
            val = value
        elif p.name in good:
            val = good[p.name]
        else:
            continue
        if p.kind is p.POSITIONAL_ONLY:
            args.append(val)
        else:
            kwargs[p.name] = val
    extra = {k: x for k, x in good.items() if not k.startswith("*") and k not in kwargs
             and k not in inspect.signature(fn).parameters}
    return fn(*args, **kwargs, **extra)


def names_it(msg: str, names) -> bool:
    """Whether ``msg`` names one of ``names`` as a word (``demand.level`` names both)."""
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", msg) for n in names)


def check(call: Callable[[], Any], names, allow=()) -> str | None:
    """None when ``call`` succeeds or raises as the rule says; else what went wrong."""
    try:
        call()
    except allow:
        return None
    except (TypeError, ValueError) as err:
        msg = str(err)
        if not msg or "\n" in msg:
            return f"{type(err).__name__} not one line: {msg!r}"
        if not names_it(msg, names):
            return f"{type(err).__name__} does not name {'/'.join(names)}: {msg}"
        return None
    except Exception as err:  # noqa: BLE001 - the point of the test
        return f"{type(err).__name__}: {str(err)[:300]!r}"
    return None


def _params():
    out = []
    for path, case in CASES.items():
        fn = case.fn() if case.fn is not None else public().get(path)
        if fn is None:
            continue
        for p in _walkable(fn):
            if p.name in case.fixed:
                continue
            marks = ()
            if (path, p.name) in ELSEWHERE:
                marks = pytest.mark.xfail(strict=True, reason=ELSEWHERE[(path, p.name)])
            out.append(pytest.param(path, p.name, marks=marks, id=f"{path}({p.name})"))
    return out


@pytest.mark.parametrize("path,arg", _params())
def test_wrong_types_name_the_argument(path, arg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a str argument is never a file that happens to exist
    (tmp_path / "s.toml").write_text('pool = "4 x flagship"\n')
    case = CASES[path]
    fn = _target(path)
    good = case.good()
    names = (arg, arg.rstrip("_"), *case.names.get(arg, ()))
    allow = case.allow.get(arg, ())
    problems = {}
    for label, value in HOSTILE.items():
        # A table's own key is a field name too ({"a": 1} as data: "a=1: is not a field").
        got = check(lambda: _call(fn, good, arg, value), names + (("a",) if label == "dict" else ()), allow)
        if got:
            problems[label] = got
    assert not problems, "\n".join(f"{path}({arg}={k}): {msg}" for k, msg in problems.items())


# -- every field of the plain-data forms ------------------------------------------------------

# A field whose wrong value is reported on the field it must stay below.
BOUNDED_BY = {"lottery.lo": ("lottery.hi",)}


def _field_names(field: str) -> tuple[str, ...]:
    return (field, field.rpartition(".")[2], *BOUNDED_BY.get(field, ()))


@pytest.mark.parametrize("field", mc.fleet.field_names() + list(mc.fleet.scenario.SECTIONS)
                         + list(mc.fleet.scenario.OPTIONAL))
def test_every_scenario_field_names_itself(field):
    problems = {}
    base = scenario()
    if field.startswith("spot."):  # [spot] needs a spot card to be accepted at all
        base = base.replace(pool=[{"card": "flagship", "count": 4, "market": "spot"}])
    for label, value in HOSTILE.items():
        got = check(lambda: base.replace({field: value}),
                    _field_names(field) + (("a",) if label == "dict" else ()))
        if got:
            problems[label] = got
    assert not problems, "\n".join(f"replace({field}={k}): {msg}" for k, msg in problems.items())


PLAN_FIELDS = [f.name for f in dataclasses.fields(mc.Procurement) if f.init and f.name != "prices"]
PLAN_FIELDS += ["price_month", "price_hour"]
PLAN_FIELDS += [f"{section}.{f.name}" for section, cls in mc.buy.plan.SECTIONS.items()
                for f in dataclasses.fields(cls) if f.init]
PLAN_FIELDS += [f"{table}.h100" for table in ("owned", "rent_cap", "rent_spot", "price_month", "price_hour", "slots",
                                             "spot_slots")]


def _plan_update(field: str, value: Any) -> dict:
    head, _, tail = field.partition(".")
    return {head: {tail: value}} if tail else {field: value}


@pytest.mark.parametrize("field", PLAN_FIELDS)
def test_every_procurement_field_names_itself(field):
    problems = {}
    for label, value in HOSTILE.items():
        got = check(lambda: plan().replace(**_plan_update(field, value)),
                    _field_names(field) + (field.partition(".")[0], "checks", "a") if label == "dict"
                    else _field_names(field) + (field.partition(".")[0],))
        if got:
            problems[label] = got
    assert not problems, "\n".join(f"replace({field}={k}): {msg}" for k, msg in problems.items())


POOL_ENTRIES = {
    "card": {"card": "flagship", "count": 2},
    "custom": {"name": "c", "rated": 1000.0, "price_month": 100.0, "count": 2},
    "hourly": {"name": "c", "rated": 1000.0, "price_hour": 1.0, "count": 2},
    "hardware": {"gpu": "h100", "model": "8b", "batch": 4, "price_month": 2000.0, "count": 2, "context": 1024,
                 "prompt": 128, "weight_bytes": 2.0, "kv_bytes": 2.0, "mem_util": 0.9, "prefill_util": 0.5},
}


@pytest.mark.parametrize("kind,key", [(k, f) for k, e in POOL_ENTRIES.items() for f in e])
def test_every_pool_entry_field_names_itself(kind, key):
    """A pool entry's fields (SLO-rated entries search a rate per value: not walked)."""
    problems = {}
    for label, value in HOSTILE.items():
        entry = {**POOL_ENTRIES[kind], key: value}
        got = check(lambda: scenario().replace({"pool": [entry]}),
                    (key, "pool", "card") + (("a",) if label == "dict" else ()))
        if got:
            problems[label] = got
    assert not problems, "\n".join(f"pool {kind}.{key}={k}: {msg}" for k, msg in problems.items())


SLO_ENTRY = {"rated_from": "slo", "model": "8b", "gpu": "h100", "slo_ttft": 1.0, "price_month": 2000.0, "count": 2,
             "n": 64, "warmup": 16, "replications": 2, "rel_tol": 1.0}


@pytest.mark.parametrize("key", [k for k in SLO_ENTRY if k not in ("count", "price_month")]
                         + [k for k in mc.fleet.pool.SLO_SEARCH if k not in SLO_ENTRY])
def test_every_slo_pool_entry_field_names_itself(key):
    """An SLO-rated entry's own fields (each value a wrong type would otherwise
    reach the rate search); the queue's fields are those of mc.Serving, walked above.
    A low percentile meets the SLO at every rate: that error names slo_ttft."""
    problems = {}
    for label, value in HOSTILE.items():
        entry = {**SLO_ENTRY, key: value}
        got = check(lambda: scenario().replace({"pool": [entry]}),
                    (key, "pool", "slo_ttft") + (("a",) if label == "dict" else ()))
        if got:
            problems[label] = got
    assert not problems, "\n".join(f"pool slo.{key}={k}: {msg}" for k, msg in problems.items())


@pytest.mark.parametrize("key", list(mc.fleet.pool.POOL_SLO))
def test_every_pool_slo_entry_field_names_itself(key):
    """A pool rated at its SLO (``rated_from = "pool-slo"``): its own fields. The entry's
    2 cards of 16 seats are too many for 64 requests, so a value that passes is refused
    by the pool's seats, naming the pool entry, before any search runs."""
    problems = {}
    for label, value in HOSTILE.items():
        entry = {**SLO_ENTRY, "rated_from": "pool-slo", key: value}
        got = check(lambda: scenario().replace({"pool": [entry]}),
                    (key, "pool") + (("a",) if label == "dict" else ()))
        if got:
            problems[label] = got
    assert not problems, "\n".join(f"pool pool-slo.{key}={k}: {msg}" for k, msg in problems.items())
