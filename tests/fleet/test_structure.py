"""SPEC §1.4.1 (wander, swing, a window's shared error) in the §1 month and §6's.

- With every term zero a month is today's, bit for bit: every preset's outputs
  are fingerprinted against the values the month gave before the terms existed
  (computed at the commit that only declared them), and the structured path forced
  on with zero terms agrees with §1.4's arithmetic to float tolerance.
- With swing and a window's shared error on, the JAX month agrees with a
  brute-force hourly NumPy reference (``ref_fleet.month``: the swing's AR(1) step
  by step in float64, each window and each hour of capacity summed hour by hour)
  on the same draws.
- With wander on, the core samples each card's wander at checkpoints
  (``mc.fleet.checkpoints``), exact in law but not draw by draw an hourly path: it
  agrees with the same reference, each card's wander simulated hour by hour from
  normals of its own, in law: on the same other draws, the paired differences of
  every money, count and token figure have mean zero within five standard errors,
  and the spread of the window means and of the months' capacity agree.
"""

import hashlib

import jax
import numpy as np
import pytest

import mc
from conftest import OUTAGES_OFF, assert_numpy_month_agrees, assert_outputs_agree, batch_outcomes, month_draws, one_fast
from mc import engine, presets
from mc.studies import bench
from mc.fleet import model, structure
from mc._pytree import set_field
from ref_fleet import month as ref_month

# sha256 (first 16 hex) of every output of months 0..47 (seed 3) of each preset, with
# its wander and swing set to zero, on a CPU, at 24954c4 (the terms declared and
# refused, never simulated); lemon-hunter-field with its re-derived lottery and dips.
TODAY = {
    "golden-idler": "53ba50c095140f94",
    "noise-evictor": "8496e9c84d651c57",
    "bargain-shortfall": "701f2ad97e472fc8",
    "golden-idler-steady": "cfd784039a9720a1",
    "noise-evictor-day": "e26499f0bad7a616",
    "bargain-flagship": "5cb7898323cb2bd6",
    "lemon-hunter": "a631350151293c96",
    "dip-chaser": "f4b95f075b1dd8bd",
    "steady-hand": "7db8827f148827c2",
    "lemon-hunter-field": "64825373e3348b3c",
    # lemon-hunter-field's months once its §10 terms are off too (conftest.OUTAGES_OFF).
    "spot-field": "64825373e3348b3c",
    # SPEC §11's services on replicas: recorded when they were added.
    "llama70b-tp4": "721fda57dc3424ae",
    "llama405b-tp8": "8f41f6c45beff283",
}

ON = {"wander.sd": 0.03, "wander.hours": 100.0, "swing.diurnal": 0.015, "swing.hot_hour": 14.0,
      "swing.start_hour": 9.5, "swing.sd": 0.01, "swing.hours": 12.0, "window.common_hour": 0.05}


def outputs(sc, n=48, seed=3):
    fn, _ = model(sc)
    keys = engine.month_keys(seed, np.uint32(0), n)
    return jax.jit(jax.vmap(fn, in_axes=(0, None)))(keys, sc)


def fingerprint(out) -> str:
    h = hashlib.sha256()
    for k in sorted(out):
        h.update(k.encode())
        h.update(np.ascontiguousarray(np.asarray(out[k])).tobytes())
    return h.hexdigest()[:16]


def test_every_preset_is_fingerprinted():
    assert set(TODAY) == set(mc.presets.names())


# Fingerprints taken with XLA's default options: the tests' own compile options
# (tests/compile_flags.py) must keep every bit, and these checks say so every full run.
@pytest.mark.slow
@pytest.mark.skipif(jax.default_backend() != "cpu", reason="fingerprints were taken on a CPU")
@pytest.mark.parametrize("name", sorted(TODAY))
def test_zero_terms_are_todays_bits(name):
    sc = mc.presets.get(name).replace({"wander.sd": 0.0, "swing.diurnal": 0.0, "swing.sd": 0.0,
                                       "window.common_hour": 0.0, **OUTAGES_OFF.get(name, {})})
    assert sc.structure is None
    assert fingerprint(outputs(sc)) == TODAY[name], name


def forced(sc):
    """``sc`` with the structured path on and every term zero (the factor is 1)."""
    sc = sc.replace({})
    set_field(sc, "structure", structure.Static(int(np.ceil(sc.window.hours)), False, False, False, False))
    return sc


