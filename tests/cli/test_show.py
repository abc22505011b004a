"""``mc show`` prints every preset as a TOML file that loads back to the same
scenario or plan, each field with its unit and meaning (``mc.files.fielddocs``, kept
in step with docs/model.md) and, with ``--defaults``, whether it was set or filled in;
``mc --version`` names the version."""

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

import mc
from mc import files
from mc.buy.catalogue import CHIP_NAMES, chip_name
from mc.cli import build_parser, main
from mc.files import fielddocs


@pytest.mark.parametrize("name", mc.presets.names())
def test_a_fleet_preset_round_trips(name, tmp_path, capsys):
    assert main(["show", name]) == 0
    path = tmp_path / "s.toml"
    path.write_text(capsys.readouterr().out)
    assert files.load_scenario(path).to_dict() == mc.presets.get(name).to_dict()


@pytest.mark.parametrize("name", mc.buy.presets.names())
def test_a_buying_preset_round_trips(name, tmp_path, capsys):
    assert main(["show", name]) == 0
    path = tmp_path / "p.toml"
    path.write_text(capsys.readouterr().out)
    assert files.load_procurement(path).to_dict() == mc.buy.presets.get(name).to_dict()


def test_a_scenario_file_is_shown_whole(tmp_path, capsys):
    (tmp_path / "s.toml").write_text('preset = "noise-evictor"\n[window]\nhours = 24\n')
    assert main(["show", str(tmp_path / "s.toml")]) == 0
    text = capsys.readouterr().out
    assert "hours = 24.0" in text and "[checks]" in text


