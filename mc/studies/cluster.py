"""A study's units on a Ray cluster: each unit a Ray task, the cluster checked first.

``Ray(address)`` connects with ``ray.init``: ``address`` None is the cluster of
this machine (``RAY_ADDRESS``, else the one ``ray start`` began here, else a new
one on this machine's cores); ``"ray://HOST:PORT"`` a cluster's client port
(Ray Client; KubeRay's head service). A Ray already connected in this process is
used as it is. Before any unit runs it checks the cluster: it must have workers
(a node offering a CPU or a GPU), and every worker node must run the mc (its
version and a digest of its source), jax, jaxlib and Python of this process: a
probe task on each node says which, and a difference is refused in one line
naming the node.

Units go out as tasks, one CPU each, or one GPU each where the cluster has GPUs
(a GPU task's process ends with its unit, so each unit sees only its own GPU),
at most ``AHEAD`` per worker slot at a time (payloads are sent as they go). A
worker that dies mid-unit (its process killed, its node lost) has its unit run
again (``retries`` times), and since a unit's months keep their keys the retry
gives the same bits. Ctrl-C cancels the units still out.

``MC_FAULT_KILL_UNIT="K:PATH"`` (for tests, from inside, never a timer): the
worker that finishes unit ``K`` kills itself (SIGKILL) with the result in hand,
once: only while ``PATH`` does not exist (it writes its process id there first),
so the retry completes.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import signal
import socket
import warnings
from pathlib import Path
from typing import Any, Iterator

from .. import _validate as v
from .._version import __version__
from ..engine import NoBar, use_compile_cache
from . import dispatch

AHEAD = 2  # units in flight per worker slot: one running, one waiting
PROBE_S = 300  # seconds a node's probe may take (a worker process starts, imports jax, starts its backend)
FAULT = "MC_FAULT_KILL_UNIT"
COMPARED = ("mc", "source", "jax", "jaxlib", "python")


def source_digest() -> str:
    """The first 12 hex digits of a sha256 over this mc's Python source (paths and
    bytes): two installs with the same version but other code differ here."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


def local_versions() -> dict[str, str]:
    """What must match on every worker: mc, its source, jax, jaxlib, Python."""
    import jax
    import jaxlib

    return {"mc": __version__, "source": source_digest(), "jax": jax.__version__, "jaxlib": jaxlib.__version__,
            "python": ".".join(platform.python_version_tuple()[:2])}


def probe() -> dict:
    """Run on a worker: its versions, host and devices."""
    import jax

    use_compile_cache()  # compiled steps kept between a worker's runs, as the command line keeps them
    return {**local_versions(), "host": socket.gethostname(), "backend": jax.default_backend(),
            "devices": [str(d) for d in jax.devices()]}


def work(fn: Any, payload: Any, index: int) -> Any:
    """Run on a worker: one unit, with no bar (the driver counts units)."""
    use_compile_cache()  # compiled steps kept between a worker's runs, as the command line keeps them
    out = fn(payload, NoBar())
    fault = os.environ.get(FAULT, "")
    k, _, marker = fault.partition(":")
    if k.strip().isdigit() and int(k) == index and marker and not os.path.exists(marker):
        Path(marker).write_text(f"{os.getpid()}\n")  # who was killed
        os.kill(os.getpid(), signal.SIGKILL)
    return out


def _import_ray(flag: str, value: Any):
    try:
        import ray
    except ImportError:
        v.fail(flag, value, "needs Ray, which is not installed: pip install 'mc[cluster]' (or pip install ray)")
    return ray


