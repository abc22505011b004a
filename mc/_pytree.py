"""Frozen dataclasses registered as JAX pytrees, and their plain-data form.

Fields named in ``static`` are pytree metadata (they fix shapes and modes, and a
change recompiles); every other field is a leaf. Unflattening bypasses
``__init__`` so that validation in ``__post_init__`` runs only on values that
enter from outside, never on tracers.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import jax
import numpy as np

from ._validate import fail


def pytree_dataclass(cls=None, *, static: tuple[str, ...] = ()):
    def wrap(cls):
        cls = dataclasses.dataclass(frozen=True, eq=False)(cls)
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = set(static) - set(names)
        if unknown:
            raise TypeError(f"{cls.__name__}: unknown static fields {sorted(unknown)}")
        data = [n for n in names if n not in static]

        def flatten(obj):
            return ([getattr(obj, n) for n in data],
                    tuple(getattr(obj, n) for n in static))

        def unflatten(aux, children):
            obj = object.__new__(cls)
            for n, val in zip(data, children):
                object.__setattr__(obj, n, val)
            for n, val in zip(static, aux):
                object.__setattr__(obj, n, val)
            return obj

        jax.tree_util.register_pytree_node(cls, flatten, unflatten)
        cls._static_fields = tuple(static)
        cls._data_fields = tuple(data)
        return cls

    return wrap if cls is None else wrap(cls)


def set_field(obj, name, value):
    """Set a field of a frozen dataclass from inside its ``__post_init__``."""
    object.__setattr__(obj, name, value)


# -- parameter sections as plain data (TOML tables) --------------------------------------

def field_keys(cls) -> list[str]:
    """The keys of a section's table: its init fields, or ``cls.field_keys()`` where
    the class defines it (a table flatter than the class: ``Eviction``)."""
    keys = getattr(cls, "field_keys", None)
    return list(keys()) if keys is not None else [f.name for f in dataclasses.fields(cls) if f.init]


def fields_dict(obj) -> dict:
    """A section's fields as plain data: ``None`` left out, arrays as lists (or
    ``obj.to_fields()`` where the class defines it)."""
    own = getattr(obj, "to_fields", None)
    items = own().items() if own is not None else ((f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj))
    out = {}
    for name, val in items:
        if val is None:
            continue
        out[name] = val.tolist() if isinstance(val, np.ndarray) else val
    return out


def section(name: str, cls, given: Any, base: Mapping[str, Any] | None = None):
    """Section ``name`` (a ``cls``) from the table ``given``, over the plain fields
    of a base (``fields_dict``). Unknown fields are one-line errors naming them.
    A class may define ``from_fields(merged, given)`` to build itself (and
    ``field_keys``, ``to_fields``: its table's keys and values)."""
    if not isinstance(given, Mapping):
        fail(name, given, "must be a table of fields")
    known = set(field_keys(cls))
    for key in given:
        if key not in known:
            fail(f"{name}.{key}", given[key], f"is not a field of {name}; known: " + ", ".join(sorted(known)))
    fields = {**(base or {}), **given}
    build = getattr(cls, "from_fields", None)
    return build(fields, given) if build is not None else cls(**fields)
