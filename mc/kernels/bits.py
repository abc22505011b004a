"""A counter-based bit generator keyed by a month's JAX key.

``jax.random.bits`` runs threefry-2x32 (20 rounds) for every pair of words, about
40% of a fleet-month's run time on a CPU. A month needs ~900 words from one key,
so each word here is a strong 32-bit integer hash of (key, counter): the key's
two words enter between two rounds of a bijective mixer (xor-shift-multiply,
the low-bias constants of Wellons' hash-prospector), so within a month every
counter gives a distinct word, and months differ through their ``fold_in``
keys, which stay threefry. Still a pure function of the month's key: the same
key gives the same words on any backend, chunk or device count.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def _mix(x: jax.Array) -> jax.Array:
    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x21F0AAAD)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x735A2D97)
    return x ^ (x >> 15)


def bits(key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """uint32 words of ``shape``: word ``c`` (row-major) is ``H(key, c)``."""
    k = jax.random.key_data(key).astype(jnp.uint32)
    size = 1
    for s in shape:
        size *= s
    c = jnp.arange(size, dtype=jnp.uint32).reshape(shape)
    x = _mix(c * jnp.uint32(0x9E3779B9) ^ k[0])
    return _mix(x ^ k[1])


def fingerprint(values: list[jax.Array]) -> jax.Array:
    """() uint32 hash of the bits of every value (each a scalar of 32 bits or
    fewer: float32, int32, uint32, bool), in order: equal inputs give equal
    words, and unequal ones a different word but for a 2^-32 chance."""
    h = jnp.uint32(0x811C9DC5)
    for x in values:
        x = jnp.asarray(x)
        if x.dtype == jnp.bool_:
            x = x.astype(jnp.uint32)
        elif x.dtype.itemsize != 4:
            raise TypeError(f"fingerprint takes 32-bit values, not {x.dtype}")
        w = jax.lax.bitcast_convert_type(x, jnp.uint32)
        h = _mix(h * jnp.uint32(0x01000193) ^ w)
    return h