# The full tier's: the fast tier checks the structured path against the hourly reference.
@pytest.mark.slow
@pytest.mark.parametrize("name", ["golden-idler-steady", "lemon-hunter"])
def test_structured_path_with_zero_terms_is_section_1_4(name):
    """The hour-by-hour path, every factor 1, reduces to §1.4's window and §1.8's
    capacity: the same evictions and run sets, tokens to float tolerance."""
    sc = mc.presets.get(name)
    base, hourly = outputs(sc), outputs(forced(sc))
    for k in ("bill", "n_run", "n_evicted", "n_wrong"):
        np.testing.assert_array_equal(hourly[k], base[k], err_msg=k)
    for k in ("delivered_tokens", "capacity_tokens", "demand_tokens"):
        np.testing.assert_allclose(hourly[k], base[k], rtol=1e-5, err_msg=k)


@pytest.mark.slow
def test_terms_change_the_month_and_only_with_their_own_draws():
    sc = mc.presets.get("golden-idler-steady")
    on = sc.replace(ON)  # STRUCTURED["steady-all-terms"]: its step is the NumPy month test's too
    (_, a), (_, b) = batch_outcomes(sc, 24), batch_outcomes(on, 24)
    # The window's terms move scores, hence capacity; demand is today's draw.
    np.testing.assert_array_equal(a["demand_tokens"], b["demand_tokens"])
    assert not np.array_equal(a["capacity_tokens"], b["capacity_tokens"])


STRUCTURED = {
    "steady-all-terms": mc.presets.get("golden-idler-steady").replace(ON),
    "floor-fractional-window": mc.Scenario(
        pool=mc.Pool.of(("flagship", 12)), window=mc.Window(hours=30.5, common_hour=0.1),
        eviction=mc.Eviction(policy="floor", floor=0.9, max_share=0.3), runset="peak",
        demand=mc.Demand(shape="diurnal", level=50_000, amplitude=0.3, peak_hour=15),
        dips=mc.Dips(rate=6.0), wander=mc.Wander(sd=0.04, hours=50.0),
        swing=mc.Swing(diurnal=0.02, hot_hour=15.0, start_hour=15.0)),
    "mixed-wander-only": mc.Scenario(
        pool=mc.Pool.of(("bargain", 6), ("flagship", 8)), window=mc.Window(hours=6.5),
        eviction=mc.Eviction(policy="threshold", theta=0.93, max_share=0.3), runset="steady",
        demand=mc.Demand(level=40_000), lottery=mc.Lottery(lemon_rate=0.2),
        wander=mc.Wander(sd=0.05, hours=3.0)),
    "swing-only-all": mc.Scenario(
        pool=mc.Pool.of(("flagship", 10)), window=mc.Window(hours=24),
        eviction=mc.Eviction(share=0.2), runset="all", demand=mc.Demand(level=70_000),
        swing=mc.Swing(diurnal=0.05, sd=0.03, hours=6.0, start_hour=7.0)),
}
EXACT = ("bill", "warm_bill", "churn_bill", "ideal_bill", "n_run", "n_evicted", "n_wrong", "pass_eviction")
CLOSE = ("convergence", "wrong_share", "demand_tokens", "delivered_tokens", "capacity_tokens", "shortfall",
         "idle_burn")


def same_draws(sc):
    """``sc`` without wander (sampled at checkpoints, so equal to the hourly reference
    in law only): what the reference computes on the core's own draws."""
    return sc.replace({"wander.sd": 0.0})


@pytest.mark.parametrize("name", one_fast(sorted(STRUCTURED), keep="floor-fractional-window"))
def test_month_matches_hourly_reference(name):
    """The JAX month against the brute-force hourly reference on the same draws
    (wander off): scores to float tolerance; evictions, run sets and money exactly;
    tokens to float tolerance."""
    sc = same_draws(STRUCTURED[name])
    n = 16
    draws, core = month_draws(sc, n, seed=5)
    for i in range(n):
        ref = ref_month(draws[i], sc)
        where = f"{name} month {i}"
        np.testing.assert_allclose(core["score"][i], ref["score"], rtol=2e-5, err_msg=where)
        assert set(np.flatnonzero(core["evicted"][i])) == ref["evicted"], where
        assert set(np.flatnonzero(core["run"][i])) == ref["run"], where
        assert_outputs_agree(core, ref, i, where, EXACT, CLOSE)


