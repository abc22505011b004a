"""mc fit against its data: telemetry of lemon-hunter's cards, whose truth is known,
fitted back and drawn as ``mc fit --figure`` draws it (mc.telemetry.plot), with the
truth in the title.

The rows are README's example, ``mc telemetry lemon-hunter --cards 64 --every 30``
(a month of 30-minute samples), fitted as ``mc fit t.parquet --rated flagship=7000``
does with its defaults (200 resamples of the cards, 128 simulations a round, seed 0).
"""

from pathlib import Path

import mc
from mc import telemetry
from mc.telemetry import plot

HERE = Path(__file__).resolve().parent
PRESET, CARDS, EVERY = "lemon-hunter", 64, 30.0

sc = mc.presets.get(PRESET)
rows = telemetry.emit(sc, telemetry.Sampling(EVERY, 730.0), cards=CARDS).samples
s = telemetry.from_frame(rows)
r = telemetry.fit(s, {"flagship": sc.pool.classes[0].rated})
p = plot.panels(s, r)
lot, dips = sc.lottery, sc.dips
title = (f"{PRESET}'s telemetry fitted back; the truth: {lot.mean:g}\u00d7 rated (sd {lot.sd:g}), "
         f"{100 * lot.lemon_rate:.0f}% lemons at {lot.lemon_factor:g}\u00d7;\n{dips.rate:g} dips a card a month, "
         f"{dips.mean_hours:g} h long on average, {100 * dips.depth_lo:.0f}\u2013{100 * dips.depth_hi:.0f}% deep; "
         f"an hour's mean errs by {100 * sc.window.sigma_hour:.0f}%")
for ext in plot.FORMATS:
    plot.write(HERE / f"fig_fit{ext}", p, title)
