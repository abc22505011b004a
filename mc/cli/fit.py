"""``mc fit``: a scenario's lottery, dips and window noise fitted to telemetry (SPEC §8),
with 95% intervals, and the fitted scenario written as TOML."""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from .. import _validate as v
from .. import files, telemetry
from ..engine import figure
from ..studies import manifest
from ..files.comments import comments
from ..fleet.scenario import Scenario
from ._common import load_scenario, print_json

# Each fitted field (SPEC §8, §8.3) and its units: the field's declared unit.
FITTED = (*telemetry.fitting.LOTTERY_FIELDS, *telemetry.fitting.DIP_FIELDS, "window.sigma_hour")
UNITS = {name: files.field_doc("fleet", name)[0] for name in FITTED}
STRUCTURE = ("wander.sd", "wander.hours", "swing.diurnal", "swing.hot_hour", "swing.sd", "swing.hours")
STRUCTURE_UNITS = {name: files.field_doc("fleet", name)[0] for name in STRUCTURE}
BASE = "golden-idler"  # the scenario --out completes when no --base is given
FIGURE_FORMATS = (".png", ".pdf")  # mc.telemetry.plot.FORMATS (matplotlib is imported only to draw)
EVERY = "*"  # the --rated key of a bare TOK_S: every class of the rows


def _rated(items: list[str] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items or []:
        name, sep, value = item.rpartition("=") if "=" in item else (EVERY, "=", item)
        try:
            x = float(value)
        except ValueError:
            x = None
        if x is None:
            v.fail("rated", item, "must be TOK_S (every class) or CLASS=TOK_S, e.g. 7000 or flagship=7000")
        out[name] = v.positive("rated" if name == EVERY else f"rated.{name}", x)
    return out


def _columns(text: str | None) -> dict[str, str]:
    """``--columns card=NAME,time=NAME,...``: each key the file's own name for it."""
    out: dict[str, str] = {}
    for key, name in v.pairs("--columns", text, "card=instance,rate=tok_s") if text is not None else []:
        if key not in telemetry.series.COLUMNS:
            v.fail("--columns", text, "must be KEY=NAME pairs separated by commas, each KEY one of "
                   f"{', '.join(telemetry.series.COLUMNS)}, e.g. card=instance,rate=tok_s")
        out[key] = name
    return out


def _for_classes(rated: dict[str, float], classes) -> dict[str, float]:
    """A bare rate for every class of the rows that no CLASS=TOK_S names."""
    if EVERY not in rated:
        return rated
    named = {k: x for k, x in rated.items() if k != EVERY}
    return {**{str(c): rated[EVERY] for c in dict.fromkeys(classes)}, **named}


def _num(x: float) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.4g}"


def figures_of(r: dict) -> dict[str, dict]:
    """Each fitted field as the project's figure, ``{"value", "lo", "hi", "units"}``
    (no ``lo``/``hi`` where the fit gives no interval)."""
    out = {}
    for name, units in UNITS.items():
        f = r["fields"][name]
        ok = f["lo"] is not None and f["hi"] is not None and math.isfinite(f["lo"]) and math.isfinite(f["hi"])
        out[name] = figure(f["value"], f["lo"] if ok else None, f["hi"] if ok else None, units)
    return out


def _check(args) -> tuple:
    """Every flag, before the file is read or anything runs (one-line errors)."""
    rated = _rated(args.rated)
    columns = _columns(args.columns)
    bootstrap = v.count("bootstrap", args.bootstrap, lo=0, hi=100_000)
    sims = v.count("sims", args.sims, lo=0, hi=telemetry.fitting.MAX_SIMS)
    if 0 < sims < telemetry.fitting.MIN_SIMS:
        v.fail("sims", sims, f"must be 0 (no dips fitted) or at least {telemetry.fitting.MIN_SIMS}")
    seed = v.count("seed", args.seed, lo=0, hi=2**31 - 1)
    telemetry.slots.check_probe(args.probe)
    telemetry.slots.check_max_gap(args.max_gap)
    telemetry.series.check_tz(args.tz)
    telemetry.slots.check_step(args.step)
    if args.base is not None and args.out is None:
        v.fail("base", args.base, "needs --out FILE.toml (the base is the scenario the fitted fields complete)")
    out = files.check_output(args.out, (".toml",)) if args.out is not None else None
    base = load_scenario(args.base or BASE, args.quiet) if out is not None else None
    return rated, columns, bootstrap, sims, seed, out, base


