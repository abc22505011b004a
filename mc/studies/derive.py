"""A sweep's derived columns (``[derive]``): an expression over the per-month outputs,
checked before anything evaluates it.

An expression may hold only the outputs' column names (``idle_burn``, ``bill``, ...),
numbers, arithmetic (``+ - * / // % **``, a sign), comparisons (``< <= > >= == !=``),
``&``, ``|``, ``~``, ``and``, ``or``, ``not``, parentheses and calls of the functions in
``FUNCTIONS`` by name. Anything else (an attribute, an index, a string, a name that is
no column, a keyword argument) is a one-line error naming the field before any month
runs; what passes is evaluated by ``pandas.DataFrame.eval`` over the month's columns.
"""

from __future__ import annotations

import ast
from typing import Any, Iterable

import numpy as np

from .. import _validate as v
from ..fleet import autoscaler, month

# Every per-month column a sweep's month can have (a month's, an autoscaled month's).
OUTPUTS = tuple(dict.fromkeys(month.OUTPUTS + autoscaler.OUTPUTS))

# The functions an expression may call (each pandas.eval's function of that name).
FUNCTIONS = ("abs", "sqrt", "exp", "expm1", "log", "log1p", "log10", "floor", "ceil")
ALLOWED = ("the outputs' columns, numbers, + - * / // % **, comparisons, & | ~ and or not, parentheses and "
           f"the functions {', '.join(FUNCTIONS)}")
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr,
              ast.UAdd, ast.USub, ast.Invert, ast.Not, ast.And, ast.Or,
              ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Name, ast.Load, ast.Constant,
          ast.Call, *_OPERATORS)


def check(field: str, expr: Any, columns: Iterable[str]) -> str:
    """``expr`` when it is an expression of ``columns`` that holds only what the
    module allows; else a one-line ``ParamError`` naming ``field`` and what it met."""
    if not isinstance(expr, str) or not expr.strip():
        v.fail(field, expr, "must be an expression over the outputs, e.g. 'idle_burn / bill'")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as err:
        v.fail(field, expr, f"is not an expression ({err.msg}); allowed: {ALLOWED}")
    known = list(dict.fromkeys(map(str, columns)))
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            v.fail(field, expr, f"holds {_what(node)}; allowed: {ALLOWED}")
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool)
                                               or not isinstance(node.value, (int, float))):
            v.fail(field, expr, f"holds {node.value!r}, which is not a number; allowed: {ALLOWED}")
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS) or node.keywords:
                v.fail(field, expr, f"calls {ast.unparse(node.func)}{' with a keyword' if node.keywords else ''}; "
                       f"an expression may call only {', '.join(FUNCTIONS)}, by name")
        elif isinstance(node, ast.Name) and node.id not in known and not _called(tree, node):
            v.fail(field, expr, f"names {node.id}, which is no output's column; the columns: {', '.join(known)}")
    return expr


def outputs(scenario: Any) -> tuple[str, ...]:
    """The per-month columns a scenario's month has: §6's with an ``[autoscaler]``,
    else §1's."""
    return autoscaler.OUTPUTS if scenario.autoscaler is not None else month.OUTPUTS


def evaluate(field: str, expr: str, frame: Any) -> np.ndarray:
    """(months,) float64: ``expr`` (``check``ed against ``frame``'s columns first)
    evaluated over ``frame``, one row per month; a one-line error where it cannot be."""
    check(field, expr, frame.columns)
    try:
        col = frame.eval(expr)
    except Exception as err:  # pandas raises many kinds; report one line
        v.fail(field, expr, f"could not be evaluated over the outputs ({type(err).__name__}: {err})")
    return np.asarray(col, dtype=np.float64)


def _called(tree: ast.AST, name: ast.Name) -> bool:
    return any(isinstance(n, ast.Call) and n.func is name for n in ast.walk(tree))


def _what(node: ast.AST) -> str:
    """A node as an error names it: ``an attribute (bill.__class__)``."""
    if isinstance(node, (ast.operator, ast.unaryop, ast.cmpop, ast.boolop)):
        return f"an operator that is not allowed ({type(node).__name__})"
    kinds = {ast.Attribute: "an attribute", ast.Subscript: "an index", ast.Lambda: "a lambda",
             ast.List: "a list", ast.Tuple: "a tuple", ast.Dict: "a table", ast.Set: "a set",
             ast.IfExp: "an if", ast.NamedExpr: "an assignment", ast.JoinedStr: "a string",
             ast.Starred: "a starred value"}
    kind = next((w for k, w in kinds.items() if isinstance(node, k)), f"a {type(node).__name__}")
    return f"{kind} ({ast.unparse(node)})"


__all__ = ["ALLOWED", "FUNCTIONS", "OUTPUTS", "check", "evaluate", "outputs"]
