"""Syntax tree of the decision-space language (thesis §3.3)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .snippet import Snippet


@dataclass(frozen=True)
class SetRef:
    name: str
    arg: str | None = None  # variable name (without $) of a parametric set
    pos: int = 0

    def __str__(self) -> str:
        return f"{self.name}(${self.arg})" if self.arg else self.name


@dataclass(frozen=True)
class Binding:
    var: str  # without $
    set: SetRef
    pos: int = 0

    def __str__(self) -> str:
        return f"${self.var} in {self.set}"


@dataclass(frozen=True)
class ChoiceRef:
    name: str
    args: tuple[str, ...]  # variable names without $
    pos: int = 0

    def __str__(self) -> str:
        return f"{self.name}({', '.join('$' + a for a in self.args)})"


@dataclass(frozen=True)
class Const:
    """An integer literal written directly in a condition."""
    value: int

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class IsCond:
    ref: ChoiceRef
    values: tuple[str, ...]
    negated: bool = False
    pos: int = 0

    def __str__(self) -> str:
        return f"{self.ref} is {'not ' if self.negated else ''}{' | '.join(self.values)}"


Operand = "ChoiceRef | Snippet | Const"


@dataclass(frozen=True)
class CmpCond:
    lhs: object  # ChoiceRef | Snippet | Const
    op: str
    rhs: object
    pos: int = 0

    def __str__(self) -> str:
        return f"{self.lhs} {self.op} {self.rhs}"


@dataclass(frozen=True)
class SnippetCond:
    snippet: Snippet
    negated: bool = False
    pos: int = 0

    def __str__(self) -> str:
        return f"{'not ' if self.negated else ''}{self.snippet}"


Condition = "IsCond | CmpCond | SnippetCond"


@dataclass(frozen=True)
class Constraint:
    """forall bindings: cond || cond || ..."""
    foralls: tuple[Binding, ...]
    conditions: tuple  # of Condition; a disjunction
    pos: int = 0
    name: str = ""  # where it comes from, for messages

    def __str__(self) -> str:
        head = "".join(f"forall {b}: " for b in self.foralls)
        return head + " || ".join(map(str, self.conditions))


@dataclass(frozen=True)
class SetDef:
    name: str
    param: Binding | None
    superset: str | None
    disjoint: tuple[str, ...]
    entries: dict = field(hash=False, compare=False)
    pos: int = 0


@dataclass(frozen=True)
class EnumValue:
    name: str
    requires: tuple[Constraint, ...] = ()
    members: tuple[str, ...] = ()  # for aliases: the values it stands for
    pos: int = 0


@dataclass(frozen=True)
class CounterDef:
    op: str  # "sum" | "mul"
    foralls: tuple[Binding, ...]
    value: object  # ChoiceRef (integer choice) | Snippet | Const
    conditions: tuple  # conjunction
    pos: int = 0


@dataclass(frozen=True)
class ChoiceDef:
    kind: str  # enum | integer | counter
    name: str
    params: tuple[Binding, ...]
    values: tuple[EnumValue, ...] = ()
    aliases: tuple[EnumValue, ...] = ()
    symmetric: bool = False
    antisymmetric: tuple[tuple[str, str], ...] = ()
    universe: Snippet | None = None
    counter: CounterDef | None = None
    half: bool = False
    hidden: bool = False  # derived choices (counters helpers, quotients)
    pos: int = 0


@dataclass(frozen=True)
class TriggerDef:
    foralls: tuple[Binding, ...]
    action: Snippet
    conditions: tuple  # conjunction
    pos: int = 0


@dataclass(frozen=True)
class QuotientDef:
    name: str
    param: Binding | None
    item: Binding  # $x in BaseSet
    choice: str  # the generated TRUE/FALSE membership choice
    conditions: tuple  # conjunction: membership condition
    relation: str  # symmetric choice defining the equivalence
    relation_value: str
    entries: dict = field(hash=False, compare=False)
    pos: int = 0


@dataclass
class Specification:
    sets: list[SetDef] = field(default_factory=list)
    choices: list[ChoiceDef] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    triggers: list[TriggerDef] = field(default_factory=list)
    quotients: list[QuotientDef] = field(default_factory=list)
