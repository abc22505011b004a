"""Unserved demand (SPEC §4): the API takes whatever cards leave; a plan without
it leaves that unserved, and the month fails the served check.

The bug this guards: with ``api = false`` and rent capped at 0, a third of demand
went unserved while every check passed (overflow counts only the API's share, the
margin is judged on served tokens). Each case here is the same premium-70b forecast
and one padded shape (``SLOTS``), so a case costs one compilation per API setting.
"""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import ref_procurement as ref
from conftest import one_fast
from test_procurement import draw_and_outcome

import mc.engine.run as engine_run
from mc import buy as P
from mc import engine
from mc.buy import mix
from mc._validate import ParamError
from mc.cli import main
from mc.fleet.demand import Demand
from mc.buy.report import BUY_CHECKS, format_buy

N = 120
SLOTS = (300, 400, 0)  # h100, b200, a100-used
MEAN_RATE = 250_000.0  # tok/s
FORECAST = MEAN_RATE * 730 * 3600
NO_RENT = {"h100": 0, "b200": 0, "a100-used": 0}
# 300 H100 carry 300 × 700 × 0.96 ≈ 201,600 tok/s, below the 250,000 mean: about a
# fifth to a half of every month unserved without the API. 400 B200 carry
# 400 × 1,680 × 0.96 ≈ 645,000 tok/s, above any hour's demand (peak 1.3 × the mean
# times a lognormal error of sd 0.15: 1.3 × 1.8 × 250,000 ≈ 585,000 at z = 4).
CASES = {
    # name: (owned, rent_cap, api, unserved_max, what the served check does in every month)
    "no-api-no-rent": ({"h100": 300}, NO_RENT, False, 0.0, "fails"),
    "no-api-ample": ({"b200": 400}, NO_RENT, False, 0.0, "passes"),
    "no-api-rent-fills": ({"h100": 300}, {"b200": 400}, False, 0.0, "either"),
    "no-api-no-rent-tolerant": ({"h100": 300}, NO_RENT, False, 0.25, "either"),
    "api-no-rent": ({"h100": 300}, NO_RENT, True, 0.0, "passes"),
    "api-ample": ({"b200": 400}, NO_RENT, True, 0.0, "passes"),
}


def plan(name: str) -> P.Procurement:
    owned, caps, api, limit, _ = CASES[name]
    return P.Procurement(model="premium-70b", forecast_tokens=FORECAST, sigma=0.15,
                         demand=Demand(shape="diurnal", amplitude=0.3, peak_hour=14.0),
                         owned=owned, rent_cap=caps, api=api, checks=P.BuyChecks(unserved_max=limit), slots=SLOTS)


@pytest.fixture(scope="module")
def samples():
    return {name: P.simulate(plan(name), N, seed=5, keep_samples=True) for name in CASES}


@pytest.mark.parametrize("name", list(CASES))
def test_served_check(samples, name):
    r = samples[name]
    s, p = r.samples, r.plan
    unserved, share = s["unserved_tokens"].to_numpy(), s["unserved_share"].to_numpy()
    served, ok = s["pass_served"].to_numpy(), s["pass_all"].to_numpy()
    assert list(r.summary["pass"]) == ["idle", "margin", "overflow", "served", "all"]
    np.testing.assert_array_equal(served, share <= p.checks.unserved_max)
    np.testing.assert_array_equal(ok, s["pass_idle"] & s["pass_margin"] & s["pass_overflow"] & served)
    assert r.summary["pass"]["served"]["rate"] == served.mean()
    if p.api:  # the API takes the rest: nothing unserved, exactly
        assert np.all(unserved == 0.0) and np.all(share == 0.0)
    else:
        assert np.all(s["api_tokens"] == 0.0)
        served_tok = s["owned_tokens"] + s["rented_tokens"] + unserved
        np.testing.assert_allclose(served_tok, s["demand_tokens"], rtol=1e-5)
    if p.checks.unserved_max == 0.0:
        np.testing.assert_array_equal(served, unserved == 0.0)  # the limit 0 is exact: no tolerance
    expect = CASES[name][-1]
    if expect == "passes":
        assert np.all(unserved == 0.0) and np.all(served)
    elif expect == "fails":
        assert np.all(share > 0.0) and not np.any(served) and not np.any(ok)
    else:
        assert 0 < served.mean() < 1  # some months carried, some not


def test_the_bug_no_api_no_rent(samples):
    """What the three old checks said of a third of demand dropped: pass. The served
    check fails every such month, and so does pass_all."""
    s = samples["no-api-no-rent"].samples
    old = s["pass_idle"] & s["pass_margin"] & s["pass_overflow"]
    assert old.mean() > 0.9  # idle, margin and overflow all miss it
    assert 0.2 < s["unserved_share"].median() < 0.35
    assert not s["pass_all"].any()
    # with the API on, the same cards send that third to the API and the overflow check fails
    api = samples["api-no-rent"].samples
    assert api["pass_overflow"].mean() < 0.1 and api["pass_served"].all()
    np.testing.assert_allclose(api["api_tokens"], s["unserved_tokens"], rtol=1e-5)  # the same months


