"""Eviction rules (SPEC §1.5) as values, and their registry.

A rule is a ``Policy``: a frozen pytree dataclass made with ``rule(name)``, whose
fields (each declared with ``declare``, ``mc._fields``'s: default, range, unit,
meaning, calibration grid) are its parameters, with ``mark``, written once over
``cards.xp`` so that it runs in JAX over one pool and in NumPy over a batch (a rule
that cannot be written so adds ``mark_numpy``, its NumPy twin). Adding a rule is one
file holding those and one entry in ``BUILTINS``; everything that once branched on
a policy's name asks the registry instead: the scenario file's ``[eviction]`` keys,
``mc show``'s comments, calibration grids and their flags, the NumPy month and the
references. ``register`` adds a rule at run time (a user's own, after ``check``
finds it keeps the contract); a rule loaded from a user's file is registered under
its origin (``"rules.py:Band"``), which is what ``eviction.policy`` holds for it.
"""

from __future__ import annotations

from ... import _validate as v
from .base import Cards as Cards
from .base import NumpyCards as NumpyCards
from .base import Field as Field
from .base import Policy as Policy
from .base import cap_param as cap_param
from .base import declare as declare
from .base import rule as rule
from .check import check as check
from .floor import Floor as Floor
from .share import Share as Share
from .threshold import Threshold as Threshold
from .zscore import ZScore as ZScore

# The built-in rules, in the order lists name them.
BUILTINS = (Share, Threshold, ZScore, Floor)

_REGISTRY: dict[str, type[Policy]] = {}


def register(cls: type[Policy], *, checked: bool = True) -> type[Policy]:
    """Add a rule (a class made with ``rule(name)``) under its key (its origin,
    else its name) after ``check`` (unless ``checked=False``); returns it. A key
    taken by another class is an error, unless both were loaded from the same file
    (the file changed: the new one replaces the old)."""
    if not (isinstance(cls, type) and issubclass(cls, Policy) and cls.__dict__.get("name")):
        raise TypeError(f"register: {cls!r} must be a Policy class made with @rule(name)")
    key = cls.key()
    have = _REGISTRY.get(key)
    if have is cls:
        return cls
    if have is not None and not (have.source and cls.source and have.source["path"] == cls.source["path"]):
        where = have.source["path"] if have.source else "mc"
        v.fail("eviction.policy", key, f"names a rule registered already (from {where}); give a path that tells "
               "them apart" if cls.origin else "is a built-in rule's name: give yours another")
    if checked:
        check(cls)
    _REGISTRY[key] = cls
    return cls


for _cls in BUILTINS:
    register(_cls, checked=False)


def names() -> list[str]:
    """The registered rules' keys (a built-in's name, a loaded rule's origin)."""
    return list(_REGISTRY)


def loaded() -> list[dict]:
    """Each rule loaded from a user's file: its origin, the file's path and sha256
    (what an output's provenance records)."""
    return [{"policy": key, **cls.source} for key, cls in _REGISTRY.items() if cls.source]


def get(name: str) -> type[Policy]:
    """The rule registered as ``name`` (a built-in's name or a loaded rule's
    origin); else a one-line error naming ``eviction.policy``."""
    if isinstance(name, str) and ":" in name and name not in _REGISTRY:
        v.fail("eviction.policy", name, "names a rule from a file that was not loaded: scenario files load it "
               "(mc.files.load_rule)")
    v.choice("eviction.policy", name, _REGISTRY)
    return _REGISTRY[name]


def fields(rules=None) -> dict[str, list[str]]:
    """Every rule's field, in registry order, with the rules that declare it; of
    ``rules`` (classes, e.g. ``BUILTINS``) only when given."""
    out: dict[str, list[str]] = {}
    for name, cls in ({c.key(): c for c in rules} if rules is not None else _REGISTRY).items():
        for f in cls.params():
            out.setdefault(f, []).append(name)
    return out


def declaration(field: str) -> Field:
    """A field's declaration (its first declaring rule's)."""
    return next(cls.params()[field] for cls in _REGISTRY.values() if field in cls.params())


# Earlier names of what a rule's file imports: importing one is a one-line error naming the new.
_RENAMED = {"param": "declare", "Param": "Field"}


def __getattr__(name: str):
    if name in _RENAMED:
        raise ImportError(f"mc.fleet.policies.{name} is now mc.fleet.policies.{_RENAMED[name]} "
                          f"(the same arguments: default, lo=, hi=, unit=, doc=, grid=)")
    raise AttributeError(f"module 'mc.fleet.policies' has no attribute {name!r}")


__all__ = ["BUILTINS", "Cards", "Field", "Floor", "NumpyCards", "Policy", "Share", "Threshold", "ZScore", "cap_param",
           "check", "declaration", "declare", "fields", "get", "loaded", "names", "register", "rule"]
