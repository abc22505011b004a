"""The measurement window: its noise scale σ(W) and the dips it sees."""

import math

import jax.numpy as jnp
import numpy as np
import pytest

import mc
from conftest import batch_draws
from mc.fleet import window
from mc.fleet.dips import CardDips

N_MONTHS = 3000  # × 32 cards


@pytest.mark.slow
@pytest.mark.parametrize("hours", [1, 24, 168])
def test_window_error_spread(hours):
    """s/m − 1 = σ(W)·ε with σ(W) = 0.25·sqrt(1/W): an hour ±25%, a day ±5%, a week ±2%."""
    sc = mc.presets.get("golden-idler").replace({"window.hours": hours})
    eps = batch_draws(sc, N_MONTHS).noise
    m = jnp.full(eps.shape, 7000.0)
    err = np.asarray(window.score(m, eps, sc.window), np.float64).ravel() / 7000.0 - 1.0
    sigma = 0.25 * math.sqrt(1.0 / hours)
    n = err.size
    assert abs(err.mean()) < 5 * sigma / math.sqrt(n)
    assert abs(err.std() - sigma) < 5 * sigma / math.sqrt(2 * n)


@pytest.mark.parametrize("name,hours", [("hour", 1.0), ("day", 24.0), ("week", 168.0)])
def test_named_windows(name, hours):
    assert mc.Window(hours=name).hours == hours


def test_window_mean_counts_only_window_overlap():
    # A dip of depth 0.5 over [-2, 1) overlaps a 4 h window [-4, 0) for 2 h:
    # m = t · (1 − 0.5·2/4) = 0.75 t. A dip inside the month is not seen.
    dips = CardDips(begin=jnp.array([[-2.0, 10.0]]), end=jnp.array([[1.0, 20.0]]),
                    depth=jnp.array([[0.5, 0.6]]))
    m = window.mean_rate(jnp.array([1000.0]), dips, mc.Window(hours=4))
    np.testing.assert_allclose(np.asarray(m), [750.0], rtol=1e-6)


def test_window_mean_never_negative():
    dips = CardDips(begin=jnp.array([[-1.0, -1.0, -1.0]]), end=jnp.array([[0.0, 0.0, 0.0]]),
                    depth=jnp.array([[0.6, 0.6, 0.6]]))
    assert float(window.mean_rate(jnp.array([1000.0]), dips, mc.Window(hours=1))[0]) == 0.0
