"""Names people can read: the objects and choices of a candidate in words.

Objects have raw ids (`d14`, `st_ld_a_mad`, `tmp_ld_a_mad`) that a person
cannot place without reading code. Here they are named by what they are:

- a dimension: ``"<instruction> · <logical dimension> · tile <level>"``, e.g.
  ``"mad · n · tile 0"`` — the instruction whose loop nest it belongs to (in
  the kernel before any lowering), the logical dimension it strip-mines and
  its strip (tile) level, 0 being the outermost (the one that takes what the
  inner levels leave). Should two dimensions share that text, the nest label
  (``c_n0``) is added in parentheses.
- an instruction: its name (``"ld_a"``); a store or load a memory lowering
  added: ``"store of ld_a for mad"`` / ``"load of ld_a for mad"`` (the
  producer and consumer of the communication it carries).
- an array: its name (``"A"``); a temporary a lowering added:
  ``"temporary of ld_a for mad"``.
- a logical dimension: its name (``"n"``); anything else: its id.

A choice instance is ``"<choice in words>: <objects>"``, e.g.
``"dim kind: mad · n · tile 0"``, ``"order: ld_a vs mad · n · tile 0"``,
``"dim map: ld_a · m · tile 0 → mad · m · tile 0"`` (``→`` where the second
object ranges over a set that depends on the first, ``vs`` otherwise), and a
decision adds ``" = VALUE"``. `choice_group` puts a choice with the
instructions its objects belong to (``"mad"``, ``"ld_a ↔ mad"``; ``"kernel"``
for none); `raw` is the ``name(d0, d1)`` form, for tooltips and data.

Everything is computed once per problem (a lowering gives a new problem) and
looked up afterwards.
"""

from __future__ import annotations

import weakref

__all__ = ["choice_group", "choice_label", "decision_label", "object_label", "plural", "raw"]

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # problem -> _Names
_WORDS = {"mem_space": "memory space"}  # a choice in words: else its name, "_" as spaces


def _objects(objects) -> tuple:
    if isinstance(objects, str):
        return (objects,)
    return tuple(map(str, objects))


def raw(choice: str, objects) -> str:
    """The raw `name(d0, d1)` form of a choice instance."""
    return f"{choice}({', '.join(_objects(objects))})"


def _is_dim(o) -> bool:
    return hasattr(o, "logical") and isinstance(getattr(o, "level", None), int) \
        and hasattr(o.logical, "name")


def _list(x) -> list:
    """A kernel's collection (a list, or a method returning one)."""
    if callable(x):
        try:
            x = x()
        except TypeError:
            return []
    return list(x) if isinstance(x, (list, tuple)) else []


