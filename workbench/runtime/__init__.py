"""Measured timings (issue 5): evaluator backends (`cpu`, `cuda`, and any a
user registers), typed records and their store (append-only JSON lines,
loaded as a pandas DataFrame)."""

from .backend import Backend, backends, get_backend, register_backend
from .cpu import CpuBackend
from .cuda import CudaBackend
from .evaluator import Measurement, Reference, evaluate, measure_reference, summary
from .records import SCHEMA, STATUSES, Record, RecordStore, Store, load_records

# the built-in backends; a user's own: register_backend("name", factory)
register_backend("cpu", CpuBackend)
register_backend("cuda", CudaBackend)

__all__ = ["SCHEMA", "STATUSES", "Backend", "CpuBackend", "CudaBackend", "Measurement", "Record",
           "RecordStore", "Reference", "Store", "backends", "evaluate", "get_backend",
           "load_records", "measure_reference", "register_backend", "summary"]
