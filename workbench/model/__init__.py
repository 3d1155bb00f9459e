"""The lower-bound performance model (thesis ch. 5) with its justification
tree, and the look-ahead that shows the bound of each child of a choice."""

from . import schedule  # registers the chapter-2 model of the basic_block space
from .base import Bound, model_for, register_model
from .bound import bound
from .hardware import Hardware, hardware
from .justification import Justification

__all__ = ["Bound", "Hardware", "Justification", "bound", "hardware", "model_for",
           "register_model", "schedule"]
