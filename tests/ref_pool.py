"""A plain-Python event simulator of SPEC §9, independent of the core: one heap of
events over every card, one decode step at a time, in float64.

It takes the arrivals, lengths, router uniforms and per-card float32 constants
the core used, and simulates the pool from the SPEC's words: at an arrival the
router looks at every card just before that instant (events at the same instant
come after it), the request joins its card's queue, and each card runs §7's
static or continuous batcher. The tests hold it to the core request by request.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

ARRIVE, CARD = 0, 1  # at one instant: the arrival first


def simulate(arrival, prompt, answer, u, consts: list[dict], router: str, batcher: str) -> dict:
    """``arrival`` (N,) float64 s; ``prompt``, ``answer`` (N,) ints; ``u`` (N,) the
    router's uniforms; ``consts``: per card ``step_base``, ``step_kv``,
    ``prefill_token`` and a replica's ``step_req``, ``prefill_base`` (s, as the card
    runs them; absent: 0), ``max_batch``, ``max_wait``, ``kv_tokens``. Returns per request ``card``, ``start``, ``first``, ``finish``."""
    N, C = len(arrival), len(consts)
    prompt = [int(x) for x in prompt]
    answer = [int(x) for x in answer]
    final = [a + b for a, b in zip(prompt, answer)]
    card = np.full(N, -1)
    start, first, finish = (np.full(N, np.nan) for _ in range(3))
    tokens_at: list[list[float]] = [[] for _ in range(N)]  # when each token was emitted
    waiting: list[list[int]] = [[] for _ in range(C)]
    running: list[list[dict]] = [[] for _ in range(C)]
    busy_until = [-math.inf] * C  # the card is in a prefill or step until then
    assigned: list[list[int]] = [[] for _ in range(C)]
    heap: list = []
    order = 0

    def push(t, kind, what):
        nonlocal order
        heapq.heappush(heap, (t, kind, order, what))
        order += 1

    for j in range(N):
        push(float(arrival[j]), ARRIVE, j)

    def fits(c, group):
        return len(group) <= consts[c]["max_batch"] and len(group) <= consts[c]["kv_tokens"] // max(
            final[j] for j in group)

    def visible(c, h):
        reqs = [j for j in assigned[c] if not finish[j] < h]
        toks = sum(answer[j] - sum(1 for x in tokens_at[j] if x < h) + (prompt[j] if math.isnan(start[j]) else 0)
                   for j in reqs)
        return len(reqs), toks

    def choose(j, h):
        if router == "random":
            return min(int(math.floor(float(np.float32(u[j]) * np.float32(C)))), C - 1)
        if router == "round_robin":
            return j % C
        seen = [visible(c, h) for c in range(C)]
        key = 0 if router == "least_requests" else 1
        return min(range(C), key=lambda c: (seen[c][key], c))

    def prefill(c, t0, joiners):
        k = consts[c]
        t1 = t0 + k.get("prefill_base", 0.0) + k["prefill_token"] * sum(prompt[j] for j in joiners)
        for j in joiners:
            start[j], first[j] = t0, t1
            tokens_at[j].append(t1)
            if answer[j] == 1:
                finish[j] = t1
            else:
                running[c].append({"j": j, "ctx": prompt[j], "left": answer[j] - 1})
        return t1

    def decode(c, t0):
        k = consts[c]
        for r in running[c]:
            r["ctx"] += 1
        t1 = (t0 + k["step_base"] + k["step_kv"] * sum(r["ctx"] for r in running[c])
              + k.get("step_req", 0.0) * len(running[c]))
        for r in running[c]:
            r["left"] -= 1
            tokens_at[r["j"]].append(t1)
            if r["left"] == 0:
                finish[r["j"]] = t1
        running[c][:] = [r for r in running[c] if r["left"] > 0]
        return t1

    def take(c, t):
        group = []
        while waiting[c] and arrival[waiting[c][0]] <= t and fits(c, [r["j"] for r in running[c]] + group
                                                                   + [waiting[c][0]]):
            group.append(waiting[c].pop(0))
        return group

    def act(c, t):
        """The card at time t, free (not inside a prefill or step): what it does next."""
        k = consts[c]
        if batcher == "static":
            if running[c]:
                busy_until[c] = decode(c, t)
            elif waiting[c]:
                w = waiting[c]
                trig = arrival[w[k["max_batch"] - 1]] if len(w) >= k["max_batch"] else arrival[w[0]] + k["max_wait"]
                if trig > t:
                    push(trig, CARD, c)  # a wake-up; an arrival may come sooner
                    return
                busy_until[c] = prefill(c, t, take(c, t))
            else:
                return
        else:
            joiners = take(c, t)
            if not joiners and not running[c]:
                return
            t1 = prefill(c, t, joiners) if joiners else t
            busy_until[c] = decode(c, t1) if running[c] else t1
        push(busy_until[c], CARD, c)

    while heap:
        t, kind, _, what = heapq.heappop(heap)
        if kind == ARRIVE:
            c = choose(what, t)
            card[what] = c
            assigned[c].append(what)
            waiting[c].append(what)
            push(t, CARD, c)  # the card looks at its queue now (after every arrival at t is routed)
        else:
            c = what
            if busy_until[c] > t:
                continue  # a stale wake-up: the card is inside a prefill or step
            if t < busy_until[c] or any(e[0] == t and e[1] == CARD and e[3] == c for e in heap):
                continue  # the card looks once per instant
            act(c, t)
    return {"card": card, "start": start, "first": first, "finish": finish}
