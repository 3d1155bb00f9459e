"""Candidate Workbench engine: candidates, decision spaces, kernels.

    import workbench as wb
    k = wb.kernels.random_basic_block(12, seed=1)
    c = wb.Candidate.root(k)
    c2 = c.apply("order", ("i0", "i3"), "BEFORE")
    b = wb.bound(wb.Candidate.root(wb.kernels.matmul(256, 256, 32)))  # .value_ns, .justification
"""

from . import kernels, recipes
from .candidate import Candidate, Choice, Decision, Pruning
from .errors import DeadEnd, InvalidDecision, SpaceError, SpaceSyntaxError, WorkbenchError
from .model import Bound, bound
from .space import Space, load_space

__version__ = "0.1.0"

__all__ = [
           "Bound",
           "Candidate",
           "Choice",
           "DeadEnd",
           "Decision",
           "InvalidDecision",
           "Pruning",
           "Space",
           "SpaceError",
           "SpaceSyntaxError",
           "WorkbenchError",
           "bound",
           "kernels",
           "load_space",
           "recipes",
]
