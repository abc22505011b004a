"""Progress on every long command: months/s and an ETA on stderr with --progress
(or on a terminal), nothing with --quiet or --json."""

import re

import pytest

from conftest import one_fast
from mc.cli import main
from mc.fleet import presets as fleet_presets

# tqdm's "done/total [elapsed<remaining, rate months/s]"
BAR = re.compile(r"\d+(\.\d+)?k?/\d+(\.\d+)?k? \[\d\d:\d\d<\d\d:\d\d, +[\d.]+k? (months|replications)/s[],]")


def sweep_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('preset = "golden-idler"\nn = 200\n[grid]\n"eviction.share" = [0.0, 0.2]\n')
    return str(path)


@pytest.mark.parametrize("argv", one_fast([
    ["run", "golden-idler", "--n", "300"],
    ["buy", "api-tax", "--n", "100"],
    ["sweep", "SWEEP", "--fresh"],
], keep=["buy", "api-tax", "--n", "100"]))
@pytest.mark.slow
def test_progress_shows_rate_and_eta_and_quiet_hides_it(argv, tmp_path, capsys):
    argv = [sweep_file(tmp_path) if a == "SWEEP" else a for a in argv]
    if argv[0] == "sweep":
        argv += ["--out", str(tmp_path / "out")]
    assert main(argv + ["--progress"]) == 0
    err = capsys.readouterr().err
    assert BAR.search(err), err
    assert main(argv + ["--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(argv + ["--json"]) == 0  # stderr is no terminal here, and --json alone never shows it
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_presets_share_one_bar_over_every_preset(capsys):
    assert main(["presets", "--n", "200", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "presets" in err and BAR.search(err)
    months = f"{len(fleet_presets.names()) * 200 / 1000:.2f}k"
    assert f"{months}/{months}" in err  # every preset x 200 months, one bar


@pytest.mark.slow
def test_a_cold_run_says_it_is_compiling_before_its_bar(capsys):
    from mc import engine

    engine.clear_caches()  # the step must compile (or load from the persistent cache) in this run
    assert main(["run", "golden-idler", "--n", "64", "--progress"]) == 0
    err = capsys.readouterr().err
    first, ready = err.index("compiling a step"), err.index("step ready in")
    assert first < ready and BAR.search(err[ready:])
    engine.clear_caches()
    assert main(["run", "golden-idler", "--n", "64", "--quiet"]) == 0
    assert "compiling" not in capsys.readouterr().err
