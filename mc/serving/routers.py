"""Routers (SPEC §9): which card of a pool an arrival goes to, from what the router sees.

A router is a value in ``ROUTERS``: a function of the cards' visible state just
before the arrival (``requests``: waiting or running, ``tokens``: outstanding),
the arrival's index ``g`` and its own uniform ``u``, returning the card. The
pool's loop calls whichever it is given; nothing branches on a router's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import jax.numpy as jnp


@dataclass(frozen=True)
class Router:
    """``choose(requests, tokens, g, u) -> card``: (R, C) int32 each, (R, 1) int32
    arrival index, (R, 1) float32 uniform in (0, 1); returns (R, 1) int32."""

    name: str
    doc: str
    choose: Callable


def _random(requests, tokens, g, u):
    C = requests.shape[1]
    return jnp.minimum(jnp.floor(u * C).astype(jnp.int32), C - 1)


def _round_robin(requests, tokens, g, u):
    return g % requests.shape[1]


def _least(x):
    return jnp.argmin(x, axis=1, keepdims=True).astype(jnp.int32)  # ties: the lowest index


ROUTERS = {r.name: r for r in (
    Router("random", "a card uniformly at random", _random),
    Router("round_robin", "card g mod N for the g-th arrival", _round_robin),
    Router("least_requests", "fewest requests waiting or running (ties: lowest index)",
           lambda requests, tokens, g, u: _least(requests)),
    Router("least_tokens", "fewest tokens outstanding: a waiting request counts prompt + answer, a running one "
           "the answer tokens still to come (ties: lowest index)", lambda requests, tokens, g, u: _least(tokens)),
)}


__all__ = ["ROUTERS", "Router"]
