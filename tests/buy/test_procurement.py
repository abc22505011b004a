"""Buying the fleet (SPEC §4): the JAX month against a NumPy reference on shared
draws, the challenges, the presets, reproducibility, the CLI and bad input.

Compiling a month takes seconds on CPU, so the reference cases share one padded
shape (``SLOTS``) and the preset and CLI tests share ``N`` months.
"""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import ref_procurement as ref
from conftest import one_fast

from mc import engine
from mc import buy as P
from mc.buy import month as M
from mc.buy import presets as PP
from mc._validate import ParamError
from mc.cli import main
from mc.fleet.demand import Demand
from mc.fleet.lottery import Lottery

N = 200  # months for preset and CLI runs (one compile per preset)
SLOTS = (300, 200, 600)  # h100, b200, a100-used: one compiled shape for every case below
MEAN_RATE = 250_000.0  # tok/s, the cases' forecast mean
FORECAST = MEAN_RATE * 730 * 3600

CASES = {
    # owned H100 + B200 below the peak; B200 rented first (cheapest per token) up to
    # its cap of 40, then used A100s fill the rest.
    "mixed": dict(owned={"h100": 100, "b200": 50}, rent_cap={"b200": 40, "a100-used": 400},
                  sigma=0.15, amplitude=0.3, peak_hour=14.0),
    # flat demand, a wide forecast error and 30% lemons; the H100 rent cap binds.
    "lemons-flat": dict(owned={"a100-used": 500}, rent_cap={"h100": 30}, sigma=0.4,
                        amplitude=0.0, peak_hour=0.0, lottery={"lemon_rate": 0.3}),
    "rent-only": dict(owned={}, rent_cap={"b200": 150, "h100": 300}, sigma=0.2,
                      amplitude=0.5, peak_hour=20.0),
    "oversized": dict(owned={"b200": 200}, rent_cap={"h100": 300}, sigma=0.1,
                      amplitude=0.3, peak_hour=3.5),
}


def make(case: dict, api: bool = True) -> P.Procurement:
    return P.Procurement(model="premium-70b", forecast_tokens=FORECAST, sigma=case["sigma"],
                         demand=Demand(shape="diurnal", amplitude=case["amplitude"],
                                       peak_hour=case["peak_hour"]),
                         owned=case["owned"], rent_cap=case["rent_cap"], api=api,
                         lottery=Lottery(**case.get("lottery", {})), slots=SLOTS)


@jax.jit
def draw_and_outcome(keys, p):
    def one(k):
        d = M.draw(k, p)
        return d, M.outcome(d, p)

    return jax.vmap(one)(keys)


def months(p: P.Procurement, n: int = 48, seed: int = 7):
    return draw_and_outcome(engine.month_keys(seed, jnp.uint32(0), n), p)


def agrees_with_reference(p: P.Procurement, owned: dict, caps: dict, lottery: dict | None, n: int = 48):
    """Rented cards and bills exactly, every month's flows and checks to float32
    tolerance, against the NumPy reference on the same draws."""
    model, api, sigma = p.model, p.api, p.sigma
    shape = ref.profile(p.demand.amplitude, p.demand.peak_hour)
    rent = ref.rented(model, owned, caps, p.forecast_tokens, shape)
    assert dict(zip(P.CHIP_NAMES, p.rented)) == rent  # whole cards: exact
    owned_c, rented_c = ref.bill_cents(owned, rent)
    assert (p.owned_cents(), p.rented_cents()) == (owned_c, rented_c)  # exact cents

    draws, out = months(p, n)
    cols = P.settle(p, {k: np.asarray(x) for k, x in out.items()})
    d = jax.tree.map(np.asarray, draws)
    for i in range(d.demand_z.shape[0]):
        chip = {c: (d.quality[j].z[i], d.quality[j].u_lemon[i]) for j, c in enumerate(P.CHIP_NAMES)}
        tok = ref.month(d.demand_z[i], chip, model, owned, rent, p.forecast_tokens, sigma, shape, api, lottery)
        # float32 on the device: each flow good to ~1e-6 of the month's demand
        # (the API's share is a difference of hourly rates, so relative to demand).
        tol = 2e-6 * tok["demand_tokens"]
        for key, want in tok.items():
            assert cols[key][i] == pytest.approx(want, rel=2e-5, abs=tol), key
        want = ref.checks(model, tok, owned_c, rented_c)
        assert cols["bill"][i] == pytest.approx(want["bill"], abs=1e-6 * p.api_price * tol)
        c = p.checks
        for check, ratio, limit in (("pass_idle", "idle_share", c.idle_max),
                                    ("pass_margin", "blended_ratio", c.margin_max),
                                    ("pass_overflow", "api_share", c.overflow_max),
                                    ("pass_served", "unserved_share", c.unserved_max)):
            assert cols[ratio][i] == pytest.approx(want[ratio], rel=1e-4, abs=1e-6)
            if abs(want[ratio] - limit) > 1e-4:  # a flip needs a ratio within float32 of its limit
                assert bool(cols[check][i]) == want[check], check
    return cols


