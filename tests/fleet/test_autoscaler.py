"""SPEC §6: the autoscaler month agrees with its NumPy reference on the same
draws, and with one round and no replacement it is §1's month to the bit."""

import jax
import numpy as np
import pytest

import mc
from conftest import assert_outputs_agree, assert_rounds_agree, autoscaler_draws, one_fast
from mc import engine
from mc.fleet import autoscaler, month
from mc.fleet.outages import ledger as outage_ledger
from ref_autoscaler import month as ref_month


def _sc(pool="16 x flagship", **kw):
    base = mc.Scenario.from_dict({"pool": pool})
    return base.replace(kw)


diurnal = {"demand.shape": "diurnal", "demand.amplitude": 0.35, "demand.peak_hour": 15}
SCENARIOS = {
    "share-daily-replace-lemons": _sc(**{
        "window.hours": 24, "eviction.share": 0.125, "runset": "steady", "demand.level": 80_000,
        "lottery.lemon_rate": 0.15, "autoscaler": {"period": 24, "replace": True}}),
    "threshold-strikes2-min-age-peak-diurnal": _sc(**{
        "window.hours": 12, "eviction.policy": "threshold", "eviction.theta": 0.9, "eviction.max_share": 0.25,
        "runset": "peak", "demand.level": 70_000, **diurnal, "lottery.lemon_rate": 0.2,
        "autoscaler": {"period": 12, "replace": True, "strikes": 2, "min_age": 48, "boot_hours": 2}}),
    "threshold-strikes3-no-replace-all": _sc(**{
        "window.hours": 6, "eviction.policy": "threshold", "eviction.theta": 0.95, "eviction.max_share": 0.5,
        "runset": "all", "demand.level": 50_000, "lottery.lemon_rate": 0.1,
        "autoscaler": {"period": 24, "strikes": 3}}),
    "mixed-fractional-boot-steady-diurnal": _sc(pool="6 x bargain + 8 x flagship", **{
        "window.hours": 48, "eviction.share": 0.15, "runset": "steady", "demand.level": 55_000, **diurnal,
        "lottery.lemon_rate": 0.25, "autoscaler": {"period": 48, "replace": True, "boot_hours": 5.5}}),
    "short-window-ragged-rounds-no-boot": _sc(pool="10 x flagship", **{
        "window.hours": 3, "eviction.share": 0.1, "runset": "steady", "demand.level": 40_000,
        "autoscaler": {"period": 7, "replace": True, "boot_hours": 0}}),
    "one-round-replace": _sc(**{
        "window.hours": "day", "eviction.share": 0.25, "runset": "peak", "demand.level": 60_000,
        "lottery.lemon_rate": 0.2, "autoscaler": {"replace": True, "boot_hours": 3}}),
    "threshold-min-age-past-window-no-replace": _sc(pool="12 x bargain", **{
        "window.hours": 24, "eviction.policy": "threshold", "eviction.theta": 0.97, "runset": "steady",
        "demand.level": 25_000, **diurnal, "lottery.lemon_rate": 0.3,
        "autoscaler": {"period": 100, "min_age": 200, "strikes": 1}}),
    "share-strikes2-dip-heavy-mixed": _sc(pool="5 x bargain + 5 x flagship", **{
        "window.hours": 8, "eviction.share": 0.2, "runset": "peak", "demand.level": 35_000,
        "dips.rate": 20.0, "dips.mean_hours": 10.0, "dips.max_count": 16, "lottery.lemon_rate": 0.1,
        "autoscaler": {"period": 36, "replace": True, "strikes": 2, "boot_hours": 4.25}}),
    # Past the pairwise size: ranks, medians and the run set by sorting.
    "pool-70-threshold-mixed": _sc(pool="30 x bargain + 40 x flagship", **{
        "window.hours": 24, "eviction.policy": "threshold", "eviction.theta": 0.9, "eviction.max_share": 0.2,
        "runset": "peak", "demand.level": 200_000, **diurnal, "lottery.lemon_rate": 0.1,
        "autoscaler": {"period": 146, "replace": True, "strikes": 2}}),
    # Every registered rule (test_every_policy_has_a_reference_scenario): the median
    # and MAD over the eligible cards only, each card against its own rated rate.
    "zscore-daily-replace-min-age-boot": _sc(**{
        "window.hours": 24, "eviction.policy": "zscore", "eviction.k": 2.0, "eviction.max_share": 0.25,
        "runset": "peak", "demand.level": 80_000, **diurnal, "lottery.lemon_rate": 0.2,
        "autoscaler": {"period": 24, "replace": True, "min_age": 36, "boot_hours": 3}}),
    "zscore-70-mixed-strikes2": _sc(pool="30 x bargain + 40 x flagship", **{
        "window.hours": 12, "eviction.policy": "zscore", "eviction.k": 1.5, "eviction.max_share": 0.1,
        "runset": "steady", "demand.level": 180_000, "lottery.lemon_rate": 0.1,
        "autoscaler": {"period": 73, "replace": True, "strikes": 2}}),
    "floor-mixed-strikes2-no-replace": _sc(pool="6 x bargain + 8 x flagship", **{
        "window.hours": 6, "eviction.policy": "floor", "eviction.floor": 0.9, "eviction.max_share": 0.3,
        "runset": "all", "demand.level": 40_000, "lottery.lemon_rate": 0.25,
        "autoscaler": {"period": 48, "strikes": 2}}),
    "floor-daily-replace-lemons": _sc(**{
        "window.hours": "day", "eviction.policy": "floor", "runset": "steady", "demand.level": 70_000,
        "lottery.lemon_rate": 0.3, "autoscaler": {"period": 24, "replace": True, "boot_hours": 1.5}}),
}
# Every §6 preset too (a new one gets its reference test here; one with §10 terms on
# gets it in tests/fleet/outages/test_outage_reference.py).
# One of replicas gets it in tests/fleet/replicas/test_replica_rounds.py.
SCENARIOS.update({name: mc.presets.get(name) for name in mc.presets.names()
                  if mc.presets.get(name).autoscaler is not None and mc.presets.get(name).outages is None
                  and not mc.presets.get(name).by_replica})
