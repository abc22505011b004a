"""A user's own eviction rule (SPEC §1.5): loaded from a file named in a scenario,
checked before any month runs (one line naming the rule and what is wrong),
agreeing with the reference on the same draws, and swept, calibrated and varied by
sensitivity like any built-in rule's fields; provenance records the file."""

import hashlib
import json
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest

import mc
from conftest import assert_rounds_agree, autoscaler_draws
from mc import files
from mc.cli import main
from mc.fleet import policies
from mc.files import rules
from mc.studies import calibrate as cal
from mc.studies import sweep
from ref_autoscaler import month as ref_month

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BAND = "rules/band.py:Band"


@pytest.fixture(autouse=True)
def _loaded_afresh(monkeypatch):
    """Each test loads its rules afresh (conftest gives it a registry of its own)."""
    monkeypatch.setattr(rules, "_LOADED", {})


@pytest.fixture
def folder(tmp_path):
    """A copy of the example scenario and its rule."""
    shutil.copytree(EXAMPLES / "rules", tmp_path / "rules")
    shutil.copy(EXAMPLES / "own_rule.toml", tmp_path / "own_rule.toml")
    return tmp_path


def small(folder: Path, **eviction) -> mc.Scenario:
    """The example with a 12-card pool (and ``eviction`` fields set)."""
    return files.scenario_from_data({
        "preset": "lemon-hunter", "pool": "12 x flagship", "demand": {"level": 45_000.0},
        "eviction": {"policy": BAND, "low": 0.9, "high": 0.97, **eviction},
        "autoscaler": {"period": 24, "replace": True, "strikes": 2}}, folder)


def write_rule(folder: Path, body: str, name: str = "mine.py") -> str:
    head = "import jax.numpy as jnp\nimport numpy as np\nfrom mc.fleet.policies import Policy, cap_param, declare, rule\n\n"
    (folder / name).write_text(head + textwrap.dedent(body))
    return f"{name}:Mine"


# -- loading ------------------------------------------------------------------------------

