"""Demand from a request log (SPEC §1.7): the hourly profile for each tiling rule,
edge hours, scale and level, the busiest minute, plain data, files and the CLI."""

import json
import tomllib
import warnings

import jax
import numpy as np
import pytest

import mc
from mc import files
from mc.cli import main
from mc.fleet import demand, logdemand
from mc.serving import RequestLog

H = 3600.0
BASE = mc.presets.get("golden-idler")


def log_of(tokens, start=None, source="<synthetic>"):
    """A log whose hour ``a`` (from its first arrival) holds ``tokens[a]`` answer
    tokens exactly: one request at mid-hour, plus 1 token at t = 0 and 1 at the
    very end (which counts in the last hour), taken from the first and last hours."""
    tokens = np.asarray(tokens, np.int64).copy()
    n = tokens.size
    tokens[0] -= 1
    tokens[-1] -= 1
    time = np.r_[0.0, np.arange(n) * H + 1800.0, n * H]
    answer = np.r_[1, tokens, 1]
    start = None if start is None else np.datetime64(start, "ns")
    return RequestLog.of(time, np.ones_like(answer), answer, source=source, start=start)


def profile(p):
    return np.asarray(demand.profile(None, p), np.float64)


def reference(tokens, offset_hours, period, hours=730):
    """Whole hours only: the mean of each slot's rates, hour by hour, in plain Python."""
    sums, counts = [0.0] * period, [0] * period
    for a, t in enumerate(tokens):
        s = (a + offset_hours) % period
        sums[s] += t / H
        counts[s] += 1
    return np.array([sums[h % period] / counts[h % period] for h in range(hours)])


# -- the profile, rule by rule ----------------------------------------------------------

def test_a_log_shorter_than_a_day_is_its_mean_with_a_warning():
    log = log_of([3600, 7200, 2, 3600, 3600], source="five-hours.csv")
    with pytest.warns(UserWarning, match=r"five-hours\.csv spans 5 h, less than a day.*mean"):
        p, how = logdemand.hourly_profile(log)
    assert how == "mean" and p.shape == (730,)
    assert np.all(p == log.answer.sum() / log.span)


def test_a_day_is_repeated_by_hour_of_the_day_and_its_days_averaged():
    day = np.arange(1, 25)
    tokens = np.r_[day, 3 * day] * 3600  # day 2 at three times day 1's rate
    p, how = logdemand.hourly_profile(log_of(tokens))
    assert how == "day"
    assert np.array_equal(p, 2.0 * day[np.arange(730) % 24])  # (1 + 3) / 2


def test_a_week_is_repeated_by_hour_of_the_week_against_a_reference():
    rng = np.random.default_rng(7)
    tokens = rng.integers(2, 10**7, 400)  # 2 weeks and 64 h: slots covered twice or three times
    p, how = logdemand.hourly_profile(log_of(tokens))
    assert how == "week"
    np.testing.assert_allclose(p, reference(tokens, 0, 168), rtol=1e-12)


def test_a_clock_puts_monday_at_hour_zero_for_a_week():
    rng = np.random.default_rng(8)
    tokens = rng.integers(2, 10**6, 200)
    start = "2024-01-03T10:00:00"  # a Wednesday (2024-01-01 was a Monday), 10:00
    p, _ = logdemand.hourly_profile(log_of(tokens, start=start))
    np.testing.assert_allclose(p, reference(tokens, 2 * 24 + 10, 168), rtol=1e-12)
    assert logdemand.clock_offset(log_of(tokens, start=start), "week") == (2 * 24 + 10) * H


def test_a_clock_puts_midnight_at_hour_zero_for_a_day():
    rng = np.random.default_rng(9)
    tokens = rng.integers(2, 10**6, 50)
    p, _ = logdemand.hourly_profile(log_of(tokens, start="2023-11-16T13:00:00"))
    np.testing.assert_allclose(p, reference(tokens, 13, 24), rtol=1e-12)