EXACT = ("bill", "warm_bill", "churn_bill", "ideal_bill", "n_run", "n_evicted", "n_wrong", "pass_eviction",
         "n_replaced", "lemons_end", "lemons_evicted", "first_eviction_hour")
CLOSE = ("convergence", "wrong_share", "demand_tokens", "delivered_tokens", "capacity_tokens",
         "shortfall", "idle_burn", "mean_run", "quality_end")


# The fast tier checks one scenario (threshold, two strikes, a minimum age, boots,
# replacement, lemons, diurnal demand); make test-all checks every one.
@pytest.mark.parametrize("name", one_fast(SCENARIOS, keep="threshold-strikes2-min-age-peak-diurnal"))
def test_autoscaler_matches_reference(name):
    # Wander is sampled at checkpoints, equal to the hourly reference in law only
    # (tests/fleet/test_structure.py checks it there); the rest on the same draws.
    sc = SCENARIOS[name].replace({"wander.sd": 0.0})
    n = 12
    draws, core = autoscaler_draws(sc, n, seed=5)
    for i in range(n):
        ref = ref_month(draws[i], sc)
        where = f"{name} month {i}"
        assert_rounds_agree(core, ref, i, where, rates=True)
        assert_outputs_agree(core, ref, i, where, EXACT, CLOSE)


def test_scenarios_exercise_every_branch():
    """The scenarios above cover what the brief of the reference asks."""
    scs = list(SCENARIOS.values())
    a = [sc.autoscaler for sc in scs]
    assert {x.strikes for x in a} == {1, 2, 3}
    assert {x.replace for x in a} == {True, False}
    assert any(x.min_age > 0 for x in a) and any(x.min_age > sc.window.hours for x, sc in zip(a, scs))
    assert any(x.boot_hours % 1 for x in a) and any(x.boot_hours == 0 for x in a)
    assert any(mc.units.HOURS % x.period for x in a) and any(x.rounds == 1 for x in a)
    assert {sc.eviction.policy for sc in scs} == set(mc.fleet.policies.names())
    assert {sc.runset for sc in scs} == {"steady", "peak", "all"}
    assert {sc.demand.shape for sc in scs} >= {"flat", "diurnal"}
    assert any(len(sc.pool.groups) > 1 for sc in scs) and all(sc.lottery.lemon_rate > 0 for sc in scs[:4])


def test_every_policy_has_a_reference_scenario():
    """A registered rule with no scenario above has no reference check in §6."""
    missing = set(mc.fleet.policies.names()) - {sc.eviction.policy for sc in SCENARIOS.values()}
    assert not missing, f"add a §6 reference scenario for {sorted(missing)}"


@pytest.mark.slow
@pytest.mark.parametrize("name", mc.presets.SEED_STORIES)
def test_one_round_without_replacement_is_section_1(name):
    """SPEC §6: with one round and no replacement every §1 output is §1's, bit
    for bit, on the same keys, in chunks of different sizes."""
    _same_as_section_1(mc.presets.get(name))


