"""The arithmetic that made a result: a digest of the modules that can change a
number, the same for the same source and different after a model's code changes."""

from __future__ import annotations

import re
import shutil

import pytest

from mc._version import __version__
from mc.studies import madeby


@pytest.fixture
def package(tmp_path):
    """A copy of the package's source (``.py`` files only) to change."""
    dst = tmp_path / "mc"
    shutil.copytree(madeby.PACKAGE, dst, ignore=lambda d, names: [n for n in names if n == "__pycache__"])
    return dst


def test_arithmetic_is_the_version_and_a_digest_of_this_source():
    made = madeby.arithmetic()
    assert re.fullmatch(rf"{re.escape(__version__)}\+[0-9a-f]{{{madeby.DIGITS}}}", made)
    assert made == f"{__version__}+{madeby.digest()}"  # deterministic: computed again, the same
    assert madeby.arithmetic() is made  # once a process


def test_every_layer_left_out_is_there():
    """A module named in NOT_ARITHMETIC that was moved or renamed would be counted
    again without anyone noticing; each must exist."""
    for name in madeby.NOT_ARITHMETIC:
        assert (madeby.PACKAGE / name).exists(), name
    counted = madeby.counted()
    assert "fleet/accounting.py" in counted and "kernels/random.py" in counted and "studies/sweep.py" in counted
    assert not [n for n in counted if n.startswith("cli/") or n == "studies/madeby.py"]


def test_a_change_to_a_models_code_changes_the_digest(package):
    before = madeby.digest(package)
    assert before == madeby.digest()  # a copy of the same source
    accounting = package / "fleet" / "accounting.py"
    accounting.write_text(accounting.read_text() + "\nHOURS_IN_A_MONTH_TWEAK = 1.0\n")
    assert madeby.digest(package) != before


@pytest.mark.parametrize("layer", ["cli/sweep.py", "fleet/report.py", "studies/calibrate/_text.py",
                                   "telemetry/plot.py"])
def test_text_and_command_line_do_not_change_it(package, layer):
    before = madeby.digest(package)
    path = package / layer
    path.write_text(path.read_text() + "\n# reworded\n")
    assert madeby.digest(package) == before


def test_a_new_module_changes_it(package):
    before = madeby.digest(package)
    (package / "fleet" / "extra.py").write_text("X = 1\n")
    assert madeby.digest(package) != before
