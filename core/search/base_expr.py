"""Obsidian Bases' expression language, read with Python's own parser and evaluated safely.

A Bases filter or formula (`status != "done"`, `file.inFolder("Projects") && rating > 3`,
`!file.hasTag("archived")`) is JavaScript-like. Its operators are respelled for Python
(`&&` → `and`, `||` → `or`, `!` → `not`, `true` → `True`) outside string literals, then
`ast.parse` reads it; the evaluator walks only the node kinds listed here. Anything else —
an unknown function or method, date arithmetic, `this` — raises `Unsupported` with its
name, which the Base reports: never a silent "matches everything" or "matches nothing".
"""

from __future__ import annotations

import ast
import datetime as dt
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

_JS_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|&&|\|\||!(?!=)|\btrue\b|\bfalse\b|\bnull\b|\bif(?=\s*\()')
_RESPELL = {"&&": " and ", "||": " or ", "!": " not ", "true": "True", "false": "False", "null": "None", "if": "if_"}  # `if` is a Python keyword
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_ARITH: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: operator.mod,
}


class Unsupported(Exception):
    """A construct the evaluator does not know; `args[0]` names it (`file.hasLink`, `date arithmetic`)."""


@dataclass(frozen=True, slots=True)
class Row:
    """What an expression can see of one file."""

    path: str  # vault-relative
    props: Mapping[str, Any]  # note properties: str, float, bool, dt.date, or lists of those
    tags: tuple[str, ...] = ()
    mtime: dt.datetime | None = None
    ctime: dt.datetime | None = None
    size: int = 0
    formulas: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def folder(self) -> str:
        return self.path.rpartition("/")[0]

    @property
    def ext(self) -> str:
        name = self.name
        return name.rsplit(".", 1)[-1].lower() if "." in name else ""

    @property
    def basename(self) -> str:
        name = self.name
        return name.rsplit(".", 1)[0] if "." in name else name


def compile_expression(text: str) -> ast.Expression:
    """The expression parsed (operators respelled for Python). Raises `Unsupported` on a syntax error."""
    spelled = _JS_TOKENS.sub(lambda m: _RESPELL.get(m.group(0), m.group(0)), str(text)).strip()
    try:
        return ast.parse(spelled, mode="eval")
    except SyntaxError as exc:
        raise Unsupported(f"unreadable expression {text!r} ({exc.msg})") from None


class Evaluator:
    """Evaluates compiled expressions against one `Row`; `formulas` are compiled formula bodies."""

    def __init__(self, formulas: Mapping[str, ast.Expression] | None = None, today: dt.date | None = None) -> None:
        self.formulas = dict(formulas or {})
        self.today = today or dt.date.today()

    def value(self, tree: ast.Expression, row: Row) -> Any:
        return self._eval(tree.body, row)

    def _eval(self, node: ast.AST, row: Row) -> Any:  # noqa: C901, PLR0911 - one branch per node kind reads best
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BoolOp):
            values = [truthy(self._eval(v, row)) for v in node.values]
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.UnaryOp):
            operand = self._eval(node.operand, row)
            if isinstance(node.op, ast.Not):
                return not truthy(operand)
            if isinstance(node.op, ast.USub) and isinstance(operand, (int, float)):
                return -operand
            raise Unsupported(f"operator {type(node.op).__name__}")
        if isinstance(node, ast.Compare):
            return self._compare(node, row)
        if isinstance(node, ast.BinOp):
            return self._arith(node, row)
        if isinstance(node, ast.Name):
            return self._name(node.id, row)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, row)
        if isinstance(node, ast.Call):
            return self._call(node, row)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self._eval(e, row) for e in node.elts]
        raise Unsupported(f"expression {type(node).__name__}")

    def _compare(self, node: ast.Compare, row: Row) -> bool:
        left = self._eval(node.left, row)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            fn = _COMPARE.get(type(op))
            if fn is None:
                raise Unsupported(f"comparison {type(op).__name__}")
            right = self._eval(right_node, row)
            if not compare(fn, left, right):
                return False
            left = right
        return True

    def _arith(self, node: ast.BinOp, row: Row) -> Any:
        fn = _ARITH.get(type(node.op))
        left, right = self._eval(node.left, row), self._eval(node.right, row)
        if fn is None:
            raise Unsupported(f"operator {type(node.op).__name__}")
        if isinstance(left, (dt.date, dt.datetime)) or isinstance(right, (dt.date, dt.datetime)):
            raise Unsupported("date arithmetic")
        if left is None or right is None:
            return None
        try:
            return fn(left, right)
        except (TypeError, ZeroDivisionError):
            return None

    def _name(self, name: str, row: Row) -> Any:
        if name in ("file", "note", "formula"):
            return _Namespace(name)
        if name == "this":
            raise Unsupported("this")
        return row.props.get(name.lower())

    def _attribute(self, node: ast.Attribute, row: Row) -> Any:
        base = self._eval(node.value, row)
        if isinstance(base, _Namespace):
            return self._field(base.name, node.attr, row)
        raise Unsupported(f"property access .{node.attr}")

    def _field(self, space: str, attr: str, row: Row) -> Any:
        if space == "note":
            return row.props.get(attr.lower())
        if space == "formula":
            if attr not in self.formulas:
                raise Unsupported(f"formula.{attr} (not defined)")
            if attr not in row.formulas:
                row.formulas[attr] = None  # a formula naming itself reads null, not forever
                row.formulas[attr] = self.value(self.formulas[attr], row)
            return row.formulas[attr]
        fields = {
            "name": row.name, "basename": row.basename, "path": row.path, "folder": row.folder, "ext": row.ext,
            "tags": list(row.tags), "mtime": row.mtime, "ctime": row.ctime, "size": row.size,
        }  # fmt: skip
        if attr not in fields:
            raise Unsupported(f"file.{attr}")
        return fields[attr]

    def _call(self, node: ast.Call, row: Row) -> Any:
        args = [self._eval(a, row) for a in node.args]
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "file":
            return file_function(func.attr, row, args)
        if isinstance(func, ast.Attribute):
            return value_method(func.attr, self._eval(func.value, row), args)
        if isinstance(func, ast.Name):
            return self._function(func.id, args)
        raise Unsupported("call")

    def _function(self, name: str, args: list[Any]) -> Any:
        if name == "if_" and len(args) in (2, 3):
            return args[1] if truthy(args[0]) else (args[2] if len(args) == 3 else None)
        if name == "today" and not args:
            return self.today
        if name == "now" and not args:
            return dt.datetime.combine(self.today, dt.datetime.now().time())
        if name == "date" and len(args) == 1:
            return as_date(args[0])
        if name == "number" and len(args) == 1:
            return as_number(args[0])
        if name in ("min", "max") and args:
            nums = [as_number(a) for a in args]
            return (min if name == "min" else max)(n for n in nums if n is not None) if any(n is not None for n in nums) else None
        raise Unsupported(f"{name}()")


