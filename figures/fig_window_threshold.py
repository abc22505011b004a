"""Window length x threshold θ on the noise evictor (results/window_eviction/threshold)."""

import _data

_data.window_panels("window_eviction/threshold", "eviction.theta", lambda s: f"θ = {s:.3g}",
                    "threshold θ (evict below θ × the median score)", "fig_window_threshold",
                    short="θ")
