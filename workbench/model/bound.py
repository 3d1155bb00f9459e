"""The lower bound B(c) on the run time of every implementation of a
candidate (thesis ch. 5), instantiated for the GPU space.

1. Local statement analysis (§5.1.2): latency and usage of each instruction,
   the minimum over its open decisions (`memory.py` for accesses). Only an
   instruction's own dimensions count instances: a compiler may hoist or
   merge replicated copies, so foreign nesting never adds usage.
2. Instance counts N_L^i (eq. 5.15) over the dimensions that *may* map to
   parallelism level ≤ i, with size_min per nest (`facts.py`).
3. latency(i, ∅) (eqs. 5.16–5.17): usage over resources at each level,
   with the warp-granularity correction once a block's shape is known.
4. B_0, one thread (§5.2): the longest of (a) the thread's own issue time,
   (b) a dependency chain through point-to-point and reduction dependencies,
   a reduction repeating its instruction once per reduced element, and
   (c) every surely sequential loop, each iteration at least as long as the
   dependencies its body carries within one iteration, once per execution
   (on a GPU target the loops of other nests around it count too:
   `_Model._loops_around` on open candidates, `_executions` on fixed
   ones; a loop that may have one iteration counts no copies). These are
   paths of
   the execution graph G_c (Def. 5.6), so any of them bounds the thread.
5. B_1, B_2 (eq. 5.27): η_min, η_lcm and μ_max per level; μ_max from
   threads per SM, blocks per SM and shared memory per SM.
6. B_2 also holds one joint term the thesis does not have (`reuse.py`):
   an arithmetic instruction's register tile against its threads, the least
   over the splits of its dimensions' sizes that the open choices allow.
"""

from __future__ import annotations

import functools
import graphlib
import math

from ..codegen.tree import Implementation
from ..space.values import DimKind, Order, ThreadMapping
from . import memory
from .base import Bound, model_for, register_model
from .cloops import c_loops
from .facts import ARITH, SEQUENTIAL, UP_TO, VECTOR_MAX, Facts, representatives
from .facts import _nest_of as _nest
from .hardware import LEVELS, Hardware, hardware
from .justification import (
    Justification,
    chain_node,
    dependency_node,
    fmt_time,
    loop_node,
    parallelism_node,
    usage_node,
)
from .pinned import pinned_waits
from .reuse import operand_reuse


def bound(cand, target=None, parent: Bound | None = None, override: dict | None = None
          ) -> Bound:
    """Lower bound of `cand` on `target` (a data/targets name; default: the
    kernel's). With `parent`, the value never drops below the parent's.
    The model is the one registered for the kernel's space (`base.model_for`):
    a basic-block candidate gets the chapter-2 schedule bound (in cycles)."""
    return model_for(getattr(cand.kernel, "space", None))(cand, target, parent, override)


def gpu_bound(cand, target=None, parent: Bound | None = None, override: dict | None = None
              ) -> Bound:
    """The chapter-5 model of the GPU space."""
    f = Facts(cand, override)  # refuses kernels outside the GPU space first
    hw = hardware(target if target is not None else cand.kernel.target.name)
    m = _Model(f, hw)
    raw, just = m.run()
    value = raw if parent is None else max(raw, parent.value_ns)
    if parent is not None and raw < parent.value_ns:
        just = Justification("Bound", value, f"the parent's bound ({fmt_time(value, 4)}): the "
                             f"model gives {fmt_time(raw, 4)} for this candidate alone",
                             {"raw_ns": raw}, [parent.justification, just])
    return Bound(value, raw, just, hw.name, m.level_ns, frozenset(f.reads))


