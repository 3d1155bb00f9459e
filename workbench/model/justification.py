"""Justification trees (thesis §5.5.2, Fig. 5.4): why the bound is what it is.

Every node has a kind — Bound, ParallelismLevel, Usage, Reuse, Chain, LoopLevel,
Dependency — its value in nanoseconds, a plain-language sentence, the
numbers it was computed from (`fields`) and its children. The child that set
a maximum comes first; the terms it beat follow so that a person sees the
margin. `to_dict()` is what the CLI prints and what records store.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from .hardware import RESOURCES, Hardware

LEVEL_NAMES = {"thread": "thread", "block": "block", "gpu": "GPU"}
# a CPU target bounds the reference executor: its top level is the whole
# processor (blocks spread over the cores), not a GPU
CPU_LEVEL_NAMES = {**LEVEL_NAMES, "gpu": "CPU"}


def level_name(hw: Hardware, level: str) -> str:
    """How a person reads a parallelism level on this target."""
    return (CPU_LEVEL_NAMES if hw.runs == "cpu" else LEVEL_NAMES)[level]


@dataclass
class Justification:
    kind: str
    value_ns: float
    text: str
    fields: dict = field(default_factory=dict)
    children: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "value_ns": self.value_ns, "text": self.text,
                **{k: _plain(v) for k, v in self.fields.items()},
                "children": [c.to_dict() for c in self.children]}

    def shown(self) -> str:
        """Its value as printed: a time, or cycles where the node says so
        (a basic block's bound: `fields["unit"]`)."""
        unit = self.fields.get("unit")
        return f"{self.value_ns:g} {unit}" if unit else fmt_time(self.value_ns)

    def render(self, indent: int = 0, depth: int | None = None) -> str:
        lines = [f"{'  ' * indent}- {self.text}  [{self.shown()}]"]
        if depth is None or depth > 0:
            for c in self.children:
                lines.append(c.render(indent + 1, None if depth is None else depth - 1))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def to_html(self) -> str:
        inner = "".join(f"<li>{c.to_html()}</li>" for c in self.children)
        body = (f"<b>{html.escape(self.kind)}</b> {html.escape(self.text)} "
                f"<span style='color:#555'>[{self.shown()}]</span>")
        if not inner:
            return body
        return f"<details open><summary>{body}</summary><ul>{inner}</ul></details>"

    def _repr_html_(self) -> str:
        return f"<div class='wb-justification'>{self.to_html()}</div>"

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


def _plain(v):
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, float) and v == float("inf"):
        return None
    return v


def fmt_time(ns: float | None, digits: int = 3) -> str:
    """A time in ns, ms or µs with `digits` significant digits (the explorer's
    value buttons use 4: children of one candidate often differ in the 4th);
    "—" for None (nothing measured or bounded: tables print it so)."""
    if ns is None:
        return "—"
    if ns >= 1e9:
        return f"{ns / 1e9:,.{digits}g} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.{digits}g} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.{digits}g} µs"
    return f"{ns:.{digits}g} ns"


def fmt_si(x: float, sep: str = " ") -> str:
    """x in 3 digits with its SI prefix after `sep`: "2.05 k", "512 " (a
    unit follows), or with sep="" "20k", "512" (an axis tick)."""
    for div, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.3g}{sep}{unit}"
    return f"{x:.3g}{sep}"


def fmt_count(x: float) -> str:
    """A count in words a person reads: "2,048", "35,840", "1.17 M" (",.4g"
    printed 35,840 as "3.584e+04")."""
    if abs(x) >= 1e6:
        return fmt_si(x).rstrip()
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def _cycles(x: float) -> str:
    return f"{x:g} cycle{'' if x == 1 else 's'}"


def fmt_amount(x: float, unit: str) -> str:
    """An amount with its unit: "2.05 kB", "2.26 M taken branches"."""
    if unit == "bytes":
        return f"{fmt_si(x)}B"
    if x == 1 and unit.endswith("s"):  # "1 instruction", "1 taken branch"
        unit = unit[:-2] if unit.endswith(("ches", "shes", "sses")) else unit[:-1]
    return f"{fmt_si(x).rstrip()} {unit}"


