"""``mc latency``: JSON at a rate and to an SLO, help, one-line errors (exit 2)."""

import json

import pytest

from mc.cli import main

SMALL = ["--model", "8b", "--gpu", "h100", "--requests", "200", "--warmup", "20", "--replications", "8",
         "--answer-mean", "32", "--quiet"]
FIGURES = {"ttft_p50", "ttft_p95", "ttft_p99", "ttft_q", "e2e_p50", "e2e_p95", "e2e_p99", "wait_mean", "itl_mean",
           "throughput", "utilisation", "mean_batch"}


@pytest.mark.parametrize("batcher", ["static", "continuous"])
def test_rate_json(capsys, batcher):
    assert main(["latency", *SMALL, "--batcher", batcher, "--rate", "3", "--json", "--price-hour", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["figures"]) == FIGURES
    assert out["rate"] == pytest.approx(3.0) and out["replications"] == 8
    for f in out["figures"].values():
        assert f["p5"] <= f["median"] <= f["p95"]
    assert out["tokens_per_dollar"] == pytest.approx(out["figures"]["throughput"]["median"] * 1800)
    assert out["serving"]["batcher"] == batcher


def test_slo_json(capsys):
    assert main(["latency", *SMALL, "--batcher", "continuous", "--slo-ttft", "0.3", "--share", "0.75",
                 "--rel-tol", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    slo = out["slo"]
    assert slo["share_meeting"]["rate"] >= 0.75 and slo["rate"] == out["rate"]
    assert slo["slo_rated_tok_s"] == out["figures"]["throughput"]["median"]
    assert any(not t["meets"] for t in slo["tried"])


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
    (["--rate", "0"], "rate=0.0"),
    (["--rate", "nan"], "rate=nan"),
    (["--rate", "-2"], "rate=-2.0"),
    (["--rate", "1", "--max-batch", "0"], "max_batch=0"),
    (["--rate", "1", "--prompt-mean", "inf"], "prompt_mean=inf"),
    (["--rate", "1", "--answer-cv", "-1"], "answer_cv=-1.0"),
    (["--rate", "1", "--max-wait", "-0.1"], "max_wait=-0.1"),
    (["--slo-ttft", "0"], "slo_ttft=0.0"),
    (["--slo-ttft", "0.5", "--percentile", "100"], "percentile=100.0"),
    (["--rate", "1", "--replications", "1"], "replications=1"),
    (["--rate", "1", "--prompt-max", "500000"], "leaves no seat"),
    (["--rate", "1", "--gpu", "tpu"], "gpu='tpu'"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, match):
    base = ["latency", "--model", "8b", "--gpu", "h100", "--quiet", "--requests", "50", "--warmup", "5"]
    args = base + argv
    if "--gpu" in argv:
        args = ["latency", "--model", "8b", "--quiet"] + argv
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mc latency: error:") and match in err


def test_rate_and_slo_are_exclusive(capsys):
    with pytest.raises(SystemExit) as e:
        main(["latency", "--model", "8b", "--gpu", "h100", "--rate", "1", "--slo-ttft", "0.5"])
    assert e.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_an_slo_no_rate_meets_exits_2(capsys):
    argv = ["latency", "--model", "70b", "--gpu", "h200", "--weight-bytes", "1", "--prompt-mean", "4000",
            "--prompt-cv", "0", "--answer-mean", "4", "--answer-cv", "0", "--requests", "30", "--warmup", "0",
            "--replications", "2", "--slo-ttft", "0.5", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no rate meets it" in err and "lowest rate tried" in err
