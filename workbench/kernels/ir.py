"""Kernel representation for linear algebra on GPUs (thesis §4.2).

A kernel lists *instructions*, each with its own *iteration dimensions*;
*logical dimensions* of the problem are strip-mined into several iteration
dimensions whose sizes are decisions. Instructions read values of other
instructions through *point-to-point communication*: a list of (producer
dimension, consumer dimension) pairs; along producer dimensions that are
neither shared nor paired the consumer reads the value of the last iteration.
A *reduction* operand reads the instruction's own value of the previous
iteration along its reduction dimensions, initialised by another
instruction. Arrays are inputs, outputs, or temporaries added when a
communication is lowered to memory; memory accesses give a stride per
logical dimension (eq. 4.2).

The objects' public methods are what `gpu.space` snippets call.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from itertools import product

from ..errors import WorkbenchError
from ..target import DEFAULT_TARGET, load_target


@dataclass(eq=False)
class LogicalDim:
    """A dimension of the problem, strip-mined into `1 + len(factors)` levels;
    `factors[i]` lists the sizes allowed for level i+1 (level 0 is outermost and
    takes what is left). `reduced`: some instruction reduces along it."""
    name: str
    size: int
    factors: tuple[tuple[int, ...], ...] = ()
    reduced: bool = False

    # what snippets of a .space may read or call (space/snippet.py: the sandbox)
    snippet_api = frozenset({"factors", "level_sizes", "levels", "name", "reduced", "size"})

    @property
    def levels(self) -> int:
        return 1 + len(self.factors)

    def level_sizes(self, level: int) -> tuple[int, ...]:
        """Sizes a dimension at `level` may take, given that the sizes of all
        levels multiply to `size`."""
        combos = {math.prod(c) for c in product(*self.factors)} if self.factors else {1}
        if level == 0:
            return tuple(sorted(self.size // f for f in combos if self.size % f == 0))
        others = [f for i, f in enumerate(self.factors) if i != level - 1]
        rest = {math.prod(c) for c in product(*others)} if others else {1}
        return tuple(sorted(s for s in self.factors[level - 1]
                            if any(self.size % (s * r) == 0 for r in rest)))


@dataclass(eq=False)
class Dim:
    name: str
    logical: LogicalDim
    level: int
    kernel: Kernel = field(repr=False, default=None)
    label: str = ""  # e.g. "a_m1": nest of ld_a, logical dim m, strip level 1

    # what snippets of a .space may read or call (space/snippet.py: the sandbox)
    snippet_api = frozenset({"can_block", "can_vectorize", "is_dim", "is_instruction",
                             "is_parallelizable", "is_reduction_dim", "is_static", "label",
                             "level", "logical", "mapped_dims", "name", "owners",
                             "possible_sizes", "same_tile", "temp_partner", "tile_rep",
                             "vector_widths"})

    # -- kinds of statements (Statements = Instructions ∪ Dimensions)
    def is_dim(self) -> bool:
        return True

    def is_instruction(self) -> bool:
        return False

    def is_static(self) -> bool:
        return True  # every size is instantiated in the generated code

    def possible_sizes(self) -> tuple[int, ...]:
        return self.logical.level_sizes(self.level)

    def owners(self) -> list[Instruction]:
        return [i for i in self.kernel.instructions() if self in i.dims]

    def is_reduction_dim(self) -> bool:
        return any(self in i.reduction_dims() for i in self.owners())

    def is_parallelizable(self) -> bool:
        """No value is carried along it (BLOCK, THREAD, VECTOR need that)."""
        return not self.is_reduction_dim()

    def can_block(self) -> bool:
        """BLOCK dimensions enclose every instruction (thesis §4.3.3), so a
        reduction nested in a block dimension of a reduced logical dimension
        would be replicated: only dimensions of unreduced logical ones."""
        return self.is_parallelizable() and not self.logical.reduced

    def vector_widths(self) -> tuple[int, ...]:
        """Vector widths the instructions owning this dimension can use."""
        owners = self.owners()
        if not owners or self.level != self.logical.levels - 1:
            return ()
        widths = tuple(self.kernel.target.vector_widths)
        for i in owners:
            widths = tuple(w for w in widths if i.vector_ok(self, w))
        return widths

    def can_vectorize(self) -> bool:
        return bool(self.vector_widths()) and self.is_parallelizable()

    def mapped_dims(self) -> list[Dim]:
        """Consumer dimensions this dimension communicates with point to point."""
        return [d for (s, d) in self.kernel.pairs() if s is self]

    def same_tile(self, other) -> bool:
        """Same logical dimension and strip level (the dims that may fuse)."""
        return (other.is_dim() and other is not self and other.logical is self.logical
                and other.level == self.level)

    def temp_partner(self) -> list[Dim]:
        return self.kernel.temp_partner(self)

    def tile_rep(self) -> list[Dim]:
        """The first dimension of the same logical dimension and level (all of
        them have the same size), unless it is this one."""
        rep = self.kernel.tile_rep(self)
        return [] if rep is self else [rep]

    def __repr__(self) -> str:
        return self.name


@dataclass(eq=False)
class Array:
    name: str
    length: int  # elements
    strides: dict  # logical dim name -> stride (elements); empty for temporaries
    role: str  # "input" | "output" | "temporary"
    pairs: tuple = ()  # temporaries: the (producer dim, consumer dim) pairs it holds
    dtype: str = "float"
    vector_src: object = None  # temporaries: producer dim of the pair stored as vectors

    # what snippets of a .space may read or call (space/snippet.py: the sandbox)
    snippet_api = frozenset({"dtype", "length", "name", "paddable", "read_only", "role",
                             "temporary"})

    @property
    def temporary(self) -> bool:
        return self.role == "temporary"

    @property
    def paddable(self) -> bool:
        """A temporary with rows to pad: indexed by two pairs or more."""
        return self.temporary and len(self.pairs) >= 2

    @property
    def read_only(self) -> bool:
        return self.role == "input"

    def __repr__(self) -> str:
        return self.name


@dataclass(eq=False)
class Operand:
    """`inst`: value of instruction `source` (with `pairs`); `reduce`: own value of
    the previous iteration along `dims`, initialised by `source` (whose dims
    are `pairs`-ed with the reduction's other dims); `param`: a
    scalar argument; `const`: a literal; `pairs`: no value, the pairs of a
    communication lowered to memory (kept for the order constraints)."""
    kind: str
    source: str = ""
    pairs: tuple = ()  # ((producer Dim, consumer Dim), ...)
    dims: tuple = ()  # reduction dims
    value: float = 0.0
    lowered: bool = False  # pairs now travel through a temporary array


@dataclass(eq=False)
class Instruction:
    name: str
    op: str  # load | store | fma | mul | add | mov
    dims: list
    operands: list
    array: Array | None = None
    kernel: Kernel = field(repr=False, default=None)
    after: tuple = ()  # memory dependencies (instruction names)

    # what snippets of a .space may read or call (space/snippet.py: the sandbox)
    snippet_api = frozenset({"array", "arrays", "dims", "has_dim", "is_dim", "is_instruction",
                             "is_load", "is_mem", "is_reduction", "name", "no_partner", "op",
                             "partner", "read_only_array", "reduction_dims", "stride",
                             "unit_stride", "vector_ok"})

    def is_dim(self) -> bool:
        return False

    def is_instruction(self) -> bool:
        return True

    def is_mem(self) -> bool:
        return self.op in ("load", "store")

    def is_load(self) -> bool:
        return self.op == "load"

    def is_reduction(self) -> bool:
        return any(o.kind == "reduce" for o in self.operands)

    def reduction_dims(self) -> tuple:
        return tuple(d for o in self.operands if o.kind == "reduce" for d in o.dims)

    def has_dim(self, d) -> bool:
        return d in self.dims

    def points(self) -> int:
        """The points of its iteration domain: the product of the sizes of
        the logical dimensions it iterates on (its strip levels multiply to
        them)."""
        return math.prod(ld.size for ld in {d.logical for d in self.dims})

    def arrays(self) -> list[Array]:
        return [self.array] if self.array is not None else []

    def read_only_array(self) -> bool:
        return self.array is not None and self.array.read_only

    def stride(self, d: Dim) -> int | None:
        """Stride of the logical index along `d`'s logical dimension, times
        the array stride (None: the access does not vary along it)."""
        if self.array is None or self.array.temporary:
            return None
        return self.array.strides.get(d.logical.name) if d in self.dims else None

    def vector_ok(self, d: Dim, width: int) -> bool:
        """A `width`-wide vector access along `d` is contiguous and aligned:
        unit stride along d and every other stride a multiple of the width."""
        if self._temp_vector(d):
            return True
        if not self.is_mem() or self.stride(d) != 1:
            return False
        return all(s % width == 0 for name, s in self.array.strides.items()
                   if name != d.logical.name)

    def unit_stride(self, d) -> bool:
        return d.is_dim() and (self.stride(d) == 1 or self._temp_vector(d))

    def _temp_vector(self, d) -> bool:
        """A temporary's store is contiguous along the producer dim of its
        vector pair: the layout puts that pair innermost (codegen/tree)."""
        return (self.op == "store" and self.array is not None and self.array.temporary
                and d is self.array.vector_src)

    def partner(self, e, p) -> bool:
        """`p` is this instruction's own dimension matching the foreign `e`."""
        return (p in self.dims and e not in self.dims and p is not e
                and p.logical is e.logical and p.level == e.level)

    def no_partner(self, e) -> bool:
        return e not in self.dims and not any(self.partner(e, p) for p in self.dims)

    def __repr__(self) -> str:
        return self.name


class Kernel:
    """A kernel: logical dims, dims, instructions, arrays, scalar parameters."""

    space = "gpu"

    # what snippets of a .space may read or call (space/snippet.py: the sandbox)
    snippet_api = frozenset({"array_dims", "arrays", "can_lower", "dims", "dims_by_label",
                             "instruction", "instructions", "is_lowered", "last_value_dim",
                             "logical_dims", "lower_dim_map", "must_precede", "name", "pairs",
                             "params", "same_operand", "shared_memory_elements", "statements",
                             "strip_dims", "target", "temp_partner", "tile_rep", "trigger_done",
                             "vector_pair"})

    def __init__(self, name: str, spec: dict, target: str = DEFAULT_TARGET):
        self.name = name
        self._spec = dict(spec)
        self.target = load_target(target)
        self._logical: list[LogicalDim] = []
        self._dims: list[Dim] = []
        self._insts: list[Instruction] = []
        self._arrays: list[Array] = []
        self.params: list[str] = []
        self._cache: dict = {}

    # ------------------------------------------------------------ building
    def logical_dim(self, name, size, factors=(), reduced=False) -> LogicalDim:
        if size < 1:
            raise WorkbenchError(f"dimension {name}: size must be positive, got {size}")
        if any(other.name == name for other in self._logical):
            # labels, recipes and the model name logical dimensions by name
            raise WorkbenchError(f"kernel {self.name}: a second logical dimension named {name!r}")
        ld = LogicalDim(name, size, tuple(tuple(f) for f in factors), reduced)
        for level in range(ld.levels):
            if not ld.level_sizes(level):
                raise WorkbenchError(f"dimension {name} of size {size}: no strip-mining "
                                     f"factor of level {level} divides it")
        self._logical.append(ld)
        return ld

    def nest(self, prefix: str, *logical: LogicalDim) -> list[Dim]:
        """A fresh loop nest: every level of the given logical dims."""
        out = []
        for ld in logical:
            for level in range(ld.levels):
                # names d0, d1, ... as in the thesis; the label says where it comes from
                d = Dim(f"d{len(self._dims)}", ld, level, self, f"{prefix}_{ld.name}{level}")
                self._dims.append(d)
                out.append(d)
        return out

    def array(self, name, length, strides, role) -> Array:
        a = Array(name, length, dict(strides), role)
        self._arrays.append(a)
        return a

    def inst(self, name, op, dims, operands=(), array=None) -> Instruction:
        if any(i.name == name for i in self._insts):
            raise WorkbenchError(f"two instructions are named {name!r}")
        i = Instruction(name, op, list(dims), list(operands), array, self)
        self._insts.append(i)
        self._cache.clear()
        return i

    @staticmethod
    def pair(src_dims, dst_dims, *logical) -> tuple:
        """Pairs mapping the levels of the given logical dims of two nests."""
        names = {ld.name for ld in logical}
        dst = {(d.logical.name, d.level): d for d in dst_dims}
        return tuple((d, dst[(d.logical.name, d.level)]) for d in src_dims
                     if d.logical.name in names)

    # ------------------------------------------------------------- queries
    def statements(self) -> list:
        return self._insts + self._dims

    def instructions(self) -> list[Instruction]:
        return list(self._insts)

    def dims(self) -> list[Dim]:
        return list(self._dims)

    def arrays(self) -> list[Array]:
        return list(self._arrays)

    def logical_dims(self) -> list[LogicalDim]:
        return list(self._logical)

    def dims_by_label(self) -> dict[str, str]:
        """{label: name} of the dimensions (e.g. "c_m1" → "d11"): how a person
        or a recipe names a loop."""
        return {d.label: d.name for d in self._dims}

    def instruction(self, name: str) -> Instruction:
        for i in self._insts:
            if i.name == name:
                return i
        raise WorkbenchError(f"kernel {self.name} has no instruction {name!r}")

    def pairs(self) -> list[tuple]:
        got = self._cache.get("pairs")
        if got is None:
            got = self._cache["pairs"] = [p for i in self._insts for o in i.operands
                                          if o.kind in ("inst", "pairs", "reduce") for p in o.pairs]
        return got

    def tile_rep(self, d: Dim) -> Dim:
        for e in self._dims:
            if e.logical is d.logical and e.level == d.level:
                return e
        raise AssertionError(d)

    def strip_dims(self, ld: LogicalDim) -> list[Dim]:
        return [self.tile_rep(e) for e in self._dims
                if e.logical is ld and self.tile_rep(e) is e]

    def array_dims(self, a: Array) -> list[Dim]:
        """Producer-side dimensions of a temporary array's pairs."""
        return [s for s, _ in a.pairs]

    def _operand_of(self, s, d):
        for i in self._insts:
            for o in i.operands:
                if o.kind in ("inst", "pairs", "reduce") and (s, d) in o.pairs:
                    return i, o
        return None, None

    def is_lowered(self, s, d) -> bool:
        _, o = self._operand_of(s, d)
        return o is not None and o.lowered

    def can_lower(self, s, d) -> bool:
        """A pair may travel through memory: not the initialisation of a
        reduction (its accumulators live in registers)."""
        _, o = self._operand_of(s, d)
        return o is not None and o.kind != "reduce"

    def vector_pair(self, s, d) -> bool:
        """(s, d) may be stored to a temporary as vectors along s: s is the
        innermost strip of a logical dim the producer accesses with unit
        stride (the temporary's layout then puts the pair innermost)."""
        _, o = self._operand_of(s, d)
        if o is not None and o.lowered:  # the decision the lowering recorded
            return any(a.vector_src is s for a in self._arrays if (s, d) in a.pairs)
        if o is None or o.kind != "inst":
            return False
        p = self.instruction(o.source)
        return p.is_load() and s.level == s.logical.levels - 1 and p.stride(s) == 1

    def temp_partner(self, s) -> list:
        """Consumer dim of the lowered pair whose producer dim is `s`."""
        return [d for a in self._arrays if a.temporary for (x, d) in a.pairs if x is s][:1]

    def last_value_dim(self, s, d, r) -> bool:
        """`r` is a dimension of the producer of the pair (s, d) that the
        consumer neither shares nor pairs: it reads the value of r's last
        iteration, so r runs before it (`must_precede`) and before a store
        that would carry the pair through memory."""
        _, o = self._operand_of(s, d)
        if o is None or o.kind != "inst" or o.lowered or not r.is_dim():
            return False
        p = self.instruction(o.source)
        return r in p.dims and r is not s and all(x is not r for x, _ in o.pairs)

    def same_operand(self, s, d, s2, d2) -> bool:
        _, o = self._operand_of(s, d)
        return o is not None and (s2, d2) in o.pairs and (s2, d2) != (s, d)

    def must_precede(self, x, y) -> bool:
        """Dependencies (eq. 4.6): x must run before y."""
        key = ("prec", x.name, y.name)
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = self._must_precede(x, y)
        return got

    def _must_precede(self, x, y) -> bool:
        if y.is_instruction():
            for o in y.operands:
                if o.kind not in ("inst", "reduce"):
                    continue
                p = self.instruction(o.source)
                if x is p:
                    return True
                # the consumer reads the value of the last iteration along the
                # producer's own dims that it neither shares nor pairs
                if (o.kind == "inst" and x.is_dim() and x in p.dims and x not in y.dims
                        and all(s is not x for s, _ in o.pairs)):
                    return True
            return x.is_instruction() and x.name in y.after
        # y is a dim: an initialisation runs before its reduction loops
        return x.is_instruction() and any(
            o.kind == "reduce" and o.source == x.name and y in o.dims
            for i in self._insts for o in i.operands)

    # ------------------------------------------------------------ lowering
    def lower_dim_map(self, s, d) -> None:
        """Trigger action (thesis §4.3.4): move the communication holding the
        pair (s, d) into a temporary array, with a store in the producer's
        dims and a load in the consumer's."""
        s, d = self._by_name(s), self._by_name(d)
        consumer, o = self._operand_of(s, d)
        if o is None:
            raise WorkbenchError(f"no point-to-point communication between {s} and {d}")
        if o.lowered:
            return
        producer = self.instruction(o.source)
        tag = f"{producer.name}_{consumer.name}"
        vec = [a for a, b in o.pairs if self.vector_pair(a, b)]
        arr = Array(f"tmp_{tag}", 0, {}, "temporary", tuple(o.pairs), vector_src=(vec or [None])[0])
        self._arrays.append(arr)
        st = self.inst(f"st_{tag}", "store", [a for a, _ in o.pairs],
                       [Operand("inst", producer.name)], arr)
        ld = self.inst(f"ld_{tag}", "load", [b for _, b in o.pairs], (), arr)
        ld.after = (st.name,)
        # the consumer now reads the load in its own dims; the pairs stay as
        # the (memory) communication between the store and the load
        new = Operand("inst", ld.name)
        consumer.operands[consumer.operands.index(o)] = new
        o.lowered = True
        st_pairs = Operand("pairs", st.name, tuple(o.pairs), lowered=True)
        ld.operands.append(st_pairs)  # keeps (s, d) in pairs() for the order constraints
        self._cache.clear()

    def trigger_done(self, objs) -> bool:
        """The lowering trigger on (src, dst) would change nothing: its
        communication already goes through memory (space/problem.extended)."""
        s, d = (self._by_name(o) for o in objs)
        return self.is_lowered(s, d)

    def _by_name(self, obj):
        name = obj if isinstance(obj, str) else obj.name
        for x in self._dims:
            if x.name == name:
                return x
        raise WorkbenchError(f"kernel {self.name} has no dimension {name!r}")

    def shared_memory_elements(self) -> int:
        """Shared memory of a block, in 4-byte elements: the opt-in limit of
        dynamic shared memory where the target has one."""
        t = self.target
        return (getattr(t, "shared_memory_optin_bytes", None) or t.shared_memory_bytes) // 4

    def copy(self) -> Kernel:
        # the copy starts without the original's root candidates
        roots = self.__dict__.get("_candidate_roots")
        return copy.deepcopy(self, {id(roots): {}} if roots is not None else {})

    def spec(self) -> dict:
        return dict(self._spec)

    # ------------------------------------------------------- data & checks
    def inputs(self) -> list[Array]:
        return [a for a in self._arrays if a.role == "input"]

    def outputs(self) -> list[Array]:
        return [a for a in self._arrays if a.role == "output"]

    def __repr__(self) -> str:
        return (f"<Kernel {self.name}: {len(self._insts)} instructions, "
                f"{len(self._dims)} dimensions>")
