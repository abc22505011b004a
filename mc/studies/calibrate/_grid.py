"""The grid of a calibration: its fields, its settings and their names (``calibrate``'s
**The grid**).

Any scenario fields, each with a list of values; settings are the product of the
lists, except that a policy's own field varies only under the policies that
declare it (``mc.fleet.policies``). At most ``MAX_SETTINGS`` settings, each
validated and built before anything runs.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path
from typing import Any

from ... import _validate as v
from ... import files
from ...fleet import Scenario
from ...fleet import policies as fleet_policies
from ...fleet.runset import MODES
from ..sweep import check_grid, describe_point, flatten_grid, label

WINDOWS = (1.0, 4.0, 24.0, 72.0, 168.0)  # hour, 4 h, day, 3 days, week
STRIKES = (1, 2)  # for a §6 scenario
MAX_SETTINGS = 4_096
DEFAULT_POLICIES = ("share", "threshold")  # the default grid's


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
         "autoscaler.boot_hours": "boot {}h", "autoscaler.strikes": "strikes {}", "autoscaler.min_age": "min_age {}h"}


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
        if f == "autoscaler.replace":
            parts.append("replace" if x else "no replace")
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
