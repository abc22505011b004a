"""A stationary AR(1) seen only through weighted sums between marked steps.

The process ``x`` runs over steps ``0 .. n−1`` (``x_t = ρ·x_{t−1} + η_t``, ``η_t ~
Normal(0, (1 − ρ²)·sd²)``). Some steps are *marks*; the steps strictly between two
consecutive marks ``s < e`` are a block's *middle* steps. Given ``x_s``, the pair

    ``J = Σ_{s<t<e} a_t·ε_t``  and  ``E = ε_e``,   ``ε_t = x_t − ρ^{t−s}·x_s``,

is a zero-mean Gaussian independent of everything before ``s``, and ``x_e = ρ^{e−s}·x_s
+ E``, ``Σ_{s<t<e} a_t·x_t = α·x_s + J`` with ``α = Σ a_t·ρ^{t−s}``. So a path's weighted
sums between marks and its values at the marks are a Markov chain over the marks,
sampled exactly with two normals a block (``block_laws``, then ``chain``).

The path between marks is recovered in law by Matheron's rule: a fresh path ``z`` of
the same innovations restarted at every mark (``fresh_path``), corrected by the
regression of ``ε_t`` on ``(J, E)`` (``bridge_coefficients``):
``ε_t = z_t + k_J(t)·(J − J_z) + k_E(t)·(E − E_z)`` has the law of ``ε_t`` given
``(J, E)``. A weighted sum of independent paths, each seen through its own ``(J, E)``,
is so bridged with one fresh path scaled by the weights' norm.

Every pass is a ``lax.scan`` over the steps: the same elementwise updates in the same
order for every row, so no result depends on the batch shape.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class BlockLaws(NamedTuple):
    """Per step ``t`` (each (n,) float32), for the block that would end at ``t``
    (the steps since the last mark before ``t``): at a mark, its block's law."""

    alpha: jax.Array  # Σ_{s<t'<t} a_t'·ρ^{t'−s}: the middle sum's coefficient on x_s
    beta: jax.Array  # ρ^{t−s}
    var_j: jax.Array  # Var J over the middle steps before t
    cov: jax.Array  # Cov(J, ε_t)
    var_e: jax.Array  # Var ε_t = sd²·(1 − ρ^{2(t−s)})


def _steps_since(mark: jax.Array) -> jax.Array:
    """(n,) float32: steps since the last mark strictly before each step (the first
    step counts from a mark one step before it)."""

    def count(k, m):
        k = k + 1.0
        return jnp.where(m, 0.0, k), k

    _, out = jax.lax.scan(count, jnp.zeros((), jnp.float32), mark)
    return out


def block_laws(a: jax.Array, mark: jax.Array, rho: jax.Array, sd: jax.Array) -> BlockLaws:
    """Each block's law (see the module), by one forward pass over the steps.

    Arguments:
        a: (n,) float32 weights of the middle steps. mark: (n,) bool.
        rho: () float32 in (0, 1). sd: () float32 stationary sd.
    """
    lag = _steps_since(mark)
    beta = jnp.exp(lag * jnp.log(rho))
    var_e = -(sd * sd) * jnp.expm1(2.0 * lag * jnp.log(rho))

    def step(carry, x):
        alpha, vj, c = carry
        at, m, b, ve = x
        c = rho * c  # Cov(J so far, ε_t)
        out = (alpha, vj, c)
        mid = (alpha + at * b, vj + 2.0 * at * c + at * at * ve, c + at * ve)
        return tuple(jnp.where(m, 0.0, w) for w in mid), out

    init = (jnp.zeros((), a.dtype),) * 3
    _, (alpha, vj, c) = jax.lax.scan(step, init, (a, mark, beta, var_e))
    # At a mark the outputs are the finished block's; at a middle step, the block so far.
    return BlockLaws(alpha, beta, vj, c, var_e)