def test_rent_fills_the_forecast_peak_only(samples):
    """Rented cards fill the forecast's peak at rated rate; a month above forecast (or
    cards below rated) leaves the peak hours unserved, one that is not carries all."""
    r = samples["no-api-rent-fills"]
    assert r.plan.rented[1] > 0
    s = r.samples
    carried = s["pass_served"].to_numpy()
    assert np.all(s["unserved_tokens"][carried] == 0.0) and np.all(s["rented_tokens"][carried] > 0)
    # which months drop demand is the demand error's doing (the quality of 369 cards
    # sums to within a fraction of a percent): every dropping month is above the
    # median carried one
    assert s["demand_error"][~carried].min() > np.median(s["demand_error"][carried])


# -- against the NumPy reference, on shared draws --------------------------------------



@pytest.mark.parametrize("name", one_fast(CASES))
def test_served_matches_reference(name):
    """Every month's unserved share, served and pass_all flags against the reference;
    where the reference (float64) has capacity cover every hour with a margin, the
    device's float32 month leaves exactly zero unserved."""
    p = plan(name)
    owned, caps, api, limit, _ = CASES[name]
    shape = ref.profile(0.3, 14.0)
    rent = ref.rented(p.model, owned, caps, p.forecast_tokens, shape)
    assert dict(zip(P.CHIP_NAMES, p.rented)) == rent
    owned_c, rented_c = ref.bill_cents(owned, rent)
    draws, out = draw_and_outcome(engine.month_keys(11, jnp.uint32(0), 48), p)
    cols = P.settle(p, {k: np.asarray(x) for k, x in out.items()})
    d = jax.tree.map(np.asarray, draws)
    flips = 0
    for i in range(48):
        chip = {c: (d.quality[j].z[i], d.quality[j].u_lemon[i]) for j, c in enumerate(P.CHIP_NAMES)}
        tok = ref.month(d.demand_z[i], chip, p.model, owned, rent, p.forecast_tokens, 0.15, shape, api)
        want = ref.checks(p.model, tok, owned_c, rented_c, unserved_max=limit)
        assert cols["unserved_share"][i] == pytest.approx(want["unserved_share"], rel=1e-4, abs=1e-6)
        # capacity against the peak hour (tok/s): covered by 1e-5 of it, exactly nothing unserved
        peak = MEAN_RATE * np.exp(0.15 * float(d.demand_z[i]) - 0.15**2 / 2) * shape.max()
        cap = (tok["owned_capacity_tokens"] + tok["rented_capacity_tokens"]) / ref.SECONDS
        if cap > peak * (1 + 1e-5):
            assert cols["unserved_tokens"][i] == 0.0 and cols["unserved_share"][i] == 0.0
            assert want["unserved_share"] == 0.0 and cols["pass_served"][i]
        elif not api and cap < peak * (1 - 1e-5):
            assert cols["unserved_tokens"][i] > 0.0 and want["unserved_share"] > 0.0
            if limit == 0.0:
                assert not cols["pass_served"][i] and not cols["pass_all"][i]
        # a flag may flip only where its ratio is within float32 of its limit (for the
        # served check at limit 0: where capacity is within float32 of the peak hour)
        near = {c: abs(want[r] - getattr(p.checks, lim)) <= 1e-4 for c, r, lim in BUY_CHECKS}
        near["served"] = 0 < abs(want["unserved_share"] - limit) <= 1e-4 or \
            (limit == 0.0 and not api and abs(cap / peak - 1) <= 1e-5)
        for c in near:
            if not near[c]:
                assert bool(cols[f"pass_{c}"][i]) == want[f"pass_{c}"], c
        if any(near.values()):
            flips += 1
        else:
            assert bool(cols["pass_all"][i]) == want["pass_all"]
    assert flips <= 2  # a flip needs a ratio within float32 of its limit


# -- the optimiser ---------------------------------------------------------------------

def test_optimiser_does_not_pick_a_mix_that_leaves_demand_unserved():
    """Without the API, owning 0.6 of the mean rate is the cheapest mix and passes idle,
    margin and overflow in every month; it leaves 40% unserved, so it is not the answer:
    the cheapest mix that carries the demand (flat, forecast good to ±2%) is."""
    base = P.Procurement(model="chat-8b", forecast_tokens=2e12, sigma=0.02, demand=Demand(shape="flat"),
                         owned={"b200": 1}, api=False)
    r = mix.optimise(base, target=0.9, n=200, seed=3, owned_chips=("b200",), rent_chips=("b200",),
                     owned_fractions=(0.6, 0.9, 1.1), rent_fractions=(0.0, 0.3))
    t = r.table
    assert {"pass_served", "pass_served_lo", "pass_served_hi", "unserved_share_mean"} <= set(t.columns)
    cheapest = t.iloc[0]
    assert cheapest["owned"] == 19 and cheapest["rented"] == 0  # 0.6 × 761,035 / 24,000 tok/s
    assert min(cheapest[f"pass_{c}"] for c in ("idle", "margin", "overflow")) >= 0.9
    assert cheapest["pass_served"] == 0.0 and cheapest["pass_all"] == 0.0
    assert cheapest["unserved_share_p50"] > 0.3
    assert r.best is not None and r.best_row["pass_served"] >= 0.9 and r.best_row["pass_all"] >= 0.9
    assert r.best_row["unserved_share_p50"] == 0.0 and r.best.owned == (0, 35, 0)  # 1.1 × the mean rate
    # every cheaper mix passed the three other checks: only the served check turns them down
    cheaper = t[t["bill_mean"] < r.best_row["bill_mean"]]
    assert len(cheaper) >= 3 and (cheaper[["pass_idle", "pass_margin", "pass_overflow"]] >= 0.9).all().all()
    assert (cheaper["pass_served"] < 0.9).all()
    assert (t["pass_all"] <= t["pass_served"]).all()


