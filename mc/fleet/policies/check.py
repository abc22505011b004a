"""A rule's contract, checked once before any month runs (``check``).

A rule must build from its defaults, and its ``mark`` must be a pure, vectorizable
JAX function of the cards (SPEC §1.5): called directly, under ``jax.jit`` (its
fields traced, as a sweep traces them) and under ``jax.vmap`` over pools, it gives
the same (pool,) bool marks; over ``NumpyCards`` (``cards.xp`` is NumPy) its marks,
when it gives NumPy marks there, or its NumPy twin, when it has one, agree. The
probe is a fixed set of small pools (a spread of healthy cards, a few lemons, mixed
classes, some cards not eligible, strikes and hours served), so a rule that fails
is named with what went wrong in one line.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from ... import _validate as v
from .base import Cards, NumpyCards, Policy, are_marks, described, has_numpy_twin

POOL, POOLS = 16, 3  # the probe's pool size and its pools


def probe(pool: int = POOL, pools: int = POOLS) -> dict[str, np.ndarray]:
    """The probe's pools: ``Cards``' fields as (pools, pool) float32/bool/int32
    arrays (``limit``: (pools,) int32), from a fixed seed."""
    rng = np.random.default_rng(20261206)
    shape = (pools, pool)
    rel = 0.96 + 0.05 * rng.standard_normal(shape)
    rel[:, :2] *= 0.6  # lemons
    rated = np.where(rng.random(shape) < 0.5, 1000.0, 2500.0)
    eligible = rng.random(shape) < 0.8
    eligible[:, :3] = True
    return {"rel": rel.astype(np.float32), "score": (rel * rated).astype(np.float32),
            "rated": rated.astype(np.float32), "eligible": eligible,
            "served": rng.uniform(0.0, 730.0, shape).astype(np.float32),
            "strikes": rng.integers(0, 3, shape).astype(np.int32),
            "limit": np.full(pools, pool // 2, np.int32)}


def check(cls: type[Policy]) -> None:
    """Raise a one-line ``ParamError`` naming the rule and what is wrong when it
    breaks the contract (see the module's docstring); return None when it keeps it."""
    key = cls.key()

    def fail(what: str) -> None:
        v.fail("eviction.policy", key, what)

    def attempt(what: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except v.ParamError as e:
            fail(f"{what}: {e}")
        except Exception as e:  # the user's code: whatever it raises is named
            fail(f"{what} raised {type(e).__name__}: {v.exception_line(e)}")

    value = attempt("building it from its defaults", cls)
    arrays = probe()
    one = {k: jnp.asarray(x[0]) for k, x in arrays.items()}

    def cards(a: dict) -> Cards:
        return Cards(**a)

    eager = attempt("mark", lambda: value.mark(cards(one)))
    _shape(fail, "mark", eager, (POOL,))
    again = attempt("mark", lambda: value.mark(cards(one)))
    if not np.array_equal(np.asarray(again), np.asarray(eager)):
        fail("mark gives different marks on the same cards: it must be a pure function of them")
    jitted = attempt("mark under jax.jit (it must not branch on, or convert to Python, a card's value or the "
                     "rule's fields)", lambda: jax.jit(lambda r, a: r.mark(cards(a)))(value, one))
    _shape(fail, "mark under jax.jit", jitted, (POOL,))
    if not np.array_equal(np.asarray(jitted), np.asarray(eager)):
        fail("mark gives different marks under jax.jit than called directly: it must be a pure JAX function")
    batched = attempt("mark under jax.vmap over pools",
                      lambda: jax.vmap(lambda a: value.mark(cards(a)))({k: jnp.asarray(x) for k, x in arrays.items()}))
    _shape(fail, "mark under jax.vmap over pools", batched, (POOLS, POOL))
    if not np.array_equal(np.asarray(batched)[0], np.asarray(eager)):
        fail("mark gives different marks under jax.vmap over pools than on one pool: it must be vectorizable")
    twin = has_numpy_twin(cls)
    what = "mark_numpy" if twin else "mark over NumPy cards"
    if twin:
        out = attempt(what, lambda: value.mark_numpy(NumpyCards(**arrays)))
    else:
        try:
            out = value.mark(NumpyCards(**arrays))
        except Exception:  # no NumPy path: the NumPy month refuses the rule, the JAX months run it
            return
        if not isinstance(out, np.ndarray):
            return  # mark calls jax.numpy rather than cards.xp: the same
    if not (isinstance(out, np.ndarray) and out.shape == (POOLS, POOL) and out.dtype == np.bool_):
        fail(f"{what} must return a {(POOLS, POOL)} bool array for {POOLS} pools of {POOL}, not {described(out)}")
    bad = np.argwhere(out != np.asarray(batched))
    if len(bad):
        fail(f"mark and {'mark_numpy' if twin else 'its run over NumPy cards'} disagree (pool {bad[0][0]}, "
             f"card {bad[0][1]} of the probe)")


def _shape(fail, what: str, out: Any, shape: tuple) -> None:
    if not are_marks(out, shape):
        fail(f"{what} must return a {shape} bool JAX array (one mark per card), not {described(out)}")


__all__ = ["check", "probe"]
