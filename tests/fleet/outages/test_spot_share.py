"""``spot.share``: the one way a grid says how much of a pool is spot. Each entry of an
all on-demand pool is split between the markets (halves up), the pool as written is
kept for the dict form, a share of 0 is the pool on demand (today's month, bit for
bit), and a share beside a spot entry is refused in one line."""

import numpy as np
import pytest

import mc
from mc.fleet.outages.fields import split
from mc.fleet.scenario import pool_from_data
from test_terms_off import BEFORE, fingerprint


def _split_by_hand(text: str, share: float) -> list[tuple[str, str, int]]:
    """(class, market, count) of each entry, written out with plain arithmetic."""
    out = []
    for part in text.split("+"):
        n, name = part.split(" x ")
        n, name = int(n), name.strip()
        k = int(np.floor(share * n + 0.5))
        out += [(name, "on-demand", n - k)] * (n - k > 0) + [(name, "spot", k)] * (k > 0)
    return out


@pytest.mark.parametrize("text", ["32 x flagship", "3 x bargain + 5 x flagship", "1 x flagship"])
@pytest.mark.parametrize("share", [0.0, 0.1, 0.25, 0.5, 0.7, 1.0])
def test_each_entry_is_split_halves_up(text, share):
    pool = split(pool_from_data(text), share)
    assert [(c.name, c.market, n) for c, n in pool.groups] == _split_by_hand(text, share)
    assert pool.size == pool_from_data(text).size


def test_a_share_splits_the_pool_and_keeps_it_as_written():
    sc = mc.Scenario.from_dict({"pool": "3 x bargain + 5 x flagship", "spot": {"share": 0.5}})
    explicit = mc.Scenario.from_dict({"pool": [
        {"card": "bargain", "count": 1}, {"card": "bargain", "count": 2, "market": "spot"},
        {"card": "flagship", "count": 2}, {"card": "flagship", "count": 3, "market": "spot"}]})
    assert sc.pool == explicit.pool and sc.outages == explicit.outages
    data = sc.to_dict()
    assert data["pool"] == "3 x bargain + 5 x flagship" and data["spot"]["share"] == 0.5
    assert mc.Scenario.from_dict(data).pool == sc.pool
    # A new pool or share splits the pool as written, never the split one.
    assert sc.replace({"spot.share": 1.0}).pool == split(pool_from_data("3 x bargain + 5 x flagship"), 1.0)
    assert sc.replace({"pool": "4 x flagship"}).pool == split(pool_from_data("4 x flagship"), 0.5)


def test_share_zero_is_the_pool_on_demand_bit_for_bit():
    """Share 0 moves no card: whatever the other spot fields say, the month is the one
    fingerprinted before §10 existed."""
    plain = mc.presets.get("golden-idler")
    zero = plain.replace({"spot.share": 0.0, "spot.zones": 3, "spot.down_hours": 50.0})
    assert zero.pool == plain.pool and zero.outages is None and zero.autoscaler is None
    assert fingerprint(zero) == BEFORE["golden-idler"]


@pytest.mark.parametrize("given, needle", [
    ({"spot.share": 1.5}, "spot.share=1.5: must be a number in [0, 1]"),
    ({"spot.share": -0.5}, "spot.share=-0.5: must be a number in [0, 1]"),
    ({"spot.share": "half"}, "spot.share='half'"),
    ({"spot.share": float("nan")}, "spot.share=nan"),
])
def test_a_bad_share_is_one_line(given, needle):
    with pytest.raises(mc.ParamError) as err:
        mc.presets.get("lemon-hunter").replace(given)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_a_share_beside_a_spot_entry_is_refused():
    with pytest.raises(mc.ParamError, match=r'^spot.share=0.5: splits on-demand pool entries, but pool entry '
                                            r'flagship is already market = "spot"'):
        mc.Scenario.from_dict({"pool": [{"card": "flagship", "count": 4},
                                        {"card": "flagship", "count": 4, "market": "spot"}],
                               "spot": {"share": 0.5}})


def test_cli_refuses_a_bad_share_with_exit_2(tmp_path, capsys):
    from mc.cli import main

    bad = tmp_path / "bad.toml"
    bad.write_text('pool = "8 x flagship"\n[spot]\nshare = 2\n')
    assert main(["run", str(bad), "--n", "16", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "spot.share=2" in err and err.count("\n") == 1


def test_the_preset_shows_and_reads_back_its_share(tmp_path, capsys):
    from mc import files
    from mc.cli import main

    assert main(["show", "spot-field"]) == 0
    text = capsys.readouterr().out
    assert 'pool = "32 x flagship"' in text and "share = 0.5" in text
    (tmp_path / "s.toml").write_text(text)
    assert files.load_scenario(tmp_path / "s.toml").pool == mc.presets.get("spot-field").pool