def test_a_month_long_log_is_used_hour_by_hour():
    tokens = np.arange(2, 802) * 36
    p, how = logdemand.hourly_profile(log_of(tokens))  # 800 h: hours 730.. are not used
    assert how == "month"
    assert np.array_equal(p, tokens[:730] / H)


def test_edge_hours_are_divided_by_the_seconds_covered():
    # One token a minute, 60 tokens each, from 00:30 one day to 00:30 the next:
    # hours 00:00-01:00 are covered half on each day, so slot 0 spans 3,600 s.
    t = np.arange(0.0, 24 * H + 1, 60.0)
    log = RequestLog.of(t, np.ones(t.size), np.full(t.size, 60), start=np.datetime64("2024-01-01T00:30", "ns"))
    p, how = logdemand.hourly_profile(log)
    assert how == "day"
    # 30 arrivals in the first half hour, 31 in the last (the end arrival counts in it).
    assert p[0] == (30 + 31) * 60 / H and np.all(p[1:24] == 1.0)
    assert np.array_equal(p, p[np.arange(730) % 24])
    # The same log without its clock: 24 whole hours from the first arrival, the
    # end arrival counted in the last.
    bare = RequestLog.of(t, np.ones(t.size), np.full(t.size, 60))
    q, _ = logdemand.hourly_profile(bare)
    assert np.all(q[:23] == 1.0) and q[23] == 61 * 60 / H


def test_an_edge_hour_alone_in_its_slot_is_not_undercounted():
    # 25.5 h at a steady rate: hour 25 is half covered and shares slot 1 with hour 1.
    t = np.arange(0.0, 25.5 * H + 1, 60.0)
    p, _ = logdemand.hourly_profile(RequestLog.of(t, np.ones(t.size), np.full(t.size, 60)))
    assert p[1] == pytest.approx((3600 + 1800 + 60) / (1.5 * H), rel=1e-15)
    assert p[2] == 1.0


# -- the Demand -------------------------------------------------------------------------

def test_demand_holds_the_profile_as_730_float32_values():
    tokens = np.r_[np.arange(1, 25), np.arange(1, 25)] * 3600
    d = mc.Demand(shape="log", log=log_of(tokens))
    assert d.trace.dtype == np.float32 and d.level is None and d.scale is None
    assert np.array_equal(profile(d), np.arange(1, 25)[np.arange(730) % 24])
    leaves = jax.tree_util.tree_leaves(d)
    assert [x for x in leaves if np.ndim(x)] == [d.trace]
    assert d.peak() == (24.0, "demand.log")


def test_other_shapes_keep_their_leaves_and_default_level():
    assert jax.tree_util.tree_leaves(mc.Demand()) == [60000.0, 0.3, 14.0, 0.6, 4.0, 30000.0, 6.0]
    assert mc.Demand(shape="diurnal").level == 60000.0
    assert jax.tree_util.tree_structure(mc.Demand()) == jax.tree_util.tree_structure(mc.Demand(level=5.0))


def test_scale_multiplies_and_level_sets_the_mean():
    tokens = np.r_[np.arange(1, 25), np.arange(1, 25)] * 3600
    log = log_of(tokens)
    base = profile(mc.Demand(shape="log", log=log))
    scaled = mc.Demand(shape="log", log=log, scale=2.5)
    assert np.array_equal(profile(scaled), (base * 2.5).astype(np.float32))
    assert scaled.peak() == (60.0, "demand.log and demand.scale")
    levelled = profile(mc.Demand(shape="log", log=log, level=5000))
    assert levelled.mean() == pytest.approx(5000, rel=1e-6)
    np.testing.assert_allclose(levelled / base, 5000 / base.mean(), rtol=1e-6)


def _one_line(match, **fields):
    with pytest.raises(mc.ParamError, match=match) as err:
        mc.Demand(**fields)
    assert "\n" not in str(err.value)


