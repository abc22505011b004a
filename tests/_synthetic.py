"""A cheap stand-in for the fleet month, with the same outputs, for engine tests
that need many compilations or very many months."""

import jax.numpy as jnp

from mc.kernels import bits

PRICE, FEE = 260_000, 39_000  # flagship cents and its churn fee (golden-idler pools)


def month(key, sc):
    w = bits(key, (4,))
    u = (w >> 9).astype(jnp.float32) * jnp.float32(2.0**-23)
    n_run = (w[0] % 4).astype(jnp.int32) + 7
    n_ev = (w[1] % 3).astype(jnp.int32) + 5
    n_wrong = (w[2] % 2).astype(jnp.int32)
    warm = n_run * PRICE
    churn = n_ev * FEE
    bill = warm + churn
    demand = jnp.float32(1.5768e11)
    delivered = demand * (1 - 0.01 * u[3])
    return {"bill": bill, "warm_bill": warm, "churn_bill": churn, "ideal_bill": jnp.int32(9 * PRICE),
            "convergence": jnp.float32(9 * PRICE) / bill.astype(jnp.float32), "n_run": n_run,
            "n_evicted": n_ev, "n_wrong": n_wrong, "wrong_share": n_wrong.astype(jnp.float32) / n_ev.astype(jnp.float32),
            "demand_tokens": demand, "delivered_tokens": delivered, "capacity_tokens": delivered * (1 + u[2]),
            "shortfall": 0.01 * u[3], "idle_burn": 100.0 * u[2] + u[0],
            "pass_capacity": u[3] < 0.99, "pass_convergence": u[0] < 0.5, "pass_eviction": n_wrong == 0}


def simulate_with(month_fn, sc, n, **kw):
    """``mc.simulate``'s streaming path with another month function."""
    from mc import engine
    from mc.fleet import schema

    return engine.summarise(month_fn, sc, n, schema(sc), **kw).summary
