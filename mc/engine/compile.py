"""Compiled steps: one chunk's ``jit(shard_map(...))`` (``step_fn``), compiled
ahead of time at a chunk that fits the memory budget (``fitted_step``), kept in a
bounded cache, and the persistent compilation cache between runs
(``use_compile_cache``).

A step runs months ``start + d·(chunk/D) + j`` on device ``d`` of a 1-D mesh
over ``AXIS``; its memory is read from the compiler, so the chunk can shrink to
fit before anything runs (results never depend on the chunk).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections import OrderedDict
from functools import lru_cache
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from .. import _validate as v

MonthFn = Callable[[jax.Array, Any], dict]
# (outputs: dict of (local,) arrays, mask: (local,) bool, aux) -> pytree, run on
# each device's share of a chunk inside ``shard_map`` (collectives over "fleet").
Reducer = Callable[[dict, jax.Array, Any], Any]
AXIS = "fleet"


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
# its machine code in memory maps of its own (about 560 for a §1 month on a CPU,
# a set per compiled kernel), a process may hold at most about 65,000 (Linux's
# vm.max_map_count), and one that compiles without end (a long calibration, a
# study job, a test session) would run out of them and abort in LLVM. 24 programs
# hold about 13,000; one dropped and needed again loads from the compile cache.
_FITTED: OrderedDict = OrderedDict()
FITTED_MAX = 24


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


# -- the persistent compilation cache ---------------------------------------------------

def cache_base() -> str:
    """The user's cache folder: ``XDG_CACHE_HOME``, else ``~/.cache``."""
    return os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")


CACHE_ENV = "MC_COMPILE_CACHE"  # a folder for the compiled steps, or off
OFF_ENV = "MC_NO_COMPILE_CACHE"  # 1: off (as MC_COMPILE_CACHE=off)
_TOLD: set[str] = set()  # folders already said to be unwritable in this process


def cache_folder() -> str | None:
    """Where compiled steps are kept between runs: ``MC_COMPILE_CACHE`` (a folder,
    or ``off``), else ``cache_base()/mc/jax``; None when off (``MC_COMPILE_CACHE=off``
    or ``MC_NO_COMPILE_CACHE=1``). A value neither names is one line naming it."""
    off = os.environ.get(OFF_ENV, "")
    if off.strip() not in ("", "0", "1"):
        v.fail(OFF_ENV, off, "must be 1 (no compile cache) or 0 (the compile cache as MC_COMPILE_CACHE says)")
    given = os.environ.get(CACHE_ENV, "").strip()
    if off.strip() == "1" or given.lower() == "off":
        return None
    if given:
        return os.path.abspath(os.path.expanduser(given))
    return os.path.join(cache_base(), "mc", "jax")


def _unwritable(folder: str) -> str | None:
    """Why ``folder`` cannot hold the cache (made when missing), or None."""
    try:
        os.makedirs(folder, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".mc-probe-", dir=folder)
        os.close(fd)
        os.remove(probe)
    except OSError as err:
        return err.strerror or str(err)
    return None


def _config_value(name: str) -> Any:
    """A jax option's value (``jax.config.read``; attribute access on releases without it)."""
    read = getattr(jax.config, "read", None)
    if read is not None:
        try:
            return read(name)
        except (AttributeError, KeyError):  # pragma: no cover - a release that reads options otherwise
            pass
    return getattr(jax.config, name, None)


def use_compile_cache() -> str | None:
    """Keep compiled steps between runs (a month compiles in seconds on a CPU; a
    cached one loads in a fraction of a second), in ``cache_folder()``.
    ``JAX_COMPILATION_CACHE_DIR`` wins, as does a folder already configured in
    this process. A folder that cannot be made or written is not used: the return
    value is then one line saying so (the run goes on, compiling as without a
    cache; said once a process), else None. Results are the same bits either way:
    a cached step is the same program."""
    if os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return None
    folder = cache_folder()
    if folder is None or _config_value("jax_compilation_cache_dir"):
        return None
    problem = _unwritable(folder)
    if problem is not None:
        if folder in _TOLD:
            return None
        _TOLD.add(folder)
        return (f"the compile cache folder {folder} cannot be written ({problem}); compiling without it "
                f"({CACHE_ENV}=FOLDER moves it, {CACHE_ENV}=off turns it off)")
    jax.config.update("jax_compilation_cache_dir", folder)
    return None
