"""A fit drawn against its data (SPEC §8): ``mc fit FILE --figure PATH``.

Three panels, the data in blue and the fitted model in orange throughout:

a. **Baselines.** Each card's baseline over its class's rated rate (``q̂``, as the fit
   measures it, ``fitting.observe``) as a histogram, with the fitted lottery's density
   for such baselines: ``(1 − lemon_rate)·Normal(mean, sd² + e²) + lemon_rate·
   Normal(f·mean, f²·sd² + e²)``, ``e²`` the baselines' own measurement variance, as
   the fit models them (``mixture``).
b. **Dips seen.** The hours and depth of each dip the detector sees in the data, over
   those it sees in telemetry simulated from the fitted scenario (``fitting.scenario_of``
   through ``emit``: at least ``SIM_CARDS`` cards, a whole multiple of the data's,
   sampled as the data with its missing samples, detected the same way), and the
   smallest dip the cadence can see (``detect.smallest``) as a grey line. Where the
   dips were not fitted, the data's dips alone.
c. **Noise against window length.** The spread of means of ``k`` consecutive samples
   over the ``1/sqrt(k)`` law (the fit's ``noise.k_means``) against the window's
   hours ``k·Δ``, the law as a line at 1 with the band that chance alone gives a
   spread from that many windows (±2 standard errors, ``1/sqrt(2(m − 1))`` of itself
   for ``m`` windows), and the fit's intervals where it gives them.

The same data draws the same bytes: matplotlib's defaults with this module's few
settings, the DejaVu Sans bundled with matplotlib, no metadata, whatever style the
caller has set; nothing touches matplotlib's global state.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate as v
from .. import files
from ..fleet import presets
from ..fleet.scenario import Scenario
from . import detect, dipfit, fitting
from .emit import emit
from .sampling import MINUTES, Sampling
from .series import Series

FORMATS = (".png", ".pdf")
SIM_CARDS = 256  # fewest cards simulated for panel b
SIM_SEED_SALT = 0x5EED  # added to the fit's seed: telemetry made with that seed is not drawn again card for card
BASE = "golden-idler"  # the scenario the fitted fields complete when no base is given
GRID = 1001  # points of the drawn density
DATA, MODEL, LIMIT = "#0173b2", "#de8f05", "#7f7f7f"  # colour-blind palette: blue, orange; grey
WIDTH, HEIGHT, DPI = 7.0, 3.1, 150  # inches across both columns of a page; PNG dots per inch
FONT = "DejaVu Sans"
RC = {"font.family": "sans-serif", "font.sans-serif": [FONT], "font.size": 8.5, "axes.titlesize": 8.5,
      "axes.labelsize": 8.0, "xtick.labelsize": 7.5, "ytick.labelsize": 7.5, "legend.fontsize": 6.8,
      "axes.linewidth": 0.8, "lines.linewidth": 1.3, "axes.spines.top": False, "axes.spines.right": False,
      "legend.frameon": False, "pdf.fonttype": 42, "ps.fonttype": 42, "svg.hashsalt": "mc",
      "path.simplify": True, "figure.constrained_layout.use": True, "savefig.dpi": DPI}


def mixture_density(x: np.ndarray, fields: dict, err_var: float) -> dict[str, np.ndarray | None]:
    """The fitted lottery's density of measured baselines at ``x``: ``{"total",
    "healthy", "lemon"}`` (``lemon`` None where the fit found no lemons). ``fields``:
    the fit's values by dotted name; ``err_var``: the baselines' measurement variance."""
    x = np.asarray(x, np.float64)
    m, sd = fields["lottery.mean"], fields["lottery.sd"]
    w, f = fields["lottery.lemon_rate"], fields["lottery.lemon_factor"]
    lemons = math.isfinite(w) and w > 0 and math.isfinite(f)
    healthy = (1.0 - (w if lemons else 0.0)) * _normal(x, m, sd**2 + err_var)
    lemon = w * _normal(x, f * m, (f * sd) ** 2 + err_var) if lemons else None
    return {"total": healthy + (lemon if lemon is not None else 0.0), "healthy": healthy, "lemon": lemon}


def _normal(x: np.ndarray, m: float, var: float) -> np.ndarray:
    var = max(var, 1e-18)
    return np.exp(-0.5 * (x - m) ** 2 / var) / math.sqrt(2 * math.pi * var)


def model_scenario(result: dict, base: Scenario | None = None) -> Scenario | None:
    """The fitted scenario whose telemetry panel b simulates (``fitting.scenario_of``
    over ``base``, default the golden-idler preset), or None where the dips were not
    fitted (there is then no fitted model of them to simulate)."""
    if not all(math.isfinite(result["fields"][name]["value"]) for name in fitting.DIP_FIELDS):
        return None
    base = presets.get(BASE) if base is None else v.instance("base", base, Scenario, "a Scenario")
    return fitting.scenario_of(result, base)[0]


def simulated_dips(scenario: Scenario, s: Series, *, seed: int = 0, k: float = detect.K,
                   cards: int | None = None) -> dict:
    """The dips seen in telemetry of ``scenario`` sampled as ``s`` (its interval, span
    and missing samples) and detected as the fit detects the data's: ``{"hours",
    "depth", "cards"}``. ``cards`` (default: at least ``SIM_CARDS``) is rounded up to
    a whole multiple of the data's, so each copy of the data's missing samples is used."""
    copies = max(1, math.ceil((cards or SIM_CARDS) / s.n_cards))
    n = copies * s.n_cards
    if not s.regular:  # each copy sampled over the data's own intervals
        tiled = s.take(np.tile(np.arange(s.n_cards), copies))
        y = dipfit.simulate_over([scenario.dips], scenario.lottery, scenario.window.sigma_hour, tiled, seed)[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            seen = fitting.observe(tiled.with_y(y, np.arange(n)), k)["seen"]
        return {"hours": seen["length"] * s.delta, "depth": seen["depth"], "cards": n}
    sampling = Sampling(every=s.delta * MINUTES, hours=s.span)
    rates: list[np.ndarray] = []
    emit(scenario, sampling, cards=n, seed=seed, progress=False,
         sink=lambda table: rates.append(table.column("rate").to_numpy().astype(np.float64)))
    y = np.concatenate(rates).reshape(n, s.y.shape[1])
    y = np.where(np.tile(np.isfinite(s.y), (copies, 1)), y, np.nan)
    sim = Series(np.arange(n), np.full(n, "", dtype=object), y, s.delta, s.t0)
    with np.errstate(divide="ignore", invalid="ignore"):  # a card lost to its dips reads 0
        seen = fitting.observe(sim, k)["seen"]
    return {"hours": seen["length"] * s.delta, "depth": seen["depth"], "cards": n}


def panels(s: Series, result: dict, *, base: Scenario | None = None, seed: int = 0,
           sim_cards: int | None = None) -> dict[str, Any]:
    """What the three panels draw, from a ``Series`` and ``fitting.fit``'s result on it.

    Args:
        base: the scenario the fitted fields complete for panel b's simulation
            (default the golden-idler preset; only its pool and dips cap matter).
        seed: the fit's seed; the simulation uses ``seed + SIM_SEED_SALT``.
        sim_cards: cards simulated for panel b (default ``SIM_CARDS``, rounded up to
            a multiple of the data's).
    Returns:
        ``{"cards", "every_minutes", "hours", "fields", "baselines", "dips", "noise"}``:
        ``baselines`` holds ``q`` (cards,), the histogram's ``edges`` and the density
        on ``x``; ``dips`` the data's and the model's seen ``hours`` and ``depth``,
        ``smallest`` and the simulated ``scenario`` (None where the dips were not
        fitted); ``noise`` per ``k``: ``hours``, ``ratio``, ``means``, ``band`` and
        the fit's ``lo``/``hi`` (None where it gives none).
    """
    v.instance("series", s, Series, "a Series (mc.telemetry.series.read or from_frame)")
    seed = v.count("seed", seed, lo=0, hi=2**31 - 1)
    k = result["seen"]["threshold_se"]
    o = fitting.observe(s, k)
    fields = {name: float(x["value"]) for name, x in result["fields"].items()}
    rated = np.array([result["rated"][c] for c in s.classes], np.float64)
    q = o["base"] / rated
    err_var = float(np.mean(o["sd"] ** 2 / np.maximum(o["count"], 1) * q**2))
    baselines = _baselines(q, fields, err_var)
    seen = o["seen"]
    dips = {"data": {"hours": seen["length"] * s.delta, "depth": seen["depth"]}, "cards": s.n_cards,
            "smallest": [x for x in result["seen"]["smallest"] if x["depth"] <= 1.0], "scenario": None,
            "model": None}
    scenario = model_scenario(result, base)
    if scenario is not None:
        dips["scenario"] = scenario
        dips["model"] = simulated_dips(scenario, s, seed=(seed + SIM_SEED_SALT) % 2**31, k=k, cards=sim_cards)
    law = result["noise"]["k_means"]
    has = all(x.get("lo") is not None and x.get("hi") is not None for x in law) and bool(law)
    noise = {"k": np.array([x["k"] for x in law], np.int64),
             "hours": np.array([x["k"] * s.delta for x in law], np.float64),
             "ratio": np.array([x["ratio"] for x in law], np.float64),
             "means": np.array([x["means"] for x in law], np.int64),
             "band": np.array([2.0 / math.sqrt(2.0 * max(x["means"] - 1, 1)) for x in law], np.float64),
             "lo": np.array([x["lo"] for x in law], np.float64) if has else None,
             "hi": np.array([x["hi"] for x in law], np.float64) if has else None}
    return {"cards": result["cards"], "every_minutes": result["every_minutes"], "hours": result["hours"],
            "fields": fields, "baselines": baselines, "dips": dips, "noise": noise}


def _baselines(q: np.ndarray, fields: dict, err_var: float) -> dict:
    """Panel a: the histogram's edges over a range that holds every card and each
    component's mean ±4 standard deviations, and the density on a grid over it."""
    finite = q[np.isfinite(q)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    m, sd, f = fields["lottery.mean"], fields["lottery.sd"], fields["lottery.lemon_factor"]
    fitted = math.isfinite(m) and math.isfinite(sd)
    if fitted:
        spread = 4.0 * math.sqrt(sd**2 + err_var)
        lo, hi = min(lo, m - spread), max(hi, m + spread)
        if math.isfinite(f) and fields["lottery.lemon_rate"] > 0:
            lemon = 4.0 * math.sqrt((f * sd) ** 2 + err_var)
            lo, hi = min(lo, f * m - lemon), max(hi, f * m + lemon)
    pad = 0.02 * max(hi - lo, 1e-6)
    lo, hi = lo - pad, hi + pad
    bins = int(np.clip(math.ceil(2.0 * math.sqrt(max(finite.size, 1))), 10, 60))
    x = np.linspace(lo, hi, GRID)
    density = mixture_density(x, fields, err_var) if fitted else {"total": None, "healthy": None, "lemon": None}
    return {"q": q, "edges": np.linspace(lo, hi, bins + 1), "x": x, "err_var": err_var,
            "lemon_rate": fields["lottery.lemon_rate"], **density}


def subtitle(p: dict) -> str:
    """The data and the fitted figures in plain words (two lines)."""
    f = p["fields"]
    data = (f"{p['cards']:,} cards, a sample every {p['every_minutes']:g} min over {p['hours']:g} h. "
            f"Fitted: cards run at {f['lottery.mean']:.2f}\u00d7 rated (sd {f['lottery.sd']:.2f})")
    if f["lottery.lemon_rate"] > 0 and math.isfinite(f["lottery.lemon_factor"]):
        data += f", {100 * f['lottery.lemon_rate']:.0f}% lemons at {f['lottery.lemon_factor']:.2f}\u00d7 that"
    else:
        data += ", no lemons"
    if all(math.isfinite(f[name]) for name in fitting.DIP_FIELDS):
        dips = (f"{f['dips.rate']:.2g} dips a card a month, {f['dips.mean_hours']:.2g} h long on average, "
                f"{100 * f['dips.depth_lo']:.0f}\u2013{100 * f['dips.depth_hi']:.0f}% deep")
    else:
        dips = "the dips not fitted"
    noise = f"an hour's mean errs by {100 * f['window.sigma_hour']:.0f}% (window.sigma_hour)"
    return f"{data};\n{dips}; {noise}."


def draw(p: dict, title: str = "The data against the fitted model"):
    """The three panels as a matplotlib ``Figure`` (drawn under this module's settings:
    call inside ``_look()``, as ``write`` does)."""
    from matplotlib.figure import Figure

    head = f"{title}\n{subtitle(p)}"
    fig = Figure(figsize=(WIDTH, HEIGHT + 0.13 * (head.count("\n") - 2)))  # room for a longer title
    a, b, c = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1.0, 1.1, 1.0]})
    _panel_baselines(a, p["baselines"])
    _panel_dips(b, p["dips"])
    _panel_noise(c, p["noise"])
    fig.suptitle(head, fontsize=7.5, linespacing=1.4)
    return fig