class Ray:
    """Runs units as tasks on a Ray cluster (see the module).

    Arguments:
        address: None (this machine's cluster, else a new local one) or
            ``"ray://HOST:PORT"``.
        runtime_env: Ray's runtime environment for the units' tasks (env vars
            for the workers, ...), or None.
        retries: times a unit is run again when its worker dies.
        value, flag: what the user wrote and where (for messages).
    """

    def __init__(self, address: str | None = None, *, runtime_env: dict | None = None, retries: int = 3,
                 value: Any = None, flag: str = "--cluster"):
        self.value = value if value is not None else ("ray" if address is None else address)
        if runtime_env is not None and not isinstance(runtime_env, dict):
            v.fail("runtime_env", runtime_env, "must be None or a Ray runtime environment (a dict)")
        self.flag, self.address, self.runtime_env = flag, address, runtime_env
        self.retries = v.count("retries", retries, lo=0, hi=100)
        self.ray = _import_ray(flag, self.value)
        self.started = self.ready = False

    def connect(self) -> "Ray":
        """Connect and check the cluster (once; every use of the executor does it
        first, so a study's inputs are checked before the cluster is reached)."""
        if self.ready:
            return self
        ray = self.ray
        if self.address:
            _reachable(self.address, self.flag, self.value)
            if ray.is_initialized():
                v.fail(self.flag, self.value, "cannot be used: this process is already connected to a Ray cluster "
                       "(give ray to use that one)")
        if not ray.is_initialized():
            try:
                with warnings.catch_warnings():  # Ray's own notes (a fork+exec under JAX's threads, a timeout)
                    warnings.simplefilter("ignore")
                    ray.init(address=self.address, include_dashboard=False, log_to_driver=False,
                             logging_level=logging.ERROR)
            except Exception as err:  # Ray raises ConnectionError, ValueError, RuntimeError, TimeoutError...
                v.fail(self.flag, self.value, "cannot be reached: " + v.exception_line(err))
            self.started = True
        try:
            self._check(self.runtime_env)
        except BaseException:
            self.close()
            raise
        self.ready = True
        return self

    @property
    def platform(self) -> str:
        """The workers' device kind (``"cpu"``, ``"gpu"``; ``"mixed"`` when they differ)."""
        return self.connect().kind

    # -- the cluster's check ------------------------------------------------------------
    def _check(self, runtime_env: dict | None) -> None:
        ray = self.ray
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        gpus = sum(n["Resources"].get("GPU", 0) for n in nodes)
        kind = "GPU" if gpus else "CPU"
        workers = [n for n in nodes if n["Resources"].get(kind, 0) >= 1]
        if not workers:
            v.fail(self.flag, self.value, "has no workers: no node offers a CPU or a GPU to run units on (start "
                   "one with ray start --address=HEAD:PORT)")
        self.gpu = bool(gpus)
        self.slots = int(sum(n["Resources"][kind] for n in workers))
        self.options: dict[str, Any] = {"num_gpus": 1} if self.gpu else {"num_cpus": 1}
        if runtime_env:
            self.options["runtime_env"] = runtime_env
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        probe_fn = ray.remote(probe)
        asks = [probe_fn.options(**self.options, scheduling_strategy=NodeAffinitySchedulingStrategy(
            n["NodeID"], soft=False)).remote() for n in workers]
        try:
            said = ray.get(asks, timeout=PROBE_S)
        except Exception as err:
            v.fail(self.flag, self.value, "did not answer a probe on every worker node: " + v.exception_line(err))
        mine = self.expected()
        for node, got in zip(workers, said):
            if any(got.get(k) != mine[k] for k in COMPARED):
                v.fail(self.flag, self.value, f"worker node {node['NodeManagerAddress']} ({got.get('host')}) runs "
                       f"{_versions(got)}, this machine {_versions(mine)}: install the same mc, jax and Python on "
                       "every node")
        self.nodes = [{"address": n["NodeManagerAddress"], "host": got["host"],
                       "cpus": n["Resources"].get("CPU", 0), "gpus": n["Resources"].get("GPU", 0),
                       "backend": got["backend"], "devices": got["devices"]} for n, got in zip(workers, said)]
        backends = {got["backend"] for got in said}
        self.kind = backends.pop() if len(backends) == 1 else "mixed"
        self.remote = ray.remote(work)

    def expected(self) -> dict[str, str]:
        """What every worker must run (this process's versions)."""
        return local_versions()

    def describe(self) -> dict | None:
        """The cluster, for a manifest: address, Ray version, worker nodes with
        their CPUs, GPUs, backend and devices, and how units ran; None when it
        was never used (nothing ran there)."""
        if not self.ready:
            return None
        return {"engine": "ray", "ray": self.ray.__version__, "address": str(self.value), "nodes": self.nodes,
                "slots": self.slots, "unit_task": "1 GPU" if self.gpu else "1 CPU", "retries": self.retries}

    # -- running units -------------------------------------------------------------------
    def results(self, units: list[dispatch.Unit], bar: Any) -> Iterator[tuple[int, Any]]:
        if not units:
            return
        ray = self.connect().ray
        out: dict[Any, int] = {}  # task -> unit index
        nxt = done = 0
        opts = {**self.options, "max_retries": self.retries, "retry_exceptions": False}
        try:
            while done < len(units):
                while nxt < len(units) and len(out) < AHEAD * self.slots:
                    unit = units[nxt]
                    out[self.remote.options(**opts).remote(unit.fn, unit.payload, nxt)] = nxt
                    nxt += 1
                ready, _ = ray.wait(list(out), num_returns=1)
                i = out.pop(ready[0])
                partial = self._get(ready[0], units[i])
                done += 1
                bar.update(units[i].weight)
                bar.set_postfix_str(f"{done}/{len(units)} units, {self.slots} workers", refresh=False)
                yield i, partial
        finally:
            for task in out:  # Ctrl-C, an error, or the study stopped reading
                ray.cancel(task)  # one not started is dropped; one running ends with its result unread

    def _get(self, task: Any, unit: dispatch.Unit) -> Any:
        ray = self.ray
        try:
            return ray.get(task)
        except ray.exceptions.RayTaskError as err:  # the unit's own error, raised as itself
            cause = getattr(err, "cause", None)
            if isinstance(cause, BaseException):
                raise cause from None
            raise
        except (ray.exceptions.WorkerCrashedError, ray.exceptions.NodeDiedError) as err:
            v.fail(self.flag, self.value, f"lost {unit.name}: its worker died {1 + self.retries} times "
                   f"({type(err).__name__})")
        except ray.exceptions.RayError as err:  # lost objects, memory kills, an unschedulable task...
            v.fail(self.flag, self.value, f"lost {unit.name}: " + v.exception_line(err))

    def close(self) -> None:
        """Disconnect, when this executor connected (a Ray connected before is left as it was)."""
        if self.started and self.ray.is_initialized():
            self.ray.shutdown()
        self.started = self.ready = False