def structure_sections(r: dict, data: dict) -> list[str]:
    """The fitted wander and swing into a scenario's tables (``data``, in place), each
    identified field only, and what a reader must know of them. Fitted terms the month
    refuses (a swing so large a rate could go negative) are not written: the base's
    are kept, and the note says why."""
    fields = r["structure"]["fields"]
    base = {head: dict(data.get(head, {})) for head in ("wander", "swing")}
    out = []
    for name, f in fields.items():
        head, _, tail = name.partition(".")
        if math.isfinite(f["value"]):
            data.setdefault(head, {})[tail] = float(f["value"])
        else:
            out.append(f"{name} not identified by the fit: the base's value kept")
    try:
        Scenario.from_dict(data)
    except v.ParamError as err:
        data.update(base)
        out.append(f"the fitted wander and swing are not written, the base's kept: the month refuses them ({err})")
    return out


def scenario_text(r: dict, file: str, base_name: str, fitted, notes: list[str]) -> str:
    """The fitted scenario as ``mc show`` writes a scenario: every field with its unit
    and meaning, the fitted ones with their 95% intervals, and a header saying
    where it came from."""
    data = fitted.to_dict()
    notes.extend(structure_sections(r, data))  # the caller's list: it prints them too
    trace = data.get("demand", {}).get("trace")
    if trace is not None:  # the float32 values the scenario holds, as mc show writes them
        data["demand"]["trace"] = np.asarray(trace, np.float32)
    notes_text = "".join(f"\nNote: {n}" for n in notes)
    header = (f"Fitted by mc fit to {file} ({r['cards']:,} cards, a sample every {r['every_minutes']:g} min over "
              f"{r['hours']:g} h) over the base {base_name}.\n"
              "lottery, dips, window.sigma_hour, wander and swing (but swing.start_hour) are fitted (each comment gives "
              "its 95% interval); every other "
              "field is the base's.\nEach comment: unit; meaning, and (default X) where the value is not the "
              f"default.{notes_text}\nRun it with: mc run FILE.toml")
    remarks = comments("fleet", data)
    for name, f in [*((n, r["fields"][n]) for n in UNITS), *r["structure"]["fields"].items()]:
        if math.isfinite(f["value"]):
            interval = (f"95% {_num(f['lo'])} to {_num(f['hi'])}" if f["lo"] is not None and math.isfinite(f["lo"])
                        else "no interval")
            if "bound" in f:  # the search's end: the data say only "at least"
                interval = (f"at least {_num(f['bound'])} (longer than the data can resolve)"
                            if f["value"] >= f["bound"] else f"95% from {_num(f['lo'])}, no upper end the data "
                            f"resolve (past {_num(f['bound'])})")
            remarks[name] = f"fitted, {interval}; " + remarks.get(name, "")
    return files.to_toml(data, header, remarks)


def structure_text(r: dict) -> None:
    """Wander, swing and the window-spread table, as ``mc fit`` prints them."""
    st = r["structure"]
    kind = {"grid": "a regular grid", "interval": "an interval series (each sample the mean since the one before)",
            "probe": "a probe series"}[st["kind"]]
    print(f"\nsamples read as {kind}; {st['outages']:,} outages (gaps past max_gap) split the cards' series")
    print(f"\n{'structure':22s} {'value':>10s}  {'95% interval':>21s}  units")
    for name, f in st["fields"].items():
        value, hi = _num(f["value"]), _num(f["hi"])
        if "bound" in f:  # the search's end is a bound, not an interval's end
            hi = f">={_num(f['bound'])}"
            value = f">={value}" if f["value"] >= f["bound"] else value
        print(f"{name:22s} {value:>10s}  {_num(f['lo']):>10s} to {hi:>7s}  {STRUCTURE_UNITS[name]}")
    print(f"intervals: the wander by resamples of the cards; the swing by a moving-block bootstrap over "
          f"{st['block_days']}-day blocks")
    print(f"\n{'window':8s} {'1/sqrt(W) law':>14s} {'with wander':>12s} {'and swing':>10s}  (spread of a window's "
          "mean, share of rate)")
    for x in st["spread"]:
        print(f"{x['window']:8s} {x['law']:14.4f} {x['with_wander']:12.4f} {x['with_swing']:10.4f}")


