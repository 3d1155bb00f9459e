"""Candidate Workbench: candidates of GPU kernels, their decision spaces,
lower bounds, generated code, measured timings and searches.

    import workbench as wb
    k = wb.kernels.matmul(256, 256, 32)
    c = wb.Candidate.root(k)
    c = c.apply("dim_kind", "d0", "BLOCK")          # one object: a plain string
    wb.bound(c).value_ns                            # with .justification
    wb.lookahead(c, "dim_kind", "d1")               # each value's child bound
    fixed = wb.random_fixed(c, random.Random(0))
    wb.generate(fixed).cuda                         # CUDA C and reference C
    wb.evaluate([fixed], "cpu")                     # typed records, stored
    wb.search(c, "cpu", budget=50).run()            # TAG-MCTS from c
    wb.load_records()                               # every record, a DataFrame
    wb.explore(k)                                   # the explorer (in Jupyter)
    s = wb.Session(c); s.options("dim_kind", "d1", prove_s=1)   # proven/dead/open values
    wb.explain(stuck, choice=("order", ("d3", "d5")))           # which decisions cause it
    wb.choice_label(c, "size", "d13")               # "size: mad · n · tile 0": ids in words

The public contract is docs/api.md.
"""

from . import kernels, poly, recipes, search, volume, witness
from ._version import __version__
from .candidate import Candidate, Choice, Decision, Pruning
from .codegen import Generated, generate
from .compare import Comparison, compare, compare_candidates
from .descent import Descent, descend, least_bound_fixed, random_fixed, space_stats
from .errors import (
    DeadEnd,
    InvalidDecision,
    NeverAppears,
    SpaceError,
    SpaceSyntaxError,
    WorkbenchError,
)
from .explain import Explanation, WayOut, explain, explain_trail, smallest_explanation, ways_out
from .model import Bound, bound
from .model.justification import fmt_time
from .model.lookahead import lookahead, rank_choices
from .names import choice_group, choice_label, decision_label, object_label, raw
from .orders import ChoiceOrder, choice_order, register_order
from .paths import data_dir, shipped_data_dir
from .runtime import (
    Backend,
    Record,
    RecordStore,
    evaluate,
    get_backend,
    load_records,
    measure_reference,
    register_backend,
)
from .search import Search
from .session import Option, Session
from .space import Space, load_space
from .witness import find_witness


def explore(kernel_or_candidate, **options):
    """The candidate explorer on a kernel (from its root), a candidate or a
    Session — a widget to display in Jupyter (needs the `lab` extra)."""
    from widgets import explore as _explore  # views stay out of the engine's imports
    return _explore(kernel_or_candidate, **options)


__all__ = [
    "Backend", "Bound", "Candidate", "Choice", "ChoiceOrder", "Comparison", "DeadEnd",
    "Decision", "Descent", "Explanation", "Generated", "InvalidDecision", "NeverAppears",
    "Option", "Pruning", "Record", "RecordStore", "Search", "Session", "Space", "SpaceError",
    "SpaceSyntaxError", "WayOut", "WorkbenchError", "__version__", "bound", "choice_group",
    "choice_label", "choice_order", "compare", "compare_candidates", "data_dir",
    "decision_label", "descend", "evaluate", "explain", "explain_trail", "explore",
    "find_witness", "fmt_time", "generate", "get_backend", "kernels", "least_bound_fixed",
    "load_records",
    "load_space", "lookahead", "measure_reference", "object_label", "poly", "random_fixed",
    "rank_choices", "raw", "recipes", "register_backend", "register_order", "search",
    "shipped_data_dir", "smallest_explanation", "space_stats", "volume", "ways_out", "witness",
]
