"""The lower-bound performance model (thesis ch. 5) with its justification
tree, and the look-ahead that shows the bound of each child of a choice."""

from .bound import Bound, bound
from .hardware import Hardware, hardware
from .justification import Justification

__all__ = ["Bound", "Hardware", "Justification", "bound", "hardware"]