def _panel_baselines(ax, d: dict) -> None:
    q = d["q"][np.isfinite(d["q"])]
    ax.hist(q, bins=d["edges"], density=True, color=DATA, alpha=0.55, lw=0, label=f"data: {q.size:,} cards")
    if d["total"] is not None:
        lemons = f"\n({100 * d['lemon_rate']:.0f}% lemons)" if d["lemon"] is not None else ""
        ax.plot(d["x"], d["total"], color=MODEL, label=f"fitted lottery{lemons}")
    ax.set_xlim(d["edges"][0], d["edges"][-1])
    ax.set_xlabel("card baseline / rated rate (q\u0302)")
    ax.set_ylabel("density")
    ax.set_title("a. per-card baselines", loc="left")
    ax.legend(loc="best")


def _panel_dips(ax, d: dict) -> None:
    model = d["model"]
    if model is not None:
        per = len(model["hours"]) / model["cards"] * d["cards"]
        ax.scatter(model["hours"], model["depth"], s=5, color=MODEL, alpha=0.35, lw=0,
                   label=f"fitted model\n({per:.3g} seen per {d['cards']:,} cards)")
    data = d["data"]
    ax.scatter(data["hours"], data["depth"], s=14, color=DATA, edgecolor="white", lw=0.4, zorder=3,
               label=f"data ({len(data['hours']):,} seen)")
    if d["smallest"]:  # named at its deep end, below it, where no dip is seen
        hours, depth = [x["hours"] for x in d["smallest"]], [x["depth"] for x in d["smallest"]]
        ax.plot(hours, depth, color=LIMIT, ls=":", lw=1.1)
        ax.text(hours[-1], depth[-1] - 0.04, "smallest dip seen\nhalf the time", ha="right", va="top",
                fontsize=6.5, color=LIMIT)
    if model is None:
        ax.text(0.03, 0.03, "dips not fitted:\nnothing simulated", transform=ax.transAxes, ha="left",
                va="bottom", fontsize=6.5, color="0.3")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(_hours_formatter())
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("dip duration seen (h)")
    ax.set_ylabel("depth seen (share of the rate lost)")
    ax.set_title("b. dips seen", loc="left")
    ax.legend(loc="upper right", markerscale=1.5)


