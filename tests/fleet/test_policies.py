"""Eviction rules as values (SPEC §1.5): the registry, each rule on hand-made pools,
the package's cap, every rule's NumPy twin against its JAX rule, the flat
``[eviction]`` table, one-line errors, and results unchanged from before the rules
were values."""

import dataclasses
import hashlib
import json

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd
import pytest

import mc
from conftest import one_fast
from mc.cli import main
from mc.fleet import eviction, policies
from mc.fleet.policies import Cards, NumpyCards, Policy, cap_param, declare, rule
from mc.fleet.policies.base import has_numpy_twin
from mc.studies import calibrate as cal

_evict = jax.jit(eviction.evict)
_mark = jax.jit(eviction.mark)


def evicts(rel, limit, **fields) -> list[bool]:
    return np.asarray(_evict(jnp.asarray(rel, jnp.float32), limit, mc.Eviction(**fields))).tolist()


# -- the registry --------------------------------------------------------------------------

def test_the_built_in_rules_are_registered_in_order():
    assert policies.names()[:4] == ["share", "threshold", "zscore", "floor"]
    assert policies.fields()["max_share"] == ["threshold", "zscore", "floor"]
    assert {"k": ["zscore"], "floor": ["floor"], "share": ["share"]}.items() <= policies.fields().items()
    assert policies.get("zscore") is policies.ZScore


@pytest.mark.parametrize("name", policies.names())
def test_each_rule_is_a_frozen_pytree_of_its_declared_fields(name):
    cls = policies.get(name)
    value = cls()
    assert cls.name == name and isinstance(value, Policy)
    assert list(value.fields()) == list(cls.params())
    leaves, tree = jax.tree_util.tree_flatten(value)
    assert leaves == list(value.fields().values())
    assert jax.tree_util.tree_unflatten(tree, leaves).fields() == value.fields()
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.max_share = 0.1
    for field, p in cls.params().items():
        assert p.unit and p.doc and p.check(f"eviction.{field}", p.default) == p.default


# -- zscore and floor on hand-made pools ---------------------------------------------------

# A tight pool: median 1.0, MAD 0.005, so the zscore line (k = 3) is 0.978; threshold
# at 0.8 of the median sees nothing wrong with the 0.96 card.
TIGHT = [1.0, 1.0, 1.01, 0.99, 1.0, 1.005, 0.995, 0.96]
# A noisy window: the same slow card among wide scores sits inside the spread.
NOISY = [0.7, 1.3, 0.8, 1.2, 0.96, 1.1, 1.0, 0.75]


def test_zscore_evicts_a_slightly_slow_card_from_a_tight_pool():
    assert evicts(TIGHT, 4, policy="zscore") == [False] * 7 + [True]
    assert evicts(TIGHT, 4, policy="threshold", theta=0.8) == [False] * 8


def test_zscore_protects_healthy_cards_in_a_noisy_window():
    assert evicts(NOISY, 4, policy="zscore") == [False] * 8
    assert evicts(NOISY, 4, policy="zscore", k=0.5) == [True, False, True, False, False, False, False, True]


def test_zscore_line_is_the_median_less_k_robust_sds():
    rel = np.float32([0.5, 0.9, 0.95, 1.0, 1.0, 1.05, 1.1, 0.7])
    mid = np.median(rel)
    mad = np.median(np.abs(rel - mid))
    for k in (0.5, 1.0, 2.0, 3.0):
        want = (rel < mid - np.float32(k) * np.float32(1.4826) * mad).tolist()
        assert evicts(rel, 8, policy="zscore", k=k) == want


def test_floor_evicts_below_floor_times_rated():
    # Relative scores: a card at exactly the floor stays.
    assert evicts([0.9, 0.84, 0.86, 0.5, 0.85, 1.2], 6, policy="floor") == [False, True, False, True, False, False]
    assert evicts([0.9, 0.84, 0.86, 0.5, 0.85, 1.2], 6, policy="floor", floor=1.0) == [True] * 5 + [False]


def test_the_cap_keeps_the_lowest_marks_ties_by_index():
    rel = [0.5, 0.7, 0.5, 0.9, 0.5, 0.6]
    assert evicts(rel, 2, policy="floor", floor=0.8) == [True, False, True, False, False, False]
    assert evicts(rel, 4, policy="floor", floor=0.8) == [True, False, True, False, True, True]
    assert evicts(rel, 0, policy="floor", floor=0.8) == [False] * 6
    assert evicts([0.96, 1.0, 0.96, 1.0, 1.0, 1.0, 1.0, 1.0], 1, policy="zscore") == [True] + [False] * 7


