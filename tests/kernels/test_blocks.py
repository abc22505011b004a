"""``mc.kernels.blocks``: an AR(1) seen through weighted sums between marked steps.

The laws are checked against Gaussian algebra on the whole path's covariance
(``sd²·ρ^|t−t'|``, float64): each block's ``(J, E)`` law and each middle step's
regression on it exactly; the chain's values and sums at the marks, and a path
bridged between them by Matheron's rule, in law on many draws (tolerances of five
standard errors of each estimated covariance).
"""

import numpy as np
import jax
import jax.numpy as jnp
import pytest

from mc.kernels import blocks

N_STEPS, RHO, SD = 40, 0.9, 0.7
MARKS = [0, 6, 7, 7, 19, 31, 39]  # a repeated mark is an empty block


def setup():
    rng = np.random.default_rng(0)
    a = (1 + 0.1 * rng.standard_normal(N_STEPS)).astype(np.float32)
    mark = np.zeros(N_STEPS, bool)
    mark[MARKS] = True
    laws = blocks.block_laws(jnp.asarray(a), jnp.asarray(mark), jnp.float32(RHO), jnp.float32(SD))
    return a, mark, laws


def path_cov():
    t = np.arange(N_STEPS)
    return SD ** 2 * RHO ** np.abs(t[:, None] - t[None, :])


def innovation(u, s):
    """The linear map x ↦ ε_u = x_u − ρ^{u−s}·x_s."""
    v = np.zeros(N_STEPS)
    v[u] += 1
    v[s] -= RHO ** (u - s)
    return v


def test_block_laws_and_bridge_are_gaussian_algebra():
    a, mark, laws = setup()
    br = blocks.bridge_coefficients(jnp.asarray(a), jnp.asarray(mark), jnp.float32(RHO), jnp.float32(SD), laws)
    C = path_cov()
    marks = sorted(set(MARKS))
    for s, e in zip(marks[:-1], marks[1:]):
        J = sum((a[u] * innovation(u, s) for u in range(s + 1, e)), np.zeros(N_STEPS))
        E = innovation(e, s)
        want = [J @ C @ J, J @ C @ E, E @ C @ E, sum(a[u] * RHO ** (u - s) for u in range(s + 1, e)), RHO ** (e - s)]
        got = [laws.var_j[e], laws.cov[e], laws.var_e[e], laws.alpha[e], laws.beta[e]]
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-7, err_msg=f"block {s}-{e}")
        S = np.array([[want[0], want[1]], [want[1], want[2]]])
        for u in range(s + 1, e):
            cv = np.array([innovation(u, s) @ C @ J, innovation(u, s) @ C @ E])
            k = np.linalg.solve(S, cv) if want[0] - want[1] ** 2 / want[2] > 1e-9 else [0.0, cv[1] / want[2]]
            np.testing.assert_allclose([br.k_j[u], br.k_e[u]], k, rtol=1e-3, atol=1e-5, err_msg=f"step {u}")
    assert not np.any(np.asarray(br.k_j)[mark]) and not np.any(np.asarray(br.k_e)[mark])


def sample(n, seed=1):
    """n chains and bridged paths: each row's path at every step, from the kernel."""
    a, mark, laws = setup()
    m = np.asarray(MARKS)
    empty = m[1:] == m[:-1]
    at = blocks.BlockLaws(*(jnp.where(empty, fill, v[m[1:]]) for v, fill in zip(laws, (0.0, 1.0, 0.0, 0.0, 0.0))))
    w0 = jnp.where(empty, 0.0, jnp.asarray(a)[m[:-1]])
    k = jax.random.split(jax.random.key(seed), 3)
    x0 = SD * jax.random.normal(k[0], (n,))
    z = jax.random.normal(k[1], (n, len(MARKS) - 1, 2))
    x, s, j, e = blocks.chain(at, w0, x0, z)
    br = blocks.bridge_coefficients(jnp.asarray(a), jnp.asarray(mark), jnp.float32(RHO), jnp.float32(SD), laws)
    zf, jz, ez = blocks.fresh_path(jax.random.normal(k[2], (n, N_STEPS)), jnp.asarray(a), jnp.asarray(mark),
                                   jnp.float32(RHO), jnp.float32(SD))
    # Matheron's rule (the reference's own composition): the step's last mark m and the next.
    x, s, j, e, zf, jz, ez = (np.asarray(v, np.float64) for v in (x, s, j, e, zf, jz, ez))
    path = np.empty((n, N_STEPS))
    for t in range(N_STEPS):
        i = np.searchsorted(m, t, side="right") - 1
        if m[i] == t:
            path[:, t] = x[:, i]
            continue
        nxt = m[i + 1]
        path[:, t] = (RHO ** (t - m[i]) * x[:, i] + zf[:, t] + float(br.k_j[t]) * (j[:, i] - jz[:, nxt])
                      + float(br.k_e[t]) * (e[:, i] - ez[:, nxt]))
    return a, path, x, s


@pytest.mark.parametrize("seed", [1])
def test_chain_and_bridge_have_the_path_law(seed):
    """The bridged path is the stationary AR(1) (covariance ``sd²·ρ^|t−t'|``), jointly
    with the chain's weighted sums up to each mark."""
    n = 20_000
    a, path, x, s = sample(n, seed)
    m = np.asarray(MARKS)
    np.testing.assert_array_equal(path[:, m], x)  # the marks are the chain's values
    want = path_cov()
    got = np.cov(path, rowvar=False)
    se = np.sqrt((np.diag(want)[:, None] * np.diag(want)[None, :] + want ** 2) / n)
    assert np.all(np.abs(got - want) < 5 * se + 1e-6), np.max(np.abs(got - want) / se)
    # The sums: S at each mark is Σ a·x over the steps before it (from mark 0 on).
    for i, mk in enumerate(m):
        lin = np.where(np.arange(N_STEPS) < mk, a, 0.0) * (np.arange(N_STEPS) >= m[0])
        want_var = lin @ want @ lin
        if want_var == 0:
            np.testing.assert_array_equal(s[:, i], 0.0)
            continue
        for t in (0, 10, 25, 39):
            c = np.mean((s[:, i] - s[:, i].mean()) * (path[:, t] - path[:, t].mean()))
            cw = lin @ want[:, t]
            assert abs(c - cw) < 5 * np.sqrt((want_var * want[t, t] + cw ** 2) / n) + 1e-6, (mk, t, c, cw)
        assert abs(s[:, i].var() - want_var) < 5 * want_var * np.sqrt(2 / n), (mk, s[:, i].var(), want_var)


def test_unit_chain_is_the_decay_from_its_start():
    a, mark, laws = setup()
    m = np.asarray(MARKS)
    empty = m[1:] == m[:-1]
    at = blocks.BlockLaws(*(jnp.where(empty, fill, v[m[1:]]) for v, fill in zip(laws, (0.0, 1.0, 0.0, 0.0, 0.0))))
    w0 = jnp.where(empty, 0.0, jnp.asarray(a)[m[:-1]])
    starts = np.array([0, 7, 19])
    started = jnp.asarray(m[None, :] >= starts[:, None])
    u, total = blocks.unit_chain(at, w0, started)
    for r, t0 in enumerate(starts):
        for i, mk in enumerate(m):
            if mk < t0:
                assert float(u[r, i]) == 1.0 and float(total[r, i]) == 0.0
                continue
            np.testing.assert_allclose(u[r, i], RHO ** (mk - t0), rtol=1e-5)
            want = sum(a[h] * RHO ** (h - t0) for h in range(t0, mk))
            np.testing.assert_allclose(total[r, i], want, rtol=1e-5, atol=1e-6)
