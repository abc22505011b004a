"""One way to run a study's independent pieces: here, or on a cluster.

A study (a sweep, a calibration race, a sensitivity study) is cut into *units*:
one grid point, setting or block of settings and a range of its months, run by
the engine on the devices of whichever process runs it, giving the engine's
partial result (a point's rows, a block's per-month figures). Units are cut from
the study alone, never from the number of workers; month ``i`` keeps its key
``fold_in(key(seed), i)`` wherever it runs; and a study merges the partials by
unit (``run`` hands them over in unit order unless told that any order will
do). So a result is the same bits run here, on one worker or on many, as long
as the workers are of one kind (a GPU's float sums may differ from a CPU's in
the last place, as they may between processors).

Executors: ``Local`` runs the units in order in this process (what every study
does unless told otherwise); ``mc.studies.cluster.Ray`` sends them to a Ray
cluster as tasks (``cluster.executor`` builds one from ``--cluster``).
An executor has ``results(units, bar)``, yielding ``(index, partial)`` as units
finish, ``describe()`` (what the manifest records, None here) and ``platform``
(the workers' device kind, which sets how many settings a block vmaps).

Progress: a unit's ``fn(payload, bar)`` reports its own months to the bar it is
given as it goes (here, the study's shared bar); a remote executor gives it a
silent bar and adds the unit's ``weight`` when it comes back, so the bar counts
the work done across the cluster.

Interrupts are tested from inside, at exact moments: every callable in
``UNIT_HOOKS`` runs after each unit's partial has been handed to the study, with
the number handed over so far (it may raise ``KeyboardInterrupt``, as Ctrl-C
would in the process that dispatches).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator

from .. import _validate as v
from ..engine import NoBar

ENV = "MC_CLUSTER"  # the --cluster of every study command, when the flag is not given
UNIT_HOOKS: list[Callable[[int], None]] = []


@dataclasses.dataclass(frozen=True)
class Unit:
    """One piece of a study.

    Attributes:
        fn: ``fn(payload, bar) -> partial``, a module-level function (a remote
            worker imports it by name, so it runs the code of that worker's mc).
        payload: plain data and scenarios: what ``fn`` needs (sent to a worker).
        weight: what the unit adds to the study's progress bar (months, or
            setting-months).
        note: the bar's postfix while the unit runs here (``"point 2/9"``).
        name: the unit in messages (``"grid point 7"``).
    """

    fn: Callable[[Any, Any], Any]
    payload: Any
    weight: int
    note: str = ""
    name: str = "unit"


class Local:
    """Runs the units one after another, in order, in this process, on its devices."""

    def results(self, units: list[Unit], bar: Any) -> Iterator[tuple[int, Any]]:
        for i, unit in enumerate(units):
            if unit.note:
                bar.set_postfix_str(unit.note, refresh=False)
            yield i, unit.fn(unit.payload, bar)

    def describe(self) -> dict | None:
        return None

    @property
    def platform(self) -> str:
        import jax

        return jax.default_backend()

    def close(self) -> None:
        pass


LOCAL = Local()


def check(executor: Any) -> Any:
    """``executor`` validated: None (``LOCAL``) or an executor (``results``,
    ``describe``, ``platform``)."""
    if executor is None:
        return LOCAL
    if not all(hasattr(type(executor), a) for a in ("results", "describe", "platform")):
        v.fail("executor", executor, "must be None (run here) or an executor: mc.studies.dispatch.Local() or "
               "mc.studies.cluster.Ray(...)")
    return executor


def run(units: list[Unit], executor: Any = None, bar: Any = None, *, ordered: bool = True
        ) -> Iterator[tuple[int, Any]]:
    """``(index, partial)`` of every unit, run by ``executor`` (None: here, in
    order). ``ordered``: in unit order (partials that finish early wait for the
    ones before them), so a study that folds them in sequence gets the same
    bits however many workers ran them; otherwise as they finish.

    Raises:
        KeyboardInterrupt: Ctrl-C (or a ``UNIT_HOOKS`` hook); a remote executor
            cancels the units still out.
    """
    executor = check(executor)
    bar = NoBar() if bar is None else bar
    got = executor.results(units, bar)
    waiting: dict[int, Any] = {}
    nxt = handed = 0
    try:
        for i, partial in got:
            if not ordered:
                yield i, partial
            else:
                waiting[i] = partial
                while nxt in waiting:
                    yield nxt, waiting.pop(nxt)
                    nxt += 1
            handed += 1
            for hook in list(UNIT_HOOKS):
                hook(handed)
    finally:
        got.close()


# -- --cluster ---------------------------------------------------------------------------

ALLOWED = "ray (the Ray cluster of this machine, else one started here) or ray://HOST:PORT (a Ray cluster's client port)"


def parse(value: Any, name: str = "--cluster") -> str | None:
    """A ``--cluster`` value checked where it enters: ``"ray"`` -> ``""`` (the
    cluster of this machine: ``RAY_ADDRESS``, else one ``ray start`` began here,
    else a new one on this machine's cores), ``"ray://HOST:PORT"`` -> that
    address; None or ``""`` -> None (no cluster)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        v.fail(name, value, "must be " + ALLOWED)
    text = value.strip()
    if text == "ray":
        return ""
    scheme, sep, rest = text.partition("://")
    host, colon, port = rest.rpartition(":")
    if (scheme != "ray" or not sep or not colon or not host or not port.isdigit() or not 0 < int(port) < 65536
            or any(c.isspace() or c in "/?#@" for c in host)):
        v.fail(name, value, "is not a Ray address; allowed: " + ALLOWED)
    return text


__all__ = ["ALLOWED", "ENV", "LOCAL", "Local", "UNIT_HOOKS", "Unit", "check", "parse", "run"]