@pytest.mark.parametrize("api", [True, False], ids=["api", "no-api"])
@pytest.mark.parametrize("name", one_fast(CASES))
def test_month_matches_numpy_reference(name, api):
    case = CASES[name]
    cols = agrees_with_reference(make(case, api), case["owned"], case["rent_cap"], case.get("lottery"))
    if not api:
        assert np.all(cols["api_bill"] == 0) and np.all(cols["api_share"] == 0)


def test_month_under_strict_promotion():
    p = make(CASES["mixed"])
    draws, out = months(p)
    with jax.numpy_dtype_promotion("strict"), jax.numpy_rank_promotion("raise"):
        strict = jax.jit(jax.vmap(M.outcome, in_axes=(0, None)))(draws, p)
    for key in out:
        np.testing.assert_allclose(np.asarray(strict[key]), np.asarray(out[key]), rtol=1e-6)


@pytest.mark.parametrize("name", one_fast(PP.names()))
def test_presets_match_numpy_reference(name):
    """Every buying preset, a few months, against the reference (a new preset gets
    its reference test)."""
    p = PP.get(name)
    owned = {c: n for c, n in zip(P.CHIP_NAMES, p.owned) if n}
    caps = {c: n for c, n in zip(P.CHIP_NAMES, p.rent_cap) if n}
    agrees_with_reference(p, owned, caps, None, n=3)


def test_draws_have_the_stated_distributions():
    p = make(CASES["oversized"])
    draws, out = months(p, n=48)
    q = np.asarray(jax.vmap(lambda d: __import__("mc").fleet.lottery.quality(d, p.lottery))(draws.quality[1]))
    assert q.min() >= 0.5 and q.max() <= 1.5
    assert q.mean() == pytest.approx(0.96, abs=0.002)  # 48 × 200 cards
    assert q.std() == pytest.approx(0.05, rel=0.05)
    err = np.asarray(out["demand_error"])
    assert err.mean() == pytest.approx(1.0, abs=0.05)  # lognormal with mean one, sigma 0.1


# -- the three challenges ----------------------------------------------------------

def test_fleet_tokens():
    # 10 H100 on chat-8b: 10 × 10,000 tok/s × 2,628,000 s = 2.628e11 tokens
    assert P.fleet_tokens("chat-8b", {"h100": 10}) == pytest.approx(2.628e11, rel=1e-12)
    # 2 B200 + 4 used A100 on premium-70b at quality 0.96:
    # (2 × 1,680 + 4 × 315) tok/s × 0.96 × 2,628,000 s = 4,620 × 0.96 × 2,628,000
    assert P.fleet_tokens("premium-70b", {"b200": 2, "a100-used": 4}, quality=0.96) == \
        pytest.approx(4620 * 0.96 * 2_628_000, rel=1e-12)


@pytest.mark.parametrize("cards_short, cap, want", [
    (2.0, None, 2), (2.5, None, 3), (0.0, None, 0), (-3.0, None, 0), (7.2, 5, 5), (1e-9, None, 0)])
def test_rent_to_fill(cards_short, cap, want):
    per_card = 1680.0 * 2_628_000  # one B200 month of premium-70b tokens
    assert P.rent_to_fill("premium-70b", cards_short * per_card, "b200", cap=cap) == want


def test_api_bill():
    # 1T tokens of chat-8b at $0.20 per 1M = 1e6 × $0.20 = $200,000
    assert P.api_bill("chat-8b", 1e12) == pytest.approx(200_000.0, rel=1e-12)
    assert P.api_bill("premium-70b", 4e6) == pytest.approx(10.0, rel=1e-12)


# -- presets -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def preset_results():
    return {name: P.simulate(PP.get(name), N, seed=0) for name in PP.names()}


@pytest.mark.slow
@pytest.mark.parametrize("name, check", [
    ("used-chip-bargain", "margin"), ("shiny-chip-bet", "idle"), ("api-tax", "overflow")])
def test_presets_fail_their_check(preset_results, name, check):
    s = preset_results[name].summary
    assert s["pass"][check]["rate"] < 0.5
    assert s["pass"]["all"]["rate"] < 0.5


@pytest.mark.slow
def test_presets_fail_different_checks(preset_results):
    failing = {name: {c for c in ("idle", "margin", "overflow") if r.summary["pass"][c]["rate"] < 0.5}
               for name, r in preset_results.items()}
    assert failing["used-chip-bargain"] == {"margin"}
    assert failing["api-tax"] == {"overflow"}
    assert "idle" in failing["shiny-chip-bet"]


