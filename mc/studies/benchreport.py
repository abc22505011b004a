"""``mc bench``'s reports: each benchmark's dict (``mc.studies.bench``) as the text the
command prints."""

from __future__ import annotations


def format_bench(r: dict) -> str:
    lines = [f"{r['scenario']} on {r['backend']} ({r['device']} x{r['devices']}), jax {r['jax']}", ""]
    for e in r["engine"]:
        if "error" in e:
            lines.append(f"engine  chunk {e['chunk']:>8,}   {e['error']}")
            continue
        lines.append(f"engine  chunk {e['chunk']:>8,}   {e['months_per_s']:>14,.0f} months/s   "
                     f"({e['n']:,} months in {e['seconds']:.2f} s)")
    for e in r["numpy_month"]:
        lines.append(f"numpy   batch {e['batch']:>8,}   {e['months_per_s']:>14,.0f} months/s   "
                     f"({e['n']:,} months in {e['seconds']:.2f} s)")
    lines += ["", f"engine / numpy (best of each): {r['ratio']:.1f}x"]
    return "\n".join(lines)

def format_bench_pool(r: dict) -> str:
    lines = [f"{r['scenario']} against pool size on {r['backend']} ({r['device']} x{r['devices']}), "
             f"jax {r['jax']}", ""]
    for e in r["pools"]:
        if "error" in e:
            lines.append(f"{e['cards']:>6,} cards   chunk {e['chunk']:>7,}   {e['error']}")
            continue
        lines.append(f"{e['cards']:>6,} cards   chunk {e['chunk']:>7,}   {e['months_per_s']:>12,.0f} months/s   "
                     f"{e['card_months_per_s']:>14,.0f} card-months/s   ({e['vs_best']:.2f} of the best)")
    return "\n".join(lines)


def format_bench_autoscaler(r: dict) -> str:
    lines = [f"{r['scenario']} ({r['rounds']} rounds) on {r['backend']} ({r['device']} x{r['devices']}), "
             f"jax {r['jax']}", ""]
    rows = [("autoscaler", r["autoscaler"]), ("one round", r["one_round"])]
    if "reference" in r:
        rows.append(("reference", r["reference"]))
    for label, e in rows:
        lines.append(f"{label:<11} {e['months_per_s']:>14,.1f} months/s   ({e['n']:,} months in {e['seconds']:.2f} s)")
    lines += ["", f"one round / autoscaler: {r['one_round_over_autoscaler']:.1f}x"]
    if "reference" in r:
        lines.append(f"autoscaler / reference: {r['autoscaler_over_reference']:.1f}x")
    return "\n".join(lines)


def format_bench_structure(r: dict) -> str:
    terms = ", ".join(f"{k}={v:g}" for k, v in r["terms"].items())
    lines = [f"SPEC 1.4.1's terms ({terms}) on {r['backend']} ({r['device']} x{r['devices']}), jax {r['jax']}", ""]
    for row in r["rows"]:
        for label in ("off", "on"):
            e = row[label]
            lines.append(f"{row['scenario']:<20} terms {label:<3} {e['months_per_s']:>12,.1f} months/s   "
                         f"({e['n']:,} months in {e['seconds']:.2f} s; {e['months_per_cpu_s']:,.0f} a CPU-second)")
        lines.append(f"{row['scenario']:<20} on / off: {row['on_over_off']:.3f}x   "
                     f"(by CPU time: {row['cpu_on_over_off']:.3f}x)")
    return "\n".join(lines)


def format_bench_replicas(r: dict) -> str:
    lines = [f"replicas of tp cards (model §11) against the same cards one by one on {r['backend']} "
             f"({r['device']} x{r['devices']}), jax {r['jax']}", ""]
    for row in r["rows"]:
        e = row["tp1"]
        lines.append(f"{row['scenario']:<20} {row['cards']} cards, tp 1 {e['months_per_s']:>12,.1f} months/s   "
                     f"({e['months_per_cpu_s']:,.0f} a CPU-second)")
        for e in row["sizes"]:
            lines.append(f"{row['scenario']:<20} {row['cards']} cards, tp {e['tp']} {e['months_per_s']:>12,.1f} months/s"
                         f"   {e['over_tp1']:.3f}x tp 1 (by CPU time {e['cpu_over_tp1']:.3f}x)")
    return "\n".join(lines)


def format_bench_latency(r: dict) -> str:
    lg = r["log"]
    lines = [f"one card's queue (8b on h100, {r['batcher']} batcher, max batch {r['max_batch']}) on {r['backend']} "
             f"({r['device']}), jax {r['jax']}",
             f"log {lg['source']}: {lg['rows']:,} requests over {lg['span_s']:,.0f} s, {lg['rate']:.4g} req/s; "
             "every run at that rate with the log's lengths", ""]
    for e in r["runs"]:
        lines.append(f"{e['arrivals']:<11} {e['replications']:>4} x {e['requests']:>6,} requests   "
                     f"warm {e['warm_s']:7.2f} s   cold {e['cold_s']:7.2f} s   {e['requests_per_s']:>10,.0f} requests/s")
    lines += ["", f"bootstrap / poisson: {r['bootstrap_over_poisson']:.2f}x    "
              f"gamma / poisson: {r['gamma_over_poisson']:.2f}x (warm, this run)"]
    return "\n".join(lines)


__all__ = ["format_bench", "format_bench_autoscaler", "format_bench_latency", "format_bench_pool",
           "format_bench_structure"]
