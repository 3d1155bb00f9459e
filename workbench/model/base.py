"""What a performance model returns (`Bound`) and the models by decision
space: each model module registers itself for the space it reads
(`register_model`), and `bound.bound` picks by the kernel's `space`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import WorkbenchError
from .justification import Justification, fmt_time


@dataclass
class Bound:
    """A lower bound on the run time of every implementation of a candidate."""
    value_ns: float  # max(raw_ns, the parent's value): never below an ancestor's
    raw_ns: float  # what the model gives for this candidate alone
    justification: Justification
    target: str
    levels: dict = field(default_factory=dict)  # B_0, B_1, B_2 in ns
    reads: frozenset = frozenset()  # variables the model read

    @property
    def dipped(self) -> bool:
        """The raw model gave less than an ancestor's bound."""
        return self.raw_ns < self.value_ns

    def to_dict(self) -> dict:
        return {"value_ns": self.value_ns, "raw_ns": self.raw_ns, "target": self.target,
                "levels": self.levels, "justification": self.justification.to_dict()}

    def _repr_html_(self) -> str:
        return (f"<div><b>lower bound {fmt_time(self.value_ns, 4)}</b> on {self.target}"
                f"{self.justification._repr_html_()}</div>")

    def __repr__(self) -> str:
        return f"Bound({self.value_ns:.6g} ns on {self.target})"


# model(cand, target, parent, override) -> Bound
Model = Callable[..., Bound]
_MODELS: dict[str, Model] = {}


def register_model(space: str, model: Model) -> None:
    """Make `bound()` use `model` for kernels whose `space` is `space`."""
    _MODELS[space] = model


def model_for(space: str | None, default: str = "gpu") -> Model:
    """The model registered for `space`; an unknown space gets `default`'s
    (which refuses a kernel it cannot read, with the reason)."""
    model = _MODELS.get(space) or _MODELS.get(default)
    if model is None:
        raise WorkbenchError(f"no performance model for space {space!r}; models: "
                             f"{', '.join(_MODELS)}")
    return model


__all__ = ["Bound", "Model", "model_for", "register_model"]
