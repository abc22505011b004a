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

import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from collections import OrderedDict
from functools import lru_cache
from typing import Any, Callable, Iterator

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from .. import _validate as v
from .faults import after_chunk

MonthFn = Callable[[jax.Array, Any], dict]
# (outputs: dict of (local,) arrays, mask: (local,) bool, aux) -> pytree, run on
# each device's share of a chunk inside ``shard_map`` (collectives over "fleet").
Reducer = Callable[[dict, jax.Array, Any], Any]
AXIS = "fleet"
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


@lru_cache(maxsize=None)
def _mesh(devices: tuple) -> Mesh:
    return Mesh(np.array(devices), (AXIS,))


def _identity(out: dict, mask: jax.Array, aux: Any) -> dict:
    return out


@lru_cache(maxsize=64)
def step_fn(month_fn: MonthFn, reducer: Reducer | None, devices: tuple, chunk: int) -> Callable:
    """jit(shard_map(...)) of one chunk: ``f(seed, start, take, params, aux)``.

    Device ``d`` runs months ``start + d·(chunk/D) + j``; months at chunk
    offset ``>= take`` are padding (masked). With ``reducer=None`` the per-month
    outputs come back sharded over the chunk; otherwise the reducer's result,
    which must be replicated (its collectives are over ``AXIS``).
    """
    mesh = _mesh(devices)
    local = chunk // len(devices)
    if hasattr(reducer, "on"):  # a reducer that lays out its counts for the devices' kind
        reducer = reducer.on(devices[0].platform)

    def body(seed, start, take, params, aux):
        off = jax.lax.axis_index(AXIS).astype(jnp.int32) * local + jnp.arange(local, dtype=jnp.int32)
        idx = start + off.astype(jnp.uint32)
        keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(jax.random.key(seed), idx)
        out = jax.vmap(month_fn, in_axes=(0, None))(keys, params)
        return (reducer or _identity)(out, off < take, aux)

    out_specs = P(AXIS) if reducer is None else P()
    fn = jax.shard_map(body, mesh=mesh, in_specs=(P(), P(), P(), P(), P()), out_specs=out_specs,
                       check_vma=False)
    return jax.jit(fn)


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


# -- memory ---------------------------------------------------------------------------

def memory_budget(device: Any) -> int:
    """Bytes a run may use for one step: ``MC_MEMORY_GB`` when set, else a quarter
    of the device's memory (of the machine's RAM for a CPU)."""
    given = os.environ.get("MC_MEMORY_GB")
    if given:
        try:
            gb = float(given)
        except ValueError:
            v.fail("MC_MEMORY_GB", given, "must be a number of GiB in (0, 1e+06]")
        return int(v.number("MC_MEMORY_GB", gb, lo=0.0, lo_open=True, hi=1e6) * 2**30)
    stats = None
    if device.platform != "cpu":
        try:
            stats = device.memory_stats()
        except Exception:  # a backend without memory statistics
            stats = None
    if stats and stats.get("bytes_limit"):
        return int(stats["bytes_limit"]) // 4
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 4
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not a POSIX host
        return 4 * 2**30


def step_bytes(compiled: Any, devices: tuple) -> int | None:
    """Bytes one compiled step needs at its peak (temporaries, arguments and
    outputs), summed over the devices that share a host's RAM for a CPU and per
    device otherwise; None when the backend does not say."""
    try:
        m = compiled.memory_analysis()
        need = int(m.temp_size_in_bytes) + int(m.argument_size_in_bytes) + int(m.output_size_in_bytes)
    except Exception:  # memory analysis is optional for a backend
        return None
    local = sum(1 for d in devices if d.process_index == jax.process_index())
    return need * local if devices[0].platform == "cpu" else need


# Told when a step compiles (a cold run's first seconds or minutes, before any
# progress): each hook is called with None as compilation starts, then with its
# seconds (a step the persistent cache holds loads in a fraction of a second).
COMPILE_HOOKS: list[Callable[[float | None], None]] = []

# Compiled steps, most recently used last. Bounded: each compiled program holds
# its machine code in memory maps of its own, and a process that compiles
# without end (a long calibration, a test session) would run out of them.
_FITTED: OrderedDict = OrderedDict()
FITTED_MAX = 64


def clear_caches() -> None:
    """Forget every compiled step (the engine's and JAX's own caches): frees the
    programs' memory; the next run compiles again (or loads the persistent cache)."""
    _FITTED.clear()
    step_fn.cache_clear()
    jax.clear_caches()


# Compiler options per platform. On a CPU, LLVM is asked for the widest vectors
# the processor has (512-bit where it has AVX-512; XLA's default is 256): the
# month's elementwise passes and hashes run ~10% faster, with the same bits in
# every chunk (a platform's results may differ from another's in the last bit
# of a float sum, as they may between processors).
COMPILER_OPTIONS = {"cpu": {"xla_cpu_prefer_vector_width": 512}}


