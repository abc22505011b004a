"""A user's own eviction rule, named in a scenario file (SPEC §1.5).

``[eviction] policy = "rules.py:Band"`` (a Python file, relative to the scenario's
folder) or ``"package.module:Band"`` (an importable module) names a class made with
``mc.fleet.policies.rule``; its fields go in the same table. ``load_rule`` imports
it once (loading a rule runs its file's code, as importing any module does),
checks that it keeps the contract (``mc.fleet.policies.check``: it builds from its
defaults; ``mark`` is a pure, vectorizable JAX function returning one bool per card)
and registers it under that string, with the file's path and sha256 for provenance.
Anything wrong is one line naming the rule, before any month runs.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from .. import _validate as v
from ..fleet import policies
from ..fleet.policies import Policy
from .outputs import digest

_LOADED: dict[tuple, type[Policy]] = {}  # (origin, path, sha256) -> the class


def is_rule_path(policy: Any) -> bool:
    """Whether ``eviction.policy`` names a rule in a file or module (``"where:Class"``)."""
    return isinstance(policy, str) and ":" in policy


def load_rule(spec: str, folder: str | Path = ".", field: str = "eviction.policy") -> type[Policy]:
    """The rule ``spec`` names (``"path/to/rules.py:Class"``, relative to ``folder``,
    or ``"package.module:Class"``), loaded, checked and registered under ``spec``."""
    if not is_rule_path(spec):
        v.fail(field, spec, 'names a rule in a file as "path/to/rules.py:Class" or "package.module:Class"')
    where, _, name = spec.rpartition(":")
    if not (where and name.isidentifier()):
        v.fail(field, spec, 'must be "path/to/rules.py:Class" or "package.module:Class" (Class a Python name)')
    if where.endswith(".py"):
        path = (Path(folder) / where).resolve()
        try:
            sha = digest(path)["sha256"]
        except FileNotFoundError:
            v.fail(field, spec, f"no such file: {path}")
        except OSError as e:
            v.fail(field, spec, f"cannot read {path}: {e.strerror or e}")
        cached = _LOADED.get((spec, str(path), sha))
        if cached is not None:
            return policies.register(cached)
        module = _exec_file(field, spec, path, sha)
    else:
        module = _import(field, spec, where)
        path = Path(getattr(module, "__file__", None) or where)
        sha = digest(path)["sha256"] if path.is_file() else None
    cls = getattr(module, name, None)
    if cls is None:
        found = sorted(k for k, x in vars(module).items() if isinstance(x, type) and issubclass(x, Policy)
                       and x is not Policy and x.__module__ == module.__name__)
        v.fail(field, spec, f"{where} has no {name}" + (f" (its rules: {', '.join(found)})" if found else
                                                         " (and defines no rule)"))
    if not (isinstance(cls, type) and issubclass(cls, Policy) and cls.__dict__.get("name")):
        v.fail(field, spec, f"{name} must be a class made with @mc.fleet.policies.rule(\"name\") that subclasses "
               "mc.fleet.policies.Policy")
    cls.origin = spec
    cls.source = {"path": str(path), "sha256": sha}
    policies.register(cls)
    if where.endswith(".py"):
        _LOADED[(spec, str(path), sha)] = cls
    return cls


def load_policies(values: Any, folder: str | Path, field: str) -> None:
    """Load every rule a list of ``eviction.policy`` values names by file or module
    (a grid's list), relative to ``folder``; one loaded already under that name (the
    scenario's own) is kept."""
    for x in values if isinstance(values, (list, tuple)) else [values]:
        if is_rule_path(x) and x not in policies.names():
            load_rule(x, folder, field)


def _exec_file(field: str, spec: str, path: Path, sha: str):
    """Run the file as a module of its own (named for its content)."""
    module_name = f"mc_rule_{hashlib.sha256(f'{spec}|{path}|{sha}'.encode()).hexdigest()[:16]}"
    found = importlib.util.spec_from_file_location(module_name, path)
    if found is None or found.loader is None:
        v.fail(field, spec, f"{path} is not a Python file that can be loaded")
    module = importlib.util.module_from_spec(found)
    sys.modules[module_name] = module  # dataclasses look their module up while the class is made
    try:
        found.loader.exec_module(module)
    except v.ParamError as e:
        del sys.modules[module_name]
        v.fail(field, spec, f"loading it: {e}")
    except BaseException as e:  # the user's code: whatever it raises is named, on one line
        del sys.modules[module_name]
        if isinstance(e, KeyboardInterrupt):
            raise
        line = None if isinstance(e, SyntaxError) else _line_in(e, path)  # a SyntaxError says its line
        v.fail(field, spec, f"loading {path.name} raised {type(e).__name__}: {v.exception_line(e)}"
               + (f" (line {line})" if line else ""))
    return module


def _import(field: str, spec: str, where: str):
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as e:
        v.fail(field, spec, f"no module {e.name!r} to import (a file is named as path/to/rules.py:Class)")
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        v.fail(field, spec, f"importing {where} raised {type(e).__name__}: {v.exception_line(e)}")


def _line_in(e: BaseException, path: Path) -> int | None:
    """The line of ``path`` where the exception was raised (the last frame in it)."""
    tb, line = e.__traceback__, None
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


__all__ = ["is_rule_path", "load_policies", "load_rule"]
