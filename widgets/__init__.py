"""Views over workbench objects (ipywidgets / plotly). Views only: every
number shown here comes from `workbench`, reachable from plain Python too.

`explore(kernel_or_candidate, **options)` is the candidate explorer
(`widgets.explorer`); `pick(kernel, sizes)` the explorer under a kernel and
sizes picker (`widgets.picker`); `show_domains` the domain table of a candidate.
"""

from __future__ import annotations

from .domains import domain_table_html, show_domains
from .explorer import CandidateExplorer, Tab, explore
from .picker import KernelPicker, pick
from .poly_view import fcg_figure, mars_figure
from .search_view import SearchProgress, run_live
from .timings_view import timing_figures
from .volume_view import region_heatmap

__all__ = ["CandidateExplorer", "KernelPicker", "SearchProgress", "Tab", "domain_table_html",
           "explore", "fcg_figure", "mars_figure", "pick", "region_heatmap", "run_live",
           "show_domains", "timing_figures"]
