"""One declaration per field: its default, allowed values, unit and meaning.

A parameter section (a frozen dataclass: ``Window``, ``Dips``, an eviction rule) declares
each field once with ``declare(...)``; validation (``check_fields``), ``mc show``'s
comments, the field docs and calibration grids all read that one declaration
(``declarations(cls)``), so adding a field touches one line.

A bound is a number or the name of a sibling field (``hi="period"``: at most that
field's value), checked after the sibling itself. A default of None means "unset":
the section derives the value (``demand.level``, a plan's ``api_price``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable

from . import _validate as v

KINDS = ("number", "integer", "flag", "choice", "any")


@dataclasses.dataclass(frozen=True)
class Field:
    """A field's declaration.

    ``kind``: ``number`` (a finite float32-representable real in ``[lo, hi]``),
    ``integer`` (an int32 in ``[lo, hi]``), ``flag`` (true/false), ``choice`` (one of
    ``options``) or ``any`` (checked by ``parse`` alone). ``parse(field, value)``, when
    given, runs first and returns the value the rest checks (``window.hours`` turns
    ``"day"`` into 24). ``grid``: the values a calibration tries when none is given.
    """

    default: Any
    lo: float | str | None = None
    hi: float | str | None = None
    lo_open: bool = False
    hi_open: bool = False
    unit: str = ""
    doc: str = ""
    grid: tuple = ()
    kind: str = "number"
    options: tuple = ()
    parse: Callable[[str, Any], Any] | None = None

    def bounds(self, obj: Any = None) -> tuple[float | None, float | None]:
        """``(lo, hi)`` as numbers: a sibling's name read from ``obj``."""
        def read(b):
            return getattr(obj, b) if isinstance(b, str) and obj is not None else (None if isinstance(b, str) else b)
        return read(self.lo), read(self.hi)

    def check(self, field: str, value: Any, obj: Any = None) -> Any:
        """``value`` as the field holds it, or a one-line ``ParamError`` naming
        ``field``, the value and what is allowed. A field whose default is None
        (unset: the section derives it) takes None as given."""
        if value is None and self.default is None:
            return None
        if self.parse is not None:
            value = self.parse(field, value)
        if self.kind == "flag":
            return v.flag(field, value)
        if self.kind == "choice":
            return v.choice(field, value, self.options)
        if self.kind == "any":
            return value
        lo, hi = self.bounds(obj)
        return v.number(field, value, lo=lo, hi=hi, lo_open=self.lo_open, hi_open=self.hi_open,
                        integer=self.kind == "integer")

    def allowed(self) -> str:
        """The allowed values as the docs write them: ``> 0``, ``[0, 1)``, ``≤ period``,
        ``integer in [1, 730]``, ``true, false``, ``flat, diurnal`` (docs/model.md's
        tables are checked against it)."""
        if self.kind == "flag":
            return "true, false"
        if self.kind == "choice":
            return ", ".join(self.options)
        if self.kind == "any":
            return "see meaning"
        lo, hi = self.lo, self.hi
        if hi is None:
            text = "any number" if lo is None else f"{'>' if self.lo_open else '≥'} {_shown(lo)}"
        elif lo is None:
            text = f"{'<' if self.hi_open else '≤'} {_shown(hi)}"
        else:
            text = f"{'(' if self.lo_open else '['}{_shown(lo)}, {_shown(hi)}{')' if self.hi_open else ']'}"
        return ("integer " + ("in " if text[0] in "[(" else "") + text) if self.kind == "integer" else text


def _shown(bound: float | str) -> str:
    """A bound as the docs write it: a sibling's name, ``1,000,000``, ``10^18``, ``0.01``."""
    if isinstance(bound, str):
        return bound
    x = float(bound)
    if x > 0 and (x >= 1e7 or x < 1e-3) and math.log10(x).is_integer():
        return f"10^{int(math.log10(x))}"
    return f"{int(x):,}" if x.is_integer() else f"{x:,}"


def declare(default: Any = dataclasses.MISSING, *, lo: float | str | None = None, hi: float | str | None = None,
            lo_open: bool = False, hi_open: bool = False, unit: str = "", doc: str = "", grid: tuple = (),
            kind: str = "number", options: tuple = (), parse: Callable[[str, Any], Any] | None = None,
            factory: Callable[[], Any] | None = None) -> Any:
    """A dataclass field with its declaration (``Field``); the default and each grid
    value must be allowed (numeric bounds only: a sibling's bound is checked on use).
    ``factory`` instead of a default makes a mutable one (``dict``: a per-chip table);
    neither makes a required field."""
    if kind not in KINDS:
        raise TypeError(f"declare: kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if factory is not None and default is not dataclasses.MISSING:
        raise TypeError("declare: give a default or a factory, not both")
    if factory is not None:
        declared = Field(factory(), lo, hi, lo_open, hi_open, unit, doc, tuple(grid), kind, tuple(options), parse)
        return dataclasses.field(default_factory=factory, metadata={"declared": declared})
    declared = Field(default, lo, hi, lo_open, hi_open, unit, doc, tuple(grid), kind, tuple(options), parse)
    for x in (default, *declared.grid):
        if x is not None and x is not dataclasses.MISSING and kind != "any":
            Field(**{**dataclasses.asdict(declared), "lo": declared.bounds()[0], "hi": declared.bounds()[1]}).check(
                "declare", x)
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata={"declared": declared})
    return dataclasses.field(default=default, metadata={"declared": declared})


def declarations(cls: Any) -> dict[str, Field]:
    """``{name: Field}`` of a dataclass's declared fields, in order."""
    return {f.name: f.metadata["declared"] for f in dataclasses.fields(cls) if "declared" in f.metadata}


def check_fields(obj: Any, section: str) -> None:
    """Check every declared field of ``obj`` (a frozen dataclass, from its
    ``__post_init__``) and store the checked value; errors name ``section.field``.
    A field bounded by a sibling is checked after the fields before it."""
    for name, d in declarations(type(obj)).items():
        value = d.check(f"{section}.{name}" if section else name, getattr(obj, name), obj)
        object.__setattr__(obj, name, value)


__all__ = ["Field", "check_fields", "declarations", "declare"]
