"""One declaration per field: its default, allowed values, unit and meaning.

A parameter section (a frozen dataclass: ``Window``, ``Dips``, an eviction rule) declares
each field once with ``declare(...)``; validation (``check_fields``), ``mc show``'s
comments, the field docs and calibration grids all read that one declaration
(``declarations(cls)``), so adding a field touches one line.

A bound is a number or the name of a sibling field (``hi="period"``: at most that
field's value), checked after the sibling itself.
"""

from __future__ import annotations

import dataclasses
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
        ``field``, the value and what is allowed."""
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
        ``true or false``, ``flat, diurnal``."""
        if self.kind == "flag":
            return "true or false"
        if self.kind == "choice":
            return ", ".join(self.options)
        if self.kind == "any":
            return "see meaning"

        def fmt(b):
            return b if isinstance(b, str) else f"{b:g}"
        lo, hi = self.lo, self.hi
        if hi is None:
            return "any number" if lo is None else f"{'>' if self.lo_open else '≥'} {fmt(lo)}"
        if lo is None:
            return f"{'<' if self.hi_open else '≤'} {fmt(hi)}"
        return f"{'(' if self.lo_open else '['}{fmt(lo)}, {fmt(hi)}{')' if self.hi_open else ']'}"


def declare(default: Any, *, lo: float | str | None = None, hi: float | str | None = None, lo_open: bool = False,
            hi_open: bool = False, unit: str = "", doc: str = "", grid: tuple = (), kind: str = "number",
            options: tuple = (), parse: Callable[[str, Any], Any] | None = None) -> Any:
    """A dataclass field with its declaration (``Field``); the default and each grid
    value must be allowed (numeric bounds only: a sibling's bound is checked on use)."""
    if kind not in KINDS:
        raise TypeError(f"declare: kind must be one of {', '.join(KINDS)}, not {kind!r}")
    declared = Field(default, lo, hi, lo_open, hi_open, unit, doc, tuple(grid), kind, tuple(options), parse)
    for x in (default, *declared.grid):
        if x is not None and kind != "any":
            Field(**{**dataclasses.asdict(declared), "lo": declared.bounds()[0], "hi": declared.bounds()[1]}).check(
                "declare", x)
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
