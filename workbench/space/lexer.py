"""Tokenizer shared by the decision-space language and its code snippets."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from ..errors import SpaceSyntaxError

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<comment>//[^\n]*|\#[^\n]*)
  | (?P<var>\$[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<int>[0-9]+)
  | (?P<dstring>"[^"\n]*")
  | (?P<sstring>'[^'\n]*')
  | (?P<op><->|\|\||&&|==|!=|<=|>=|//|[()\[\],:=|/<>!.+\-*%])
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class Token:
    kind: str  # var, ident, int, string, op, eof
    value: str
    pos: int  # offset in the source text


class Source:
    """A text with a name, able to turn offsets into line/column."""

    def __init__(self, text: str, name: str = "<space>"):
        self.text = text
        self.name = name
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def linecol(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._starts, pos)
        return line, pos - self._starts[line - 1] + 1

    def error(self, message: str, pos: int) -> SpaceSyntaxError:
        line, col = self.linecol(pos)
        return SpaceSyntaxError(message, self.name, line, col, self.text)


def tokenize(src: Source, start: int = 0, end: int | None = None,
             comments: bool = True) -> list[Token]:
    """Tokens of src.text[start:end]; positions are offsets in the whole text."""
    text = src.text
    end = len(text) if end is None else end
    pos = start
    out: list[Token] = []
    while pos < end:
        m = _TOKEN.match(text, pos, end)
        if m is None:
            raise src.error(f"unexpected character {text[pos]!r}", pos)
        kind = m.lastgroup
        value = m.group()
        if kind == "comment" and not comments:
            raise src.error("comments are not allowed here", pos)
        if kind in ("dstring", "sstring"):
            out.append(Token("string", value[1:-1], pos))
        elif kind not in ("ws", "comment"):
            out.append(Token(kind, value, pos))
        pos = m.end()
    out.append(Token("eof", "", end))
    return out


class TokenStream:
    def __init__(self, src: Source, tokens: list[Token]):
        self.src = src
        self.toks = tokens
        self.i = 0

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, kind: str, value: str | None = None) -> bool:
        t = self.tok
        return t.kind == kind and (value is None or t.value == value)

    def at_kw(self, *words: str) -> bool:
        return self.tok.kind == "ident" and self.tok.value in words

    def next(self) -> Token:
        t = self.tok
        self.i += 1
        return t

    def accept(self, kind: str, value: str | None = None) -> Token | None:
        if self.at(kind, value):
            return self.next()
        return None

    def expect(self, kind: str, value: str | None = None, what: str | None = None) -> Token:
        if self.at(kind, value):
            return self.next()
        want = what or (repr(value) if value else kind)
        got = self.tok.value or self.tok.kind
        raise self.src.error(f"expected {want}, found {got!r}", self.tok.pos)

    def error(self, message: str, tok: Token | None = None) -> SpaceSyntaxError:
        return self.src.error(message, (tok or self.tok).pos)