@pytest.mark.parametrize("updates, field", [
    ({"wander.sd": -0.01}, "wander.sd"), ({"wander.hours": 0.0}, "wander.hours"),
    ({"swing.hours": -1.0}, "swing.hours"), ({"swing.hot_hour": 24.0}, "swing.hot_hour"),
    ({"swing.start_hour": -0.5}, "swing.start_hour"), ({"swing.sd": -0.1}, "swing.sd"),
    ({"swing.diurnal": 0.4, "wander.sd": 0.15}, "swing.diurnal"),
    ({"wander.sd": 0.01, "window.hours": 5000.0}, "window.hours"),
])
def test_bad_terms_are_one_line_errors(updates, field):
    with pytest.raises(ValueError) as e:
        mc.presets.get("golden-idler").replace(updates)
    assert str(e.value).startswith(field + "="), str(e.value)
    assert "\n" not in str(e.value)


# -- SPEC §6 -------------------------------------------------------------------------

from conftest import assert_rounds_agree, autoscaler_draws  # noqa: E402
from mc.fleet import autoscaler, month  # noqa: E402
from ref_autoscaler import month as ref_autoscaler_month  # noqa: E402

ROUNDS = {
    "daily-replace-all-terms": mc.presets.get("lemon-hunter").replace(ON),
    "twelve-hourly-strikes2-wander": mc.Scenario(
        pool=mc.Pool.of(("flagship", 10)), window=mc.Window(hours=18.5),
        eviction=mc.Eviction(policy="floor", floor=0.92, max_share=0.3), runset="steady",
        demand=mc.Demand(shape="diurnal", level=45_000, amplitude=0.2), lottery=mc.Lottery(lemon_rate=0.2),
        dips=mc.Dips(rate=5.0), wander=mc.Wander(sd=0.05, hours=40.0),
        swing=mc.Swing(diurnal=0.02, start_hour=3.0),
        autoscaler=mc.Autoscaler(period=12, replace=True, strikes=2, boot_hours=2.5)),
    "daily-no-replace-swing": mc.Scenario(
        pool=mc.Pool.of(("flagship", 8)), window=mc.Window(hours=24, common_hour=0.1),
        eviction=mc.Eviction(share=0.125), runset="all", demand=mc.Demand(level=40_000),
        swing=mc.Swing(diurnal=0.03, sd=0.02), wander=mc.Wander(sd=0.02, hours=200.0),
        autoscaler=mc.Autoscaler(period=24, strikes=2)),
}
EXACT6 = EXACT + ("n_replaced", "lemons_end", "lemons_evicted", "first_eviction_hour")


@pytest.mark.parametrize("name", one_fast(sorted(ROUNDS), keep="twelve-hourly-strikes2-wander"))
def test_autoscaler_matches_hourly_reference(name):
    """§6 with swing on against the reference's hour-by-hour paths on the same
    draws (wander off: its law is the next tests')."""
    sc = same_draws(ROUNDS[name])
    n = 6
    draws, core = autoscaler_draws(sc, n, seed=5)
    for i in range(n):
        ref = ref_autoscaler_month(draws[i], sc)
        where = f"{name} month {i}"
        assert_rounds_agree(core, ref, i, where)
        assert_outputs_agree(core, ref, i, where, EXACT6, CLOSE)


@pytest.mark.slow  # bit for bit at the users' compile level (see test_zero_terms_are_todays_bits)
def test_one_round_is_section_1_with_the_terms_on():
    sc = mc.presets.get("golden-idler-steady").replace(ON)
    one = engine.sample(month.fleet_month, sc, 48, seed=9, chunk=16)
    six = engine.sample(autoscaler.autoscaler_month, sc.replace(autoscaler={}), 48, seed=9, chunk=48)
    for col in month.OUTPUTS:
        np.testing.assert_array_equal(six[col], one[col], err_msg=col)


def test_numpy_month_matches_core_with_the_terms_on():
    """``mc.numpy_month`` (the bench's baseline) simulates the terms as the core does."""
    from mc.studies import numpy_month

    sc = same_draws(STRUCTURED["steady-all-terms"])
    assert_numpy_month_agrees(sc, 24)
    assert numpy_month.months(sc, 8, batch=4)["bill"].shape == (8,)


@pytest.mark.slow  # chunk invariance, as the other models', is the full tier's
def test_months_do_not_depend_on_the_chunk():
    """The structure's paths, windows and hourly capacity give a month the same
    bits in any chunk (§1 and §6 with replacements)."""
    for fn, sc in ((month.fleet_month, STRUCTURED["floor-fractional-window"]),
                   (autoscaler.autoscaler_month, ROUNDS["twelve-hourly-strikes2-wander"])):
        a = engine.sample(fn, sc, 12, seed=2, chunk=3)
        b = engine.sample(fn, sc, 12, seed=2, chunk=12)
        for col in a:
            np.testing.assert_array_equal(a[col], b[col], err_msg=col)


