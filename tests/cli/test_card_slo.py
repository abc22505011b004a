"""``mc card`` rates the card at a latency SLO beside its full-batch arithmetic."""

import json

import pytest

from mc.cli import main

CARD = ["card", "--model", "8b", "--gpu", "h100", "--batch", "32", "--context", "1280", "--prompt", "1024"]


@pytest.mark.slow
def test_the_slo_rated_rate_is_printed_beside_the_arithmetic(capsys):
    assert main(CARD) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("SLO-rated"))
    for text in ("p95 TTFT <= 0.5 s", "Poisson arrivals", "continuous batcher of 32", "1,024-token prompts",
                 "256-token answers", "every seat busy with no queue"):
        assert text in line, text
    assert main(CARD + ["--no-slo"]) == 0
    assert "SLO-rated" not in capsys.readouterr().out


@pytest.mark.slow
def test_json_gives_the_slo_rated_figures_below_the_aggregate(capsys):
    assert main(CARD + ["--json", "--slo-ttft", "1.0"]) == 0
    out = json.loads(capsys.readouterr().out)
    r = out["slo_rated"]
    assert r["met"] and r["slo_ttft"] == 1.0 and r["queue"]["max_batch"] == 32
    assert 0 < r["tok_s"]["value"] < out["aggregate_tok_s"] and r["tok_s"]["units"] == "tok/s"
    assert r["rate"]["value"] > 0 and 0 < r["load"]["value"] < 1.5


@pytest.mark.slow
def test_an_slo_no_rate_meets_is_said_not_refused(capsys):
    argv = ["card", "--model", "70b", "--gpu", "h100", "--weight-bytes", "1", "--batch", "2", "--prompt", "6000",
            "--context", "6100", "--slo-ttft", "0.2"]
    assert main(argv) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("SLO-rated"))
    assert "none: no rate meets it" in line


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_a_bad_slo_is_one_line_exit_2(capsys, value):
    assert main(CARD + ["--slo-ttft", value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--slo-ttft=" in err
