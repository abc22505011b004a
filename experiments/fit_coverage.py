"""How often `mc fit`'s 95% intervals hold the truth (SPEC §8's round trip).

For each setting of known parameters (the default dips and noise; lemons at 10% and
20%; frequent short dips; rare long dips; noisy and quiet windows; 8 and 512 cards;
5-minute and 1-hour cadence), telemetry of ``cards`` cards over a month is emitted by
``mc.telemetry.emit`` with seeds 0, 1, … and fitted back by ``mc.telemetry.fit``
(the rated rate given); each fitted field scores a hit when its interval holds the
true value. Fields the fit leaves unidentified (no interval) are counted apart.

Not part of `make study` (about 40 CPU-minutes at the default 6 seeds on two CPU
cores): `python experiments/fit_coverage.py [--seeds N] [--only NAME,...]`.
Writes results/fit_coverage.json (every fit's fields and hits) and prints the
coverage table docs/model.md §8.2 quotes.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import mc
from mc import telemetry

OUT = Path(__file__).resolve().parents[1] / "results" / "fit_coverage.json"
BASE = "golden-idler"  # 32 flagships rated 7,000 tok/s; dips 2 a month of 4 h, 20–60% deep; sigma_hour 0.25
RATED = {"flagship": 7000.0}
SETTINGS = {  # name: (changes to the base, cards, minutes between samples)
    "default": ({}, 64, 30.0),
    "lemons 10%": ({"lottery.lemon_rate": 0.10}, 64, 30.0),
    "lemons 20%": ({"lottery.lemon_rate": 0.20}, 64, 30.0),
    "short dips": ({"dips.rate": 8.0, "dips.mean_hours": 1.0, "dips.max_count": 24}, 64, 30.0),
    "rare long dips": ({"dips.rate": 0.5, "dips.mean_hours": 16.0}, 64, 30.0),
    "noisy": ({"window.sigma_hour": 0.5}, 64, 30.0),
    "quiet": ({"window.sigma_hour": 0.1}, 64, 30.0),
    "8 cards": ({}, 8, 60.0),
    "512 cards": ({}, 512, 60.0),
    "5-minute": ({}, 64, 5.0),
}
FIELDS = ("lottery.mean", "lottery.sd", "lottery.lemon_rate", "lottery.lemon_factor", "dips.rate",
          "dips.mean_hours", "dips.depth_lo", "dips.depth_hi", "window.sigma_hour")


def truth(sc: mc.Scenario) -> dict[str, float]:
    t = {f: float(getattr(getattr(sc, f.split(".")[0]), f.split(".")[1])) for f in FIELDS}
    if sc.lottery.lemon_rate == 0:
        t.pop("lottery.lemon_factor")  # no lemons: their factor has no true value
    return t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=6)
    p.add_argument("--only", default=None, help="comma-separated setting names")
    args = p.parse_args()
    names = args.only.split(",") if args.only else list(SETTINGS)
    rows = []
    for name in names:
        changes, cards, every = SETTINGS[name]
        sc = mc.presets.get(BASE).replace(changes) if changes else mc.presets.get(BASE)
        want = truth(sc)
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            e = telemetry.emit(sc, telemetry.Sampling(every, 730.0), cards=cards, seed=seed)
            r = telemetry.fit(telemetry.from_frame(e.samples), RATED, seed=seed)
            fields = {f: {k: (x if math.isfinite(x) else None) for k, x in r["fields"][f].items()} for f in want}
            hits = {f: (x["lo"] <= want[f] <= x["hi"]) if x["lo"] is not None and x["hi"] is not None else None
                    for f, x in fields.items()}
            rows.append({"setting": name, "seed": seed, "cards": cards, "every_minutes": every, "truth": want,
                         "fields": fields, "hits": hits, "seen": r["seen"]["dips"], "wall_s": time.perf_counter() - t0})
            print(f"{name} seed {seed}: {sum(h is True for h in hits.values())}/{len(hits)} held "
                  f"({rows[-1]['wall_s']:.0f} s)", flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text(json.dumps(rows, indent=1, default=float, allow_nan=False) + "\n")
    tmp.replace(OUT)
    print(table(rows))


def table(rows: list[dict]) -> str:
    """Markdown: per setting, each field's hits / fits with an interval (— where none)."""
    short = [f.split(".")[1] for f in FIELDS]
    lines = ["| setting | " + " | ".join(short) + " |", "|---" * (len(FIELDS) + 1) + "|"]
    for name in dict.fromkeys(r["setting"] for r in rows):
        mine = [r for r in rows if r["setting"] == name]
        cells = []
        for f in FIELDS:
            h = [r["hits"].get(f) for r in mine if r["hits"].get(f) is not None]
            cells.append(f"{sum(h)}/{len(h)}" if h else "—")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
