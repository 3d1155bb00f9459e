"""Parser of the decision-space language (thesis §3.3, Figures 3.1–3.5).

    specification ::= (set | choice | 'require' constraint | trigger | quotient)*
    set        ::= 'set' Name ('(' $x 'in' Set ')')? ('subsetof' Name)? ':'
                   ('disjoint' ':' Name (',' Name)*)? (entry '=' "snippet")* 'end'
    choice     ::= 'choice' 'enum' decl ':' enum-stmt* 'end'
                 | 'choice' 'integer' decl ':' "snippet" 'end'
                 | 'choice' 'half'? 'counter' decl ':' counter-def 'end'
    decl       ::= name '(' ($x 'in' Set (',' $x 'in' Set)*)? ')'
    enum-stmt  ::= 'value' NAME ':' ('requires' constraint)*
                 | 'alias' NAME '=' NAME ('|' NAME)* ':' ('requires' constraint)*
                 | 'symmetric' | 'antisymmetric' ':' (NAME '<->' NAME)*
    counter-def::= ('forall' $x 'in' Set ':')* ('sum'|'mul') ('forall' $x 'in' Set ':')*
                   (choice-ref | "snippet" | INT) ('when' ':'? condition ('&&'? condition)*)?
    constraint ::= ('forall' $x 'in' Set ':')* condition ('||' condition)*
    condition  ::= choice-ref 'is' 'not'? NAME ('|' NAME)*
                 | operand cmp operand           (one side at least a choice, or "snippet")
                 | "snippet"
    trigger    ::= 'trigger' ('forall' $x 'in' Set ':')* "snippet"
                   'when' condition ('&&' condition)*
    quotient   ::= 'quotient' Name ('(' $x 'in' Set ')')? 'of' $x 'in' Set ':'
                   name '=' condition ('&&' condition)* '/' choice 'is' NAME
                   (entry '=' "snippet")* 'end'

Comments start with `//` or `#`. Errors point at the line and column.
"""

from __future__ import annotations

from ..errors import SpaceSyntaxError
from . import ast
from .lexer import Source, TokenStream, tokenize
from .snippet import CMP_OPS, parse_snippet

_STATEMENT_KWS = ("set", "choice", "require", "trigger", "quotient")


def parse(text: str, name: str = "<space>") -> ast.Specification:
    src = Source(text, name)
    ts = TokenStream(src, tokenize(src))
    spec = ast.Specification()
    while not ts.at("eof"):
        if ts.at_kw("set"):
            spec.sets.append(_parse_set(ts))
        elif ts.at_kw("choice"):
            spec.choices.append(_parse_choice(ts))
        elif ts.at_kw("require"):
            ts.next()
            spec.constraints.append(_parse_constraint(ts, "require"))
        elif ts.at_kw("trigger"):
            spec.triggers.append(_parse_trigger(ts))
        elif ts.at_kw("quotient"):
            spec.quotients.append(_parse_quotient(ts))
        else:
            raise ts.error(f"expected one of {', '.join(_STATEMENT_KWS)}, "
                           f"found {ts.tok.value or ts.tok.kind!r}")
    return spec


def _snippet(ts: TokenStream):
    tok = ts.expect("string", what='a "code snippet"')
    start = tok.pos + 1
    return parse_snippet(ts.src, start, start + len(tok.value))


def _name(ts, what="a name"):
    return ts.expect("ident", what=what)


def _var(ts):
    return ts.expect("var", what="a $variable").value[1:]


def _set_ref(ts) -> ast.SetRef:
    tok = _name(ts, "a set name")
    arg = None
    if ts.accept("op", "("):
        arg = _var(ts)
        ts.expect("op", ")")
    return ast.SetRef(tok.value, arg, tok.pos)


def _binding(ts) -> ast.Binding:
    pos = ts.tok.pos
    var = _var(ts)
    if not ts.at_kw("in"):
        raise ts.error("expected 'in' after the variable")
    ts.next()
    return ast.Binding(var, _set_ref(ts), pos)


def _end(ts, opened):
    if not ts.at_kw("end"):
        line, _ = ts.src.linecol(opened.pos)
        raise ts.error(f"expected 'end' to close the {opened.value!r} opened at line {line}, "
                       f"found {ts.tok.value or ts.tok.kind!r}")
    ts.next()


def _parse_entries(ts, allowed) -> dict:
    entries = {}
    while ts.tok.kind == "ident" and ts.peek().kind == "op" and ts.peek().value == "=":
        tok = ts.next()
        if tok.value not in allowed:
            raise ts.error(f"unknown entry {tok.value!r}; allowed: {', '.join(allowed)}", tok)
        if tok.value in entries:
            raise ts.error(f"entry {tok.value!r} given twice", tok)
        ts.expect("op", "=")
        if tok.value in TEXT_ENTRIES:  # plain text, e.g. a display prefix
            entries[tok.value] = ts.expect("string", what='a "string"').value
        else:
            entries[tok.value] = _snippet(ts)
    return entries


