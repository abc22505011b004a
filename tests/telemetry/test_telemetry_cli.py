"""``mc telemetry``: the rows, the truth and the manifest written together, the same
rows as the library's and for any chunk, JSON, help, a Ctrl-C that writes nothing,
and one-line refusals (exit 2)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import mc
from _interrupts import at_chunk
from mc import telemetry
from mc.cli import main
from mc.studies import manifest

SMALL = ["--cards", "6", "--every", "20", "--hours", "100", "--seed", "2", "--quiet"]
NAMES = ["t.dips.parquet", "t.parquet", "t.parquet.manifest.json", "t.truth.parquet"]


def _library():
    return telemetry.emit(mc.presets.get("golden-idler"), telemetry.Sampling(20.0, 100.0), cards=6, seed=2)


def test_writes_rows_truth_and_a_manifest(tmp_path, capsys):
    out = tmp_path / "t.parquet"
    assert main(["telemetry", "golden-idler", *SMALL, "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "6 cards" in said and "1,800 samples" in said and "t.truth.parquet" in said
    assert sorted(p.name for p in tmp_path.iterdir()) == NAMES  # no temporary left
    made = manifest.verify(tmp_path / "t.parquet.manifest.json")
    assert sorted(made["outputs"]) == ["t.dips.parquet", "t.parquet", "t.truth.parquet"]
    assert made["seed"] == 2 and made["n"] == 6 and made["samples"] == 1800
    assert made["config"]["telemetry"]["samples_per_card"] == 300
    lib = _library()
    rows = pd.read_parquet(out)
    assert list(rows.columns) == ["card", "class", "time", "rate"]
    assert rows.equals(lib.samples)
    assert pd.read_parquet(tmp_path / "t.truth.parquet").equals(lib.cards)
    assert pd.read_parquet(tmp_path / "t.dips.parquet").equals(lib.dips)
    assert json.loads(pq.read_schema(out).metadata[b"mc"])["seed"] == 2
    # each Parquet field carries its declared units and meaning (mc.telemetry.columns)
    for path, table in ((out, telemetry.columns.SAMPLES), (tmp_path / "t.truth.parquet", telemetry.columns.TRUTH),
                        (tmp_path / "t.dips.parquet", telemetry.columns.DIPS)):
        schema = pq.read_schema(path)
        assert schema.names == list(table)
        assert [(f.metadata[b"units"].decode(), f.metadata[b"doc"].decode()) for f in schema] == \
            [(c.units, c.doc) for c in table.values()]
    assert pq.read_schema(out).field("rate").metadata[b"units"] == b"tok/s"


def test_csv_holds_the_same_values(tmp_path):
    out = tmp_path / "t.csv"
    assert main(["telemetry", "golden-idler", *SMALL, "--out", str(out)]) == 0
    assert manifest.verify(tmp_path / "t.csv.manifest.json")["outputs"].keys() == {"t.csv", "t.truth.csv", "t.dips.csv"}
    lib = _library()
    rows = pd.read_csv(out)
    assert (rows.card.to_numpy() == lib.samples.card.to_numpy()).all()
    assert (rows["class"] == "flagship").all()
    assert (rows.time.to_numpy() == lib.samples.time.to_numpy()).all()
    assert (rows.rate.to_numpy().astype(np.float32) == lib.samples.rate.to_numpy()).all()  # shortest float32 text
    truth = pd.read_csv(tmp_path / "t.truth.csv")
    assert (truth.q.to_numpy().astype(np.float32) == lib.cards.q.to_numpy()).all()
    assert len(pd.read_csv(tmp_path / "t.dips.csv")) == len(lib.dips)


@pytest.mark.slow
def test_rows_do_not_depend_on_the_chunk(tmp_path):
    got = []
    for chunk in ("2", "5"):
        out = tmp_path / f"c{chunk}.parquet"
        assert main(["telemetry", "golden-idler", *SMALL, "--chunk", chunk, "--out", str(out)]) == 0
        got.append(pd.read_parquet(out))
    assert got[0].equals(got[1])


def test_json(tmp_path, capsys):
    out = tmp_path / "t.parquet"
    assert main(["telemetry", "golden-idler", *SMALL, "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(c))
    assert doc["cards"] == 6 and doc["samples"] == 1800 and doc["samples_per_card"] == 300
    assert doc["classes"] == {"flagship": 6}
    assert doc["sigma_sample"] == pytest.approx(0.25 * 3 ** 0.5)
    assert doc["files"]["truth"].endswith("t.truth.parquet") and doc["provenance"]["backend"]
    assert doc["units"]["rows"] == {"card": "", "class": "", "time": "h", "rate": "tok/s"}
    assert doc["units"]["truth"]["true_rate"] == "tok/s" and doc["units"]["dips"]["depth"] == "share"


def test_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["telemetry", "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "§8" in text and "fold_in(key(seed), i)" in text and "--every" in text and "%%" not in text


def test_a_ctrl_c_writes_nothing(tmp_path, capsys):
    out = tmp_path / "t.parquet"
    with at_chunk(1, "SIGINT"):
        code = main(["telemetry", "golden-idler", *SMALL, "--cards", "12", "--chunk", "2", "--out", str(out)])
    assert code == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "nothing was written" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, field", [
    (["--every", "0"], "every"), (["--every", "-1"], "every"), (["--every", "nan"], "every"),
    (["--every", "inf"], "every"), (["--hours", "0"], "hours"), (["--hours", "-3"], "hours"),
    (["--hours", "1e7"], "hours"), (["--every", "120", "--hours", "1"], "every"),
    (["--every", "0.001", "--hours", "1e6"], "hours"), (["--cards", "0"], "cards"), (["--cards", "-2"], "cards"),
    (["--cards", "2147483648"], "cards"), (["--seed", "-1"], "seed"), (["--chunk", "0"], "chunk"),
    (["--out", "{tmp}/t.json"], "out"), (["--out", "{tmp}"], "out"), (["--out", "{tmp}/no/such/dir/x/../t.txt"], "out"),
    (["--every", "x"], "argument --every"), (["--cards", "1.5"], "argument --cards")])
def test_bad_input_is_one_line_exit_2(argv, field, tmp_path, capsys):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "t.parquet")]
    try:
        code = main(["telemetry", "golden-idler", "--quiet", *argv])
    except SystemExit as exc:  # argparse's own refusal of a value it cannot read
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    named = field if field.startswith("argument") else f"--{field}="  # the flag, as the user wrote it
    assert err.count("\n") == 1 and err.startswith(f"mc telemetry: error: {named}"), err
    assert not list(tmp_path.glob("t.*"))


def test_needs_out_and_a_known_scenario(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["telemetry", "golden-idler"])
    assert exc.value.code == 2 and "--out" in capsys.readouterr().err
    assert main(["telemetry", "no-such-preset", "--out", str(tmp_path / "t.parquet")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
