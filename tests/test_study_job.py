"""``make study`` (experiments/run_all.py) runs every study and draws every figure,
and says which step runs and how far the job is."""

import gc
import importlib.util
from pathlib import Path

from mc import engine

ROOT = Path(__file__).resolve().parents[1]
# Experiments that are not studies of the job: shared helpers, the job itself, a
# benchmark (PERFORMANCE.md) whose timings would change the results each run, and the
# fit's coverage check (docs/model.md §8.2), some 40 CPU-minutes of fits.
NOT_STUDIES = {"_study", "run_all", "latency_bench", "fit_coverage"}


def job():
    spec = importlib.util.spec_from_file_location("run_all", ROOT / "experiments" / "run_all.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_study_and_figure_is_in_the_job():
    mod = job()
    studies = {p.stem for p in (ROOT / "experiments").glob("*.py")} - NOT_STUDIES
    assert studies - {"seed_stories"} == {name for name, _ in mod.STUDIES}
    assert {p.stem for p in (ROOT / "figures").glob("fig_*.py")} == set(mod.FIGURES)
    assert {p.stem for p in (ROOT / "figures").glob("fig_*.png")} == set(mod.FIGURES)  # each one committed


def test_steps_say_which_runs_and_how_far(capsys, monkeypatch):
    cleared = []
    monkeypatch.setattr(engine, "clear_caches", lambda: cleared.append(True))
    monkeypatch.setattr(gc, "collect", lambda: 0)  # a full collection in a test worker takes a while
    steps = job().Steps(2, quiet=False)
    steps.run("first", lambda: None)
    steps.run("second", lambda: None)
    assert len(cleared) == 2  # a finished step's compiled programs are let go (their memory maps)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("[step 1/2, 0:00 elapsed] first ...")
    assert err[1].startswith("[step 1/2, 0:00 elapsed] first done in")
    assert err[3].startswith("[step 2/2, 0:00 elapsed] second done in")


def study_helpers():
    spec = importlib.util.spec_from_file_location("_study", ROOT / "experiments" / "_study.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_result_made_by_other_arithmetic_is_not_up_to_date(tmp_path, capsys, monkeypatch):
    """A study's whole result is reused only when its manifest's arithmetic is this
    process's; otherwise one line says so and it is recomputed, or kept with
    --reuse-stale."""
    import pandas as pd

    from mc.studies import madeby, manifest

    study = study_helpers()
    config = {"n": 4, "seed": 0}
    monkeypatch.setattr(madeby, "arithmetic", lambda: "0.1.0+madebyearlier01")
    manifest.write_sealed(tmp_path / "manifest.json", manifest.build(config, seed=0, n=4),
                          {tmp_path / "t.parquet": (pd.DataFrame({"x": [1.0]}), None)})
    args = study.parser("t", "", 4).parse_args(["--out", str(tmp_path)])
    assert study.up_to_date("t", args, ("t.parquet",), config)  # the same arithmetic
    assert capsys.readouterr().err == f"t: up to date in {tmp_path}\n"
    monkeypatch.setattr(madeby, "arithmetic", lambda: "0.1.0+madebynow00002")
    assert not study.up_to_date("t", args, ("t.parquet",), config)
    assert capsys.readouterr().err == (f"t: {tmp_path / 'manifest.json'} was made by other arithmetic "
                                       "(0.1.0+madebyearlier01, now 0.1.0+madebynow00002); recomputing\n")
    args = study.parser("t", "", 4).parse_args(["--out", str(tmp_path), "--reuse-stale"])
    assert study.up_to_date("t", args, ("t.parquet",), config)
    assert "; kept (--reuse-stale)\n" in capsys.readouterr().err
