"""Eviction (SPEC §1.5): a rule marks cards, the package caps the marks.

``Eviction`` holds the rule's name (``policy``, static: it fixes the compiled
shape), the rule itself (``rule``, a ``policies.Policy`` whose fields are pytree
leaves) and the churn fee. Its plain-data form is one flat ``[eviction]`` table:
``policy``, the rule's own fields, ``churn``. A key the chosen rule does not declare
is an error naming it (and the rules that do declare it).

Whatever a rule marks, the package keeps only marks on eligible cards, at most
``limit`` of them, lowest relative score first, ties by index (``capped``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp

from .. import _validate as v
from .._fields import check_fields, declarations, declare
from .._pytree import pytree_dataclass
from ..kernels import lowest
from . import policies
from .policies import Cards, Policy
from .policies.base import are_marks, described

# What a rule ranks where cards form replicas (SPEC §11): whole replicas, scored as a
# serving stack's throughput sees them, or each member on its own (per-card telemetry).
UNITS = ("replica", "member")


@pytree_dataclass(static=("policy", "evict"))
class Eviction:
    """The §1.5 eviction: ``policy`` names a registered rule (``share``,
    ``threshold``, ``zscore``, ``floor``, ...), ``rule`` is its value, and an
    evicted card bills ``churn × price``. ``Eviction(share=0.2)``,
    ``Eviction(policy="zscore", k=2)`` or ``Eviction(policy=ZScore(k=2))``; the
    rule's fields read as attributes (``eviction.theta``)."""

    policy: str = "share"
    rule: Policy | None = None
    churn: float = declare(0.15, lo=0.0, unit="× price", doc="churn fee of an evicted card")
    evict: str = declare("replica", kind="choice", options=UNITS,
                         doc="where cards form replicas (tp > 1): the rule ranks whole replicas or each member")

    def __init__(self, policy: Any = "share", *, churn: Any = dataclasses.MISSING, rule: Any = None,
                 evict: Any = "replica", **fields: Any):
        if isinstance(policy, Policy):  # a rule's value
            if rule is not None or fields:
                v.fail("eviction.policy", policy, "is a rule's value: give its fields there, not beside it")
            rule, policy = policy, policy.key()
        cls = policies.get(policy)
        if rule is None:
            own = cls.params()
            for key, value in fields.items():
                if key not in own:
                    _foreign(policy, key, value)
            rule = cls(**{k: x for k, x in fields.items() if k in own})
        elif fields:
            v.fail(f"eviction.{next(iter(fields))}", next(iter(fields.values())),
                   "give the rule's fields in its value (eviction.rule), not beside it")
        elif type(rule) is not cls:
            v.fail("eviction.rule", rule, f"must be the {policy} rule's value ({cls.__name__})")
        object.__setattr__(self, "policy", policy)
        object.__setattr__(self, "rule", rule)
        object.__setattr__(self, "churn", CHURN.default if churn is dataclasses.MISSING else churn)
        object.__setattr__(self, "evict", evict)
        check_fields(self, "eviction")

    def __getattr__(self, name: str) -> Any:
        rule = self.__dict__.get("rule")
        if rule is not None and not name.startswith("_") and name in type(rule).params():
            return getattr(rule, name)
        policy = self.__dict__.get("policy")
        raise AttributeError(f"Eviction has no field {name!r}" + (f" under the {policy} policy" if policy else ""))

    def limit(self, pool_size: int) -> int:
        """Most cards this policy may evict (or mark) in a pool (exact, in float64)."""
        return self.rule.limit(pool_size)

    # -- the flat [eviction] table ----------------------------------------------------------
    @classmethod
    def field_keys(cls) -> list[str]:
        """Every key the table may hold: the policy, each registered rule's fields, churn."""
        return ["policy", *policies.fields(), "churn", "evict"]

    def to_fields(self) -> dict[str, Any]:
        """The table: the policy, its rule's fields, the churn, and ``evict`` where it
        is not the default (so a table without replicas reads as it always has)."""
        out = {"policy": self.policy, **self.rule.fields(), "churn": self.churn}
        return out if self.evict == "replica" else {**out, "evict": self.evict}

    @classmethod
    def from_fields(cls, merged: dict[str, Any], given: dict[str, Any]) -> "Eviction":
        """From a table (``given``) over a base's (``merged`` holds both): the base's
        fields that the chosen rule does not declare are dropped (a policy changed),
        the table's are checked as ``Eviction`` checks them."""
        v.mapping("eviction", merged, "a table of fields")
        v.mapping("eviction", given, "a table of fields")
        policy = merged.get("policy", "share")
        own = policies.get(policy).params()
        fields = {k: x for k, x in merged.items()
                  if k not in ("policy", "churn", "evict") and (k in own or k in given)}
        return cls(policy=policy, churn=merged.get("churn", CHURN.default), evict=merged.get("evict", "replica"),
                   **fields)


