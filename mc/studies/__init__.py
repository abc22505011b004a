"""Studies over the models: sweeps, calibration and their grids, the bench and its
NumPy month, manifests, and the presets side by side."""

from . import bench as bench
from . import calibrate as calibrate
from . import figures as figures
from . import grid as grid
from . import manifest as manifest
from . import numpy_month as numpy_month
from . import presets as presets
from . import sensitivity as sensitivity
from . import sweep as sweep
from . import where as where
from .calibrate import Calibration as Calibration
from .sensitivity import Sensitivity as Sensitivity
from .sweep import Sweep as Sweep

__all__ = ["bench", "calibrate", "figures", "grid", "manifest", "numpy_month", "presets", "sensitivity", "sweep", "where",
           "Calibration", "Sensitivity", "Sweep"]
