"""A basic block of straight-line instructions (thesis chapter 2).

The teaching example: instructions with latencies and data dependencies,
issued in order at most one per cycle on an idealised in-order machine
(equations 2.1–2.4). The decision space is `basic_block.space`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..errors import WorkbenchError
from ..space.values import BASIC_BLOCK, BlockOrder, ensure_values


@dataclass(frozen=True, eq=False)
class Instruction:
    name: str
    latency: int = 1
    deps: tuple[str, ...] = ()  # instructions whose result this one reads
    op: str = "op"

    # what snippets of a .space may read or call (space/snippet.py: the sandbox)
    snippet_api = frozenset({"depends_on", "deps", "latency", "name", "op"})

    def depends_on(self, other: Instruction) -> bool:
        """Whether this instruction reads the result of `other`."""
        return other.name in self.deps

    def __repr__(self) -> str:
        return f"{self.name}: {self.op}({', '.join(self.deps)}) lat={self.latency}"


class BasicBlock:
    """A list of instructions; `space` names its decision space."""

    space = "basic_block"

    # what snippets of a .space may read or call (space/snippet.py: the sandbox)
    snippet_api = frozenset({"instruction", "instructions"})

    def __init__(self, instructions):
        self._insts = tuple(instructions)
        self._by_name = {}
        for inst in self._insts:
            if not isinstance(inst.latency, int) or inst.latency < 1:
                raise WorkbenchError(f"instruction {inst.name}: latency must be a positive integer")
            if inst.name in self._by_name:
                raise WorkbenchError(f"two instructions are named {inst.name!r}")
            self._by_name[inst.name] = inst
        for inst in self._insts:
            for d in inst.deps:
                if d not in self._by_name:
                    raise WorkbenchError(f"instruction {inst.name} reads unknown {d!r}")
        self._check_acyclic()

    def _check_acyclic(self) -> None:
        state: dict[str, int] = {}

        def visit(n, path):
            if state.get(n) == 1:
                raise WorkbenchError("dependencies form a cycle: " + " -> ".join(path + [n]))
            if state.get(n) == 2:
                return
            state[n] = 1
            for d in self._by_name[n].deps:
                visit(d, path + [n])
            state[n] = 2
        for inst in self._insts:
            visit(inst.name, [])

    def instructions(self) -> tuple[Instruction, ...]:
        return self._insts

    def instruction(self, name: str) -> Instruction:
        return self._by_name[name]

    def copy(self) -> BasicBlock:
        return BasicBlock(self._insts)

    def spec(self) -> dict:
        return {"builder": "basic_block",
                "instructions": [{"name": i.name, "latency": i.latency, "deps": list(i.deps),
                                  "op": i.op} for i in self._insts]}

    # ------------------------------------------------------ the machine
    def execution_time(self, schedule) -> int:
        """T of a total order (eq. 2.4): in-order issue, one instruction per
        cycle, each waiting for the results it reads."""
        t: dict[str, int] = {}
        last_issue = -1
        for name in schedule:
            inst = self._by_name[name]
            start = max([last_issue + 1] + [t[d] + self._by_name[d].latency for d in inst.deps])
            t[name] = start
            last_issue = start
        return max(t[n] + self._by_name[n].latency for n in t)

    def schedule(self, candidate) -> list[str]:
        """The total order a fixed candidate of this block stands for."""
        ensure_values(candidate.space, BASIC_BLOCK)
        names = [i.name for i in self._insts]
        before = {n: 0 for n in names}
        for a in names:
            for b in names:
                if a != b and candidate.domain("order", (a, b)) == {BlockOrder.BEFORE}:
                    before[b] += 1
        order = sorted(names, key=lambda n: before[n])
        if [before[n] for n in order] != list(range(len(names))):
            raise WorkbenchError("the candidate's order is not a total order yet")
        return order

    def __repr__(self) -> str:
        return f"BasicBlock({len(self._insts)} instructions)"


def basic_block(instructions) -> BasicBlock:
    """Build a basic block from `(name, latency, deps)` tuples or dicts."""
    insts = []
    for x in instructions:
        if isinstance(x, Instruction):
            insts.append(x)
        elif isinstance(x, dict):
            insts.append(Instruction(x["name"], int(x.get("latency", 1)),
                                     tuple(x.get("deps", ())), x.get("op", "op")))
        else:
            name, lat, deps = x
            insts.append(Instruction(name, int(lat), tuple(deps)))
    return BasicBlock(insts)


def random_basic_block(n: int, density: float = 0.3, seed: int = 0,
                       max_latency: int = 8) -> BasicBlock:
    """A random DAG of n instructions: each earlier instruction is read with
    probability `density`."""
    rng = random.Random(seed)
    insts = []
    for i in range(n):
        deps = tuple(f"i{j}" for j in range(i) if rng.random() < density)
        insts.append(Instruction(f"i{i}", rng.randint(1, max_latency), deps,
                                 "load" if not deps else "fma"))
    return BasicBlock(insts)
