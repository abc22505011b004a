"""Integer fields refuse NaN, infinities, fractions, booleans, complex numbers and
values past int32 with one line naming the field; a trace needs shape = "trace"."""

import math

import pytest

import mc
from mc import ParamError
from mc.files import scenario_from_data

BAD = [math.nan, math.inf, -math.inf, 2.5, True, 1 + 0j, 1e300, 2**31]
BASE = mc.presets.get("golden-idler")


@pytest.mark.parametrize("bad", BAD, ids=repr)
@pytest.mark.parametrize("field", ["dips.max_count", "demand.max_bursts", "checks.max_wrong"])
def test_integer_scenario_fields(field, bad):
    with pytest.raises(ParamError) as err:
        BASE.replace({field: bad})
    assert str(err.value).startswith(field + "=") and "\n" not in str(err.value)


@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_pool_counts(bad):
    with pytest.raises(ParamError, match="pool"):
        mc.Pool.of(("flagship", bad))


@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_owned_cards(bad):
    with pytest.raises(ParamError, match="owned.h100="):
        mc.Procurement(owned={"h100": bad})


def test_a_trace_needs_the_trace_shape(tmp_path):
    (tmp_path / "t.csv").write_text("\n".join(["5000"] * 730))
    with pytest.raises(ParamError, match="only used with shape = 'trace'"):
        scenario_from_data({"preset": "golden-idler", "demand": {"trace_csv": "t.csv"}}, tmp_path)
    with pytest.raises(ParamError, match="demand.trace"):
        BASE.replace({"demand.trace": [5000.0] * 730})
    sc = scenario_from_data({"preset": "golden-idler", "demand": {"shape": "trace", "trace_csv": "t.csv"}},
                            tmp_path)
    assert sc.demand.shape == "trace" and sc.replace({"demand.shape": "flat"}).demand.trace is None


@pytest.mark.parametrize("bins", [-1, 0, 15, 1.5, 10**9, math.nan, True])
def test_histogram_bins(bins):
    with pytest.raises(ParamError, match="^bins="):
        mc.simulate(BASE, 10, bins=bins)
