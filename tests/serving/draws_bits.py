"""The serving model's draws as bits, for comparing CPUs: a fixed sample (the fast
tier's fingerprint) and, with ``--study``, the real-traffic study's own draws and
queues (the slow tier's comparison across XLA's ISA caps).

    python tests/serving/draws_bits.py [--study]

prints one JSON object: ``{name: sha256 of the array's bytes}``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "examples" / "traces" / "azure-conv-2023.csv"
SHAPES = (1 / 16, 1 / 4, 1.0)  # gamma CV 4, CV 2 and Poisson in law
# (label, Serving kwargs): the real-traffic study's four traffics (lengths from the log)
TRAFFICS = [("poisson", dict(arrivals="poisson")), ("gamma cv 2", dict(arrivals="gamma", cv=2.0)),
            ("gamma cv 4", dict(arrivals="gamma", cv=4.0)), ("bootstrap", dict(arrivals="log"))]
# the fixed sample's: lognormal lengths with Poisson gaps, gamma CV 4 and the bootstrap
SAMPLED = [("poisson, lognormal lengths", dict(arrivals="poisson", log=None)), TRAFFICS[2], TRAFFICS[3]]


def digest(x) -> str:
    return hashlib.sha256(np.ascontiguousarray(np.asarray(x)).tobytes()).hexdigest()


def serving(kw: dict, log, **size):
    from mc.serving import latency as L

    kw = dict(kw)
    lengths = "lognormal" if "log" in kw and kw["log"] is None else "log"
    log = kw.pop("log", log)
    return L.Serving("8b", "h100", batcher="continuous", max_batch=64, lengths=lengths, log=log, **kw, **size)


def draws(s, replications: int, load: float) -> dict:
    """Replications ``0..k-1``'s gaps, prompts, answers and arrival times at ``load``."""
    from mc import engine
    from mc.serving import arrivals as A

    def one(key, p):
        d = A.draw(key, p)
        return d.gap, d.prompt, d.answer, A.arrivals(d, p)

    p = s.params(s.rate_of(None, load))
    keys = engine.month_keys(0, np.uint32(0), replications)
    gap, prompt, answer, a = jax.jit(jax.vmap(one, in_axes=(0, None)))(keys, p)
    return {"gap": gap, "prompt": prompt, "answer": answer, "arrival": np.stack(a)}


def sample() -> dict[str, str]:
    """The fixed sample: 4,096 gamma variates at each of ``SHAPES``, exponentials and
    normals from one key, and 2 replications of 150 requests of each of ``SAMPLED``
    (gaps, lengths and arrival times at load 0.3)."""
    from mc.files import read_request_log
    from mc.kernels import exact, uniforms

    out = {}
    key = jax.random.key(53)
    gamma = jax.jit(exact.gamma, static_argnums=2)
    for a in SHAPES:
        out[f"gamma {a:g}"] = digest(gamma(key, np.float32(a), 4096))
    u = uniforms(key, (4096,))
    out["exponential"] = digest(jax.jit(exact.exponential)(u))
    out["normal"] = digest(jax.jit(exact.normal)(u))
    log = read_request_log(LOG)
    for name, kw in SAMPLED:
        for part, x in draws(serving(kw, log, n=100, warmup=50), 2, 0.3).items():
            out[f"{name} {part}"] = digest(x)
    return out


def fingerprint(hashes: dict[str, str]) -> str:
    """One sha256 over the sample's hashes, in name order."""
    return hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()


def study() -> dict[str, str]:
    """The real-traffic study's draws at its size (32 replications of 1,000 requests
    after 200) and its queues' samples at loads 0.3 and 0.9, at 24 replications of 300
    requests after 60, continuous batcher, every traffic; and ``control``, the float32
    normals of ``mc.kernels.normal``, which differ with and without fused multiply-add."""
    from mc.files import read_request_log
    from mc.serving import latency as L

    from mc.kernels import normal, uniforms

    log = read_request_log(LOG)
    # a control, not compared: the fleet's float32 normals, whose last bits XLA's ISA cap changes
    out = {"control": digest(jax.jit(normal)(uniforms(jax.random.key(53), (4096,))))}
    for name, kw in TRAFFICS:
        for part, x in draws(serving(kw, log, n=1000, warmup=200), 32, 0.3).items():
            out[f"study {name} {part}"] = digest(x)
        s = serving(kw, log, n=300, warmup=60)
        for load in (0.3, 0.9):
            r = L.simulate(s, load=load, replications=24, seed=0)
            out[f"queue {name} at {load:g}"] = digest(r.samples.to_numpy(np.float64))
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    got = sample()
    got["fingerprint"] = fingerprint(dict(got))
    if "--study" in sys.argv[1:]:
        got.update(study())
    print(json.dumps(got))