@pytest.mark.parametrize("size", [8, 100])
def test_the_cap_past_the_pairwise_size(size):
    rel = np.resize(np.float32([0.9, 0.5, 0.5, 0.7, 0.5, 1.0, 0.3, 0.95]), size)
    got = np.asarray(_evict(jnp.asarray(rel), 5, mc.Eviction(policy="floor", floor=0.8)))
    marked = rel < np.float32(0.8)
    order = np.argsort(np.where(marked, rel, np.inf), kind="stable")[:5]
    want = np.zeros(size, bool)
    want[order[marked[order]]] = True
    assert got.tolist() == want.tolist()


def test_limits_follow_each_rules_cap():
    assert mc.Eviction(share=0.35).limit(20) == 7
    for policy in ("threshold", "zscore", "floor"):
        assert mc.Eviction(policy=policy, max_share=0.29).limit(100) == 29
        assert mc.presets.get("noise-evictor").replace(
            {"eviction.policy": policy, "eviction.max_share": 0.25}).evict_limit == 8


def test_marks_in_section_6_only_on_eligible_cards_and_their_median():
    rel = jnp.float32([0.5, 1.0, 1.0, 1.01, 0.99, 0.96, 1.0, 0.2])
    eligible = jnp.array([True, True, True, True, True, True, True, False])
    # zscore over the eligible: median 1.0, MAD 0.01 -> line 0.956; card 0 marked,
    # card 7 (ineligible) never, and its low score does not move the line.
    got = np.asarray(_mark(rel, eligible, 8, mc.Eviction(policy="zscore")))
    assert got.tolist() == [True] + [False] * 7
    got = np.asarray(_mark(rel, eligible, 8, mc.Eviction(policy="floor", floor=0.97)))
    assert got.tolist() == [True, False, False, False, False, True, False, False]
    got = np.asarray(_mark(rel, jnp.zeros(8, bool), 8, mc.Eviction(policy="zscore")))
    assert not got.any()


# -- every rule's NumPy twin ---------------------------------------------------------------

def numpy_capped(rule_value, cards: NumpyCards) -> np.ndarray:
    """The reference cap: the twin's marks on eligible cards, the lowest ``limit``."""
    marked = rule_value.mark_numpy(cards) & cards.eligible
    order = np.argsort(np.where(marked, cards.rel, np.inf), axis=-1, kind="stable")
    rank = np.argsort(order, axis=-1, kind="stable")
    return marked & (rank < cards.limit)


@pytest.mark.parametrize("size", [12, 80])
@pytest.mark.parametrize("name", policies.names())
def test_every_numpy_twin_marks_what_its_rule_marks(name, size):
    """float32 pools, eligibility masks, ties and a cap: the twin and the rule agree."""
    rng = np.random.default_rng(size)
    batch = 64
    rel = (0.96 + 0.05 * rng.standard_normal((batch, size))).astype(np.float32)
    rel[:, ::5] *= np.float32(0.6)  # some slow cards
    rel[:8, 1] = rel[:8, 2]  # ties
    rel[8:16] = np.round(rel[8:16], 1)  # many ties
    rated = np.full((batch, size), 7000, np.float32)
    eligible = rng.random((batch, size)) < 0.85
    eligible[:4] = True
    strikes = rng.integers(0, 3, (batch, size)).astype(np.int32)
    served = rng.random((batch, size)).astype(np.float32) * 100
    value = mc.Eviction(policy=name).rule
    limit = value.limit(size)
    core = np.asarray(jax.jit(jax.vmap(lambda r, e, st, sv: eviction.mark(
        r, e, limit, mc.Eviction(policy=value), score=r * rated[0], rated=rated[0], served=sv, strikes=st)))(
        rel, eligible, strikes, served))
    twin = numpy_capped(value, NumpyCards(rel=rel, score=rel * rated, rated=rated, eligible=eligible, served=served,
                                          strikes=strikes, limit=limit))
    assert (core == twin).all()
    assert core.any() or name == "zscore"


# -- the flat [eviction] table -------------------------------------------------------------

