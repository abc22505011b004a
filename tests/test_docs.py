"""The README and the guides say what the code does: every shell block of README.md
runs (and every ``console`` block of docs/**/*.md, whose output is shown), and every
relative link and anchor in README.md and docs/**/*.md resolves.

Shell blocks are fenced ``sh``, ``bash`` or ``console``:

- in ``sh`` and ``bash`` blocks every line that is not blank or a comment is a command
  (a trailing ``\\`` continues it on the next line);
- in ``console`` blocks a command starts with ``$ ``; the lines after it, up to the next
  command or the block's end, are its output as printed, and each of them must be a
  line of what the command prints, in that order (``...`` stands for lines left out);
- ``mc`` (or ``.venv/bin/mc``) runs as this package's command line under this Python,
  ``python`` as this Python; ``make`` lines are skipped (they are what runs this test);
  a command with a trailing ``# not run by the docs test: REASON`` is skipped with its
  reason shown; any other program is a failure (say why it is not run, or run ``mc``).

The commands of one block run in order in one temporary folder that holds a link to
``examples/`` (a block is one session: a command may read what an earlier one wrote;
run alone, a command runs its block's earlier ones first), so what they write stays
there. The links are checked in the fast tier (no JAX, milliseconds); the
commands in the full tier (about three minutes with an empty compile cache, most of
it the README's calibration and router commands).
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted([README, *(ROOT / "docs").rglob("*.md")])
SKIP = "# not run by the docs test:"
MAX_README_LINES = 300


# --- Markdown, read as GitHub renders it -------------------------------------------

FENCE = re.compile(r"^( {0,8})(`{3,}|~{3,})\s*([\w+-]*)")


def blocks(text: str):
    """``(info, first line number, lines)`` of every fenced block (a block indented
    under a list item loses its indent), and the prose lines outside them as
    ``(line number, line)``."""
    fenced, prose = [], []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            prose.append((i + 1, lines[i]))
            i += 1
            continue
        indent, fence, info, start, body = m.group(1), m.group(2), m.group(3).lower(), i + 1, []
        i += 1
        while i < len(lines) and not lines[i].lstrip().startswith(fence):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        fenced.append((info, start, body))
        i += 1
    return fenced, prose


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (letters,
    digits, spaces, hyphens and underscores kept), spaces to hyphens."""
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    _, prose = blocks(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for _, line in prose:
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = slug(m.group(1))
        k = seen.get(s, 0)
        seen[s] = k + 1
        out.add(s if k == 0 else f"{s}-{k}")
    return out


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def links(path: Path):
    """``(line number, target)`` of every Markdown link and image outside code."""
    _, prose = blocks(path.read_text(encoding="utf-8"))
    for n, line in prose:
        line = re.sub(r"`[^`]*`", "", line)  # inline code is not a link
        for m in LINK.finditer(line):
            yield n, m.group(1)


def broken(path: Path, root: Path = ROOT) -> list[str]:
    bad = []
    for n, target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        where = f"{path.relative_to(root)}:{n}: {target}"
        if not dest.exists():
            bad.append(f"{where}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{where}: no heading #{anchor} in {dest.relative_to(root)}")
    return bad


def test_slug_is_githubs():
    assert slug("8.2 Fitting a scenario to telemetry: `mc fit`") == "82-fitting-a-scenario-to-telemetry-mc-fit"
    assert slug("The autoscaler over a month: `[autoscaler]`") == "the-autoscaler-over-a-month-autoscaler"
    assert slug("Does eviction pay once evicted cards are replaced?") == \
        "does-eviction-pay-once-evicted-cards-are-replaced"
    assert slug("θ, window and strikes") == "θ-window-and-strikes"


def test_broken_links_are_found(tmp_path):
    (tmp_path / "a.md").write_text("# Top\n## Two words\n[ok](#two-words) [no](#three) [f](b.md) "
                                   "[g](a.md#top) `[code](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n")
    got = broken(tmp_path / "a.md", root=tmp_path)
    assert got == ["a.md:3: #three: no heading #three in a.md", "a.md:3: b.md: no such file"]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_resolve(path):
    assert broken(path) == []


def test_readme_is_one_page():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_README_LINES, f"README.md has {n} lines; move detail to docs/guide/ (at most {MAX_README_LINES})"


def test_every_guide_is_in_the_readme_table():
    text = README.read_text(encoding="utf-8")
    for guide in sorted((ROOT / "docs" / "guide").glob("*.md")):
        assert f"(docs/guide/{guide.name})" in text, f"docs/guide/{guide.name} is not linked from README.md"


# --- The README's shell blocks ------------------------------------------------------

def commands(text: str):
    """``(line number, command, expected output lines or None, skip reason or None)``
    for each command of the shell blocks."""
    for _, *c in block_commands(text):
        yield tuple(c)


def block_commands(text: str):
    """``commands``, each led by its block's first line number."""
    fenced, _ = blocks(text)
    for info, start, body in fenced:
        if info not in ("sh", "bash", "console", "shell"):
            continue
        i = 0
        while i < len(body):
            line, n = body[i], start + 1 + i
            i += 1
            if info == "console":
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            elif not line.strip() or line.lstrip().startswith("#"):
                continue
            while line.rstrip().endswith("\\") and i < len(body):
                line = line.rstrip()[:-1].rstrip() + " " + body[i].strip()
                i += 1
            expected = None
            if info == "console":
                expected = []
                while i < len(body) and not body[i].startswith("$ "):
                    expected.append(body[i].rstrip())
                    i += 1
            reason = None
            if SKIP in line:
                line, reason = line.split(SKIP, 1)
                reason = reason.strip()
            yield start, n, line.strip(), expected, reason


def argv(command: str) -> list[str] | None:
    """The command as this Python runs it; None for a ``make`` line."""
    words = shlex.split(command, comments=True)
    if words[0] == "make":
        return None
    if words[0] in ("mc", ".venv/bin/mc"):
        return [sys.executable, "-m", "mc.cli", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    raise AssertionError(f"{command!r}: the docs test runs mc, python and make lines; "
                         f"mark it '{SKIP} REASON' or change it")


def printed_in_order(expected: list[str], *streams: list[str]) -> str | None:
    """The first expected line not found in any of ``streams`` (stdout, stderr) after
    the line last found in that stream: each stream keeps its own order, since a
    terminal interleaves them as the process flushes."""
    at = [0] * len(streams)
    for want in expected:
        if not want.strip() or want.strip() == "...":
            continue
        for k, got in enumerate(streams):
            if want in got[at[k]:]:
                at[k] = got.index(want, at[k]) + 1
                break
        else:
            return want
    return None


# Every command of every document, led by its block's first line: a block is one
# session, so its commands run in order in one folder and a command reads what the
# block's earlier ones wrote.
_ALL = [(str(p.relative_to(ROOT)), *c) for p in DOCS for c in block_commands(p.read_text(encoding="utf-8"))]
BLOCK = {(doc, n): block for doc, block, n, *_ in _ALL}
README_COMMANDS = [(doc, *c) for doc, _, *c in _ALL if doc == "README.md"]
# The guides' console blocks are shown output too: they run as well (their sh blocks
# are recipes for the reader's own files and services, and are not run).
GUIDE_COMMANDS = [(doc, *c) for doc, _, *c in _ALL if doc != "README.md" and c[2] is not None]
_FOLDERS: dict = {}  # (doc, block) -> (folder, line numbers of its commands run there)


def test_readme_has_commands():
    run = [c for _, _, c, _, r in README_COMMANDS if r is None and argv(c) is not None]
    assert len(run) >= 3, run


def _run(doc: str, n: int, command: str, folder: Path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    p = subprocess.run(argv(command), cwd=folder, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{doc}:{n}: {command}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}"
    return p


@pytest.mark.slow
@pytest.mark.parametrize("doc, n, command, expected, reason", README_COMMANDS,
                         ids=[f"{c[0]}:{c[1]}" for c in README_COMMANDS])
def test_shown_command_runs(doc, n, command, expected, reason, tmp_path_factory):
    check_shown(doc, n, command, expected, reason, tmp_path_factory)


def check_shown(doc, n, command, expected, reason, tmp_path_factory):
    """A shown command runs in its block's folder (after the block's earlier commands)
    and prints what is shown under it (tests/test_docs_guides.py runs the guides')."""
    if reason is not None:
        pytest.skip(f"{doc}:{n}: {reason}")
    if argv(command) is None:
        pytest.skip(f"{doc}:{n}: {command!r} sets up or runs the tests")
    block = BLOCK[(doc, n)]
    if (doc, block) not in _FOLDERS:
        folder = tmp_path_factory.mktemp("block")
        (folder / "examples").symlink_to(ROOT / "examples")
        _FOLDERS[(doc, block)] = (folder, set())
    folder, ran = _FOLDERS[(doc, block)]
    # The block's earlier commands first, where this one runs without them (-k).
    for d, m, c, _, r in README_COMMANDS + GUIDE_COMMANDS:
        if d == doc and m < n and BLOCK[(d, m)] == block and m not in ran and r is None and argv(c) is not None:
            _run(d, m, c, folder)
            ran.add(m)
    p = _run(doc, n, command, folder)
    ran.add(n)
    if expected:
        out, err = ([line.rstrip() for line in t.splitlines()] for t in (p.stdout, p.stderr))
        missing = printed_in_order(expected, out, err)
        assert missing is None, f"{doc}:{n}: {command}\nshown but not printed: {missing!r}\nprinted:\n" + \
            "\n".join(out[:40] + err[:20])


def test_console_blocks_are_read_and_checked():
    text = ("```console\n$ mc card --model 8b \\\n    --gpu h100\nseats   12\n...\nbatch   4\n```\n"
            "   ```sh\n   mc show x  # not run by the docs test: slow\n   # a comment\n   curl x\n   ```\n")
    got = list(commands(text))
    assert [(n, c, e, r) for n, c, e, r in got] == [
        (2, "mc card --model 8b --gpu h100", ["seats   12", "...", "batch   4"], None),
        (9, "mc show x", None, "slow"), (11, "curl x", None, None)]
    assert argv(got[0][1])[1:4] == ["-m", "mc.cli", "card"]
    with pytest.raises(AssertionError, match="curl x"):
        argv(got[2][1])
    assert printed_in_order(got[0][2], ["x", "seats   12", "y", "batch   4"]) is None
    assert printed_in_order(got[0][2], ["batch   4", "seats   12"]) == "batch   4"
    assert printed_in_order(got[0][2], ["seats   13", "batch   4"]) == "seats   12"
    assert printed_in_order(got[0][2], ["batch   4"], ["seats   12"]) is None  # stdout and stderr
