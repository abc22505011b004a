"""Batched, sharded evaluation of a per-month function over fleet-month indices.

Every month ``i`` gets its own key ``fold_in(key(seed), i)``. Months run in
fixed-shape chunks (the last one padded and masked), so one compilation serves
a scenario shape, and the chunk is split across every device of a 1-D mesh
(``jax.sharding``; across hosts too, after ``jax.distributed.initialize``). A
month's outcome depends only on (seed, index, params): never on the chunk size
or the number of devices.

Two ways to run:

- ``sample``: every per-month output comes back to the host (memory grows
  with N).
- ``stream``: a *reducer* turns each chunk into a few small arrays on the
  devices (sums, histograms, counts) and a host callback merges them, so
  memory is bounded by the chunk, not by N.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .. import _validate as v
from .compile import AXIS, MonthFn, Reducer, _mesh, fitted_step
from .faults import after_chunk
from .progress import NoBar, deferred_interrupts, interruptible, progress_bar

__all__ = ["AXIS", "DEFAULT_CHUNK", "MAX_N", "NoBar", "Run", "check_run_args", "device_list", "first_chunk",
           "leading", "month_keys", "progress_bar", "sample", "stream", "to_host"]
DEFAULT_CHUNK = {"cpu": 1024, "gpu": 1 << 20}  # fleet-months per device per step (CPU: cache-sized)
MAX_N = 2**32  # month indices are uint32


def month_keys(seed: int, start: jax.Array, size: int) -> jax.Array:
    """(size,) keys ``fold_in(key(seed), start + j)``."""
    base = jax.random.key(seed)
    idx = (start + jnp.arange(size, dtype=jnp.uint32)).astype(jnp.uint32)
    return jax.vmap(jax.random.fold_in, in_axes=(None, 0))(base, idx)


# -- devices and chunks ---------------------------------------------------------------

def device_list(devices: Any = None) -> list:
    """The devices a run uses: all of them (every process's, after
    ``jax.distributed.initialize``), or the first ``devices`` in one process."""
    avail = jax.devices()
    if devices is None:
        return list(avail)
    if jax.process_count() > 1:
        v.fail("devices", devices, "must be left unset in a multi-process run (all devices are used)")
    k = v.count("devices", devices, lo=1, hi=len(avail))
    return list(avail[:k])


def check_run_args(n: Any, seed: Any, chunk: Any, n_devices: int = 1,
                   platform: str = "cpu", width: int = 1) -> tuple[int, int, int]:
    """Validated ``(n, seed, chunk)``; ``chunk`` (months per step, all devices
    together) is a multiple of ``n_devices`` and no bigger than needed for ``n``.
    ``width``: examples one month's function evaluates (points vmapped inside
    it); the automatic chunk is divided by it."""
    n = v.count("n", n, lo=1, hi=MAX_N - 1)
    seed = v.count("seed", seed, lo=0, hi=2**31 - 1)
    auto = chunk is None
    if auto:
        chunk = max(1, DEFAULT_CHUNK.get(platform, DEFAULT_CHUNK["gpu"]) // width) * n_devices
    else:
        chunk = v.count("chunk", chunk, lo=1, hi=2**24)
        if chunk % n_devices:
            v.fail("chunk", chunk, f"must be a multiple of the {n_devices} devices in use")
    per_device = -(-min(chunk, n) // n_devices)  # no more padding than one device's share
    if auto:
        # Small runs round up to a power of two (at least 256 a device), so runs of
        # different n share a handful of compiled shapes instead of one each.
        per_device = min(chunk // n_devices, max(max(1, 256 // width), 1 << (per_device - 1).bit_length()))
    return n, seed, per_device * n_devices


def _prepare(month_fn: MonthFn, params: Any, n: Any, reducer: Reducer | None, aux: Any, seed: Any,
             chunk: Any, devices: Any, width: int = 1, fit: bool = False) -> tuple:
    """What a run needs before its first chunk: ``(step, n, seed, chunk, params,
    aux)`` with the arguments validated and the compiled step for them, at a
    chunk that fits the memory budget (``fitted_step``).

    Params and aux go to the devices once (replicated), not with every chunk's
    call; in a multi-process run they stay on the host (each process passes
    its own copy to the step)."""
    devs = device_list(devices)
    auto = chunk is None
    n, seed, chunk = check_run_args(n, seed, chunk, len(devs), devs[0].platform, width)
    if jax.process_count() == 1:
        params, aux = jax.device_put((params, aux), NamedSharding(_mesh(tuple(devs)), P()))
    fn, chunk = fitted_step(month_fn, reducer, tuple(devs), chunk, params, aux, shrink=auto or fit)
    return fn, n, seed, chunk, params, aux


def to_host(x: jax.Array) -> np.ndarray:
    """A device array on this host: replicated arrays from the local copy; an
    array sharded across processes gathered from all of them."""
    if getattr(x, "is_fully_addressable", True):
        return np.asarray(x)
    if x.sharding.is_fully_replicated:
        return np.asarray(x.addressable_data(0))
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


# -- the two runners ---------------------------------------------------------------------

class Run:
    """What a run did: months merged (``done``) and whether it stopped early."""

    def __init__(self, n: int):
        self.n = n
        self.done = 0
        self.partial = False
        self.stopped = False  # a Ctrl-C came (the run may still have finished: see partial)
        self.chunk = 0  # months per step, all devices together


def _chunks(n: int, chunk: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, chunk):
        yield start, min(chunk, n - start)


def stream(month_fn: MonthFn, params: Any, n: int, *, reducer: Reducer, merge: Callable[[Any, int], None],
           aux: Any = None, seed: int = 0, chunk: int | None = None, devices: Any = None,
           progress: bool | None = False, width: int = 1, unit: str = "months", first: int = 0,
           fit: bool = False) -> Run:
    """Run months ``first..first+n-1`` chunk by chunk and hand each chunk's
    reduction to ``merge(host_pytree, months_in_chunk)``. One chunk is in flight
    while the previous one merges. Ctrl-C stops after the chunk in hand
    (``Run.partial``). ``width``: examples each month evaluates (see
    ``check_run_args``). ``first``: the index of the first month (a run that
    continues another one draws the months after it). ``fit``: a given
    ``chunk`` may shrink to fit the memory budget, as the automatic one does."""
    fn, n, seed, chunk, params, aux = _prepare(month_fn, params, n, reducer, aux, seed, chunk, devices, width, fit)
    first = v.count("first", first, lo=0, hi=MAX_N - n)
    run = Run(n)
    run.chunk = chunk
    with interruptible() as stop, progress_bar(n, progress, unit) as bar:
        pending = None  # (device result, months)
        try:
            for start, take in _chunks(n, chunk):
                nxt = (fn(np.int32(seed), np.uint32(first + start), np.int32(take), params, aux), take)
                if pending is not None:
                    _merge(pending, merge, run, bar)
                pending = nxt
                if stop.requested:
                    break
            if pending is not None:  # the chunk in hand (so a stopped run holds at least one)
                _merge(pending, merge, run, bar)
                pending = None
        except KeyboardInterrupt:
            stop.requested = True
        finally:
            _settle(pending)  # nothing left running on the step when the run lets go of it
        run.partial = run.done < n
        run.stopped = stop.requested
    return run


def first_chunk(month_fn: MonthFn, params: Any, n: int, *, reducer: Reducer, aux: Any = None,
                seed: int = 0, chunk: int | None = None, devices: Any = None) -> Any:
    """The host value of chunk 0's reduction (a pilot: e.g. to size histograms);
    the same compiled step as ``stream`` with the same arguments."""
    fn, n, seed, chunk, params, aux = _prepare(month_fn, params, n, reducer, aux, seed, chunk, devices)
    out = fn(np.int32(seed), np.uint32(0), np.int32(min(chunk, n)), params, aux)
    return jax.tree_util.tree_map(to_host, out)


def leading(month_fn: MonthFn, params: Any, n: int, months: int, *, reducer: Reducer, aux: Any = None,
            seed: int = 0, chunk: int | None = None, devices: Any = None) -> list:
    """The host values of the reductions of months ``0..min(months, n)-1``, run with
    the same compiled step as ``stream`` with the same arguments (so the months a
    pilot sees do not depend on the chunk size)."""
    fn, n, seed, chunk, params, aux = _prepare(month_fn, params, n, reducer, aux, seed, chunk, devices)
    want = min(months, n)
    return [jax.tree_util.tree_map(to_host, fn(np.int32(seed), np.uint32(start), np.int32(take), params, aux))
            for start, take in _chunks(want, chunk)]


def _settle(pending) -> None:
    """Wait for a chunk still running on the devices (a run stopped by a second
    Ctrl-C, or by an error, between dispatching a chunk and merging it), with
    Ctrl-C held back meanwhile: its compiled step, and the buffers it writes,
    are never let go while a device thread still runs them."""
    if pending is None:
        return
    with deferred_interrupts():
        try:
            jax.block_until_ready(pending[0])
        except Exception:  # the chunk failed: nothing is running on it any more
            pass


def _merge(pending, merge, run: Run, bar) -> None:
    result, take = pending
    host = jax.tree_util.tree_map(to_host, result)
    merge(host, take)
    run.done += take
    bar.update(take)
    after_chunk()


def sample(month_fn: MonthFn, params: Any, n: int, *, seed: int = 0, chunk: int | None = None,
           devices: Any = None, progress: bool | None = False, run: Run | None = None, width: int = 1,
           first: int = 0, unit: str = "months", fit: bool = False) -> dict[str, np.ndarray]:
    """All per-month outputs of months ``first..first+n-1``: a dict of ``(n, ...)``
    NumPy arrays (fewer rows if a Ctrl-C stopped it; pass ``run`` to learn how many)."""
    parts: list[dict] = []

    def keep(out: dict, take: int) -> None:
        parts.append({k: x[:take] for k, x in out.items()})

    done = stream(month_fn, params, n, reducer=None, merge=keep, seed=seed, chunk=chunk,
                  devices=devices, progress=progress, width=width, first=first, unit=unit, fit=fit)
    if run is not None:
        run.__dict__.update(done.__dict__)
    if not parts:
        return {}
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
