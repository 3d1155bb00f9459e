"""Hardware targets: data files under `data/targets/` (never constants in code).

A target file is JSON with a `limits` table (what the decision space must
respect: threads per block, shared memory, vector widths, ...), a `model`
table (the hardware abstraction of the lower bound, thesis §5.1.1: clock,
parallelism, resources per level, latencies) and a `sources` table saying
where every number came from: `sources["<limit>"]` for limits and
`sources["model.<path>"]` for every leaf of `model`. A file may hold limits,
a model or both; the loader refuses an undocumented number. A target
calibrated into the data directory (`workbench.paths.data_dir`) is found
before a shipped one of the same name.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import WorkbenchError
from .paths import data_dir, shipped_data_dir

DEFAULT_TARGET = "h200"
_REQUIRED = ("max_threads_per_block", "max_thread_dims", "max_block_dims", "max_grid_y_z",
             "shared_memory_bytes", "vector_widths", "max_unroll", "warp_size")


def _target_dirs() -> list[Path]:
    """Calibrated targets in the data directory first, then the shipped ones."""
    return list(dict.fromkeys([data_dir() / "targets", shipped_data_dir() / "targets"]))


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    limits: dict
    sources: dict = field(default_factory=dict, compare=False)
    raw: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def snippet_api(self) -> frozenset:
        """What snippets may read: the name and the limits."""
        return frozenset(self.limits) | {"name"}

    def __getattr__(self, item):  # limits read as attributes from snippets
        limits = self.__dict__.get("limits", {})
        if item in limits:
            return limits[item]
        raise AttributeError(item)


_CACHE: dict[tuple, Target] = {}  # (path, inode, mtime_ns, size) -> Target
# (name and what `data_dir` reads: $WORKBENCH_DATA, cwd, the user data directory's
# variables) -> where its file may be
_PLACES: dict[tuple, list] = {}
_PLACE_VARS = ("WORKBENCH_DATA", "XDG_DATA_HOME", "HOME", "LOCALAPPDATA")


def available_targets() -> list[str]:
    return sorted({p.stem for d in _target_dirs() for p in d.glob("*.json")})


def load_target(name: str | Target = DEFAULT_TARGET) -> Target:
    """Load `data/targets/<name>.json` (or a path to a JSON file)."""
    if isinstance(name, Target):
        return name
    p = Path(name)
    if p.suffix != ".json":
        where = (name, os.getcwd(), *(os.environ.get(v) for v in _PLACE_VARS))
        if where not in _PLACES:  # the data directory's table first, then the shipped one
            _PLACES[where] = [(d / f"{name}.json").resolve() for d in _target_dirs()]
        p = next((q for q in _PLACES[where] if q.exists()), _PLACES[where][0])
    try:
        st = p.stat()
    except OSError:
        raise WorkbenchError(f"no target {name!r}; available: "
                             f"{', '.join(available_targets())}") from None
    # by file and version, not by name: a long-lived process (a notebook, a
    # search's workers) sees another data directory's table, or a table a
    # calibration rewrote, as what it is
    key = (str(p), st.st_ino, st.st_mtime_ns, st.st_size)  # a calibration renames a new file in
    if key in _CACHE:
        return _CACHE[key]
    try:
        raw = json.loads(p.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise WorkbenchError(f"target file {p}: not valid JSON: {exc}") from None
    except OSError as exc:
        raise WorkbenchError(f"target file {p}: {exc.strerror or exc}") from None
    if not isinstance(raw, dict):
        raise WorkbenchError(f"target file {p}: a target is a JSON object")
    limits, sources = raw.get("limits"), raw.get("sources", {})
    if limits is None and "model" not in raw:
        raise WorkbenchError(f"target file {p}: neither limits nor model")
    if not isinstance(sources, dict) or not isinstance(raw.get("model", {}), dict) \
            or (limits is not None and not isinstance(limits, dict)):
        raise WorkbenchError(f"target file {p}: limits, model and sources are JSON objects")
    missing = [k for k in _REQUIRED if k not in limits] if limits is not None else []
    if missing:
        raise WorkbenchError(f"target file {p}: limits lack {', '.join(missing)}")
    _check_limits(p, limits or {})
    undocumented = [k for k in (limits or {}) if k not in sources]
    undocumented += [k for k in _leaves(raw.get("model", {}), "model") if k not in sources]
    if undocumented:
        raise WorkbenchError(f"target file {p}: no source given for {', '.join(undocumented)}")
    t = Target(raw.get("name", p.stem), raw.get("description", ""), limits or {},
               sources, raw)
    _CACHE[key] = t
    return t


def _positive_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 < x < 2**63


def _check_limits(p, limits: dict) -> None:
    """Every limit a positive integer, or a list of them (vector_widths)."""
    bad = [f"{k} = {v!r}" for k, v in limits.items()
           if not (_positive_int(v) or (isinstance(v, list) and v and all(map(_positive_int, v))))]
    if bad:
        raise WorkbenchError(f"target file {p}: a limit is a positive integer or a list of "
                             f"them: {', '.join(bad)}")


def _leaves(tree: dict, prefix: str):
    for k, v in tree.items():
        if isinstance(v, dict):
            yield from _leaves(v, f"{prefix}.{k}")
        else:
            yield f"{prefix}.{k}"