def compile_for(lowered: Any, platform: str) -> Any:
    """``lowered.compile()`` with the platform's ``COMPILER_OPTIONS``; without
    them when this XLA does not know an option (an older or newer release)."""
    options = COMPILER_OPTIONS.get(platform)
    if options:
        try:
            return lowered.compile(compiler_options=options)
        except Exception as e:  # an option this XLA release does not take
            if not any(name in str(e) for name in options):
                raise
    return lowered.compile()


def _avals(tree: Any) -> tuple:
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return treedef, tuple((np.shape(x), str(getattr(x, "dtype", None) or np.result_type(x)),
                           getattr(x, "weak_type", False)) for x in leaves)


def fitted_step(month_fn: MonthFn, reducer: Reducer | None, devices: tuple, chunk: int, params: Any,
                aux: Any, *, shrink: bool) -> tuple[Callable, int]:
    """The compiled step and its chunk, so that one step fits ``memory_budget``.

    The step is compiled ahead of time and its memory read from the compiler
    (``step_bytes``), which grows linearly with the chunk. A chunk over the
    budget is halved to the largest power of two (times the devices) that fits
    when ``shrink`` (the automatic chunk), and refused with what fits when the
    caller chose it. Results never depend on the chunk, so shrinking changes
    speed only. Compiled steps are kept per (function, chunk, argument shapes).
    """
    budget = memory_budget(devices[0])
    n_dev = len(devices)
    while True:
        key = (month_fn, reducer, devices, chunk, _avals((params, aux)))
        if key not in _FITTED:
            for hook in list(COMPILE_HOOKS):
                hook(None)
            t0 = time.perf_counter()
            compiled = compile_for(step_fn(month_fn, reducer, devices, chunk).lower(
                np.int32(0), np.uint32(0), np.int32(chunk), params, aux), devices[0].platform)
            for hook in list(COMPILE_HOOKS):
                hook(time.perf_counter() - t0)
            _FITTED[key] = (compiled, step_bytes(compiled, devices))
            while len(_FITTED) > FITTED_MAX:
                _FITTED.popitem(last=False)
        _FITTED.move_to_end(key)
        compiled, need = _FITTED[key]  # judged against the budget of this call
        if need is None or need <= budget:
            return compiled, chunk
        per_month = need / chunk
        fits = n_dev * (1 << max(0, int(budget / per_month / n_dev)).bit_length() >> 1)
        fits = min(fits, n_dev * (1 << max(0, chunk // n_dev - 1).bit_length() >> 1))  # below chunk
        if fits < n_dev or per_month * n_dev > budget:
            v.fail("memory", _gib(budget), f"is below the {_gib(per_month * n_dev)} that one month on each of "
                   f"{n_dev} device(s) needs (the budget is MC_MEMORY_GB, else a quarter of the memory)")
        if not shrink:
            v.fail("chunk", chunk, f"needs {_gib(need)} a step, above the memory budget of {_gib(budget)} "
                   f"(MC_MEMORY_GB, else a quarter of the memory); at most {fits} fits")
        chunk = fits


def _gib(x: float) -> str:
    return f"{x / 2**30:.3g} GiB"


def to_host(x: jax.Array) -> np.ndarray:
    """A device array on this host: replicated arrays from the local copy; an
    array sharded across processes gathered from all of them."""
    if getattr(x, "is_fully_addressable", True):
        return np.asarray(x)
    if x.sharding.is_fully_replicated:
        return np.asarray(x.addressable_data(0))
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


# -- interruption and progress ---------------------------------------------------------

class Stop:
    """Set by the first Ctrl-C during a run: the run stops after the chunk in hand
    and returns what it has (marked partial). A second Ctrl-C raises at once."""

    def __init__(self):
        self.requested = False


@contextmanager
def interruptible() -> Iterator[Stop]:
    stop = Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum, frame):
        if stop.requested:
            raise KeyboardInterrupt
        stop.requested = True

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def progress_bar(total: int, enabled: Any, unit: str = "months", desc: str | None = None):
    """A tqdm bar in fleet-months (or ``unit``) per second with an ETA, on stderr.
    ``enabled``: True always, False never, None only when stderr is a terminal; or a
    bar already open (one that several runs share: a command over many scenarios),
    which is used as it is and left open. Without a bar to show, tqdm is not
    needed (a machine may run the engine with jax and NumPy alone, as the GPU
    check does)."""
    enabled = v.progress("progress", enabled)
    if hasattr(enabled, "update"):
        return _Shared(enabled)
    show = sys.stderr.isatty() if enabled is None else bool(enabled)
    if not show:
        return NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit=" " + unit, unit_scale=True, disable=not show, file=sys.stderr,
                dynamic_ncols=True, smoothing=0.1, mininterval=0.5, desc=desc)


class _Shared:
    """A bar handed in by the caller: entered and left without closing it."""

    def __init__(self, bar):
        self.bar = bar

    def __enter__(self):
        return self.bar

    def __exit__(self, *exc):
        return False


class NoBar:
    """A progress bar that shows nothing (where no one watches)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, *args, **kw) -> None:
        pass

    def set_description_str(self, *args, **kw) -> None:
        pass

    def close(self) -> None:
        pass


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
