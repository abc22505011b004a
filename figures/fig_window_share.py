"""Window length x eviction share on the noise evictor (results/window_eviction/share)."""

import _data
import style

t = _data.sweep("window_eviction/share")
fig, axes = style.figure(3, width=style.FULL_WIDTH, height=2.7)
fmt = lambda s: f"{s:.3g}"
conv = _data.stat(t, "convergence")
_data.lines(axes[0], conv, "window.hours", "p50", "eviction.share", lo="p5", hi="p95", fmt=fmt,
            band=False, dodge=0.06)
axes[0].axhline(0.90, color="0.4", ls=":", lw=1)
axes[0].set_ylabel("convergence, median\n(bars: 5–95% of months)")
wrong = _data.risk(t, "eviction")
_data.lines(axes[1], wrong, "window.hours", "p", "eviction.share", lo="p_lo", hi="p_hi", fmt=fmt)
axes[1].set_ylabel("P(any wrong eviction)\n(band: 95% Wilson)")
cap = _data.risk(t, "capacity")
_data.lines(axes[2], cap, "window.hours", "p", "eviction.share", lo="p_lo", hi="p_hi", fmt=fmt)
axes[2].set_ylabel("P(capacity failure)\n(band: 95% Wilson)")
for ax in axes:
    _data.window_axis(ax, label=True)
for ax in axes[1:]:
    _data.pct(ax)
_data.legend_below(fig, axes[1], "eviction share")
style.save(fig, "fig_window_share")
