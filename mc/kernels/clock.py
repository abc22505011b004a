"""A simulation clock in two float32 words, and runs of steps whose durations grow linearly.

A float32 clock at 1,000 s has a resolution of 61 µs, a tenth of a short decode
step, so adding step after step to it would perturb every step. Times here are
pairs ``(hi, lo)`` whose sum is the time to about 2·24 bits (double-float
arithmetic, built on ``two_sum``); a difference of two times comes back as one
float32, accurate to float32 precision of the difference itself.

A *run* is ``k`` consecutive steps whose ``i``-th lasts ``a + b·i`` (i = 1..k):
``run_time`` is its length and ``steps_to_reach`` the first step boundary at or
past a gap, so an event loop can take a whole run at once. A run's length is
computed in float64 and rounded once, and the quadratic's products are rounded
before they are added (``mc.kernels.exact``), so a time has the same bits on CPUs
with and without fused multiply-add.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .exact import unfused, wide
from .sums import two_sum

Time = tuple[jax.Array, jax.Array]  # (hi, lo) float32, same shape


def _renorm(s: jax.Array, e: jax.Array) -> Time:
    hi = s + e
    return hi, e - (hi - s)


def add(t: Time, x: jax.Array) -> Time:
    """``t + x`` for a float32 ``x`` (elementwise)."""
    s, e = two_sum(t[0], x)
    return _renorm(s, e + t[1])


def add_times(a: Time, b: Time) -> Time:
    """``a + b`` of two times (elementwise)."""
    s, e = two_sum(a[0], b[0])
    return _renorm(s, e + (a[1] + b[1]))


def sub(a: Time, b: Time) -> jax.Array:
    """``a − b`` as float32 (elementwise)."""
    return (a[0] - b[0]) + (a[1] - b[1])


def maximum(a: Time, b: Time) -> Time:
    later = sub(a, b) >= 0
    return jnp.where(later, a[0], b[0]), jnp.where(later, a[1], b[1])


def minimum(a: Time, b: Time) -> Time:
    earlier = sub(a, b) <= 0
    return jnp.where(earlier, a[0], b[0]), jnp.where(earlier, a[1], b[1])


def where(c: jax.Array, a: Time, b: Time) -> Time:
    return jnp.where(c, a[0], b[0]), jnp.where(c, a[1], b[1])


def cumsum(x: jax.Array) -> Time:
    """Inclusive prefix sums over the last axis of float32 ``x`` as times:
    Hillis–Steele in double-float (log2 n passes, a fixed order of operations,
    so the bits do not depend on the batch shape)."""
    n, k = x.shape[-1], 1
    t = (x, jnp.zeros_like(x))
    while k < n:
        pad = jnp.zeros(x.shape[:-1] + (k,), x.dtype)
        shifted = (jnp.concatenate([pad, t[0][..., :n - k]], axis=-1),
                   jnp.concatenate([pad, t[1][..., :n - k]], axis=-1))
        t = add_times(t, shifted)
        k *= 2
    return t


def run_time(a: jax.Array, b: jax.Array, k: jax.Array) -> jax.Array:
    """Seconds of ``k`` steps lasting ``a + b·i``, i = 1..k: ``k·a + b·k(k+1)/2``.

    Arguments:
        a, b: float32 ≥ 0 (a > 0). k: int32 ≥ 0. Elementwise.
    """
    with wide():  # exact but for the last rounding, the same on every CPU
        kf = k.astype(jnp.float64)
        return (kf * a.astype(jnp.float64) + b.astype(jnp.float64) * (kf * (kf + 1.0) * 0.5)).astype(jnp.float32)


def steps_to_reach(a: jax.Array, b: jax.Array, gap: jax.Array, kmax: jax.Array) -> jax.Array:
    """The smallest ``k`` in ``1..kmax`` with ``run_time(a, b, k) ≥ gap`` (``kmax``
    when none; 1 when ``gap ≤ 0``), int32, elementwise. The root of the quadratic,
    then one correction each way against ``run_time`` itself, so the answer is the
    one ``run_time`` decides.
    """
    g = jnp.maximum(gap, 0.0)
    c = a + unfused(0.5 * b)
    root = 2.0 * g / (c + jnp.sqrt(unfused(c * c) + unfused(2.0 * b * g)))
    kmax_f = kmax.astype(jnp.float32)
    k = jnp.clip(jnp.ceil(root), 1.0, jnp.maximum(kmax_f, 1.0)).astype(jnp.int32)
    k = jnp.where((k > 1) & (run_time(a, b, k - 1) >= gap), k - 1, k)
    k = jnp.where((k < kmax) & (run_time(a, b, k) < gap), k + 1, k)
    return jnp.minimum(k, jnp.maximum(kmax, 1))


def count_before(xs: Time, t: Time) -> jax.Array:
    """How many of the sorted times ``xs`` ((n,) each word) lie strictly before the
    time ``t`` (() each word): a binary search comparing normalised pairs
    lexicographically (high words, then low words), so ties between high words are
    decided by the low words. () int32 in [0, n]."""
    hi, lo = xs
    n = hi.shape[-1]

    def before(i):
        return (hi[i] < t[0]) | ((hi[i] == t[0]) & (lo[i] < t[1]))

    def step(_, bounds):
        a, b = bounds
        mid = (a + b) // 2
        open_ = a < b
        left = before(jnp.minimum(mid, n - 1))
        return jnp.where(open_ & left, mid + 1, a), jnp.where(open_ & ~left, mid, b)

    a, _ = jax.lax.fori_loop(0, max(1, n.bit_length()), step, (jnp.int32(0), jnp.int32(n)))
    return a


def pair(x: jax.Array, y: jax.Array) -> Time:
    """``x + y`` of two float32 as a normalised time (exact)."""
    return two_sum(x, y)
