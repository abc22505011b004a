"""Accounting: capacity with dips, tokens, the exact ideal bill."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mc
from mc.fleet import accounting
from mc.fleet.dips import CardDips


def test_tokens_by_hand():
    # Two run cards of 1000 tok/s; card 0 dips 0.5 over [10, 12.5); card 1 is off.
    true = jnp.array([1000.0, 1000.0, 500.0])
    run = jnp.array([True, True, False])
    dips = CardDips(begin=jnp.array([[10.0], [-3.0], [5.0]]), end=jnp.array([[12.5], [-1.0], [50.0]]),
                    depth=jnp.array([[0.5], [0.6], [0.6]]))
    demand = jnp.full(730, 1800.0)
    t = jax.jit(accounting.month_tokens)(true, run, dips, demand)
    # Capacity 2000 except hours 10, 11 (1500) and 12 (1750): unmet 300 + 300 + 50.
    assert float(t.demand) == pytest.approx(1800.0 * 730 * 3600, rel=1e-6)
    assert float(t.capacity) == pytest.approx((2000.0 * 730 - 500 - 500 - 250) * 3600, rel=1e-6)
    unmet = (300 + 300 + 50) * 3600
    assert float(t.unmet) == pytest.approx(unmet, rel=1e-5)
    assert float(t.delivered) == pytest.approx(float(t.demand) - unmet, rel=1e-6)


@pytest.mark.parametrize("count", [[1, 0, 1], [0, 0, 0]])
def test_tokens_ignore_slots_past_count(count):
    # Slots past a card's live count (and cards not run) lose nothing.
    true = jnp.array([1000.0, 1000.0, 500.0])
    run = jnp.array([True, True, False])
    dips = CardDips(begin=jnp.array([[10.0, 20.0]] * 3), end=jnp.array([[12.0, 30.0]] * 3),
                    depth=jnp.full((3, 2), 0.5), count=jnp.array(count, jnp.int32))
    t = jax.jit(accounting.month_tokens)(true, run, dips, jnp.full(730, 3000.0))
    lost = 500.0 * 2 * count[0] + 500.0 * 2 * count[1]
    assert float(t.capacity) == pytest.approx((2000.0 * 730 - lost) * 3600, rel=1e-6)
    assert float(t.unmet) == pytest.approx((1000.0 * 730 + lost) * 3600, rel=1e-6)


def test_idle_burn():
    t = accounting.Tokens(*(jnp.float32(x) for x in (100.0, 25.0, 100.0, 75.0)))
    assert float(accounting.idle_burn(jnp.float32(1000.0), t)) == pytest.approx(750.0)
    zero = accounting.Tokens(*(jnp.float32(x) for x in (100.0, 0.0, 0.0, 100.0)))
    assert float(accounting.idle_burn(jnp.float32(1000.0), zero)) == 1000.0


_ideal = jax.jit(accounting.ideal_cents, static_argnums=2)


def brute_ideal(true, pool, peak):
    cents = pool.price_cents()
    best = int(cents.sum())
    for chosen in itertools.product([0, 1], repeat=len(true)):
        if sum(t for t, c in zip(true, chosen) if c) >= peak:
            best = min(best, int(sum(p for p, c in zip(cents, chosen) if c)))
    return best


@pytest.mark.parametrize("pool", ["6 x flagship", "3 x flagship + 4 x bargain",
                                  "2 x bargain + 3 x flagship + 2 x bargain2"])
@pytest.mark.parametrize("peak", [0.0, 5000.0, 14_000.0, 21_000.0, 1e6])
def test_ideal_is_exact_minimum(pool, peak):
    groups = []
    for part in pool.split("+"):
        n, name = part.split(" x ")
        card = mc.CardClass("bargain2", 4000.0, 1700.0) if name.strip() == "bargain2" \
            else mc.fleet.pool.card_class(name.strip())
        groups.append((card, int(n)))
    pool = mc.Pool(tuple(groups))
    rng = np.random.default_rng(int(peak) + pool.size)
    true = (pool.rated() * rng.uniform(0.6, 1.2, pool.size)).astype(np.float32)
    got = int(_ideal(jnp.asarray(true), jnp.float32(peak), pool))
    assert got == brute_ideal(true.astype(np.float64), pool, peak)
