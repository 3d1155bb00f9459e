"""Views over workbench objects (ipywidgets / plotly). Views only: every
number shown here comes from `workbench`, reachable from plain Python too.

The candidate explorer arrives with its own issue; this module holds the
first view the teaching notebook uses: the domain table of a candidate.
"""

from __future__ import annotations

from .domains import domain_table_html, show_domains
from .search_view import SearchProgress, run_live
from .volume_view import region_heatmap

__all__ = ["SearchProgress", "domain_table_html", "region_heatmap", "run_live", "show_domains"]
