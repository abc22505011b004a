"""``mc latency``: JSON at a rate and to an SLO, help, one-line errors (exit 2), and
traffic from gamma arrivals and a request log."""

import json
from pathlib import Path

import pytest

from mc.cli import main

SMALL = ["--model", "8b", "--gpu", "h100", "--requests", "200", "--warmup", "20", "--replications", "8",
         "--answer-mean", "32", "--quiet"]
FIGURES = {"ttft_p50", "ttft_p95", "ttft_p99", "ttft_q", "e2e_p50", "e2e_p95", "e2e_p99", "wait_mean", "itl_mean",
           "throughput", "utilisation", "mean_batch", "load", "rate"}
EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "traces" / "azure-conv-2023.csv")


@pytest.mark.slow
@pytest.mark.parametrize("batcher", ["static", "continuous"])
def test_rate_json(capsys, batcher):
    assert main(["latency", *SMALL, "--batcher", batcher, "--rate", "3", "--json", "--price-hour", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["figures"]) == FIGURES
    assert out["figures"]["rate"]["value"] == pytest.approx(3.0) and out["replications"] == 8
    assert out["traffic"]["rate"] == pytest.approx(3.0) and out["traffic"]["arrivals"] == "poisson"
    for name, f in out["figures"].items():
        assert set(f) <= {"value", "lo", "hi", "units"}
        if "lo" in f:
            assert f["lo"] <= f["value"] <= f["hi"]
            assert out["bands"][name]["p5"] <= f["value"] <= out["bands"][name]["p95"]
    assert out["figures"]["load"]["value"] == pytest.approx(out["traffic"]["load"])
    assert out["tokens_per_dollar"]["value"] == pytest.approx(out["figures"]["throughput"]["value"] * 1800)
    assert out["serving"]["batcher"] == batcher


@pytest.mark.slow
def test_slo_json(capsys):
    assert main(["latency", *SMALL, "--batcher", "continuous", "--slo-ttft", "0.3", "--share", "0.75",
                 "--rel-tol", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    slo = out["slo"]
    # the rate is the replications' crossings' quantile with its interval; the share meeting the SLO
    # at it is a raw count, near 75% but not held to it
    assert slo["rate"]["lo"] <= slo["rate"]["value"] <= slo["rate"]["hi"]
    assert 0 <= slo["share_meeting"]["value"] <= 1 and slo["rate"]["value"] == out["traffic"]["rate"]
    # the rating is the rate times the mean answer (32 tokens, lognormal cv 1, rounded up); the run's
    # measured throughput stays a figure of its own
    assert slo["mean_answer"]["value"] == pytest.approx(32.5, abs=0.1)
    assert slo["slo_rated_tok_s"]["value"] == pytest.approx(slo["rate"]["value"] * slo["mean_answer"]["value"])
    assert out["notes"] == []
    assert slo["load"]["value"] == pytest.approx(out["traffic"]["load"])
    assert any(not t["meets"] for t in slo["tried"])


@pytest.mark.slow
def test_table(capsys):
    assert main(["latency", *SMALL, "--rate", "2"]) == 0
    out = capsys.readouterr().out
    assert "TTFT p95" in out and "throughput" in out and "static batcher" in out


def test_help_documents_the_flags(capsys):
    with pytest.raises(SystemExit) as e:
        main(["latency", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--batcher", "--max-batch", "--max-wait", "--rate", "--slo-ttft", "--percentile", "--prompt-mean",
                 "--prompt-cv", "--answer-mean", "--answer-cv", "--prefill-util", "--replications", "--json"):
        assert flag in out


@pytest.mark.parametrize("argv, match", [
    (["--rate", "0"], "--rate=0.0"),
    (["--rate", "nan"], "--rate=nan"),
    (["--rate", "-2"], "--rate=-2.0"),
    (["--rate", "1", "--max-batch", "0"], "--max-batch=0"),
    (["--rate", "1", "--prompt-mean", "inf"], "--prompt-mean=inf"),
    (["--rate", "1", "--answer-cv", "-1"], "--answer-cv=-1.0"),
    (["--rate", "1", "--max-wait", "-0.1"], "--max-wait=-0.1"),
    (["--slo-ttft", "0"], "--slo-ttft=0.0"),
    (["--slo-ttft", "0.5", "--percentile", "100"], "--percentile=100.0"),
    (["--rate", "1", "--replications", "1"], "--replications=1"),
    (["--rate", "1", "--prompt-max", "500000"], "leaves no seat"),
    (["--rate", "1", "--gpu", "tpu"], "--gpu='tpu'"),
    ([], "rate=None"),
    (["--load", "0"], "--load=0.0"),
    (["--arrivals", "gamma", "--cv", "0", "--rate", "1"], "--cv=0.0"),
    (["--arrivals", "gamma", "--cv", "inf", "--rate", "1"], "--cv=inf"),
    (["--cv", "2", "--rate", "1"], "--cv=2.0"),
    (["--arrivals", "log", "--rate", "1"], "--arrivals='log'"),
    (["--log", EXAMPLE, "--block", "4000"], "--block=4000.0"),
    (["--log", EXAMPLE, "--replay", "--replications", "3"], "--replications=3"),
    (["--log", EXAMPLE, "--replay", "--requests", "40"], "--requests=40"),
    (["--log", "no-such-log.csv"], "no-such-log.csv"),
    (["--columns", "a,b,c", "--rate", "1"], "--columns='a,b,c'"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, match):
    base = ["latency", "--model", "8b", "--gpu", "h100", "--quiet", "--requests", "50", "--warmup", "5"]
    args = base + argv
    if "--gpu" in argv:
        args = ["latency", "--model", "8b", "--quiet"] + argv
    if "--replay" in argv:  # a replay sets the counts itself
        args = ["latency", "--model", "8b", "--gpu", "h100", "--quiet"] + argv
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mc latency: error:") and match in err


def test_rate_and_slo_are_exclusive(capsys):
    assert main(["latency", "--model", "8b", "--gpu", "h100", "--rate", "1", "--slo-ttft", "0.5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "slo-ttft=0.5" in err
    with pytest.raises(SystemExit) as e:
        main(["latency", "--model", "8b", "--gpu", "h100", "--rate", "1", "--load", "0.5"])
    assert e.value.code == 2


def test_an_slo_no_rate_meets_exits_2(capsys):
    argv = ["latency", "--model", "70b", "--gpu", "h200", "--weight-bytes", "1", "--prompt-mean", "4000",
            "--prompt-cv", "0", "--answer-mean", "4", "--answer-cv", "0", "--requests", "30", "--warmup", "0",
            "--replications", "2", "--slo-ttft", "0.5", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no rate meets it" in err and "lowest rate tried" in err


@pytest.mark.slow
def test_a_log_replayed_and_bootstrapped(capsys):
    assert main(["latency", "--model", "8b", "--gpu", "h100", "--batcher", "continuous", "--max-batch", "64",
                 "--log", EXAMPLE, "--replay", "--quiet"]) == 0
    out = capsys.readouterr().out
    for text in ("19,366 requests over 3,501.7 s", "own rate 5.53 req/s", "compressed 1x", "offered load",
                 "one replay of 19,366 requests"):
        assert text in out, text
    assert main(["latency", "--model", "8b", "--gpu", "h100", "--batcher", "continuous", "--max-batch", "64",
                 "--log", EXAMPLE, "--load", "0.6", "--block", "300", "--requests", "300", "--warmup", "30",
                 "--replications", "4", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    t = out["traffic"]
    assert t["arrivals"] == "log" and t["block_s"] == 300 and t["log"]["rows"] == 19366
    assert t["load"] == pytest.approx(0.6) and t["compression"] == pytest.approx(t["rate"] / t["log"]["rate"])
    assert out["serving"]["log"]["sha256"] == t["log"]["sha256"]
    for q in ("ttft_p50", "ttft_p95", "ttft_p99"):
        assert out["figures"][q]["lo"] <= out["figures"][q]["value"] <= out["figures"][q]["hi"]


@pytest.mark.slow
def test_gamma_arrivals_print_their_cv_and_load(capsys):
    assert main(["latency", *SMALL, "--arrivals", "gamma", "--cv", "4", "--load", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "gamma arrivals, gaps with coefficient of variation 4" in out and "offered load 0.5" in out


@pytest.mark.slow
def test_a_replication_short_for_the_cards_seats_is_one_warning_line(capsys):
    loud = [a for a in SMALL if a != "--quiet"]
    assert main(["latency", *loud, "--batcher", "continuous", "--max-batch", "64", "--rate", "3", "--json"]) == 0
    cap = capsys.readouterr()
    note = ("n=200: must be at least 256 measured requests per replication, 4 per seat of the card's 64: a shorter "
            "replication measures a card still filling")
    assert json.loads(cap.out)["notes"] == [note]
    assert [line for line in cap.err.splitlines() if "warning" in line] == [
        f"mc latency: warning: {note} (--requests, --warmup)"]