def chain(laws_at: BlockLaws, weight_at_start: jax.Array, x0: jax.Array, z: jax.Array) -> tuple:
    """A path's values at the marks and its weighted sums up to them, exactly in law.

    Arguments:
        laws_at: ``BlockLaws`` gathered at marks ``1 .. M−1`` ((M − 1,) each); a block
            of no steps (a repeated mark) has ``var_e = 0`` and ``beta = 1``.
        weight_at_start: (M − 1,) float32 ``a`` of each block's starting mark (its own
            step counts in the sum up to the next mark; 0 for a repeated mark).
        x0: (...,) float32 the path at mark 0. z: (..., M − 1, 2) standard normals.
    Returns:
        ``(x, s, j, e)``: (..., M) the path at each mark and ``Σ a·x`` over the steps
        before each mark from mark 0 on (0 at mark 0); (..., M − 1) each block's ``J``
        and ``E``.
    """
    shape = z.shape[:-1]
    ve, cov, vj, beta = (jnp.broadcast_to(v, shape) for v in (laws_at.var_e, laws_at.cov, laws_at.var_j,
                                                                laws_at.beta))
    gamma = jnp.broadcast_to(weight_at_start + laws_at.alpha, shape)
    safe = jnp.where(ve > 0, ve, 1.0)
    e = jnp.sqrt(ve) * z[..., 0]
    slope = jnp.where(ve > 0, cov / safe, 0.0)
    rest = jnp.sqrt(jnp.maximum(vj - slope * cov, 0.0))
    j = slope * e + rest * z[..., 1]

    def step(carry, k):
        x, s = carry
        b, g, ek, jk = k
        new = (b * x + ek, s + g * x + jk)
        return new, new

    moved = lambda v: jnp.moveaxis(v, -1, 0)  # noqa: E731
    xs = (beta, gamma, e, j)
    _, (x, s) = jax.lax.scan(step, (x0, jnp.zeros_like(x0)), tuple(moved(v) for v in xs))
    x = jnp.concatenate([x0[None], x], axis=0)
    s = jnp.concatenate([jnp.zeros_like(x0)[None], s], axis=0)
    return jnp.moveaxis(x, 0, -1), jnp.moveaxis(s, 0, -1), j, e


