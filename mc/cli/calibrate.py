"""``mc calibrate``: the cheapest autoscaler setting within stated risks."""

from __future__ import annotations

from pathlib import Path

from .. import _validate as v
from .. import files
from ..fleet import policies
from ..studies import calibrate as cal
from ..studies import manifest
from ._common import add_cluster, cluster_of, executor_of, held, print_json

# flag -> the scenario field it lists values of; each registered policy's own fields
# (``mc.fleet.policies``: share, theta, max_share, k, floor, ...) come between policy
# and runset (``grid_flags``).
GRID_FLAGS = {
    "window": "window.hours", "policy": "eviction.policy", "runset": "runset",
    "period": "autoscaler.period", "replace": "autoscaler.replace", "boot_hours": "autoscaler.boot_hours",
    "strikes": "autoscaler.strikes", "min_age": "autoscaler.min_age",
}
# The command's other options: a policy field of one of these names has no flag of
# its own (a --grid file still lists it).
OTHER_FLAGS = ("scenario", "grid", "vary", "objective", "max_capacity_risk", "max_wrong", "max_wrong_mean", "judge", "n",
               "first", "seed", "chunk", "cluster", "out", "json", "quiet", "progress", "help", "func", "command")


def grid_flags() -> dict[str, str]:
    """Every grid flag and its field: ``GRID_FLAGS`` and each built-in policy's own
    fields (a rule of one's own takes ``--vary``)."""
    own = {f: f"eviction.{f}" for f in policies.fields(policies.BUILTINS) if f not in GRID_FLAGS
           and f not in OTHER_FLAGS}
    head = dict(list(GRID_FLAGS.items())[:2])
    return {**head, **own, **{k: x for k, x in GRID_FLAGS.items() if k not in head}}
WORDS = {"hour": 1, "day": 24, "week": 168}  # SPEC §1.4's names of windows


def _owners(names: list[str]) -> str:
    """``share policy``, ``threshold, zscore or floor policies``."""
    return f"{names[0]} policy" if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]} policies"