class _Names:
    """The labels and group tokens of every object of one problem, and the
    choice labels asked for so far. Holds no reference to the problem (it is
    the value of a weak dictionary keyed by it)."""

    def __init__(self, problem):
        self.space = problem.space
        root_kernel = problem.root_problem.kernel
        insts = _list(getattr(root_kernel, "instructions", ()))
        self.rank = {getattr(i, "name", None): k for k, i in enumerate(insts)}
        # the instruction whose loop nest each dimension is, before any lowering
        self.owner: dict[str, str] = {}
        for i in insts:
            for d in _list(getattr(i, "dims", ())):
                self.owner.setdefault(getattr(d, "name", None), i.name)
        self.readers: dict[str, list] = {}  # array name -> instructions accessing it
        for i in insts:
            a = getattr(i, "array", None)
            if a is not None and hasattr(a, "name"):
                self.readers.setdefault(a.name, []).append(i.name)
        self.by_key: dict[tuple[str, str], str] = {}  # (root set, id) -> label
        self.by_id: dict[str, str] = {}
        self.tokens: dict[str, tuple] = {}  # id -> instructions it belongs to
        dims: dict[str, list] = {}
        for (root, i), o in problem.sets.objects.items():
            text, tokens = self._describe(i, o)
            self.by_key[(root, i)] = text
            self.by_id.setdefault(i, text)
            self.tokens.setdefault(i, tokens)
            if _is_dim(o):
                dims.setdefault(text, []).append((root, i, o))
        for text, same in dims.items():  # never two dimensions with one name
            if len(same) > 1:
                for root, i, o in same:
                    extra = getattr(o, "label", "") or i
                    self.by_key[(root, i)] = self.by_id[i] = f"{text} ({extra})"
        self.choices: dict[tuple, str] = {}
        self.groups: dict[tuple, str] = {}
        self.roots: dict[str, tuple] = {}

    def _nest(self, d) -> str:
        owner = self.owner.get(d.name)
        if owner is None:  # not in an instruction: its nest label's prefix
            owner = (getattr(d, "label", "") or d.name).rsplit("_", 1)[0]
        return owner

    def _communication(self, a) -> tuple[str, str] | None:
        pairs = getattr(a, "pairs", ())
        if not pairs:
            return None
        s, d = pairs[0]
        return self._nest(s), self._nest(d)

    def _describe(self, i: str, o) -> tuple[str, tuple]:
        if _is_dim(o):
            nest = self._nest(o)
            return f"{nest} · {o.logical.name} · tile {o.level}", (nest,)
        array = getattr(o, "array", None)
        if getattr(o, "is_instruction", None) is not None and hasattr(o, "op"):
            if array is not None and getattr(array, "temporary", False):
                pc = self._communication(array)
                if pc is not None and o.op in ("store", "load"):
                    # the store runs in the producer's dims, the load in the consumer's
                    return (f"{o.op} of {pc[0]} for {pc[1]}",
                            (pc[0] if o.op == "store" else pc[1],))
            return i, (i,)
        if hasattr(o, "role") and hasattr(o, "pairs"):  # an array
            if getattr(o, "temporary", False):
                pc = self._communication(o)
                if pc is not None:
                    return f"temporary of {pc[0]} for {pc[1]}", pc
            return i, tuple(self.readers.get(i, ()))
        if i in self.rank:  # an instruction of another kind of kernel
            return i, (i,)
        return i, ()

    def roots_of(self, choice: str) -> tuple:
        got = self.roots.get(choice)
        if got is None:
            info = self.space.choices.get(choice)
            if info is None:
                got = ((), " vs ")
            else:
                params = info.params
                roots = tuple(self.space.root(b.set.name) for b in params)
                dependent = any(b.set.arg for b in params[1:])
                got = (roots, " → " if dependent else " vs ")
            self.roots[choice] = got
        return got

    def label(self, choice: str, objects: tuple) -> str:
        roots, sep = self.roots_of(choice)
        parts = []
        for k, o in enumerate(objects):
            text = self.by_key.get((roots[k], o)) if k < len(roots) else None
            parts.append(text if text is not None else self.by_id.get(o, o))
        words = _WORDS.get(choice) or choice.replace("_", " ")
        return f"{words}: {sep.join(parts)}" if parts else words

    def group(self, objects: tuple) -> str:
        seen = []
        for o in objects:
            for t in self.tokens.get(o, ()):
                if t not in seen:
                    seen.append(t)
        if not seen:
            return "kernel"
        seen.sort(key=lambda t: (self.rank.get(t, len(self.rank)), t))
        return " ↔ ".join(seen)


def _names(cand) -> _Names:
    problem = getattr(cand, "problem", cand)
    got = _CACHE.get(problem)
    if got is None:
        got = _CACHE[problem] = _Names(problem)
    return got


def _memo(table: dict, choice: str, objects, make) -> str:
    """`table[(choice, objects)]`, made by `make(objects as a tuple)` the
    first time; the common call (a tuple already) costs one lookup."""
    try:
        return table[(choice, objects)]
    except (KeyError, TypeError):  # not yet, or objects as a list or a string
        objects = _objects(objects)
        got = table.get((choice, objects))
        if got is None:
            got = table[(choice, objects)] = make(objects)
        return got


def object_label(cand, obj: str) -> str:
    """An object of `cand` (a Candidate, or its problem) in words (see the
    module's docstring); an unknown object is its own id."""
    return _names(cand).by_id.get(obj, obj)


def choice_label(cand, choice: str, objects) -> str:
    """A choice instance in words: ``"order: ld_a vs mad · n · tile 0"``,
    ``"size: mad · n · tile 0"``, ``"memory space: temporary of ld_a for mad"``."""
    n = _names(cand)
    return _memo(n.choices, choice, objects, lambda objs: n.label(choice, objs))


def choice_group(cand, choice: str, objects) -> str:
    """Where the explorer lists a choice instance: the instructions its
    objects belong to, in kernel order (``"mad"``, ``"ld_a ↔ mad"``), or
    ``"kernel"`` when they belong to none."""
    n = _names(cand)
    return _memo(n.groups, choice, objects, n.group)


def decision_label(cand, decision) -> str:
    """A decision (`workbench.Decision`) in words: ``"dim kind: mad · n ·
    tile 0 = THREAD"`` (``A|B`` when it keeps several values)."""
    return (f"{choice_label(cand, decision.choice, decision.objects)} = "
            f"{'|'.join(decision.values)}")


def plural(n: int, noun: str) -> str:
    """"1 decision", "2 decisions"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"
