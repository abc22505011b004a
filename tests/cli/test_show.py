"""``mc show`` prints every preset as a TOML file that loads back to the same
scenario or plan; ``mc --version`` names the version."""

import pytest

import mc
from mc import files
from mc.cli import main


@pytest.mark.parametrize("name", mc.presets.names())
def test_a_fleet_preset_round_trips(name, tmp_path, capsys):
    assert main(["show", name]) == 0
    path = tmp_path / "s.toml"
    path.write_text(capsys.readouterr().out)
    assert files.load_scenario(path).to_dict() == mc.presets.get(name).to_dict()


@pytest.mark.parametrize("name", mc.procurement_presets.names())
def test_a_buying_preset_round_trips(name, tmp_path, capsys):
    assert main(["show", name]) == 0
    path = tmp_path / "p.toml"
    path.write_text(capsys.readouterr().out)
    assert files.load_procurement(path).to_dict() == mc.procurement_presets.get(name).to_dict()


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
