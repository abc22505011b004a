"""Memory-aware chunks: a step that would pass the budget runs at a chunk that
fits (same results), and a chunk chosen over the budget is refused with what fits."""

import numpy as np
import pytest

import mc
from mc import engine
from mc.cli import main
from mc.fleet.month import fleet_month

SC = mc.presets.get("golden-idler-steady")  # 32 cards: tens of kB a month
SMALL = str(100_000 / 2**30)  # GiB: about 20 months of SC fit (~4.5 kB each), 40 do not


def _stream_chunk(chunk=None):
    seen = []
    run = engine.stream(fleet_month, SC, 40, reducer=lambda out, mask, aux: out["bill"],
                        merge=lambda host, take: seen.append(np.asarray(host)[:take]), chunk=chunk)
    return run.chunk, np.concatenate(seen)


@pytest.mark.slow
def test_the_automatic_chunk_shrinks_to_the_budget(monkeypatch):
    _, wide = _stream_chunk()
    monkeypatch.setenv("MC_MEMORY_GB", SMALL)
    chunk, narrow = _stream_chunk()
    assert 1 <= chunk < 40 and chunk & (chunk - 1) == 0  # a power of two below the 256 asked
    np.testing.assert_array_equal(wide, narrow)


@pytest.mark.slow
def test_a_chunk_over_the_budget_is_refused_with_what_fits(monkeypatch):
    monkeypatch.setenv("MC_MEMORY_GB", SMALL)
    fits, _ = _stream_chunk()
    with pytest.raises(mc.ParamError, match=rf"^chunk=40: needs .* GiB a step, .*; at most {fits} fits$"):
        _stream_chunk(chunk=40)
    _stream_chunk(chunk=fits)  # what it says fits does


@pytest.mark.slow
def test_a_month_over_the_budget_is_one_line(monkeypatch, capsys):
    assert main(["run", "golden-idler", "--n", "10", "--quiet"]) == 0  # compiled and kept under the default budget
    capsys.readouterr()
    monkeypatch.setenv("MC_MEMORY_GB", "1e-9")  # a kept step is judged against the budget of each run
    assert main(["run", "golden-idler", "--n", "10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "memory=" in err and "one month" in err


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf"])
def test_a_bad_budget_is_one_line(monkeypatch, capsys, value):
    monkeypatch.setenv("MC_MEMORY_GB", value)
    assert main(["run", "golden-idler", "--n", "10"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_budget_defaults_to_a_quarter_of_the_memory(monkeypatch):
    monkeypatch.delenv("MC_MEMORY_GB", raising=False)
    import os

    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert engine.memory_budget(engine.device_list()[0]) == ram // 4


@pytest.mark.slow
def test_compiled_steps_are_bounded_and_can_be_dropped(monkeypatch):
    # Each compiled program holds memory maps of its own: a process compiling
    # without end keeps only the most recent few.
    from mc.engine import compile as engine_compile

    monkeypatch.setattr(engine_compile, "FITTED_MAX", 2)
    engine.clear_caches()
    for chunk in (8, 16, 32):
        _stream_chunk(chunk=chunk)
    assert len(engine_compile._FITTED) == 2
    assert {key[3] for key in engine_compile._FITTED} == {16, 32}  # the oldest went first
    _stream_chunk(chunk=16)  # a kept one is used again, and becomes the newest
    assert list(engine_compile._FITTED)[-1][3] == 16
    engine.clear_caches()
    assert not engine_compile._FITTED and engine_compile.step_fn.cache_info().currsize == 0
