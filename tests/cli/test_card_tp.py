"""``mc card --tp K``: a replica's figures with one card's beside them, and its refusals."""

from __future__ import annotations

import json

import pytest

from mc.cli import main

ARGS = ["card", "--model", "llama-3-70b", "--gpu", "h100", "--batch", "16", "--price-hour", "3", "--no-slo"]


def test_replica_text_has_the_replica_and_one_card(capsys):
    assert main([*ARGS, "--tp", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("llama-3-70b on a replica of 4 x h100-sxm (tensor parallel)")
    rows = {line[:16].strip(): line[16:].split() for line in lines[1:]}
    assert rows[""] == ["replica", "per", "card"]
    assert rows["weights"][:2] == ["141.1", "GB"] and rows["weights"][2:4] == ["35.28", "GB"]
    assert rows["KV per token"][:2] == ["327,680", "bytes"] and rows["KV per token"][2] == "81,920"
    assert rows["seats"][0] == "125" and rows["batch"] == ["16"]
    assert rows["decode step"][:2] == ["13.07", "ms"] and "0.940" in rows["decode step"]
    assert rows["aggregate"] == ["1,223.9", "tok/s", "306.0", "tok/s"]
    assert rows["time to first"][:2] == ["0.083", "s"]
    assert rows["price"] == ["$12/hour", "$3/hour"]
    assert rows["tokens per $"] == ["367,174", "367,174"]


def test_replica_json(capsys):
    assert main([*ARGS, "--tp", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tp"] == 4 and out["price_hour_replica"] == 12.0 and out["provenance"]["scenario"]["tp"] == 4
    assert out["aggregate_tok_s_per_card"] == pytest.approx(out["aggregate_tok_s"] / 4, rel=1e-15)
    assert out["tokens_per_dollar"] == pytest.approx(out["aggregate_tok_s"] * 3600 / 12, rel=1e-15)
    assert out["figures"]["tp"] == {"value": 4, "units": "cards"}


def test_one_card_prints_as_before(capsys):
    assert main(["card", "--model", "8b", "--gpu", "h100", "--no-slo"]) == 0
    text = capsys.readouterr().out
    assert "replica" not in text and "per card" not in text and text.startswith("8b on h100-sxm: 2-byte weights")


@pytest.mark.parametrize("argv, message", [
    (["--tp", "3"], "--tp=3: must be a power of two"),
    (["--tp", "0"], "--tp=0: must be an integer in [1, 64]"),
    (["--tp", "128"], "--tp=128: must be an integer in [1, 64]"),
    (["--model", "llama-3-70b"], "use fewer bytes per parameter or --tp 2, a replica of 2 cards"),
    (["--model", "llama-3-70b", "--gpu", "l40s", "--tp", "2"], "--tp=2: is too few cards: "),
    (["--model", "llama-3.1-405b", "--gpu", "l40s", "--mem-util", "0.01", "--tp", "64"],
     "even of a replica of 64 (the most)"),
])
def test_refusals(capsys, argv, message):
    base = {"--model": "8b", "--gpu": "h100"}
    for flag, value in zip(argv[::2], argv[1::2]):
        base[flag] = value
    assert main(["card", *[x for kv in base.items() for x in kv], "--no-slo"]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_replica_slo_rating_is_the_replicas_with_one_cards_share(capsys):
    assert main(["card", "--model", "llama-3-70b", "--gpu", "h100", "--tp", "2", "--batch", "8", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)["slo_rated"]
    assert r["met"] and r["tok_s_per_card"]["value"] == pytest.approx(r["tok_s"]["value"] / 2, rel=1e-15)