@dataclass(frozen=True, slots=True)
class _Namespace:
    name: str


def file_function(name: str, row: Row, args: list[Any]) -> bool:
    """`file.inFolder()`, `file.hasTag()`, `file.hasProperty()`; others are unsupported."""
    if name == "inFolder" and len(args) == 1:
        folder = str(args[0]).strip("/")
        return not folder or row.path.startswith(folder + "/")
    if name == "hasTag" and args:
        tags = {t.lower() for t in row.tags}
        wanted = [str(a).lstrip("#").lower() for a in args]
        return any(w in tags or any(t.startswith(w + "/") for t in tags) for w in wanted)
    if name == "hasProperty" and len(args) == 1:
        return str(args[0]).lower() in row.props
    raise Unsupported(f"file.{name}()")


def value_method(name: str, value: Any, args: list[Any]) -> Any:  # noqa: PLR0911 - one line per method
    """String and list methods the Bases language shares with JavaScript."""
    if name == "contains" and len(args) == 1:
        if isinstance(value, list):
            return any(norm(v) == norm(args[0]) for v in value)
        return value is not None and norm(args[0]) in norm(value)
    if name in ("startsWith", "endsWith") and len(args) == 1 and value is not None:
        text, part = norm(value), norm(args[0])
        return text.startswith(part) if name == "startsWith" else text.endswith(part)
    if name == "isEmpty" and not args:
        return value is None or value in ("", [])
    if name in ("lower", "toLowerCase") and not args:
        return None if value is None else str(value).lower()
    if name == "toFixed" and len(args) == 1:
        number = as_number(value)
        return None if number is None else f"{number:.{int(args[0])}f}"
    if name == "length" and not args:
        return None if value is None else len(value)
    raise Unsupported(f".{name}()")


def truthy(value: Any) -> bool:
    return value not in (None, "", [], 0, False)


def norm(value: Any) -> str:
    return str(value).strip().lower()


def compare(fn: Callable[[Any, Any], bool], left: Any, right: Any) -> bool:
    """Compare as Bases does: numbers as numbers, dates as dates, text case-insensitively;
    a list equals a value it holds; a missing value equals only null."""
    if isinstance(left, list) and not isinstance(right, list):
        hits = [compare(fn, item, right) for item in left]
        return any(hits) if fn is not operator.ne else all(hits)
    if left is None or right is None:
        return fn(left is None, right is None) if fn in (operator.eq, operator.ne) else False
    for convert in (_as_pair_number, _as_pair_date):
        pair = convert(left, right)
        if pair is not None:
            return fn(*pair)
    return fn(norm(left), norm(right))


def _as_pair_number(left: Any, right: Any) -> tuple[float, float] | None:
    if isinstance(left, bool) or isinstance(right, bool):
        return None
    a, b = as_number(left), as_number(right)
    return (a, b) if a is not None and b is not None and isinstance(left, (int, float)) | isinstance(right, (int, float)) else None


def _as_pair_date(left: Any, right: Any) -> tuple[str, str] | None:
    if not isinstance(left, (dt.date, dt.datetime)) and not isinstance(right, (dt.date, dt.datetime)):
        return None
    a, b = as_date(left), as_date(right)
    return (a.isoformat(), b.isoformat()) if a is not None and b is not None else None


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def as_date(value: Any) -> dt.datetime | None:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time())
    try:
        return dt.datetime.fromisoformat(str(value).strip())
    except ValueError:
        return None