SET_ENTRIES = ("iterator", "from_superset", "id_getter", "item_getter", "getter", "var_prefix",
               "type", "id_type")
TEXT_ENTRIES = ("var_prefix", "type", "id_type")


def _parse_set(ts) -> ast.SetDef:
    kw = ts.next()
    name = _name(ts, "a set name").value
    param = None
    if ts.accept("op", "("):
        param = _binding(ts)
        ts.expect("op", ")")
    superset = None
    if ts.at_kw("subsetof"):
        ts.next()
        superset = _name(ts, "a set name").value
    ts.expect("op", ":")
    disjoint: list[str] = []
    if ts.at_kw("disjoint"):
        ts.next()
        ts.expect("op", ":")
        disjoint.append(_name(ts, "a set name").value)
        while ts.accept("op", ","):
            disjoint.append(_name(ts, "a set name").value)
    entries = _parse_entries(ts, SET_ENTRIES)
    _end(ts, kw)
    return ast.SetDef(name, param, superset, tuple(disjoint), entries, kw.pos)


def _decl(ts):
    name = _name(ts, "a choice name").value
    ts.expect("op", "(")
    params = []
    if not ts.accept("op", ")"):
        params.append(_binding(ts))
        while ts.accept("op", ","):
            params.append(_binding(ts))
        ts.expect("op", ")")
    ts.expect("op", ":")
    return name, tuple(params)


def _parse_choice(ts) -> ast.ChoiceDef:
    kw = ts.next()
    half = False
    if ts.at_kw("half"):
        ts.next()
        half = True
        if not ts.at_kw("counter"):
            raise ts.error("'half' only applies to counters")
    if not ts.at_kw("enum", "integer", "counter"):
        raise ts.error("expected 'enum', 'integer' or 'counter' after 'choice'")
    kind = ts.next().value
    name, params = _decl(ts)
    if kind == "integer":
        universe = _snippet(ts)
        _end(ts, kw)
        return ast.ChoiceDef("integer", name, params, universe=universe, pos=kw.pos)
    if kind == "counter":
        counter = _parse_counter(ts)
        _end(ts, kw)
        return ast.ChoiceDef("counter", name, params, counter=counter, half=half, pos=kw.pos)
    values, aliases, anti = [], [], []
    symmetric = False
    while not ts.at_kw("end"):
        if ts.at_kw("value"):
            tok = ts.next()
            vname = _name(ts, "a value name").value
            ts.expect("op", ":")
            values.append(ast.EnumValue(vname, _parse_requires(ts, name, vname), pos=tok.pos))
        elif ts.at_kw("alias"):
            tok = ts.next()
            aname = _name(ts, "an alias name").value
            ts.expect("op", "=")
            members = [_name(ts, "a value name").value]
            while ts.accept("op", "|"):
                members.append(_name(ts, "a value name").value)
            ts.expect("op", ":")
            aliases.append(ast.EnumValue(aname, _parse_requires(ts, name, aname),
                                         tuple(members), tok.pos))
        elif ts.at_kw("symmetric"):
            ts.next()
            symmetric = True
        elif ts.at_kw("antisymmetric"):
            ts.next()
            ts.expect("op", ":")
            while ts.tok.kind == "ident" and ts.peek().value == "<->":
                a = ts.next().value
                ts.expect("op", "<->")
                anti.append((a, _name(ts, "a value name").value))
        elif ts.at("eof"):
            _end(ts, kw)
        else:
            raise ts.error("expected 'value', 'alias', 'symmetric', 'antisymmetric' or 'end'")
    _end(ts, kw)
    return ast.ChoiceDef("enum", name, params, tuple(values), tuple(aliases), symmetric,
                         tuple(anti), pos=kw.pos)


def _parse_requires(ts, choice, value):
    reqs = []
    while ts.at_kw("requires"):
        ts.next()
        reqs.append(_parse_constraint(ts, f"{choice}={value} requires"))
    return tuple(reqs)


def _parse_counter(ts) -> ast.CounterDef:
    pos = ts.tok.pos
    foralls = []
    op = None
    while True:
        if ts.at_kw("forall"):
            ts.next()
            foralls.append(_binding(ts))
            ts.expect("op", ":")
        elif op is None and ts.at_kw("sum", "mul"):
            op = ts.next().value
        else:
            break
    if op is None:
        raise ts.error("a counter needs 'sum' or 'mul'")
    value = _operand(ts)
    conds: list = []
    if ts.at_kw("when"):
        ts.next()
        ts.accept("op", ":")
        conds.append(_condition(ts))
        while ts.accept("op", "&&") or _starts_condition(ts):
            conds.append(_condition(ts))
    return ast.CounterDef(op, tuple(foralls), value, tuple(conds), pos)


