"""``mc._json``: the one JSON writer. Strict JSON (no NaN or Infinity: ``null``),
NumPy values as plain data, and anything else refused rather than written wrong."""

import json
import math
from enum import IntEnum

import numpy as np
import pytest

from mc import _json


def strict(text: str):
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in strict JSON"))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float32("nan"), np.float64("-inf"),
                                 np.float16("inf")])
def test_non_finite_numbers_are_null(bad):
    assert _json.dumps(bad) == "null"
    assert strict(_json.dumps({"a": bad, "b": [1.0, bad], "c": (bad,)})) == {"a": None, "b": [1.0, None], "c": [None]}


def test_nested_deeply_and_in_arrays():
    obj = {"figures": {"itl_mean": {"median": np.float32("nan"), "p5": math.nan, "p95": 0.25}},
           "rows": [{"x": np.array([1.0, np.nan, np.inf])}, [np.array([[np.nan, 2]])]]}
    assert strict(_json.dumps(obj)) == {"figures": {"itl_mean": {"median": None, "p5": None, "p95": 0.25}},
                                        "rows": [{"x": [1.0, None, None]}, [[[None, 2.0]]]]}


def test_numpy_values_become_plain_data():
    obj = {"i": np.int32(7), "u": np.uint64(2**63), "f": np.float32(0.5), "b": np.bool_(True),
           "a": np.arange(3, dtype=np.int64), "e": np.zeros((0,)), "s": np.str_("x"), "z": np.float64(1e300)}
    assert strict(_json.dumps(obj)) == {"i": 7, "u": 2**63, "f": 0.5, "b": True, "a": [0, 1, 2], "e": [], "s": "x",
                                        "z": 1e300}
    assert _json.dumps(np.bool_(False)) == "false" and _json.dumps(True) == "true"  # not 1 or 0


def test_plain_values_keep_their_types():
    class Level(IntEnum):
        HIGH = 3

    out = _json.plain({"n": 3, "x": 2.5, "s": "t", "none": None, "flag": False, "level": Level.HIGH})
    assert out == {"n": 3, "x": 2.5, "s": "t", "none": None, "flag": False, "level": 3}
    assert type(out["n"]) is int and type(out["x"]) is float and type(out["level"]) is int
    assert type(_json.plain(np.float64(2.0))) is float


def test_dict_keys():
    assert strict(_json.dumps({np.int64(1): "a", 2.5: "b", math.nan: "c"})) == {"1": "a", "2.5": "b", "nan": "c"}


def test_array_likes_go_through_numpy():
    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return np.array([1.0, np.nan])

    assert strict(_json.dumps({"a": ArrayLike()})) == {"a": [1.0, None]}


def test_jax_arrays():
    jnp = pytest.importorskip("jax.numpy")
    assert strict(_json.dumps({"a": jnp.array([1.0, jnp.nan]), "b": jnp.float32(2)})) == {"a": [1.0, None], "b": 2.0}


def test_indent_and_options():
    assert _json.dumps({"a": 1}) == '{\n  "a": 1\n}'
    assert _json.dumps({"b": 1, "a": [1, 2]}, indent=None, sort_keys=True, separators=(",", ":")) == '{"a":[1,2],"b":1}'


@pytest.mark.parametrize("bad", [object(), {1, 2}, 1 + 2j, np.complex64(1), b"bytes"])
def test_what_is_not_json_data_is_refused(bad):
    with pytest.raises((TypeError, ValueError)):
        _json.dumps({"x": bad})


def test_a_leftover_nan_is_an_error_not_invalid_json(monkeypatch):
    class Sneaky(float):  # a float subclass, still NaN
        pass

    assert _json.dumps({"x": Sneaky("nan")}) == '{\n  "x": null\n}'
    # Were a NaN to slip past the conversion (a bug), json refuses it instead of
    # writing the invalid token.
    monkeypatch.setattr(_json, "plain", lambda obj: obj)
    with pytest.raises(ValueError):
        _json.dumps({"x": math.nan})


def test_imports_nothing_of_mc_above_validate():
    import ast
    from pathlib import Path

    tree = ast.parse(Path(_json.__file__).read_text())
    mods = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    mods |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert all(not m.startswith("mc") or m == "mc._validate" for m in mods), mods
    assert not any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(tree))  # no relative imports
