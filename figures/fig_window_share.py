"""Window length x eviction share on the noise evictor (results/window_eviction/share)."""

import _data

_data.window_panels("window_eviction/share", "eviction.share", lambda s: f"share {s:.3g}", "eviction share",
                    "fig_window_share", short="shares")
