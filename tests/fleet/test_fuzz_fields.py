"""A hypothesis search over every scenario field (the slow tier): any value is
either accepted or refused with a one-line ``mc.ParamError``, and an accepted
scenario's months are finite and consistent (bill = warm + churn to the cent,
shortfall in [0, 1], n_wrong <= n_evicted <= the limit, flags that follow the
thresholds)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import mc
from mc import ParamError
from mc._fields import declarations
from mc._pytree import field_keys
from mc.fleet.scenario import OPTIONAL, SECTIONS

pytestmark = pytest.mark.slow

# A demand's trace and log fields hold data read from files (a trace, a request log), not numbers to fuzz;
# scale applies only to a log.
FIELDS = {name: [f for f in field_keys(cls) if f not in ("trace", "log", "columns", "log_sha256", "scale")]
          for name, cls in SECTIONS.items()}
# The optional sections (SPEC §6's autoscaler) are fuzzed for one-line refusals;
# each period is a month shape of its own, so they are not in the running test.
OPTIONAL_FIELDS = [f"{name}.{f.name}" for name, cls in OPTIONAL.items() for f in dataclasses.fields(cls) if f.init]
BASE = mc.presets.get("noise-evictor-day")

# Anything at all: wrong types, non-finite, huge, tiny, negative.
anything = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**40, 2**40), st.booleans(),
    st.sampled_from(["", "day", "flat", "share", "text", None, [1.0], {"a": 1}, 1 + 2j, 1e-300, 1e39]))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from([f"{s}.{f}" for s, fs in FIELDS.items() for f in fs] + OPTIONAL_FIELDS),
                       anything,
                       min_size=1, max_size=4))
def test_any_value_is_accepted_or_refused_in_one_line(update):
    try:
        sc = BASE.replace(update)
    except ParamError as err:
        assert "\n" not in str(err) and "=" in str(err)
        return
    assert isinstance(sc, mc.Scenario)


# Plausible values, some just past their ranges, for scenarios that run.
def _around(lo, hi):
    """Mostly inside [lo, hi], at its ends now and then, and past them a few times in a hundred."""
    inside = st.floats(lo, hi)
    return st.one_of(*[inside] * 12, st.sampled_from([lo, hi]),
                     st.floats(lo - abs(hi - lo) * 0.1, hi + abs(hi - lo) * 0.1))


# Hand-tuned where a field fixes a shape (a recompile) or its declared range is too wide to run;
# every other field gets its declared range (``plausible``), so a new field needs nothing here.
TUNED = {
    "window.hours": st.one_of(_around(0.0, 400.0), st.sampled_from(["hour", "day", "week", 2.0**-126])),
    "window.sigma_hour": _around(0.0, 2.0), "window.common_hour": _around(0.0, 0.5),
    "wander.sd": _around(0.0, 0.2), "wander.hours": _around(0.0, 1000.0),
    "swing.diurnal": _around(0.0, 0.5), "swing.hot_hour": _around(0.0, 24.0), "swing.start_hour": _around(0.0, 24.0),
    "swing.sd": _around(0.0, 0.2), "swing.hours": _around(0.0, 1000.0),
    "eviction.policy": st.sampled_from(mc.fleet.policies.names()),
    "eviction.share": _around(0.0, 1.0), "eviction.theta": _around(0.0, 2.0),
    "eviction.max_share": _around(0.0, 1.0), "eviction.k": _around(0.0, 5.0), "eviction.floor": _around(0.0, 1.5),
    "eviction.churn": _around(0.0, 5.0),
    "demand.shape": st.sampled_from(["flat", "diurnal", "weekly", "bursty"]),
    "demand.level": _around(0.0, 3e5), "demand.amplitude": _around(0.0, 1.0),
    "demand.peak_hour": _around(0.0, 24.0), "demand.weekend_factor": _around(0.0, 3.0),
    "demand.burst_rate": _around(0.0, 20.0), "demand.burst_height": _around(0.0, 1e5),
    "demand.burst_hours": _around(0.0, 48.0), "demand.max_bursts": st.sampled_from([4, 16]),
    "lottery.mean": _around(0.0, 2.0), "lottery.sd": _around(0.0, 0.5), "lottery.lo": _around(0.0, 1.0),
    "lottery.hi": _around(0.5, 3.0), "lottery.lemon_rate": _around(0.0, 1.0),
    "lottery.lemon_factor": _around(0.0, 1.0),
    "dips.rate": _around(0.0, 10.0), "dips.mean_hours": _around(0.0, 100.0), "dips.depth_lo": _around(0.0, 1.0),
    "dips.depth_hi": _around(0.0, 1.0), "dips.max_count": st.sampled_from([0, 8]),
    "checks.max_shortfall": _around(0.0, 1.0), "checks.min_convergence": _around(0.0, 2.0),
    "checks.max_wrong": st.integers(-1, 10),
}


def plausible(field: str):
    """Values around a field's declared range (a rule's field: its ``param``)."""
    section, name = field.split(".")
    d = declarations(SECTIONS[section]).get(name) or mc.fleet.policies.declaration(name)
    kind = getattr(d, "kind", "number")
    if kind == "choice":
        return st.sampled_from(d.options)
    if kind == "flag":
        return st.booleans()
    lo = d.lo if isinstance(d.lo, (int, float)) else 0.0
    hi = d.hi if isinstance(d.hi, (int, float)) else lo + 2.0 * max(abs(d.default or 0.0), 1.0)
    return st.integers(int(lo) - 1, int(min(hi, lo + 16)) + 1) if kind == "integer" else _around(float(lo), float(hi))


EVERY = [f"{s}.{f}" for s, fs in FIELDS.items() for f in fs]
PLAUSIBLE = {**TUNED, **{f: plausible(f) for f in EVERY if f not in TUNED}}


def test_the_plausible_strategies_cover_every_field():
    assert set(TUNED) <= set(EVERY) and sorted(PLAUSIBLE) == sorted(EVERY)
    for field in set(EVERY) - {"eviction.policy"}:  # each declaration gives one, as a field added later gets
        plausible(field).validate()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["8 x flagship", "6 x bargain + 4 x flagship"]), st.sampled_from(["steady", "peak", "all"]),
       st.fixed_dictionaries({}, optional=PLAUSIBLE), st.integers(0, 2**31 - 1))
def test_accepted_scenarios_give_finite_consistent_months(pool, runset, update, seed):
    try:
        sc = BASE.replace({"pool": pool, "runset": runset, **update})
    except ParamError as err:
        assert "\n" not in str(err)
        event("refused")
        return
    event("ran")
    x = mc.simulate(sc, 24, seed=seed, keep_samples=True).samples
    for col in x.columns:
        assert np.all(np.isfinite(np.asarray(x[col], np.float64))), col
    cents = {c: np.round(np.asarray(x[c]) * 100).astype(np.int64) for c in ("bill", "warm_bill", "churn_bill")}
    assert np.array_equal(cents["bill"], cents["warm_bill"] + cents["churn_bill"])
    assert np.all((x["shortfall"] >= 0) & (x["shortfall"] <= 1))
    assert np.all((0 <= x["n_wrong"]) & (x["n_wrong"] <= x["n_evicted"]) & (x["n_evicted"] <= sc.evict_limit))
    assert np.all(x["n_run"] + x["n_evicted"] <= sc.pool.size)
    assert np.all(x["delivered_tokens"] <= x["capacity_tokens"] * (1 + 1e-6) + 1e-3)
    assert np.all(x["delivered_tokens"] <= x["demand_tokens"] * (1 + 1e-6) + 1e-3)
    assert np.all((x["idle_burn"] >= -1e-6) & (x["idle_burn"] <= x["warm_bill"] * (1 + 1e-6) + 1e-6))
    f32 = np.float32
    assert np.array_equal(x["pass_capacity"], x["shortfall"].astype(f32) <= f32(sc.checks.max_shortfall))
    assert np.array_equal(x["pass_convergence"], x["convergence"].astype(f32) >= f32(sc.checks.min_convergence))
    assert np.array_equal(x["pass_eviction"], x["n_wrong"] <= sc.checks.max_wrong)
    assert not math.isnan(float(np.asarray(x["convergence"]).sum()))
