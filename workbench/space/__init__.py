"""The decision-space language: parser, compiler, instantiation, propagation."""

from .parser import parse
from .space import Space, load_space

__all__ = ["Space", "load_space", "parse"]
