"""docs/model.md's field tables agree with the fields' declarations (``mc._fields``):
each row naming a declared field gives its unit, its default and what is allowed
(the text before a ``;``, which may add rules across fields), so neither can drift."""

import dataclasses
import math
import re
from pathlib import Path

import pytest

from mc._fields import declarations
from mc.buy.plan import BuyChecks, Procurement
from mc.buy.terms import Repairs, SpotMarket
from mc.files import field_defaults
from mc.fleet.checks import Checks
from mc.fleet.demand import Demand
from mc.fleet.dips import Dips
from mc.fleet import policies
from mc.fleet.eviction import Eviction
from mc.fleet.lottery import Lottery
from mc.fleet.outages import Failures, Spot
from mc.fleet.pool import COUNT, CardClass
from mc.fleet.rounds import Autoscaler
from mc.fleet.window import Window
from mc.serving.arithmetic import INPUTS
from mc.serving.queue import LOAD, RATE, Serving
from mc.serving.slo import SEARCH
from mc.telemetry import columns as telemetry_columns

DOCS = Path(__file__).resolve().parents[1] / "docs" / "model.md"
HEADER = "| field | unit | meaning | default | allowed |"


def fleet(section, cls):
    return {name: (f"{section}.{name}", d) for name, d in declarations(cls).items()}


# Each table, by the heading it sits under: ``{row name: (dotted name in field_defaults
# or None, declaration)}`` and the kind of file (``field_defaults``) or None.
TABLES = {
    "### 1.1 The pool": (None, {"count": (None, COUNT), **{k: (None, d) for k, d in declarations(CardClass).items()}}),
    "### 1.2 The quality lottery": ("fleet", fleet("lottery", Lottery)),
    "### 1.3 Silent dips": ("fleet", fleet("dips", Dips)),
    "### 1.4 The measurement window": ("fleet", fleet("window", Window)),
    "### 1.5 Eviction": ("fleet", {**fleet("eviction", Eviction),  # and each rule's own fields (``param``)
                                   **{k: (f"eviction.{k}", policies.declaration(k)) for k in policies.fields()}}),
    "### 1.7 Demand": ("fleet", fleet("demand", Demand)),
    "### 1.9 The checks": ("fleet", fleet("checks", Checks)),
    "## 4. Buying the fleet": ("buy", {**{k: (k, d) for k, d in declarations(Procurement).items()},
                                       **{f"[{k}]": (None, d) for k, d in declarations(Procurement).items()},
                                       **{f"[{name}] {k}": (f"{name}.{k}", d)
                                          for name, cls in (("checks", BuyChecks), ("failures", Repairs),
                                                            ("spot", SpotMarket))
                                          for k, d in declarations(cls).items()}}),
    "## 5. Serving arithmetic": (None, {**{k: (None, d) for k, d in INPUTS.items()},
                                        **{k: (None, declarations(Serving)[k]) for k in ("model", "gpu")}}),
    "## 6. The autoscaler over a month": ("fleet", fleet("autoscaler", Autoscaler)),
    "## 7. Serving latency under a batcher": (None, {**{k: (None, d) for k, d in declarations(Serving).items()},
                                                     **{k: (None, d) for k, d in SEARCH.items()}, "rate": (None, RATE)}),
    "### 7.1 Arrivals and lengths from real traffic": (None, {**{k: (None, d) for k, d in declarations(Serving).items()},
                                                              "load": (None, LOAD)}),
    "### 7.2 Demand from a request log": ("fleet", fleet("demand", Demand)),
    "### 10.1 Hard failures": ("fleet", fleet("failures", Failures)),
    "### 10.2 Spot preemptions": ("fleet", fleet("spot", Spot)),
}
# A plan's per-chip tables: a row gives the unit of each chip's value "per chip".
PER_CHIP = {"owned", "rent_cap", "rent_spot", "prices", "slots", "spot_slots", "[owned]", "[rent_cap]", "[rent_spot]",
            "[prices]", "[slots]", "[spot_slots]"}
# Tables that show a section under one of its uses: units only (§7.2: a log's demand).
UNITS_ONLY = {"### 7.2 Demand from a request log"}


def doc_tables(header: str) -> list[tuple[str | None, str | None, list[list[str]]]]:
    """``(heading, caption, rows)`` of every table whose header line is ``header``, in
    order: its heading, the first backticked name on the first line of the paragraph
    above it (None where it names none), each row its cells."""
    out, heading, caption, rows, paragraph = [], None, None, None, True
    for line in DOCS.read_text().splitlines():
        if line.startswith("#"):
            heading, caption, rows = line.strip(), None, None
        elif line.strip() == header:
            rows = []
            out.append((heading, caption, rows))
        elif rows is not None and line.startswith("|"):
            if not line.startswith("|---"):
                rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        else:
            rows = None
            if not line.strip():
                paragraph = True  # the next text line starts a paragraph
            elif paragraph:
                names = re.findall(r"`([^`]+)`", line)
                caption, paragraph = (names[0] if names else None), False
    return out


