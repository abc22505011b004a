"""``mc latency --tp K``: one replica's queue, a pool of replicas (``--cards`` counts
replicas), the price of a replica-hour, and the refusals."""

import json

import pytest

from mc.cli import main

SMALL = ["--model", "llama-3-70b", "--gpu", "h100", "--tp", "2", "--requests", "80", "--warmup", "40",
         "--replications", "2", "--answer-mean", "24", "--max-batch", "8", "--batcher", "continuous", "--quiet"]


def test_replica_queue_json_and_price(capsys):
    assert main(["latency", *SMALL, "--rate", "2", "--price-hour", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["serving"]["tp"] == 2 and out["replications"] == 2
    # a replica-hour is two card-hours: 3600 / (2 × $3)
    assert out["tokens_per_dollar"]["value"] == pytest.approx(out["figures"]["throughput"]["value"] * 600, rel=1e-6)


def test_replica_queue_text_names_the_replica(capsys):
    assert main(["latency", *SMALL, "--rate", "2"]) == 0
    assert capsys.readouterr().out.startswith("llama-3-70b on a replica of 2 x h100-sxm (tensor parallel), continuous")


@pytest.mark.parametrize("argv, message", [
    (["--tp", "6"], "--tp=6: must be a power of two"),
    (["--tp", "65"], "--tp=65: must be an integer in [1, 64]"),
    (["--tp", "1"], "use fewer bytes per parameter or --tp 2, a replica of 2 cards"),
])
def test_refusals(capsys, argv, message):
    args = [*SMALL, "--rate", "2"]
    i = args.index("--tp")
    args[i + 1:i + 2] = argv[1:]
    assert main(["latency", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_pool_of_replicas_text_and_slo_per_card(capsys):
    assert main(["latency", *SMALL, "--cards", "2", "--speeds", "1,0.7", "--slo-ttft", "2", "--rel-tol", "0.2",
                 "--share", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    slo = out["slo"]
    assert slo["slo_rated_tok_s_per_replica"]["value"] == pytest.approx(slo["slo_rated_tok_s"]["value"] / 2)
    assert slo["slo_rated_tok_s_per_card"]["value"] == pytest.approx(slo["slo_rated_tok_s"]["value"] / 4)
    assert main(["latency", *SMALL, "--cards", "2", "--speeds", "1,0.7", "--rate", "3"]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[1] == "2 replicas of 2 cards (4 cards) behind least_requests; factors 1,0.7"
    assert "slowest tenth of replicas served" in text[-1]