def unit_chain(laws_at: BlockLaws, weight_at_start: jax.Array, started: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The deterministic chain of a unit started at a mark, ``x = ρ^{t − t_0}`` from
    mark ``m_0`` on: its values at the marks and its weighted sums (as ``chain``, no
    noise), for several starts at once.

    Arguments:
        laws_at, weight_at_start: as ``chain``. started: (K, M) bool, mark m at or
            after start k's mark (the chain is 1 with a zero sum until it starts).
    Returns:
        ``(x, s)``: (K, M) each.
    """
    gamma = weight_at_start + laws_at.alpha

    def step(carry, k):
        x, s = carry
        b, g, on = k
        x, s = jnp.where(on, b * x, 1.0), jnp.where(on, s + g * x, 0.0)  # both from the old x
        return (x, s), (x, s)

    K = started.shape[0]
    one = jnp.ones((K,), jnp.float32)
    # Block m ends at mark m + 1: it moves the chain when the start lies before mark m + 1.
    on = started[:, :-1]
    _, (x, s) = jax.lax.scan(step, (one, jnp.zeros_like(one)), (laws_at.beta, gamma, on.T))
    x = jnp.concatenate([one[None], x], axis=0).T
    s = jnp.concatenate([jnp.zeros_like(one)[None], s], axis=0).T
    return x, s


class Bridge(NamedTuple):
    """Per step (each (n,) float32): a middle step's regression of ``ε_t`` on its
    block's ``(J, E)`` (0 at marks)."""

    k_j: jax.Array
    k_e: jax.Array


def bridge_coefficients(a: jax.Array, mark: jax.Array, rho: jax.Array, sd: jax.Array,
                        laws: BlockLaws) -> Bridge:
    """``k_J(t)``, ``k_E(t)`` of each middle step, by a forward pass (``F_t``) and a
    backward pass (``B_t`` and the next mark's law) over the steps.

    ``Cov(ε_t, J) = sd²·(F_t − ρ^{t−s}·α_{≤t}) + Var ε_t·B_t`` with the forward sum
    ``F_t = Σ_{s<t'≤t} a_t'·ρ^{t−t'}``, the block's ``α`` so far and the backward sum
    ``B_t = Σ_{t<t'<e} a_t'·ρ^{t'−t}``; ``Cov(ε_t, E) = ρ^{e−t}·Var ε_t``. The
    regression is on ``E`` and on ``J``'s part not explained by ``E`` (the pair can be
    nearly collinear in float32): a part whose variance is below 1e-6 of ``Var J`` is
    dropped (its effect is below a thousandth of ``J``'s spread). Steps after the last
    mark have no block to be regressed on: their coefficients are 0.
    """
    lag_mid = laws.beta  # ρ^{t−s}

    def fwd(f, x):
        at, m = x
        f = rho * f + at
        return jnp.where(m, 0.0, f), f

    _, forward = jax.lax.scan(fwd, jnp.zeros((), a.dtype), (a, mark))
    alpha_incl = laws.alpha + a * lag_mid  # α over the middle steps up to and including t

    def bwd(carry, x):
        # The carry holds step t's values (from the steps after it): its output; then
        # the values of step t − 1, whose next mark is t when t is a mark.
        at, m, vj_t, c_t, ve_t = x
        b, decay, vj, c, ve = carry
        out = (b, decay, vj, c, ve)
        carry = (jnp.where(m, 0.0, rho * (b + at)), jnp.where(m, rho, rho * decay),
                 jnp.where(m, vj_t, vj), jnp.where(m, c_t, c), jnp.where(m, ve_t, ve))
        return carry, out

    zero = jnp.zeros((), a.dtype)
    init = (zero, rho, zero, zero, zero)  # after the last mark: no next mark (``Var E = 0``)
    _, (back, decay, vj, c, ve_e) = jax.lax.scan(bwd, init, (a, mark, laws.var_j, laws.cov, laws.var_e),
                                                 reverse=True)
    ve_t = laws.var_e
    cov_j = (sd * sd) * (forward - lag_mid * alpha_incl) + ve_t * back
    cov_e = decay * ve_t
    safe_e = jnp.where(ve_e > 0, ve_e, 1.0)
    slope = c / safe_e  # J on E
    resid = vj - slope * c
    keep = resid > 1e-6 * vj
    k_perp = jnp.where(keep, (cov_j - slope * cov_e) / jnp.where(keep, resid, 1.0), 0.0)
    k_e = jnp.where(ve_e > 0, cov_e / safe_e - k_perp * slope, 0.0)
    mid = ~mark
    return Bridge(jnp.where(mid, k_perp, 0.0), jnp.where(mid, k_e, 0.0))


def fresh_path(xi: jax.Array, a: jax.Array, mark: jax.Array, rho: jax.Array, sd: jax.Array,
               upto: int | None = None) -> tuple:
    """A path of the AR(1)'s innovations restarted at 0 at every mark, from standard
    normals ``xi``: ``z_t = ρ·z_{t−1} + sqrt(1 − ρ²)·sd·ξ_t`` (``z_{t−1} = 0`` after a
    mark), and at each mark its finished block's ``J_z`` and ``E_z``.

    Arguments:
        xi: (n,) float32. a, mark: (n,). upto: the steps whose ``J_z``, ``E_z`` are
            wanted (static; default n): past them only the path is computed.
    Returns:
        ``(z, j, e)``: (n,), (upto,), (upto,); ``j``, ``e`` are meaningful at marks.
    """
    n = xi.shape[-1]
    upto = n if upto is None else min(int(upto), n)
    step_sd = jnp.sqrt(jnp.maximum(1.0 - rho * rho, 0.0)) * sd

    def step(carry, x):
        z, j = carry
        x_t, at, m = x
        z = rho * z + step_sd * x_t
        out = (z, j, z)
        j_mid = j + at * z
        return (jnp.where(m, 0.0, z), jnp.where(m, 0.0, j_mid)), out

    def tail(z, x):
        x_t, m = x
        z = rho * z + step_sd * x_t
        return jnp.where(m, 0.0, z), z

    zero = jnp.zeros(xi.shape[:-1], xi.dtype)
    moved = jnp.moveaxis(xi, -1, 0)
    (z_end, _), (z, j, e) = jax.lax.scan(step, (zero, zero), (moved[:upto], a[:upto], mark[:upto]))
    if upto < n:  # the rest of the path alone (the same updates)
        _, rest = jax.lax.scan(tail, z_end, (moved[upto:], mark[upto:]))
        z = jnp.concatenate([z, rest], axis=0)
    return tuple(jnp.moveaxis(v, 0, -1) for v in (z, j, e))
