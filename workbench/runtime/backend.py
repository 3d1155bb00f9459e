"""What an evaluator backend is, and the registry that names them.

A backend turns a batch of fixed candidates of one kernel into
`Measurement`s and times the reference library once (`Reference`). This
module holds the protocol and the result types; the backends import them
from here (never from `evaluator`), and `runtime/__init__` registers the
built-in ones, so no module of the runtime imports one that imports it back.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ..errors import WorkbenchError
from ._child import max_error  # numpy only: the child process verifies with it too

TOLERANCE = 1e-4  # float32 sums: normwise relative error


@dataclass
class Measurement:
    status: str
    times_ns: list = field(default_factory=list)
    message: str = ""
    verified: bool | None = None
    extra: dict = field(default_factory=dict)  # registers, shared memory, spills, ...

    @property
    def median_ns(self) -> float | None:
        return float(statistics.median(self.times_ns)) if self.times_ns else None


@dataclass
class Reference:
    name: str  # e.g. "numpy.matmul", "cupy.matmul (cuBLAS)"
    times_ns: list

    @property
    def median_ns(self) -> float | None:
        return float(statistics.median(self.times_ns)) if self.times_ns else None


@runtime_checkable
class Backend(Protocol):
    """An executor of fixed candidates. `target` names the hardware table the
    bound uses for it (a backend may also carry `bound_target`, a Hardware
    adjusted to it, e.g. the CPU with its threads); `device`, `driver` and
    `versions()` go into every record."""
    name: str
    target: str
    device: str
    driver: str

    def versions(self) -> dict: ...

    def run(self, kernel, cands: Sequence, samples: int, timeout_s: float, seed: int
            ) -> tuple[list[Measurement], Reference | None]:
        """One Measurement per candidate (a failure is a status, never an
        exception) and the reference timing (None: no device)."""
        ...


def bound_target(backend) -> object:
    """The target the bound takes for `backend`'s runs: its `bound_target`
    when it has one (the CPU backend: the host with its threads), else its
    `target`."""
    got = getattr(backend, "bound_target", None)  # `target` only when needed: it looks for files
    return got if got is not None else backend.target


_FACTORIES: dict[str, Callable[..., Backend]] = {}
_LAST_INPUTS: list = []  # [(key, inputs, expected)]: the last kernel's, at most one
_KEEP_BYTES = 2 << 30  # a draw larger than this is not kept


def inputs_for(kernel, seed: int) -> tuple[dict, dict]:
    """The kernel's inputs drawn from `seed` and numpy's outputs for them.
    The last pair is kept (read-only): a search measures one kernel over and
    over, and axpy 2^26's draw and reference take 2-4 s each time."""
    import json

    import numpy as np
    key = (json.dumps(kernel.spec(), sort_keys=True, default=str), seed)
    if _LAST_INPUTS and _LAST_INPUTS[0][0] == key:
        return _LAST_INPUTS[0][1], _LAST_INPUTS[0][2]
    try:
        inputs = kernel.make_inputs(np.random.default_rng(seed))
        expected = kernel.reference(inputs)
    except MemoryError as exc:  # sizes the validation lets through (up to 2^40)
        from ..errors import WorkbenchError
        raise WorkbenchError(f"{kernel.name} at these sizes needs more memory than this "
                             f"machine has for its inputs and numpy's reference ({exc})"
                             ) from None
    arrays = [a for a in (*inputs.values(), *expected.values()) if isinstance(a, np.ndarray)]
    _LAST_INPUTS.clear()
    if sum(a.nbytes for a in arrays) <= _KEEP_BYTES:
        for a in arrays:
            a.flags.writeable = False  # shared by every later call
        _LAST_INPUTS.append((key, inputs, expected))
    return inputs, expected


def register_backend(name: str, factory: Callable[..., Backend]) -> None:
    """Make `get_backend(name, **options)` build `factory(**options)`."""
    _FACTORIES[name] = factory


def backends() -> tuple[str, ...]:
    """The registered backend names."""
    return tuple(_FACTORIES)


def get_backend(name: str, **options) -> Backend:
    """A new backend of the registered `name`, built with `options` (e.g.
    `get_backend("cpu", threads=4)`)."""
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise WorkbenchError(f"unknown backend {name!r}; backends: {', '.join(_FACTORIES)}"
                             ) from None
    try:
        return factory(**options)
    except TypeError as exc:  # an option the backend does not take
        raise WorkbenchError(f"backend {name!r}: {exc}") from None


__all__ = ["TOLERANCE", "Backend", "Measurement", "Reference", "backends", "get_backend",
           "inputs_for", "max_error", "register_backend"]
