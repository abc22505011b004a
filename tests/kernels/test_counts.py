"""bincount: every layout counts exactly what numpy's bincount does."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mc.kernels import bincount, lanes_for
from mc.kernels import counts as counts_mod


@pytest.mark.parametrize("lanes", [1, 0, 2, 7, 256])
@pytest.mark.parametrize("length", [1, 33, 4098])
def test_bincount_matches_numpy_in_every_layout(lanes, length):
    rng = np.random.default_rng(length * 10 + lanes)
    n = 3000
    index = rng.integers(-3, length + 3, n).astype(np.int32)  # some outside: counted nowhere
    index[: n // 2] = length // 2  # a modal value: half the months in one bin
    weight = rng.integers(0, 2, n).astype(np.int32)
    got = np.asarray(jax.jit(bincount, static_argnums=(2, 3))(jnp.asarray(index), jnp.asarray(weight), length, lanes))
    inside = (index >= 0) & (index < length)
    want = np.bincount(index[inside], weights=weight[inside], minlength=length).astype(np.int64)
    assert got.dtype == np.int32 and got.shape == (length,)
    np.testing.assert_array_equal(got, want)


def test_layouts_by_platform():
    assert lanes_for("cpu", 10) == 1 and lanes_for("cpu", 10**6) == 1
    assert lanes_for("gpu", counts_mod.ONE_HOT_BINS) == 0
    assert lanes_for("gpu", counts_mod.ONE_HOT_BINS + 1) == counts_mod.LANES
    big = 10**6
    assert lanes_for("gpu", big) * big <= counts_mod.LANE_CELLS and lanes_for("gpu", big) >= 1
    assert lanes_for("gpu", 10**8) == 1
