"""What the command imports before its work, and the compile cache it keeps.

``mc --help`` (and ``import mc``) load neither jax, NumPy nor pandas: a command
imports its own module alone, and the package's names load when first asked for.
The compile cache (``MC_COMPILE_CACHE``, ``MC_NO_COMPILE_CACHE``) is checked where
it enters, and a folder that cannot be written is one warning, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

import mc
from mc.cli import COMMANDS, SUMMARIES, build_parser, command_word, compile_cache, main
from mc.engine import compile as engine_compile

HEAVY = ("jax", "numpy", "pandas", "seaborn", "matplotlib", "pyarrow")


def _loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_help_and_import_load_no_numerics():
    code = ("import contextlib, io\nimport mc, mc.cli\nwith contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        mc.cli.main(['--help'])\n    except SystemExit:\n        pass\n"
            "assert mc.__version__ and mc.ParamError")
    assert _loaded_after(code) == []


def test_a_name_loads_its_package_when_asked():
    assert mc.simulate is mc.fleet.simulate and mc.card is mc.serving.card
    from mc import Scenario, calibrate  # the from-import form

    assert Scenario is mc.fleet.Scenario and calibrate is mc.studies.calibrate.calibrate
    assert set(mc.__all__) <= set(dir(mc))
    with pytest.raises(AttributeError, match=r"mc\.procurement is now mc\.buy"):
        mc.procurement  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        mc.nothing  # noqa: B018


def test_the_help_lines_are_each_commands_own():
    full = build_parser()
    subs = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    assert list(subs.choices) == COMMANDS
    own = {c.dest: c.help for c in subs._choices_actions}
    assert own == SUMMARIES
    lazy = build_parser("")
    assert lazy.format_help() == full.format_help()


@pytest.mark.parametrize("argv, want", [(["run", "x", "--n", "5"], "run"), (["--version"], ""), ([], ""),
                                        (["-h", "card"], "card"), (["--", "run"], "")])
def test_the_command_word(argv, want):
    assert command_word(argv) == want


def test_python_dash_m_mc_is_the_command():
    done = subprocess.run([sys.executable, "-m", "mc", "--version"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == f"mc {mc.__version__}\n"
    done = subprocess.run([sys.executable, "-m", "mc", "nothing"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "invalid choice: 'nothing'" in done.stderr and "Traceback" not in done.stderr


# -- the compile cache ---------------------------------------------------------------------

@pytest.fixture
def cache_env(monkeypatch, tmp_path):
    for name in ("MC_COMPILE_CACHE", "MC_NO_COMPILE_CACHE", "JAX_COMPILATION_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(engine_compile, "_TOLD", set())
    monkeypatch.setattr(engine_compile, "_config_value", lambda name: None)  # as in a fresh process
    told = []
    monkeypatch.setattr(engine_compile.jax.config, "update", lambda name, value: told.append((name, value)))
    return told


def test_the_cache_folder_by_default_moved_and_off(cache_env, monkeypatch, tmp_path):
    assert engine_compile.cache_folder() == str(tmp_path / "xdg" / "mc" / "jax")
    assert engine_compile.use_compile_cache() is None
    assert cache_env == [("jax_compilation_cache_dir", str(tmp_path / "xdg" / "mc" / "jax"))]
    assert (tmp_path / "xdg" / "mc" / "jax").is_dir() and not os.listdir(tmp_path / "xdg" / "mc" / "jax")
    monkeypatch.setenv("MC_COMPILE_CACHE", str(tmp_path / "mine"))
    assert engine_compile.cache_folder() == str(tmp_path / "mine")
    for off in (("MC_COMPILE_CACHE", "off"), ("MC_COMPILE_CACHE", "OFF"), ("MC_NO_COMPILE_CACHE", "1")):
        monkeypatch.setenv(*off)
        assert engine_compile.cache_folder() is None
        cache_env.clear()
        assert engine_compile.use_compile_cache() is None and cache_env == []
        monkeypatch.delenv(off[0])
    monkeypatch.setenv("MC_NO_COMPILE_CACHE", "0")
    assert engine_compile.cache_folder() == str(tmp_path / "xdg" / "mc" / "jax")


def test_jax_own_setting_wins(cache_env, monkeypatch, tmp_path):
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "jax"))
    assert engine_compile.use_compile_cache() is None and cache_env == []


@pytest.mark.parametrize("value", ["yes", "2", "true"])
def test_a_bad_switch_is_one_line(cache_env, monkeypatch, capsys, value):
    monkeypatch.setenv("MC_NO_COMPILE_CACHE", value)
    with pytest.raises(mc.ParamError, match=rf"MC_NO_COMPILE_CACHE='{value}': must be 1 \(no compile cache\) or 0"):
        engine_compile.cache_folder()
    assert main(["run", "golden-idler", "--n", "10"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mc run: error: MC_NO_COMPILE_CACHE='{value}': must be 1") and err.count("\n") == 1


def test_an_unwritable_folder_is_one_warning_and_no_cache(cache_env, monkeypatch, capsys, tmp_path):
    (tmp_path / "a-file").write_text("")
    folder = tmp_path / "a-file" / "cache"  # below a file: no one can make it, root included
    monkeypatch.setenv("MC_COMPILE_CACHE", str(folder))
    args = argparse.Namespace(command="run", quiet=False)
    compile_cache(args)
    err = capsys.readouterr().err
    assert err == (f"mc run: warning: the compile cache folder {folder} cannot be written (Not a directory); "
                   "compiling without it (MC_COMPILE_CACHE=FOLDER moves it, MC_COMPILE_CACHE=off turns it off)\n")
    compile_cache(args)  # said once a process
    assert capsys.readouterr().err == "" and cache_env == []
    monkeypatch.setattr(engine_compile, "_TOLD", set())
    compile_cache(argparse.Namespace(command="run", quiet=True))
    assert capsys.readouterr().err == "" and cache_env == []


def test_host_commands_leave_the_cache_alone(cache_env, monkeypatch):
    monkeypatch.setenv("MC_NO_COMPILE_CACHE", "bad")  # not even read
    compile_cache(argparse.Namespace(command="card", no_slo=True, quiet=False))
    compile_cache(argparse.Namespace(command="show", quiet=False))
    assert cache_env == []
