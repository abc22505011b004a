"""The engine: bad input, chunk-size invariance, streaming against all samples."""

import numpy as np
import pytest

import mc
from mc import engine
from mc.fleet import schema
from mc.fleet.accounting import money_support
from mc.cli import main

from _synthetic import month, simulate_with
from conftest import one_fast

SC = mc.presets.get("golden-idler-steady")


@pytest.mark.parametrize("kw", [dict(n=0), dict(n=-3), dict(n=10, chunk=0), dict(n=10, chunk=-1),
                                dict(n=10, devices=0), dict(n=10, devices=99), dict(n=2**32)])
def test_bad_input_is_a_one_line_param_error(kw):
    with pytest.raises(mc.ParamError) as err:
        mc.simulate(SC, **kw)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("argv", [["run", "golden-idler", "--n", "0"], ["run", "golden-idler", "--chunk", "0"],
                                  ["run", "golden-idler", "--devices", "64"]])
def test_cli_bad_input_exits_2(argv, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_chunk_rounds_to_devices_and_n():
    assert engine.check_run_args(10, 0, 4096, 1) == (10, 0, 10)
    assert engine.check_run_args(10, 0, 8, 4) == (10, 0, 8)
    assert engine.check_run_args(5, 0, 8, 4) == (5, 0, 8)
    with pytest.raises(mc.ParamError, match="multiple of the 4 devices"):
        engine.check_run_args(100, 0, 10, 4)


@pytest.fixture(scope="module")
def synthetic_runs():
    return {c: engine.sample(month, SC, 300, seed=5, chunk=c) for c in (1, 7, 4096)}


@pytest.mark.parametrize("chunk", [7, 4096])
def test_samples_do_not_depend_on_chunk(synthetic_runs, chunk):
    for k, x in synthetic_runs[1].items():
        np.testing.assert_array_equal(x, synthetic_runs[chunk][k], err_msg=k)


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_stream_equals_all_samples(synthetic_runs, chunk):
    exact = engine.summarise(month, SC, 300, schema(SC), seed=5, chunk=1, keep=True).summary
    got = simulate_with(month, SC, 300, seed=5, chunk=chunk)
    assert_summary_close(got, exact)


def assert_summary_close(got, exact):
    assert got["n"] == exact["n"]
    assert got["pass"] == exact["pass"]
    assert got["modes"] == exact["modes"]
    for col, st in exact["stats"].items():
        err = got["quantile_error"][col]
        for k in ("mean", "std"):
            assert got["stats"][col][k] == pytest.approx(st[k], rel=1e-5, abs=1e-9), (col, k)
        for k in ("p5", "p50", "p95"):
            if err == 0:
                assert got["stats"][col][k] == pytest.approx(st[k], rel=1e-12, abs=1e-12), (col, k)
            else:
                assert abs(got["stats"][col][k] - st[k]) <= err + 1e-6 * abs(st[k]), (col, k, err)


@pytest.mark.slow
def test_real_month_stream_equals_all_samples():
    """The whole path on the real month: streaming summary against the exact one."""
    a = mc.simulate(SC, 600, seed=2, chunk=256)
    b = mc.simulate(SC, 600, seed=2, chunk=256, keep_samples=True)
    assert_summary_close(a.summary, b.summary)
    assert a.summary["modes"]["bill"]["value"] == round(a.summary["modes"]["bill"]["value"], 2)


@pytest.mark.parametrize("q", [0, 5, 37.5, 50, 95, 100])
@pytest.mark.parametrize("seed", [0, 1])
def test_exact_percentile_matches_numpy(q, seed):
    x = np.random.default_rng(seed).integers(0, 9, size=101 + seed) * 0.25
    values, counts = np.unique(x, return_counts=True)
    assert engine.exact_percentile(values, counts, q) == np.percentile(x, q)


@pytest.mark.parametrize("pool", one_fast(["32 x flagship", "20 x flagship + 12 x bargain", "3 x bargain"],
                                          keep="20 x flagship + 12 x bargain"))
def test_money_support_holds_every_bill(pool):
    sc = SC.replace(pool=pool)
    r = mc.simulate(sc, 50, seed=0, chunk=64, keep_samples=True) if pool == "3 x bargain" else None
    for col in ("bill", "warm_bill", "churn_bill", "ideal_bill"):
        support = money_support(sc.pool, sc.churn_cents, col)
        assert support is not None and np.all(np.diff(support) > 0)
        if r is not None:
            assert np.isin(np.round(r.samples[col].to_numpy() * 100).astype(np.int64), support).all()


class _AsIs:
    """A reducer the engine cannot re-lay for its devices (it has no ``on``)."""

    def __init__(self, red):
        self.red = red

    def __call__(self, out, mask, aux):
        return self.red(out, mask, aux)


# Two programs compiled per preset: slow (every layout is checked against NumPy in
# tests/kernels/test_counts.py).
@pytest.mark.slow
@pytest.mark.parametrize("preset", ["golden-idler-steady", "noise-evictor-day", "lemon-hunter"])
def test_parallel_count_layout_gives_the_cpu_results_bit_for_bit(preset):
    """The reducer's layout for parallel devices (one-hot sums, lanes: no
    same-address atomics), run here on the CPU, reduces a chunk to exactly
    what the CPU layout gives, padding included."""
    import jax

    from mc.engine import compile as compiler
    from mc.fleet import model

    sc = mc.presets.get(preset)
    fm, cols = model(sc)
    red, aux = engine.plan(cols)
    assert red.on("cpu") is red and red.on("gpu").platform == "gpu"
    aux = engine.ranges_from(engine.first_chunk(fm, sc, 256, reducer=red, aux=aux, seed=3, chunk=256), aux)
    devs = tuple(engine.device_list(None))
    args = (np.int32(3), np.uint32(0), np.int32(200), sc, aux)  # 56 padded months
    cpu = compiler.step_fn(fm, _AsIs(red), devs, 256)(*args)
    gpu = compiler.step_fn(fm, _AsIs(red.on("gpu")), devs, 256)(*args)
    flat_c, tree_c = jax.tree_util.tree_flatten(cpu)
    flat_g, tree_g = jax.tree_util.tree_flatten(gpu)
    assert tree_c == tree_g
    for a, b in zip(flat_c, flat_g):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_compile_for_takes_the_platform_options_and_drops_unknown_ones(monkeypatch):
    import jax
    from mc.engine import compile as compiler

    lowered = jax.jit(lambda x: x * 2.0).lower(np.float32(1.0))
    assert float(compiler.compile_for(lowered, "cpu")(np.float32(3.0))) == 6.0
    monkeypatch.setitem(compiler.COMPILER_OPTIONS, "cpu", {"xla_no_such_option_of_any_release": 1})
    assert float(compiler.compile_for(lowered, "cpu")(np.float32(3.0))) == 6.0


def test_a_schema_takes_summarised_kinds_only():
    """``Schema.of`` builds a month's schema from its column table; a text or flag
    column (telemetry's class, lemon) is a row's, and no summary takes it."""
    table = {"bill": engine.Column("money", "$"), "n": engine.Column("count", "cards"),
             "x": engine.Column("float", "h"), "pass_x": engine.Column("pass", "share")}
    s = engine.Schema.of(table, money={"bill": None}, counts={"n": 4})
    assert s.columns == tuple(table) and s.floats == ("x",) and s.passes == ("pass_x",)
    assert engine.column_units(table) == {"bill": "$", "n": "cards", "x": "h"}
    for kind in ("text", "flag"):
        with pytest.raises(ValueError, match="text or flags"):
            engine.Schema.of({**table, "label": engine.Column(kind, "")}, money={"bill": None}, counts={"n": 4})
    with pytest.raises(ValueError, match="column kind 'words'"):
        engine.of_kind(table, "words")
