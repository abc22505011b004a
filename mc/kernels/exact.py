"""Variates whose float32 bits do not depend on the CPU: the serving model's draws.

XLA compiles ``log``, ``exp`` and the normal quantile to polynomials whose last
float32 bit depends on the CPU: with fused multiply-add (AVX2 and later, every ARM
core) or without (XLA capped at SSE4.2 or AVX), and ``1/sqrt(x)`` becomes the
processor's approximate reciprocal square root (``rsqrtss``, which Intel and AMD
implement with different tables) refined by one Newton step. The float32 samplers
in ``mc.kernels.random`` therefore give draws a few ulps apart on different
machines, and a chaotic statistic (the p95 wait of a queue fed gamma gaps of CV 4)
turns a few ulps into a different figure.

Here each transcendental step runs in float64, locally (``wide``; the process keeps
float32 elsewhere), and the result is rounded once to float32. A float64 result
differs between CPUs by an ulp or two of float64, 2^-29 of a float32 ulp, so the
rounded float32 is the same on every CPU unless the exact value lies within that
distance of a float32 rounding boundary: about one value in 10^8. Only exactly
rounded operations (``+ - × ÷``, ``sqrt``, comparisons) touch float32 values, and
no reciprocal square root is formed (``sqrt(1/x)``, not ``1/sqrt(x)``, which XLA
rewrites into the approximate one); ``unfused`` keeps a product from being fused
into the sum that follows it. The inputs are ``mc.kernels.random.uniforms``
(integer arithmetic, the same bits everywhere).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .random import uniforms

F64 = jnp.float64
GAMMA_ROUNDS = 64  # most Marsaglia-Tsang proposals a draw makes (each is accepted with probability >= 0.95)
BOOST_FLOOR = -80.0  # log of the smallest boost u^(1/shape): below it, e^-80 (a normal float32 once multiplied)


def unfused(x: jax.Array) -> jax.Array:
    """``x`` (a product) as rounded, never fused into a following addition.

    LLVM, as XLA drives it, contracts ``a·b + c`` into one fused multiply-add
    (rounded once) wherever the CPU has one, and into a rounded product and a
    rounded sum where it has none (XLA capped at SSE4.2 or AVX): the same program
    gives different last bits. A select on ``x == x`` (``x`` itself; NaN stays NaN)
    stands between the product and any sum, so every CPU rounds both."""
    return jnp.where(x == x, x, jnp.nan)


def wide():
    """A context in which arrays may be float64 (jax's ``enable_x64``, for the
    code traced inside it only)."""
    return jax.enable_x64(True)


def normal64(u: jax.Array) -> jax.Array:
    """Standard normals in float64 by inverting the CDF at open float32 uniforms
    ``u``; call inside ``wide()``."""
    return jax.scipy.special.ndtri(u.astype(F64))


def normal(u: jax.Array) -> jax.Array:
    """Float32 standard normals at open uniforms ``u``: the float64 quantile,
    rounded once."""
    with wide():
        return normal64(u).astype(jnp.float32)


def exponential(u: jax.Array) -> jax.Array:
    """Float32 standard exponentials (mean 1) at open uniforms ``u``: ``-ln u`` in
    float64, rounded once."""
    with wide():
        return (-jnp.log(u.astype(F64))).astype(jnp.float32)


def gamma(key: jax.Array, shape: jax.Array, n: int) -> jax.Array:
    """(n,) float32 Gamma(``shape``, 1) variates, ``shape`` > 0 a float32 scalar, by
    Marsaglia and Tsang's method, in float64 and rounded once to float32.

    With ``a = shape + 1`` if ``shape < 1`` else ``shape``, ``d = a − 1/3`` and
    ``c = sqrt(1/(9d))``: round ``r`` (r = 1, 2, ...) proposes ``v = (1 + c·x)³``
    from the normal ``x`` at row 0 of ``uniforms(fold_in(key, r), (2, n))`` and
    accepts ``d·v`` when ``v > 0`` and ``ln u < x²/2 + d − d·v + d·ln v`` (``u``:
    row 1); each draw keeps its first accepted proposal (after ``GAMMA_ROUNDS``
    rounds, about ``0.05^64`` of the time, its last). For ``shape < 1`` the value
    is multiplied by ``u₀^(1/shape) = exp(max(ln u₀ / shape, BOOST_FLOOR))``, ``u₀ =
    uniforms(key, (n,))``: the boost that raises a last-bit difference in ``ln`` to
    the power ``1/shape``, hence float64. Draw ``j`` uses only lane ``j`` of each
    round, so nothing depends on ``n`` beyond it or on how the draws are batched."""
    shape = jnp.asarray(shape, jnp.float32)
    u0 = uniforms(key, (n,))
    with wide():
        s = shape.astype(F64)
        small = s < 1.0
        a = jnp.where(small, s + 1.0, s)
        d = a - 1.0 / 3.0
        c = jnp.sqrt(1.0 / (9.0 * d))

        def body(st):
            r, done, g = st
            u = uniforms(jax.random.fold_in(key, r), (2, n)).astype(F64)
            x = jax.scipy.special.ndtri(u[0])
            t = 1.0 + c * x
            v = t * t * t
            ok = (v > 0) & (jnp.log(u[1]) < 0.5 * x * x + d - d * v + d * jnp.log(jnp.maximum(v, 1e-300)))
            take = ~done & (ok | (r >= GAMMA_ROUNDS))
            return r + 1, done | take, jnp.where(take, d * v, g)

        init = (jnp.int32(1), jnp.zeros(n, bool), jnp.zeros(n, F64))
        _, _, g = jax.lax.while_loop(lambda st: ~jnp.all(st[1]), body, init)
        boost = jnp.exp(jnp.maximum(jnp.log(u0.astype(F64)) / s, BOOST_FLOOR))
        return jnp.where(small, g * boost, g).astype(jnp.float32)


__all__ = ["BOOST_FLOOR", "GAMMA_ROUNDS", "exponential", "gamma", "normal", "normal64", "unfused", "wide"]
