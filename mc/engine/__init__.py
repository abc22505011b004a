"""The engine: keys, chunks and devices (``run``), compiled steps and their memory
(``compile``), Ctrl-C and progress (``progress``), and streamed summaries of
whatever columns a model's ``Schema`` names (``reduce``). It imports no model."""

from .compile import AXIS as AXIS
from .compile import clear_caches as clear_caches
from .compile import memory_budget as memory_budget
from .compile import use_compile_cache as use_compile_cache
from .progress import NoBar as NoBar
from .progress import progress_bar as progress_bar
from .run import DEFAULT_CHUNK as DEFAULT_CHUNK
from .run import Run as Run
from .run import check_run_args as check_run_args
from .run import device_list as device_list
from .run import first_chunk as first_chunk
from .run import leading as leading
from .run import month_keys as month_keys
from .run import sample as sample
from .run import stream as stream
from .run import to_host as to_host
from .schema import Column as Column
from .schema import Schema as Schema
from .schema import column_units as column_units
from .schema import of_kind as of_kind
from .reduce import BINS as BINS
from .reduce import Accumulator as Accumulator
from .reduce import Summarised as Summarised
from .reduce import plan as plan
from .reduce import ranges_from as ranges_from
from .reduce import summarise as summarise
from .summary import Z95 as Z95
from .summary import describe as describe
from .summary import figure as figure
from .summary import mean_figure as mean_figure
from .summary import mean_half as mean_half
from .summary import mean_interval as mean_interval
from .summary import pass_figure as pass_figure
from .summary import exact_percentile as exact_percentile
from .summary import of_columns as of_columns
from .summary import pass_count as pass_count
from .summary import wilson as wilson

__all__ = ["AXIS", "DEFAULT_CHUNK", "NoBar", "Run", "check_run_args", "clear_caches", "device_list", "first_chunk",
           "leading", "memory_budget", "month_keys", "progress_bar", "sample", "stream", "to_host",
           "use_compile_cache", "Column", "Schema", "column_units", "of_kind", "BINS", "Accumulator", "Summarised", "plan",
           "ranges_from", "summarise", "Z95", "describe", "figure", "mean_figure", "mean_half", "mean_interval",
           "pass_figure", "exact_percentile", "of_columns", "pass_count", "wilson"]
