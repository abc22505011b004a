"""Capacity that goes away in a mix (SPEC §4 with §10's terms): owned cards that fail
and are repaired, spot cards beside on-demand ones.

Every term off is today's month bit for bit (fingerprints taken before the terms
existed); the JAX month agrees with a per-event NumPy reference on the same draws;
the zone process and the failures match their laws within intervals from the
sample; a zone down all month is the mix without its spot cards.
"""

from __future__ import annotations

import hashlib
import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import ref_procurement as ref
from conftest import one_fast

from mc import buy as P
from mc import engine
from mc.buy import mix
from mc.buy import month as M
from mc.buy.terms import Repairs, SpotMarket
from mc.cli import main
from mc._validate import ParamError
from mc.fleet.demand import Demand

# Months 0..11 of each buying preset, seed 5: sha256 of every column the month had
# before failures and spot cards (the new ones are 0 with the terms off), taken from
# the package before they existed at XLA's default options and at the tests' compile
# options (tests/compile_flags.py), under which api-tax's float32 sums of its 267
# cards' qualities round one last bit differently (both before and after).
BEFORE = {"used-chip-bargain": {"4f079d1ed6ba3291"}, "shiny-chip-bet": {"94c3b3341bd38244"},
          "api-tax": {"adef815e6e160601", "35eacfae65f7c026"}}
OLD_COLUMNS = [c for c in P.COLUMNS if c not in M.LOST and c != "spot_bill"]

MEAN_RATE = 250_000.0  # tok/s
FORECAST = MEAN_RATE * 730 * 3600
DEMAND = Demand(shape="diurnal", amplitude=0.3, peak_hour=14.0)


def fingerprint(p: P.Procurement) -> str:
    r = P.simulate(p, 12, seed=5, chunk=12, keep_samples=True)
    h = hashlib.sha256()
    for c in sorted(OLD_COLUMNS):
        h.update(c.encode())
        h.update(np.ascontiguousarray(r.samples[c].to_numpy()).tobytes())
    return h.hexdigest()[:16]


def test_every_buying_preset_has_a_fingerprint():
    assert set(BEFORE) == set(P.presets.names())


@pytest.mark.parametrize("name", one_fast(BEFORE, keep="api-tax"))
def test_terms_off_are_todays_bits(name):
    p = P.presets.get(name)
    assert p.terms is None
    assert fingerprint(p) in BEFORE[name]
    # A market given but no spot card and no failure rate: still off.
    off = p.replace(failures={"rate": 0.0, "repair_hours": 5.0}, spot={"zones": 3, "up_hours": 4.0})
    assert off.terms is None
    if name == "api-tax":
        assert fingerprint(off) == fingerprint(p)


# -- the month against the per-event reference -------------------------------------------

OWNED = {"h100": 12, "a100-used": 20}
CAPS = {"b200": 6}
SPOT = {"h100": 10, "b200": 7}
FAIL = {"rate": 3.0, "repair_hours": 40.0}
MARKET = {"price_factor": 0.3, "zones": 3, "up_hours": 8.0, "down_hours": 3.0, "wave_share": 0.6, "rate": 4.0}


def plan(api: bool = True, **kw) -> P.Procurement:
    base = dict(model="premium-70b", forecast_tokens=FORECAST, sigma=0.2, demand=DEMAND, owned=OWNED,
                rent_cap=CAPS, rent_spot=SPOT, failures=Repairs(**FAIL), spot=SpotMarket(**MARKET), api=api)
    return P.Procurement(**{**base, **kw})


@jax.jit
def draw_and_outcome(keys, p):
    def one(k):
        d = M.draw(k, p)
        return d, M.outcome(d, p)

    return jax.vmap(one)(keys)


def shared_draws(d, i: int) -> tuple[dict, dict]:
    """Month ``i``'s draws as the reference takes them."""
    chip = {c: (d.quality[j].z[i], d.quality[j].u_lemon[i]) for j, c in enumerate(P.CHIP_NAMES)}
    lost = {"fail": {c: d.lost.fail[j][i] for j, c in enumerate(P.CHIP_NAMES)},
            "spot": {c: (d.lost.quality[j].z[i], d.lost.quality[j].u_lemon[i], d.lost.lone[j][i], d.lost.wave[j][i])
                     for j, c in enumerate(P.CHIP_NAMES)},
            "zone_u": d.lost.zone_u[i], "spells": d.lost.spells[i]}
    return chip, lost