def run(args) -> int:
    rated, columns, bootstrap, sims, seed, out, base = _check(args)
    figure_path = None if args.figure is None else files.check_output(args.figure, FIGURE_FORMATS, field="figure")
    s = telemetry.read(args.file, columns=columns, counter=args.counter, probe=args.probe, max_gap=args.max_gap,
                       tz=args.tz, step=args.step)
    rated = _for_classes(rated, s.classes)
    unknown = sorted(set(rated) - set(s.classes))
    if unknown:
        v.fail("rated", unknown[0], "names no class of the file's rows; its classes: "
               + (", ".join(sorted(set(map(str, s.classes)))) or "none (no class column: use --rated =TOK_S)"))
    quiet = args.quiet or args.json

    def say(text: str) -> None:
        if not quiet:
            print(f"mc fit: {text}...", file=sys.stderr)

    t0 = time.perf_counter()
    r = telemetry.fit(s, rated, bootstrap=bootstrap, seed=seed, sims=sims, progress=say)
    wall = round(time.perf_counter() - t0, 3)
    warnings = telemetry.noise.law_warnings(r["noise"]["k_means"])
    written = None
    if out is not None:
        fitted, notes = telemetry.fitting.scenario_of(r, base)
        files.write_text(out, scenario_text(r, args.file, args.base or BASE, fitted, notes))
        written = {"path": str(out), "base": args.base or BASE, "notes": notes}
    if figure_path is not None:
        from ..telemetry import plot  # matplotlib only when a figure is asked for

        say("figure")
        plot.write(figure_path, plot.panels(s, r, base=base, seed=seed))
    if args.json:
        doc = {k: x for k, x in r.items() if k != "fields"}
        print_json({"file": args.file, **doc, "figures": figures_of(r), "warnings": warnings, "out": written,
                    "figure": None if figure_path is None else str(figure_path),
                    "provenance": manifest.provenance(seed=seed, n=r["cards"], wall_s=wall)})
        return 0
    print(f"{args.file}: {r['cards']:,} cards, {r['samples']:,} samples every {r['every_minutes']:g} min over "
          f"{r['hours']:g} h ({wall:.1f} s)")
    print(f"\n{'field':22s} {'value':>10s}  {'95% interval':>21s}  units")
    for name, unit in UNITS.items():
        f = r["fields"][name]
        print(f"{name:22s} {_num(f['value']):>10s}  {_num(f['lo']):>10s} to {_num(f['hi']):>7s}  "
              f"{unit}")
    print(f"intervals: the lottery and sigma_hour by {r['bootstrap']} resamples of the cards; the dips as "
          f"{r['dips']['method']}")
    seen = r["seen"]
    sigma_hour = r["fields"]["window.sigma_hour"]["value"]
    minutes = 60 * r["sample_hours"]  # what one sample averages: a probe's run, or the interval it covers
    print(f"\none sample errs by {100 * sigma_hour * math.sqrt(60 / minutes):.2g}% of its card's rate "
          f"(window.sigma_hour {sigma_hour:.3g} x sqrt(60 / {minutes:.4g}), a sample averaging {minutes:.4g} min"
          + (": the probe's run)" if r["structure"]["kind"] == "probe" else ")"))
    share = r["noise"]["structure_share"]
    if r["noise"]["method"] == "nugget":
        print("window.sigma_hour is the noise's nugget, fitted beside the wander (the wander and swing make most of "
              "the samples' spread about their card's mean)")
    elif share["value"] > 1.0005:
        print(f"the samples' spread about their card's mean reads {share['value']:.4f}x the noise (the wander's and "
              f"swing's share of it; {share['lo']:.4f} to {share['hi']:.4f}), and window.sigma_hour is corrected "
              "for it")
    bias = r["noise"]["bias"]
    if bias is not None and r["noise"]["method"] != "nugget":
        print(f"the clean samples' spread reads {bias['value']:.4f}x the noise (dips too small to see; "
              f"{bias['lo']:.4f} to {bias['hi']:.4f}), and window.sigma_hour is corrected for it")
    print(f"{seen['dips']:,} dips seen; the shallowest a monitor sampling every {r['every_minutes']:g} min can see "
          "(depth at duration, seen about half the time): "
          + ", ".join(f"{x['depth']:.2f} at {x['hours']:g} h" for x in seen["smallest"] if x["depth"] <= 1.0)
          + "; dips shallower or shorter are inferred from the model, not seen")
    law = r["noise"]["k_means"]
    print("spread of the mean of k samples over the 1/sqrt(k) law: "
          + ", ".join(f"k={x['k']}: {x['ratio']:.3f}" for x in law))
    structure_text(r)
    for note in r["notes"]:
        print(f"note: {note}")
    for line in warnings:
        print(f"warning: {line}")
    if written is not None:
        print(f"\nwrote {out}: the base {written['base']} with the fitted lottery, dips, window.sigma_hour, "
              "wander and swing (its header notes what was kept)")
        for note in written["notes"]:
            print(f"note: {note}")
    if figure_path is not None:
        print(f"wrote {figure_path}: the data against the fitted model (baselines, dips seen, window noise)")
    return 0