def test_the_example_rule_loads_once_and_records_its_file(folder):
    cls = files.load_rule(BAND, folder)
    assert cls.name == "band" and cls.key() == BAND and policies.get(BAND) is cls
    path = folder / "rules" / "band.py"
    assert cls.source == {"path": str(path.resolve()), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    assert files.load_rule(BAND, folder) is cls  # loaded once
    assert policies.loaded() == [{"policy": BAND, **cls.source}]
    sc = mc.load_scenario(folder / "own_rule.toml")
    assert sc.eviction.policy == BAND and (sc.eviction.low, sc.eviction.high) == (0.85, 0.95)
    assert sc.eviction.to_fields() == {"policy": BAND, "low": 0.85, "high": 0.95, "max_share": 0.5, "churn": 0.15}
    again = mc.Scenario.from_dict(sc.to_dict()).eviction  # plain data round-trips once loaded
    assert type(again.rule) is cls and again.to_fields() == sc.eviction.to_fields()


def test_a_module_path_loads_too(folder, monkeypatch):
    pkg = folder / "myrules"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    shutil.copy(folder / "rules" / "band.py", pkg / "hysteresis.py")
    monkeypatch.syspath_prepend(str(folder))
    cls = files.load_rule("myrules.hysteresis:Band")
    assert cls.key() == "myrules.hysteresis:Band" and cls.source["path"].endswith("hysteresis.py")


BAD = {
    "python if on a card": ("""
        @rule("mine")
        class Mine(Policy):
            max_share: float = cap_param()
            def mark(self, cards):
                if cards.rel[0] < 0.9:
                    return cards.rel < 1.0
                return cards.rel < 0.5
        """, "mark under jax.jit"),
    "wrong shape": ("""
        @rule("mine")
        class Mine(Policy):
            max_share: float = cap_param()
            def mark(self, cards):
                return cards.rel[:3] < 0.9
        """, "must return a (16,) bool JAX array (one mark per card), not Array (3,) bool"),
    "wrong dtype": ("""
        @rule("mine")
        class Mine(Policy):
            max_share: float = cap_param()
            def mark(self, cards):
                return cards.rel * 0.5
        """, "not Array (16,) float32"),
    "not pure": ("""
        CALLS = []
        @rule("mine")
        class Mine(Policy):
            max_share: float = cap_param()
            def mark(self, cards):
                CALLS.append(1)
                return cards.rel < 0.8 + 0.1 * len(CALLS)
        """, "different marks on the same cards"),
    "numpy inside": ("""
        @rule("mine")
        class Mine(Policy):
            max_share: float = cap_param()
            def mark(self, cards):
                return np.asarray(cards.rel) < 0.9
        """, "JAX array (one mark per card), not ndarray (16,) bool"),
    "twin disagrees": ("""
        @rule("mine")
        class Mine(Policy):
            max_share: float = cap_param()
            def mark(self, cards):
                return cards.rel < 0.9
            def mark_numpy(self, cards):
                return cards.rel < 0.95
        """, "mark and mark_numpy disagree"),
    "defaults refused": ("""
        @rule("mine")
        class Mine(Policy):
            low: float = declare(0.9, lo=0.0, hi=1.0)
            max_share: float = cap_param()
            def __post_init__(self):
                super().__post_init__()
                self.refuse("low", "must be below 0.5")
            def mark(self, cards):
                return cards.rel < 0.9
        """, "eviction.low=0.9: must be below 0.5"),
    "an earlier name": ("""
        from mc.fleet.policies import param
        """, "loading mine.py raised ImportError: mc.fleet.policies.param is now mc.fleet.policies.declare"),
    "raises on import": ("""
        raise RuntimeError("no GPU here")
        """, "loading mine.py raised RuntimeError: no GPU here (line 6)"),
    "syntax": ("""
        def (:
        """, "loading mine.py raised SyntaxError"),
    "no such class": ("""
        @rule("other")
        class Other(Policy):
            max_share: float = cap_param()
            def mark(self, cards):
                return cards.rel < 0.9
        """, "mine.py has no Mine (its rules: Other)"),
    "not a rule": ("""
        class Mine:
            def mark(self, cards):
                return cards.rel < 0.9
        """, "must be a class made with @mc.fleet.policies.rule"),
}


@pytest.mark.parametrize("case", BAD)
def test_a_rule_that_breaks_the_contract_is_one_line_naming_it(folder, case):
    spec = write_rule(folder, BAD[case][0])
    with pytest.raises(mc.ParamError) as e:
        files.load_rule(spec, folder)
    msg = str(e.value)
    assert msg.startswith(f"eviction.policy='{spec}'") and "\n" not in msg, msg
    assert BAD[case][1] in msg, msg
    assert spec not in policies.names()


@pytest.mark.parametrize("spec, needle", [
    ("nothere.py:Mine", "no such file"), ("band", "must be one of"), ("rules/band.py:", "Class a Python name"),
    ("no_such_module_xyz:Mine", "no module 'no_such_module_xyz'")])
def test_a_bad_rule_path_is_one_line(folder, spec, needle):
    with pytest.raises(mc.ParamError, match=needle):
        files.scenario_from_data({"preset": "lemon-hunter", "eviction": {"policy": spec}}, folder)


@pytest.mark.parametrize("fields, needle", [
    ({"lo": 0.8}, "eviction.lo=0.8: is not a field of eviction"),
    ({"theta": 0.8}, "is not a field of the rules/band.py:Band policy"),
    ({"high": 2.0}, "eviction.high=2.0: must be a number in (0, 1.5]"),
    ({"low": 0.9, "high": 0.8}, "eviction.high=0.8: must be at least low (0.9)")])
def test_the_rules_fields_are_checked_like_any_other(folder, fields, needle):
    with pytest.raises(mc.ParamError) as e:
        files.scenario_from_data({"preset": "lemon-hunter", "eviction": {"policy": BAND, **fields}}, folder)
    assert needle in str(e.value)


def test_an_unloaded_rule_path_in_plain_data_says_how_to_load_it():
    with pytest.raises(mc.ParamError, match="was not loaded"):
        mc.Scenario.from_dict({"eviction": {"policy": "elsewhere.py:Rule"}})


# -- the rule in the model -----------------------------------------------------------------

def test_the_example_rule_agrees_with_the_reference_on_the_same_draws(folder):
    sc = small(folder)
    n = 6
    draws, core = autoscaler_draws(sc, n, seed=3)
    marked = 0
    for i in range(n):
        ref = ref_month(draws[i], sc)
        assert_rounds_agree(core, ref, i, f"month {i}")
        for key in ("bill", "churn_bill", "n_evicted", "n_wrong", "n_replaced", "lemons_end"):
            assert core[key][i] == ref[key], f"month {i}: {key}"
        marked += ref["n_evicted"]
    assert marked > 0  # the band evicted something to agree on


def test_hysteresis_holds_a_marked_card_until_it_clears_the_high_line(folder):
    band = files.load_rule(BAND, folder)(low=0.8, high=0.95)
    rel = np.array([1.0, 1.0, 1.0, 0.9, 0.9, 0.7], np.float32)
    strikes = np.array([0, 0, 0, 0, 1, 0], np.int32)
    cards = policies.NumpyCards(rel=rel, score=rel, rated=np.ones(6, np.float32), eligible=np.ones(6, bool),
                                served=np.zeros(6, np.float32), strikes=strikes, limit=3)
    # median 0.95: the low line 0.76 catches the 0.7 card; the high line 0.9025 holds
    # the struck 0.9 card but not the fresh one.
    assert band.mark_numpy(cards).tolist() == [False, False, False, False, True, True]


@pytest.mark.slow
def test_the_example_runs_sweeps_calibrates_and_varies(folder, capsys):
    assert main(["run", str(folder / "own_rule.toml"), "--n", "400", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["provenance"]["rules"][0]["policy"] == BAND
    (folder / "sweep.toml").write_text(textwrap.dedent(f"""
        n = 200
        [scenario]
        preset = "lemon-hunter"
        pool = "12 x flagship"
        eviction = {{ policy = "{BAND}" }}
        autoscaler = {{ period = 24, replace = true, strikes = 2 }}
        [grid]
        "eviction.low" = [0.8, 0.9]
        """))
    sw = sweep.load(folder / "sweep.toml")
    frames = [sweep.evaluate(p, sw) for p in sweep.points(sw)]
    assert [f["eviction.low"].iloc[0] for f in frames] == [0.8, 0.9]
    bills = [f.set_index("statistic").loc["bill", "mean"] for f in frames]
    assert bills[0] != bills[1]
    sc = small(folder)
    grid = cal.default_grid(sc)
    assert grid["eviction.policy"][-1] == BAND and grid["eviction.low"] == [0.7, 0.8, 0.85, 0.9]
    result = cal.calibrate(sc, {"eviction.policy": [BAND], "eviction.low": [0.8, 0.9], "window.hours": [24.0]},
                           n=200, first=100, progress=False)
    assert set(result.table["eviction.low"].dropna()) >= {0.8, 0.9}
    assert main(["calibrate", str(folder / "own_rule.toml"), "--policy", BAND, "--vary", "eviction.low=0.8,0.9",
                 "--window", "24", "--runset", "peak", "--strikes", "2", "--n", "200", "--first", "100",
                 "--quiet"]) in (0, 1)
    assert "low 0.8" in capsys.readouterr().out
    from mc.studies import sensitivity
    assert sensitivity.check_ranges(sc, {"eviction.low": [0.7, 0.9]}) == {"eviction.low": (0.7, 0.9)}


def test_the_cli_refuses_a_broken_rule_in_one_line(folder, capsys):
    spec = write_rule(folder, BAD["wrong shape"][0])
    (folder / "broken.toml").write_text(f'preset = "lemon-hunter"\n[eviction]\npolicy = "{spec}"\n')
    assert main(["run", str(folder / "broken.toml"), "--n", "10"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err, err
    assert "mine.py:Mine" in err and "bool JAX array" in err


def test_show_prints_the_rule_and_its_fields(folder, capsys):
    assert main(["show", str(folder / "own_rule.toml")]) == 0
    out = capsys.readouterr().out
    assert f'policy = "{BAND}"' in out
    assert "low = 0.85  # × median; mark a card below low × the median relative score" in out
