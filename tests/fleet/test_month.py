"""The month's outputs are the ones its schema names, with the kinds it gives them."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mc
from mc import engine
from mc.fleet import month
from conftest import one_fast

DTYPES = {"money": jnp.int32, "count": jnp.int32, "float": jnp.float32, "pass": jnp.bool_}


@pytest.mark.parametrize("name", one_fast(mc.presets.SEED_STORIES))
def test_outcome_returns_the_schema_columns(name):
    sc = mc.presets.get(name)
    shapes = jax.eval_shape(month.fleet_month, jax.random.key(0), sc)
    assert set(shapes) == set(month.OUTPUTS)
    for col, kind in month.KINDS.items():
        assert shapes[col].shape == () and shapes[col].dtype == DTYPES[kind], col
    schema = month.schema(sc)
    assert schema.columns == month.OUTPUTS
    assert {schema.kind(c) for c in month.MONEY} == {"money"}
    for col in month.MONEY:
        support = schema.money[col]
        assert support is not None and np.all(np.diff(support) > 0)


def test_engine_refuses_a_month_that_does_not_match_its_schema():
    sc = mc.presets.get("golden-idler-steady")

    def extra(key, p):
        return {**month.fleet_month(key, p), "surprise": jnp.float32(1.0)}

    with pytest.raises(ValueError, match="surprise"):
        engine.summarise(extra, sc, 8, month.schema(sc), chunk=8)


def test_schema_needs_one_kind_per_column():
    with pytest.raises(ValueError, match="exactly one kind"):
        engine.Schema(columns=("a", "b"), floats=("a",))