@pytest.mark.parametrize("api", one_fast([True, False]))
def test_month_matches_per_event_reference(api):
    p = plan(api)
    shape = ref.profile(DEMAND.amplitude, DEMAND.peak_hour)
    rent = ref.rented(p.model, OWNED, CAPS, FORECAST, shape)
    assert dict(zip(P.CHIP_NAMES, p.rented)) == rent
    draws, out = draw_and_outcome(engine.month_keys(11, jnp.uint32(0), 6), p)
    cols = P.settle(p, {k: np.asarray(x) for k, x in out.items()})
    d = jax.tree.map(np.asarray, draws)
    events = 0
    for i in range(6):
        chip, lost = shared_draws(d, i)
        want = ref.month_with_terms(d.demand_z[i], chip, p.model, OWNED, rent, SPOT, FORECAST, p.sigma, shape,
                                    FAIL, MARKET, lost, api)
        events += want["n_failed"] + want["n_preempted"]
        for key in ("n_failed", "n_preempted"):  # whole events: exactly
            assert cols[key][i] == want[key], key
        tol = 2e-6 * want["demand_tokens"]
        for key, x in want.items():
            if key.endswith("_tokens"):
                assert cols[key][i] == pytest.approx(x, rel=2e-5, abs=tol), key
            elif key.endswith("card_hours"):  # float32 event times: ~1e-4 h each
                assert cols[key][i] == pytest.approx(x, abs=1e-3 * (1 + events)), key
        assert cols["spot_bill"][i] == pytest.approx(want["spot_bill"], abs=0.01)
        owned_c, rented_c = ref.bill_cents(OWNED, rent)
        api_bill = want["api_tokens"] / 1e6 * p.api_price
        assert cols["bill"][i] == pytest.approx(owned_c / 100 + rented_c / 100 + want["spot_bill"] + api_bill,
                                                rel=1e-6)
    assert events > 100  # failures, waves and lone preemptions all happened


# -- in law -------------------------------------------------------------------------------

def _mean_se(x: np.ndarray) -> tuple[float, float]:
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def down_share(rate: float, repair: float, steps: int = 73_000) -> tuple[float, float]:
    """A card that fails at ``rate`` per 730 h up and is down ``repair`` hours, up at
    hour 0: the expected share of [0, 730) it is down and its expected failures, from
    the renewal equation ``p(t) = λ ∫_{t − R}^{t} (1 − p(s)) ds`` (λ = rate / 730)."""
    dt = 730.0 / steps
    lam = rate / 730.0
    lag = int(round(repair / dt))
    p, flow = np.zeros(steps), np.zeros(steps)  # P(down at t); failure density
    for k in range(steps):
        p[k] = flow[max(0, k - lag):k].sum() * dt
        flow[k] = lam * (1.0 - p[k])
    return float(p.mean()), float(flow.sum() * dt)


@pytest.mark.slow
def test_zones_and_failures_in_law():
    """64 spot cards in 64 zones (independent paths), waves only: the share of spot
    card-hours away is ``down / (up + down)`` and each card is taken once a down spell
    begins (``P(down at 0) + 730 / (up + down)``); owned cards are down the renewal
    equation's share and fail its count; all within 5 standard errors of the months."""
    n, cards, up, down = 256, 64, 10.0, 2.0
    p = P.Procurement(model="premium-70b", forecast_tokens=FORECAST, owned={"h100": cards},
                      rent_spot={"h100": cards}, failures=Repairs(rate=0.5, repair_hours=72.0),
                      spot=SpotMarket(zones=cards, up_hours=up, down_hours=down, wave_share=1.0, rate=0.0))
    s = P.simulate(p, n, seed=4, keep_samples=True).samples
    share = down / (up + down)
    m, se = _mean_se(s["spot_lost_card_hours"].to_numpy() / (cards * 730))
    assert abs(m - share) < 5 * se and se < 0.01
    m, se = _mean_se(s["n_preempted"].to_numpy() / cards)
    assert abs(m - (share + 730 / (up + down))) < 5 * se
    want_down, want_failed = down_share(0.5, 72.0)
    m, se = _mean_se(s["owned_down_card_hours"].to_numpy() / (cards * 730))
    assert abs(m - want_down) < 5 * se
    m, se = _mean_se(s["n_failed"].to_numpy() / cards)
    assert abs(m - want_failed) < 5 * se
    # The spot bill: the share of card-hours there, at the spot price.
    full = cards * round(2100 * 1.35 * 0.33 * 100) / 100
    assert s["spot_bill"].mean() == pytest.approx(full * (1 - s["spot_lost_card_hours"].mean() / (cards * 730)),
                                                  rel=1e-5)