CHURN = declarations(Eviction)["churn"]


def _foreign(policy: str, key: str, value: Any) -> None:
    """A key the rule ``policy`` does not declare: a one-line error naming the
    rules that declare it, if any."""
    owners = policies.fields().get(key)
    own = ", ".join(policies.get(policy).params()) or "none"
    if owners:
        v.fail(f"eviction.{key}", value, f"is not a field of the {policy} policy (it is {' and '.join(owners)}'s); "
               f"the {policy} policy's fields: {own}")
    v.fail(f"eviction.{key}", value, "is not a field of eviction; known: " + ", ".join(Eviction.field_keys()))


# -- marks and the cap --------------------------------------------------------------------

def capped(marked: jax.Array, rel: jax.Array, limit: jax.Array) -> jax.Array:
    """(pool,) bool: at most ``limit`` of the ``marked`` cards, lowest relative
    score ``rel`` first, ties by index."""
    return marked & lowest(jnp.where(marked, rel, jnp.inf), limit)


def marks(p: Eviction, cards: Cards) -> jax.Array:
    """(pool,) bool: what the package keeps of the rule's marks: those on eligible
    cards, at most ``cards.limit`` of them (lowest relative score first, ties by index)."""
    marked = p.rule.mark(cards)
    if not are_marks(marked, cards.rel.shape):
        raise TypeError(f"eviction rule {p.policy!r}: mark must return a {cards.rel.shape} bool JAX array, not "
                        f"{described(marked)}")
    return capped(marked if cards.every else marked & cards.eligible, cards.rel, cards.limit)


def evict(rel: jax.Array, limit: jax.Array, p: Eviction, *, score: jax.Array | None = None,
          rated: jax.Array | None = None, served: Any = 0.0) -> jax.Array:
    """(pool,) bool evicted cards of a §1 month: every card eligible, "marks" means
    "evicts".

    Arguments:
        rel: (pool,) float32 relative score ``s / r``.
        limit: () int32, ``Eviction.limit(P)``.
        score, rated: (pool,) tok/s (default ``rel`` and 1). served: hours each card
            has served (the window ``W`` for the month's cards).
    """
    every = jnp.ones(rel.shape, bool)
    return marks(p, _cards(rel, every, limit, score, rated, served, None, every=True))


def mark(rel: jax.Array, eligible: jax.Array, limit: jax.Array, p: Eviction, *, score: jax.Array | None = None,
         rated: jax.Array | None = None, served: Any = 0.0, strikes: jax.Array | None = None) -> jax.Array:
    """(pool,) bool: the cards the policy marks among the eligible ones (SPEC §6),
    at most ``limit`` (lowest relative score first, ties by index). With every card
    eligible it is ``evict``.

    Arguments:
        rel: (pool,) float32 relative score ``s / r``. eligible: (pool,) bool.
        limit: () int32, ``Eviction.limit(P)`` with ``P`` every slot.
        score, rated, served, strikes: as ``policies.Cards`` holds them.
    """
    return marks(p, _cards(rel, eligible, limit, score, rated, served, strikes))


def _cards(rel, eligible, limit, score, rated, served, strikes, every=False) -> Cards:
    shape = rel.shape
    return Cards(rel=rel, score=rel if score is None else score,
                 rated=jnp.ones(shape, rel.dtype) if rated is None else jnp.broadcast_to(rated, shape),
                 eligible=eligible, served=jnp.broadcast_to(jnp.asarray(served, rel.dtype), shape),
                 strikes=jnp.zeros(shape, jnp.int32) if strikes is None else strikes,
                 limit=jnp.asarray(limit, jnp.int32), every=every)


__all__ = ["UNITS", "Eviction", "capped", "evict", "mark", "marks"]
