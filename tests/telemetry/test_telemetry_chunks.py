"""Card ``i`` draws from ``fold_in(key(seed), i)`` alone: its rows and truth are the
same for any chunk, any number of cards around it, and any sink."""

from __future__ import annotations

import pyarrow as pa
import pytest

import mc
from mc import telemetry

SAMPLING = telemetry.Sampling(every=20.0, hours=100.0)
MIXED = mc.Scenario(pool=mc.Pool.of(("bargain", 7), ("flagship", 5)), dips=mc.Dips(rate=20.0))


def _same(a, b) -> None:
    assert a.samples.equals(b.samples)
    assert a.cards.equals(b.cards)
    assert a.dips.equals(b.dips)


@pytest.fixture(scope="module")
def whole():
    return telemetry.emit(MIXED, SAMPLING, seed=4)


@pytest.mark.slow
def test_two_chunk_sizes_give_identical_rows(whole):
    for chunk in (3, 8):
        _same(telemetry.emit(MIXED, SAMPLING, seed=4, chunk=chunk), whole)
    assert len(whole.samples) == 12 * SAMPLING.samples and len(whole.dips) > 12


def test_a_card_does_not_depend_on_the_cards_around_it():
    sc = mc.presets.get("golden-idler").replace({"dips.rate": 20.0})
    few = telemetry.emit(sc, SAMPLING, cards=5, seed=4)
    many = telemetry.emit(sc, SAMPLING, cards=19, seed=4)
    n = 5 * SAMPLING.samples
    assert few.samples.equals(many.samples.iloc[:n].reset_index(drop=True))
    assert few.cards.equals(many.cards.iloc[:5])
    assert few.dips.equals(many.dips[many.dips.card < 5].reset_index(drop=True))
    other = telemetry.emit(sc, SAMPLING, cards=5, seed=5)
    assert not (other.samples.rate.to_numpy() == few.samples.rate.to_numpy()).all()


def test_a_sink_takes_the_same_rows_in_card_order(whole):
    got = []
    made = telemetry.emit(MIXED, SAMPLING, seed=4, chunk=3, sink=got.append)
    assert made.samples is None and made.done == 12 and not made.partial
    rows = pa.concat_tables(got).to_pandas()
    assert rows.equals(whole.samples)
    assert all(t.num_rows % SAMPLING.samples == 0 for t in got)
