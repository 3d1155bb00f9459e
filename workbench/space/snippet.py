"""Code snippets: a small, safe expression language over kernel objects.

The thesis embeds Rust snippets in its DSL. We do not `eval` Python: a snippet
is parsed into a tiny expression tree that can read attributes and call
methods of the objects bound to `$variables` (`$fun` is the kernel), combine
numbers with arithmetic, anything with comparisons and booleans, and build
literals. It is a sandbox by construction (issue 20):

- an attribute or method is reachable only if the object's class declares it
  in `snippet_api` (the kernel classes list their pure queries, and the
  trigger actions of the spaces); nothing else, so no `__globals__`, no
  `operands.clear()`;
- a builtin value (str, int, list, dict, ...) has no reachable attribute or
  method at all: no `str.format`, no `ljust`;
- arithmetic only on numbers, with results bounded by ±2^64; indexing only
  of lists, tuples, dicts and strings; integer literals within ±2^63; a
  snippet at most MAX_LENGTH characters and MAX_DEPTH levels deep.

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

MAX_LENGTH = 2000  # characters of one snippet
MAX_DEPTH = 50  # nesting of parentheses, brackets, calls and unary operators
MAX_LITERAL = 2**63
MAX_NUMBER = 2**64  # magnitude of an arithmetic result
_BUILTINS = (str, bytes, int, float, bool, list, tuple, dict, set, frozenset, type(None))
_NUMBERS = (int, float)

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
    if end - start > MAX_LENGTH:
        raise src.error(f"code snippet of {end - start} characters; at most {MAX_LENGTH}",
                        start)
    ts = TokenStream(src, tokenize(src, start, end, comments=False))
    if ts.at("eof"):
        raise ts.error("empty code snippet")
    variables = _Vars()
    fn = _parse_or(ts, variables)
    if not ts.at("eof"):
        raise ts.error(f"unexpected {ts.tok.value!r} in code snippet")
    line, col = src.linecol(start)
    return Snippet(src.text[start:end], frozenset(variables), fn,
                   f" ({src.name}:{line}:{col})")


class _Vars(set):
    """The `$names` a snippet reads, and how deep the parser is."""
    depth = 0


def _deeper(ts, vs) -> None:
    vs.depth += 1
    if vs.depth > MAX_DEPTH:
        raise ts.error(f"code snippet nested more than {MAX_DEPTH} levels deep")


def _or(a, b):
    return lambda e: bool(a(e)) or bool(b(e))


def _and(a, b):
    return lambda e: bool(a(e)) and bool(b(e))


def _binary(op, a, b):
    return lambda e: op(a(e), b(e))


def _number(x, what: str):
    if not isinstance(x, _NUMBERS):
        raise SpaceError(f"{what} takes numbers, got {type(x).__name__}")
    return x


def _arith(op, sym, a, b):
    """Arithmetic on numbers only (no string or list repetition), bounded."""
    def run(e):
        out = op(_number(a(e), sym), _number(b(e), sym))
        if abs(out) > MAX_NUMBER:
            raise SpaceError(f"arithmetic result beyond ±2^64 ({sym})")
        return out
    return run


def _index(a, b):
    def run(e):
        seq, key = a(e), b(e)
        if not isinstance(seq, (list, tuple, dict, str)) or isinstance(key, bool) \
                or not isinstance(key, (int, str)):
            raise SpaceError(f"snippets index lists, tuples, dicts and strings by int or str, "
                             f"not {type(seq).__name__}[{type(key).__name__}]")
        return seq[key]
    return run


def _parse_or(ts, vs):
    _deeper(ts, vs)
    left = _parse_and(ts, vs)
    while ts.accept("op", "||"):
        right = _parse_and(ts, vs)
        left = _or(left, right)
    vs.depth -= 1
    return left


def _parse_and(ts, vs):
    left = _parse_not(ts, vs)
    while ts.accept("op", "&&"):
        right = _parse_not(ts, vs)
        left = _and(left, right)
    return left


def _parse_not(ts, vs):
    if ts.accept("op", "!") or (ts.at_kw("not") and ts.next()):
        _deeper(ts, vs)
        inner = _parse_not(ts, vs)
        vs.depth -= 1
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
        sym = ts.next().value
        right = _parse_mul(ts, vs)
        left = _arith(_ARITH[sym], sym, left, right)
    return left


def _parse_mul(ts, vs):
    left = _parse_unary(ts, vs)
    while ts.tok.kind == "op" and ts.tok.value in ("*", "/", "//", "%"):
        sym = ts.next().value
        right = _parse_unary(ts, vs)
        left = _arith(_ARITH[sym], sym, left, right)
    return left


def _parse_unary(ts, vs):
    if ts.accept("op", "-"):
        _deeper(ts, vs)
        inner = _parse_unary(ts, vs)
        vs.depth -= 1
        return lambda e: -_number(inner(e), "-")
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
            fn = _index(fn, idx)
        else:
            return fn


def allowed(obj, name: str) -> bool:
    """Whether a snippet may read `name` of `obj`: never on a builtin value,
    else only a name its class declares in `snippet_api`."""
    if isinstance(obj, _BUILTINS) or isinstance(obj, type) or name.startswith("_"):
        return False
    api = getattr(type(obj), "snippet_api", None)
    if isinstance(api, property):  # declared per object (e.g. a target's limits)
        api = getattr(obj, "snippet_api", None)
    return isinstance(api, (frozenset, set, tuple)) and name in api


def _check_allowed(obj, name: str) -> None:
    if allowed(obj, name):
        return
    kind = type(obj).__name__
    if isinstance(obj, _BUILTINS):
        raise SpaceError(f"snippets call no method and read no attribute of a {kind} value "
                         f"(.{name})")
    raise SpaceError(f"{kind}.{name} is not declared in {kind}.snippet_api (the attributes "
                     "and pure methods snippets may use)")


def _attribute(obj_fn, name):
    def get(env):
        obj = obj_fn(env)
        _check_allowed(obj, name)
        val = getattr(obj, name)
        if callable(val) and not isinstance(val, type):
            raise SpaceError(f"{type(obj).__name__}.{name} is a method: call it as .{name}()")
        return val
    return get


def _method_call(obj_fn, name, args):
    def call(env):
        obj = obj_fn(env)
        _check_allowed(obj, name)
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
        v = int(tok.value) if len(tok.value) <= 20 else MAX_LITERAL + 1
        if abs(v) > MAX_LITERAL:
            raise ts.error("integer literal beyond ±2^63 in code snippet", tok)
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
        _deeper(ts, vs)
        items = _parse_args(ts, vs, "]")
        vs.depth -= 1
        return lambda e: [i(e) for i in items]
    raise ts.error(f"unexpected {tok.value or tok.kind!r} in code snippet")
