"""What ``mc fit`` reads: tidy rows with times in hours or as datetimes, the file's
own column names (``--columns``), a rated column, and a Prometheus ``query_range``
export of a rate or of a counter (with a restart); each read back to the same grid as
the tidy hours form. Every input no fit can use is one line on stderr and exit 2."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mc.cli import main
from mc import telemetry
from mc.telemetry import series

CARDS, N, STEP = 4, 48, 0.5  # 4 cards, a day of 30-minute samples
CLASSES = np.array(["a", "a", "b", "b"])
EPOCH = 1717200000.0  # 2024-06-01T00:00:00Z
GAPS = {(2, 10), (3, 30)}  # (card, sample) missing: card 2's as "NaN" in an export, card 3's left out
FAST = ["--sims", "0", "--bootstrap", "0", "--quiet"]


def grid() -> np.ndarray:
    rng = np.random.default_rng(0)
    q = rng.normal(1.0, 0.05, CARDS)
    y = np.maximum(0.0, 7000.0 * q[:, None] * (1 + 0.3 * rng.standard_normal((CARDS, N))))
    for c, j in GAPS:
        y[c, j] = np.nan
    return y


def tidy(y: np.ndarray | None = None) -> pd.DataFrame:
    """The rows in hours (from 0), card by card, the missing samples left out."""
    y = grid() if y is None else y
    f = pd.DataFrame({"card": np.repeat(np.arange(len(y)), y.shape[1]), "time": np.tile(np.arange(y.shape[1]) * STEP,
                      len(y)), "rate": y.ravel(), "class": np.repeat(CLASSES[:len(y)], y.shape[1])})
    return f[np.isfinite(f.rate)].reset_index(drop=True)


def same(got: series.Series, want: series.Series, t0: float = 0.0) -> None:
    assert list(got.cards) == list(want.cards) and list(got.classes) == list(want.classes)
    assert got.delta == pytest.approx(want.delta, abs=1e-9) and got.t0 == pytest.approx(t0, abs=1e-9)
    assert got.y.shape == want.y.shape and np.allclose(got.y, want.y, rtol=1e-9, equal_nan=True)


@pytest.fixture(scope="module")
def want() -> series.Series:
    s = series.from_frame(tidy())
    assert s.y.shape == (CARDS, N) and np.isnan(s.y).sum() == len(GAPS) and s.t0 == 0.0
    return s


@pytest.mark.parametrize("form", ["utc", "naive", "paris-over-dst", "iso-strings", "csv", "parquet"])
def test_datetimes_are_hours_since_the_earliest_sample(form, want, tmp_path):
    f = tidy()
    # 2024-03-31: Paris moves its clocks an hour forward at 01:00 UTC, inside this day of samples.
    start = pd.Timestamp("2024-03-30T20:00:00Z" if form == "paris-over-dst" else "2024-06-01T00:00:00Z")
    stamps = start + pd.to_timedelta(f.time, unit="h")
    f["time"] = {"utc": stamps, "naive": stamps.dt.tz_localize(None), "paris-over-dst": stamps.dt.tz_convert(
        "Europe/Paris"), "iso-strings": stamps.dt.tz_convert("Europe/Paris").astype(str)}.get(form, stamps)
    if form == "csv":
        f.to_csv(tmp_path / "t.csv", index=False)
        got = series.read(tmp_path / "t.csv")
    elif form == "parquet":
        f.to_parquet(tmp_path / "t.parquet")
        got = series.read(tmp_path / "t.parquet")
    else:
        got = series.from_frame(f)
    same(got, want)


def test_columns_name_the_files_own_columns(want, tmp_path, capsys):
    f = tidy().rename(columns={"card": "gpu", "time": "ts", "rate": "tok_s", "class": "pool"})
    f["rate"] = 1.0  # a column named as a key that --columns maps elsewhere is not read
    f.to_csv(tmp_path / "t.csv", index=False)
    cols = {"card": "gpu", "time": "ts", "rate": "tok_s", "class": "pool"}
    same(series.read(tmp_path / "t.csv", columns=cols), want)
    assert main(["fit", str(tmp_path / "t.csv"), "--columns", "card=gpu,time=ts,rate=tok_s,class=pool", *FAST,
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cards"] == CARDS


def test_a_rated_column_rates_its_class_unless_rated_names_it(want, tmp_path, capsys):
    f = tidy()
    f["rated"] = np.where(f["class"] == "a", 7000.0, 3150.0)
    f.loc[f.index[-3:], "rated"] = np.nan  # blank: not given on that row
    path = tmp_path / "t.csv"
    f.to_csv(path, index=False)
    s = series.read(path)
    same(s, want)
    assert s.rated == {"a": 7000.0, "b": 3150.0} and s.take(np.array([0, 3])).rated == s.rated
    assert series.from_frame(f.assign(rated=np.where(f["class"] == "a", 7000.0, np.nan))).rated == {"a": 7000.0}
    assert main(["fit", str(path), *FAST, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rated"] == {"a": 7000.0, "b": 3150.0} and doc["rated_given"] == doc["rated"]
    assert main(["fit", str(path), "--rated", "a=6000", *FAST, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rated"] == {"a": 6000.0, "b": 3150.0}
    quick = {"bootstrap": 0, "sims": 0}  # the library reads the column as the CLI does
    assert telemetry.fit(s, **quick)["rated_given"] == {"a": 7000.0, "b": 3150.0}
    assert telemetry.fit(s, {"a": 6000.0}, **quick)["rated"] == {"a": 6000.0, "b": 3150.0}


def export(y: np.ndarray, hours: np.ndarray, **extra) -> dict:
    """A ``query_range`` answer: card ``c`` as series ``{instance="gpu-c:9400", pool=...}``;
    a NaN of card 2 written "NaN", of another card left out (as Prometheus leaves it)."""
    result = []
    for c in range(len(y)):
        values = [[EPOCH + 3600.0 * t, "NaN" if np.isnan(x) else repr(float(x))]
                  for t, x in zip(hours, y[c]) if c == 2 or not np.isnan(x)]
        result.append({"metric": {"__name__": "tokens", "instance": f"gpu-{c}:9400", "pool": str(CLASSES[c]),
                                  "job": "dcgm", **extra}, "values": values})
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}


def named(s: series.Series) -> series.Series:
    """``s`` with its cards named as ``export`` names them."""
    return series.Series(np.array([f"gpu-{c}:9400" for c in s.cards]), s.classes, s.y, s.delta, s.t0)


def test_a_prometheus_export_of_a_rate(want, tmp_path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps(export(grid(), np.arange(N) * STEP)))
    same(series.read(path, columns={"class": "pool"}), named(want))
    doc = export(grid(), np.arange(N) * STEP)
    for c, s in enumerate(doc["data"]["result"]):
        s["metric"]["uuid"] = f"GPU-{c}"
    path.write_text(json.dumps(doc))
    got = series.read(path, columns={"card": "uuid"})  # the card's id from another label; no class
    assert list(got.cards) == [f"GPU-{c}" for c in range(CARDS)] and set(got.classes) == {""}
    assert np.allclose(got.y, want.y, rtol=1e-9, equal_nan=True)


def test_a_prometheus_export_of_a_counter_with_a_restart(want, tmp_path, capsys):
    """Counts of tokens one reading before the rates' first sample; card 1 restarts
    (counts from 0) at sample 20; a missing reading (card 2's "NaN", card 3's left out)
    leaves out the rate after it too (a difference over two steps is not a sample)."""
    y = grid()
    seconds = STEP * 3600
    counts = np.full((CARDS, N + 1), np.nan)
    for c in range(CARDS):
        total = 1e9 + 1e6 * c
        counts[c, 0] = total
        for j in range(N):
            if np.isnan(y[c, j]):
                total += 7000.0 * seconds  # tokens served, but no reading at this step
                continue
            total = (0.0 if (c, j) == (1, 20) else total) + y[c, j] * seconds
            counts[c, j + 1] = total
    assert counts[1, 21] < counts[1, 20]  # the restart is a drop
    path = tmp_path / "q.json"
    path.write_text(json.dumps(export(counts, np.arange(-1, N) * STEP)))
    expect = y.copy()
    for c, j in GAPS:
        expect[c, j + 1] = np.nan
    w = named(want)
    same(series.read(path, columns={"class": "pool"}, counter=True),
         series.Series(w.cards, w.classes, expect, w.delta, w.t0), t0=STEP)
    assert main(["fit", str(path), "--counter", "--columns", "class=pool", *FAST, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cards"] == CARDS


def _rows(f: pd.DataFrame):
    return lambda p: f.to_csv(p, index=False)


def _doc(change):
    def write(p):
        doc = export(grid()[:, :8], np.arange(8) * STEP)
        change(doc)
        p.write_text(json.dumps(doc))
    return write


def _set(path: str, value):
    def change(doc):
        *head, last = path.split("/")
        at = doc
        for k in head:
            at = at[int(k) if k.isdigit() else k]
        at[int(last) if last.isdigit() else last] = value
    return change


BAD = {  # name: (file name, write, extra flags, start of the error after "mc fit: error: ", a word it holds)
    "empty file": ("t.csv", lambda p: p.write_bytes(b""), [], "file=", "empty"),
    "header only": ("t.csv", lambda p: p.write_text("card,time,rate\n"), [], "file=", "no rows"),
    "missing column": ("t.csv", _rows(tidy().drop(columns="rate")), [], "file=", "missing rate"),
    "one card": ("t.csv", _rows(tidy().query("card == 1")), [], "file.card=1", "only card"),
    "a card with one sample": ("t.csv", _rows(pd.concat([tidy(), pd.DataFrame(
        {"card": [9], "time": [3.0], "rate": [7000.0], "class": ["a"]})])), [], "file.card=9", "one sample"),
    "back in time": ("t.csv", _rows(tidy().iloc[::-1]), [], "file.time=", "goes back in time"),
    "duplicate time": ("t.csv", _rows(pd.concat([tidy().iloc[:1], tidy()])), [], "file.time=0.0", "two samples"),
    "negative rate": ("t.csv", _rows(tidy().assign(rate=lambda f: np.where(f.index == 5, -1.0, f.rate))), [],
                      "file.rate=-1.0", "row 5"),
    "NaN rate": ("t.csv", lambda p: p.write_text("card,time,rate\n0,0,1\n0,1,\n1,0,2\n1,1,3\n"), [], "file.rate=nan",
                 "row 1"),
    "rates all equal": ("t.csv", _rows(tidy().assign(rate=7000.0)), [], "file.rate=7000.0", "every sample"),
    "each card constant": ("t.csv", _rows(tidy().assign(rate=lambda f: 1000.0 + f.card)), [], "file.rate=1000.0",
                           "each other card"),
    "coarser than the month": ("t.csv", _rows(tidy(grid()[:2, :3]).assign(time=lambda f: f.time * 2000)), [],
                               "file.time=1000.0", "month"),
    "a time neither hours nor a date": ("t.csv", _rows(tidy().assign(time=lambda f: np.where(
        f.index == 4, "soon", f.time.astype(str)))), [], "file.time='soon'", "datetime"),
    "rated disagrees in a class": ("t.csv", _rows(tidy().assign(rated=np.where(tidy().index == 7, 6000.0, 7000.0))),
                                   [], "file.rated=7000.0", "class a's rows give both 6000 and 7000"),
    "rated not positive": ("t.csv", _rows(tidy().assign(rated=0.0)), [], "file.rated=0.0", "> 0"),
    "columns: unknown key": ("t.csv", _rows(tidy()), ["--columns", "gpu=card"], "--columns='gpu=card'", "one of"),
    "columns: no such column": ("t.csv", _rows(tidy()), ["--columns", "rate=tok_s"], "file=", "rate (named tok_s)"),
    "columns: no such class": ("t.csv", _rows(tidy()), ["--columns", "class=pool"], "columns.class='pool'", "columns"),
    "counter on a table": ("t.csv", _rows(tidy()), ["--counter"], "--counter=True", ".json"),
    "not JSON": ("q.json", lambda p: p.write_text("card,time,rate\n"), [], "file=", "not JSON"),
    "status error": ("q.json", lambda p: p.write_text('{"status": "error", "error": "bad query"}'), [],
                     "file.status='error'", "bad query"),
    "a vector": ("q.json", _doc(_set("data/resultType", "vector")), [], "file.data.resultType='vector'", "matrix"),
    "no series": ("q.json", _doc(_set("data/result", [])), [], "file.data.result=[]", "no series"),
    "a word for a value": ("q.json", _doc(_set("data/result/1/values/3/1", "n/a")), [],
                           "file.data.result[1].values[3]='n/a'", 'instance="gpu-1:9400"'),
    "an infinite rate": ("q.json", _doc(_set("data/result/0/values/2/1", "+Inf")), [],
                         "file.data.result[0].values[2]='+Inf'", "finite"),
    "a negative rate": ("q.json", _doc(_set("data/result/0/values/2/1", "-3")), [],
                        "file.data.result[0].values[2]='-3'", ">= 0"),
    "a series of NaN only": ("q.json", _doc(lambda d: d["data"]["result"][1].update(
        values=[[v[0], "NaN"] for v in d["data"]["result"][1]["values"]])), [], "file.data.result[1].values='8 x NaN'",
        "no number"),
    "times back": ("q.json", _doc(_set("data/result/0/values/2/0", EPOCH)), [], "file.data.result[0].values[2]=",
                   "forward"),
    "no card label": ("q.json", _doc(lambda d: d["data"]["result"][0]["metric"].pop("instance")), [],
                      "file.data.result[0].metric=", "no label instance"),
    "no class label": ("q.json", _doc(lambda d: d["data"]["result"][2]["metric"].pop("pool")), ["--columns",
                       "class=pool"], "file.data.result[2].metric=", "no label pool"),
    "two series of a card": ("q.json", _doc(_set("data/result/1/metric/instance", "gpu-0:9400")), [],
                             "file.data.result[1].metric=", "as series 0 does"),
    "a column of an export": ("q.json", _doc(lambda d: None), ["--columns", "rate=tok_s"], "columns.rate='tok_s'",
                              "labels"),
    "an empty card id": ("t.csv", _rows(tidy().assign(card=lambda f: np.where(f.card == 1, "", f.card.astype(str)))),
                         [], "file.card=''", "must not be empty"),
    "a rate float32 cannot hold": ("t.csv", _rows(tidy().assign(rate=lambda f: f.rate * 1e296)), [], "file.rate=",
                                   "float32"),
    "a rated rate float32 cannot hold": ("t.csv", _rows(tidy().assign(rated=1e300)), [], "file.rated=1e+300",
                                         "float32"),
    "one series": ("q.json", _doc(lambda d: d["data"]["result"].__delitem__(slice(1, None))), [],
                   "file.card='gpu-0:9400'", "only card"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_is_one_line_exit_2(name, tmp_path, capsys):
    file, write, flags, start, word = BAD[name]
    path = tmp_path / file
    write(path)
    assert main(["fit", str(path), *flags, *FAST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"mc fit: error: {start}") and word in err, err


# -- the fitted scenario's clip and --quiet -------------------------------------------------

def test_out_moves_the_clip_to_hold_the_fitted_lottery(tmp_path, capsys):
    """Cards at 1.78x their rated rate: the base's clip (hi 1.5) would cut every card
    to 1.5 without a word; --out moves it to the fitted mean + 4 sd and says so. A
    lottery inside the base's clip leaves it where it is."""
    from mc import files

    for scale, moved in ((1.0, False), (1.78, True)):
        path, out = tmp_path / f"t{scale}.csv", tmp_path / f"s{scale}.toml"
        tidy().assign(rate=lambda f: f.rate * scale).to_csv(path, index=False)
        assert main(["fit", str(path), "--rated", "7000", "--out", str(out), *FAST]) == 0
        said = capsys.readouterr().out
        lot = files.load_scenario(out).lottery
        if moved:
            assert lot.mean == pytest.approx(1.78, abs=0.1) and lot.hi == pytest.approx(lot.mean + 4 * lot.sd, rel=1e-6)
            assert "note: lottery.hi moved from 1.5 to" in said and "cut every card beyond it" in said
        else:
            assert (lot.lo, lot.hi) == (0.5, 1.5) and "moved" not in said


@pytest.mark.filterwarnings("ignore:demand.log")  # the base rebuilt with the fit: the same warning again
def test_quiet_is_nothing_on_stderr_but_errors(tmp_path, capsys):
    """A base whose request log is too short to tile warns on stderr; --quiet says nothing."""
    t = np.arange(0.0, 2 * 3600.0, 60.0)
    (tmp_path / "short.csv").write_text("ts,in,out\n" + "\n".join(f"{x},5,60" for x in t) + "\n")
    base = tmp_path / "base.toml"
    base.write_text('preset = "golden-idler"\n[demand]\nshape = "log"\nlog = "short.csv"\ncolumns = "ts,in,out"\n'
                    'level = 20000.0\n')
    tidy().to_csv(tmp_path / "t.csv", index=False)
    argv = ["fit", str(tmp_path / "t.csv"), "--out", str(tmp_path / "s.toml"), "--base", str(base), "--sims", "0",
            "--bootstrap", "0"]
    assert main(argv) == 0
    assert "mc fit: warning: demand.log:" in capsys.readouterr().err
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
