"""The GPU measurement campaign (issue 21): `run_campaign` (one command for
everything a GPU must show, budgeted and resumable), `searches` (its TAG
searches and forced recipes), `report` (soundness,
Fig. 5.1, Table 6.2 from the records), `bounds` (recorded trails bounded
again by today's model, cached), `audit` (every stored measurement against
today's bound, by whether it timed today's program) and `data` (reading
data/gpu/ on any machine).
`python -m workbench campaign` and `make gpu` run it."""

from .audit import (
                   audit,
                   audit_lines,
                   audit_rows,
                   record_files,
)
from .bounds import (
                   bound_apart,
                   bounds_now,
                   current_bounds,
                   engine_fingerprint,
                   measured,
                   programs_now,
)
from .data import (
                   NO_GPU_DATA,
                   gpu_dirs,
                   gpu_records,
                   gpu_rows,
                   gpu_version,
                   redrawn,
                   status_line,
                   summaries,
)
from .report import (
                   ORIGINS,
                   by_program,
                   cdf_svg,
                   fig_5_1,
                   fig_5_1_by_population,
                   forced_table,
                   origin,
                   population,
                   soundness,
                   summarize,
                   table_6_2,
                   with_current_bounds,
                   write_report,
)
from .run import (
                   STAGES,
                   Campaign,
                   CampaignOptions,
                   DrawnCache,
                   draw_ahead,
                   report_only,
                   run_campaign,
)

__all__ = ["NO_GPU_DATA", "ORIGINS", "STAGES", "Campaign", "CampaignOptions", "DrawnCache",
           "audit", "audit_lines", "audit_rows", "bound_apart", "bounds_now", "by_program",
           "cdf_svg", "current_bounds", "draw_ahead", "engine_fingerprint", "fig_5_1",
           "fig_5_1_by_population", "forced_table", "gpu_dirs",
           "gpu_records", "gpu_rows", "gpu_version", "measured",
           "origin", "population", "programs_now", "record_files", "redrawn", "report_only",
           "run_campaign", "soundness",
           "status_line", "summaries",
           "summarize", "table_6_2", "with_current_bounds", "write_report"]
