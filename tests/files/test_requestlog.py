"""Request logs in (SPEC §7.1): each layout, the shipped example, named columns,
sorting, and every bad input as one line naming the file, the line and the value."""

import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mc import ParamError
from mc.files import LOG_FORMATS, read_request_log
from mc.files.paths import MAX_INPUT_BYTES, input_file
from mc.serving.traffic import RequestLog

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "traces" / "azure-conv-2023.csv"
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def one_line_error(path, *names, **kw) -> str:
    """The message of the ParamError reading ``path`` raises: one line, naming the
    file and each of ``names``."""
    with pytest.raises(ParamError) as info:
        read_request_log(path, **kw)
    msg = str(info.value)
    assert "\n" not in msg and "\r" not in msg, msg
    assert str(path) in msg, msg
    for name in names:
        assert name in msg, (name, msg)
    return msg


# -- the layouts ---------------------------------------------------------------------------

def test_azure_csv(tmp_path):
    p = write(tmp_path, "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
              "2023-11-16 18:15:46.6805900,374,44\n"
              "2023-11-16 18:15:50.9951690,396,0\n"
              "2023-11-16 18:15:46.6805901,10,5\n")
    log = read_request_log(p)
    assert isinstance(log, RequestLog) and log.rows == 3 and log.source == str(p)
    assert log.start == np.datetime64("2023-11-16T18:15:46.680590000", "ns")
    np.testing.assert_allclose(log.time, [0.0, 1e-7, 4.314579], rtol=0, atol=1e-12)
    assert log.prompt.tolist() == [374, 10, 396] and log.answer.tolist() == [44, 5, 1]  # 0 tokens count as 1


def test_azure_timestamps_without_fraction_or_in_iso(tmp_path):
    p = write(tmp_path, "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
              "2023-11-16 18:15:46,1,1\n2023-11-16T18:15:47.5,2,2\n2023-11-16 18:15:48.1234567,3,3\n")
    log = read_request_log(p)
    np.testing.assert_allclose(log.time, [0, 1.5, 2.1234567], atol=1e-9)
    assert log.start == np.datetime64("2023-11-16T18:15:46", "ns")


def test_burstgpt_csv(tmp_path):
    p = write(tmp_path, "b.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
              "5,ChatGPT,472,18,490,Conversation log\n"
              "45,ChatGPT,1087,0,1087,Conversation log\n"
              "118.5,GPT-4,417,276,693,Conversation log\n")
    log = read_request_log(p)
    assert log.start is None
    assert log.time.tolist() == [0.0, 40.0, 113.5]
    assert log.prompt.tolist() == [472, 1087, 417] and log.answer.tolist() == [18, 1, 276]


def test_mooncake_jsonl(tmp_path):
    rows = [{"timestamp": 0, "input_length": 6755, "output_length": 500, "hash_ids": [46, 47]},
            {"timestamp": 27482, "input_length": 6402, "output_length": 0, "hash_ids": []},
            {"timestamp": 30535, "input_length": 6762, "output_length": 12, "hash_ids": [1]}]
    p = write(tmp_path, "m.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n\n")
    log = read_request_log(p)
    assert log.start is None
    np.testing.assert_allclose(log.time, [0, 27.482, 30.535])  # ms -> s
    assert log.prompt.tolist() == [6755, 6402, 6762] and log.answer.tolist() == [500, 1, 12]


def test_layouts_are_listed():
    assert [f.name for f in LOG_FORMATS] == ["azure", "burstgpt", "mooncake"]
    assert LOG_FORMATS[0].columns == ("TIMESTAMP", "ContextTokens", "GeneratedTokens")


def test_the_shipped_example():
    log = read_request_log(EXAMPLE)
    assert log.rows == 19_366
    assert log.start == np.datetime64("2023-11-16T18:15:46.680590", "ns")
    assert 3400 < log.span <= 3600  # about an hour
    assert log.rate == pytest.approx(19_365 / log.span) and 5.4 < log.rate < 5.6
    assert np.all(np.diff(log.time) >= 0) and log.prompt.min() >= 0 and log.answer.min() >= 1
    assert (EXAMPLE.parent / "README.md").read_text().count("CC-BY 4.0") == 1


# -- named columns -------------------------------------------------------------------------