def tables() -> dict[str, list[list[str]]]:
    """``{heading: rows}`` of every field table, each row its five cells."""
    out: dict[str, list[list[str]]] = {}
    for heading, _, rows in doc_tables(HEADER):
        out.setdefault(heading, []).extend(rows)
    return out


def name_of(cell: str) -> str | None:
    """A row's one field, as ``name``, ``[table]`` or ``[checks] name``; None for a row of several."""
    names = re.findall(r"`([^`]+)`", cell.split(" (")[0])
    if len(names) == 1:
        return names[0]
    if len(names) == 2 and names[0] in ("[checks]", "[failures]", "[spot]"):
        return f"{names[0]} {names[1]}"
    return None


def plain(text: str) -> str:
    return text.replace("`", "").strip()


def number(text: str) -> float | None:
    text = text.replace(",", "")
    m = re.fullmatch(r"10\^(-?\d+)", text)
    if m:
        return 10.0 ** int(m.group(1))
    try:
        return float(text)
    except ValueError:
        return None


def default_of(cell: str):
    """The default a cell states (its first word or quoted string), or None when it
    states none as a value (``required``, ``the model's``, ``none``)."""
    text = plain(cell)
    m = re.match(r'"([^"]*)"', text)
    if m:
        return m.group(1)
    first = re.split(r" \(|; | when |, (?!\d{3})", text)[0].strip()
    if first in ("true", "false"):
        return first == "true"
    return number(first)


ROWS = [(heading, row) for heading, rows in tables().items() if heading in TABLES for row in rows
        if name_of(row[0]) in TABLES[heading][1]]


def test_every_table_is_found():
    found = {heading for heading, _ in ROWS}
    assert found == set(TABLES), set(TABLES) - found


@pytest.mark.parametrize("heading, row", ROWS, ids=[f"{h.split(' ', 2)[1]} {r[0]}" for h, r in ROWS])
def test_a_row_is_its_declaration(heading, row):
    kind, known = TABLES[heading]
    dotted, d = known[name_of(row[0])]
    unit, _, default, allowed = row[1:]
    declared_unit = d.unit + (" per chip" if kind == "buy" and name_of(row[0]) in PER_CHIP else "")
    assert plain(unit) == declared_unit, f"unit: docs say {unit!r}, the declaration {declared_unit!r}"
    if heading in UNITS_ONLY:
        return
    stated = default_of(default)
    declared = field_defaults(kind).get(dotted, d.default) if kind is not None else d.default
    if stated is None:  # "required", "the model's", "none": a field with no default of its own
        assert d.default is None or d.default is dataclasses.MISSING or isinstance(d.default, dict), \
            f"default: docs say {default!r}, the declaration {declared!r}"
    elif declared is not None:  # None: the section derives it (n: 1,000, or a replay's rows)
        if isinstance(declared, (int, float)) and not isinstance(declared, bool):
            assert math.isclose(stated, declared, rel_tol=1e-12), (default, declared)
        else:
            assert stated == declared, (default, declared)
    rule = plain(allowed).split("; ")[0]
    kind = getattr(d, "kind", "number")  # a rule's ``Param`` is a number
    if kind == "choice":
        assert set(re.findall(r"[\w-]+", rule.split(" (")[0])) >= set(d.options), (allowed, d.options)
    elif kind != "any":
        assert rule == d.allowed(), f"allowed: docs say {rule!r}, the declaration {d.allowed()!r}"


# -- column tables ---------------------------------------------------------------------
# docs/model.md's column tables (``| column | unit | meaning |``), each under a paragraph
# whose first line names its table in backticks (its file, or ``mc fit``), agree with the declared
# column tables (``mc.engine.Column``): the same columns in the same order, each with
# its unit and meaning.
COLUMN_HEADER = "| column | unit | meaning |"
COLUMN_TABLES = {"x.parquet": telemetry_columns.SAMPLES, "x.truth.parquet": telemetry_columns.TRUTH,
                 "x.dips.parquet": telemetry_columns.DIPS, "mc fit": telemetry_columns.READ}


def column_tables() -> dict[str | None, list[list[str]]]:
    """``{caption: rows}`` of every column table."""
    found = doc_tables(COLUMN_HEADER)
    captions = [caption for _, caption, _ in found]
    assert len(set(captions)) == len(captions), f"column tables named alike: {captions}"
    return {caption: rows for _, caption, rows in found}


def test_every_column_table_is_its_declaration():
    found = column_tables()
    assert set(COLUMN_TABLES) <= set(found), set(COLUMN_TABLES) - set(found)
    for caption, table in COLUMN_TABLES.items():
        docs = [(plain(name), plain(unit), plain(meaning)) for name, unit, meaning in found[caption]]
        declared = [(name, col.units, col.doc) for name, col in table.items()]
        assert docs == declared, caption