def register(sub) -> None:
    p = sub.add_parser("fit", help="fit a scenario's lottery, dips and window noise to telemetry",
                       description="Fit lottery.mean, sd, lemon_rate, lemon_factor, dips.rate, mean_hours, "
                       "depth_lo, depth_hi and window.sigma_hour to telemetry rows (docs/model.md §8), each with "
                       "a 95% interval (the lottery and noise by bootstrap over cards, the dips by simulation). "
                       "FILE is a .parquet or .csv of rows with columns "
                       "card, time (hours, or datetimes) and rate (tok/s), and optionally class and rated (tok/s), "
                       "on a grid or at irregular times (an interval series, or a probe series with --probe; gaps of any "
                       "length split a card's series), or a Prometheus query_range export (.json), "
                       "each series a card. Dips too short or shallow to see are accounted for by simulating telemetry "
                       "of the data's size with the same sampling and the same detector; --out writes the fitted "
                       "scenario.")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--rated", action="append", metavar="[CLASS=]TOK_S",
                   help="a class's rated rate (repeat for each class), or TOK_S alone for every class a "
                   "CLASS=TOK_S does not name; it wins over the file's rated column; a class rated by neither is "
                   "rated at its healthy cards' mean, so its fitted lottery mean is 1")
    p.add_argument("--columns", metavar="KEY=NAME,...", default=None,
                   help=f"the file's own names: {','.join(f'{k}=NAME' for k in telemetry.columns.READ)} (any of them; "
                   "default each as its key); in a Prometheus export, the labels of the card (default instance) "
                   "and the class (default none)")
    p.add_argument("--counter", action="store_true",
                   help="a Prometheus export's values are a cumulative count of tokens, not tok/s: each step's "
                   "increase over its seconds is the rate (a drop is a restart from 0, as Prometheus's rate() "
                   "takes it)")
    p.add_argument("--probe", type=float, default=None, metavar="SECONDS",
                   help="the rows are a probe series: each sample a benchmark of SECONDS starting at its time "
                   "(default: an interval series, each sample the mean since the card's previous one)")
    p.add_argument("--max-gap", type=float, default=None, metavar="HOURS",
                   help="a gap longer than this is an outage, after which an interval series' first sample "
                   "reports the card's median gap (default 3x each card's median gap)")
    p.add_argument("--step", type=float, default=None, metavar="SHARE",
                   help="a card whose level steps by more than SHARE across an outage is split there, the part "
                   "after taken as a replacement card, ID~2 (default: a step across a gap is wander)")
    p.add_argument("--tz", default=None, metavar="ZONE",
                   help="the time zone whose hour of day datetimes are read in, for swing.hot_hour (default UTC; "
                   "numeric times are hours since a midnight)")
    p.add_argument("--bootstrap", type=int, default=200, help="resamples of the cards for the intervals (default 200)")
    p.add_argument("--sims", type=int, default=telemetry.fitting.SIMS,
                   help="simulated data sets of the data's size in each of the dips' two rounds, and half as many "
                   f"(at least {telemetry.dipfit.MIN_PREDICT}) for the noise's bias (default {telemetry.fitting.SIMS}; "
                   f"at least {telemetry.fitting.MIN_SIMS}; 0: the dips are not fitted)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and the simulations (default 0)")
    p.add_argument("--out", metavar="FILE.toml", default=None,
                   help="write the fitted scenario: the base's fields with the fitted lottery, dips and "
                   "window.sigma_hour in place (mc run FILE.toml runs it)")
    p.add_argument("--base", metavar="PRESET|FILE.toml", default=None,
                   help=f"the scenario --out completes: its pool, window hours, eviction, demand (default {BASE})")
    p.add_argument("--figure", metavar="PATH.png|PATH.pdf", default=None,
                   help="draw the data against the fitted model: the cards' baselines with the fitted lottery, "
                   "the dips seen against those seen in telemetry simulated from the fit, and the spread of "
                   "k-sample means against the 1/sqrt(k) law by window length")
    p.add_argument("--json", action="store_true",
                   help="print the fit as JSON, each fitted field as {value, lo, hi, units}")
    p.add_argument("--quiet", action="store_true", help="no progress messages on stderr")
    p.set_defaults(func=run)