@pytest.mark.parametrize("columns", ["t,p,a", " t , p , a ", ("t", "p", "a"), ["t", "p", "a"]])
def test_columns_csv_seconds(tmp_path, columns):
    p = write(tmp_path, "x.csv", "a,t,p,extra\n3,0.5,10,x\n4,2.5,20,y\n")
    log = read_request_log(p, columns=columns)
    assert log.start is None and log.time.tolist() == [0.0, 2.0]
    assert log.prompt.tolist() == [10, 20] and log.answer.tolist() == [3, 4]


def test_columns_csv_datetimes_with_zones(tmp_path):
    p = write(tmp_path, "x.csv", "when,in,out\n2024-01-01T10:00:00+01:00,1,1\n2024-01-01T09:00:30Z,2,2\n")
    log = read_request_log(p, columns="when,in,out")
    assert log.start == np.datetime64("2024-01-01T09:00:00", "ns") and log.time.tolist() == [0.0, 30.0]


def test_columns_parquet_datetime_and_seconds(tmp_path):
    t = pd.to_datetime(["2024-01-01 00:00:10.5", "2024-01-01 00:00:00", "2024-01-01 00:01:00"], format="ISO8601")
    frame = pd.DataFrame({"at": t, "secs": [10.5, 0.0, 60.0], "p": [1, 2, 3], "a": [4, 5, 6]})
    p = tmp_path / "x.parquet"
    frame.to_parquet(p)
    log = read_request_log(p, columns=("at", "p", "a"))
    assert log.start == np.datetime64("2024-01-01T00:00:00", "ns")
    assert log.time.tolist() == [0.0, 10.5, 60.0] and log.prompt.tolist() == [2, 1, 3]
    log = read_request_log(p, columns="secs,p,a")
    assert log.start is None and log.time.tolist() == [0.0, 10.5, 60.0] and log.answer.tolist() == [5, 4, 6]
    tz = frame.assign(at=frame["at"].dt.tz_localize("Europe/Paris"))
    tz.to_parquet(p)
    assert read_request_log(p, columns="at,p,a").start == np.datetime64("2023-12-31T23:00:00", "ns")


def test_known_layout_in_parquet_and_columns_override(tmp_path):
    p = tmp_path / "az.parquet"
    pd.DataFrame({"TIMESTAMP": ["2023-11-16 18:15:46.6805900", "2023-11-16 18:15:47.6805900"],
                  "ContextTokens": [1, 2], "GeneratedTokens": [3, 4], "n": [7, 8]}).to_parquet(p)
    assert read_request_log(p).time.tolist() == [0.0, 1.0]
    assert read_request_log(p, columns="n,ContextTokens,GeneratedTokens").time.tolist() == [0.0, 1.0]
    q = write(tmp_path, "m.jsonl", '{"timestamp": 0, "input_length": 1, "output_length": 2}\n'
              '{"timestamp": 1500, "input_length": 1, "output_length": 2}\n')
    assert read_request_log(q, columns="timestamp,input_length,output_length").time.tolist() == [0.0, 1.5]
    assert read_request_log(q, columns="timestamp,output_length,input_length").time.tolist() == [0.0, 1500.0]


# -- order ---------------------------------------------------------------------------------

def test_unsorted_rows_are_sorted_stably_with_duplicates_kept(tmp_path):
    p = write(tmp_path, "b.csv", "Timestamp,Request tokens,Response tokens\n"
              "3,30,1\n1,10,1\n3,31,1\n2,20,1\n1,11,1\n")
    log = read_request_log(p)
    assert log.rows == 5 and log.time.tolist() == [0, 0, 1, 2, 2]
    assert log.prompt.tolist() == [10, 11, 20, 30, 31]


# -- bad input: one line, naming file, line and value -----------------------------------------

AZ = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
GOOD = "2023-11-16 18:15:46.6805900,1,1\n"


