"""A toy loop-nest kernel for tests/spaces/loops.space."""

from __future__ import annotations

from dataclasses import dataclass

import workbench as wb


@dataclass(frozen=True, eq=False)
class Dim:
    name: str
    static: bool
    size_options: tuple[int, ...] = ()
    extent: int = 1
    parallel: bool = True

    snippet_api = frozenset({"name", "extent", "parallel", "is_static", "sizes"})

    def is_static(self) -> bool:
        return self.static

    def sizes(self):
        return list(self.size_options)


@dataclass(frozen=True, eq=False)
class Inst:
    name: str
    dim_names: tuple[str, ...]
    is_load: bool
    cacheable: bool
    kernel: object = None

    snippet_api = frozenset({"name", "is_load", "cacheable", "dims"})

    def dims(self):
        """What InstDims($inst) iterates: the kernel's dims this instruction runs in."""
        if self.kernel is None:
            return [Dim(n, False) for n in self.dim_names]
        return self.kernel.dims_of(self)


@dataclass(frozen=True, eq=False)
class Value:
    name: str


class ToyKernel:
    snippet_api = frozenset({"max_threads", "max_unroll", "min_total", "dims", "insts", "values",
                             "spill"})

    def __init__(self, dims, insts, values, max_threads=8, max_unroll=4, min_total=0):
        self._dims = tuple(dims)
        self._insts = list(insts)
        self._values = tuple(values)
        self.max_threads = max_threads
        self.max_unroll = max_unroll
        self.min_total = min_total

    def dims(self):
        return self._dims

    def insts(self):
        return tuple(self._insts)

    def values(self):
        return self._values

    def dims_of(self, inst):
        return [d for d in self._dims if d.name in inst.dim_names]

    def spill(self, value):
        """Lowering: a spilled value is re-loaded by a new load instruction."""
        self._insts.append(Inst(f"reload_{value.name}", (), True, True))

    def copy(self):
        return ToyKernel(self._dims, self._insts, self._values, self.max_threads,
                         self.max_unroll, self.min_total)

    def spec(self):
        return {"builder": "toy", "n_dims": len(self._dims)}


def toy(n_static=2, n_dynamic=1, n_values=1, **kw) -> ToyKernel:
    sizes = [(1, 2, 4), (2, 4), (1, 2), (2, 8)]
    dims = [Dim(f"d{i}", True, sizes[i % len(sizes)], extent=2 + i, parallel=i != 1)
            for i in range(n_static)]
    dims += [Dim(f"x{i}", False) for i in range(n_dynamic)]
    names = tuple(d.name for d in dims)
    k = ToyKernel(dims, [], [Value(f"v{i}") for i in range(n_values)], **kw)
    k._insts = [Inst("ld", names[:1], True, False, k), Inst("mul", names, False, False, k)]
    return k


def _from_spec(spec):
    return toy(spec["n_dims"] - 1, 1)


wb.kernels.register("toy", _from_spec)
