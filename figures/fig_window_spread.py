"""What a longer window buys once cards wander (SPEC §1.4.1, §8.3): the relative spread
of a window's mean against its length, under the field preset's structure and under the
structure fitted back from its telemetry, beside the ``1/sqrt(W)`` law.

(a) The spread: the law ``sigma_hour/sqrt(W)``; with each card's wander (what a relative
rule sees: the fleet's swing cancels between cards); with the swing too (what an
absolute floor sees, the diurnal at its mean over the window's start hours). The
fitted curve comes from ``mc telemetry lemon-hunter-field --cards 64 --every 30``
(a month of 30-minute samples) fitted as ``mc fit`` does (seed 0); its band spans the
fitted ``wander.sd``'s 95% interval. (b) The same as hours of the law a window is
worth, ``(sigma_hour / spread)²``: the law's line is ``W`` itself.
"""

import numpy as np

import mc
import style
from mc import telemetry
from mc.telemetry import structure

PRESET, CARDS, EVERY = "lemon-hunter-field", 64, 30.0
HOURS = np.geomspace(1.0, 24.0 * 28, 60)
GRID = tuple((f"{w:g} h", float(w)) for w in HOURS)
TICKS = {1.0: "1 h", 4.0: "4 h", 24.0: "1 day", 168.0: "1 week", 672.0: "4 weeks"}

sc = mc.presets.get(PRESET)
truth = {"wander.sd": sc.wander.sd, "wander.hours": sc.wander.hours, "swing.diurnal": sc.swing.diurnal,
         "swing.sd": sc.swing.sd, "swing.hours": sc.swing.hours}
rows = telemetry.emit(sc, telemetry.Sampling(EVERY, 730.0), cards=CARDS).samples
fitted = telemetry.fit(telemetry.from_frame(rows), {"flagship": sc.pool.classes[0].rated})
ff = fitted["structure"]["fields"]
sigma_fit = fitted["fields"]["window.sigma_hour"]["value"]


def curve(sigma: float, f: dict, key: str) -> np.ndarray:
    return np.array([r[key] for r in structure.spread(sigma, f, GRID)])


def fit_fields(wander_sd: float) -> dict:
    f = {k: ff[k]["value"] for k in ("wander.hours", "swing.diurnal", "swing.sd", "swing.hours")}
    return {**f, "wander.sd": wander_sd}


law = curve(sc.window.sigma_hour, truth, "law")
lines = [
    ("the 1/sqrt(W) law", law, sc.window.sigma_hour, dict(color="0.3", ls="--")),
    ("with wander (a relative rule)", curve(sc.window.sigma_hour, truth, "with_wander"), sc.window.sigma_hour,
     dict(color=style.PALETTE[0])),
    ("with wander and swing (a floor)", curve(sc.window.sigma_hour, truth, "with_swing"), sc.window.sigma_hour,
     dict(color=style.PALETTE[3], ls=":")),
    ("fitted from its telemetry", curve(sigma_fit, fit_fields(ff["wander.sd"]["value"]), "with_wander"), sigma_fit,
     dict(color=style.PALETTE[2], lw=1.0)),
]
band = [curve(sigma_fit, fit_fields(ff["wander.sd"][end]), "with_wander") for end in ("lo", "hi")]

fig, (a, b) = style.figure(2, width=style.FULL_WIDTH, height=2.9)
for label, y, sigma, kw in lines:
    a.plot(HOURS, 100 * y, label=label, **kw)
    b.plot(HOURS, (sigma / y) ** 2, **kw)
a.fill_between(HOURS, 100 * band[0], 100 * band[1], color=style.PALETTE[2], alpha=0.18, lw=0)
b.fill_between(HOURS, (sigma_fit / band[0]) ** 2, (sigma_fit / band[1]) ** 2, color=style.PALETTE[2], alpha=0.18,
               lw=0)
for ax in (a, b):
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(list(TICKS), list(TICKS.values()))
    ax.minorticks_off()
    ax.set_xlabel("window length W")
a.set_ylabel("a window's spread (%, 1 sd)")
a.set_yticks([1, 2, 5, 10, 25], ["1", "2", "5", "10", "25"])
b.set_ylabel("hours of the law it is worth")
b.set_yticks([1, 4, 24, 168, 672], ["1", "4", "24", "168", "672"])
a.set_title("(a) a window's spread", loc="left")
b.set_title("(b) what a longer window buys", loc="left")
a.legend(loc="lower left", fontsize="small")
fig.suptitle(f"{PRESET}: wander sd {100 * sc.wander.sd:.2f}% over {sc.wander.hours:g} h, swing \u00b1"
             f"{100 * sc.swing.diurnal:.2f}% a day, an hour's mean errs by {100 * sc.window.sigma_hour:.0f}%;\nfitted "
             f"wander sd {100 * ff['wander.sd']['value']:.1f}% [{100 * ff['wander.sd']['lo']:.1f}, "
             f"{100 * ff['wander.sd']['hi']:.1f}] over {ff['wander.hours']['value']:.0f} h from 64 cards' month of "
             "30-minute samples", fontsize="small")
style.save(fig, "fig_window_spread")
