"""The value names the engine's Python reads from a decision space's choices.

The model, the code generator, the polyhedral propagators and the recipes
compare domains against value names of `gpu.space` (and `basic_block.space`).
A misspelt string there never matches and fails silently, so the names are
declared here once, per choice, as `str`-valued enums: a member equals, hashes
and prints as its plain string (`DimKind.LOOP == "LOOP"`, `str(DimKind.LOOP)
== "LOOP"`), so it can be compared with, looked up in and passed to anything
that holds the strings a domain holds.

`check_values(space)` verifies that every declared member is a value of its
choice in a loaded space; the GPU model and the code generator call it (once
per space object, `ensure_values`) on the space they read.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from enum import Enum

from ..errors import SpaceError


class _Value(str, Enum):
    """A value name of an enum choice: equal to, hashing and formatting as
    the plain string (also where `str(x)` / f-strings turn it into one)."""

    __str__ = str.__str__
    __format__ = str.__format__


class DimKind(_Value):
    """`dim_kind($dim)` (gpu.space)."""
    LOOP = "LOOP"
    BLOCK = "BLOCK"
    THREAD = "THREAD"
    UNROLL = "UNROLL"
    VECTOR = "VECTOR"


class Order(_Value):
    """`order($lhs, $rhs)` (gpu.space)."""
    BEFORE = "BEFORE"
    AFTER = "AFTER"
    IN = "IN"
    OUT = "OUT"
    MERGED = "MERGED"


class ThreadMapping(_Value):
    """`thread_mapping($lhs, $rhs)` (gpu.space)."""
    NOT_THREADS = "NOT_THREADS"
    MAPPED = "MAPPED"
    OUT = "OUT"
    IN = "IN"


class DimMap(_Value):
    """`dim_map($src, $dst)` (gpu.space): how a point-to-point pair is carried."""
    MERGED = "MERGED"
    REGISTERS = "REGISTERS"
    THREADS = "THREADS"
    MEMORY = "MEMORY"


class MemSpace(_Value):
    """`mem_space($array)` (gpu.space)."""
    GLOBAL = "GLOBAL"
    SHARED = "SHARED"


class Padding(_Value):
    """`padding($array)` (gpu.space): a shared temporary's rows as they are,
    or each row of its outermost index followed by unused elements."""
    NONE = "NONE"
    ROWS = "ROWS"


class Cache(_Value):
    """`cache($inst)` (gpu.space)."""
    L1 = "L1"
    L2 = "L2"
    READ_ONLY = "READ_ONLY"
    NONE = "NONE"


class BlockOrder(_Value):
    """`order($lhs, $rhs)` (basic_block.space)."""
    BEFORE = "BEFORE"
    AFTER = "AFTER"


# choice -> enum of the value names read from it, per space
GPU: Mapping[str, type[_Value]] = {
    "dim_kind": DimKind, "order": Order, "thread_mapping": ThreadMapping,
    "dim_map": DimMap, "mem_space": MemSpace, "padding": Padding, "cache": Cache,
}
BASIC_BLOCK: Mapping[str, type[_Value]] = {"order": BlockOrder}

# choices gpu.space gained after records were first kept, with the value the
# code generator took before each existed: a trail recorded earlier holds no
# decision on it, and the code it measured is that value's
# (`runtime.records.record_candidate`); padding came on 2026-11-28
FORMER_VALUES: Mapping[str, str] = {"padding": Padding.NONE.value}


def check_values(space, enums: Mapping[str, type[_Value]] = GPU) -> None:
    """Raise SpaceError unless every member of `enums[choice]` is a value of
    the enum choice `choice` of `space` (by default: the GPU space's)."""
    for choice, enum in enums.items():
        info = space.choices.get(choice)
        if info is None or info.hidden or info.kind != "enum":
            raise SpaceError(f"space {space.name}: the engine reads enum choice {choice!r}, "
                             "which the space does not declare")
        missing = [m.value for m in enum if m.value not in info.values]
        if missing:
            raise SpaceError(f"space {space.name}: choice {choice!r} has no value "
                             f"{', '.join(missing)} (values: {', '.join(info.values)}); "
                             f"the engine relies on {enum.__name__}."
                             f"{', '.join(m.name for m in enum if m.value in missing)}")


_CHECKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def ensure_values(space, enums: Mapping[str, type[_Value]] = GPU) -> None:
    """`check_values`, once per (space object, enums)."""
    done = _CHECKED.get(space)
    if done is not None and id(enums) in done:
        return
    check_values(space, enums)
    _CHECKED.setdefault(space, set()).add(id(enums))


__all__ = ["BASIC_BLOCK", "GPU", "BlockOrder", "Cache", "DimKind", "DimMap", "MemSpace",
           "Order", "Padding", "ThreadMapping", "check_values", "ensure_values"]