@pytest.mark.parametrize("row, names", [
    ("2023-11-16 18:15:47.0,-3,1", ["line 3", "ContextTokens=-3", "whole number"]),
    ("2023-11-16 18:15:47.0,,1", ["line 3", "ContextTokens=''"]),
    ("2023-11-16 18:15:47.0,1,abc", ["line 3", "GeneratedTokens='abc'"]),
    ("2023-11-16 18:15:47.0,1,2.5", ["line 3", "GeneratedTokens=2.5"]),
    ("2023-11-16 18:15:47.0,1,inf", ["line 3", "GeneratedTokens=inf"]),
    ("2023-11-16 18:15:47.0,nan,1", ["line 3", "ContextTokens='nan'"]),
    ("2023-11-16 18:15:47.0,1,3000000000", ["line 3", "GeneratedTokens=3000000000"]),
    ("not a time,1,1", ["line 3", "TIMESTAMP='not a time'", "date-time"]),
    ("2023-13-45 18:15:47.0,1,1", ["line 3", "TIMESTAMP='2023-13-45 18:15:47.0'"]),
    (",1,1", ["line 3", "TIMESTAMP=''"]),
])
def test_bad_azure_value(tmp_path, row, names):
    p = write(tmp_path, "log.csv", AZ + GOOD + row + "\n" + GOOD)
    one_line_error(p, *names)


def test_bad_value_on_a_later_line_after_a_blank_one(tmp_path):
    rows = [f"{i},{i},1" for i in range(30)]
    rows[15] = "15,-3,1"
    p = write(tmp_path, "log.csv", "Timestamp,Request tokens,Response tokens\n" + "\n".join(rows) + "\n")
    msg = one_line_error(p, "line 17 Request tokens=-3")
    assert msg.startswith(f"{p}: line 17 Request tokens=-3: must be")
    q = write(tmp_path, "blank.csv", "Timestamp,Request tokens,Response tokens\n1,1,1\n\n2,2,2\n")
    one_line_error(q, "line 3", "Timestamp=''")
    r = write(tmp_path, "trailing.csv", "Timestamp,Request tokens,Response tokens\n1,1,1\n2,2,2\n\n\n")
    assert read_request_log(r).rows == 2


@pytest.mark.parametrize("row, names", [
    ("-1,1,1", ["line 3", "Timestamp=-1", "seconds"]),
    ("nan,1,1", ["line 3", "Timestamp='nan'"]),
    ("1e13,1,1", ["line 3", "Timestamp=10000000000000"]),
    ("true,1,1", ["line 3", "Timestamp='true'"]),
])
def test_bad_seconds(tmp_path, row, names):
    p = write(tmp_path, "log.csv", "Timestamp,Request tokens,Response tokens\n0,1,1\n" + row + "\n2,1,1\n")
    one_line_error(p, *names)


@pytest.mark.parametrize("line, names", [
    ('{"timestamp": -5, "input_length": 1, "output_length": 1}', ["line 3", "timestamp=-5", "milliseconds"]),
    ('{"timestamp": 5, "output_length": 1}', ["line 3", "input_length=null"]),
    ('{"timestamp": 5, "input_length": null, "output_length": 1}', ["line 3", "input_length=null"]),
    ('{"timestamp": 5, "input_length": "7", "output_length": 1}', ["line 3", "input_length='7'", "number"]),
    ('{"timestamp": 5, "input_length": true, "output_length": 1}', ["line 3", "input_length=True"]),
    ('{"timestamp": 5, "input_length": 1.5, "output_length": 1}', ["line 3", "input_length=1.5"]),
    ('{"timestamp": 5, "input_length": NaN, "output_length": 1}', ["line 3", "input_length=nan"]),
    ('{"timestamp": 5,, "input_length": 1, "output_length": 1}', ["line 3", "not valid JSON"]),
    ('[5, 1, 1]', ["line 3", "JSON object"]),
])
def test_bad_jsonl(tmp_path, line, names):
    good = '{"timestamp": 0, "input_length": 1, "output_length": 1}\n'
    p = write(tmp_path, "log.jsonl", good + "\n" + line + "\n" + good)  # line 2 is blank
    one_line_error(p, *names)


def test_bad_parquet_value_names_the_row(tmp_path):
    p = tmp_path / "log.parquet"
    pd.DataFrame({"t": [0.0, 1.0, np.nan, 3.0], "p": [1, 2, 3, 4], "a": [1, 1, 1, 1]}).to_parquet(p)
    one_line_error(p, "row 3 t=null", columns="t,p,a")
    pd.DataFrame({"t": [0.0, 1.0, 2.0], "p": [1, -2, 3], "a": [1, 1, 1]}).to_parquet(p)
    one_line_error(p, "row 2 p=-2", columns="t,p,a")
    pd.DataFrame({"t": [0.0, 1.0, 2.0], "p": [True, False, True], "a": [1, 1, 1]}).to_parquet(p)
    one_line_error(p, "row 1 p=true", columns="t,p,a")


