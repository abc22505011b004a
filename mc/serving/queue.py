"""One card's queue (SPEC §7, §7.1): the configuration a user gives (``Serving``),
validated, and the parameters the device takes at one arrival rate (``Params``).

Choices beyond SPEC §7, stated here:
- Lognormal lengths are cut at ``prompt_max`` / ``answer_max`` (a server's
  max-tokens limits), so every request has a bounded context and a configuration
  is refused when the longest possible request cannot be seated alone. Lengths
  from a log are the log's own, uncut: its longest request must be seatable.
- ``cv = 0`` (``prompt_cv``, ``answer_cv``) means a fixed length of ``ceil(mean)``.
- The continuous batcher has no wait cap (``max_wait`` is the static batcher's).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

import numpy as np

from .. import _validate as v
from .._fields import Field, check_fields, declare
from .._pytree import pytree_dataclass, set_field
from . import catalogue
from .arithmetic import ACTIVATION_BYTES, INPUTS, TP, check_fits, check_tp, kv_bytes_per_token, weight_bytes
from .traffic import BLOCK as LOG_BLOCK
from .traffic import RequestLog, check_block

BATCHERS = ("static", "continuous")
ARRIVALS = ("poisson", "gamma", "log")
LENGTHS = ("lognormal", "log")
MAX_SLOTS = 4096
MAX_TOKENS = 2**20  # longest prompt or answer
MAX_REQUESTS = 2**20  # warmup + n per replication
MAX_CV = 100.0  # gamma gaps: shape 1/cv² stays a normal float32
BLOCK = 600.0  # s of log time per bootstrap block
N, WARMUP = 1000, 200  # measured and dropped requests per replication, unless given
# A run's rate (or offered load) and the TTFT percentile its SLO bounds (``slo.SEARCH``
# declares the SLO search with these).
RATE = Field(dataclasses.MISSING, lo=0.0, lo_open=True, hi=1e9, unit="requests/s", doc="arrival rate")
LOAD = Field(dataclasses.MISSING, lo=0.0, lo_open=True, hi=1e6, unit="ratio", doc="rate / capacity_rate, given instead of rate")
PERCENTILE = Field(95.0, lo=0.0, hi=100.0, lo_open=True, hi_open=True, unit="percent",
                   doc="which TTFT percentile the SLO bounds")
SLO_TTFT = Field(dataclasses.MISSING, lo=0.0, lo_open=True, hi=1e6, unit="s", doc="SLO on the TTFT percentile")
F32_TINY = float(np.finfo(np.float32).tiny)
F32_MAX = float(np.finfo(np.float32).max)


@pytree_dataclass(static=("batcher", "slots", "n", "warmup", "arrivals", "lengths", "replay", "tp"))
class Params:
    """What the device needs for one arrival rate. Leaves are NumPy scalars or, for a
    log, (rows,) arrays (None without one)."""

    rate: Any  # () float32 requests/s
    gap_scale: Any  # () float32 s of queue time per unit of raw time: 1/rate, or log_rate/rate for a log
    max_batch: Any  # () int32
    max_wait: Any  # () float32 s
    step_base: Any  # () float32 s: weight bytes / bandwidth
    step_kv: Any  # () float32 s per token of context in a step: KV bytes per token / bandwidth
    prefill_token: Any  # () float32 s per prompt token: 2 · params / (peak · utilisation)
    step_req: Any  # () float32 s per active request in a step: a replica's all-reduce of its activations (0: one card)
    prefill_base: Any  # () float32 s per prefill: a replica's all-reduces' latency (0: one card)
    kv_tokens: Any  # () int32 tokens of KV cache beside the weights
    prompt_mu: Any  # () float32: log-mean of the lognormal
    prompt_sigma: Any  # () float32: log-sd (0: fixed)
    prompt_fixed: Any  # () int32: the length when fixed
    prompt_max: Any  # () int32
    answer_mu: Any
    answer_sigma: Any
    answer_fixed: Any
    answer_max: Any
    percentile: Any  # () float32 in (0, 100): the SLO's percentile of TTFT
    slo_ttft: Any  # () float32 s (inf: no SLO)
    gamma_shape: Any  # () float32: 1/cv² of gamma gaps (1 otherwise)
    block: Any  # () float32 s of log time per bootstrap block
    offset_top: Any  # () float32 s: a block's start is uniform in [0, span - block]
    log_hi: Any = None  # (rows,) float32 s since the log's first arrival, high word
    log_lo: Any = None  # (rows,) float32 s, low word (hi + lo is the time)
    log_prompt: Any = None  # (rows,) int32 tokens
    log_answer: Any = None  # (rows,) int32 tokens (>= 1)
    batcher: str = "static"
    slots: int = 1  # the most requests one batch or step can hold
    n: int = 1  # measured requests per replication
    warmup: int = 0
    arrivals: str = "poisson"
    lengths: str = "lognormal"
    replay: bool = False
    tp: int = 1  # cards per replica: a pool's lottery draws this many per replica


def _request_log(field: str, value: Any) -> RequestLog:
    return v.instance(field, value, RequestLog, "a RequestLog (mc.files.read_request_log reads one)")


def _lognormal(mean: float, cv: float) -> tuple[float, float]:
    s2 = math.log1p(cv * cv)
    return math.log(mean) - 0.5 * s2, math.sqrt(s2)


@lru_cache(maxsize=256)
def _drawn_lognormal_mean(mu: float, sigma: float, cap: int) -> float:
    """``E[clip(ceil X, 1, cap)]`` for ``X`` lognormal(mu, sigma): ``1 + Σ_{j=1}^{cap-1}
    P(X > j)``, summed until the terms vanish (below 1e-17 of the sum) or ``cap``."""
    total, scale = 1.0, sigma * math.sqrt(2.0)
    for j in range(1, cap):
        term = 0.5 * math.erfc((math.log(j) - mu) / scale)
        total += term
        if term < 1e-17 * total and math.log(j) > mu:
            break
    return total


@dataclass(frozen=True)
class Serving:
    """One model on one GPU under a batcher, and the requests it serves (SPEC §7, §7.1);
    with ``tp > 1``, on a replica of ``tp`` such cards stepping as one queue (SPEC §11:
    each card's share of the weights and KV cache, and the replica's all-reduces).

    Arrivals: ``"poisson"``, ``"gamma"`` (renewal gaps with coefficient of variation
    ``cv``), or ``"log"`` (the default when a ``log`` is given: its own arrivals and lengths, a
    moving-block bootstrap of ``block`` s of log time (default 600, or the log's span
    when shorter), or with ``replay`` the whole
    log once). Lengths: lognormal with the given mean and coefficient of variation
    (of the variate before rounding up), cut at ``*_max`` (``cv = 0``: a fixed
    ``ceil(mean)``), or ``lengths = "log"``: (prompt, answer) pairs drawn from the
    log's rows (the default whenever a log is given). ``n`` requests per
    replication are measured after ``warmup`` (default 1,000 after 200; a replay
    measures every row after ``warmup``, default 0). The §5 constants (``mem_util``,
    ``prefill_util``, bytes per weight and per KV element) default to the catalogue's.

    Raises:
        ParamError: a field out of range, unknown names, weights that do not fit, a
        longest request that cannot be seated alone, or fields that do not go
        together (``cv`` without gamma arrivals, ``replay`` without a log, ...).
    """

    model: str = declare(kind="any", parse=lambda f, x: catalogue.model(x).name, doc="catalogue model")
    gpu: str = declare(kind="any", parse=lambda f, x: catalogue.gpu(x).name, doc="catalogue GPU")
    batcher: str = declare("static", kind="choice", options=BATCHERS, doc="batching policy: static or continuous")
    max_batch: int = declare(16, lo=1, hi=MAX_SLOTS, kind="integer", unit="requests",
                             doc="most requests in a batch or step")
    max_wait: float = declare(0.05, lo=0.0, hi=1e6, unit="s", doc="static: longest wait before a short batch starts")
    prompt_mean: float = declare(1024.0, lo=0.0, lo_open=True, hi=MAX_TOKENS, unit="tokens", doc="mean prompt")
    prompt_cv: float = declare(1.0, lo=0.0, hi=100.0, unit="ratio", doc="prompt coefficient of variation")
    prompt_max: int = declare(8192, lo=1, hi=MAX_TOKENS, kind="integer", unit="tokens", doc="longest prompt")
    answer_mean: float = declare(256.0, lo=0.0, lo_open=True, hi=MAX_TOKENS, unit="tokens", doc="mean answer")
    answer_cv: float = declare(1.0, lo=0.0, hi=100.0, unit="ratio", doc="answer coefficient of variation")
    answer_max: int = declare(4096, lo=1, hi=MAX_TOKENS, kind="integer", unit="tokens", doc="longest answer")
    n: int | None = declare(None, lo=1, hi=MAX_REQUESTS, kind="integer", unit="requests",
                            doc="measured per replication")
    warmup: int | None = declare(None, lo=0, hi=MAX_REQUESTS, kind="integer", unit="requests",
                                 doc="dropped at the start of each replication")
    prefill_util: float = declare(**vars(INPUTS["prefill_util"]))
    mem_util: float = declare(**vars(INPUTS["mem_util"]))
    weight_bytes: float = declare(**vars(INPUTS["weight_bytes"]))
    kv_bytes: float = declare(**vars(INPUTS["kv_bytes"]))
    arrivals: str | None = declare(None, kind="choice", options=ARRIVALS,
                                   doc="arrival process: poisson, gamma or log")
    cv: float = declare(1.0, lo=0.0, lo_open=True, hi=MAX_CV, unit="ratio", doc="gamma gaps' coefficient of variation")
    lengths: str | None = declare(None, kind="choice", options=LENGTHS,
                                  doc="where lengths come from: lognormal or log")
    log: RequestLog | None = declare(None, kind="any", parse=_request_log, unit="path",
                                     doc="request log of the card's traffic")
    block: float | None = declare(**vars(LOG_BLOCK))
    replay: bool = declare(False, kind="flag", doc="play the whole log once")
    tp: int = declare(**vars(TP))

    def __post_init__(self):
        set_ = partial(set_field, self)
        check_fields(self, "")
        m, g = catalogue.model(self.model), catalogue.gpu(self.gpu)
        check_tp("tp", self.tp)
        self._check_traffic(set_)
        total = weight_bytes(m.params, self.weight_bytes)
        usable = self.mem_util * g.memory
        check_fits(m, g, total, usable, self.tp, self.weight_bytes, self.mem_util)
        weights = total / self.tp  # each card's share of a replica (the whole at tp = 1, exactly)
        kv = kv_bytes_per_token(m.layers, m.kv_heads, m.head_dim, self.kv_bytes, self.tp)
        # floor(free / (kv · ctx)) >= count  <=>  count · ctx <= floor(free / kv), ctx an integer.
        tokens = min(math.floor((usable - weights) / kv), 2**31 - 1)
        longest = self.longest_context()
        if longest > tokens:
            field, value = (("log", self.log.source) if self.lengths == "log" else
                            ("prompt_max", self.prompt_max) if self.prompt_cv > 0 else ("prompt_mean", self.prompt_mean))
            v.fail(field, value, f"a request of {longest:,} tokens (prompt {self.longest('prompt'):,} + answer "
                   f"{self.longest('answer'):,}) leaves no seat: its KV cache is {kv * longest:.4g} bytes "
                   f"({kv:.4g} per token) but only {usable - weights:.4g} bytes are free beside the weights "
                   f"({tokens:,} tokens)")
        slots = min(self.max_batch, tokens // self.shortest_context())
        if slots * longest > 2**31 - 1 or (self.n + self.warmup) * self.longest("answer") > 2**31 - 1:
            v.fail("max_batch", self.max_batch, "times the longest request must stay below 2**31 tokens")
        set_("_kv_tokens", tokens)
        set_("_slots", slots)
        set_("_weights", weights)
        set_("_kv", kv)

    def _check_traffic(self, set_) -> None:
        """Arrivals, lengths, the log and the counts: each valid, and together sensible."""
        if self.arrivals is None:
            set_("arrivals", "poisson" if self.log is None else "log")
        if self.cv != 1.0 and self.arrivals != "gamma":
            v.fail("cv", self.cv, f"is the gamma gaps' coefficient of variation; arrivals are {self.arrivals!r}")
        if self.lengths is None:
            set_("lengths", "lognormal" if self.log is None else "log")
        if self.block is None:  # 600 s, or a shorter log's whole span
            set_("block", BLOCK if self.log is None else min(BLOCK, self.log.span))
        if self.log is None:
            for field, why in (("arrivals", self.arrivals == "log"), ("lengths", self.lengths == "log")):
                if why:
                    v.fail(field, "log", "needs a request log (log = FILE)")
        elif self.arrivals != "log" and self.lengths != "log":
            v.fail("log", self.log.source, "is given but neither arrivals nor lengths come from it")
        if self.arrivals == "log" and self.lengths != "log":
            v.fail("lengths", self.lengths, "must be 'log' with arrivals = 'log' (a log's requests keep their lengths)")
        if self.replay and self.arrivals != "log":
            v.fail("replay", True, "replays a request log: it needs arrivals = 'log'")
        if self.block not in (BLOCK, min(BLOCK, self.log.span) if self.log is not None else BLOCK) and (
                self.arrivals != "log" or self.replay):
            v.fail("block", self.block, "is the bootstrap's block of log time: it needs arrivals = 'log' without replay")
        if self.arrivals == "log" and not self.replay:
            check_block(self.block, self.log)
        if self.lengths == "log":
            for what in ("prompt", "answer"):
                x = getattr(self.log, what)
                if x.max() > MAX_TOKENS:
                    v.fail(f"log {what}", int(x.max()), f"must be at most {MAX_TOKENS:,} tokens ({self.log.source})")
        if self.replay:
            warmup = 0 if self.warmup is None else v.count("warmup", self.warmup, lo=0, hi=self.log.rows - 1)
            n = self.log.rows - warmup
            if self.n is not None and self.n != n:
                v.fail("n", self.n, f"is set by the replay: every one of the log's {self.log.rows:,} requests "
                       f"after warmup {warmup:,} is measured (leave n out)")
            set_("warmup", warmup)
            set_("n", n)
        else:
            set_("n", N if self.n is None else self.n)
            set_("warmup", WARMUP if self.warmup is None else self.warmup)
        if self.n + self.warmup > MAX_REQUESTS:
            v.fail("n", self.n, f"plus warmup {self.warmup} must be at most {MAX_REQUESTS:,} requests")

    # -- what follows from the fields ---------------------------------------------------
    def longest(self, what: str) -> int:
        """The longest prompt or answer a request can have (tokens)."""
        if self.lengths == "log":
            return int(getattr(self.log, what).max())
        cv, mean, cap = (getattr(self, f"{what}_{f}") for f in ("cv", "mean", "max"))
        return min(math.ceil(mean), cap) if cv == 0 else cap

    def longest_context(self) -> int:
        if self.lengths == "log":
            return int(self.log.context.max())
        return self.longest("prompt") + self.longest("answer")

    def shortest_context(self) -> int:
        if self.lengths == "log":
            return max(int(self.log.context.min()), 1)
        return sum(self.longest(w) if getattr(self, f"{w}_cv") == 0 else 1 for w in ("prompt", "answer"))

    def mean_length(self, what: str) -> float:
        """Mean prompt or answer tokens: the log's, or the lognormal's ``*_mean``."""
        return self.log.mean(what) if self.lengths == "log" else getattr(self, f"{what}_mean")

    def drawn_mean(self, what: str) -> float:
        """The mean prompt or answer tokens of the length law as requests draw it (SPEC
        §7: the law's mean; a log's mean over its rows): a fixed length's
        ``min(ceil(mean), max)``, a lognormal's ``E[clip(ceil X, 1, max)]`` exactly
        (``mean_length`` is the lognormal's own mean, before rounding up and the cut)."""
        if self.lengths == "log":
            return self.log.mean(what)
        cv, mean, cap = (getattr(self, f"{what}_{f}") for f in ("cv", "mean", "max"))
        if cv == 0:
            return float(self.longest(what))
        return _drawn_lognormal_mean(*_lognormal(mean, cv), cap)

    @property
    def kv_tokens(self) -> int:
        """Tokens of KV cache the memory beside the weights holds."""
        return self._kv_tokens

    @property
    def slots(self) -> int:
        """The most requests one batch (or step) can hold: ``max_batch``, or fewer
        when even the shortest requests run out of seats first."""
        return self._slots

    def constants(self) -> dict[str, float]:
        """§5's formulas per unit, in float64: seconds per decode step at zero
        context (``step_base``), per token of context in a step (``step_kv``), per
        prompt token of prefill (``prefill_token``); for a replica of ``tp`` cards
        (SPEC §11) each card's share, and its all-reduces: per active request in a
        step (``step_req``), per prefill (``prefill_base``, the links' latency; the
        per-token part is in ``prefill_token``), both 0 at ``tp = 1``."""
        m, g = catalogue.model(self.model), catalogue.gpu(self.gpu)
        c = {"step_base": self._weights / g.bandwidth, "step_kv": self._kv / g.bandwidth,
             "prefill_token": 2 * m.params / (g.flops * self.prefill_util), "step_req": 0.0, "prefill_base": 0.0}
        if self.tp == 1:
            return c
        k, layers = self.tp, 2 * m.layers  # two all-reduces per layer
        ring = layers * 2 * (k - 1) / k * m.hidden * ACTIVATION_BYTES / g.link_bandwidth  # s per token all-reduced
        latency = layers * g.link_latency
        return {"step_base": c["step_base"] + latency, "step_kv": c["step_kv"], "step_req": ring,
                "prefill_token": 2 * m.params / (k * g.flops * self.prefill_util) + ring, "prefill_base": latency}

    def capacity_rate(self) -> float:
        """Requests/s a full batch of mean-length requests would clear: prefill of
        each plus its share of full-batch decode steps (the top of the SLO search,
        and the denominator of the offered load)."""
        c = self.constants()
        lin, lout, b = self.mean_length("prompt"), self.mean_length("answer"), self.slots
        step = c["step_base"] + c["step_kv"] * b * (lin + 0.5 * lout)
        if self.tp == 1:
            return 1.0 / (c["prefill_token"] * lin + max(lout - 1.0, 0.0) * step / b)
        step += c["step_req"] * b  # a replica: the batch's all-reduces, and one prefill's latency shared by it
        return 1.0 / (c["prefill_token"] * lin + c["prefill_base"] / b + max(lout - 1.0, 0.0) * step / b)

    def own_rate(self) -> float | None:
        """The log's own rate (requests/s) when arrivals come from it, else None."""
        return self.log.rate if self.arrivals == "log" else None

    def rate_of(self, rate: float | None = None, load: float | None = None) -> float:
        """The arrival rate (requests/s) from ``rate``, or from an offered ``load``
        (``load · capacity_rate``), or, for log arrivals given neither, the log's own
        rate. One-line errors: both given, neither (without a log), out of range."""
        if rate is not None and load is not None:
            v.fail("load", load, "and rate were both given: give one (load = rate / capacity rate)")
        if load is not None:
            return LOAD.check("load", load) * self.capacity_rate()
        if rate is None:
            if self.arrivals != "log":
                v.fail("rate", None, "must be given (requests/s), or a load, unless arrivals come from a log")
            return self.log.rate
        return RATE.check("rate", rate)

    def load_of(self, rate: float) -> float:
        """The offered load at ``rate``: ``rate / capacity_rate``."""
        return rate / self.capacity_rate()

    def params(self, rate: float, *, percentile: float = 95.0, slo_ttft: float | None = None) -> Params:
        """The device parameters at ``rate`` requests/s (validated: positive, finite,
        a float32 whose mean gap and horizon are float32 too)."""
        rate = RATE.check("rate", rate)
        own = self.own_rate()
        horizon = self.log.span * own / rate if self.replay else (self.n + self.warmup) / rate  # s
        if horizon > 1e9:
            v.fail("rate", rate, f"is too low: {self.n + self.warmup:,} arrivals would span {horizon:.3g} s "
                   "(at most 1e9 s)")
        percentile = PERCENTILE.check("percentile", percentile)
        slo = math.inf if slo_ttft is None else SLO_TTFT.check("slo_ttft", slo_ttft)
        c = self.constants()
        for name, x in c.items():
            if not F32_TINY < x < F32_MAX and not (x == 0 and self.tp == 1 and name in ("step_req", "prefill_base")):
                v.fail(name, x, "must be a normal float32 (the card's constants are out of range)")
        f, i = np.float32, np.int32
        pm, ps = _lognormal(self.prompt_mean, self.prompt_cv)
        am, as_ = _lognormal(self.answer_mean, self.answer_cv)
        logs = {}
        if self.log is not None:
            hi = self.log.time.astype(np.float32)
            logs = dict(log_hi=hi, log_lo=(self.log.time - hi.astype(np.float64)).astype(np.float32),
                        log_prompt=self.log.prompt.astype(np.int32), log_answer=self.log.answer.astype(np.int32))
        top = max(self.log.span - self.block, 0.0) if self.arrivals == "log" and not self.replay else 0.0
        return Params(rate=f(rate), gap_scale=f((own or 1.0) / rate), max_batch=i(self.max_batch),
                      max_wait=f(self.max_wait), step_base=f(c["step_base"]), step_kv=f(c["step_kv"]),
                      prefill_token=f(c["prefill_token"]), step_req=f(c["step_req"]),
                      prefill_base=f(c["prefill_base"]), kv_tokens=i(self.kv_tokens), prompt_mu=f(pm),
                      prompt_sigma=f(ps), prompt_fixed=i(self.longest("prompt")), prompt_max=i(self.prompt_max),
                      answer_mu=f(am), answer_sigma=f(as_), answer_fixed=i(self.longest("answer")),
                      answer_max=i(self.answer_max), percentile=f(percentile), slo_ttft=f(slo),
                      gamma_shape=f(1.0 / (self.cv * self.cv)), block=f(self.block), offset_top=f(top), **logs,
                      batcher=self.batcher, slots=self.slots, n=self.n, warmup=self.warmup,
                      arrivals=self.arrivals, lengths=self.lengths, replay=self.replay, tp=self.tp)

    def as_dict(self) -> dict:
        """Plain fields (the log as its ``describe()``)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["log"] = None if self.log is None else self.log.describe()
        return out
