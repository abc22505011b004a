"""The XLA options the tests compile with (``tests/compile_flags.py``): this jaxlib
takes them, an option it does not know is left out rather than stopping XLA, and the
flags already set come first."""

import compile_flags


def test_this_jaxlib_takes_the_options(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    assert compile_flags.flags().split() == ["--xla_force_host_platform_device_count=2", *compile_flags.OPTIONS]


def test_an_unknown_option_is_left_out(monkeypatch):
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    assert not compile_flags.accepted(["--xla_no_such_option=1"])
    got = compile_flags.flags(compile_flags.OPTIONS + ["--xla_no_such_option=1"])
    assert got.split() == compile_flags.OPTIONS