# -- the checks' parameters --------------------------------------------------------------

@pytest.mark.parametrize("limit, message", [
    (-0.1, "checks.unserved_max=-0.1: must be a number in [0, 10]"),
    (11, "checks.unserved_max=11"),
    ("none", "checks.unserved_max='none'"),
    (float("nan"), "checks.unserved_max=nan"),
])
def test_unserved_max_is_validated(limit, message):
    with pytest.raises(ParamError) as exc:
        P.BuyChecks(unserved_max=limit)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_unserved_max_from_a_file(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text('preset = "api-tax"\napi = false\n[checks]\nunserved_max = 0.05\n')
    assert main(["buy", str(path), "--n", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["provenance"]["scenario"]["checks"]["unserved_max"] == 0.05
    path.write_text('preset = "api-tax"\n[checks]\nunserved_max = -1\n')
    assert main(["buy", str(path), "--n", "2"]) == 2
    assert "checks.unserved_max=-1" in capsys.readouterr().err


# -- the CLI: unserved tokens in the text and the JSON; Ctrl-C ----------------------------

NO_API = ('model = "premium-70b"\nforecast_tokens = {f}\nsigma = 0.15\napi = false\n'
          'owned = {{h100 = 300}}\nrent_cap = {{h100 = 0, b200 = 0}}\n').format(f=FORECAST)


@pytest.fixture
def no_api_file(tmp_path):
    path = tmp_path / "no-api.toml"
    path.write_text(NO_API)
    return str(path)


def test_cli_text_shows_unserved(no_api_file, capsys):
    assert main(["buy", no_api_file, "--n", str(N)]) == 0
    text = capsys.readouterr().out
    for row in ("unserved share", "unserved (T tok)", "pass served", "(unserved_share <= 0)", "API off"):
        assert row in text, row
    assert "PARTIAL" not in text and "interrupted" not in text
    line = next(x for x in text.splitlines() if x.startswith("pass all"))
    assert line.split()[2] == "0.0%"


def test_cli_json_has_unserved(no_api_file, capsys):
    assert main(["buy", no_api_file, "--n", str(N), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pass_served"] == 0.0 and out["pass_all"] == 0.0 and out["pass_overflow"] == 1.0
    assert 0.1 < out["unserved_share_p50"] < 0.5
    assert "partial" not in out and "partial" not in out["summary"]
    assert out["summary"]["pass"]["served"]["rate"] == 0.0
    assert out["summary"]["stats"]["unserved_tokens"]["mean"] > 0
    f = out["figures"]
    assert f["unserved_tokens_mean"]["units"] == "tokens" and f["unserved_share_mean"]["units"] == "share"
    assert f["pass_served"]["value"] == 0.0 and f["pass_served"]["units"] == "share"


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("merged", [0, 1, 3])
def test_cli_interrupted_exits_130_partial(no_api_file, monkeypatch, capsys, merged, as_json):
    """A Ctrl-C after ``merged`` of 4 chunks (raised from inside the merge, not by a
    timer): the months merged so far, marked partial, exit 130."""
    real, calls = engine_run._merge, []

    def merge(pending, fn, run, bar):
        calls.append(1)
        if len(calls) > merged:
            raise KeyboardInterrupt
        real(pending, fn, run, bar)

    monkeypatch.setattr(engine_run, "_merge", merge)
    argv = ["buy", no_api_file, "--n", "400", "--chunk", "100"] + (["--json"] if as_json else [])
    assert main(argv) == 130
    out = capsys.readouterr().out
    done = 100 * merged
    if as_json:
        obj = json.loads(out)
        assert obj["partial"] is True and obj["n"] == done and obj["requested"] == 400
        assert obj["summary"]["partial"] is True and obj["summary"]["n"] == done
        if done:
            assert obj["figures"]["pass_served"]["value"] == 0.0
    else:
        assert f"interrupted after {done:,} of 400 months: partial" in out
        assert "PARTIAL: stopped early" in out.splitlines()[0]
        assert ("pass served" in out) == bool(done)


def test_format_buy_partial_without_months():
    r = P.BuyResult(plan("api-ample"), 0, 0, {"n": 0, "partial": True}, requested=50)
    text = format_buy("x", r)
    assert "interrupted after 0 of 50 months: partial" in text and "pass" not in text