def usage_node(hw: Hardware, level: str, resource: str, amount: float, contributors: dict,
               notes: dict | None = None) -> Justification:
    """The Usage node of one resource at one level, a child per contributor
    (its `notes[name]`, when given, says why it costs what it does)."""
    notes = notes or {}
    rate = hw.rate(level, resource)
    cycles = amount / rate
    unit, what = RESOURCES[resource]
    per_s = rate * hw.clock_ghz * 1e9
    if unit == "bytes":
        text = (f"limited by {what} at the {level_name(hw, level)} level: "
                f"{fmt_amount(amount, unit)} moved at {fmt_amount(per_s, unit)}/s")
    else:
        text = (f"limited by {what} at the {level_name(hw, level)} level: "
                f"{fmt_amount(amount, unit)} at {fmt_count(rate)} per cycle "
                f"({fmt_amount(per_s, unit)}/s)")
    top = sorted(contributors.items(), key=lambda kv: -kv[1])
    kids = [Justification("Usage", hw.ns(v / rate), f"{name}: {fmt_amount(v, unit)}"
                          + (f" ({notes[name]})" if name in notes else ""),
                          {"statement": name, "amount": v}) for name, v in top if v > 0]
    return Justification("Usage", hw.ns(cycles), text,
                         {"level": level, "resource": resource, "amount": amount,
                          "rate_per_cycle": rate, "cycles": cycles}, kids)


def dependency_node(hw: Hardware, src: str, dst: str, cycles: float, repeat: int = 1
                    ) -> Justification:
    what = f"{src} → {dst}" if repeat == 1 else f"{src} → itself ×{repeat - 1}"
    return Justification("Dependency", hw.ns(cycles), f"{what}: {_cycles(cycles)}",
                         {"src": src, "dst": dst, "cycles": cycles, "repeat": repeat})


def chain_node(hw: Hardware, path: list, cycles: float, deps: list, where: str
               ) -> Justification:
    before, point, after = (path[0], path[len(path) // 2], path[-1]) if path else ("", "", "")
    text = f"dependency chain {where}: {' → '.join(path)}: {_cycles(cycles)}"
    return Justification("Chain", hw.ns(cycles), text,
                         {"before": before, "point": point, "after": after, "path": path,
                          "cycles": cycles}, deps)


def loop_node(hw: Hardware, dims: list, labels: list, iterations: int, times: int,
              per_iteration: Justification, total: float | None = None,
              span: float | None = None) -> Justification:
    """A sequential loop's term: `total` cycles (default iterations × times
    × the chain of one iteration); `span`, the cycles from the first issue
    of its executions to the last (what loops one after another add up)."""
    each = per_iteration.fields["cycles"]
    cycles = each * iterations * times if total is None else total
    rep = f" × {times} executions" if times > 1 else ""
    text = (f"sequential loop {'/'.join(dims)} ({'/'.join(labels)}): {iterations} iterations"
            f"{rep}, each at least {_cycles(each)}")
    if cycles != each * iterations * times:
        text += (f" ({cycles:,.0f} cycles: an execution need not wait for the last result "
                 "of the one before)")
    return Justification("LoopLevel", hw.ns(cycles), text,
                         {"dims": dims, "iterations": iterations, "times": times,
                          "cycles": cycles, "span": cycles if span is None else span},
                         [per_iteration])


def parallelism_node(hw: Hardware, level: str, inner: Justification, eta_min: int,
                     eta_lcm: int, mu_max: float, value_ns: float) -> Justification:
    unit = "thread" if level == "block" else "block"
    share = eta_min / eta_lcm if eta_lcm else 1.0
    least = f"η_min = {eta_min:,} {unit}{'' if eta_min == 1 else 's'}"
    # one number, not the fraction: η_lcm can reach 2^60 (a product of sizes)
    if mu_max == float("inf"):  # all at once: the level below's share alone
        text = (f"the {level_name(hw, level)} level runs its {unit}s all at once (no limit "
                f"on how many): at least η_min/η_lcm = {share:.3g} of the level below "
                f"({least})")
    else:
        rounds = share * -(-eta_lcm // mu_max)
        text = (f"the {level_name(hw, level)} level runs its {unit}s in at least "
                f"η_min/η_lcm · ⌈η_lcm/μ_max⌉ = {rounds:.3g} rounds of the level below "
                f"({least}, at most {int(mu_max):,} at once)")
    return Justification("ParallelismLevel", value_ns, text,
                         {"level": level, "eta_min": eta_min, "eta_lcm": eta_lcm,
                          "mu_max": mu_max}, [inner])
