"""The six seed stories of SPEC §3, the autoscaler's stories of SPEC §6, one story
whose lottery, dips, wander and swing are read from field studies, that story with
hard failures and spot cards read from field studies too (SPEC §10), and two services
on replicas of several cards (SPEC §11), by name."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Callable

from .. import _validate as v
from ..units import HOURS
from .demand import Demand
from .eviction import Eviction
from .lottery import Lottery
from .pool import Pool
from .rounds import Autoscaler
from .scenario import Scenario
from .window import Window


def _golden_idler() -> Scenario:
    return Scenario(pool=Pool.of(("flagship", 32)), window=Window(hours="week"),
                    eviction=Eviction(share=0.20), runset="all", demand=Demand(level=60_000))


def _noise_evictor() -> Scenario:
    return Scenario(pool=Pool.of(("flagship", 32)), window=Window(hours="hour"),
                    eviction=Eviction(share=0.375), runset="steady", demand=Demand(level=142_000))


def _bargain_shortfall() -> Scenario:
    return Scenario(pool=Pool.of(("bargain", 24)), window=Window(hours="week"),
                    eviction=Eviction(share=0.20), runset="steady", demand=Demand(level=90_000))


def _lemon_hunter() -> Scenario:
    # A tight pool (diurnal peak near what 32 cards serve) with lemons: daily
    # threshold eviction on a day's window, each evicted card replaced.
    return Scenario(pool=Pool.of(("flagship", 32)), window=Window(hours="day"),
                    eviction=Eviction(policy="threshold", theta=0.8), runset="peak",
                    demand=Demand(shape="diurnal", level=150_000, amplitude=0.3),
                    lottery=Lottery(lemon_rate=0.1), autoscaler=Autoscaler(period=24, replace=True))


# Field figures, as the sources state them (docs/model.md §3.1). "x% slower" is read
# throughout as "takes (1 + x) times as long", a rate of 1 / (1 + x).
# Sinha et al., "Not All GPUs Are Created Equal", SC'22, arXiv 2208.11035 (abstract):
# same-SKU GPUs vary by 8% on average (the spread of the lottery).
_SC22_VARIATION = 0.08
# MegaScale (Jiang et al., NSDI'24, §6.3, as Greyhound quotes it): about 0.5% of machines
# about 10% slower, consistently across runs (the lemons).
_MEGASCALE_SLOW_SHARE = 0.005
_MEGASCALE_SLOWDOWN = 0.10
# Wu et al., Greyhound, USENIX ATC'25 (preprint Falcon, arXiv 2410.12588), §3.2-3.4:
# 392 single-node probe jobs of 4 GPUs, 70-90 min each, met 2 GPU degradations; compute
# fail-slows last about 10 min; the degraded GPU ran 20% slower (the dips).
_GREYHOUND_GPU_EPISODES = 2
_GREYHOUND_JOBS = 392
_GREYHOUND_GPUS_PER_JOB = 4
_GREYHOUND_JOB_HOURS = 80 / 60  # the middle of 70-90 min
_GREYHOUND_EPISODE_MINUTES = 10.0
_GREYHOUND_SLOWDOWN = 0.20
# Llama 3 Herd of Models, §3.3.4: "a diurnal 1-2% throughput variation based on
# time-of-day", from higher mid-day temperatures (the swing).
_LLAMA3_DIURNAL_SPAN = (0.01, 0.02)
# Henning et al., "When Should I Run My Application Benchmark?", FSE Companion '25,
# arXiv 2504.11826 (abstract): over more than three months of repetitions, a coefficient
# of variation below 3.7%, daily and weekly patterns of at most 2.5% (the wander).
_HENNING_COV = 0.037
_HENNING_DAILY_SPAN = 0.025
# Assumptions no source here states (docs/model.md §3.1 says why each):
_HOT_HOUR = 15.0  # "mid-day temperatures": the day's warmest hour, about 3 h after noon
_WANDER_HOURS = 168.0  # a week: the slowest pattern the benchmark study reports

_Z75 = NormalDist().inv_cdf(0.75)  # a normal's upper quartile, in standard deviations


def _sig3(x: float) -> float:
    return float(f"{x:.3g}")


def _lemon_hunter_field() -> Scenario:
    """The lemon hunter with its lottery, lemons, dips, swing and wander read from field
    studies (docs/model.md §3.1 shows the arithmetic).

    - lottery.sd = 0.08·0.96 / (8·0.6745) = 0.0142: Sinha et al.'s 8% is the span of a
      box plot's whiskers (4 IQR) over the median; a normal's IQR is 2·0.6745 sd.
    - lemon_rate = 0.005, lemon_factor = 1/1.10 = 0.909: MegaScale's persistently slow
      machines (a share and a slowdown measured together, on one >10k-GPU fleet).
      Sinha's "up to 1.5x slower" outliers come with no share and are not used for lemons.
    - dips: rate = 2 / (392·4·1.33 h) per card-hour = 0.698 per 730 h, mean_hours =
      10/60 = 0.167, depth = 1 - 1/1.2 = 0.167 (Greyhound's GPU degradations; n = 2).
    - swing.diurnal = 0.015/2 = 0.0075 (half Llama 3's 1.5% peak to trough), hot_hour 15.
    - wander.sd = sqrt(0.037² - (0.025/(2·√2))²) = 0.0359 (Henning et al.'s spread less
      its daily cycle), wander.hours = 168 (assumed).
    """
    base = _lemon_hunter()
    mean = base.lottery.mean
    rate_per_hour = _GREYHOUND_GPU_EPISODES / (_GREYHOUND_JOBS * _GREYHOUND_GPUS_PER_JOB * _GREYHOUND_JOB_HOURS)
    depth = _sig3(1 - 1 / (1 + _GREYHOUND_SLOWDOWN))
    daily_sd = _HENNING_DAILY_SPAN / 2 / math.sqrt(2)  # a sinusoid's sd is its half-span / sqrt 2
    return base.replace({
        "lottery.sd": _sig3(_SC22_VARIATION * mean / (8 * _Z75)),
        "lottery.lemon_rate": _sig3(_MEGASCALE_SLOW_SHARE),
        "lottery.lemon_factor": _sig3(1 / (1 + _MEGASCALE_SLOWDOWN)),
        "dips.rate": _sig3(rate_per_hour * HOURS),
        "dips.mean_hours": _sig3(_GREYHOUND_EPISODE_MINUTES / 60),
        "dips.depth_lo": depth,
        "dips.depth_hi": depth,
        "swing.diurnal": _sig3(sum(_LLAMA3_DIURNAL_SPAN) / 2 / 2),
        "swing.hot_hour": _HOT_HOUR,
        "wander.sd": _sig3(math.sqrt(_HENNING_COV ** 2 - daily_sd ** 2)),
        "wander.hours": _WANDER_HOURS,
    })


# SPEC §10's figures (docs/model.md §10.4), as the sources state them.
# Llama 3 Herd of Models, Table 5: 419 unexpected interruptions on 16,384 H100s in 54
# days (268 of them in the GPU-side rows). Kokolis et al., HPCA'25: 2.34 and 6.50
# failures per 1,000 node-days, 8 GPUs a node (the range a planner sweeps).
_LLAMA3_INTERRUPTIONS = 419
_LLAMA3_GPUS = 16_384
_LLAMA3_DAYS = 54
_KOKOLIS_PER_1000_NODE_DAYS = (2.34, 6.50)
_GPUS_PER_NODE = 8
_DAYS_A_MONTH = HOURS / 24
# "Can't Be Late", NSDI'24, Table 1: spot about 3x cheaper than on-demand (AWS, GCP);
# §2.4: a cluster's spot instances all available or all not over 94% of the time.
_CANT_BE_LATE_DISCOUNT = 3.0
_CANT_BE_LATE_ALL_OR_NONE = 1.0  # wave_share: the zone's waves take every spot card
# AWS Spot Instance Advisor: the share of spot capacity reclaimed in the trailing month,
# in bands <5%, 5-10%, 10-15%, 15-20%, >20%; the middle band's centre (no band is
# published per GPU type): a spot card's waves a month.
_AWS_BAND_MIDDLE = 0.125
# The public AWS V100 traces ("Can't Be Late" data): mean down spells 0.8-3.6 h by zone;
# the geometric middle of that range is how long a zone stays away once it goes.
_TRACE_DOWN_HOURS = (0.8, 3.6)
# Assumptions no source here states (docs/model.md §10.4): half the pool on spot, one
# zone, no fallback (the planner's choices a study sweeps); replacement as the default.
_SPOT_SHARE = 0.5


def _spot_field() -> Scenario:
    """lemon-hunter-field's lottery and dips (its wander and swing set to 0: §10 does
    not run beside them yet) with hard failures and half the pool on spot, each figure
    read from a field study (docs/model.md §10.4 shows the arithmetic).

    - failures.rate = 419 / (16,384 · 54 d) · 30.4 d = 0.0144 per card-month (Llama 3,
      every unexpected interruption: a serving card is out whatever the cause).
    - spot.price_factor = 1/3 (Can't Be Late, Table 1); wave_share = 1 (§2.4).
    - spot.down_hours = sqrt(0.8 · 3.6) = 1.7 h (the AWS traces' mean down spells);
      up_hours = 730 / 0.125 - 1.7 = 5,840 h: a zone's waves a month at the middle
      AWS interruption band. Neither is published for H100-class spot zones.
    """
    return _lemon_hunter_field().replace({
        "wander.sd": 0.0,
        "swing.diurnal": 0.0,
        "failures.rate": _sig3(_LLAMA3_INTERRUPTIONS / (_LLAMA3_GPUS * _LLAMA3_DAYS) * _DAYS_A_MONTH),
        "spot.share": _SPOT_SHARE,
        "spot.price_factor": _sig3(1 / _CANT_BE_LATE_DISCOUNT),
        "spot.wave_share": _CANT_BE_LATE_ALL_OR_NONE,
        "spot.down_hours": _sig3(math.sqrt(_TRACE_DOWN_HOURS[0] * _TRACE_DOWN_HOURS[1])),
        "spot.up_hours": _sig3(HOURS / _AWS_BAND_MIDDLE - math.sqrt(_TRACE_DOWN_HOURS[0] * _TRACE_DOWN_HOURS[1])),
    })


# SPEC §11: services too large for one card, on 64 H100s as replicas that step at their
# slowest card's pace (docs/model.md §11.1). Each card is rated at its replica's §5.1
# aggregate at a batch of 32 over its cards, priced as the package's flagship card, and
# drawn with the field preset's lottery and dips; the rounds are the lemon hunter's
# (daily threshold eviction with replacement), the demand's peak at 87% of the pool's
# rated rate as the lemon hunter's (195,000 of 224,000 tok/s).
_REPLICA_CARDS = 64
_REPLICA_PEAK_SHARE = 150_000 * 1.3 / (32 * 7_000)


def _replica_service(model: str, tp: int, weight_bytes: int) -> Scenario:
    field = _lemon_hunter_field()
    entry = {"gpu": "h100", "model": model, "batch": 32, "tp": tp, "weight_bytes": weight_bytes,
             "price_month": _lemon_hunter().pool.classes[0].price, "count": _REPLICA_CARDS}
    sc = field.replace({"pool": [entry], "wander.sd": 0.0, "swing.diurnal": 0.0})
    rated = sc.pool.classes[0].rated * _REPLICA_CARDS
    return sc.replace({"demand.level": float(round(_REPLICA_PEAK_SHARE * rated / 1.3, -2))})


_PRESETS: dict[str, Callable[[], Scenario]] = {
    "golden-idler": _golden_idler,
    "noise-evictor": _noise_evictor,
    "bargain-shortfall": _bargain_shortfall,
    # The fixes: one change each.
    "golden-idler-steady": lambda: _golden_idler().replace(runset="steady"),
    "noise-evictor-day": lambda: _noise_evictor().replace({"window.hours": "day", "eviction.share": 0.10}),
    "bargain-flagship": lambda: _bargain_shortfall().replace(pool="24 x flagship"),
    # SPEC §6, the autoscaler over a month: the lemon hunter, then one change each.
    "lemon-hunter": _lemon_hunter,
    "dip-chaser": lambda: _lemon_hunter().replace({"window.hours": "hour"}),
    "steady-hand": lambda: _lemon_hunter().replace({"window.hours": "hour", "autoscaler.strikes": 3}),
    # The lemon hunter with a lottery, dips, wander and swing from field studies.
    "lemon-hunter-field": _lemon_hunter_field,
    # ... with hard failures and half its pool on spot (SPEC §10).
    "spot-field": _spot_field,
    # SPEC §11: a 70B model in 16-bit on replicas of 4 cards, a 405B model in 8-bit on 8.
    "llama70b-tp4": lambda: _replica_service("llama-3-70b", 4, 2),
    "llama405b-tp8": lambda: _replica_service("llama-3.1-405b", 8, 1),
}
SEED_STORIES = ("golden-idler", "noise-evictor", "bargain-shortfall", "golden-idler-steady", "noise-evictor-day",
                "bargain-flagship")


def names() -> list[str]:
    """The preset names: SPEC §3's verdicts, their fixes, SPEC §6's stories, then
    the field-grounded ones (§6's month, then with §10's failures and spot cards,
    then §11's services on replicas)."""
    return list(_PRESETS)


def get(name: str) -> Scenario:
    """A preset scenario by name."""
    v.choice("preset", name, _PRESETS)
    return _PRESETS[name]()
