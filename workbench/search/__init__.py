"""Search from any candidate (thesis ch. 6): TAG-MCTS with bound pruning,
choice orders, space-size estimates, branch and bound, many workers."""

from .mcts import Search, search
from .orders import REVERSE_ORDER, THESIS_ORDER, DynamicOrder, FixedOrder, choice_order
from .tree import TAG, UCT, Node

__all__ = ["REVERSE_ORDER", "TAG", "THESIS_ORDER", "UCT", "DynamicOrder", "FixedOrder", "Node",
           "Search", "choice_order", "search"]
