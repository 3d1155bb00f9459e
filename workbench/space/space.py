"""A decision space: the type-checked, lowered form of a specification.

Lowering (thesis §3.5.2–3.5.3) turns every construct into three kinds of
generic objects that the engine instantiates per kernel:

* generic choices (enum / integer / counter), some of them hidden helpers;
* generic constraints: `forall ...: cond || cond` clauses;
* generic counters and triggers.

`requires` on enum values become clauses; each conditional counter term gets a
hidden boolean choice δ with the clauses (3.7)–(3.8); a quotient set gets a
hidden membership choice, a hidden "same class as an earlier member" choice
and the clauses that define them, so that the quotient's representative of
each class is its first member in set order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SpaceError
from . import ast
from .lexer import Source
from .parser import parse
from .snippet import Snippet

TF = ("FALSE", "TRUE")
_NEG_OP = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_FLIP_OP = {"==": "==", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


@dataclass(frozen=True)
class ExistsCond:
    """Internal condition: some $y in set, before $x in set order, satisfies cond."""
    binding: ast.Binding
    before: str  # variable the existential member must precede
    cond: object

    def __str__(self) -> str:
        return f"exists {self.binding} before ${self.before}: {self.cond}"


@dataclass
class ChoiceInfo:
    name: str
    kind: str  # enum | integer | counter
    params: tuple[ast.Binding, ...]
    values: tuple[str, ...] = ()
    aliases: dict = field(default_factory=dict)  # alias -> tuple of values
    inverse: tuple[int, ...] | None = None  # value index -> index of the mirrored value
    symmetric: bool = False
    half: bool = False
    hidden: bool = False
    universe: Snippet | None = None
    precedes: tuple[tuple[str, str], ...] = ()  # instantiate only where pos(a) < pos(b)
    index: int = 0  # position in the decision vector

    @property
    def mirrored(self) -> bool:
        """Only one of (a, b) / (b, a) is stored."""
        return self.inverse is not None

    def value_mask(self, names) -> int:
        mask = 0
        for n in names:
            if n in self.aliases:
                for m in self.aliases[n]:
                    mask |= 1 << self.values.index(m)
            else:
                mask |= 1 << self.values.index(n)
        return mask


@dataclass
class GenericConstraint:
    foralls: tuple[ast.Binding, ...]
    conditions: tuple
    origin: str
    precedes: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        return " || ".join(map(str, self.conditions))


@dataclass
class GenericCounter:
    choice: str
    params: tuple[ast.Binding, ...]
    op: str
    foralls: tuple[ast.Binding, ...]
    value: object  # ChoiceRef | Snippet | Const
    delta: str | None  # hidden δ choice, None when the term is unconditional
    conditions: tuple  # kept for the independent checker


@dataclass
class GenericTrigger:
    foralls: tuple[ast.Binding, ...]
    action: Snippet
    conditions: tuple
    index: int


@dataclass
class SetInfo:
    name: str
    param: ast.Binding | None
    superset: str | None
    disjoint: tuple[str, ...]
    entries: dict
    quotient: ast.QuotientDef | None = None


def negate(cond):
    if isinstance(cond, ast.IsCond):
        return ast.IsCond(cond.ref, cond.values, not cond.negated, cond.pos)
    if isinstance(cond, ast.CmpCond):
        return ast.CmpCond(cond.lhs, _NEG_OP[cond.op], cond.rhs, cond.pos)
    if isinstance(cond, ast.SnippetCond):
        return ast.SnippetCond(cond.snippet, not cond.negated, cond.pos)
    raise SpaceError(f"cannot negate {cond}")


def rename(cond, mapping: dict):
    def r(x):
        if isinstance(x, ast.ChoiceRef):
            return ast.ChoiceRef(x.name, tuple(mapping.get(a, a) for a in x.args), x.pos)
        if isinstance(x, Snippet) and x.variables & set(mapping):
            raise SpaceError(f"quotient condition snippets may not read the member variable: {x}")
        return x
    if isinstance(cond, ast.IsCond):
        return ast.IsCond(r(cond.ref), cond.values, cond.negated, cond.pos)
    if isinstance(cond, ast.CmpCond):
        return ast.CmpCond(r(cond.lhs), cond.op, r(cond.rhs), cond.pos)
    return cond


class Space:
    """A compiled decision space. Build with `Space.from_text` / `load_space`."""

    def __init__(self, spec: ast.Specification, name: str, text: str = ""):
        self.name = name
        self.text = text
        self.sets: dict[str, SetInfo] = {}
        self.choices: dict[str, ChoiceInfo] = {}
        self.constraints: list[GenericConstraint] = []
        self.counters: list[GenericCounter] = []
        self.triggers: list[GenericTrigger] = []
        self.source = spec  # kept for the independent checker
        self.source_counters = {c.name: c.counter for c in spec.choices if c.kind == "counter"}
        self._build(spec)

    @classmethod
    def from_text(cls, text: str, name: str = "<space>") -> Space:
        return cls(parse(text, name), name, text)

    # ---------------------------------------------------------------- sets
    def is_subset(self, a: str, b: str) -> bool:
        seen = set()
        while a is not None and a not in seen:
            if a == b:
                return True
            seen.add(a)
            a = self.sets[a].superset
        return False

    def root(self, a: str) -> str:
        while self.sets[a].superset is not None:
            a = self.sets[a].superset
        return a

    def _build(self, spec: ast.Specification) -> None:
        self._build_sets(spec)
        for c in spec.choices:
            self._add_choice(c)
        for q in spec.quotients:
            self._lower_quotient(q)
        for c in spec.choices:
            if c.kind == "counter":
                self._lower_counter(c)
            for v in tuple(c.values) + tuple(c.aliases):
                for req in v.requires:
                    self._lower_requires(c, v, req)
        for c in spec.constraints:
            self.add_constraint(c.foralls, c.conditions, c.name or "require")
        for i, t in enumerate(spec.triggers):
            self._add_trigger(t, i)
        for i, c in enumerate(self.choices.values()):
            c.index = i

    def _build_sets(self, spec: ast.Specification) -> None:
        # where each set is defined, for the errors below (file:line)
        self._set_pos = {s.name: s.pos for s in (*spec.sets, *spec.quotients)}
        for s in spec.sets:
            self._add_set(s.name, s.param, s.superset, s.disjoint, s.entries, None)
        for q in spec.quotients:
            self._add_set(q.name, q.param, q.item.set.name, (), q.entries, q)
        for s in self.sets.values():
            self._check_set(s)
        for s in self.sets.values():  # cycles in subsetof
            if not self.is_subset(s.name, self.root(s.name)):
                raise SpaceError(f"{self._set_at(s.name)}: cyclic 'subsetof'")

    def _set_at(self, name: str) -> str:
        """"set NAME (file.space:LINE)", as the checker names a constraint."""
        pos = self._set_pos.get(name)
        if pos is None or not self.text:
            return f"set {name}"
        return f"set {name} ({self.name}:{Source(self.text, self.name).linecol(pos)[0]})"

    def _check_set(self, s: SetInfo) -> None:
        if s.superset is not None and s.superset not in self.sets:
            raise SpaceError(f"{self._set_at(s.name)}: unknown superset {s.superset}")
        for d in s.disjoint:
            if d not in self.sets:
                raise SpaceError(f"{self._set_at(s.name)}: unknown disjoint set {d}")
        if s.quotient is None:
            if s.superset is None and "iterator" not in s.entries:
                raise SpaceError(f"{self._set_at(s.name)} needs an 'iterator' entry")
            if s.superset is not None and not ({"iterator", "from_superset"} & set(s.entries)):
                raise SpaceError(f"{self._set_at(s.name)}: a subset needs 'iterator' or "
                                 "'from_superset'")
        if s.param is not None:
            self._check_binding_set(s.param, {}, f"set {s.name}")

    def _add_trigger(self, t, i: int) -> None:
        foralls, extra = self._lower_foralls(t.foralls, positive=True)
        env = self._scope(foralls, "trigger")
        conds = tuple(extra) + tuple(t.conditions)
        for cond in conds:
            self._check_condition(cond, env, "trigger")
        for v in t.action.variables - set(env) - {"fun"}:
            raise SpaceError(f"trigger action {t.action} reads unbound ${v}")
        self.triggers.append(GenericTrigger(foralls, t.action, conds, i))

    def _add_set(self, name, param, superset, disjoint, entries, quotient):
        if name in self.sets:
            raise SpaceError(f"set {name} defined twice")
        self.sets[name] = SetInfo(name, param, superset, tuple(disjoint), dict(entries), quotient)

    def _check_binding_set(self, b: ast.Binding, env: dict, where: str) -> None:
        s = self.sets.get(b.set.name)
        if s is None:
            raise SpaceError(f"{where}: unknown set {b.set.name}")
        if (s.param is None) != (b.set.arg is None):
            need = "needs an argument" if s.param else "takes no argument"
            raise SpaceError(f"{where}: set {s.name} {need}")
        if b.set.arg is not None:
            if b.set.arg not in env:
                raise SpaceError(f"{where}: ${b.set.arg} is not bound")
            if not self.is_subset(env[b.set.arg], s.param.set.name):
                raise SpaceError(f"{where}: ${b.set.arg} ranges over {env[b.set.arg]}, "
                                 f"not within {s.param.set.name} as {s.name} requires")

    def _scope(self, bindings, where, env=None) -> dict:
        env = dict(env or {})
        for b in bindings:
            if b.var in env or b.var == "fun":
                raise SpaceError(f"{where}: ${b.var} bound twice")
            self._check_binding_set(b, env, where)
            env[b.var] = b.set.name
        return env

    # ------------------------------------------------------------- choices
    def _add_choice(self, c: ast.ChoiceDef) -> None:
        if c.name in self.choices:
            raise SpaceError(f"choice {c.name} defined twice")
        self._scope(c.params, f"choice {c.name}")
        info = ChoiceInfo(c.name, c.kind, c.params, half=c.half, hidden=c.hidden,
                          universe=c.universe)
        if c.kind == "enum":
            names = [v.name for v in c.values]
            if not names:
                raise SpaceError(f"choice {c.name} has no value")
            if len(set(names)) != len(names):
                raise SpaceError(f"choice {c.name}: a value is listed twice")
            info.values = tuple(names)
            for a in c.aliases:
                if a.name in names or a.name in info.aliases:
                    raise SpaceError(f"choice {c.name}: alias {a.name} clashes with a value")
                for m in a.members:
                    if m not in names:
                        raise SpaceError(f"choice {c.name}: alias {a.name} names unknown value {m}")
                info.aliases[a.name] = a.members
            if c.symmetric or c.antisymmetric:
                if (len(c.params) != 2 or
                        self.root(c.params[0].set.name) != self.root(c.params[1].set.name)):
                    raise SpaceError(f"choice {c.name}: (anti)symmetric choices need two "
                                     "parameters over the same set")
                inv = list(range(len(names)))
                for a, b in c.antisymmetric:
                    for v in (a, b):
                        if v not in names:
                            raise SpaceError(f"choice {c.name}: antisymmetric names "
                                             f"unknown value {v}")
                    inv[names.index(a)], inv[names.index(b)] = names.index(b), names.index(a)
                info.inverse = tuple(inv)
                info.symmetric = bool(c.symmetric)
        self.choices[c.name] = info

    def add_hidden_choice(self, name, params, values=TF, precedes=()) -> None:
        if name in self.choices:
            raise SpaceError(f"choice {name} defined twice")
        self.choices[name] = ChoiceInfo(name, "enum", tuple(params), tuple(values), hidden=True,
                                        precedes=tuple(precedes))

    # --------------------------------------------------------- constraints
    def _lower_foralls(self, foralls, positive: bool):
        """Replace quotient-set bindings by their base set plus a membership
        condition (negated for clauses, positive for conjunctions)."""
        out, extra = [], []
        for b in foralls:
            s = self.sets.get(b.set.name)
            if s is not None and s.quotient is not None:
                q = s.quotient
                args = ((b.set.arg,) if q.param else ()) + (b.var,)
                ref = ast.ChoiceRef(q.choice, args, b.pos)
                extra.append(ast.IsCond(ref, ("TRUE",) if positive else ("FALSE",)))
                out.append(ast.Binding(b.var, ast.SetRef(q.item.set.name, None, b.pos), b.pos))
            else:
                out.append(b)
        return tuple(out), extra

    def add_constraint(self, foralls, conditions, origin, precedes=()) -> None:
        foralls, extra = self._lower_foralls(foralls, positive=False)
        scope = self._scope(foralls, origin)
        conds = tuple(extra) + tuple(conditions)
        for cond in conds:
            self._check_condition(cond, scope, origin)
        self.constraints.append(GenericConstraint(foralls, conds, origin, tuple(precedes)))

    def _lower_requires(self, c: ast.ChoiceDef, v: ast.EnumValue, req: ast.Constraint) -> None:
        me = ast.ChoiceRef(c.name, tuple(b.var for b in c.params))
        foralls, qextra = self._lower_foralls(req.foralls, positive=False)
        self.add_constraint(tuple(c.params) + foralls,
                            (ast.IsCond(me, (v.name,), True),) + tuple(qextra) + req.conditions,
                            req.name)

    def _lower_counter(self, c: ast.ChoiceDef) -> None:
        cd = c.counter
        foralls, extra = self._lower_foralls(cd.foralls, positive=True)
        scope = self._scope(tuple(c.params) + foralls, f"counter {c.name}")
        conds = tuple(extra) + tuple(cd.conditions)
        if isinstance(cd.value, ast.ChoiceRef):
            self._check_ref(cd.value, scope, f"counter {c.name}")
            vk = self.choices[cd.value.name]
            if vk.kind not in ("integer", "counter") or vk.half:
                raise SpaceError(f"counter {c.name}: value {cd.value} must be an integer "
                                 "choice or a (full) counter")
        elif isinstance(cd.value, Snippet):
            for var in cd.value.variables - set(scope) - {"fun"}:
                raise SpaceError(f"counter {c.name}: snippet reads unbound ${var}")
        delta = None
        if conds:
            delta = f"{c.name}.when"
            params = tuple(c.params) + foralls
            self.add_hidden_choice(delta, params)
            me = ast.ChoiceRef(delta, tuple(b.var for b in params))
            origin = f"counter {c.name} term condition"
            self.add_constraint(params, (ast.IsCond(me, ("TRUE",)),) + tuple(map(negate, conds)),
                                origin)
            for cond in conds:
                self.add_constraint(params, (ast.IsCond(me, ("FALSE",)), cond), origin)
        self.counters.append(GenericCounter(c.name, c.params, cd.op, foralls, cd.value, delta,
                                            conds))

    def _lower_quotient(self, q: ast.QuotientDef) -> None:
        """Membership q(p, x) is TRUE iff F(x) and no earlier y with F(y) is
        equivalent to x. same(p, x, y) materialises F(y) && rel(x, y)."""
        x = q.item.var
        y = f"{x}__other"
        params = ((q.param,) if q.param else ()) + (q.item,)
        item_y = ast.Binding(y, q.item.set, q.item.pos)
        rel = self.choices.get(q.relation)
        if rel is None or not rel.mirrored:
            raise SpaceError(f"quotient {q.name}: {q.relation} must be a symmetric or "
                             "antisymmetric choice")
        if q.relation_value not in rel.values or rel.inverse[rel.values.index(q.relation_value)] \
                != rel.values.index(q.relation_value):
            raise SpaceError(f"quotient {q.name}: {q.relation} is {q.relation_value} is not "
                             "a symmetric relation")
        self.add_hidden_choice(q.choice, params)
        same = f"{q.choice}.same"
        self.add_hidden_choice(same, params + (item_y,), precedes=((y, x),))
        pv = tuple(b.var for b in params)
        member = ast.ChoiceRef(q.choice, pv)
        same_ref = ast.ChoiceRef(same, pv + (y,))
        f_x = tuple(q.conditions)
        f_y = tuple(rename(c, {x: y}) for c in q.conditions)
        related = ast.IsCond(ast.ChoiceRef(q.relation, (x, y)), (q.relation_value,))
        origin = f"quotient {q.name}"
        for c in f_x:  # member => F(x)
            self.add_constraint(params, (ast.IsCond(member, ("FALSE",)), c), origin)
        pairs = params + (item_y,)
        prec = ((y, x),)
        # member => not same(x, y) for every earlier y
        self.add_constraint(pairs, (ast.IsCond(member, ("FALSE",)),
                                    ast.IsCond(same_ref, ("FALSE",))), origin, prec)
        for c in f_y + (related,):  # same <=> F(y) && related
            self.add_constraint(pairs, (ast.IsCond(same_ref, ("FALSE",)), c), origin, prec)
        self.add_constraint(pairs, (ast.IsCond(same_ref, ("TRUE",)),)
                            + tuple(map(negate, f_y + (related,))), origin, prec)
        # F(x) and no earlier equivalent member => member
        exists = ExistsCond(item_y, x, ast.IsCond(same_ref, ("TRUE",)))
        self.add_constraint(params, (ast.IsCond(member, ("TRUE",)),)
                            + tuple(map(negate, f_x)) + (exists,), origin)

    # ---------------------------------------------------------- type check
    def _check_ref(self, ref: ast.ChoiceRef, scope: dict, where: str) -> ChoiceInfo:
        c = self.choices.get(ref.name)
        if c is None:
            raise SpaceError(f"{where}: unknown choice {ref.name}")
        if len(ref.args) != len(c.params):
            raise SpaceError(f"{where}: {ref.name} takes {len(c.params)} arguments, "
                             f"{len(ref.args)} given")
        for a, p in zip(ref.args, c.params):
            if a not in scope:
                raise SpaceError(f"{where}: ${a} is not bound")
            if not self.is_subset(scope[a], p.set.name):
                raise SpaceError(f"{where}: in {ref}, ${a} ranges over {scope[a]}, "
                                 f"not within {p.set.name}")
        return c

    def _check_condition(self, cond, scope: dict, where: str) -> None:
        if isinstance(cond, ExistsCond):
            inner = self._scope((cond.binding,), where, scope)
            self._check_condition(cond.cond, inner, where)
        elif isinstance(cond, ast.IsCond):
            self._check_is_condition(cond, scope, where)
        elif isinstance(cond, ast.SnippetCond):
            self._check_snippet(cond.snippet, scope, where)
        else:
            self._check_comparison(cond, scope, where)

    def _check_is_condition(self, cond: ast.IsCond, scope: dict, where: str) -> None:
        c = self._check_ref(cond.ref, scope, where)
        if c.kind != "enum":
            raise SpaceError(f"{where}: 'is' needs an enum choice, {c.name} is {c.kind}")
        for v in cond.values:
            if v not in c.values and v not in c.aliases:
                raise SpaceError(f"{where}: {v} is not a value of {c.name} "
                                 f"(values: {', '.join(c.values)})")

    @staticmethod
    def _check_snippet(snippet, scope: dict, where: str) -> None:
        for v in snippet.variables - set(scope) - {"fun"}:
            raise SpaceError(f"{where}: snippet {snippet} reads unbound ${v}")

    def _check_comparison(self, cond, scope: dict, where: str) -> None:
        kinds = []
        for side in (cond.lhs, cond.rhs):
            if isinstance(side, ast.ChoiceRef):
                kinds.append(self._check_ref(side, scope, where))
            else:
                if isinstance(side, Snippet):
                    self._check_snippet(side, scope, where)
                kinds.append(None)
        enums = [k for k in kinds if k is not None and k.kind == "enum"]
        if enums:
            if len(enums) != 2 or cond.op not in ("==", "!="):
                raise SpaceError(f"{where}: enum choices compare only with == / != to "
                                 f"another enum choice: {cond}")
            if enums[0].values != enums[1].values:
                raise SpaceError(f"{where}: {enums[0].name} and {enums[1].name} have "
                                 "different values")
        for k, op in ((kinds[0], cond.op), (kinds[1], _FLIP_OP[cond.op])):
            if k is not None and k.kind == "counter" and k.half and op not in ("<", "<="):
                raise SpaceError(f"{where}: {k.name} is a half counter (minimum only); "
                                 f"it can only be bounded from above: {cond}")

    # ----------------------------------------------------------- queries
    def visible_choices(self) -> list[ChoiceInfo]:
        return [c for c in self.choices.values() if not c.hidden and c.kind != "counter"]


_SPACE_DIR = Path(__file__).parent / "spaces"
_CACHE: dict[str, Space] = {}


def load_space(name_or_path: str) -> Space:
    """Load a `.space` file: a name shipped with the package (e.g.
    "basic_block") or a path."""
    p = Path(name_or_path)
    if not p.suffix:
        p = _SPACE_DIR / f"{name_or_path}.space"
    elif not p.exists() and p.name == name_or_path and (_SPACE_DIR / p.name).exists():
        p = _SPACE_DIR / p.name  # "gpu.space", as trail files name it
    key = str(p.resolve())
    if key not in _CACHE:
        if not p.exists():
            shipped = sorted(f.stem for f in _SPACE_DIR.glob("*.space"))
            raise SpaceError(f"no decision space {name_or_path!r}; shipped: {', '.join(shipped)}")
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise SpaceError(f"{p}: not a .space file (not UTF-8 text: {exc.reason} at byte "
                             f"{exc.start})") from None
        _CACHE[key] = Space.from_text(text, p.name)
    return _CACHE[key]
