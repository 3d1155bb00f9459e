"""Search from any candidate (thesis ch. 6): TAG-MCTS with bound pruning,
rollouts climbed on the bound, choice orders, space-size estimates, branch
and bound, many workers."""

import sys
import types

from ..orders import REVERSE_ORDER, THESIS_ORDER, DynamicOrder, FixedOrder, choice_order
from . import thesis
from .branch_and_bound import BranchAndBound, branch_and_bound, brute_force_schedule, schedule_cost
from .climb import Climb, climb, climb_move, keep_applicable
from .estimate import Estimate, chen, count_nodes, knuth, space_size
from .mcts import Search, SearchOptions, search
from .tree import TAG, UCT, Node, TreePolicy, register_policy

__all__ = [
    "REVERSE_ORDER", "TAG", "THESIS_ORDER", "UCT", "BranchAndBound", "Climb", "DynamicOrder",
    "Estimate", "FixedOrder", "Node", "Search", "SearchOptions", "TreePolicy", "branch_and_bound",
    "brute_force_schedule", "chen", "choice_order", "climb", "climb_move", "count_nodes",
    "keep_applicable", "knuth", "register_policy",
    "schedule_cost", "search", "space_size", "thesis",
]


class _CallablePackage(types.ModuleType):
    """`wb.search(start, backend, **options)` starts a search while
    `wb.search.thesis`, `wb.search.Search`, … stay reachable: the package
    itself is callable, so the verb and the package share one name."""

    def __call__(self, start, backend: str = "cpu", **options) -> Search:
        return search(start, backend, **options)


sys.modules[__name__].__class__ = _CallablePackage
