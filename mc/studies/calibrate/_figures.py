"""What each fleet-month contributes to a setting's figures, and their summaries
(``calibrate``'s **Figures**).

Each figure is a mean over a setting's months with a 95% interval: normal for a
mean, Wilson for a probability (``FIGURES``).
"""

from __future__ import annotations


import jax.numpy as jnp
import numpy as np

from ...engine import mean_half, wilson
from ...fleet import autoscaler as fleet_autoscaler
from ...fleet import month as fleet_month
from ...kernels import fingerprint

# figure -> the month's output it is made of (``month_figures``): a check's failures,
# the rest a mean of the output (convergence capped at 1).
SOURCES = {
    "bill": "bill", "convergence": "convergence", "p_capacity_fail": "pass_capacity",
    "p_wrong_eviction": "pass_eviction", "p_convergence_fail": "pass_convergence", "wrong_mean": "n_wrong",
    "shortfall": "shortfall", "n_evicted": "n_evicted", "n_replaced": "n_replaced",
}
# name -> (units, interval kind), from the outputs' column table: "mean" a normal 95%
# interval, "rate" (of a check) Wilson.
FIGURES = {name: (fleet_autoscaler.COLUMNS[c].units, "rate" if fleet_autoscaler.COLUMNS[c].kind == "pass" else "mean")
           for name, c in SOURCES.items()}
# objective -> (figure, sense): +1 lower is better, -1 higher is better.
OBJECTIVES = {"bill": ("bill", 1), "convergence": ("convergence", -1), "shortfall": ("shortfall", 1),
              "wrong_mean": ("wrong_mean", 1)}


def month_figures(out: dict) -> dict:
    """What a month contributes to each figure, and its fingerprint: the bits of
    every SPEC §2 output and ``n_replaced`` (0 in a §1 month)."""
    zero = jnp.zeros((), jnp.int32)
    replaced = out.get("n_replaced", zero).astype(jnp.int32)
    return {
        "bill": out["bill"].astype(jnp.int32),  # cents
        "convergence": jnp.minimum(out["convergence"], 1.0),
        "p_capacity_fail": ~out["pass_capacity"],
        "p_wrong_eviction": ~out["pass_eviction"],
        "p_convergence_fail": ~out["pass_convergence"],
        "wrong_mean": out["n_wrong"].astype(jnp.int32),
        "shortfall": out["shortfall"],
        "n_evicted": out["n_evicted"].astype(jnp.int32),
        "n_replaced": replaced,
        "print": fingerprint([out[c] for c in fleet_month.OUTPUTS] + [replaced]),
    }


def host_values(got: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Host per-month values in their figure's units (the bill in $, float64)."""
    out = {k: np.asarray(x) for k, x in got.items()}
    out["bill"] = out["bill"].astype(np.int64)  # cents, summed exactly
    return out


def summarise(months: dict[str, np.ndarray]) -> dict[str, tuple[float, float, float]]:
    """Each figure's ``(value, lo, hi)`` from a setting's per-month values."""
    res = {}
    for name, (_, kind) in FIGURES.items():
        x = months[name]
        m = x.shape[0]
        if kind == "rate":
            k = int(np.count_nonzero(x))
            lo, hi = wilson(k, m)
            res[name] = (k / m, lo, hi)
        else:
            if name == "bill":
                mean = float(int(x.sum())) / m / 100.0
                sd = float(np.std(x.astype(np.float64) / 100.0))
            else:
                xf = x.astype(np.float64)
                mean, sd = float(xf.mean()), float(xf.std())
            half = mean_half(sd, m)
            res[name] = (mean, mean - half, mean + half)
    return res


def objective_values(months: dict[str, np.ndarray], objective: str) -> np.ndarray:
    """(m,) float64 per-month values of ``objective`` (a key of ``OBJECTIVES``),
    signed so that lower is better (the bill in $)."""
    fig, sense = OBJECTIVES[objective]
    x = months[fig].astype(np.float64)
    return sense * (x / 100.0 if fig == "bill" else x)  # lower is better
