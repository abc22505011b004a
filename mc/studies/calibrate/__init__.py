"""Autoscaler calibration (SPEC §1, §6): the cheapest setting within stated risks.

**The grid.** Any scenario fields (``window.hours``, ``eviction.policy``,
``eviction.share``, ``eviction.theta``, ``runset``, ``autoscaler.period``,
``autoscaler.strikes``, ``autoscaler.min_age``, ...), each with a list of values.
Settings are the product of the lists, except that a policy's own field varies
only under the policies that declare it (``mc.fleet.policies``): ``eviction.share``
under share, ``eviction.theta`` under threshold, ``eviction.k`` under zscore,
``eviction.floor`` under floor, ``eviction.max_share`` under threshold, zscore and
floor. Naming an ``autoscaler`` field makes every setting
a §6 month. At most ``MAX_SETTINGS`` settings.

**Figures** per setting, each a mean over its fleet-months with a 95% interval
(normal for means, Wilson for probabilities): ``bill`` ($), ``convergence``
(capped at 1: a bill below the ideal from under-provisioning is no gain),
``p_capacity_fail``, ``p_wrong_eviction``, ``p_convergence_fail``,
``wrong_mean`` (wrong evictions a month), ``shortfall``, ``n_evicted``,
``n_replaced``. One set of names: the same in the table's columns
(``bill``, ``bill_lo``, ``bill_hi``), the JSON report and the text.

**The answer.** The lowest mean bill (or another ``objective``) among the
settings that meet the limits: P(capacity failure) ≤ ``max_capacity_risk`` and
P(any wrong eviction) ≤ ``max_wrong`` (and, if given, mean wrong evictions ≤
``max_wrong_mean``), each judged on the upper end of its 95% interval (``judge
= "upper"``) or on the point estimate. When none does, the closest (least
excess over a limit) is reported as such; a check the answer fails more often
than not is said in words.

**The race.** Every setting runs on the same months (common random numbers).
All settings run ``first`` months; then, round by round, the months double for
the settings still in the race, up to ``n``. After each round a setting leaves
the race when it is surely worse than the leader (the 95% interval of its paired
month-by-month difference from the leader lies on the worse side) or surely
breaks a limit (the lower end of the risk's interval is above it). Only the
settings that finish the race can be recommended.

**Merging.** Settings whose months give identical outputs (every SPEC §2 output
and ``n_replaced``, bit for bit: the same decisions) form one row listing all
their names. Rows are formed on the first round; a row's later months run on
its first setting, and at the end every member of a row that finished the race
runs those months too, so a row's members agree on every month it reports.
Settings that differ only in outputs the figures do not show (``capacity_tokens``,
``idle_burn``: under ``runset = "all"`` the window changes them even with share
0) stay separate rows with equal figures; the text names those whose printed
figures equal the recommendation's on one line rather than as runners-up (the
JSON report keeps them as rows).

The grid (``mc.studies.grid``) feeds the race (``_race``), whose rows make the
answer (``_report``); ``calibrate`` (``_search``) runs the three in turn, and
``format_calibration`` (``_text``) is the answer as ``mc calibrate`` prints it.
"""

from ._figures import FIGURES as FIGURES
from ._figures import OBJECTIVES as OBJECTIVES
from ._figures import month_figures as month_figures
from ._figures import summarise as summarise
from ..grid import MAX_SETTINGS as MAX_SETTINGS
from ..grid import default_grid as default_grid
from ..grid import load_grid as load_grid
from ..grid import policy_fields as policy_fields
from ..grid import settings as settings
from ..grid import with_given as with_given
from ._race import DEFAULT_FIRST as DEFAULT_FIRST
from ._race import DEFAULT_N as DEFAULT_N
from ._race import JUDGES as JUDGES
from ._report import Calibration as Calibration
from ._report import pareto as pareto
from ._report import save as save
from ._search import calibrate as calibrate
from ._text import format_calibration as format_calibration

__all__ = ["Calibration", "DEFAULT_FIRST", "DEFAULT_N", "FIGURES", "JUDGES", "MAX_SETTINGS", "OBJECTIVES", "calibrate",
           "default_grid", "format_calibration", "load_grid", "month_figures", "pareto", "policy_fields", "save", "settings", "summarise", "with_given"]
