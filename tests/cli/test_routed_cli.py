"""``mc latency --cards N``: a pool behind a router (SPEC §9) in the one JSON shape,
the lemons' cost beside a scenario's pool, and one-line refusals (exit 2)."""

import json
from pathlib import Path

import pytest

from mc.cli import main

SMALL = ["latency", "--model", "8b", "--gpu", "h100", "--requests", "120", "--warmup", "20", "--answer-mean", "32",
         "--quiet"]
EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "traces" / "azure-conv-2023.csv")


# The pool of the JSON and SLO tests: one compiled step for both.
POOL = ["--cards", "3", "--speeds", "1,1,0.65", "--router", "least_tokens", "--batcher", "continuous",
        "--replications", "4"]


def test_pool_json_has_intervals_per_card_utilisation_and_the_slow_tail(capsys):
    assert main(SMALL + POOL + ["--rate", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pool"]["cards"] == 3 and out["pool"]["router"] == "least_tokens"
    f = out["figures"]
    assert f["ttft_p95"]["lo"] <= f["ttft_p95"]["value"] <= f["ttft_p95"]["hi"]
    assert 0 <= f["slow_tail_share"]["value"] <= 1
    assert len(out["per_card"]["utilisation"]) == 3
    assert out["traffic"]["load"] == pytest.approx(30 / out["traffic"]["capacity_rate"])
    # 120 requests for 3 cards' 48 seats: said in the notes, and (--quiet) not on stderr
    assert out["notes"] == ["n=120: must be at least 192 measured requests per replication, 4 per seat of the "
                            "pool's 48 (3 cards x 16 seats): a shorter replication measures a pool still filling"]
    assert capsys.readouterr().err == ""


def test_a_replication_short_for_the_pools_seats_is_one_warning_line(capsys):
    loud = [a for a in SMALL if a != "--quiet"]
    assert main(loud + ["--cards", "3", "--speeds", "1,1,0.65", "--router", "least_tokens", "--rate", "30",
                        "--replications", "4", "--json"]) == 0
    cap = capsys.readouterr()
    warned = [line for line in cap.err.splitlines() if "warning" in line]
    assert warned == ["mc latency: warning: " + json.loads(cap.out)["notes"][0] + " (--requests, --warmup)"]


@pytest.mark.slow
def test_a_scenario_with_lemons_reports_their_cost_on_the_same_draws(capsys):
    assert main(SMALL + ["--cards", "4", "--scenario", "lemon-hunter", "--load", "0.3", "--replications", "4",
                         "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    fair = out["lemons_replaced"]
    assert set(fair["figures"]) == set(out["figures"])
    assert "lo" in fair["ttft_p95_cost"]


@pytest.mark.slow
def test_a_replayed_log_behind_a_router_prints_the_pools_figures(capsys):
    assert main(["latency", "--model", "8b", "--gpu", "h100", "--cards", "8", "--speeds", "1,1,1,1,1,1,1,0.65",
                 "--router", "least_requests", "--log", EXAMPLE, "--replay", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "8 cards behind least_requests" in out and "TTFT p95" in out and "slowest tenth" in out


def test_one_card_with_a_router_is_allowed(capsys):
    assert main(SMALL + ["--cards", "1", "--router", "random", "--rate", "5", "--replications", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == []  # 120 requests after 20 for 16 seats: long enough


@pytest.mark.parametrize("argv, match", [
    (["--cards", "0"], "cards=0"),
    (["--cards", "3", "--speeds", "1,1"], "speeds="),
    (["--cards", "2", "--speeds", "1,0"], "speeds[1]=0.0"),
    (["--cards", "2", "--speeds", "1,-2"], "speeds[1]=-2.0"),
    (["--cards", "2", "--speeds", "1,x"], "speeds='1,x'"),
    (["--cards", "2", "--router", "fastest"], "router='fastest'"),
    (["--router", "random"], "router='random'"),
    (["--speeds", "1,1"], "speeds='1,1'"),
])
def test_bad_pools_are_one_line_exit_2(capsys, argv, match):
    assert main(SMALL + ["--rate", "5"] + argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("mc latency: error:") and match in err, err


def test_a_scenario_of_several_classes_is_refused(capsys, tmp_path):
    f = tmp_path / "mixed.toml"
    f.write_text('pool = "16 x flagship + 16 x bargain"\n')
    assert main(SMALL + ["--rate", "5", "--cards", "4", "--scenario", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "several card classes" in err, err


def test_the_pools_slo_rate(capsys):
    assert main(SMALL + POOL + ["--slo-ttft", "0.5", "--rel-tol", "0.1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    got = out["slo"]
    assert got["rate"]["value"] == pytest.approx(out["traffic"]["rate"])
    assert got["slo_rated_tok_s_per_card"]["value"] == pytest.approx(got["slo_rated_tok_s"]["value"] / 3)
    # the pool's rating is its rate times the mean answer (SPEC §7, §9)
    assert got["slo_rated_tok_s"]["value"] == pytest.approx(got["rate"]["value"] * got["mean_answer"]["value"])
    assert any(not t["meets"] for t in got["tried"]) and any(t["meets"] for t in got["tried"])