@pytest.mark.slow  # two chunks of 4,096 months each
@pytest.mark.parametrize("name", ["lemon-hunter-field", "golden-idler-steady"])
def test_months_do_not_depend_on_a_long_chunk(name):
    """A chunk long enough that XLA cuts its loops differently (4,096 months) gives
    every month the bits of a short one (§6 on the field preset, §1 with every term
    on): nothing the structure computes depends on how a chunk is laid out."""
    sc = presets.get(name)
    if sc.structure is None:
        sc = sc.replace(bench.STRUCTURE)
    fn = autoscaler.autoscaler_month if sc.autoscaler is not None else month.fleet_month
    a = engine.sample(fn, sc, 4096, seed=1, chunk=16)
    b = engine.sample(fn, sc, 4096, seed=1, chunk=4096)
    for col in a:
        np.testing.assert_array_equal(a[col], b[col], err_msg=col)


# -- wander in law ----------------------------------------------------------------

PAIRED = ("bill", "n_run", "n_evicted", "n_wrong", "capacity_tokens", "delivered_tokens")


def paired_in_law(core: dict, refs: list, where: str) -> None:
    """On the same other draws, core and reference differ only by their wander's
    draws: each figure's paired difference has mean zero within five standard
    errors, and the capacity's spread agrees within five of its standard errors."""
    n = len(refs)
    for key in PAIRED:
        a = np.asarray(core[key][:n], np.float64)
        b = np.array([r[key] for r in refs], np.float64)
        d = a - b
        se = d.std(ddof=1) / np.sqrt(n)
        assert abs(d.mean()) <= 5 * se + 1e-9 * max(1.0, abs(b.mean())), f"{where} {key}: {d.mean()} ± {se}"
    a = np.asarray(core["capacity_tokens"][:n], np.float64)
    b = np.array([r["capacity_tokens"] for r in refs], np.float64)
    ratio = a.var(ddof=1) / b.var(ddof=1)
    assert abs(np.log(ratio)) < 5 * np.sqrt(4 / n), f"{where} capacity variance ratio {ratio}"


IN_LAW = mc.Scenario(
    pool=mc.Pool.of(("flagship", 12)), window=mc.Window(hours=30.5, sigma_hour=0.0),
    eviction=mc.Eviction(policy="floor", floor=0.93, max_share=0.3), runset="all",
    demand=mc.Demand(shape="diurnal", level=70_000, amplitude=0.3, peak_hour=15),
    dips=mc.Dips(rate=6.0), wander=mc.Wander(sd=0.05, hours=40.0),
    swing=mc.Swing(diurnal=0.02, hot_hour=15.0, start_hour=15.0, sd=0.01, hours=12.0))


@pytest.mark.slow
def test_month_wander_is_the_hourly_month_in_law():
    """§1 with wander (and swing): the window means' spread across cards and months,
    and every figure's paired difference, as the hourly reference gives them."""
    sc = IN_LAW
    n, G = 240, sc.structure.grid
    draws, core = month_draws(sc, n, seed=11)
    rng = np.random.default_rng(11)
    refs = [ref_month(draws[i], sc, wander=rng.standard_normal((sc.pool.size, G + 730))) for i in range(n)]
    # With no score noise, a score is the window's mean: its wander's spread shows.
    rel_core = (core["score"] / core["true_rate"]).ravel()
    rel_ref = np.concatenate([r["score"] for r in refs]) / core["true_rate"].ravel()
    m = rel_core.size
    assert abs(rel_core.mean() - rel_ref.mean()) < 5 * np.sqrt((rel_core.var() + rel_ref.var()) / m)
    assert abs(np.log(rel_core.var() / rel_ref.var())) < 5 * np.sqrt(4 / m)
    paired_in_law(core, refs, "§1")


@pytest.mark.slow
def test_autoscaler_wander_is_the_hourly_month_in_law():
    """§6 with wander, replacements and strikes: every figure's paired difference
    against the hourly reference (the same path round after round; a replacement's
    own path from its placement)."""
    sc = ROUNDS["twelve-hourly-strikes2-wander"]
    n, G = 120, sc.structure.grid
    draws, core = autoscaler_draws(sc, n, seed=13)
    rng = np.random.default_rng(13)
    refs = [ref_autoscaler_month(draws[i], sc, wander=rng.standard_normal((sc.pool.size, G + 730)))
            for i in range(n)]
    paired_in_law(core, refs, "§6")