@pytest.mark.parametrize("name", policies.names())
def test_each_rule_round_trips_through_the_table(name, tmp_path, capsys):
    sc = mc.presets.get("lemon-hunter").replace({"eviction.policy": name})
    data = sc.to_dict()["eviction"]
    assert list(data) == ["policy", *policies.get(name).params(), "churn"]
    assert mc.Scenario.from_dict(sc.to_dict()).to_dict() == sc.to_dict()
    path = tmp_path / "s.toml"
    path.write_text(mc.files.to_toml(sc.to_dict()))
    assert main(["show", str(path)]) == 0
    shown = tmp_path / "shown.toml"
    shown.write_text(capsys.readouterr().out)
    assert mc.files.load_scenario(shown).to_dict() == sc.to_dict()


def test_files_written_before_rules_were_values_are_refused_in_one_line(tmp_path):
    """``mc show`` once wrote every rule's field under every policy: such a file is
    refused naming the field, the rule that declares it and the policy's own fields."""
    path = tmp_path / "old.toml"
    path.write_text('pool = "8 x flagship"\n[eviction]\npolicy = "share"\nshare = 0.25\ntheta = 0.8\n'
                    'max_share = 0.5\nchurn = 0.15\n')
    with pytest.raises(mc.ParamError, match=r"^eviction.theta=0.8: is not a field of the share policy \(it is "
                       r"threshold's\); the share policy's fields: share$"):
        mc.files.load_scenario(path)
    path.write_text('pool = "8 x flagship"\n[eviction]\npolicy = "threshold"\nshare = 0.2\ntheta = 0.7\n')
    with pytest.raises(mc.ParamError, match=r"^eviction.share=0.2: is not a field of the threshold policy"):
        mc.files.load_scenario(path)


def test_a_policy_change_drops_the_old_rules_fields():
    lemon = mc.presets.get("lemon-hunter").replace({"eviction.max_share": 0.25})
    z = lemon.replace({"eviction.policy": "zscore", "eviction.k": 2})
    assert z.eviction.to_fields() == {"policy": "zscore", "k": 2.0, "max_share": 0.25, "churn": 0.15}
    assert lemon.replace({"eviction.policy": "share"}).eviction.to_fields()["share"] == 0.2
    assert mc.Eviction(policy=policies.Floor(floor=0.9)).to_fields()["floor"] == pytest.approx(0.9)


