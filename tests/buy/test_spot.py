"""Capacity that goes away in a mix (SPEC §4 with §10's terms): owned cards that fail
and are repaired, spot cards beside on-demand ones.

Every term off is today's month bit for bit (fingerprints taken before the terms
existed); the JAX month agrees with a per-event NumPy reference on the same draws;
the zone process and the failures match their laws within intervals from the
sample; a zone down all month is the mix without its spot cards.
"""

from __future__ import annotations

import hashlib
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
        assert cols["spot_bill"][i] == pytest.approx(want["spot_bill"], abs=0.05)
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
