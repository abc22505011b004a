"""Grids over scenario fields: a sweep's points and a calibration's settings.

A grid is a dotted field name → list of values (``flatten_grid`` reads TOML's
nested tables; ``check_grid`` its names and lists). A sweep runs the whole
product of the lists (``points``); a calibration's settings are the product too,
except that a policy's own field varies only under the policies that declare it
(``mc.fleet.policies``): at most ``MAX_SETTINGS``, each validated and built
before anything runs (``settings``), over the default grid or a file's, with
lists given one by one replacing their fields' (``with_given``).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as v
from .. import files
from ..fleet import Scenario, field_names
from ..fleet import policies as fleet_policies
from ..fleet.runset import MODES
from ..fleet.scenario import OPTIONAL, pool_to_data
from . import derive
from .manifest import config_hash as _hash
from .manifest import plain as _plain

WINDOWS = (1.0, 4.0, 24.0, 72.0, 168.0)  # hour, 4 h, day, 3 days, week
STRIKES = (1, 2)  # for a §6 scenario
MAX_SETTINGS = 4_096
DEFAULT_POLICIES = ("share", "threshold")  # the default calibration grid's


def flatten_grid(grid: Any, prefix: str = "") -> dict[str, Any]:
    """``{"window": {"hours": [...]}}`` (TOML's unquoted dotted keys) → ``{"window.hours": [...]}``."""
    if not isinstance(grid, dict):
        v.fail("grid" + ("." + prefix.rstrip(".") if prefix else ""), grid,
               "must be a table of field = [values]")
    out: dict[str, Any] = {}
    for key, val in grid.items():
        if isinstance(val, dict):
            out.update(flatten_grid(val, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = val
    return out


def check_grid(grid: Any) -> None:
    """Names and value lists of a grid, before any scenario is built."""
    if not isinstance(grid, dict) or not grid:
        v.fail("grid", grid, "must name at least one field with a list of values")
    known = field_names()
    for name, vals in grid.items():
        if name not in known:
            v.fail(f"grid.{name}", vals, "is not a scenario field; known: " + ", ".join(known))
        if isinstance(vals, (str, bytes, dict)) or not hasattr(vals, "__len__"):
            v.fail(f"grid.{name}", vals, "must be a list of values")
        if len(vals) == 0:
            v.fail(f"grid.{name}", list(vals), "must be a non-empty list of values")
        labels = [json.dumps(_plain(x), sort_keys=True) for x in vals]
        if len(set(labels)) != len(labels):
            v.fail(f"grid.{name}", list(vals), "values must be distinct")


# -- a sweep's grid points ------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Point:
    """One grid point: its index, the values as given, its scenario and file key."""

    index: int
    values: dict[str, Any]   # field → value as written in the grid
    labels: dict[str, Any]   # field → canonical value for the table (float hours, pool string, ...)
    scenario: Scenario
    key: str                 # hex hash naming points/<key>.parquet


def describe_point(values: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={_plain(x)!r}" for k, x in values.items()) + "}"


def points(sweep: Any) -> list[Point]:
    """Every grid point of a ``Sweep``: its scenario, all built (and validated)
    before anything runs, and its file's key.

    Raises:
        ParamError: naming the grid point and the field whose value is out of range.
    """
    fields = list(sweep.grid)
    out = []
    for index, combo in enumerate(itertools.product(*sweep.grid.values())):
        values = dict(zip(fields, combo))
        try:
            scenario = sweep.base.replace(values)
            for name, expr in sweep.derive.items():  # a column the point's month has
                derive.check(f"derive.{name}", expr, derive.outputs(scenario))
        except v.ParamError as err:
            raise v.ParamError(f"grid point {index} {describe_point(values)}: {err}") from None
        labels = {f: label(scenario, f) for f in fields}
        key = _hash({"scenario": scenario.to_dict(), "n": sweep.n, "seed": sweep.seed,
                     "derive": sweep.derive, "labels": labels})[:20]
        out.append(Point(index, values, labels, scenario, key))
    return out


def label(scenario: Scenario, field: str) -> Any:
    """The canonical value of a dotted field in a scenario: plain float/int/str,
    ``"16 x flagship"`` for a pool (JSON for custom cards), a short hash for a trace;
    None for an eviction field the scenario's policy does not declare or an
    ``[autoscaler]`` field of a §1 month; an absent ``[failures]`` or ``[spot]``
    field's default (its terms off)."""
    if field == "pool":  # as written (``spot.share`` splits it for the month)
        data = pool_to_data(scenario.pool if scenario.written_pool is None else scenario.written_pool)
        return data if isinstance(data, str) else json.dumps(data, sort_keys=True)
    if field == "runset":
        return scenario.runset
    head, _, tail = field.partition(".")
    if head == "eviction" and tail != "evict" and tail not in scenario.eviction.to_fields():
        return None  # another policy's field: it does not apply (``evict`` is every policy's)
    part = getattr(scenario, head)
    if part is None:  # an absent section: §10's hold their defaults (every term off), §6's does not apply
        if head == "autoscaler":
            return None
        part = OPTIONAL[head]()
    val = getattr(part, tail)
    if isinstance(val, np.ndarray):
        return f"<{val.size} values {_hash(val.tolist())[:8]}>"
    if isinstance(val, (bool, np.bool_)):
        return bool(val)
    if isinstance(val, (int, np.integer)):
        return int(val)
    if isinstance(val, (float, np.floating)):
        return float(val)
    return val


# -- a calibration's settings -----------------------------------------------------

def policy_fields() -> dict[str, tuple[str, ...]]:
    """A policy's own parameters (``"eviction.theta"``) and the registered policies
    that declare each: such a field varies only under those policies."""
    return {f"eviction.{f}": tuple(owners) for f, owners in fleet_policies.fields().items()}


def _phrase(owners: tuple[str, ...]) -> str:
    """``the threshold policy``, ``the threshold, zscore or floor policies``."""
    if len(owners) == 1:
        return f"the {owners[0]} policy"
    return f"the {', '.join(owners[:-1])} or {owners[-1]} policies"


def default_grid(base: Scenario) -> dict[str, list]:
    """The grid searched when none is given: windows × {share × shares, threshold
    × θ, and the scenario's own rule, when it is another, × its fields' declared
    values} × run-set modes, and strikes for a §6 scenario. Each policy's values
    are those its fields declare (``declare(..., grid=...)``)."""
    names = list(DEFAULT_POLICIES)
    if base.eviction.policy not in names:
        names.append(base.eviction.policy)
    grid: dict[str, list] = {"window.hours": list(WINDOWS), "eviction.policy": names}
    for name in names:
        for field, declared in fleet_policies.get(name).params().items():
            if declared.grid:
                grid.setdefault(f"eviction.{field}", list(declared.grid))
    grid["runset"] = list(MODES)
    if base.autoscaler is not None:
        grid["autoscaler.strikes"] = list(STRIKES)
    return grid


def load_grid(path) -> dict[str, list]:
    """The ``[grid]`` table of a TOML file (``"window.hours" = [1, 24, 168]``); an
    ``eviction.policy`` that names a rule's file (relative to the grid's) loads it."""
    grid = flatten_grid(files.read_one_table(path, "grid", '"window.hours" = [1, 24, 168]'))
    files.load_policies(grid.get("eviction.policy", []), Path(path).parent, "grid.eviction.policy")
    return grid


def with_given(grid: dict[str, list], given: dict[str, list], *, default: bool) -> dict[str, list]:
    """``grid`` (updated in place) with each list of ``given`` (field → values)
    replacing its field's.
    Over the ``default`` grid, policies' own lists given alone pick the policies:
    those declaring every one of them (of those the grid names, when some do: a
    ``max_share`` list alone keeps threshold), else each list's own (share with
    theta: both); a policy's own field that no policy left uses is dropped."""
    if default and given:
        declared = policy_fields()
        owned = [set(declared[f]) for f in given if f in declared]
        if "eviction.policy" not in given and owned:
            common = set.intersection(*owned)
            pick = (common & set(grid.get("eviction.policy", []))) or common or set.union(*owned)
            grid["eviction.policy"] = [p for p in fleet_policies.names() if p in pick]
        pols = given.get("eviction.policy", grid.get("eviction.policy", []))
        for f, owners in declared.items():
            if f in grid and f not in given and not set(owners) & set(pols):
                del grid[f]
    grid.update(given)
    return grid


@dataclasses.dataclass(frozen=True)
class Setting:
    """One point of the grid: the values as given, a short name, its scenario."""

    values: dict[str, Any]
    name: str
    scenario: Scenario


def _fmt(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


# How a field reads in a setting's name ("24h window, theta 0.8, peak, strikes 2"); a
# policy's own field reads "share 0.2", "k 3".
NAMES = {"window.hours": "{}h window", "runset": "{}", "autoscaler.period": "every {}h",
         "autoscaler.boot_hours": "boot {}h", "autoscaler.strikes": "strikes {}", "autoscaler.min_age": "min_age {}h",
         "pool": "{}", "spot.share": "spot share {}", "spot.zones": "{} zones", "spot.fallback_hours": "fallback {}h",
         "failures.rate": "failures {}/month", "failures.replace_hours": "replaced in {}h"}


def _name_format(field: str) -> str:
    if field in NAMES:
        return NAMES[field]
    head, _, tail = field.partition(".")
    return f"{tail} {{}}" if head == "eviction" and tail in fleet_policies.fields() else field + "={}"


def setting_name(values: dict[str, Any], policies: list[str] | None = None) -> str:
    """A short name of a setting from its grid values: the policy is implied (and
    left out) where a field given is one that only it, of ``policies`` (the grid's;
    default every registered one), declares (its share or theta)."""
    own = policy_fields()
    pols = set(policies if policies is not None else fleet_policies.names())
    parts = []
    for f, x in values.items():
        if f == "eviction.policy" and any(set(own[g]) & pols == {x} for g in values if g in own):
            continue
        if f in ("autoscaler.replace", "autoscaler.failover"):
            word = f.partition(".")[2]
            parts.append(word if x else f"no {word}")
            continue
        parts.append(_name_format(f).format(_fmt(x)))
    return ", ".join(parts)


def settings(base: Scenario, grid: dict[str, Any]) -> list[Setting]:
    """Every setting of the grid, validated and built before anything runs.

    Raises:
        ParamError: an unknown field, an empty or repeated list, a policy's own
            field that no policy in the grid uses, more than ``MAX_SETTINGS``
            settings, or a setting the scenario refuses (naming it).
    """
    grid = flatten_grid(grid) if isinstance(grid, dict) else grid
    check_grid(grid)
    grid = {k: list(vals) for k, vals in grid.items()}
    policies = grid.get("eviction.policy", [base.eviction.policy])
    declared = policy_fields()
    for f, owners in declared.items():
        if f in grid and not set(owners) & set(policies):
            v.fail(f"grid.{f}", grid[f], f"varies only under {_phrase(owners)}, which no setting uses; "
                   "add " + " or ".join(f'"{o}"' for o in owners) + " to eviction.policy")
    fields = list(grid)
    size = 0
    combos = []
    for policy in policies:
        own = [f for f in fields if policy in declared.get(f, (policy,))]
        lists = [[policy] if f == "eviction.policy" else grid[f] for f in own]
        count = math.prod(len(x) for x in lists)
        size += count
        if size > MAX_SETTINGS:
            break
        combos += [dict(zip(own, c)) for c in itertools.product(*lists)]
        if "eviction.policy" not in grid:
            break
    if size > MAX_SETTINGS:
        total = sum(math.prod(len(grid[f]) if f != "eviction.policy" else 1 for f in fields
                              if p in declared.get(f, (p,))) for p in policies)
        v.fail("grid", f"{total:,} settings", f"is too large; at most {MAX_SETTINGS:,} settings per calibration")
    out = []
    for values in combos:
        try:
            sc = base.replace(values)
        except v.ParamError as err:
            raise v.ParamError(f"setting {describe_point(values)}: {err}") from None
        out.append(Setting(values, setting_name({f: label(sc, f) for f in values}, policies), sc))
    return out


def own_value(sc: Scenario, field: str) -> Any:
    """A setting's value of a grid field: None where it does not apply (a policy's
    own field under the other policy, an [autoscaler] field in a §1 month)."""
    head = field.partition(".")[0]
    if head == "autoscaler" and sc.autoscaler is None:
        return None
    if sc.eviction.policy not in policy_fields().get(field, (sc.eviction.policy,)):
        return None
    return label(sc, field)