@pytest.mark.slow
def test_owned_capacity_lost_is_rate_times_repair_at_small_rates():
    """512 owned cards failing at 0.05 a card-month, repaired in 72 h: the share of owned
    card-hours down is the renewal equation's, about rate × repair time / 730 (less the
    repairs the month's end cuts short), within 5 standard errors of 256 months; the
    capacity lost follows."""
    n, cards, rate, repair = 256, 512, 0.05, 72.0
    p = P.Procurement(model="premium-70b", forecast_tokens=FORECAST, owned={"h100": cards},
                      failures=Repairs(rate=rate, repair_hours=repair))
    assert p.terms is not None and not p.terms.any_spot
    s = P.simulate(p, n, seed=6, keep_samples=True).samples
    want, _ = down_share(rate, repair)  # the law; at this rate within 1% of rate × repair time:
    assert want == pytest.approx(rate * (repair - repair**2 / 1460) / 730, rel=0.01)
    m, se = _mean_se(s["owned_down_card_hours"].to_numpy() / (cards * 730))
    assert abs(m - want) < 5 * se
    lost = s["owned_down_tokens"] / (s["owned_capacity_tokens"] + s["owned_down_tokens"])
    assert lost.mean() == pytest.approx(m, rel=0.05)  # cards of about one quality: capacity ∝ card-hours
    assert (s["spot_bill"] == 0).all() and (s["n_preempted"] == 0).all()


def test_renewal_expectation_at_small_rates():
    """The reference expectation itself: a rate small enough that a card fails at most
    once gives rate × (R − R²/1,460) / 730 of the month down."""
    share, failed = down_share(0.01, 72.0, steps=7_300)
    assert share == pytest.approx(0.01 * (72 - 72**2 / 1460) / 730, rel=0.01)
    assert failed == pytest.approx(0.01, rel=0.01)


@pytest.mark.slow
def test_a_zone_down_all_month_is_the_mix_without_its_spot_cards():
    """Up spells of 0.001 h against down spells of 10^6 h: the zone is down from hour 0
    (but for a chance of 10^-9), its spot cards are taken at once and none comes back;
    they serve nothing and bill nothing, and every other flow is the mix's without them."""
    kw = dict(model="premium-70b", forecast_tokens=FORECAST, owned={"h100": 200}, rent_cap={"b200": 10})
    with_spot = P.Procurement(**kw, rent_spot={"h100": 40}, spot=SpotMarket(up_hours=0.001, down_hours=1e6))
    a = P.simulate(with_spot, 64, seed=2, keep_samples=True).samples
    b = P.simulate(P.Procurement(**kw), 64, seed=2, keep_samples=True).samples
    full = 40 * 700 * 730 * 3600  # the spot cards' month at quality 1, tokens
    # Away all month: what is left is float32 rounding of capacity less its losses.
    assert (a["spot_capacity_tokens"] < 1e-6 * full).all() and (a["spot_tokens"] < 1e-6 * full).all()
    assert (a["n_preempted"] == 40).all() and np.allclose(a["spot_lost_card_hours"], 40 * 730, rtol=1e-6)
    assert np.allclose(a["spot_bill"], 0.0, atol=0.05)
    for c in OLD_COLUMNS:
        if c in ("api_tokens", "api_bill", "api_share"):  # less the rounding above
            np.testing.assert_allclose(a[c], b[c], rtol=1e-6, err_msg=c)
        elif c == "bill" or c == "blended_ratio":
            np.testing.assert_allclose(a[c], b[c], rtol=1e-7, atol=0.05, err_msg=c)
        else:
            np.testing.assert_array_equal(a[c], b[c], err_msg=c)