@pytest.mark.slow
@pytest.mark.parametrize("pool, policy", [("70 x flagship", "threshold"), ("30 x bargain + 40 x flagship", "share")])
def test_one_round_is_section_1_past_the_pairwise_size(pool, policy):
    _same_as_section_1(_sc(pool=pool, **{"eviction.policy": policy, "runset": "peak", "demand.level": 300_000,
                                         "lottery.lemon_rate": 0.1, **diurnal}))


@pytest.mark.slow
@pytest.mark.parametrize("policy, pool", [("zscore", "16 x flagship")]
                         + [(p, "30 x bargain + 40 x flagship") for p in mc.fleet.policies.names()])
def test_one_round_is_section_1_for_every_policy(policy, pool):
    """Each registered rule marks the same cards in §6's round 0 (every card
    eligible, a median over the eligible cards) as in §1 (the whole pool's), in a
    mixed pool past the pairwise size; one rule in a small one-class pool too."""
    _same_as_section_1(_sc(pool=pool, **{"window.hours": 4, "eviction.policy": policy, "runset": "all",
                                         "demand.level": 100_000, "lottery.lemon_rate": 0.15}))


def _same_as_section_1(sc):
    sc6 = sc.replace(autoscaler={})
    one = engine.sample(month.fleet_month, sc, 96, seed=9, chunk=32)
    six = engine.sample(autoscaler.autoscaler_month, sc6, 96, seed=9, chunk=64)
    for col in month.OUTPUTS:
        np.testing.assert_array_equal(six[col], one[col], err_msg=col)
    assert (six["n_replaced"] == 0).all()
    assert (six["mean_run"] == six["n_run"]).all()


@pytest.mark.slow
def test_months_do_not_depend_on_the_chunk():
    sc = SCENARIOS["share-daily-replace-lemons"]
    a = engine.sample(autoscaler.autoscaler_month, sc, 40, seed=2, chunk=8)
    b = engine.sample(autoscaler.autoscaler_month, sc, 40, seed=2, chunk=40)
    for col in autoscaler.OUTPUTS:
        np.testing.assert_array_equal(a[col], b[col], err_msg=col)


@pytest.mark.slow
def test_later_rounds_and_tickets_leave_round_0_alone():
    """Round 0 and the original cards use §1's draws: a month's first round
    evicts and runs exactly what §1's month does, whatever the period."""
    from conftest import month_draws

    sc = mc.presets.get("noise-evictor")  # flat demand: every round's target is §1's
    _, one = month_draws(sc, 16, seed=1)
    _, kept = autoscaler_draws(sc.replace({"autoscaler.period": 24}), 16, seed=1)
    _, replaced = autoscaler_draws(sc.replace({"autoscaler.period": 24, "autoscaler.replace": True}), 16, seed=1)
    for core in (kept, replaced):
        np.testing.assert_array_equal(core["evicted"][:, 0], one["evicted"])
    np.testing.assert_array_equal(kept["run"][:, 0], one["run"])
    np.testing.assert_array_equal(kept["rate"][:, 0], np.where(one["evicted"], 0.0, one["true_rate"]))
    assert (replaced["rate"][:, 0][one["evicted"]] != one["true_rate"][one["evicted"]]).all()


# -- the scenario section -------------------------------------------------------------------

@pytest.mark.parametrize("field, value, needle", [
    ("period", 0, "autoscaler.period=0"), ("period", 731, "autoscaler.period=731"),
    ("period", 24.5, "autoscaler.period=24.5"), ("period", True, "autoscaler.period=True"),
    ("period", float("nan"), "autoscaler.period=nan"),
    ("boot_hours", -1, "autoscaler.boot_hours=-1"), ("boot_hours", 730, "autoscaler.boot_hours=730"),
    ("boot_hours", float("inf"), "autoscaler.boot_hours=inf"),
    ("strikes", 0, "autoscaler.strikes=0"), ("strikes", 1.5, "autoscaler.strikes=1.5"),
    ("min_age", -0.5, "autoscaler.min_age=-0.5"), ("min_age", float("nan"), "autoscaler.min_age=nan"),
    ("replace", "yes", "autoscaler.replace='yes'"), ("replace", 1, "autoscaler.replace=1"),
    ("bogus", 1, "autoscaler.bogus"),
])
def test_bad_fields_are_one_line_errors(field, value, needle):
    with pytest.raises(mc.ParamError) as err:
        mc.presets.get("golden-idler").replace({f"autoscaler.{field}": value})
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_boot_must_be_below_the_period():
    with pytest.raises(mc.ParamError, match="autoscaler.boot_hours=1.0: must be a number in \\[0, 1\\)"):
        mc.presets.get("golden-idler").replace({"autoscaler.period": 1})
    sc = mc.presets.get("golden-idler").replace({"autoscaler.period": 1, "autoscaler.boot_hours": 0.5})
    assert sc.autoscaler.rounds == 730


