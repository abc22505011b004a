"""Serving (SPEC §5, §7, §9, §11): what one card, or a replica of several, does for one
model, from its catalogue entry, its latency under a batcher, and a pool behind a router."""

from . import catalogue as catalogue
from . import arrivals as arrivals
from . import latency as latency
from . import loop as loop
from . import queue as queue
from . import routed as routed
from . import routedloop as routedloop
from . import routers as routers
from . import slo as slo
from . import traffic as traffic
from .arithmetic import MEM_UTIL as MEM_UTIL
from .arithmetic import PREFILL_UTIL as PREFILL_UTIL
from .arithmetic import Card as Card
from .arithmetic import allreduce_seconds as allreduce_seconds
from .arithmetic import card as card
from .arithmetic import kv_bytes_per_token as kv_bytes_per_token
from .arithmetic import prefill_seconds as prefill_seconds
from .arithmetic import seats as seats
from .arithmetic import step_seconds as step_seconds
from .arithmetic import tokens_per_dollar as tokens_per_dollar
from .arithmetic import weight_bytes as weight_bytes
from .latency import LatencyResult as LatencyResult
from .latency import Serving as Serving
from .latency import simulate as simulate_latency
from .slo import SLORating as SLORating
from .slo import slo_rate as slo_rate
from .traffic import RequestLog as RequestLog

__all__ = ["arrivals", "catalogue", "latency", "loop", "queue", "routed", "routedloop", "routers", "slo", "traffic", "RequestLog", "MEM_UTIL", "PREFILL_UTIL", "Card", "allreduce_seconds", "card", "kv_bytes_per_token", "prefill_seconds",
           "seats", "step_seconds", "tokens_per_dollar", "weight_bytes", "LatencyResult", "Serving", "SLORating",
           "simulate_latency", "slo_rate"]