def _panel_noise(ax, d: dict) -> None:
    h = d["hours"]
    if h.size:
        ax.fill_between(h, 1 - d["band"], 1 + d["band"], color=MODEL, alpha=0.18, lw=0,
                        label="chance alone (\u00b12 s.e.)")
        ax.axhline(1.0, color=MODEL, label="the law, 1/\u221ak")
        if d["lo"] is not None:
            ax.errorbar(h, d["ratio"], yerr=[d["ratio"] - d["lo"], d["hi"] - d["ratio"]], color=DATA, lw=1.0,
                        capsize=2, ls="none")
        ax.plot(h, d["ratio"], color=DATA, marker="o", ms=3.5, label="data")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(_hours_formatter())
        top = float(np.nanmax(np.abs(np.concatenate([d["ratio"] - 1, d["band"]])))) if h.size else 0.1
        ax.set_ylim(1 - 1.15 * top - 0.02, 1 + 1.15 * top + 0.02)
    ax.set_xlabel("window, k samples \u00d7 \u0394 (h)")
    ax.set_ylabel("spread of k-sample means / the law's")
    ax.set_title("c. window noise", loc="left")
    if h.size:
        ax.legend(loc="upper left")


def _hours_formatter():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda x, _: f"{x:g}")


@contextmanager
def _look():
    """matplotlib's defaults with ``RC``, for the drawing and the saving both."""
    import matplotlib
    import matplotlib.style

    with matplotlib.style.context("default"), matplotlib.rc_context(RC):
        yield


def write(path: str | Path, p: dict, title: str = "The data against the fitted model") -> dict:
    """Draw ``panels``' result to ``path`` (.png or .pdf, by its extension), whole or
    not at all; returns the file's ``{"bytes", "sha256"}``."""
    path = files.check_output(path, FORMATS)
    fmt = path.suffix.lower()[1:]
    with _look():
        fig = draw(p, title)

        def save(tmp: str) -> None:
            if fmt == "png":
                fig.savefig(tmp, format="png", dpi=DPI, metadata={"Software": None})
            else:
                fig.savefig(tmp, format="pdf", metadata={"Creator": None, "Producer": None, "CreationDate": None})

        return files.atomic_write(path, save)
