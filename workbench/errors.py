"""Errors raised by the workbench engine.

Each error names what was wrong so that a notebook user can act on it:
parse errors carry the file, line and column; dead ends carry the constraint
and the objects it was instantiated on.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base class of every error the engine raises on purpose."""


class SpaceSyntaxError(WorkbenchError):
    """A `.space` file (or a code snippet inside it) does not parse."""

    def __init__(self, message: str, source: str, line: int, col: int, text: str = ""):
        self.message = message
        self.source = source
        self.line = line
        self.col = col
        self.text = text
        where = f"{source}:{line}:{col}"
        excerpt = ""
        if text:
            lines = text.split("\n")
            if 1 <= line <= len(lines):
                src_line = lines[line - 1]
                excerpt = f"\n    {src_line}\n    {' ' * (col - 1)}^"
        super().__init__(f"{where}: {message}{excerpt}")


class SpaceError(WorkbenchError):
    """A `.space` file parses but is ill-formed (unknown set, bad types...),
    or a kernel does not provide what the space asks of it."""


class InvalidDecision(WorkbenchError):
    """A decision names an unknown choice or objects, or a value outside the
    current domain. The candidate it was applied to is unchanged."""


class NeverAppears(InvalidDecision):
    """Decisions taken together (`decide_all`, `decide_each`) name objects
    that none of the others creates: no lowering they fire brings them in.
    A subset of a live trail raises it when it leaves out the decisions that
    fire a lowering (an explanation then skips that subset)."""

    def __init__(self, decisions):
        self.decisions = tuple(decisions)
        super().__init__("decisions on objects that never appear: "
                         + ", ".join(str(d) for d in self.decisions))

    def __reduce__(self):
        return (type(self), (self.decisions,))


class DeadEnd(WorkbenchError):
    """Propagation emptied a domain: the decisions taken so far admit no
    implementation. The candidate it was applied to is unchanged.

    `constraint` is the human-readable description of the propagator that
    failed, `objects` the objects it was instantiated on and `choice` the
    choice instance whose domain became empty (None when a whole clause
    became false without a single culprit domain).
    """

    def __init__(self, constraint: str, objects: tuple, choice: str | None = None,
                 decision: object | None = None):
        self.constraint = constraint
        self.objects = tuple(objects)
        self.choice = choice
        self.decision = decision
        self.problem = None  # the problem it happened in (`Problem.dead_end`)
        objs = ", ".join(map(str, self.objects))
        what = f" emptied the domain of {choice}" if choice else " cannot be satisfied"
        super().__init__(f"dead end: constraint {constraint} on ({objs}){what}")

    def __reduce__(self):  # across processes, without its problem
        return (type(self), (self.constraint, self.objects, self.choice, self.decision))
