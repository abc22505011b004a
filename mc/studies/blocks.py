"""Many settings of a scenario run together: settings that share a compiled shape
(the same static fields: pool, run set, policy, period, ...) are stacked along a
leading axis and vmapped inside one month function, so one compilation and one
pass over the months serve a whole block of them.

Every setting sees the same months (month ``i`` is ``fold_in(key(seed), i)``
whatever block it sits in: common random numbers), and a setting's figures do
not depend on which settings share its block, nor on the block's padding.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Iterator

import jax
import numpy as np

from ..engine import DEFAULT_CHUNK, Run, progress_bar, sample
from ..fleet import Scenario
from ..fleet.simulation import model
from . import dispatch
from .dispatch import Unit

BLOCK = 32  # most settings vmapped in one engine call
STEP = 256  # months per step of one setting on a CPU when the caller leaves the chunk
Pick = Callable[[dict], dict]  # a month's outputs -> the figures kept, each a scalar


def stack(scenarios: list[Scenario]) -> Scenario:
    """One Scenario whose leaves carry a leading (settings,) axis (all of one shape)."""
    return jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *scenarios)


def groups(scenarios: list[Scenario]) -> list[list[int]]:
    """Indices of the scenarios that share a compiled shape, in order of first
    appearance (the tree structure holds every static field)."""
    out: dict[Any, list[int]] = {}
    for i, sc in enumerate(scenarios):
        out.setdefault(jax.tree_util.tree_structure(sc), []).append(i)
    return list(out.values())


def width(count: int, most: int = BLOCK) -> int:
    """Settings per block for a group of ``count``: the power of two at or above
    it, at most ``most`` (a handful of compiled widths, little padding)."""
    return min(most, 1 << max(0, count - 1).bit_length())


@lru_cache(maxsize=None)
def block_month(month_fn: Callable, pick: Pick) -> Callable:
    """``f(key, block) -> {figure: (settings,)}``: ``month_fn`` at every setting
    of a stacked block on the same key. Cached, so the engine compiles each
    (month, pick) pair once per shape."""

    def month(key: jax.Array, block: Scenario) -> dict:
        return jax.vmap(lambda sc: pick(month_fn(key, sc)))(block)

    return month


WINDOW = 1 << 16  # most months of a block held on the host at once


def units(scenarios: list[Scenario], pick: Pick, months: int, *, first: int = 0, seed: int = 0,
          chunk: int | None = None, most: int = BLOCK, window: int = WINDOW) -> list[tuple[list[int], int, Unit]]:
    """The study's units: ``(settings, start, unit)`` for each block of at most
    ``most`` settings that share a compiled shape and each ``window`` of its months
    (in the order ``pieces`` yields them); a unit's partial is
    ``{figure: (m, len(settings))}``, the figures of months ``start..start+m-1``."""
    out = []
    for members in groups(scenarios):
        w = width(len(members), most)
        for at in range(0, len(members), w):
            part = members[at:at + w]
            block = [scenarios[i] for i in part]
            for start in range(first, first + months, window):
                m = min(window, first + months - start)
                out.append((part, start, Unit(block_unit, (block, pick, w, start, m, seed, chunk), len(part) * m,
                                              name=f"settings {part[0]}..{part[-1]}, months {start}..{start + m - 1}")))
    return out


def block_unit(payload: tuple, bar: Any) -> dict[str, np.ndarray]:
    """One unit of ``units``: a block's months on this process's devices. The
    chunk, when not given, is fixed per block width on a CPU (``STEP`` months for
    one setting, the engine's CPU chunk shared out for more; shrunk to fit the
    memory budget), so runs of any length share one compiled step.

    Raises:
        KeyboardInterrupt: when a Ctrl-C came during the unit (the study stops).
    """
    block, pick, w, start, m, seed, chunk = payload
    fn = block_month(model(block[0])[0], pick)
    stacked = stack(block + [block[-1]] * (w - len(block)))
    fit = chunk is None and jax.default_backend() == "cpu"
    done = Run(m)
    size = max(1, (STEP if w == 1 else DEFAULT_CHUNK["cpu"]) // w) * jax.device_count() if fit else chunk
    got = sample(fn, stacked, m, seed=seed, chunk=size, width=w, first=start, run=done, fit=fit)
    if done.partial or done.stopped:  # Ctrl-C, even after the unit's last chunk
        raise KeyboardInterrupt
    bar.update(len(block) * m)
    return {k: x[:, :len(block)] for k, x in got.items()}


def pieces(scenarios: list[Scenario], pick: Pick, months: int, *, first: int = 0, seed: int = 0,
           chunk: int | None = None, most: int = BLOCK, window: int = WINDOW, progress: bool | None = False,
           executor: Any = None) -> Iterator[tuple[list[int], int, dict[str, np.ndarray]]]:
    """Months ``first..first+months-1`` of every scenario, piece by piece:
    yields ``(settings, start, {figure: (m, len(settings))})``, the figures of
    months ``start..start+m-1`` for those settings (indices into
    ``scenarios``), at most ``window`` months at a time, one piece per unit of
    ``units``, in unit order whoever ran them (``executor``: None, here in order,
    or a cluster's; see ``dispatch``). Each §1 or §6 month is the scenario's own
    (``fleet.simulation.model``).

    Raises:
        KeyboardInterrupt: when a Ctrl-C came during a piece (the study stops).
    """
    plan = units(scenarios, pick, months, first=first, seed=seed, chunk=chunk, most=most, window=window)
    with progress_bar(len(scenarios) * months, progress, "setting-months") as bar:
        for i, got in dispatch.run([u for _, _, u in plan], executor, bar):
            part, start, _ = plan[i]
            yield part, start, got


def run(scenarios: list[Scenario], pick: Pick, months: int, **kw) -> dict[str, np.ndarray]:
    """``{figure: (months, settings)}``: every month's figures of every scenario
    (``pieces``' arguments)."""
    out: dict[str, np.ndarray] = {}
    first = kw.get("first", 0)
    for part, start, got in pieces(scenarios, pick, months, **kw):
        for k, x in got.items():
            if k not in out:
                out[k] = np.zeros((months, len(scenarios)) + x.shape[2:], x.dtype)
            out[k][start - first:start - first + x.shape[0], part] = x
    return out


__all__ = ["BLOCK", "WINDOW", "block_month", "block_unit", "groups", "pieces", "run", "stack", "units", "width"]
