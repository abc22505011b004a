"""Synthetic telemetry of a scenario's pool (SPEC §8): rows (card, class, time,
rate) and the truth beside them, streamed chunk by chunk through the engine.

Cards are laid out class by class, as a pool lays them out: with ``cards = N``
for a pool of ``P``, card ``i`` is of the class of the pool's card
``floor(i·P/N)`` (the pool itself when ``N = P``; the pool's shares otherwise).
Card ``i`` draws everything from ``fold_in(key(seed), i)`` whatever its class,
so its rows depend on neither the chunk nor the device count, and a class run
is the engine's examples ``first..first+count-1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from .. import _validate as v
from .. import engine
from ..fleet.pool import CardClass
from ..fleet.scenario import Scenario
from ..fleet.swing import Swing
from ..fleet.wander import Wander
from .cadence import Cadence, Monitor
from .columns import DIPS, SAMPLES, TRUTH, with_units
from .cadence import card as monitor_card
from .intervals import swing_path
from .observe import Params, card
from .sampling import Sampling

SCENARIO = "a Scenario (mc.presets.get(name), mc.load_scenario(path) or mc.Scenario(...))"
MAX_CARDS = v.INT32_MAX  # card indices are int32 in the rows
# Samples one device step holds on a CPU (the automatic chunk is this many cards'
# worth, at least one card): a few MB, so a step stays in cache-sized pieces.
CPU_STEP_SAMPLES = 1 << 20

# The three tables' columns, declared with their units and meanings in ``columns``.
SAMPLE_COLUMNS, CARD_COLUMNS, DIP_COLUMNS = tuple(SAMPLES), tuple(TRUTH), tuple(DIPS)


def layout(pool, cards: int | None = None) -> list[tuple[CardClass, int, int]]:
    """``(class, first card, count)`` of each class with cards, in pool order:
    card ``i`` is of the class of the pool's card ``floor(i·P/N)``."""
    size = pool.size
    n = size if cards is None else v.count("cards", cards, lo=1, hi=MAX_CARDS)
    blocks = []
    for cls, sl in zip(pool.classes, pool.slices):
        first = -(-sl.start * n // size)
        stop = -(-sl.stop * n // size)
        if stop > first:
            blocks.append((cls, first, stop - first))
    return blocks


def params_of(scenario: Scenario, sampling: Sampling, cls: CardClass) -> Params:
    """One class's telemetry parameters from the scenario (lottery, dips, window's
    ``sigma_hour``) and the sampling."""
    return Params(every=sampling.every, hours=sampling.hours, rated=cls.rated,
                  sigma_hour=scenario.window.sigma_hour, lottery=scenario.lottery, dips=scenario.dips)


@dataclass
class Emitted:
    """What ``emit`` made. ``samples``: the rows (``columns.SAMPLES``), None when a
    ``sink`` took them; ``cards``: one row per card (``columns.TRUTH``); ``dips``: one
    row per dip that begins within the samples' span (``columns.DIPS``). ``done``:
    cards made; ``partial``: a Ctrl-C stopped the run before the last card."""

    sampling: Sampling
    n_cards: int
    seed: int
    cards: pd.DataFrame
    dips: pd.DataFrame
    samples: pd.DataFrame | None = field(default=None, repr=False)
    done: int = 0
    partial: bool = False
    rows: int = 0  # samples recorded

    @property
    def n_samples(self) -> int:
        return self.rows


class _Chunks:
    """The engine's merge for one class: each chunk's rows to the sink, its truth kept."""

    def __init__(self, cls: CardClass, first: int, sampling: Sampling, sink: Callable, truth: dict):
        self.cls, self.next, self.sampling, self.sink, self.truth = cls, first, sampling, sink, truth
        self.times = sampling.times()

    def __call__(self, out: dict, take: int) -> None:
        import pyarrow as pa

        n = self.sampling.samples
        ids = np.arange(self.next, self.next + take, dtype=np.int32)
        self.next += take
        rate = np.asarray(out["rate"][:take], dtype=np.float32).reshape(-1)
        card = np.repeat(ids, n)
        if "time" in out:  # an irregular cadence: each card's own times, the samples not recorded left out
            time = np.asarray(out["time"][:take], dtype=np.float64).reshape(-1)
            kept = np.isfinite(rate)
            card, time, rate = card[kept], time[kept], rate[kept]
        else:
            time = np.tile(self.times, take)
        classes = pa.DictionaryArray.from_arrays(pa.array(np.zeros(len(rate), np.int32)), pa.array([self.cls.name]))
        self.sink(with_units(pa.table({"card": card, "class": classes, "time": time, "rate": rate}), SAMPLES))
        self.truth["rows"].append(len(rate))
        t = self.truth
        t["card"].append(ids)
        t["class"].append(np.full(take, self.cls.name, dtype=object))
        t["rated"].append(np.full(take, self.cls.rated, dtype=np.float64))
        for k in ("q", "lemon", "true_rate"):
            t[k].append(np.asarray(out[k][:take]))
        begin, end, depth = (np.asarray(out[k][:take]) for k in ("begin", "end", "depth"))
        seen = (depth > 0) & (begin < np.float32(self.sampling.span))  # (take, slots)
        t["dips"].append(seen.sum(axis=1).astype(np.int32))
        row, slot = np.nonzero(seen)
        start = begin[row, slot].astype(np.float64)
        t["dip_card"].append(ids[row])
        t["dip_start"].append(start)
        t["dip_hours"].append(end[row, slot].astype(np.float64) - start)
        t["dip_depth"].append(depth[row, slot].astype(np.float64))


def _cat(parts: list, dtype) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype)


def emit(scenario: Scenario, sampling: Sampling | None = None, *, cards: int | None = None, seed: int = 0,
         chunk: int | None = None, devices: Any = None, progress: Any = False,
         sink: Callable | None = None, cadence: Cadence | None = None, wander: Wander | None = None,
         swing: Swing | None = None) -> Emitted:
    """Telemetry of ``cards`` cards (default: the scenario's pool) sampled as
    ``sampling`` says (default every 5 minutes over 730 hours), SPEC §8.

    Args:
        seed: card ``i`` uses ``fold_in(key(seed), i)``.
        chunk: cards per device step, all devices together (default: automatic;
            results never depend on it).
        progress: a bar in cards on stderr (True, False, None: on a terminal).
        sink: called with each chunk's rows as a ``pyarrow.Table`` in card order
            (``columns.SAMPLES``, each field's units and meaning in its metadata:
            card int32, class dictionary, time float64 h, rate float32 tok/s);
            without one the rows are kept and returned as ``samples``.
        cadence: an irregular monitor (SPEC §8.3; default: the regular grid).
        wander, swing: the structure the cards' rates carry (SPEC §1.4.1; default the
            scenario's). Given, they stand in for the scenario's own, which a month
            refuses nonzero until it simulates them; telemetry emits them either way.
            With all of ``cadence``, ``wander`` and ``swing`` zero the rows are §8's
            grid, bit for bit.
    """
    v.instance("scenario", scenario, Scenario, SCENARIO)
    sampling = Sampling() if sampling is None else v.instance("sampling", sampling, Sampling, "a Sampling")
    if sink is not None and not callable(sink):
        raise TypeError(f"sink must be a callable taking a pyarrow.Table, not {type(sink).__name__}")
    blocks = layout(scenario.pool, cards)
    n_cards = sum(count for _, _, count in blocks)
    seed = v.count("seed", seed, lo=0, hi=2**31 - 1)
    kept: list = []
    rows = kept.append if sink is None else sink
    truth: dict[str, list] = {k: [] for k in ("card", "class", "rated", "q", "lemon", "true_rate", "dips",
                                              "dip_card", "dip_start", "dip_hours", "dip_depth", "rows")}
    done, partial = 0, False
    cadence = Cadence() if cadence is None else v.instance("cadence", cadence, Cadence, "a Cadence")
    wander = scenario.wander if wander is None else v.instance("wander", wander, Wander, "a Wander")
    swing = scenario.swing if swing is None else v.instance("swing", swing, Swing, "a Swing")
    plain = cadence.regular and wander.sd == 0 and swing.diurnal == 0 and swing.sd == 0
    shared = None if plain else swing_path(seed, swing, sampling.hours)
    width = max(1, sampling.samples * engine.DEFAULT_CHUNK["cpu"] // CPU_STEP_SAMPLES)
    with engine.progress_bar(n_cards, progress, unit="cards") as bar:
        for cls, first, count in blocks:
            params = params_of(scenario, sampling, cls)
            fn = card if plain else monitor_card
            if not plain:
                params = Monitor(params, cadence, wander, shared)
            run = engine.stream(fn, params, count, reducer=None,
                                merge=_Chunks(cls, first, sampling, rows, truth), seed=seed, chunk=chunk,
                                devices=devices, progress=bar, unit="cards", first=first, width=width)
            done += run.done
            if run.partial or run.stopped:
                partial = run.partial or done < n_cards
                break
    cards_table = pd.DataFrame({
        "card": _cat(truth["card"], np.int32), "class": _cat(truth["class"], object),
        "rated": _cat(truth["rated"], np.float64), "q": _cat(truth["q"], np.float32),
        "lemon": _cat(truth["lemon"], bool), "true_rate": _cat(truth["true_rate"], np.float32),
        "dips": _cat(truth["dips"], np.int32)})
    dips_table = pd.DataFrame({"card": _cat(truth["dip_card"], np.int32), "start": _cat(truth["dip_start"], np.float64),
                               "hours": _cat(truth["dip_hours"], np.float64),
                               "depth": _cat(truth["dip_depth"], np.float64)})
    samples = None
    if sink is None:
        import pyarrow as pa

        samples = (pa.concat_tables(kept).to_pandas() if kept
                   else pd.DataFrame({c: [] for c in SAMPLE_COLUMNS}))
    return Emitted(sampling, n_cards, seed, cards_table, dips_table, samples, done, partial, int(sum(truth["rows"])))