def values(flag: str, text: str) -> list:
    """``"1,24,168"`` -> ``[1, 24, 168]``: each item an int, a float, true/false,
    or a word (a policy, a run-set mode; hour/day/week for a window)."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            v.fail(f"--{flag.replace('_', '-')}", text, "must be a comma-separated list of values, e.g. 1,24,168")
        low = item.lower()
        if flag == "window" and low in WORDS:
            out.append(float(WORDS[low]))
        elif low in ("true", "false"):
            out.append(low == "true")
        else:
            try:
                out.append(int(item))
            except ValueError:
                try:
                    out.append(float(item))
                except ValueError:
                    out.append(item)
    return out


def varied(items: list[str] | None) -> dict[str, list]:
    """``--vary FIELD=V1,V2`` (repeatable) -> ``{FIELD: [V1, V2]}``: any scenario
    field, a user's rule's own fields included, and the pool (``"32 x flagship,34 x
    flagship"``: the spares a §10 calibration weighs)."""
    out: dict[str, list] = {}
    for item in items or []:
        field, eq, text = item.partition("=")
        field = field.strip()
        if not eq or "." not in field and field not in ("runset", "pool") or not text.strip():
            v.fail("--vary", item, 'must be FIELD=V1,V2,... with FIELD a "section.field", e.g. eviction.low=0.7,0.8')
        if field in out:
            v.fail("--vary", item, f"gives {field} twice")
        out[field] = values(field.rpartition(".")[2], text)
    return out


def grid_of(args, base) -> dict:
    """The grid: the file's (``--grid``) or the default, each flag (and ``--vary``)
    replacing its field (``with_given``: over the default grid, policies' own lists
    given alone pick the policies). A ``--policy`` that names a rule's file loads it."""
    grid = cal.load_grid(args.grid) if args.grid else cal.default_grid(base)
    given = {field: values(flag, getattr(args, flag)) for flag, field in grid_flags().items()
             if getattr(args, flag, None) is not None}
    for field, vals in varied(getattr(args, "vary", None)).items():
        if field in given:
            v.fail("--vary", f"{field}=...", "is given by its own flag too: give it once")
        given[field] = vals
    files.load_policies(given.get("eviction.policy", []), ".", "--policy")
    return cal.with_given(grid, given, default=not args.grid)


def run(args) -> int:
    cluster = cluster_of(args)
    scenario = files.scenario(args.scenario)
    if args.out is not None:
        files.check_output_folder(args.out)
    grid = grid_of(args, scenario)
    # The folder is held from here to the last byte: a second writer is refused before either writes.
    with held(args.out, "calibration"), executor_of(cluster) as executor:
        result = cal.calibrate(scenario, grid, objective=args.objective, max_capacity_risk=args.max_capacity_risk,
                               max_wrong=args.max_wrong, max_wrong_mean=args.max_wrong_mean, judge=args.judge,
                               n=args.n, first=args.first, seed=args.seed, chunk=args.chunk,
                               progress=False if args.quiet or args.json else (True if args.progress else None),
                               executor=executor)
        described = executor.describe()
        prov = manifest.provenance(scenario=scenario.to_dict(), seed=args.seed, n=args.n,
                                   wall_s=round(result.wall_s, 3), **({"cluster": described} if described else {}))
        if args.out:
            report = cal.save(result, args.out, args.scenario, provenance=prov)
        else:
            report = {"scenario": args.scenario, **result.to_dict(), "provenance": prov}
    if args.json:
        print_json(report)
    else:
        print(cal.format_calibration(args.scenario, result))
        if args.out:
            print(f"\ncandidates written to {Path(args.out) / 'candidates.parquet'}")
    return 0 if result.best is not None else 1


def register(sub) -> None:
    p = sub.add_parser(
        "calibrate", help="the cheapest autoscaler setting within stated risks",
        description="Race the settings of a grid over the scenario's fields on common random numbers and "
        "recommend the one with the lowest mean bill (or --objective) whose risks stay within the limits, "
        "each judged on the upper end of its 95% interval. The grid is the default (windows 1 h, 4 h, "
        "1 day, 3 days, 1 week x share 0..0.3 or threshold 0.6..0.95 x run sets steady, peak, all; "
        "strikes 1, 2 with [autoscaler]), or --grid FILE.toml, each flag below replacing its field's list. "
        "All settings run --first months; the months double for those still in the race, up to --n. "
        f"At most {cal.MAX_SETTINGS:,} settings. Settings with identical outputs every month are one row. "
        "Exits 1 when no setting meets the limits (the closest is reported).")
    p.add_argument("scenario", metavar="PRESET|FILE.toml")
    g = p.add_argument_group("grid (comma-separated values; each replaces that field's list)")
    g.add_argument("--grid", metavar="FILE.toml", default=None,
                   help='a [grid] table of "section.field" = [values] (any scenario field) instead of the default')
    g.add_argument("--window", metavar="HOURS", help="window.hours, e.g. 1,24,168 or hour,day,week")
    g.add_argument("--policy", metavar="P", help="eviction.policy: " + ", ".join(c.name for c in policies.BUILTINS)
                   + ", or a rule of your own as path/to/rules.py:Class (as the scenario names it, or relative to "
                   "the current folder)")
    owners = policies.fields(policies.BUILTINS)
    for flag, field in grid_flags().items():
        name = field.partition(".")[2]
        if field.startswith("eviction.") and name in owners:
            d = policies.declaration(name)
            eg = {"share": ", e.g. 0,0.1,0.2", "theta": ", e.g. 0.6,0.8", "k": ", e.g. 2,3"}.get(name, "")
            g.add_argument("--" + flag.replace("_", "-"), metavar={"share": "S", "theta": "T", "max_share": "S"}.get(
                               name, name.upper()),
                           help=f"{field} ({_owners(owners[name])}; {d.unit}, {d.allowed()}){eg}")
    g.add_argument("--vary", metavar="FIELD=V1,V2", action="append", default=None,
                   help="any scenario field's list, e.g. eviction.low=0.7,0.8 for a rule of your own (repeatable)")
    g.add_argument("--runset", metavar="MODE", help="runset: steady, peak, all")
    g.add_argument("--period", metavar="H", help="autoscaler.period: whole hours between rounds, e.g. 24,168,730")
    g.add_argument("--replace", metavar="B", help="autoscaler.replace: true, false")
    g.add_argument("--boot-hours", metavar="H", help="autoscaler.boot_hours")
    g.add_argument("--strikes", metavar="K", help="autoscaler.strikes, e.g. 1,2,3")
    g.add_argument("--min-age", metavar="H", help="autoscaler.min_age (hours)")
    a = p.add_argument_group("answer")
    a.add_argument("--objective", choices=tuple(cal.OBJECTIVES), default="bill",
                   help="what the recommendation optimises (default: lowest mean bill; convergence is capped at 1)")
    a.add_argument("--max-capacity-risk", type=float, default=0.05, metavar="P",
                   help="limit on P(capacity check fails) (default 0.05)")
    a.add_argument("--max-wrong", type=float, default=0.05, metavar="P",
                   help="limit on P(any wrong eviction in a month) (default 0.05)")
    a.add_argument("--max-wrong-mean", type=float, default=None, metavar="X",
                   help="also a limit on the mean wrong evictions a month (default: none)")
    a.add_argument("--judge", choices=cal.JUDGES, default="upper",
                   help="judge the limits on the upper end of the 95%% interval (default) or the point estimate")
    s = p.add_argument_group("sampling")
    s.add_argument("--n", type=int, default=cal.DEFAULT_N,
                   help=f"most fleet-months per setting (default {cal.DEFAULT_N:,})")
    s.add_argument("--first", type=int, default=cal.DEFAULT_FIRST,
                   help=f"fleet-months of the race's first round, every setting (default {cal.DEFAULT_FIRST})")
    s.add_argument("--seed", type=int, default=0, help="seed of every setting (default 0)")
    s.add_argument("--chunk", type=int, default=None, help="fleet-months per device batch (default: automatic)")
    add_cluster(s, "settings")
    o = p.add_argument_group("output")
    o.add_argument("--out", metavar="DIR", default=None,
                   help="also write DIR/candidates.parquet and DIR/calibration.json")
    o.add_argument("--json", action="store_true", help="print the report as JSON")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    o.add_argument("--progress", action="store_true", help="a progress bar even when stderr is not a terminal")
    p.set_defaults(func=run)
