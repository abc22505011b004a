"""A plain-Python discrete-event reference of SPEC §7, one replication at a time.

It consumes the very draws the JAX core consumes (unit-rate gaps, prompt and
answer lengths of ``mc.serving.latency.draw``) and the same float32 constants,
and simulates in float64 one decode step at a time, straight from the SPEC's
words: no runs, no closed forms, none of the core's code. The tests hold the two
to float tolerance on every request's event times and on the figures.

For a request log it builds the arrivals itself, in float64, from the log's
times and the blocks' starting offsets the core drew (``bootstrap``, ``replay``):
which rows each block holds, where they land, and the float32 gaps between them.
"""

from __future__ import annotations

import math

import numpy as np


def constants(p) -> dict:
    """The device parameters as float64 / int (the float32 values, exactly)."""
    keys = ("rate", "gap_scale", "max_wait", "step_base", "step_kv", "prefill_token", "step_req", "prefill_base")
    out = {k: float(np.float32(getattr(p, k))) for k in keys}
    out.update(max_batch=int(p.max_batch), kv_tokens=int(p.kv_tokens), batcher=p.batcher, warmup=p.warmup,
               n=p.n)
    return out


def simulate(gap, prompt, answer, c: dict) -> dict:
    """Every request's ``arrival``, ``start``, ``first`` (end of its prefill) and
    ``finish`` (s), and the figures of the replication.

    Arguments:
        gap: (N,) unit-rate gaps (float32 values). prompt, answer: (N,) ints.
        c: ``constants(params)``.
    """
    N = len(prompt)
    gaps = (np.asarray(gap, np.float32) * np.float32(c["gap_scale"])).astype(np.float64)  # gap / rate
    arrival = np.cumsum(gaps)
    prompt = [int(x) for x in prompt]
    answer = [int(x) for x in answer]
    final = [a + b for a, b in zip(prompt, answer)]
    mb, kv_tokens = c["max_batch"], c["kv_tokens"]
    start = np.full(N, np.nan)
    first = np.full(N, np.nan)
    finish = np.full(N, np.nan)
    busy: list[tuple[float, float]] = []
    steps: list[tuple[float, int]] = []  # (start, active requests)
    running: list[dict] = []  # {"j", "ctx", "left"}
    t, head = 0.0, 0

    def fits(group: list[int]) -> bool:
        return len(group) <= mb and len(group) <= kv_tokens // max(final[j] for j in group)

    def prefill(t0: float, joiners: list[int]) -> float:
        # a replica's prefill also waits on its all-reduces' latency (0 on one card)
        t1 = t0 + c["prefill_base"] + c["prefill_token"] * sum(prompt[j] for j in joiners)
        busy.append((t0, t1))
        for j in joiners:
            start[j], first[j] = t0, t1
            if answer[j] == 1:
                finish[j] = t1
            else:
                running.append({"j": j, "ctx": prompt[j], "left": answer[j] - 1})
        return t1

    def decode(t0: float) -> float:
        for r in running:
            r["ctx"] += 1  # context at this step: prompt + k
        # a replica's step also all-reduces each running request's activations (0 on one card)
        d = c["step_base"] + c["step_kv"] * sum(r["ctx"] for r in running) + c["step_req"] * len(running)
        steps.append((t0, len(running)))
        busy.append((t0, t0 + d))
        t1 = t0 + d
        for r in running:
            r["left"] -= 1
            if r["left"] == 0:
                finish[r["j"]] = t1
        running[:] = [r for r in running if r["left"] > 0]
        return t1

    while head < N or running:
        if c["batcher"] == "static":
            if running:
                t = decode(t)
                continue
            full = arrival[head + mb - 1] if head + mb - 1 < N else math.inf
            t0 = max(t, min(full, arrival[head] + c["max_wait"]))
            batch: list[int] = []
            while head < N and arrival[head] <= t0 and fits(batch + [head]):
                batch.append(head)
                head += 1
            t = prefill(t0, batch)
        else:
            if not running and arrival[head] > t:
                t = arrival[head]  # idle until the next arrival
            joiners: list[int] = []
            while head < N and arrival[head] <= t and fits([r["j"] for r in running] + joiners + [head]):
                joiners.append(head)
                head += 1
            if joiners:
                t = prefill(t, joiners)
            if running:
                t = decode(t)

    w = c["warmup"]
    m = slice(w, N)
    s, e = arrival[w], np.max(finish[m])
    span = e - s
    ttft = first[m] - arrival[m]
    e2e = finish[m] - arrival[m]
    ans = np.asarray(answer[w:], np.float64)
    many = ans > 1
    itl = (finish[m] - first[m])[many] / (ans[many] - 1)
    counted = [k for t0, k in steps if t0 >= s]
    figures = {
        "ttft_p50": np.percentile(ttft, 50), "ttft_p95": np.percentile(ttft, 95),
        "ttft_p99": np.percentile(ttft, 99),
        "e2e_p50": np.percentile(e2e, 50), "e2e_p95": np.percentile(e2e, 95), "e2e_p99": np.percentile(e2e, 99),
        "wait_mean": float(np.mean(start[m] - arrival[m])),
        "itl_mean": float(np.mean(itl)) if itl.size else math.nan,
        "throughput": float(ans.sum() / span),
        "utilisation": sum(max(0.0, min(b, e) - max(a, s)) for a, b in busy) / span,
        "mean_batch": float(np.mean(counted)) if counted else math.nan,
    }
    return {"arrival": arrival, "start": start, "first": first, "finish": finish, "figures": figures}


def bootstrap(time, offsets, block: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The moving-block bootstrap in float64, straight from its definition: block
    ``k`` starts at replication time ``float32(k)·block`` (a float32 product) and
    holds the log's requests arriving in ``[o_k, o_k + block)``, shifted there;
    blocks are placed until ``n`` requests are. Returns (n,) float32 gaps (gap 0
    is the first arrival's time) and (n,) log rows.

    Arguments:
        time: (rows,) float64 s since the log's first arrival, sorted.
        offsets: float32 ``o_k`` for k = 0, 1, ... (as many as the blocks need).
        block: float32 s.
    """
    time = np.asarray(time, np.float64)
    block32 = np.float32(block)
    raw, rows = [], []
    for k, o in enumerate(offsets):
        o = float(np.float32(o))
        inside = np.flatnonzero((time >= o) & (time < o + float(block32)))
        start = float(np.float32(np.float32(k) * block32))
        for r in inside:
            raw.append(start + (time[r] - o))
            rows.append(int(r))
        if len(raw) >= n:
            break
    else:
        raise ValueError("not enough offsets for n requests")
    raw = np.asarray(raw[:n])
    return _gaps(raw, raw[0]), np.asarray(rows[:n])


def replay(time) -> np.ndarray:
    """(rows,) float32 gaps of a replay: the log's own times, the first at 0."""
    return _gaps(np.asarray(time, np.float64), 0.0)


def _gaps(raw: np.ndarray, first: float) -> np.ndarray:
    return np.concatenate([[first], np.diff(raw)]).astype(np.float32)