class _Model:
    def __init__(self, facts: Facts, hw: Hardware):
        self.f = facts
        self.hw = hw
        self.k = facts.kernel
        self.insts = self.k.instructions()
        self.impl = Implementation(facts.cand) if facts.cand.is_fixed and not facts.override \
            else None
        self.level_ns: dict = {}
        self._warp: dict = {}
        self._layout: tuple | None = None  # (memory.thread_layout,) once computed
        self._settled: dict = {}  # statement -> memory.settled_costs
        self._notes: dict = {}  # resource -> {statement: why it costs that much}
        self._widths: dict = {}  # statement -> the widths the compiler may merge it to
        self._counts: dict = {}
        self._foreign: dict = {}  # (level, store) -> dims that surely map to its kinds
        self._loops: dict = {}
        self._sinks: dict | None = None
        self._needed: dict = {}
        self._user_map: dict | None = None
        self._usage: dict = {}
        self._counted: dict = {}
        self._kept: dict = {}  # temporary -> whether the reference C keeps its accesses

    # ------------------------------------------------- local analysis
    def forwarded(self, s) -> bool:
        """An access to a temporary in the reference C, which the compiler
        may drop: its arrays are `calloc`ed in the block's body, so -O1's
        redundancy and dead-store elimination forward a store to the loads
        after it (an axpy 2^16 search's best ran 18.8 µs where the model,
        counting 9 accesses an element, six of them a temporary's, bounded
        it at 23.8 µs on `cpu_reference` and 25.8 µs on the host's own
        table). It costs nothing and takes no time there, unless the C
        surely keeps it (`kept`); CUDA keeps such accesses (shared memory
        across a barrier, `asm` for global)."""
        if self.hw.runs != "cpu" or not s.is_mem() or not s.array.temporary:
            return False
        got = self._kept.get(s.array.name)
        if got is None:
            got = self._kept[s.array.name] = self.kept(s.array)
        return not got

    def kept(self, a) -> bool:
        """The reference C surely stores temporary `a` and loads it back from
        memory: one of its pairs is not fused, and its dimension on one side
        is surely a C loop (a sequential kind) of at least `loop_min_trip`
        iterations (the compiler keeps such loops) that does not enclose the
        access on the other side. The store's value then comes out of a loop
        the compiler cannot see through (-O1 neither fuses loops nor
        replaces arrays by scalars), and it indexes the temporary along that
        dimension, so no store moves out of the loop either
        (`codegen.tree.temp_pairs`)."""
        st = ld = None
        for i in self.insts:
            if i.array is a:
                st, ld = (i, ld) if i.op == "store" else (st, i)
        if st is None or ld is None:
            return False
        least = self.hw.least_loop_trip
        for p in a.pairs:
            if self.f.may_merge(p[0], p[1]):
                continue
            for d, other in ((p[0], ld), (p[1], st)):
                if self.f.kinds(d) <= SEQUENTIAL and self.f.sizes(d)[0] >= least \
                        and Order.OUT not in self.f.order(d, other):
                    return True
        return False

    def latency(self, s) -> float:
        if self.forwarded(s):
            return 0.0
        lat = self.hw.latency
        if s.op == "load":
            return memory.load_latency(self.f, self.hw, s)
        if s.op == "store":
            return lat["store"]
        if s.op == "mov":
            return lat["mov"]
        return lat["fp"]

    def count(self, s, level: int, instructions: bool) -> float:
        """N^level_∅(s): instances of `s` per thread (0), block (1), GPU (2);
        `instructions` collapses vector dimensions into one instruction and
        lets the compiler merge unrolled accesses (`memory.may_merge`). Own dimensions
        count as in eq. 5.15; on a GPU target the foreign THREAD and BLOCK
        dimensions replicate the statement too (`replication`)."""
        if self.hw.runs == "cpu":
            # the reference C is scalar (-O1 does not vectorise; VECTOR
            # dims are C loops): one instruction per element
            instructions = False
        key = (s.name, level, instructions)
        got = self._counts.get(key)
        if got is None:
            own = self.own_count(s, level, instructions)
            got = own * self.replication(s, level)
            if level == 1 and s.op != "store" and not self.sinks(s):
                # every thread of a block runs a statement that is not a
                # guarded store (MAPPED thread dims have equal sizes, so no
                # narrower guard): T_min threads × its own sequential dims;
                # the reference C emulates them the same way (every region
                # inside loops over the block's threads, `codegen.printer`)
                seq = [d for d in s.dims if self.f.kinds(d) <= SEQUENTIAL]
                t_min = max(1, self.f.counter("threads_per_block")[0])
                got = max(got, t_min * self.own_count(s, 0, instructions, seq))
            self._counts[key] = got
        return got

    def own_count(self, s, level: int, instructions: bool, only=None) -> float:
        """Instances of `s` along its own dimensions that may map to a level
        ≤ `level` (restricted to `only` if given)."""
        f = self.f
        everything = [d for d in (s.dims if only is None else only) if self.counts_at(d, level)]
        if instructions and s.is_mem() and self.impl is not None and self.hw.runs == "cuda":
            # a fixed candidate: its elements over the widest access its
            # unrolled copies allow (`memory.merge_widths`: exact runs where
            # the rule below multiplies every size that may merge)
            return f.size_min(everything) / max(self.merge_widths(s))
        dims, merged, vec = [], 1, False
        for d in everything:
            kinds = f.kinds(d)
            if instructions and DimKind.VECTOR in kinds:
                vec = True
                continue
            if instructions and DimKind.UNROLL in kinds and memory.may_merge(f, s, d):
                merged *= f.sizes(d)[-1]
            dims.append(d)
        n = f.size_min(dims)
        if not instructions:
            return n
        # vectorised accesses: float4 is the widest access (limits.vector_widths),
        # so the compiler merges at most 4 elements into one instruction,
        # however many unrolled dims there are (÷4 once, not ÷4 per
        # dimension), and no more than the unrolled dims it may merge along
        # hold (÷2 for one of size 2: else deciding UNROLL out of {UNROLL,
        # VECTOR} lowered the count); never fewer than elements / 4
        n = n / min(VECTOR_MAX, merged)
        if vec or merged > 1:
            n = max(n, f.size_min(everything) / VECTOR_MAX)
        return n

    def counts_at(self, d, level: int) -> bool:
        """`d` counts as sequential in N^level (eq. 5.15): it may map to a
        level ≤ `level`, and if it may map above, doing so would add its own
        size to that level's parallelism. Eq. 5.25 divides a level's bound by
        η_lcm/η_min on that ground (eqs. 5.23–5.24: each dimension counted
        below but mapped above multiplies η by its size). A THREAD dimension
        MAPPED to another one, or a BLOCK dimension merged with another,
        shares its hardware dimension and adds nothing, so where that may
        happen the dimension is not counted: else a thread whose mad could
        run along a dimension MAPPED to the block's 1,024 threads was bounded
        as if it ran all 1,024 rows (matmul 1024: 2.1 ms for a candidate
        whose THREAD child the model bounds at 50 µs)."""
        key = (d.name, level)
        got = self._counted.get(key)
        if got is None:
            f = self.f
            kinds = f.kinds(d)
            above = kinds - UP_TO[level]
            got = bool(kinds & UP_TO[level])
            if got and DimKind.THREAD in above:
                got = not any(e is not d and ThreadMapping.MAPPED in f.dom("thread_mapping", d, e)
                              for e in self.k.dims())
            if got and DimKind.BLOCK in above:
                got = not any(f.may_merge(d, e) and DimKind.BLOCK in f.kinds(e)
                              for e in self.k.dims())
            self._counted[key] = got
        return got

    def replication(self, s, level: int, store: bool | None = None, own=None) -> float:
        """Instances of `s` (or of a loop's control, with `own` its dims) that
        foreign THREAD and BLOCK dimensions add at level ≥ 1 (thesis eq. 5.15
        counts every dimension a statement is nested in, Telamon multiplies
        by the threads not mapped to the statement's own dimensions): in the
        generated CUDA every statement but a guarded store runs in every
        thread of its block (`codegen.tree.guard`), and every block runs the
        whole body. The same on the CPU reference executor: its C wraps every
        region between barriers in loops over all the threads of the block
        and runs the blocks as loops (`codegen.printer.Printer.flush`), each
        statement writing its own per-thread copy of its variable (distinct
        addresses: no copy can be skipped). Open choices: one representative per
        class that surely maps to THREAD/BLOCK (never MAPPED or merged with
        an own dimension or a kept one), each at its minimal size."""
        if level == 0:
            return 1.0
        if own is None and self.impl is not None:
            return self._fixed_replication(s, level)
        store = s.op == "store" if store is None else store
        own = list(s.dims) if own is None else own
        f = self.f
        allowed = {DimKind.THREAD} if level == 1 else {DimKind.THREAD, DimKind.BLOCK}
        if store:  # a store runs once per block along the thread dims it lacks
            allowed = allowed & {DimKind.BLOCK}

        def related(a, b):
            if f.may_merge(a, b):
                return True
            return ThreadMapping.MAPPED in f.dom("thread_mapping", a, b)
        foreign = self._foreign.get((level, store))
        if foreign is None:  # the dims that surely map to an allowed kind, once per model
            foreign = self._foreign[(level, store)] = [d for d in self.k.dims()
                                                       if (k := f.kinds(d)) and k <= allowed]
        # a value only guarded stores use runs only where they run (`sinks`):
        # a thread dimension adds instances of it only where a statement its
        # value surely reaches in registers runs along it (`needed_dims`)
        # (one set per store it reaches: it runs in at least the threads of
        # the busiest, not in their product)
        needs: tuple = (None,)
        if s is not None and not store and self.sinks(s):
            needs = self.needed_dims(s) or (frozenset(),)
        mine = set(own)
        near = [e for e in own if f.kinds(e) & allowed]
        best = 1.0
        for need in needs:
            kept: list = []
            for d in foreign:
                if need is not None and d not in need and f.kinds(d) != {DimKind.BLOCK}:
                    continue
                if d in mine or any(related(d, e) for e in near) or \
                        any(related(d, e) for e in kept):
                    continue
                kept.append(d)
            if kept:
                best = max(best, float(f.size_min(kept)))
        return best

    def _fixed_replication(self, s, level: int) -> float:
        """The exact factor on a fixed implementation: threads that run `s`
        (its guard) over those its own thread dims account for, and at the
        GPU level the blocks over its own block dims."""
        impl = self.impl
        anc = impl.ancestors(s)
        factor = self._running(s) / self._own_threads(s)
        if level == 2:
            own_b = math.prod(lp.size for lp in anc if lp.kind == DimKind.BLOCK
                              and any(d in s.dims for d in lp.dims))
            factor *= impl.blocks() / own_b
        return max(factor, 1.0)

    def merge_widths(self, s) -> list[int]:
        """The widths the compiler may merge the accesses of `s` to (a fixed
        implementation; `memory.merge_widths`), once per model."""
        got = self._widths.get(s.name)
        if got is None:
            got = self._widths[s.name] = memory.merge_widths(self.impl, s)
        return got

    def warp(self, s, width: int | None = None) -> tuple[float, float]:
        """(sectors, wavefronts) per warp access, each lane moving `width`
        elements (its VECTOR size if None): exact minimum over warps when
        the implementation is fixed, one of each otherwise."""
        if self.impl is None:
            return (0.0 if memory.surely_shared(self.f, s) else 1.0), 1.0
        key = (s.name, width)
        if key not in self._warp:
            self._warp[key] = memory.warp_access(self.impl, s, self.hw, width)
        return self._warp[key]

    def settled(self, s) -> list | None:
        """`memory.settled_costs` of `s` on a GPU target (an open candidate
        whose warps for `s` are already laid out: coalescing and bank
        conflicts show in the bound before the candidate is fixed), once
        per model; None while they are not."""
        if self.impl is not None or self.hw.runs != "cuda":
            return None
        if self._layout is None:
            self._layout = (memory.thread_layout(self.f, self.k),)
        if s.name not in self._settled:
            self._settled[s.name] = memory.settled_costs(self.f, self._layout[0], s, self.hw)
        return self._settled[s.name]

    def warp_factor(self, s) -> float:
        """Warp granularity (§5.3.1): lanes of partly filled warps still
        occupy issue slots. Applied when the block's shape is fixed, over
        the threads that run `s` (every thread of the block on a GPU target,
        but for a guarded store; its own thread loops otherwise)."""
        if self.impl is None:
            return 1.0
        if self.hw.runs == "cuda":
            active = self._running(s)
        else:
            active = math.prod(lp.size for lp in self.impl.ancestors(s)
                               if lp.kind == DimKind.THREAD)
        ws = self.hw.warp_size
        return math.ceil(active / ws) * ws / active

    def sinks(self, s) -> tuple:
        """The stores `s`'s value reaches through registers (operands of kind
        inst and reduce; a lowered pair goes through memory and ends at its
        store). The compiler may compute a value only where one of them runs:
        nvcc sinks loads and FMAs whose only use is a store guarded by
        `threadIdx.x == 0` under that guard (an H200 ran 67 M such shared
        loads, counted for all 1,024 threads of each block, in 200 µs against
        a 269 µs bound), so a statement runs in at least the threads of its
        busiest sink, not in every thread. A store is its own sink. A load
        of global memory has none: it is an inline-assembly intrinsic
        (`memory.asm_access`), which nvcc runs where it is written, in every
        thread its own guard lets through (counting the `__ldg`s of a
        guarded copy in the guard's 4 threads of 1,024 put an H200 matmul
        256 of 641 µs at a bound of 5.6 µs; in every thread: 35.5 µs). Only
        on a GPU target: the reference C keeps a copy of each value per
        thread and its audits hold without this (none there)."""
        if self.hw.runs != "cuda" or s.op == "load" and memory.asm_access(self.f, s):
            return ()
        if self._sinks is None:
            users = self._users()
            memo: dict = {}

            def reach(x, seen=()):
                if x.name in memo:
                    return memo[x.name]
                if x.op == "store":
                    got = (x,)
                else:
                    got = tuple(dict.fromkeys(c for u, _ in users.get(x.name, ())
                                              if u not in seen for c in reach(u, (*seen, x))))
                memo[x.name] = got
                return got
            self._sinks = {x.name: reach(x) for x in self.insts}
        return self._sinks.get(s.name, ())

    def needed_dims(self, s) -> tuple:
        """Per store the value of `s` surely reaches through registers, the
        own dimensions (reduction dimensions aside) of the statements on the
        way to it, that store included: along such a dimension each of them
        runs in every thread (it hands its value on through a paired
        dimension, or stores it in its own dims if the pair goes through
        memory), so `s` must too. An operand whose pairs may still go through
        memory (dim_map may be MEMORY) is not followed: lowered, its store
        would run in the producer's dims only, and `s` with it."""
        got = self._needed.get(s.name)
        if got is not None:
            return got
        users = self._users()
        nexts: dict = {}  # statement -> the statements it surely hands its value to
        seen, todo = {s.name: s}, [s]
        while todo:
            x = todo.pop()
            for u, o in users.get(x.name, ()):
                if not self._surely_registers(o):
                    continue
                nexts.setdefault(x.name, set()).add(u.name)
                if u.name not in seen and u.op != "store":
                    todo.append(u)
                seen.setdefault(u.name, u)

        def reaches(a, c, path=()):
            return a == c or any(reaches(b, c, (*path, a)) for b in nexts.get(a, ())
                                 if b not in path)
        out = []
        for c in (x for x in seen.values() if x.op == "store" and x is not s):
            dims = set()
            for u in seen.values():
                if u is not s and reaches(u.name, c.name):
                    red = set(u.reduction_dims())
                    dims.update(d for d in u.dims if d not in red)
            out.append(frozenset(dims))
        got = self._needed[s.name] = tuple(out)
        return got

    def _surely_registers(self, o) -> bool:
        if o.lowered:
            return False
        for p, c in o.pairs:
            try:
                if "MEMORY" in self.f.dom("dim_map", p, c):
                    return False
            except KeyError:  # not a choice of this space: it cannot be told
                return False
        return True

    def _users(self) -> dict:
        """name -> [(consumer, operand)] of the register operands (inst,
        reduce) that read it."""
        if self._user_map is None:
            self._user_map = {}
            for c in self.insts:
                for o in c.operands:
                    if o.kind in ("inst", "reduce") and o.source and o.source != c.name:
                        self._user_map.setdefault(o.source, []).append((c, o))
        return self._user_map

    def _own_threads(self, s) -> int:
        """Threads of a block that the THREAD loops of `s`'s own dims give."""
        return math.prod(lp.size for lp in self.impl.ancestors(s)
                         if lp.kind == DimKind.THREAD and any(d in s.dims for d in lp.dims))

    def _running(self, s) -> int:
        """Threads of a block that run `s` in the generated CUDA: its guard,
        or for a value the most threads any of its `sinks` runs in (at least
        its own thread loops)."""
        if s.op != "store" and (sinks := self.sinks(s)):
            return max(self._own_threads(s), max(self._running(c) for c in sinks))
        guard = {h: (op, n) for h, op, n in self.impl.guard(s)}
        running = 1
        for h, n in zip("xyz", self.impl.block_dim):
            op, m = guard.get(h, (None, n))
            running *= 1 if op == "==" else m
        return running

    def usage(self, level: int) -> dict:
        """{resource: {statement: amount}} for one instance of the level."""
        got = self._usage.get(level)
        if got is None:
            got = self._usage[level] = self._usage_of(level)
        return got

    def _usage_of(self, level: int) -> dict:
        lvl = LEVELS[level]
        rates = self.hw.resources[lvl]
        out: dict = {r: {} for r in rates}
        ws = self.hw.warp_size
        for s in self.insts:
            if self.forwarded(s):
                continue
            n_inst = self.count(s, level, True)
            n_elem = self.count(s, level, False)
            wf = 1.0 if level == 0 else self.warp_factor(s)
            if "issue" in out and s.op != "mov":
                out["issue"][s.name] = n_inst * wf
            if "fma" in out and s.op in ARITH:
                out["fma"][s.name] = n_elem * wf
            if s.is_mem():
                self._mem_usage(s, level, n_inst * wf, n_elem * wf, out)
        for label, (iters, taken) in self.loop_iterations(level).items():
            for r, per in self.hw.loop_overhead.items():
                if r in out:
                    out[r][f"loop {label} (control)"] = per * (taken if r == "branch" else iters)
        if level == 2:
            comp = memory.compulsory_bytes(self.k, self.hw)
            key = self.hw.compulsory_level
            if key in out:
                out[key] = {f"{a} (compulsory)": b for a, b in comp.items()}
            if "l2_bytes" in out and key != "l2_bytes" \
                    and sum(comp.values()) > sum(out["l2_bytes"].values()):
                out["l2_bytes"] = {f"{a} (compulsory)": b for a, b in comp.items()}
        if self.impl is not None and level >= 1 and "sync" in out and self.hw.runs == "cuda":
            n = self.impl.barrier_count() * (1 if level == 1 else self.impl.blocks())
            out["sync"]["__syncthreads"] = n
            warps = math.ceil(self.impl.threads() / ws)
            if "issue" in out:
                out["issue"]["__syncthreads"] = n * warps * ws
        return out

    def _mem_usage(self, s, level: int, n: float, n_elem: float, out: dict) -> None:
        """Wavefronts, replays and L2 bytes of `n` thread instances of an
        access (`n_elem` elements). On a fixed CUDA implementation the
        compiler may merge unrolled copies into wider accesses whose warp
        patterns differ (`memory.merge_widths`): the code runs some mix of
        widths w, each w elements costing the wavefronts of its pattern, so
        elements × the least of wavefronts(w) / w bounds every mix; with
        open choices a warp access costs at least one of each, and `n` is
        already the fewest instructions."""
        ws = self.hw.warp_size
        settled = self.settled(s)
        if settled is not None:  # laid out already: its fewest elements at each width
            cost = [(n_elem / w, sectors, waves) for w, sectors, waves in settled]
        elif self.impl is None or self.hw.runs != "cuda":
            cost = [(n, *self.warp(s))]
        else:
            cost = [(n_elem / w, *self.warp(s, w)) for w in self.merge_widths(s)]
        if "lsu" in out:
            out["lsu"][s.name] = n if level == 0 else min(m * wf for m, _, wf in cost) / ws
            if level and len(cost) == 1 and cost[0][2] > 1:  # a known warp pattern, in words
                self._notes.setdefault("lsu", {})[s.name] = \
                    f"{cost[0][2]:g} wavefronts a warp access"
        replays = min(m * (wf - 1) for m, _, wf in cost)
        if "issue" in out and level >= 1 and self.hw.replays_issue and replays > 0:
            # Kepler: each wavefront past the first replays the warp
            # instruction in an issue slot (thesis §5.3.2)
            out["issue"][f"{s.name} (replays)"] = replays
        if "l2_bytes" in out and memory.bypasses_l1(self.f, s, self.hw):
            out["l2_bytes"][s.name] = min(m * c for m, c, _ in cost) * self.hw.sector_bytes / ws
            if len(cost) == 1 and cost[0][1] > 1:
                self._notes.setdefault("l2_bytes", {})[s.name] = \
                    f"{cost[0][1]:g} sectors a warp access"

    def loop_iterations(self, level: int) -> dict:
        """{loop: (iterations, taken back-edges)} per instance of `level` of
        the loops that surely stay loops (thesis eqs. 5.5/5.7 and 5.11: the
        overhead of a loop level is the least over its dimensions, here
        loops that surely differ, the busiest first). A GPU target counts
        LOOP dimensions (printed `#pragma unroll 1`); the CPU reference C
        prints every sequential dimension as a C loop, which the compiler
        keeps when it has at least `loop_min_trip` iterations. Iterations
        multiply by the dimensions of the same nest surely outside, and on a
        GPU by every thread of the block (`replication`)."""
        if not self.hw.loop_overhead:
            return {}
        got = self._loops.get(level)
        if got is not None:
            return got
        f = self.f
        cuda = self.hw.runs == "cuda"
        if not cuda and level >= 1 and self.impl is not None:
            self._loops[level] = got = self._c_loops(level)
            return got
        loops = {}
        for d in self.k.dims():
            kinds = f.kinds(d)
            if not kinds or not (kinds == {DimKind.LOOP} if cuda else kinds <= SEQUENTIAL):
                continue
            if f.sizes(d)[0] < self.hw.least_loop_trip:
                continue
            nest = [e for e in _nest(d) if e is not d and f.order(e, d) == {Order.OUT}]
            per_level = [f.size_min([d] + [e for e in nest if self.counts_at(e, lv)])
                         for lv in range(level + 1)]
            iters = float(per_level[level])
            if cuda and level >= 1:
                iters *= self.replication(None, level, store=False, own=[d, *nest])
                t_min = max(1, f.counter("threads_per_block")[0])
                iters = max(iters, t_min * per_level[0])
            loops[d] = iters
        # dimensions that may merge may be one loop: count loops that surely
        # differ, the busiest first (any such set bounds the control; the
        # dims' order kept the first one, so deciding a merge could drop the
        # busier loop's count for the other's)
        kept: list = []
        for d in sorted(loops, key=lambda d: -loops[d]):
            if not any(f.may_merge(d, e) for e in kept):
                kept.append(d)
        out = {}
        for d in (d for d in loops if d in kept):
            out[d.label] = (loops[d], loops[d] * (1 - 1 / f.sizes(d)[0]))
        self._loops[level] = out
        return out

    def _c_loops(self, level: int) -> dict:
        """The C loops of a fixed candidate's reference C (`cloops.c_loops`)."""
        return c_loops(self.impl, level, self.hw.least_loop_trip)

    def level_latency(self, level: int) -> tuple[float, Justification | None, list]:
        """latency(level, ∅) in cycles and the Usage node that sets it."""
        lvl = LEVELS[level]
        best, node, others = 0.0, None, []
        for r, contrib in self.usage(level).items():
            amount = sum(contrib.values())
            if amount <= 0:
                continue
            n = usage_node(self.hw, lvl, r, amount, contrib, self._notes.get(r))
            others.append(n)
            if n.fields["cycles"] > best:
                best, node = n.fields["cycles"], n
        others.sort(key=lambda n: -n.value_ns)
        return best, node, others

    # ------------------------------------------------- single thread
    @functools.cached_property
    def deps(self):
        """(src, dst, cycles) point-to-point, initialisation and memory
        dependencies; and {inst: chain length} of reductions (used by the
        thread chain and by every loop's chain)."""
        edges, chains = [], {}
        by_name = {i.name: i for i in self.insts}
        for b in self.insts:
            for o in b.operands:
                if o.kind in ("inst", "reduce") and o.source in by_name:
                    a = by_name[o.source]
                    edges.append((a, b, self.latency(a), o))
                if o.kind == "reduce":
                    chains[b.name] = self.f.size_min(list(o.dims))
            for name in b.after:
                if name in by_name:
                    edges.append((by_name[name], b, 0.0, None))
        return edges, chains

    def longest_path(self, edges, node_weight) -> tuple[float, list, list]:
        """Longest path in the dependency DAG, edges relaxed in topological
        order of their destinations."""
        dist = {i.name: (node_weight.get(i.name, 0.0), [i.name], []) for i in self.insts}
        order = self.topo_order(edges)
        for a, b, w, _ in sorted(edges, key=lambda e: order[e[1].name]):
            da, path, why = dist[a.name]
            cand = da + w + node_weight.get(b.name, 0.0)
            if cand > dist[b.name][0]:
                dist[b.name] = (cand, path + [b.name], why + [(a.name, b.name, w)])
        name = max(dist, key=lambda n: dist[n][0])
        return dist[name]

    def topo_order(self, edges) -> dict:
        ts = graphlib.TopologicalSorter({i.name: set() for i in self.insts})
        for a, b, _, _ in edges:
            ts.add(b.name, a.name)
        return {n: k for k, n in enumerate(ts.static_order())}

    def thread_chain(self) -> Justification:
        edges, chains = self.deps
        by_name = {i.name: i for i in self.insts}
        weight = {n: (r - 1) * self.latency(by_name[n]) for n, r in chains.items()}
        # the last reduction step reaches its consumer through an edge; a
        # reduction without consumer still completes its chain
        cycles, path, why = self.longest_path(edges, weight)
        kids = [dependency_node(self.hw, a, b, w) for a, b, w in why]
        for n in path:
            if n in chains:
                kids.append(dependency_node(self.hw, n, n, weight[n], int(chains[n])))
        return chain_node(self.hw, path, cycles, kids, "in one thread")

    def loop_chains(self) -> list[tuple]:
        """Surely sequential (LOOP) dimensions: on a GPU each iteration waits
        for the dependencies its body carries within the iteration (in-order
        issue; LOOP dims are printed with `#pragma unroll 1`); on a CPU only
        for a reduction along the loop. (dimension, its LoopLevel node) for
        each."""
        f = self.f
        edges, chains = self.deps
        # a GPU issues a warp's instructions in order, so an iteration waits
        # for every dependency inside it. A CPU runs out of order: the next
        # iteration's chain starts while this one's runs, so only what one
        # iteration carries to the next (a reduction along the loop) spaces
        # them (an axpy 2^16 search's loop of 16 × 2,048 iterations, each
        # with a load → fma → store chain of 1.52 ns, ran in 42.4 µs against
        # 49.9 µs counted this way when chains inside one iteration counted)
        in_order = self.hw.runs == "cuda"
        out = []
        for d in self.k.dims():
            if f.kinds(d) != {DimKind.LOOP}:
                continue
            body = [s for s in self.insts if d in s.dims or f.surely_outside(d, s)]
            if not body:
                continue
            inner = []
            for a, b, w, o in edges if in_order else ():
                if a not in body or b not in body:
                    continue
                if o is None:
                    # a temporary's load comes after its store in the body:
                    # issued in order, it waits for the store, which waits
                    # for its operand (the thread's chain counts the same edge)
                    inner.append((a, b, w, o))
                    continue
                if o.kind != "inst":
                    continue
                if any(f.surely_merged(p, d) and f.surely_merged(q, d) for p, q in o.pairs) \
                        or self._same_iteration(a, b, d):
                    inner.append((a, b, w, o))
            weight = {s.name: self.latency(s) for s in body if s.name in chains
                      and any(f.surely_merged(r, d) for r in s.reduction_dims())}
            if not inner and not weight:
                continue
            terms = [self._loop_term(d, sub, in_order)
                     for sub in self._sub_paths(inner, weight) if sub[0] > 0]
            if terms:  # the heavier in all: a self-dependency spans one step less
                out.append((d, max(terms, key=lambda t: t.fields["cycles"])))
        return out

    def _loop_term(self, d, sub, in_order: bool) -> Justification:
        """The LoopLevel node of loop `d` for one chain `sub` = (cycles per
        iteration, path, its edges): iterations × executions."""
        f = self.f
        cycles, path, why = sub
        last = self.k.instruction(path[-1])
        # executions of the loop: outer own dims that are surely
        # sequential, so the term holds whatever the mapping (see run())
        outer = [e for e in last.dims if e is not d and not f.surely_merged(e, d)
                 and f.order(e, d) == {Order.OUT}
                 and f.kinds(e) <= {DimKind.LOOP, DimKind.UNROLL}]
        if not in_order:
            # out of order, executions of the loop overlap unless the chain
            # runs on through them: only the reduction's own dims outside
            # count (a matmul's k loop of 32 inside 4,096 others, one
            # accumulator each, ran in 44.5 µs where 4,096 chains of 31 adds
            # in a row take 54.9 µs on the host's table)
            red = last.reduction_dims()
            outer = [e for e in outer if any(f.surely_merged(e, r) for r in red)]
        iters = f.size_min([d])
        # one iteration is straight-line code: its copies may overlap;
        # unrolled copies along other nests' dims recompute the same values,
        # dead code unless the chain ends in a store (`_executions`)
        stored = last.op == "store"
        times = f.size_min(outer) if outer and iters >= 2 else 1
        if in_order and iters >= 2:  # foreign loops too
            times = max(times, self._loops_around(d, outer, stored))
        if in_order and self.impl is not None:
            times = max(times, self._executions(path, d, stored))
        kids = [dependency_node(self.hw, a, b, w) for a, b, w in why]
        per = chain_node(self.hw, path, cycles, kids, "within one iteration")
        merged = [e for e in self.k.dims() if f.surely_merged(e, d)]
        # from the first issue of an execution to its last: a path a → b
        # inside an iteration spaces the issues of b by `cycles` (the next
        # a issues after b); a self-dependency alone spaces its own issues,
        # so an execution spans one step less, and only the last result
        # is waited for (executions of a loop may be independent)
        alone = len(path) == 1
        span = times * (iters - alone) * cycles
        return loop_node(self.hw, [e.name for e in merged], [e.label for e in merged],
                         iters, times, per, total=span + alone * cycles, span=span)

    def _loops_around(self, d, own: list, unrolled: bool) -> int:
        """The executions of a loop of `d` (of at least two iterations) that
        the dimensions surely around it give on an open candidate: `own`,
        and every foreign dimension surely OUT of `d` that stays a LOOP (or
        an UNROLL, if `unrolled`), one per class that may merge, each at its
        least size. Each is a loop or unrolled copies around the loop of `d`
        in every implementation below (`_executions`)."""
        f = self.f
        kept = list(own)
        kinds = {DimKind.LOOP, DimKind.UNROLL} if unrolled else {DimKind.LOOP}
        for e in self.k.dims():
            if e is d or e in kept or not f.kinds(e) or not f.kinds(e) <= kinds:
                continue
            if f.order(e, d) != {Order.OUT} or any(f.may_merge(e, x) for x in (d, *kept)):
                continue
            kept.append(e)
        return f.size_min(kept) if kept else 1

    def _executions(self, path: list, d, unrolled: bool) -> int:
        """Executions of the loop of `d` in the CUDA of a fixed candidate
        that surely follow one another, each holding the chain `path` (its
        statements' names) once per iteration; foreign loops count (thesis
        eq. 5.15 counts every dimension a statement is nested in). A LOOP of
        two or more iterations stays a loop (`#pragma unroll 1`): no compiler
        hoists a whole loop out of another, so it runs once per iteration of
        every LOOP and UNROLL outside it, and its executions never overlap.
        A LOOP of one iteration is straight-line code: the chain may be
        interleaved with its unrolled copies, or hoisted out of a loop its
        addresses do not vary in (ptxas moves invariant loads: an H200 ran
        128 such copies in 16 µs, under 128 L2 latencies), so only the
        executions a real loop along the chain's own dimensions separates
        count. Unrolled copies along another nest's dimension recompute the
        same values: unless the chain ends in a store (`unrolled`), the
        compiler may drop all but the last copy's arithmetic, so they count
        only along the chain's own dimensions. (An H200 ran a matmul whose
        A loads sit in B's loops, a real loop each, in 22 ms against an
        own-dims bound of 35 µs.)"""
        insts = [self.k.instruction(n) for n in path]
        own = {e for s in insts for e in s.dims}
        node = self.impl.leaf_of[path[-1]].parent
        while node is not None and d not in node.dims:
            node = node.parent
        outside = []  # `node` and the loops outside it, innermost first
        while node is not None and node is not self.impl.root:
            outside.append(node)
            node = node.parent
        for k, lp in enumerate(outside):
            if lp.kind == DimKind.LOOP and lp.size >= 2 and \
                    all(any(e in s.dims for e in lp.dims) for s in insts):
                iters = lp.size if k else 1  # `d`'s own iterations are counted apart
                return iters * math.prod(
                    lp.size for lp in outside[k + 1:] if lp.kind == DimKind.LOOP
                    or lp.kind == DimKind.UNROLL and (unrolled or own & set(lp.dims)))
        return 1

    def loop_sequence(self, loops) -> Justification | None:
        """Loops that surely run one after another add up (thesis eqs. 5.42
        and 5.45, the path through G_c that crosses loop levels in program
        order): in one thread every execution of a loop is an interval of
        at least its term, and a loop surely BEFORE another ends before the
        other starts, so the heaviest path of the "surely before" graph
        over the loop terms bounds the thread. None when no path has two
        loops."""
        if len(loops) < 2:
            return None
        f = self.f
        loops = sorted(loops, key=lambda t: t[0].name)
        # before[d]: the loops surely before d; acyclic on a live candidate
        before = {d.name: [e.name for e, _ in loops if e is not d
                           and f.order(e, d) == {Order.BEFORE}] for d, _ in loops}
        try:
            order = list(graphlib.TopologicalSorter(before).static_order())
        except graphlib.CycleError:  # no implementation: any bound holds, keep none
            return None
        by_name = {d.name: (d, n) for d, n in loops}
        best: dict = {}  # dim name -> (cycles, [(dim, node)]): heaviest path ending there
        for name in order:  # heaviest path by spans: a loop's issues end where the next's begin
            d, node = by_name[name]
            own = node.fields["span"]
            got = (own, [(d, node)])
            for e in before[name]:
                c = best[e][0] + own
                if c > got[0]:
                    got = (c, best[e][1] + [(d, node)])
            best[name] = got
        # the last loop's last result is waited for
        ends = [(c + p[-1][1].fields["cycles"] - p[-1][1].fields["span"], p)
                for c, p in best.values()]
        cycles, path = max(ends, key=lambda t: (t[0], len(t[1])))
        if len(path) < 2:
            return None
        labels = " + ".join("/".join(n.fields["dims"]) for _, n in path)
        return Justification("Chain", self.hw.ns(cycles),
                             f"sequential loops one after another: {labels}: {cycles:,.0f} cycles",
                             {"cycles": cycles, "loops": [n.fields["dims"] for _, n in path]},
                             [n for _, n in path])

    def _same_iteration(self, a, b, d) -> bool:
        """`b` reads `a`'s value of the same iteration of `d`: both iterate on
        one dimension that is `d` or surely merged with it (a lowered load
        sits in its consumer's own dimensions, so the communication names no
        pair of dimensions; thesis eq. 5.45's path through one iteration)."""
        return any(e in b.dims and self.f.surely_merged(e, d) for e in a.dims)

    def _sub_paths(self, edges, weight) -> tuple:
        """The heaviest self-dependency alone and the heaviest path of two
        or more statements through `edges`, each (cycles, path, edges):
        their totals over a loop differ (`_loop_term`), so both are kept."""
        alone = (0.0, [], [])
        for n, w in weight.items():
            if w > alone[0]:
                alone = (w, [n], [(n, n, w)])
        best = (0.0, [], [])
        dist: dict = {}
        order = self.topo_order(edges)
        for a, b, w, _ in sorted(edges, key=lambda e: order[e[1].name]):
            da, pa, wa = dist.get(a.name, (0.0, [a.name], []))
            c = da + w
            if c > dist.get(b.name, (-1,))[0]:
                dist[b.name] = (c, pa + [b.name], wa + [(a.name, b.name, w)])
                if c > best[0]:
                    best = dist[b.name]
        return alone, best

    def pinned_chain(self) -> Justification | None:
        """A fixed CUDA candidate's stores that wait for the loads the
        cache-hint intrinsics keep in order before them (`pinned`)."""
        if self.impl is None or self.hw.runs != "cuda":
            return None
        waits, cycles, pairs = pinned_waits(self.impl, self.latency)
        if not waits:
            return None
        shown = ", ".join(f"{a} → {b}" for a, b in pairs[:4]) + (" …" if len(pairs) > 4 else "")
        return Justification("Chain", self.hw.ns(cycles),
                             f"stores waiting in order for their loads (cache-hint intrinsics "
                             f"keep them in program order): {waits:,} waits ({shown}): "
                             f"{cycles:,.0f} cycles", {"cycles": cycles, "waits": waits,
                                                       "pairs": [list(p) for p in pairs]})

    def thread_bound(self) -> tuple[float, Justification, Justification]:
        """B_0, its justification, and the longest chain: chains and surely
        sequential loops do not depend on how open dimensions map to
        parallelism levels, so every level's bound is at least that chain."""
        _, issue_node, _ = self.level_latency(0)
        loops = self.loop_chains()
        seq = self.loop_sequence(loops) if self.hw.runs == "cuda" else None
        pinned = self.pinned_chain()
        chains = sorted([self.thread_chain(), *(n for _, n in loops), *([seq] if seq else []),
                         *([pinned] if pinned else [])], key=lambda n: -n.value_ns)
        terms = list(chains)
        if issue_node is not None:
            terms.append(issue_node)
        terms.sort(key=lambda n: -n.value_ns)
        top = terms[0]
        return top.value_ns, chains[0], Justification(
            "Bound", top.value_ns, "one thread (B_0): the longest of its issue time, its "
            "dependency chains and its sequential loops", {"level": "thread"}, terms)

    # ------------------------------------------------- parallelism
    def parallel_level(self, level: int) -> tuple[int, int, float]:
        """η_min, η_lcm and μ_max of level 1 (threads of a block) or 2
        (blocks of the GPU), eqs. 5.25–5.26."""
        f, hw = self.f, self.hw
        kind = DimKind.THREAD if level == 1 else DimKind.BLOCK
        dims = self.k.dims()
        may = [d for d in dims if kind in f.kinds(d)]
        only = [d for d in may if not f.kinds(d) & UP_TO[level - 1]]
        if level == 1:
            def rel(a, b, at_most):
                m = f.dom("thread_mapping", a, b)
                return ThreadMapping.MAPPED in m if at_most else m == {ThreadMapping.MAPPED}
        else:
            def rel(a, b, at_most):
                return f.may_merge(a, b) if at_most else f.surely_merged(a, b)
        eta_min = f.size_min(representatives(f, only, rel, True))
        reps = representatives(f, may, rel, False)
        eta_lcm = f.size_lcm(reps)
        limit = hw.max_threads_per_block if level == 1 else None
        if limit and eta_lcm > limit and all(_pow2(s) for d in reps for s in f.sizes(d)):
            eta_lcm = 1 << (limit.bit_length() - 1)  # powers of two up to the limit
        eta_lcm = max(eta_lcm, eta_min, 1)
        if level == 1:
            mu = float(hw.max_threads_per_block) if hw.max_threads_per_block and \
                hw.max_threads_per_sm is not None else math.inf
        else:
            mu = self.blocks_at_once()
        return eta_min, eta_lcm, mu

    def blocks_at_once(self) -> float:
        """μ_2^max: resident blocks per SM (threads, blocks, shared memory)
        times SMs."""
        hw, f = self.hw, self.f
        per_sm = []
        if hw.max_blocks_per_sm is not None:
            per_sm.append(hw.max_blocks_per_sm)
        t_min = max(1, f.counter("threads_per_block")[0])
        if hw.max_threads_per_sm is not None:
            per_sm.append(hw.max_threads_per_sm // t_min)
        smem = max(0, f.counter("shared_memory")[0]) * 4
        if hw.shared_bytes_per_sm is not None and smem > 0:
            per_sm.append(hw.shared_bytes_per_sm // smem)
        if not per_sm:
            return math.inf
        return float(max(1, min(per_sm)) * hw.sms)

    # ------------------------------------------------- assembly
    def run(self) -> tuple[float, Justification]:
        b_ns, chain, just = self.thread_bound()
        self.level_ns["thread"] = b_ns
        for level in (1, 2):
            eta_min, eta_lcm, mu = self.parallel_level(level)
            waves = 1 if mu == math.inf else math.ceil(eta_lcm / mu)
            par_ns = b_ns * eta_min / eta_lcm * waves
            par = parallelism_node(self.hw, LEVELS[level], just, eta_min, eta_lcm, mu, par_ns)
            cyc, _, others = self.level_latency(level)
            use_ns = self.hw.ns(cyc)
            terms = [par, chain] + others
            if level == 2:  # register reuse against threads, jointly (`reuse`)
                reuse = operand_reuse(self, self.usage(2).get("issue", {}))
                if reuse is not None:
                    terms.append(reuse)
                    use_ns = max(use_ns, reuse.value_ns)
            terms.sort(key=lambda n: -n.value_ns)
            b_ns = max(par_ns, use_ns, chain.value_ns)
            name = "block (B_1)" if level == 1 else "kernel (B_2)"
            just = Justification("Bound", b_ns, f"one {name}: the largest of the level below "
                                 "repeated over its parallelism, the usage of the level's "
                                 "resources and the longest dependency chain of a thread",
                                 {"level": LEVELS[level]}, terms)
            self.level_ns[LEVELS[level]] = b_ns
        just.text = f"lower bound {fmt_time(b_ns, 4)} on {self.hw.name}: " + just.children[0].text
        floor = self.hw.ns(self.hw.launch_floor_cycles)
        if floor > b_ns:
            # a calibrated GPU: no kernel is timed shorter than an empty one
            # (measured the backend's way: `calibrate`, `cuda.time_launches`)
            node = Justification("Launch", floor, f"an empty kernel, timed as every candidate "
                                 f"is on this device: {fmt_time(floor, 4)}", {})
            b_ns = self.level_ns["gpu"] = floor
            just = Justification("Bound", b_ns, f"lower bound {fmt_time(b_ns, 4)} on "
                                 f"{self.hw.name}: no kernel runs faster than an empty one",
                                 {"level": "gpu"}, [node, just])
        if self.hw.launch_cycles > 0:
            # the call of the kernel precedes everything it runs (a calibrated
            # CPU target: the cheapest call of a C function through ctypes)
            call = self.hw.ns(self.hw.launch_cycles)
            node = Justification("Launch", call, f"calling the kernel: {fmt_time(call, 4)}", {})
            b_ns += call
            just = Justification("Bound", b_ns, f"lower bound {fmt_time(b_ns, 4)} on "
                                 f"{self.hw.name}: {just.children[0].text}, after the call "
                                 "of the kernel",
                                 {"level": "gpu"}, [*just.children, node])
        return b_ns, just


def _pow2(x: int) -> bool:
    return x > 0 and x & (x - 1) == 0


register_model("gpu", gpu_bound)
