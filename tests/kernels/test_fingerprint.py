"""The fingerprint of a tuple of 32-bit values: equal in, equal out; any change shows."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.kernels import fingerprint


def _words(*xs):
    return int(jax.jit(lambda *a: fingerprint(list(a)))(*xs))


def test_equal_values_equal_words_and_every_bit_matters():
    base = (jnp.float32(0.75), jnp.int32(12_345), jnp.bool_(True), jnp.uint32(7))
    h = _words(*base)
    assert h == _words(*base)
    seen = {h}
    for i in range(len(base)):
        for flip in (1, 1 << 13, 1 << 31):
            xs = list(base)
            w = np.asarray(xs[i]).astype(np.uint32) if xs[i].dtype == jnp.bool_ else \
                np.asarray(xs[i]).view(np.uint32)
            w = np.uint32(w ^ np.uint32(flip))
            if xs[i].dtype == jnp.bool_:
                if flip != 1:
                    continue
                xs[i] = jnp.bool_(bool(w))
            else:
                xs[i] = jnp.asarray(np.array(w).view(np.dtype(xs[i].dtype)))
            seen.add(_words(*xs))
    assert len(seen) == 1 + 3 * 3 + 1  # every one-bit change gives a new word


def test_order_matters_and_vmap_agrees():
    a, b = jnp.int32(1), jnp.int32(2)
    assert _words(a, b) != _words(b, a)
    xs = jnp.arange(8, dtype=jnp.int32)
    batched = jax.vmap(lambda x: fingerprint([x, x * 2]))(xs)
    assert [int(w) for w in batched] == [_words(x, x * 2) for x in xs]


def test_wide_values_are_refused():
    with pytest.raises(TypeError, match="32-bit"):
        fingerprint([jnp.zeros((), jnp.float16)])
