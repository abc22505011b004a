import gc
import os
from functools import partial
from pathlib import Path

# Compiled months persist across the test session's processes (and across runs on
# one machine), so each scenario shape compiles once. Set before jax is imported,
# so subprocesses started by tests inherit it.
_CACHE = Path(__file__).resolve().parents[1] / ".jax-cache"
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(_CACHE))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")

import jax  # noqa: E402
import numpy as np
import pytest

import mc
from mc import engine, fleet


_FIRST = object()


# The presets with SPEC §10 terms on, and the fields that turn every one off (the
# terms-off and structure fingerprints compare those months with today's).
OUTAGES_OFF = {"spot-field": {"failures.rate": 0.0, "spot.share": 0.0}}


def one_fast(cases, keep=_FIRST, unpack=False):
    """Parametrize values of which only ``keep`` (the first case unless given)
    runs in the fast tier; the rest are marked slow and run in ``make test-all``.
    ``unpack``: each case is a tuple of the arguments of a multi-name parametrize."""
    cases = list(cases)
    keep = cases[0] if keep is _FIRST else keep
    assert keep in cases, keep
    return [pytest.param(*(c if unpack else (c,)), marks=() if c == keep else pytest.mark.slow) for c in cases]


@pytest.fixture(autouse=True)
def _own_rule_registry(monkeypatch):
    """Rules a test loads from files stay in its own registry (the built-ins' stay as they are)."""
    monkeypatch.setattr(fleet.policies, "_REGISTRY", dict(fleet.policies._REGISTRY))


@pytest.fixture(autouse=True, scope="session")
def _strict_jax():
    # Silent broadcasting and dtype promotion bugs fail loudly in tests.
    with jax.numpy_rank_promotion("raise"), jax.numpy_dtype_promotion("strict"):
        yield


MAPS_KEPT = 30_000  # memory maps a test process holds before it drops its compiled programs


def _maps() -> int:
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:  # no /proc: drop them after every module
        return MAPS_KEPT + 1


@pytest.fixture(autouse=True, scope="module")
def _fresh_programs():
    # Each compiled program keeps its machine code in memory maps of its own; one
    # process running the whole suite would pass the kernel's limit on maps
    # (vm.max_map_count, 65,530) and crash inside the compiler. When a module ends
    # with more than MAPS_KEPT maps, the programs are dropped (the persistent cache
    # reloads them); below it they stay, so the next modules do not compile them again.
    yield
    if _maps() > MAPS_KEPT:
        engine.clear_caches()
        gc.collect()


@partial(jax.jit, static_argnums=(1,))
def _draws_and_cards(seed, n, sc):
    keys = engine.month_keys(seed, np.uint32(0), n)
    draws = jax.vmap(fleet.draw, in_axes=(0, None))(keys, sc)
    return draws, jax.vmap(lambda d: fleet.outcome(d, sc, cards=True))(draws)


def month_draws(sc: mc.Scenario, n: int, seed: int = 0):
    """The draws of months 0..n-1 (as the engine makes them), as NumPy, one per month."""
    draws, out = _draws_and_cards(seed, n, sc)
    host = jax.tree_util.tree_map(np.asarray, draws)
    per_month = [jax.tree_util.tree_map(lambda x: x[i], host) for i in range(n)]
    return per_month, {k: np.asarray(v) for k, v in out.items()}


@partial(jax.jit, static_argnums=(1,))
def _draws(seed, n, sc):
    keys = engine.month_keys(seed, np.uint32(0), n)
    return jax.vmap(fleet.draw, in_axes=(0, None))(keys, sc)


def batch_draws(sc: mc.Scenario, n: int, seed: int = 0) -> fleet.Draws:
    """The draws of months 0..n-1, batched (leading axis n), as the engine makes them."""
    return _draws(seed, n, sc)


@partial(jax.jit, static_argnums=(1,))
def _autoscaler_draws_and_cards(seed, n, sc):
    from mc.fleet import autoscaler

    keys = engine.month_keys(seed, np.uint32(0), n)
    draws = jax.vmap(autoscaler.draw, in_axes=(0, None))(keys, sc)
    return draws, jax.vmap(lambda d: autoscaler.outcome(d, sc, cards=True))(draws)


def autoscaler_draws(sc: mc.Scenario, n: int, seed: int = 0):
    """The §6 draws of months 0..n-1 (as the engine makes them), as NumPy, one per
    month, and the JAX outcomes with their per-round cards."""
    draws, out = _autoscaler_draws_and_cards(seed, n, sc)
    host = jax.tree_util.tree_map(np.asarray, draws)
    per_month = [jax.tree_util.tree_map(lambda x: x[i], host) for i in range(n)]
    return per_month, {k: np.asarray(v) for k, v in out.items()}


_outcomes = jax.jit(jax.vmap(fleet.outcome, in_axes=(0, None)))


def batch_outcomes(sc: mc.Scenario, n: int, seed: int = 7):
    """The draws of months 0..n-1 (batched) and the core's outputs of them, as NumPy;
    one compiled step per scenario shape for the test process."""
    d = batch_draws(sc, n, seed=seed)
    return d, {k: np.asarray(v) for k, v in _outcomes(d, sc).items()}


def assert_numpy_month_agrees(sc: mc.Scenario, n: int, seed: int = 7) -> None:
    """``mc.studies.numpy_month`` (the bench's baseline) against the core on months
    0..n-1's draws: money, counts and verdicts equal, the rest to float tolerance."""
    from mc.studies import numpy_month

    d, core = batch_outcomes(sc, n, seed=seed)
    ref = numpy_month.outcome(jax.tree_util.tree_map(np.asarray, d), sc)
    for k in fleet.OUTPUTS:
        if k in fleet.month.MONEY + fleet.month.COUNTS or k.startswith("pass_"):
            assert np.array_equal(core[k], ref[k]), k
        else:
            np.testing.assert_allclose(core[k], ref[k], rtol=1e-4, atol=1e-3, err_msg=k)


def assert_rounds_agree(core: dict, ref: dict, i: int, where: str, rates: bool = False) -> None:
    """Month ``i`` of §6's core trace against the reference's rounds: each round's
    evicted cards and run set equal, and with ``rates`` each slot's rate to float
    tolerance."""
    for k, rnd in enumerate(ref["rounds"]):
        assert set(np.flatnonzero(core["evicted"][i, k])) == rnd["evicted"], f"{where} round {k}: evicted"
        assert set(np.flatnonzero(core["run"][i, k])) == rnd["run"], f"{where} round {k}: run set"
        if rates:
            np.testing.assert_allclose(core["rate"][i, k], rnd["rate"], rtol=1e-6, err_msg=f"{where} round {k}")


def assert_outputs_agree(core: dict, ref: dict, i: int, where: str, exact, close) -> None:
    """Month ``i`` of the core's outputs against the reference's: ``exact`` columns
    equal, ``close`` ones to float tolerance (relative, or a millionth of the bill),
    and the convergence verdict equal."""
    for key in exact:
        assert core[key][i] == ref[key], f"{where}: {key} {core[key][i]} != {ref[key]}"
    for key in close:
        np.testing.assert_allclose(core[key][i], ref[key], rtol=2e-5, atol=1e-6 * max(1.0, ref["bill"] / 100),
                                   err_msg=f"{where}: {key}")
    assert core["pass_convergence"][i] == ref["pass_convergence"], where
