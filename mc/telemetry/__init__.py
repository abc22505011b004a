"""Telemetry (SPEC §8): what a fleet's monitoring records of each card, emitted
from a scenario's model (``emit``), with the truth beside it, and a scenario's
lottery, dips and noise fitted back from such rows (``fit``).

``sampling`` says when samples are taken (every ``Δ`` over ``T`` hours);
``observe`` is the observation model on one card (its draws are the fleet's own
lottery and dips, ``mc.fleet.lottery`` and ``mc.fleet.dips``); ``emit`` runs it
over a pool's cards through the engine, one key per card; ``write`` streams the
rows to Parquet or CSV with the truth in two tables beside them (``columns``: each
table's columns, units and meanings). ``series`` reads
rows back onto a grid (``prometheus``: from a Prometheus ``query_range`` export);
``noise``, ``detect`` and ``mixture`` are the fit's parts (baselines and ``σ``
under the clip at zero, dips seen, the lottery's lemon mixture) and ``fitting``
puts them together, with a bootstrap over cards for the lottery and noise and
``dipfit``'s simulation (the dips no monitor can see included) for the dips;
``fitting.scenario_of`` makes the fitted scenario.

Real telemetry (SPEC §8.3): ``slots`` reads irregular times (interval and probe
series, outages) into each sample's own interval; ``intervals`` observes a card over
such intervals with wander and swing (SPEC §1.4.1); ``cadence`` draws a real
monitor's times (jitter, splay, missed scrapes, outages) for ``emit``; ``structure``
fits wander and swing and the window-spread table, the wander and the noise together
from every lag a card spans, across gaps (``variogram``).
"""

from . import cadence as cadence
from . import columns as columns
from . import detect as detect
from . import dipfit as dipfit
from . import fitting as fitting
from . import intervals as intervals
from . import mixture as mixture
from . import noise as noise
from . import observe as observe
from . import prometheus as prometheus
from . import series as series
from . import slots as slots
from . import structure as structure
from . import variogram as variogram
from .emit import Emitted as Emitted
from .emit import emit as emit
from .emit import layout as layout
from .fitting import fit as fit
from .observe import Params as Params
from .sampling import MAX_SAMPLES as MAX_SAMPLES
from .sampling import Sampling as Sampling
from .series import Series as Series
from .series import from_frame as from_frame
from .series import read as read
from .write import FORMATS as FORMATS
from .write import paths as paths
from .write import write as write

__all__ = ["cadence", "columns", "detect", "dipfit", "fitting", "intervals",
           "mixture", "noise", "observe", "prometheus", "series", "slots", "structure", "variogram", "Emitted", "emit", "layout", "fit", "Params",
           "MAX_SAMPLES", "Sampling", "Series", "from_frame", "read", "FORMATS", "paths", "write"]
