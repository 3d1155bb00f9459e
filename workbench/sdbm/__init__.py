"""Strided difference bound matrices: a cheap exact domain for strided and
tiled index sets (the SDBM seed), with isl as the reference and fallback."""

from .isl import from_isl, to_isl
from .system import SDBM, NotSDBM

__all__ = ["SDBM", "NotSDBM", "from_isl", "to_isl"]