def executor(value: Any = None, *, name: str = "--cluster") -> Any:
    """The executor a study command runs its units with: ``dispatch.LOCAL`` when
    neither ``value`` (``--cluster``) nor ``MC_CLUSTER`` names a cluster (Ray is
    then never imported), else a ``Ray`` (Ray imported; it connects and checks
    the cluster when first used)."""
    if value is None and os.environ.get(dispatch.ENV):
        value, name = os.environ[dispatch.ENV], dispatch.ENV
    address = dispatch.parse(value, name)
    if address is None:
        return dispatch.LOCAL
    return Ray(address or None, value=value, flag=name)


def _reachable(address: str, flag: str, value: Any, timeout: float = 10.0) -> None:
    """A ``ray://HOST:PORT`` that takes a TCP connection within ``timeout`` s
    (Ray Client would retry for half a minute before saying so)."""
    host, _, port = address.partition("://")[2].rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as err:
        v.fail(flag, value, f"cannot be reached: {err.strerror or type(err).__name__} (is a Ray head's client "
               "port there? ray start --head opens 10001)")


def _versions(d: dict) -> str:
    return (f"mc {d.get('mc')} (source {d.get('source')}), jax {d.get('jax')}, jaxlib {d.get('jaxlib')}, "
            f"Python {d.get('python')}")


__all__ = ["AHEAD", "COMPARED", "FAULT", "Ray", "executor", "local_versions", "probe", "source_digest", "work"]