# -- the mix search -----------------------------------------------------------------------

def test_mix_search_takes_the_spot_count():
    base = plan()
    plans = mix.candidates(base, owned_chips=("h100",), rent_chips=("b200",), owned_fractions=(0.5,),
                           rent_fractions=(0.0, 0.2))
    spots = {p.rent_spot for p in plans}
    # By default a plan that rents spot cards (h100 and b200 here) has their count searched.
    assert len(spots) > 1 and (0, 0, 0) in spots
    assert len({(p.slots, p.spot_slots, p.terms) for p in plans}) == 1
    assert plans[0].spot_slots == tuple(max(p.rent_spot[i] for p in plans) for i in range(3))
    # A plan without spot cards: no spot search, every mix as before.
    bare = plan(rent_spot={})
    plain = mix.candidates(bare, owned_chips=("h100",), rent_chips=("b200",), owned_fractions=(0.5,),
                           rent_fractions=(0.0, 0.2))
    assert {p.rent_spot for p in plain} == {(0, 0, 0)} and plain[0].spot_slots == (0, 0, 0)
    given = mix.candidates(bare, owned_chips=("h100",), rent_chips=("b200",), owned_fractions=(0.5,),
                           rent_fractions=(0.0,), spot_chips=("b200",), spot_fractions=(0.0, 0.24))
    # 0.24 × 250,000 tok/s / (700 × 2.4 tok/s per B200) = 35.7 → 36 cards
    assert {p.rent_spot for p in given} == {(0, 0, 0), (0, 36, 0)}


@pytest.mark.parametrize("kw, message", [
    (dict(spot_fractions=(-0.1,)), "spot_fractions=-0.1"),
    (dict(spot_chips=("tpu",)), "spot_chips='tpu'"),
])
def test_mix_search_bad_input(kw, message):
    with pytest.raises(ParamError) as exc:
        mix.candidates(plan(rent_spot={}), **kw)
    assert message in str(exc.value) and "\n" not in str(exc.value)


# -- files and the CLI ----------------------------------------------------------------------

PLAN_TOML = '''preset = "api-tax"
[rent_spot]
h100 = 60
[spot]
zones = 2
down_hours = 3
[failures]
rate = 0.5
repair_hours = 48
'''


@pytest.mark.slow
def test_cli_buy_json_with_terms(tmp_path, capsys):
    """The new figures come out in the JSON, finite (no NaN), with their units; the
    text report prints them."""
    path = tmp_path / "spot.toml"
    path.write_text(PLAN_TOML)
    assert main(["buy", str(path), "--n", "32", "--json"]) == 0
    text = capsys.readouterr().out

    def refuse(x):
        raise ValueError(f"not JSON: {x}")

    out = json.loads(text, parse_constant=refuse)
    assert out["rent_spot"] == {"h100": 60, "b200": 0, "a100-used": 0}
    stats = out["summary"]["stats"]
    assert stats["spot_lost_card_hours"]["mean"] > 0 and stats["owned_down_card_hours"]["mean"] > 0
    assert 0 < stats["spot_bill"]["mean"] < 60 * 2100 * 1.35 * 0.33
    assert out["figures"]["spot_bill_mean"]["units"] == "$"
    assert out["figures"]["spot_lost_card_hours_mean"]["units"] == "card-hours"
    assert out["provenance"]["scenario"]["failures"] == {"rate": 0.5, "repair_hours": 48.0}
    assert main(["buy", str(path), "--n", "32"]) == 0
    text = capsys.readouterr().out
    assert "spot bill ($)" in text and "owned down (c-h)" in text and "spot 60 h100" in text


