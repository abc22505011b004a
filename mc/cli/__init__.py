"""The ``mc`` command line. Each subcommand lives in ``mc/cli/<name>.py`` and
exposes ``register(subparsers)``, which adds its parser with ``func`` set."""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import logging
import os
import subprocess
import sys
import warnings

from .. import _launch
from .. import _validate as v
from .._validate import ParamError
from .._version import __version__

# Subcommand modules, in the order ``mc --help`` lists them, each with its line there.
# A command imports its own module alone (jax, NumPy and pandas come with it), so
# ``mc --help`` imports none; the lines are each module's own ``help`` (a test holds
# them equal).
SUMMARIES = {
    "presets": "the presets side by side",
    "show": "print a preset as a complete TOML file to start from",
    "run": "simulate one scenario and print its summary",
    "bench": "fleet-months per second: the engine against vectorized NumPy",
    "sweep": "run a grid of scenarios into one tidy parquet table",
    "calibrate": "the cheapest autoscaler setting within stated risks",
    "sensitivity": "which parameter drives each verdict (Sobol indices)",
    "card": "serving arithmetic: tok/s of one model on one GPU (or a replica of several)",
    "buy": "own, rent or API: a procurement mix's month",
    "latency": "p95 time to first token of one card (or replica) under a batcher, or its SLO rate",
    "telemetry": "synthetic telemetry of a scenario's cards, with the truth beside it",
    "fit": "fit a scenario's lottery, dips and window noise to telemetry",
}
COMMANDS = list(SUMMARIES)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own exit-2 path, kept to one line
        self.exit(2, f"{self.prog}: error: {message}\n")