@pytest.mark.slow
def test_shiny_chip_bet_is_the_story(preset_results):
    p = PP.get("shiny-chip-bet")
    assert p.owned == (0, 152_069, 0) and p.owned_cents() == 441_000_100_00  # $441,000,100
    s = preset_results["shiny-chip-bet"].summary["stats"]
    assert s["bill"]["p50"] == 441_000_100.0  # nothing rented, no API: exact
    assert 0.6 < s["idle_share"]["p50"] < 0.8  # the story: about 71% idle


@pytest.mark.slow
def test_reproducible_across_chunks(preset_results):
    p = PP.get("api-tax")
    a = P.simulate(p, N, seed=0, chunk=64, keep_samples=True).samples
    b = P.simulate(p, N, seed=0, keep_samples=True).samples
    pd_equal = a.equals(b)
    assert pd_equal
    assert preset_results["api-tax"].summary == P.simulate(p, N, seed=0).summary
    assert not np.array_equal(P.simulate(p, N, seed=1, keep_samples=True).samples["bill"], b["bill"])


# -- CLI ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_cli_buy_json(capsys):
    assert main(["buy", "api-tax", "--n", str(N), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("bill_p50", "idle_p50", "blended_ratio_p50", "api_share_p50", "unserved_share_p50",
                "pass_idle", "pass_margin", "pass_overflow", "pass_served", "pass_all"):
        assert key in out
    for key in ("idle_p50", "blended_ratio_p50", "api_share_p50", "unserved_share_p50", "pass_idle",
                "pass_margin", "pass_overflow", "pass_served", "pass_all"):
        assert 0.0 <= out[key] <= 1.0
    assert out["pass_served"] == 1.0 and out["unserved_share_p50"] == 0.0  # the API takes the rest
    assert out["bill_p50"] > 0 and out["owned"]["h100"] == PP.get("api-tax").owned[0]


def test_cli_buy_text_and_toml(tmp_path, capsys):
    path = tmp_path / "mix.toml"
    path.write_text('preset = "api-tax"\nsigma = 0.15\n[checks]\noverflow_max = 0.5\n')
    assert main(["buy", str(path), "--n", str(N)]) == 0
    text = capsys.readouterr().out
    assert "pass overflow" in text and "(api_share <= 0.5)" in text
    assert "pass served" in text and "(unserved_share <= 0)" in text and "unserved (T tok)" in text


@pytest.mark.parametrize("argv, message", [
    (["buy", "no-such-preset"], "must be a preset (used-chip-bargain, shiny-chip-bet, api-tax)"),
    (["buy", "{dir}/bad.toml"], "is not a procurement field"),
    (["buy", "{dir}/nothing.toml"], "must own cards, allow rented cards or use the API"),
    (["buy", "{dir}/missing.toml"], "no such file"),
    (["buy", "api-tax", "--n", "0"], "n=0"),
])
def test_cli_buy_errors(tmp_path, capsys, argv, message):
    (tmp_path / "bad.toml").write_text('model = "premium-70b"\nowend = {h100 = 3}\n')
    (tmp_path / "nothing.toml").write_text('model = "chat-8b"\napi = false\n')
    argv = [a.format(dir=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_argparse_error_exits_2():
    with pytest.raises(SystemExit) as exc:
        main(["buy", "api-tax", "--n", "many"])
    assert exc.value.code == 2


# -- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("kw, message", [
    (dict(model="gpt-9"), "model='gpt-9': must be one of chat-8b, premium-70b"),
    (dict(owned={"tpu": 3}), "owned.chip='tpu': must be one of h100, b200, a100-used"),
    (dict(forecast_tokens=0), "forecast_tokens=0"),
    (dict(forecast_tokens=-1e12), "forecast_tokens=-1000000000000.0: must be a number in (0, 1e+18]"),
    (dict(prices={"h100": 0}), "prices.h100=0"),
    (dict(api_price=-2.5), "api_price=-2.5"),
    (dict(h100_rate=0.0), "h100_rate=0.0"),
    (dict(owned={"h100": -1}), "owned.h100=-1"),
    (dict(owned={"h100": 2.5}), "owned.h100=2.5"),
    (dict(sigma=-0.1), "sigma=-0.1"),
    (dict(api=False), "mix='no cards, no API'"),
    (dict(api="yes"), "api='yes'"),
    (dict(demand=Demand(shape="bursty")), "demand.shape='bursty'"),
    (dict(owned={"h100": 10}, slots=(5, 0, 0)), "slots.h100=5: must be at least owned + rented = 10"),
])
def test_bad_input(kw, message):
    with pytest.raises(ParamError) as exc:
        P.Procurement(**kw)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_unknown_chip_in_challenge_lists_known():
    with pytest.raises(ParamError, match="chip='v100': must be one of h100, b200, a100-used"):
        P.rent_to_fill("chat-8b", 1e12, "v100")