@pytest.mark.parametrize("text, names", [
    ("", ["empty"]),
    ("  \n\n", ["empty"]),
    (AZ, ["rows=0"]),
    (AZ + GOOD, ["rows=1", "at least 2 rows"]),
    (AZ + GOOD + GOOD, ["span", "positive"]),
    ("a,b,c\n1,2,3\n4,5,6\n", ["header='a,b,c'", "TIMESTAMP,ContextTokens,GeneratedTokens",
                               "Request tokens", "input_length", "columns="]),
    ('TIMESTAMP,ContextTokens,GeneratedTokens\n"2023-11-16,1,1\n', ["CSV"]),
])
def test_bad_files(tmp_path, text, names):
    one_line_error(write(tmp_path, "log.csv", text), *names)


def test_unknown_column_and_bad_columns_argument(tmp_path):
    p = write(tmp_path, "log.csv", "a,b,c\n1,2,3\n4,5,6\n")
    one_line_error(p, "columns=", "'x'", "a,b,c", columns="a,b,x")
    for bad in ("a,b", "a,b,c,d", "a,,c", "a,a,b", ("a", "b")):
        with pytest.raises(ParamError) as info:
            read_request_log(p, columns=bad)
        assert "\n" not in str(info.value) and str(info.value).startswith("columns=")
    for bad in (5, {"a": 1}, ("a", 1, "c")):
        with pytest.raises(TypeError, match="columns"):
            read_request_log(p, columns=bad)


def test_not_utf8_names_the_line(tmp_path):
    p = tmp_path / "log.csv"
    p.write_bytes(b"Timestamp,Request tokens,Response tokens\n0,1,1\n1,1,1\n2,1,1 caf\xe9\n")
    one_line_error(p, "line 4", "UTF-8")
    q = tmp_path / "log.jsonl"
    q.write_bytes(b'{"timestamp": 0, "input_length": 1, "output_length": 1}\n'
                  b'{"timestamp": 1, "input_length": 1, "output_length": 1, "x": "\xff"}\n')
    one_line_error(q, "line 2", "UTF-8")


def test_missing_folder_unreadable_and_large_files(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_request_log(tmp_path / "nope.csv")
    one_line_error(tmp_path, "folder")
    p = tmp_path / "big.csv"
    with p.open("wb") as fh:  # sparse: no disk used
        fh.truncate((4 << 30) + 1)
    one_line_error(p, "4 GiB")
    with p.open("wb") as fh:
        fh.truncate(MAX_INPUT_BYTES + 1)
    with pytest.raises(ParamError, match="64 MiB"):
        input_file(p, "file")  # other inputs keep their limit
    assert input_file(p, "file", limit=1 << 30) == p
    q = tmp_path / "bad.parquet"
    q.write_bytes(b"not parquet at all")
    one_line_error(q, "Parquet")
    if not ROOT_USER:
        r = write(tmp_path, "locked.csv", AZ + GOOD + GOOD)
        r.chmod(0)
        one_line_error(r, "permission")


@pytest.mark.slow
def test_a_million_rows_read_in_seconds(tmp_path):
    n = 10**6
    rng = np.random.default_rng(0)
    t = np.datetime64("2023-11-16T18:15:46.6805900", "ns") + \
        rng.integers(0, 86_400 * 10**9, n).astype("timedelta64[ns]")
    stamps = pd.Series(t).dt.strftime("%Y-%m-%d %H:%M:%S.%f") + "0"
    p = tmp_path / "big.csv"
    pd.DataFrame({"TIMESTAMP": stamps, "ContextTokens": rng.integers(0, 8000, n),
                  "GeneratedTokens": rng.integers(0, 800, n)}).to_csv(p, index=False)
    began = time.perf_counter()
    log = read_request_log(p)
    took = time.perf_counter() - began
    print(f"\n{n:,} rows ({p.stat().st_size / 2**20:.0f} MiB) read in {took:.2f} s")
    assert log.rows == n and log.start == t.astype("datetime64[us]").min()  # the file holds whole us
    assert np.all(np.diff(log.time) >= 0)