def _starts_condition(ts) -> bool:
    t = ts.tok
    if t.kind == "string":
        return True
    return (t.kind == "ident" and t.value not in ("end",) + _STATEMENT_KWS
            and ts.peek().kind == "op" and ts.peek().value == "(")


def _parse_constraint(ts, name) -> ast.Constraint:
    pos = ts.tok.pos
    foralls = []
    while ts.at_kw("forall"):
        ts.next()
        foralls.append(_binding(ts))
        ts.expect("op", ":")
    conds = [_condition(ts)]
    while ts.accept("op", "||"):
        conds.append(_condition(ts))
    line, _ = ts.src.linecol(pos)
    return ast.Constraint(tuple(foralls), tuple(conds), pos,
                          f"{name} ({ts.src.name}:{line})")


def _choice_ref(ts) -> ast.ChoiceRef:
    tok = _name(ts, "a choice name")
    ts.expect("op", "(")
    args = []
    if not ts.accept("op", ")"):
        args.append(_var(ts))
        while ts.accept("op", ","):
            args.append(_var(ts))
        ts.expect("op", ")")
    return ast.ChoiceRef(tok.value, tuple(args), tok.pos)


def _operand(ts):
    if ts.at("string"):
        return _snippet(ts)
    if ts.at("int"):
        return ast.Const(int(ts.next().value))
    if ts.at("ident"):
        return _choice_ref(ts)
    raise ts.error('expected a choice, a "snippet" or an integer')


def _condition(ts):
    pos = ts.tok.pos
    lhs = _operand(ts)
    if isinstance(lhs, ast.ChoiceRef) and ts.at_kw("is"):
        ts.next()
        neg = False
        if ts.at_kw("not"):
            ts.next()
            neg = True
        values = [_name(ts, "a value name").value]
        while ts.accept("op", "|"):
            values.append(_name(ts, "a value name").value)
        return ast.IsCond(lhs, tuple(values), neg, pos)
    if ts.tok.kind == "op" and ts.tok.value in CMP_OPS:
        op = ts.next().value
        rhs = _operand(ts)
        if not isinstance(lhs, ast.ChoiceRef) and not isinstance(rhs, ast.ChoiceRef):
            raise SpaceSyntaxError("a comparison needs a choice on one side; compare "
                                   "kernel values inside one snippet instead",
                                   ts.src.name, *ts.src.linecol(pos), ts.src.text)
        return ast.CmpCond(lhs, op, rhs, pos)
    if isinstance(lhs, ast.ChoiceRef):
        raise ts.error(f"expected 'is', 'is not' or a comparison after {lhs}")
    if isinstance(lhs, ast.Const):
        raise ts.error("an integer alone is not a condition")
    return ast.SnippetCond(lhs, False, pos)


def _parse_trigger(ts) -> ast.TriggerDef:
    kw = ts.next()
    foralls = []
    while ts.at_kw("forall"):
        ts.next()
        foralls.append(_binding(ts))
        ts.expect("op", ":")
    action = _snippet(ts)
    if not ts.at_kw("when"):
        raise ts.error("expected 'when' after the trigger's code snippet")
    ts.next()
    ts.accept("op", ":")
    conds = [_condition(ts)]
    while ts.accept("op", "&&"):
        conds.append(_condition(ts))
    return ast.TriggerDef(tuple(foralls), action, tuple(conds), kw.pos)


def _parse_quotient(ts) -> ast.QuotientDef:
    kw = ts.next()
    name = _name(ts, "a set name").value
    param = None
    if ts.accept("op", "("):
        param = _binding(ts)
        ts.expect("op", ")")
    if not ts.at_kw("of"):
        raise ts.error("expected 'of' in quotient definition")
    ts.next()
    item = _binding(ts)
    ts.expect("op", ":")
    choice = _name(ts, "the membership choice name").value
    ts.expect("op", "=")
    conds = [_condition(ts)]
    while ts.accept("op", "&&"):
        conds.append(_condition(ts))
    ts.expect("op", "/")
    rel = _name(ts, "the equivalence choice").value
    if not ts.at_kw("is"):
        raise ts.error("expected 'is' after the equivalence choice")
    ts.next()
    rel_value = _name(ts, "a value name").value
    entries = _parse_entries(ts, SET_ENTRIES)
    _end(ts, kw)
    return ast.QuotientDef(name, param, item, choice, tuple(conds), rel, rel_value,
                           entries, kw.pos)
