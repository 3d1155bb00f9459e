"""Measured timings (issue 5): evaluator backends (`cpu`, `cuda`), the
record store (append-only JSON lines, loaded as a pandas DataFrame)."""

from .evaluator import Measurement, Reference, evaluate, get_backend, measure_reference, summary
from .records import SCHEMA, STATUSES, RecordStore, load_records

__all__ = ["SCHEMA", "STATUSES", "Measurement", "RecordStore", "Reference", "evaluate",
           "get_backend", "load_records", "measure_reference", "summary"]
