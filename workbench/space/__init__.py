"""The decision-space language: parser, compiler, instantiation, propagation."""

from .parser import parse
from .space import Space, load_space
from .values import (
    BlockOrder,
    Cache,
    DimKind,
    DimMap,
    MemSpace,
    Order,
    ThreadMapping,
    check_values,
)

__all__ = ["BlockOrder", "Cache", "DimKind", "DimMap", "MemSpace", "Order", "Space",
           "ThreadMapping", "check_values", "load_space", "parse"]