def command_word(argv: list[str] | None) -> str:
    """The subcommand ``argv`` names: its first word that is not an option (``mc``'s
    own options take no value), or "" when there is none."""
    for word in sys.argv[1:] if argv is None else argv:
        if word == "--":
            return ""
        if not word.startswith("-"):
            return word
    return ""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``mc`` parser. ``only``: the one subcommand to build in full (its module
    imported); the others are listed by name and line alone, so a command imports
    no other command's libraries. None: every subcommand in full."""
    parser = _Parser(prog="mc", description="Monte Carlo answers to money questions "
                     "about GPU inference fleets.")
    parser.add_argument("--version", action="version", version=f"mc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        if only is not None and name != only:
            sub.add_parser(name, help=SUMMARIES[name], add_help=False)
            continue
        try:
            module = importlib.import_module(f"mc.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name == f"mc.cli.{name}":
                continue  # a subcommand not built yet
            raise
        module.register(sub)
    return parser


# Commands that never start a device backend: no backend check for them (they stay
# fast, and work whatever JAX_PLATFORMS and XLA_FLAGS say). mc card starts one only
# for its SLO rating (not with --no-slo).
HOST_ONLY = ("show", "card")
# Starts a CPU backend, which parses XLA_FLAGS as every backend does.
_PROBE = "import jax; jax.devices()"
_FLAGS_OK: set[str] = set()  # XLA_FLAGS values a probe (or the disk cache) accepted


def _flags_marker(flags: str) -> str:
    """The file that records ``flags`` passed a probe, per jax and jaxlib version."""
    import importlib.metadata as md

    from ..engine.compile import cache_base

    try:
        versions = md.version("jax") + "/" + md.version("jaxlib")
    except md.PackageNotFoundError:  # pragma: no cover - jax from a source tree
        versions = "?"
    key = hashlib.sha256(f"{versions}\0{flags}".encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return os.path.join(cache_base(), "mc", "xla-flags", key)


def check_xla_flags() -> None:
    """``XLA_FLAGS``, when set, must be flags XLA knows with values it can read: XLA
    checks them when a backend starts and stops the whole process (in C++, with its
    own log) when they are not, so they are tried first in a short subprocess. A
    value that passed is remembered (in this process, and under the cache folder
    per jax version), so only a new value costs the probe (about a second)."""
    flags = os.environ.get("XLA_FLAGS")
    if not flags or flags in _FLAGS_OK:
        return
    marker = _flags_marker(flags)
    if os.path.exists(marker):
        _FLAGS_OK.add(flags)
        return
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "0"}
    try:
        done = subprocess.run([sys.executable, "-P", "-c", _PROBE], env=env, capture_output=True, timeout=120,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return  # no probe: the backend's own start says what is wrong
    err = done.stderr.decode("utf-8", "replace")
    if done.returncode == 0:
        _FLAGS_OK.add(flags)
        try:
            os.makedirs(os.path.dirname(marker), exist_ok=True)
            with open(marker, "w") as fh:
                fh.write(flags + "\n")
        except OSError:
            pass  # a cache that cannot be written: probe again next time
        return
    # XLA's log lines: "E1206 02:40:22.990691 4222 file.cc:63] message"; the first
    # error says which flag, the fatal line why the process stopped.
    said = [line.split("] ", 1)[1] for line in err.splitlines()
            if line[:1] in "EF" and line[1:5].isdigit() and "] " in line]
    if "Traceback" in err or not said:
        return  # a Python error or a killed probe, not XLA refusing the flags: the real start says
    v.fail("XLA_FLAGS", flags, "XLA refuses it: " + " ".join(said[0].split())
           + "; XLA_FLAGS holds --name=value flags separated by spaces")


def needs_backend(args) -> bool:
    """Whether the command starts a device backend (and so compiles)."""
    return args.command not in HOST_ONLY or (args.command == "card" and not args.no_slo)


def compile_cache(args) -> None:
    """The persistent compilation cache for a command that compiles
    (``engine.compile.use_compile_cache``); a folder it cannot write is one warning
    line (none with ``--quiet``) and the command runs without it."""
    if not needs_backend(args):
        return
    from ..engine.compile import use_compile_cache

    problem = use_compile_cache()
    if problem is not None and not getattr(args, "quiet", False):
        print(f"mc {args.command}: warning: {problem}", file=sys.stderr)


def check_backend(args) -> None:
    """The device backend starts, before the command runs: one line naming
    ``JAX_PLATFORMS`` or ``XLA_FLAGS`` when it cannot (never a traceback, nor XLA
    stopping the process)."""
    if not needs_backend(args):
        return
    check_xla_flags()
    if getattr(args, "coordinator", None) is not None:
        return  # jax.distributed.initialize must run before any backend starts
    import jax

    platforms = os.environ.get("JAX_PLATFORMS", "")
    try:
        jax.devices()
    except RuntimeError as err:
        v.fail("JAX_PLATFORMS", platforms, "no backend it names can start here: " + " ".join(str(err).split()))
    except AssertionError:  # jax: every platform named was skipped (a GPU one with no GPU visible)
        v.fail("JAX_PLATFORMS", platforms, "no backend it names can start here (is its device visible and its "
               "jax plugin installed?); unset it to let jax choose, or set JAX_PLATFORMS=cpu")


def _keep_undecodable_bytes() -> None:
    """A path the operating system gave as bytes that are not UTF-8 (Python holds
    them as surrogate escapes) is printed back as the same bytes rather than
    failing, whatever the locale's error handler."""
    out = sys.stdout
    if out is sys.__stdout__ and getattr(out, "errors", None) == "strict":
        try:
            out.reconfigure(errors="surrogateescape")
        except (AttributeError, ValueError):  # pragma: no cover - not a TextIOWrapper
            pass


class _compile_notices:
    """While a command runs with its progress shown (a terminal, or ``--progress``),
    one stderr line as each compiled step starts and when it is ready, so a cold run
    says what it is doing before its bar appears."""

    def __init__(self, args):
        from ..engine import compile as engine_compile
        from ._common import progress_of

        want = progress_of(args)
        self.on = want is True or (want is None and "progress" in args and sys.stderr.isatty())
        self.hooks, self.command = engine_compile.COMPILE_HOOKS, args.command

    def __call__(self, seconds: float | None) -> None:
        msg = (f"mc {self.command}: compiling a step for this scenario's shape (loaded at once when cached)..."
               if seconds is None else f"mc {self.command}: step ready in {seconds:.1f} s")
        try:
            from tqdm import tqdm

            tqdm.write(msg, file=sys.stderr)  # above an open bar, not through it
        except ImportError:  # pragma: no cover - tqdm is a dependency
            print(msg, file=sys.stderr)

    def __enter__(self):
        if self.on:
            self.hooks.append(self)
        return self

    def __exit__(self, *exc):
        if self.on:
            self.hooks.remove(self)
        return False


@contextlib.contextmanager
def _warnings_of(args):
    """A warning the command meets is one stderr line, ``mc CMD: warning: ...``
    (as Python's filters let it through, each message once); with ``--quiet``, nothing
    on stderr but errors: no warning (the commands' own lines are theirs to leave
    out) and no library's log below an error."""
    if not getattr(args, "quiet", False):
        shown: set[str] = set()

        def show(message, *_, **__) -> None:
            if str(message) not in shown:
                shown.add(str(message))
                print(f"mc {args.command}: warning: {message}", file=sys.stderr)

        with warnings.catch_warnings():
            warnings.showwarning = show
            yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            yield
        finally:
            logging.disable(logging.NOTSET)


def as_written(message: str, parser: argparse.ArgumentParser, command: str, argv: list[str] | None) -> str:
    """A refusal naming a field as the user wrote it: a check that names an option
    by its value's name (``requests=-5``, ``out=...``) names the flag instead
    (``--requests=-5``) when the user gave that flag; any other field (a file's
    ``pool.NAME.count``, an argument) is left as it is."""
    field, eq, rest = message.partition("=")
    if not eq or not field or field.startswith("-"):
        return message
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    cmd = sub.choices.get(command) if sub is not None else None
    if cmd is None:
        return message
    words = [w.partition("=")[0] for w in (sys.argv[1:] if argv is None else argv) if w.startswith("--")]
    for action in cmd._actions:
        longest = max(action.option_strings, key=len, default="")
        if longest.startswith("--") and field in (action.dest, longest[2:]) and any(
                longest.startswith(w) and len(w) > 2 for w in words):
            return f"{longest}={rest}"
    return message


def main(argv: list[str] | None = None) -> int:
    """The ``mc`` command: its exit code (0, 1 for a calibration that meets no
    limit, 2 for a refusal, 130 for a Ctrl-C, 141 for a closed pipe).

    As the process's own command (``argv`` None, started as ``mc`` or ``python -m
    mc.cli``), a Ctrl-C at any moment is exit 130 and one line: while starting
    (imports, the parser, the backend) it ends the process at once; while the
    work runs it stops it, keeping only whole results; after the result is
    decided it is ignored; and an interrupted process ends without the
    interpreter's teardown (``mc._launch``)."""
    command = argv is None and _launch.is_running_command()
    written = _written()
    name = "mc"
    try:
        parser = build_parser(command_word(argv))
        args = parser.parse_args(argv)
        name = f"mc {args.command}"
        code = _run(parser, args, argv, command, written)
        if command:
            _launch.quiet()
    except KeyboardInterrupt as err:  # while starting, or while a refusal is said
        if command:
            _launch.quiet()
        print(f"{name}: interrupted" + (f": {err}" if str(err) else _kept(written)), file=sys.stderr)
        code = 130
    return _launch.ending(code) if command else code


def _written() -> int:
    """How many files this process has written so far (``files.WRITTEN``): none
    before the writers' module is loaded (a command loads it with its own module)."""
    outputs = sys.modules.get("mc.files.outputs")
    return len(outputs.WRITTEN) if outputs is not None else 0


def _kept(written: int) -> str:
    """What an interrupted command wrote: nothing, or files each whole."""
    if _written() <= written:
        return "; nothing was written"
    from .. import files

    new = files.WRITTEN[written:]
    if not new:
        return "; nothing was written"
    return (f"; {len(new)} file(s) were written whole before it (the last {new[-1]}); a result is finished only "
            "when its manifest is there")


def _run(parser: argparse.ArgumentParser, args, argv: list[str] | None, command: bool, written: int) -> int:
    if command:
        _launch.starting(f"mc {args.command}")
    _keep_undecodable_bytes()
    try:
        compile_cache(args)
        check_backend(args)
        if command:
            _launch.working()
        with _launch.interrupts_not_lost(), _compile_notices(args), _warnings_of(args):
            return int(args.func(args) or 0)
    except ParamError as err:
        print(f"mc {args.command}: error: {as_written(str(err), parser, args.command, argv)}", file=sys.stderr)
        return 2
    except FileNotFoundError as err:
        print(f"mc {args.command}: error: {err.filename}: no such file", file=sys.stderr)
        return 2
    except KeyboardInterrupt as err:  # a study's Interrupted says what it kept
        if command:
            _launch.quiet()
        print(f"mc {args.command}: interrupted" + (f": {err}" if str(err) else _kept(written)), file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``mc run ... | head``): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as err:  # a folder, a permission, a full disk: one line, never a traceback
        where = f"{err.filename}: " if err.filename else ""
        print(f"mc {args.command}: error: {where}{err.strerror or err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