@pytest.mark.parametrize("section, line, message", [
    ("failures", "rate = -1", "failures.rate=-1.0: must be a number in [0, 100]"),
    ("failures", "repair_hours = -5", "failures.repair_hours=-5.0: must be a number in [0, 1e+06]"),
    ("spot", "price_factor = 0", "spot.price_factor=0.0: must be a number in (0, 1]"),
    ("spot", "price_factor = 1.5", "spot.price_factor=1.5: must be a number in (0, 1]"),
    ("spot", "zones = 0", "spot.zones=0: must be an integer in [1, 1,024]"),
    ("spot", "wave_share = 1.2", "spot.wave_share=1.2: must be a number in [0, 1]"),
    ("spot", "up_hours = 0", "spot.up_hours=0.0: must be a number in (0, 1e+06]"),
    ("spot", "rate = -0.5", "spot.rate=-0.5: must be a number in [0, 100]"),
    ("spot", "fallback_hours = 3", "spot.fallback_hours=3: is not a field of spot"),
    ("rent_spot", "h100 = -3", "rent_spot.h100=-3: must be an integer in [0, 10,000,000]"),
    ("rent_spot", "tpu = 3", "rent_spot.chip='tpu': must be one of h100, b200, a100-used"),
])
def test_cli_refuses_bad_terms_in_one_line(tmp_path, capsys, section, line, message):
    path = tmp_path / "bad.toml"
    path.write_text(f'preset = "api-tax"\n[{section}]\n{line}\n')
    assert main(["buy", str(path), "--n", "8"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_spot_slots_must_hold_the_spot_cards():
    with pytest.raises(ParamError, match=r"^spot_slots\.h100=3: must be at least rent_spot = 5$"):
        P.Procurement(rent_spot={"h100": 5}, spot_slots=(3, 0, 0))


def test_a_spot_only_plan_without_the_api_is_a_mix():
    p = P.Procurement(api=False, rent_spot={"h100": 4})
    assert p.terms is not None and p.terms.any_spot and p.spot_cents() == 4 * round(2100 * 1.35 * 0.33 * 100)


@pytest.mark.slow
def test_optimiser_searches_spot_and_its_figures_are_simulate_s():
    """A market that never takes a card back (wave_share 0, no lone preemptions) makes a
    spot card an on-demand card at a third of the price: the cheapest passing mix rents
    spot cards and no on-demand ones. Its figures are simulate's on the same months
    (common random numbers; padding changes float32 sums in the last bits only)."""
    n = 64
    base = P.Procurement(model="premium-70b", forecast_tokens=FORECAST, sigma=0.1, demand=DEMAND,
                         rent_spot={"h100": 1}, failures=Repairs(rate=0.2),
                         spot=SpotMarket(wave_share=0.0, zones=2), checks=P.BuyChecks(overflow_max=0.02))
    r = mix.optimise(base, target=0.9, n=n, seed=1, owned_chips=("h100",), rent_chips=("h100",),
                     owned_fractions=(0.7, 1.0), rent_fractions=(0.0, 0.6), spot_fractions=(0.0, 0.6))
    assert set(r.table["spot"]) == {0, round(0.6 * MEAN_RATE / 700)}
    assert r.best is not None and r.best_row["spot"] > 0 and r.best_row["rented"] == 0
    exact = P.Procurement.from_dict({"slots": None, "spot_slots": None}, base=r.best)
    s = P.simulate(exact, n, seed=1).summary
    assert s["stats"]["bill"]["mean"] == pytest.approx(r.best_row["bill_mean"], rel=1e-6)
    assert s["stats"]["spot_bill"]["mean"] == pytest.approx(r.best_row["spot_bill_mean"], rel=1e-6)
    for check in mix.CHECKS:
        assert s["pass"][check]["rate"] == pytest.approx(r.best_row[f"pass_{check}"], abs=2 / n)


def test_month_with_terms_traces_under_strict_promotion():
    """No silent dtype promotion or rank broadcasting in the month with every term on
    (traced only: the checks act at trace time)."""
    p = plan()
    key = engine.month_keys(0, jnp.uint32(0), 1)[0]
    with jax.numpy_dtype_promotion("strict"), jax.numpy_rank_promotion("raise"):
        out = jax.eval_shape(lambda k: M.outcome(M.draw(k, p), p), key)
    assert set(out) == set(M.OUTPUTS) and all(x.shape == () and x.dtype == jnp.float32 for x in out.values())