def test_bad_inputs_are_one_line_naming_the_field():
    log = log_of(np.full(30, 3600))
    _one_line(r"^demand\.log=None: must be given", shape="log")
    _one_line(r"^demand\.log=.*only used with shape 'log'", log=log)
    _one_line(r"^demand\.log='x\.csv': must be a RequestLog", shape="log", log="x.csv")
    _one_line(r"^demand\.scale=2\.0: cannot be given with demand\.level", shape="log", log=log, scale=2, level=10)
    _one_line(r"^demand\.scale=-1\.0: must be a number", shape="log", log=log, scale=-1)
    _one_line(r"^demand\.scale=.*only used with shape 'log'", shape="flat", scale=2)
    _one_line(r"^demand\.columns=.*only used with shape 'log'", shape="diurnal", columns="a,b,c")
    _one_line(r"^demand\.columns=5: must be a str", shape="log", log=log, columns=5)
    _one_line(r"^demand\.log_sha256='beef': does not match", shape="log", log=log, log_sha256="beef")
    _one_line(r"^demand\.trace=.*the log's profile", shape="log", log=log, trace=np.full(730, 2.0))
    _one_line(r"^demand\.scale=1e\+37: makes hour 0's demand 1e\+39 tok/s, which float32 does not hold",
              shape="log", log=log_of(np.full(30, 360_000)), scale=1e37)
    _one_line(r"^demand\.level=-5", shape="log", log=log, level=-5)


# -- the busiest minute -----------------------------------------------------------------

def test_the_busiest_minute_against_its_hour():
    # Three whole hours of one request a minute (60 tokens each); hour 1 has a
    # burst of 10 requests in its minute 30, hour 2 one of 4 requests in minute 5.
    t = list(np.arange(0.0, 3 * H, 60.0))
    t += [H + 30 * 60 + 1 + i for i in range(9)] + [2 * H + 5 * 60 + 1 + i for i in range(3)]
    t += [3 * H + 10]  # past the last whole hour: not measured
    t = np.array(t)
    log = RequestLog.of(t, np.ones(t.size), np.full(t.size, 60))
    m = logdemand.minute_peak(log)
    ratios = [1.0, 600 * 60 / (60 * 69), 240 * 60 / (60 * 63)]
    assert m["hours"] == 3 and m["window_s"] == H
    assert m["median"] == pytest.approx(np.median(ratios), rel=1e-12)
    assert m["max"] == pytest.approx(max(ratios), rel=1e-12)
    with pytest.warns(UserWarning, match="less than a day"):
        assert mc.Demand(shape="log", log=log, scale=1).minute_peak() == pytest.approx(m)
    assert mc.Demand().minute_peak() is None


def test_a_log_shorter_than_an_hour_is_one_window():
    t = np.r_[np.arange(0.0, 1800.0, 60.0), 600.5, 600.7]  # 30 minutes; minute 10 holds 3 requests
    log = RequestLog.of(t, np.ones(t.size), np.full(t.size, 10))
    m = logdemand.minute_peak(log)
    mean_minute = 32 * 10 * 60 / log.span
    assert m["hours"] == 1 and m["window_s"] == log.span
    assert m["median"] == m["max"] == pytest.approx(30 / mean_minute, rel=1e-12)


# -- scenarios, plain data, the month ---------------------------------------------------

def day_scenario(level=20000.0):
    tokens = np.r_[np.arange(1, 25), np.arange(1, 25)] * 3600
    return BASE.replace({"demand": {"shape": "log", "log": log_of(tokens), "level": level}})


@pytest.mark.slow
def test_a_log_scenario_simulates():
    sc = day_scenario()
    x = mc.simulate(sc, 64, seed=0, keep_samples=True).samples
    for col in x.columns:
        assert np.all(np.isfinite(np.asarray(x[col], np.float64))), col
    assert np.allclose(x["demand_tokens"], float(profile(sc.demand).sum()) * 3600, rtol=1e-5)


