"""What an eviction rule is (SPEC §1.5): a value, not a string.

A rule is a frozen pytree dataclass (``rule("name")`` makes one) whose fields are
its parameters, each declared with ``declare`` (``mc._fields``): a default, an
allowed range, a unit and a meaning. Its ``mark`` says which cards fall below its
line, written once over ``cards.xp`` (the cards' array namespace): in JAX over one
pool (``Cards``, ``xp`` is ``jax.numpy``) and in NumPy over a batch of pools
(``NumpyCards``, ``xp`` is ``numpy``) for the references and the NumPy month. A rule
that cannot be written so defines ``mark_numpy``, its NumPy twin, beside it.
Neither caps anything: the package keeps at most
``limit`` of the marks (lowest relative score first, ties by index) and drops a
mark on a card that is not eligible (``mc.fleet.eviction``), so a rule's counts stay
bounded whatever it marks. ``cap`` is the share of the pool that bound is:
``max_share`` for a rule that declares it, ``share`` for ``share``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from ... import _validate as v
from ..._fields import Field, check_fields, declarations, declare
from ..._pytree import pytree_dataclass
from ...kernels import masked_median, median

# Keys of the ``[eviction]`` table that are not a rule's: no rule may declare them.
RESERVED = ("policy", "churn", "rule")


def cap_param() -> Any:
    """``max_share``: the most cards a rule keeps marked, as a share of the pool."""
    return declare(0.5, lo=0.0, hi=1.0, hi_open=True, unit="share of pool",
                 doc="most cards evicted under threshold, zscore, floor (any rule with a line)")


@dataclasses.dataclass(frozen=True)
class Cards:
    """What a rule sees of one pool at a decision (SPEC §1.5), each (pool,):
    ``rel`` the relative score ``s / r``, ``score`` ``s`` (tok/s), ``rated`` ``r``
    (tok/s), ``eligible`` (bool; SPEC §6), ``served`` the hours each card has served,
    ``strikes`` (int32) the consecutive rounds it was marked before this one, and
    ``limit`` (() int32) how many marks the package keeps. ``every``: every card is
    eligible (§1), so ``median`` is the whole pool's. ``xp``: the arrays' namespace,
    ``jax.numpy`` (``NumpyCards.xp`` is ``numpy``), so one ``mark`` serves both."""

    rel: jax.Array
    score: jax.Array
    rated: jax.Array
    eligible: jax.Array
    served: jax.Array
    strikes: jax.Array
    limit: jax.Array
    every: bool = False
    xp: ClassVar[Any] = jnp

    def median(self, x: jax.Array) -> jax.Array:
        """() median of ``x`` over the eligible cards (0 when none is)."""
        return median(x) if self.every else masked_median(x, self.eligible)

    def const(self, x: Any) -> jax.Array:
        """A parameter as a scalar of the scores' dtype."""
        return jnp.asarray(x, self.rel.dtype)


@dataclasses.dataclass(frozen=True)
class NumpyCards:
    """``Cards`` as NumPy arrays with any leading batch axes, (..., pool), in the
    dtype the caller computes in (float64 in the references, float32 in the NumPy
    month); ``limit`` is an int (or (...,) ints)."""

    rel: np.ndarray
    score: np.ndarray
    rated: np.ndarray
    eligible: np.ndarray
    served: np.ndarray
    strikes: np.ndarray
    limit: Any
    xp: ClassVar[Any] = np

    def median(self, x: np.ndarray) -> np.ndarray:
        """(..., 1) median of ``x`` over the eligible cards (the mean of the two
        middle values when their count is even; 0 when none is eligible)."""
        return masked_median_numpy(x, self.eligible)

    def const(self, x: Any) -> np.ndarray:
        return np.asarray(x, self.rel.dtype)


