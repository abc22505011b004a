"""The quality lottery's moments, on the draws the engine makes."""

import math

import numpy as np
import pytest

import mc
from conftest import batch_draws
from mc.fleet import lottery

N_MONTHS = 4000  # × 32 cards


@pytest.mark.slow
@pytest.mark.parametrize("lemon_rate", [0.0, 0.1, 0.3])
def test_quality_moments(lemon_rate):
    sc = mc.presets.get("golden-idler").replace({"lottery.lemon_rate": lemon_rate})
    q = np.asarray(lottery.quality(batch_draws(sc, N_MONTHS).lottery, sc.lottery), np.float64).ravel()
    n = q.size
    # Clipping at [0.5, 1.5] is > 9 sd away: the moments are the mixture's.
    f = sc.lottery.lemon_factor
    mean = 0.96 * (1 - lemon_rate + lemon_rate * f)
    second = (0.96**2 + 0.05**2) * (1 - lemon_rate + lemon_rate * f * f)
    sd = math.sqrt(second - mean**2)
    assert abs(q.mean() - mean) < 5 * sd / math.sqrt(n)
    # The sample sd's standard error is about sd/sqrt(2n) for a normal; the
    # lemon mixture is bimodal, so allow twice that.
    assert abs(q.std() - sd) < 10 * sd / math.sqrt(2 * n)
    assert q.min() >= 0.5 * (f if lemon_rate else 1) and q.max() <= 1.5


def test_lemon_share():
    sc = mc.presets.get("golden-idler").replace({"lottery.lemon_rate": 0.2})
    q = np.asarray(lottery.quality(batch_draws(sc, N_MONTHS).lottery, sc.lottery)).ravel()
    share = np.mean(q < 0.8)  # lemons sit near 0.64, healthy cards near 0.96
    assert abs(share - 0.2) < 5 * math.sqrt(0.2 * 0.8 / q.size)


def test_clipping():
    d = lottery.LotteryDraws(z=np.array([-100.0, 0.0, 100.0], np.float32), u_lemon=np.full(3, 0.5, np.float32))
    q = np.asarray(lottery.quality(d, mc.Lottery()))
    np.testing.assert_allclose(q, [0.5, 0.96, 1.5], rtol=1e-6)