def test_an_unknown_name_is_one_line(capsys):
    assert main(["show", "nope"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"mc {mc.__version__}"


# -- every field with its unit and meaning (docs/model.md's tables) ----------------------

KINDS = [("fleet", name) for name in mc.presets.names()] + [("buy", name) for name in mc.buy.presets.names()]
DOCS = Path(__file__).resolve().parents[2] / "docs" / "model.md"
# Fields a file may hold that docs/model.md's tables do not name yet; the test fails
# when one is documented, so it leaves this list.
UNDOCUMENTED: set = set()


def shown(text: str) -> dict[str, tuple[str, str]]:
    """``{dotted field: (value text, comment)}`` of ``mc show``'s output; a wrapped
    list's comment is the one after its closing bracket."""
    out, section, open_key = {}, "", None
    for line in text.splitlines():
        if open_key is not None:
            if line.startswith("]"):
                out[open_key] = ("[...]", line.partition("  # ")[2])
                open_key = None
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        m = re.match(r"^([A-Za-z0-9_-]+) = (.*)$", line)
        if not m:
            continue
        name = f"{section}.{m.group(1)}" if section else m.group(1)
        if m.group(2) == "[":
            open_key = name
            continue
        value, _, comment = m.group(2).partition("  # ")
        out[name] = (value, comment)
    return out


def data_of(kind: str, name: str) -> dict:
    return (mc.presets if kind == "fleet" else mc.buy.presets).get(name).to_dict()


@pytest.mark.parametrize("kind, name", KINDS)
def test_every_field_shown_has_its_unit_and_meaning(kind, name, capsys):
    assert main(["show", name]) == 0
    text = capsys.readouterr().out
    assert "docs/model.md §" in text and "SPEC" not in text
    fields = shown(text)
    default = files.field_defaults(kind, data_of(kind, name).get("model"))
    printed = {k for k, x in fielddocs.flatten(data_of(kind, name)).items() if x is not None}
    assert set(fields) == printed
    for field, (value, comment) in fields.items():
        doc = files.field_doc(kind, field)
        assert doc is not None, f"{field} has no entry in mc.files.fielddocs"
        unit, meaning = doc
        assert comment.startswith(f"{unit}; {meaning}" if unit else meaning), (field, comment)
        differs = field in default and tomllib.loads(f"x = {value}")["x"] != default[field]
        assert ("(default " in comment) == differs, (field, value, comment)


def test_lemon_hunter_says_what_each_field_is(capsys):
    assert main(["show", "lemon-hunter"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert 'runset = "peak"  # survivors kept warm: steady (mean), peak or all (default "steady")' in lines
    assert "hours = 24.0  # h; window W the cards are scored on (default 168)" in lines
    assert "sigma_hour = 0.25  # share; score error (1 sd) of an hour's window" in lines
    assert "churn = 0.15  # × price; churn fee of an evicted card" in lines
    assert "rate = 2.0  # dips per card-month; how often a card's rate dips silently" in lines
    assert "level = 150000.0  # tok/s; base or mean demand (default 60000)" in lines


@pytest.mark.parametrize("kind, name", KINDS)
@pytest.mark.parametrize("marked", [False, True])
def test_the_commented_output_reads_back_to_the_same_data(kind, name, marked, capsys):
    assert main(["show", name] + (["--defaults"] if marked else [])) == 0
    data = data_of(kind, name)
    assert tomllib.loads(capsys.readouterr().out) == tomllib.loads(files.to_toml(data))


def test_to_toml_comments_stay_toml(tmp_path):
    data = {"a": 1.5, "xs": list(np.linspace(0, 1, 50)), "t": {"zs": np.arange(60), "s": "x # y", "n": 2},
            "chips": {"a100-used": 3}}
    comments = {"a": "tok/s; a rate # with a hash", "xs": "h; wrapped\nover lines", "t.zs": "cards",
                "t.s": 'a "quoted" label\x7f\x00', "chips.a100-used": "$ per card-month", "t.none": "unused"}
    text = files.to_toml(data, "head", comments)
    assert tomllib.loads(text) == tomllib.loads(files.to_toml(data, "head"))
    lines = text.splitlines()
    assert "a = 1.5  # tok/s; a rate # with a hash" in lines
    assert "]  # h; wrapped over lines" in lines and "]  # cards" in lines
    assert "a100-used = 3  # $ per card-month" in lines and "n = 2" in lines
    (tmp_path / "d.toml").write_text(text)
    assert files.read_toml(tmp_path / "d.toml")["t"]["s"] == "x # y"


def marks(text: str) -> dict[str, str]:
    return {k: c.partition(":")[0] for k, (_, c) in shown(text).items()}


def test_defaults_marks_what_a_file_sets(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('pool = "8 x flagship"\n[window]\nhours = "day"\n[demand]\nlevel = 60000.0\n')
    assert main(["show", "--defaults", str(path)]) == 0
    text = capsys.readouterr().out
    got = marks(text)
    assert {k for k, m in got.items() if m == "set"} == {"pool", "window.hours", "demand.level"}
    assert set(got.values()) == {"set", "default"}
    assert "level = 60000.0  # set: tok/s; base or mean demand" in text.splitlines()
    # A default value is its default: no "(default X)" beside it.
    assert all("(default " not in c for _, c in shown(text).values() if c.startswith("default: "))


def test_defaults_follows_a_files_preset(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('preset = "lemon-hunter"\n[dips]\nrate = 3.0\n')
    assert main(["show", "--defaults", str(path)]) == 0
    own = {"pool", "runset", "window.hours", "eviction.policy", "demand.shape", "demand.level",
           "lottery.lemon_rate", "autoscaler.period", "autoscaler.replace"}
    got = marks(capsys.readouterr().out)
    assert {k for k, m in got.items() if m == "set"} == own | {"dips.rate"}
    assert main(["show", "--defaults", "lemon-hunter"]) == 0
    got = marks(capsys.readouterr().out)
    assert {k for k, m in got.items() if m == "set"} == own


def test_defaults_of_a_plan_file(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text('preset = "api-tax"\nsigma = 0.15\n[price_hour]\nh100-sxm = 3.0\n')
    assert main(["show", "--defaults", str(path)]) == 0
    text = capsys.readouterr().out
    got = marks(text)
    assert {k for k, m in got.items() if m == "set"} == {"model", "sigma", "owned.h100", "price_month.h100"}
    assert "docs/model.md §4" in text
    assert files.load_procurement(path).to_dict() == files.procurement_from_data(tomllib.loads(text)).to_dict()


def test_every_registry_field_is_in_the_docs():
    text = DOCS.read_text()
    missing = set()
    for kind, registry in files.FIELD_DOCS.items():
        for section, fields in registry.items():
            if section not in ("", "pool") and not re.search(rf"`\[{re.escape(section)}\]`|`{re.escape(section)}`",
                                                             text):
                missing.add((kind, section, ""))
            for field, (unit, meaning) in fields.items():
                assert meaning and "\n" not in unit + meaning, (kind, section, field)
                if not re.search(rf"`\[?{re.escape(field)}\]?`", text):
                    missing.add((kind, section, field))
    assert missing == UNDOCUMENTED


def test_the_registry_covers_every_field_a_file_may_hold():
    from mc._pytree import field_keys
    from mc.buy import plan
    from mc.fleet import pool, scenario
    from mc.serving import latency

    def names(cls):  # a table's keys (an [eviction] table's: every registered rule's fields)
        return set(field_keys(cls))

    for section, cls in {**scenario.SECTIONS, **scenario.OPTIONAL}.items():
        assert names(cls) <= set(files.FIELD_DOCS["fleet"][section]), section
    assert names(scenario.Scenario) - set(scenario.SECTIONS) - set(scenario.OPTIONAL) <= set(files.FIELD_DOCS["fleet"][""])
    entry = {"count", "card", "name", "rated", "gpu", "model", "rated_from", "columns", "market", *pool.PRICES, *pool.HARDWARE,
             *pool.SLO_SEARCH, *names(latency.Serving)}
    assert entry == set(files.FIELD_DOCS["fleet"]["pool"])
    top = names(plan.Procurement) - set(plan.SECTIONS) - {"owned", "rent_cap", "rent_spot", "prices"}
    assert top <= set(files.FIELD_DOCS["buy"][""])
    for section, cls in plan.SECTIONS.items():
        assert names(cls) - {"trace_csv", "log", "columns", "scale", "log_sha256"} <= set(files.FIELD_DOCS["buy"][section])
    for section in (*plan.PRICES, "owned", "rent_cap", "rent_spot", "slots", "spot_slots"):
        assert set(files.FIELD_DOCS["buy"][section]) == set(CHIP_NAMES), section


def test_field_defaults_are_the_dataclasses():
    fleet = files.field_defaults("fleet")
    assert fleet["window.hours"] == 168.0 and fleet["demand.level"] == 60000.0 and fleet["runset"] == "steady"
    assert fleet["autoscaler.period"] == 730 and fleet["autoscaler.replace"] is False and "pool" not in fleet
    assert fleet["lottery.lemon_rate"] == 0.0 and "demand.trace" not in fleet
    buy = files.field_defaults("buy")
    assert buy["model"] == "premium-70b" and buy["api_price"] == 2.5 and buy["demand.shape"] == "diurnal"
    assert files.field_defaults("buy", "chat-8b")["api_price"] == 0.2 and buy["price_month.b200"] == 2900.0
    assert buy["owned.h100"] == 0 and "slots" not in buy


def test_no_help_cites_the_spec():
    parser = build_parser()
    subs = next(a for a in parser._actions if a.choices and "show" in a.choices).choices
    for name, sub in subs.items():
        assert "SPEC" not in sub.format_help(), name
    with pytest.raises(mc.ParamError, match=r"docs/model\.md §4"):
        chip_name("tpu-v9")