def test_plain_data_names_the_log_and_replace_keeps_it():
    sc = day_scenario()
    data = sc.to_dict()["demand"]
    assert data["log"] == "<synthetic>" and data["log_sha256"] == sc.demand.log.sha256
    assert "trace" not in data and "scale" not in data and data["level"] == 20000.0
    kept = sc.replace({"demand.scale": 2.0})  # scale given alone replaces level
    assert kept.demand.log == sc.demand.log and kept.demand.level is None
    assert np.allclose(profile(kept.demand), 2.0 * np.arange(1, 25)[np.arange(730) % 24], rtol=1e-6)
    flat = sc.replace({"demand.shape": "flat"})
    assert flat.demand.log is None and flat.demand.trace is None and flat.demand.level == 20000.0
    assert "log" not in flat.to_dict()["demand"]


# -- files and the CLI ------------------------------------------------------------------

def write_log(path, days=2, clock=False):
    """One request a minute for ``days`` days (the last a minute before the end),
    answer tokens rising through each day: 10 in its hour 0 to 33 in hour 23."""
    t = np.arange(0.0, days * 24 * H, 60.0)
    answer = (10 + (t // H) % 24).astype(int)
    if clock:
        stamps = np.datetime64("2023-11-16T00:00:00") + (t * 1e6).astype("timedelta64[us]")
        rows = [f"{str(s).replace('T', ' ')}0,{100},{a}" for s, a in zip(stamps, answer)]
        path.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n" + "\n".join(rows) + "\n")
    else:
        rows = [f"{x},{100},{a}" for x, a in zip(t, answer)]
        path.write_text("ts,in,out\n" + "\n".join(rows) + "\n")
    return t, answer


def day_rate():
    """``write_log``'s rate by hour of the day (tok/s): its last hour holds 60
    requests over the 3,540 s the log covers of it."""
    rate = (10 + np.arange(24)) * 60 / H
    rate[23] = 33 * 120 / (H + H - 60)
    return rate


def test_a_scenario_file_reads_its_log_relative_to_itself(tmp_path):
    (tmp_path / "logs").mkdir()
    write_log(tmp_path / "logs" / "day.csv")
    (tmp_path / "s.toml").write_text('preset = "golden-idler"\n[demand]\nshape = "log"\nlog = "logs/day.csv"\n'
                                     'columns = "ts,in,out"\nscale = 100.0\n')
    sc = files.load_scenario(tmp_path / "s.toml")
    assert sc.demand.log.source == str(tmp_path / "logs" / "day.csv") and sc.demand.columns == "ts,in,out"
    assert np.allclose(profile(sc.demand), 100 * day_rate()[np.arange(730) % 24], rtol=1e-6)
    # Its plain data, written as TOML, reads back to the same scenario.
    (tmp_path / "again.toml").write_text(files.to_toml(sc.to_dict()))
    again = files.load_scenario(tmp_path / "again.toml")
    assert again.to_dict() == sc.to_dict() and np.array_equal(again.demand.trace, sc.demand.trace)


def test_a_clocked_log_file(tmp_path):
    write_log(tmp_path / "az.csv", clock=True)
    sc = files.scenario_from_data({"preset": "golden-idler", "demand": {"shape": "log", "log": "az.csv"}}, tmp_path)
    assert sc.demand.log.start == np.datetime64("2023-11-16T00:00:00", "ns")
    assert np.allclose(profile(sc.demand), day_rate()[np.arange(730) % 24], rtol=1e-6)


def test_file_errors_are_one_line(tmp_path):
    write_log(tmp_path / "day.csv")
    cases = [
        ({"log": "day.csv", "columns": "ts,in,out"}, r"^demand\.log='day\.csv': is only used with shape = 'log'"),
        ({"shape": "log", "columns": "ts,in,out"}, r"^demand\.columns=.*give both"),
        ({"shape": "log", "log": "day.csv", "columns": 3}, r"^demand\.columns=3"),
        ({"shape": "log", "log": "day.csv", "columns": "ts,in,out", "log_sha256": "0" * 64},
         r"^demand\.log_sha256=.*does not match"),
        ({"shape": "log", "log": "day.csv", "columns": "ts,in,out", "scale": 2, "level": 3},
         r"^demand\.scale=2\.0: cannot be given with demand\.level"),
    ]
    for table, match in cases:
        with pytest.raises(mc.ParamError, match=match) as err:
            files.scenario_from_data({"preset": "golden-idler", "demand": table}, tmp_path)
        assert "\n" not in str(err.value)
    with pytest.raises(FileNotFoundError):
        files.scenario_from_data({"preset": "golden-idler", "demand": {"shape": "log", "log": "no.csv"}}, tmp_path)


@pytest.mark.slow
def test_mc_show_and_mc_run_print_the_log_line(tmp_path, capsys):
    write_log(tmp_path / "day.csv")
    path = tmp_path / "s.toml"
    path.write_text('preset = "golden-idler"\n[demand]\nshape = "log"\nlog = "day.csv"\ncolumns = "ts,in,out"\n'
                    'level = 20000.0\n')
    assert main(["show", str(path)]) == 0
    text = capsys.readouterr().out
    data = tomllib.loads(text)  # still TOML: the line is a comment
    assert data["demand"]["log"] == str(tmp_path / "day.csv") and "trace" not in data["demand"]
    line = next(x for x in text.splitlines() if x.startswith("# demand from log"))
    assert text.index(line) < text.index("[demand]")
    assert line == (f"# demand from log {tmp_path / 'day.csv'} (2,880 requests over 48 h, repeated by hour of the day "
                    "from its first arrival, scaled to mean 20,000 tok/s): hourly mean 20,000 tok/s, peak 31,078 "
                    "tok/s; busiest minute 1x its hour's mean (median), 1x (max) over 47 whole hours")
    (tmp_path / "shown.toml").write_text(text)
    assert files.load_scenario(tmp_path / "shown.toml").to_dict() == files.load_scenario(path).to_dict()

    assert main(["run", str(path), "--n", "64", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert line[2:] in out.splitlines()
    assert main(["run", str(path), "--n", "64", "--json", "--quiet"]) == 0
    got = json.loads(capsys.readouterr().out)["demand_log"]
    assert got["tiling"] == "day" and got["rows"] == 2880 and got["mean"] == pytest.approx(20000, rel=1e-6)


def test_the_cli_says_when_a_short_log_is_used_as_its_mean(tmp_path, capsys):
    t = np.arange(0.0, 2 * H, 60.0)
    (tmp_path / "short.csv").write_text("ts,in,out\n" + "\n".join(f"{x},5,60" for x in t) + "\n")
    path = tmp_path / "s.toml"
    path.write_text('preset = "golden-idler"\n[demand]\nshape = "log"\nlog = "short.csv"\ncolumns = "ts,in,out"\n'
                    'level = 20000.0\n')
    assert main(["show", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.err == (f"mc show: warning: demand.log: {tmp_path / 'short.csv'} spans 1.98 h, less than a day, "
                            "so its mean (1.0084 tok/s of answer tokens) is used for every hour of the month\n")
    assert "(120 requests over 1.98 h, used as its mean, scaled to mean 20,000 tok/s)" in captured.out
    assert "busiest minute 1x its hour's mean (median), 1x (max) over 1 whole hour\n" in captured.out


def test_the_shipped_example_log_if_present(capsys):
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "traces" / "azure-conv-2023.csv"
    if not path.exists():
        pytest.skip("examples/traces/azure-conv-2023.csv is not shipped yet")
    log = files.read_request_log(path)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        d = mc.Demand(shape="log", log=log)
    assert any("less than a day" in str(w.message) for w in seen)
    assert np.all(d.trace == d.trace[0]) and d.minute_peak()["hours"] == 1