@pytest.mark.parametrize("update, needle", [
    ({"eviction.policy": "lottery"}, "eviction.policy='lottery': must be one of share, threshold, zscore, floor"),
    ({"eviction.k": 2}, "eviction.k=2: is not a field of the share policy (it is zscore's)"),
    ({"eviction.policy": "zscore", "eviction.theta": 0.8}, "eviction.theta=0.8: is not a field of the zscore"),
    ({"eviction.policy": "zscore", "eviction.k": 0}, "eviction.k=0.0: must be a number in (0, inf)"),
    ({"eviction.policy": "zscore", "eviction.k": -1}, "eviction.k=-1.0: must be a number in (0, inf)"),
    ({"eviction.policy": "floor", "eviction.floor": 0}, "eviction.floor=0.0: must be a number in (0, 1.5]"),
    ({"eviction.policy": "floor", "eviction.floor": 1.6}, "eviction.floor=1.6: must be a number in (0, 1.5]"),
    ({"eviction.policy": "floor", "eviction.max_share": 1.0}, "eviction.max_share=1.0: must be a number in [0, 1)"),
    ({"eviction.theta": -1}, "eviction.theta=-1: is not a field of the share policy (it is threshold's)"),
    ({"eviction.nope": 1}, "eviction.nope=1: is not a field of eviction"),
])
def test_bad_input_is_one_line(update, needle):
    with pytest.raises(mc.ParamError) as err:
        mc.presets.get("golden-idler").replace(update)
    assert needle in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("body, needle", [
    ('[eviction]\npolicy = "zscore"\nk = 0\n', "eviction.k=0"),
    ('[eviction]\npolicy = "floor"\nfloor = 2.0\n', "eviction.floor=2.0"),
    ('[eviction]\nk = 2\n', "eviction.k=2"),
    ('[eviction]\npolicy = "bogus"\n', "eviction.policy='bogus'"),
])
def test_bad_files_exit_2_in_one_line(body, needle, tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('preset = "noise-evictor"\n' + body)
    assert main(["run", str(path), "--n", "16", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


# -- mc run and mc calibrate with the new rules --------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("policy, field", [("zscore", "k = 2.5"), ("floor", "floor = 0.9")])
def test_mc_run_takes_the_new_rules(policy, field, tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(f'preset = "noise-evictor"\n[eviction]\npolicy = "{policy}"\n{field}\nmax_share = 0.25\n')
    assert main(["run", str(path), "--n", "64", "--quiet", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert 0 < out["stats"]["n_evicted"]["mean"] <= 8


def test_calibration_grids_vary_each_rules_fields_under_it_only():
    grid = {"eviction.policy": ["share", "zscore", "floor"], "eviction.share": [0.0, 0.1],
            "eviction.k": [2.0, 3.0], "eviction.floor": [0.8], "eviction.max_share": [0.25]}
    found = cal.settings(mc.presets.get("noise-evictor"), grid)
    assert [s.name for s in found] == ["share 0", "share 0.1", "k 2, max_share 0.25", "k 3, max_share 0.25",
                                       "floor 0.8, max_share 0.25"]
    assert [s.scenario.eviction.policy for s in found] == ["share", "share", "zscore", "zscore", "floor"]
    with pytest.raises(mc.ParamError, match='varies only under the zscore policy.*add "zscore"'):
        cal.settings(mc.presets.get("noise-evictor"), {"eviction.k": [2.0]})
    with pytest.raises(mc.ParamError, match="varies only under the threshold, zscore or floor policies"):
        cal.settings(mc.presets.get("noise-evictor"), {"eviction.max_share": [0.2]})


def test_the_default_grid_is_unchanged():
    grid = cal.default_grid(mc.presets.get("golden-idler"))
    assert grid["eviction.policy"] == ["share", "threshold"] and "eviction.k" not in grid
    assert len(cal.settings(mc.presets.get("golden-idler"), grid)) == 5 * (6 + 6) * 3


@pytest.mark.parametrize("flags, policies_run, searched", [
    (["--policy", "zscore", "--k", "2,3"], {"zscore"}, 4),
    (["--k", "2,3"], {"zscore"}, 4),
    (["--floor", "0.8,0.9", "--max-share", "0.25"], {"floor"}, 4),
    (["--policy", "floor"], {"floor"}, 2),
    (["--share", "0,0.1", "--k", "3"], {"share", "zscore"}, 6),
])
@pytest.mark.slow
def test_mc_calibrate_takes_the_new_rules(flags, policies_run, searched, capsys, tmp_path):
    rc = main(["calibrate", "noise-evictor", "--window", "day,week", "--runset", "steady", *flags,
               "--n", "32", "--first", "16", "--json", "--out", str(tmp_path)])
    assert rc in (0, 1)
    assert json.loads(capsys.readouterr().out)["searched"] == searched
    table = pd.read_parquet(tmp_path / "candidates.parquet")
    assert set(table.loc[~table["current"], "eviction.policy"]) == policies_run  # the current: share 0.375


def test_mc_calibrate_bad_rule_values_are_one_line(capsys):
    assert main(["calibrate", "noise-evictor", "--policy", "zscore", "--k", "0", "--n", "16", "--first", "16"]) == 2
    err = capsys.readouterr().err
    assert "eviction.k=0" in err and len(err.strip().splitlines()) == 1


def test_mc_calibrate_help_lists_every_rules_fields(capsys):
    with pytest.raises(SystemExit):
        main(["calibrate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "eviction.policy: share, threshold, zscore, floor" in out
    assert "--k K eviction.k (zscore policy" in out and "--floor FLOOR eviction.floor (floor policy" in out


# -- adding a rule is one file and one registry line ---------------------------------------

@rule("struck")
class Struck(Policy):
    """A rule of the test's own: below ``line`` × rated after a strike already."""

    line: float = declare(0.9, lo=0.0, hi=2.0, lo_open=True, unit="× rated", doc="line for a struck card")
    max_share: float = cap_param()

    def mark(self, cards: Cards):
        return (cards.rel < cards.const(self.line)) | (cards.strikes > 0) & (cards.served > 0)


@pytest.mark.slow
def test_a_registered_rule_works_everywhere(monkeypatch, capsys):
    monkeypatch.setattr(policies, "_REGISTRY", dict(policies._REGISTRY))  # registered for this test only
    assert policies.register(Struck) is Struck and policies.names()[-1] == "struck"
    sc = mc.presets.get("noise-evictor").replace({"eviction.policy": "struck", "eviction.line": 0.95})
    assert sc.eviction.to_fields() == {"policy": "struck", "line": 0.95, "max_share": 0.5, "churn": 0.15}
    assert "eviction.line" in mc.fleet.field_names() and mc.files.field_doc("fleet", "eviction.line")
    out = mc.simulate(sc, 32, seed=0, keep_samples=True).samples
    assert (out.n_evicted > 0).all() and (out.n_evicted <= 16).all()
    six = sc.replace({"autoscaler": {"period": 146, "strikes": 2}})
    assert (mc.simulate(six, 16, seed=0, keep_samples=True).samples.n_evicted <= 5 * 16).all()
    found = cal.settings(sc, {"eviction.line": [0.9, 0.95]})
    assert [s.name for s in found] == ["line 0.9", "line 0.95"]
    with pytest.raises(mc.ParamError, match="eviction.line=3.0: must be a number in"):
        sc.replace({"eviction.line": 3.0})


def test_a_rule_must_declare_its_fields():
    with pytest.raises(TypeError, match="declare"):
        @rule("bad")
        class Bad(Policy):
            x: float = 1.0
            max_share: float = cap_param()

            def mark(self, cards):
                return cards.rel < self.x
    with pytest.raises(TypeError, match="must be a number declared with declare"):
        @rule("bad")
        class Flagged(Policy):
            x: bool = declare(True, kind="flag")
            max_share: float = cap_param()

            def mark(self, cards):
                return cards.rel < 1


def test_the_earlier_names_of_a_rules_declaration_are_refused_naming_the_new():
    with pytest.raises(ImportError, match="param is now mc.fleet.policies.declare"):
        from mc.fleet.policies import param  # noqa: F401
    with pytest.raises(ImportError, match="Param is now mc.fleet.policies.Field"):
        from mc.fleet.policies import Param  # noqa: F401


# -- one mark, JAX and NumPy ---------------------------------------------------------------

def test_one_mark_runs_under_jax_and_numpy():
    """Each built-in rule is written once over ``cards.xp``: over NumPy cards its
    ``mark`` gives NumPy marks (no twin of its own), and a rule that calls
    ``jax.numpy`` itself is refused by the NumPy month in one line naming ``cards.xp``."""
    assert Cards.xp is jnp and NumpyCards.xp is np
    rel = np.array([[1.0, 0.5, 0.99, 1.01]], np.float32)
    cards = NumpyCards(rel=rel, score=rel, rated=np.ones_like(rel), eligible=np.ones(rel.shape, bool),
                       served=np.zeros_like(rel), strikes=np.zeros(rel.shape, np.int32), limit=2)
    for cls in policies.BUILTINS:
        assert not has_numpy_twin(cls)
        out = cls().mark_numpy(cards)
        assert isinstance(out, np.ndarray) and out.dtype == np.bool_ and out.shape == rel.shape

    @rule("jaxonly")
    class JaxOnly(Policy):
        max_share: float = cap_param()

        def mark(self, cards):
            return jnp.abs(cards.rel) < 0.9

    policies.check(JaxOnly)  # the JAX months run it
    with pytest.raises(mc.ParamError, match=r"eviction.policy='jaxonly': has no NumPy twin.*returns Array.*cards.xp"):
        JaxOnly().mark_numpy(cards)


# -- results unchanged from before rules were values ---------------------------------------

# sha256 of every month's money (cents) and counts of 64 months at seed 0, as the
# package computed them when the policy was a string (share and threshold, §1 and §6).
PINNED = {
    "golden-idler": "715905d932ee0feb",  # bill $4,476,160.00, 384 evicted
    "noise-evictor": "6f1c8a5a8bacb6fb",  # bill $3,385,720.00, 768 evicted
    "lemon-hunter": "0ecb85c047250b65",  # bill $5,062,018.82, 578 evicted
    "threshold-section-1": "877fb5ce8ffb331d",  # bill $3,346,850.00, 695 evicted
}
COLS = ("bill", "warm_bill", "churn_bill", "ideal_bill", "n_run", "n_evicted", "n_wrong")


@pytest.mark.parametrize("name", one_fast(PINNED, keep="lemon-hunter"))
def test_results_are_those_of_the_string_policies(name):
    sc = (mc.presets.get("noise-evictor").replace({"eviction.policy": "threshold", "eviction.theta": 0.9})
          if name == "threshold-section-1" else mc.presets.get(name))
    df = mc.simulate(sc, 64, seed=0, keep_samples=True).samples
    h = hashlib.sha256()
    for c in COLS:
        h.update(np.round(df[c].to_numpy(np.float64) * (100 if "bill" in c else 1)).astype(np.int64).tobytes())
    assert h.hexdigest()[:16] == PINNED[name]