def test_section_round_trips_and_is_optional():
    sc = mc.presets.get("golden-idler")
    assert sc.autoscaler is None and "autoscaler" not in sc.to_dict()
    six = sc.replace({"autoscaler.period": 24, "autoscaler.replace": True})
    data = six.to_dict()
    assert data["autoscaler"] == {"period": 24, "replace": True, "boot_hours": 1.0, "strikes": 1, "min_age": 0.0,
                                  "failover": True}
    again = mc.Scenario.from_dict(data)
    assert again.to_dict() == data
    assert six.replace(autoscaler=None).autoscaler is None
    assert {"autoscaler.period", "autoscaler.replace", "autoscaler.boot_hours", "autoscaler.strikes",
            "autoscaler.min_age"} <= set(mc.fleet.field_names())
    assert six.autoscaler.rounds == 31 and list(six.autoscaler.lengths()[-2:]) == [24, 10]


@pytest.mark.slow
def test_toml_run_and_sweep_accept_the_section(tmp_path, capsys):
    import json

    from mc.cli import main
    from mc.studies import sweep as sw

    path = tmp_path / "s.toml"
    path.write_text('preset = "golden-idler-steady"\n[lottery]\nlemon_rate = 0.2\n'
                    '[autoscaler]\nperiod = 240\nreplace = true\n')
    assert main(["run", str(path), "--n", "64", "--json", "--quiet"]) == 0
    stats = json.loads(capsys.readouterr().out)["stats"]
    for col in ("n_replaced", "quality_end", "lemons_end", "lemons_evicted", "mean_run", "first_eviction_hour"):
        assert col in stats
    assert stats["n_replaced"]["mean"] > 0
    bad = tmp_path / "bad.toml"
    bad.write_text('preset = "golden-idler"\n[autoscaler]\nstrikes = 0\n')
    assert main(["run", str(bad), "--n", "64", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "autoscaler.strikes=0" in err and err.count("\n") == 1

    s = sw.Sweep(base=mc.presets.get("golden-idler-steady"), grid={"autoscaler.period": [730, 240]}, n=64)
    table = sw.run(s, tmp_path / "out").table
    assert set(table["autoscaler.period"]) == {730, 240}
    assert "n_replaced" in set(table["statistic"])


DTYPES = {"money": jax.numpy.int32, "count": jax.numpy.int32, "float": jax.numpy.float32, "pass": jax.numpy.bool_}


@pytest.mark.parametrize("name", [n for n in mc.presets.names() if n not in mc.presets.SEED_STORIES
                                  and not mc.presets.get(n).by_replica])
def test_autoscaler_presets_return_the_schema_columns(name):
    sc = mc.presets.get(name)
    shapes = jax.eval_shape(autoscaler.autoscaler_month, jax.random.key(0), sc)
    own = {} if sc.outages is None else outage_ledger.COLUMNS  # SPEC §10's outputs
    assert set(shapes) == set(autoscaler.OUTPUTS) | set(own) == set(autoscaler.schema(sc).columns)
    for col, kind in {**autoscaler.KINDS, **{c: col.kind for c, col in own.items()}}.items():
        assert shapes[col].shape == () and shapes[col].dtype == DTYPES[kind], col
    assert mc.fleet.simulation.model(sc)[0] is autoscaler.autoscaler_month


def test_a_month_whose_bill_could_pass_int32_cents_is_refused():
    big = mc.Scenario.from_dict({"pool": "4000 x flagship", "eviction": {"share": 0.5}})
    big.replace({"autoscaler.period": 730})  # one round fits
    with pytest.raises(mc.ParamError, match="^autoscaler.period=1: gives 730 rounds whose worst bill"):
        big.replace({"autoscaler.period": 1, "autoscaler.boot_hours": 0})


def test_rent_that_rounds_to_nothing_is_refused():
    cheap = mc.Scenario.from_dict({"pool": [{"name": "tiny", "rated": 100.0, "price_month": 3.0, "count": 4}]})
    cheap.replace({"autoscaler.period": 24})  # 10 h rounds still bill a cent or more
    with pytest.raises(mc.ParamError, match="^autoscaler.period=1: prorates tiny's \\$3.00 a month to under half"):
        cheap.replace({"autoscaler.period": 1, "autoscaler.boot_hours": 0})