def masked_median_numpy(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(..., 1) median of ``x`` along its last axis where ``mask`` holds."""
    x = np.asarray(x)
    mask = np.broadcast_to(np.asarray(mask, bool), x.shape)
    m = mask.sum(axis=-1, keepdims=True)
    s = np.sort(np.where(mask, x, np.inf), axis=-1)
    top = x.shape[-1] - 1
    a = np.take_along_axis(s, np.clip((m - 1) // 2, 0, top), axis=-1)
    b = np.take_along_axis(s, np.clip(m // 2, 0, top), axis=-1)
    with np.errstate(invalid="ignore"):
        mid = (a + b) * x.dtype.type(0.5)
    return np.where(m > 0, mid, x.dtype.type(0))


class Policy:
    """An eviction rule (SPEC §1.5). Subclasses are made with ``rule(name)``: their
    fields, each declared with ``declare``, are validated on entry and are pytree leaves (so a
    sweep over them compiles once). ``origin`` is how a scenario file names a rule
    loaded from a user's file (``"rules.py:Band"``; None for a built-in) and
    ``source`` that file's path and sha256."""

    name: ClassVar[str] = ""
    origin: ClassVar[str | None] = None
    source: ClassVar[dict | None] = None

    @classmethod
    def key(cls) -> str:
        """What ``eviction.policy`` holds for this rule: its origin, else its name."""
        return cls.origin or cls.name

    def __post_init__(self):
        check_fields(self, "eviction")

    def refuse(self, field: str, allowed: str) -> None:
        """Raise the one-line error for one of the rule's fields (for a check of
        several fields together, in ``__post_init__`` after ``super().__post_init__()``)."""
        v.fail(f"eviction.{field}", getattr(self, field), allowed)

    @classmethod
    def params(cls) -> dict[str, Field]:
        """The rule's fields and their declarations, in order."""
        return declarations(cls)

    def fields(self) -> dict[str, Any]:
        """The rule's values by field name."""
        return {name: getattr(self, name) for name in type(self).params()}

    def cap(self) -> float:
        """The share of the pool the package's cap keeps: ``max_share``."""
        return self.max_share  # type: ignore[attr-defined]

    def limit(self, pool_size: int) -> int:
        """Most cards kept marked in a pool of ``pool_size`` slots:
        ``floor(cap · P + 1e-9)``, exact in float64."""
        return math.floor(self.cap() * pool_size + 1e-9)

    def mark(self, cards: Cards) -> jax.Array:
        """(pool,) bool: the cards below the rule's line (before the cap); written
        over ``cards.xp``, the same lines give (..., pool) marks of ``NumpyCards``."""
        raise NotImplementedError

    def mark_numpy(self, cards: NumpyCards) -> np.ndarray:
        """(..., pool) bool: the marks in NumPy, which the NumPy month and the
        references need: ``mark`` itself over ``NumpyCards`` unless the rule defines
        its own twin; a ``mark`` that does not give NumPy marks there (it calls
        ``jax.numpy`` rather than ``cards.xp``) is a one-line error."""
        try:
            out = self.mark(cards)
        except Exception as e:  # the rule's code: whatever it raises is named
            out = e
        if not (isinstance(out, np.ndarray) and out.dtype == np.bool_):
            what = (f"raises {type(out).__name__}: {v.exception_line(out)}" if isinstance(out, Exception)
                    else f"returns {described(out)}")
            v.fail("eviction.policy", type(self).key(), f"has no NumPy twin, which the NumPy month needs: its mark "
                   f"over NumPy cards {what} (write it with cards.xp, not jax.numpy, or define mark_numpy)")
        return out


def are_marks(out: Any, shape: tuple) -> bool:
    """Whether ``out`` is what ``mark`` must return for pools of ``shape``: a bool
    JAX array of that shape, one mark per card."""
    return isinstance(out, jax.Array) and out.shape == shape and out.dtype == jnp.bool_


def described(x: Any) -> str:
    """What a value is, for an error: ``Array (3,) bool``, ``ndarray (16,) bool``, ``float``."""
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    name = "Array" if isinstance(x, jax.Array) else type(x).__name__
    return name if shape is None else f"{name} {tuple(shape)} {dtype}"


def has_numpy_twin(cls: type[Policy]) -> bool:
    """Whether the rule defines its own ``mark_numpy`` (no built-in does: their
    ``mark`` runs under NumPy as it is)."""
    return cls.mark_numpy is not Policy.mark_numpy


def rule(name: str):
    """Class decorator: a ``Policy`` subclass as a frozen pytree dataclass named
    ``name``, every field a number declared with ``declare``; it must define
    ``mark`` and may define ``mark_numpy``."""
    def wrap(cls):
        if not (isinstance(cls, type) and issubclass(cls, Policy)):
            raise TypeError(f"rule {name!r}: {cls!r} must subclass mc.fleet.policies.Policy")
        if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
            raise TypeError(f"rule name must be a word such as 'zscore', not {name!r}")
        cls = pytree_dataclass(cls)
        cls.name = name
        fields = dataclasses.fields(cls)
        for f in fields:
            declared = f.metadata.get("declared")
            if not (isinstance(declared, Field) and declared.kind == "number"):
                raise TypeError(f"rule {name!r}: field {f.name!r} must be a number declared with declare(...)")
            if f.name in RESERVED:
                raise TypeError(f"rule {name!r}: field {f.name!r} is reserved ({', '.join(RESERVED)})")
        if cls.cap is Policy.cap and "max_share" not in {f.name for f in fields}:
            raise TypeError(f"rule {name!r}: declare max_share = cap_param() (or define cap)")
        if cls.mark is Policy.mark:
            raise TypeError(f"rule {name!r}: define mark")
        return cls
    return wrap


__all__ = ["Cards", "NumpyCards", "Policy", "RESERVED", "are_marks", "cap_param", "declare", "described",
           "has_numpy_twin", "masked_median_numpy", "rule"]
