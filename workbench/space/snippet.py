"""Code snippets: a small, safe expression language over kernel objects.

The thesis embeds Rust snippets in its DSL. We do not `eval` Python: a snippet
is parsed into a tiny expression tree that can only read public attributes and
call public methods of the objects bound to `$variables` (`$fun` is the
kernel), combine them with boolean, comparison and arithmetic operators, and
build literals. Names starting with `_` are refused, so a snippet cannot reach
Python internals.

    "$lhs.depends_on($rhs)"      "!$dim.is_static() && $dim.size > 1"
    "$fun.max_threads"           "[1, 2, 4]"
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import SpaceError
from .lexer import Source, TokenStream, tokenize

CMP_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}
_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul,
          "//": operator.floordiv, "/": operator.floordiv, "%": operator.mod}


@dataclass(frozen=True)
class Snippet:
    """A parsed snippet. `text` is what the user wrote, `variables` the
    `$names` it reads (without `$`)."""

    text: str
    variables: frozenset[str]
    _eval: Callable[[dict], Any]
    where: str = ""

    def __call__(self, env: dict) -> Any:
        try:
            return self._eval(env)
        except SpaceError:
            raise
        except Exception as exc:  # a kernel method failed: say which snippet
            raise SpaceError(f"snippet \"{self.text}\"{self.where} failed: "
                             f"{type(exc).__name__}: {exc}") from exc

    def __repr__(self) -> str:
        return f'"{self.text}"'


def parse_snippet(src: Source, start: int, end: int) -> Snippet:
    """Parse src.text[start:end] (the inside of a quoted string)."""
    ts = TokenStream(src, tokenize(src, start, end, comments=False))
    if ts.at("eof"):
        raise ts.error("empty code snippet")
    variables: set[str] = set()
    fn = _parse_or(ts, variables)
    if not ts.at("eof"):
        raise ts.error(f"unexpected {ts.tok.value!r} in code snippet")
    line, col = src.linecol(start)
    return Snippet(src.text[start:end], frozenset(variables), fn,
                   f" ({src.name}:{line}:{col})")


def _or(a, b):
    return lambda e: bool(a(e)) or bool(b(e))


def _and(a, b):
    return lambda e: bool(a(e)) and bool(b(e))


def _binary(op, a, b):
    return lambda e: op(a(e), b(e))


def _parse_or(ts, vs):
    left = _parse_and(ts, vs)
    while ts.accept("op", "||"):
        right = _parse_and(ts, vs)
        left = _or(left, right)
    return left


def _parse_and(ts, vs):
    left = _parse_not(ts, vs)
    while ts.accept("op", "&&"):
        right = _parse_not(ts, vs)
        left = _and(left, right)
    return left


def _parse_not(ts, vs):
    if ts.accept("op", "!") or (ts.at_kw("not") and ts.next()):
        inner = _parse_not(ts, vs)
        return lambda e: not inner(e)
    return _parse_cmp(ts, vs)


def _parse_cmp(ts, vs):
    left = _parse_add(ts, vs)
    if ts.tok.kind == "op" and ts.tok.value in CMP_OPS:
        op = CMP_OPS[ts.next().value]
        right = _parse_add(ts, vs)
        return lambda e: op(left(e), right(e))
    return left


def _parse_add(ts, vs):
    left = _parse_mul(ts, vs)
    while ts.tok.kind == "op" and ts.tok.value in ("+", "-"):
        op = _ARITH[ts.next().value]
        right = _parse_mul(ts, vs)
        left = _binary(op, left, right)
    return left


def _parse_mul(ts, vs):
    left = _parse_unary(ts, vs)
    while ts.tok.kind == "op" and ts.tok.value in ("*", "/", "//", "%"):
        op = _ARITH[ts.next().value]
        right = _parse_unary(ts, vs)
        left = _binary(op, left, right)
    return left


def _parse_unary(ts, vs):
    if ts.accept("op", "-"):
        inner = _parse_unary(ts, vs)
        return lambda e: -inner(e)
    return _parse_postfix(ts, vs)


def _check_name(ts, tok):
    if tok.value.startswith("_"):
        raise ts.error(f"snippets may not use private names ({tok.value!r})", tok)


def _parse_postfix(ts, vs):
    fn = _parse_primary(ts, vs)
    while True:
        if ts.accept("op", "."):
            tok = ts.expect("ident", what="an attribute name")
            _check_name(ts, tok)
            name = tok.value
            if ts.accept("op", "("):
                args = _parse_args(ts, vs, ")")
                fn = _method_call(fn, name, args)
            else:
                fn = _attribute(fn, name)
        elif ts.accept("op", "["):
            idx = _parse_or(ts, vs)
            ts.expect("op", "]")
            fn = _binary(operator.getitem, fn, idx)
        else:
            return fn


def _attribute(obj_fn, name):
    def get(env):
        obj = obj_fn(env)
        val = getattr(obj, name)
        if callable(val) and not isinstance(val, type):
            raise SpaceError(f"{type(obj).__name__}.{name} is a method: call it as .{name}()")
        return val
    return get


def _method_call(obj_fn, name, args):
    def call(env):
        obj = obj_fn(env)
        meth = getattr(obj, name)
        if not callable(meth):
            raise SpaceError(f"{type(obj).__name__}.{name} is not a method: "
                             f"write .{name} without ()")
        return meth(*(a(env) for a in args))
    return call


def _parse_args(ts, vs, close):
    args = []
    if ts.accept("op", close):
        return args
    while True:
        args.append(_parse_or(ts, vs))
        if ts.accept("op", close):
            return args
        ts.expect("op", ",", what=f"',' or {close!r}")


def _parse_primary(ts, vs):
    tok = ts.tok
    if tok.kind == "var":
        ts.next()
        name = tok.value[1:]
        vs.add(name)

        def lookup(env, name=name, tok=tok):
            try:
                return env[name]
            except KeyError:
                raise SpaceError(f"snippet uses ${name}, which is not bound here") from None
        return lookup
    if tok.kind == "int":
        ts.next()
        v = int(tok.value)
        return lambda e: v
    if tok.kind == "string":
        ts.next()
        s = tok.value
        return lambda e: s
    if tok.kind == "ident":
        ts.next()
        consts = {"true": True, "false": False, "none": None}
        if tok.value in consts:
            v = consts[tok.value]
            return lambda e: v
        raise ts.error(f"unknown name {tok.value!r}: kernel objects are reached "
                       "through $variables (e.g. $fun.attribute)", tok)
    if ts.accept("op", "("):
        inner = _parse_or(ts, vs)
        ts.expect("op", ")")
        return inner
    if ts.accept("op", "["):
        items = _parse_args(ts, vs, "]")
        return lambda e: [i(e) for i in items]
    raise ts.error(f"unexpected {tok.value or tok.kind!r} in code snippet")
