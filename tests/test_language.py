"""The decision-space language: syntax, errors with line and column, type
checking, snippets, and kernel-interface checks."""

from __future__ import annotations

import pytest

import workbench as wb
from workbench.space import Space, parse
from workbench.space.lexer import Source
from workbench.space.snippet import parse_snippet

HEADER = """
set Insts:
  iterator = "$fun.instructions()"
end
"""


def space(text):
    return Space.from_text(HEADER + text, "t.space")


def test_listing_3_12_parses_into_choices_and_constraints():
    sp = wb.load_space("basic_block")
    assert [c.name for c in sp.visible_choices()] == ["order"]
    order = sp.choices["order"]
    assert order.values == ("BEFORE", "AFTER") and order.inverse == (1, 0)
    # transitivity + the requires of BEFORE
    assert len(sp.constraints) == 2


@pytest.mark.parametrize("text, line, col, fragment", [
    ("choice enum x($a in Insts):\n  value A\nend", 7, 1, "expected ':'"),
    ("choice enum x($a in Insts):\n  value A:\n", 7, 1, "expected 'end'"),
    ("require forall $a in Insts: x($a) is", 5, 37, "a value name"),
    ("choice enum x($a Insts):\nend", 5, 18, "expected 'in'"),
    ('require forall $a in Insts: "$a.ok() &&"', 5, 40, "unexpected"),
    ('require forall $a in Insts: "$a._secret"', 5, 33, "private names"),
    ("choice frob x():\nend", 5, 8, "'enum', 'integer' or 'counter'"),
    ("choice enum x($a in Insts):\n  value A: @\nend", 6, 12, "unexpected character"),
])
def test_parse_errors_point_at_line_and_column(text, line, col, fragment):
    with pytest.raises(wb.SpaceSyntaxError) as e:
        space(text)
    err = e.value
    assert (err.line, err.col) == (line, col), str(err)
    assert fragment in str(err)
    assert "t.space" in str(err) and "^" in str(err)


@pytest.mark.parametrize("text, fragment", [
    ("require forall $a in Nope: x($a) is A", "unknown set Nope"),
    ("choice enum x($a in Insts):\n value A:\nend\nrequire forall $a in Insts: x($a) is B",
     "B is not a value of x"),
    ("choice enum x($a in Insts):\n value A:\nend\nrequire forall $a in Insts: y($a) is A",
     "unknown choice y"),
    ("choice enum x($a in Insts):\n value A:\nend\nrequire forall $a in Insts: x($a, $a) is A",
     "takes 1 arguments"),
    ("choice enum x($a in Insts):\n value A:\nend\nrequire x($b) is A", "$b is not bound"),
    ("choice enum x($a in Insts):\n value A:\n symmetric\nend", "two parameters"),
    ("choice half counter c():\n sum 1\nend\nrequire c() >= 3", "half counter"),
    (("choice enum x($a in Insts):\n value A:\nend\n"
      "choice integer n($a in Insts):\n \"[1, 2]\"\nend\n"
      "require forall $a in Insts: x($a) == n($a)"), "compare only with"),
    ("set Sub subsetof Insts:\nend", "needs 'iterator' or 'from_superset'"),
    # a set's error names the line it is defined on, as a constraint's does
    ("\n\nset Sub subsetof Nothing:\n iterator = \"$fun.x()\"\nend",
     "set Sub (t.space:7): unknown superset Nothing"),  # HEADER takes 4 lines
    ("choice enum x($a in Insts):\n value A:\n alias A = A:\nend", "clashes"),
    ('require forall $a in Insts: "$b.ok()"', "unbound $b"),
])
def test_type_errors_name_what_is_wrong(text, fragment):
    with pytest.raises(wb.SpaceError) as e:
        space(text)
    assert fragment in str(e.value)


def test_snippets_read_attributes_and_call_methods_only():
    src = Source('"$x.size * 2 + $fun.bonus($x) >= 10 && !$x.flag"')
    s = parse_snippet(src, 1, len(src.text) - 1)

    class X:
        snippet_api = frozenset({"size", "flag"})
        size = 4
        flag = False

    class F:
        snippet_api = frozenset({"bonus"})

        def bonus(self, x):
            return x.size

    assert s({"x": X(), "fun": F()}) is True
    assert s.variables == {"x", "fun"}
    meth = Source('"$fun.bonus"')
    with pytest.raises(wb.SpaceError, match="is a method"):
        parse_snippet(meth, 1, len(meth.text) - 1)({"fun": F()})
    bad = Source('"__import__(1)"')
    with pytest.raises(wb.SpaceSyntaxError):
        parse_snippet(bad, 1, len(bad.text) - 1)


def test_every_construct_parses():
    with open("tests/spaces/loops.space") as f:
        spec = parse(f.read(), "loops.space")
    kinds = {(c.kind, c.half) for c in spec.choices}
    assert {("enum", False), ("integer", False), ("counter", False), ("counter", True)} <= kinds
    assert spec.quotients and spec.triggers
    assert any(c.aliases for c in spec.choices)
    assert any(s.param for s in spec.sets) and any(s.disjoint for s in spec.sets)


class _Obj:
    snippet_api = frozenset({"name", "a", "b"})

    def __init__(self, name, **kw):
        self.name = name
        self.__dict__.update(kw)


class _K:
    snippet_api = frozenset({"instructions", "loads"})

    def __init__(self, insts, loads=None):
        self.insts = insts
        self._loads = loads

    def instructions(self):
        return self.insts

    def loads(self):
        return self._loads


def test_kernel_interface_errors_are_named():
    sp = space("set Loads subsetof Insts:\n iterator = \"$fun.loads()\"\nend\n"
               "choice enum x($a in Insts):\n value A:\nend")
    k = _K([_Obj("a"), _Obj("a")], [])
    with pytest.raises(wb.SpaceError, match="share the id 'a'"):
        wb.Candidate.root(k, sp)
    k = _K([_Obj("a")], [_Obj("zz")])
    with pytest.raises(wb.SpaceError, match="zz is in Loads but not in its superset"):
        wb.Candidate.root(k, sp)
    sp2 = space("set A subsetof Insts:\n from_superset = \"$item.a\"\nend\n"
                "set B subsetof Insts:\n disjoint: A\n from_superset = \"$item.b\"\nend\n")
    with pytest.raises(wb.SpaceError, match="declared disjoint"):
        wb.Candidate.root(_K([_Obj("i", a=True, b=True)]), sp2)


def test_static_contradiction_is_a_dead_end_at_the_root():
    sp = space('choice enum x($a in Insts):\n value A:\n  requires "false"\nend')
    with pytest.raises(wb.DeadEnd) as e:
        wb.Candidate.root(_K([_Obj("i")]), sp)
    assert "x=A requires" in e.value.constraint and e.value.objects == ("i",)
