"""Exact numerics that know no model: bits, random variates, ranks and order statistics, covers, sums,
interval passes over the month's hours and the token totals they give, and a double-float simulation clock."""

from . import clock as clock
from .bits import bits as bits
from .bits import fingerprint as fingerprint
from .counts import bincount as bincount
from .counts import lanes_for as lanes_for
from .cover import best_first as best_first
from .cover import cover_count as cover_count
from .cover import greedy_prefix as greedy_prefix
from .fusion import materialise as materialise
from .envelope import covering as covering
from .envelope import pieces as pieces
from .capacity import EVENT_SIZES as EVENT_SIZES
from .capacity import TOKEN_BITS as TOKEN_BITS
from .capacity import flat_month_sums as flat_month_sums
from .capacity import month_sums as month_sums
from .rounds import fixed_totals as fixed_totals
from .rounds import round_levels as round_levels
from .rounds import round_sums as round_sums
from . import blocks as blocks
from . import exact as exact
from .hours import overlap as overlap
from .hours import per_hour as per_hour
from .paths import ar1 as ar1
from .random import EXPONENTIAL_MAX as EXPONENTIAL_MAX
from .random import NORMAL_MAX as NORMAL_MAX
from .random import exponential as exponential
from .random import normal as normal
from .random import poisson_capped as poisson_capped
from .random import poisson_cdf as poisson_cdf
from .random import uniforms as uniforms
from .ranks import PAIRWISE_MAX as PAIRWISE_MAX
from .ranks import in_rank_order as in_rank_order
from .ranks import masked_median as masked_median
from .ranks import lowest as lowest
from .ranks import median as median
from .ranks import pairwise_rank as pairwise_rank
from .ranks import rank as rank
from .ranks import select_rank as select_rank
from .ranks import sort_rank as sort_rank
from .select import compensated_sum as compensated_sum
from .select import kth as kth
from .select import order_key as order_key
from .sums import compensated_scan as compensated_scan
from .sums import int_cumsum as int_cumsum
from .sums import running_sum as running_sum
from .sums import scan_sum as scan_sum
from .sums import tree_sum as tree_sum
from .sums import two_sum as two_sum

__all__ = ["clock", "bits", "fingerprint", "bincount", "lanes_for", "best_first", "cover_count", "greedy_prefix", "materialise", "covering", "pieces", "EVENT_SIZES", "TOKEN_BITS", "flat_month_sums", "month_sums",
           "overlap", "per_hour", "round_sums", "round_levels", "fixed_totals", "blocks", "exact", "ar1", "EXPONENTIAL_MAX", "NORMAL_MAX", "exponential", "normal",
           "poisson_capped", "poisson_cdf", "uniforms", "PAIRWISE_MAX", "lowest", "masked_median", "median",
           "pairwise_rank", "in_rank_order", "rank", "select_rank", "sort_rank", "compensated_sum", "kth", "order_key", "compensated_scan", "int_cumsum", "running_sum", "scan_sum",
           "tree_sum", "two_sum"]
