"""Checks of what comes from outside — command lines, JSON documents, shared
files — made before anything is built from it (issue 20). Each check raises
a `WorkbenchError` naming the field and what it should be.

- `check_kernel_spec`: a kernel spec (`Kernel.spec()`, a `--sizes` line):
  a known builder, integer sizes in range, a known target.
- `project_name`: a space or target named inside a JSON document must be a
  plain name among the project's own (a path in a shared file would load any
  file on disk); paths are for the command line and the Python API only.
- `read_json_document`: a JSON file of bounded size, or a clear error.
- `identity` / `check_identity`: what a trail or an explorer state was
  written for (kernel spec, space, digest), and the refusal, naming both,
  of a document replayed on something else.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from .errors import InvalidDecision, WorkbenchError

MAX_SIZE = 2**40  # one size of a kernel (a dimension's extent)
MAX_ELEMENTS = 2**40  # the product of a kernel's sizes (its iteration space)
MAX_DOCUMENT_BYTES = 64 * 2**20
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}$")

# the sizes each linalg builder takes, and which are extents (multiplied together)
_LINALG_SIZES = {"axpy": ("n",), "matmul": ("m", "n", "k"), "strided_matmul": ("m", "n", "k"),
                 "batched_matmul": ("b", "m", "n", "k"), "reuse_matmul": ("b", "m", "n", "k")}
_LINALG_OPTIONAL = {"strided_matmul": ("stride",)}


def check_int(value, field: str, lo: int, hi: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise WorkbenchError(f"{field} must be an integer, got {value!r}")
    if not lo <= value <= hi:
        raise WorkbenchError(f"{field} must be between {lo:,} and {hi:,}, got {value:,}")
    return value


def project_name(value, what: str, known) -> str:
    """A plain name among `known` (the project's spaces or targets); a path
    or anything else is refused."""
    if not isinstance(value, str) or not _NAME.match(value):
        raise WorkbenchError(f"{what} must be the name of one of the project's {what}s "
                             f"({', '.join(sorted(known))}), not {value!r}: a path inside a "
                             "document is not followed (give files on the command line)")
    if value not in known:
        raise WorkbenchError(f"unknown {what} {value!r}; known: {', '.join(sorted(known))}")
    return value


def shipped_spaces() -> list[str]:
    from .space.space import _SPACE_DIR
    return sorted(f.stem for f in _SPACE_DIR.glob("*.space"))


def space_name(value) -> str:
    """The space a document names: one shipped with the package."""
    if isinstance(value, str):
        value = value.removesuffix(".space")
    return project_name(value, "space", shipped_spaces())


def target_name(value) -> str:
    from .target import available_targets
    return project_name(value, "target", available_targets())


def check_kernel_spec(spec, where: str = "kernel") -> dict:
    """A kernel spec checked against its builder's declared fields."""
    if not isinstance(spec, dict):
        raise WorkbenchError(f"{where}: a kernel spec is an object, got {type(spec).__name__}")
    builder = spec.get("builder")
    if "target" in spec:
        target_name(spec["target"])
    if builder in _LINALG_SIZES:
        names = _LINALG_SIZES[builder]
        allowed = {"builder", "target", *names, *_LINALG_OPTIONAL.get(builder, ())}
        unknown = sorted(set(spec) - allowed)
        if unknown:
            raise WorkbenchError(f"{where}: {builder} takes {', '.join(names)}; unknown "
                                 f"{', '.join(unknown)}")
        missing = [n for n in names if n not in spec]
        if missing:
            raise WorkbenchError(f"{where}: {builder} needs {', '.join(missing)}")
        for n in allowed - {"builder", "target"}:
            if n in spec:
                check_int(spec[n], f"{where}: size {n}", 1, MAX_SIZE)
        total = math.prod(spec[n] for n in names)
        if total > MAX_ELEMENTS:
            raise WorkbenchError(f"{where}: {' × '.join(str(spec[n]) for n in names)} = "
                                 f"{total:,} iterations; at most {MAX_ELEMENTS:,}")
    elif builder == "random_basic_block":
        unknown = sorted(set(spec) - {"builder", "n", "density", "seed", "max_latency"})
        if unknown:
            raise WorkbenchError(f"{where}: random_basic_block takes n, density, seed, "
                                 f"max_latency; unknown {', '.join(unknown)}")
        check_int(spec.get("n"), f"{where}: n", 1, 10_000)
        check_int(spec.get("seed", 0), f"{where}: seed", -2**63, 2**63)
        check_int(spec.get("max_latency", 8), f"{where}: max_latency", 1, 10**6)
        d = spec.get("density", 0.3)
        if isinstance(d, bool) or not isinstance(d, (int, float)) or not 0 <= d <= 1:
            raise WorkbenchError(f"{where}: density must be a number in [0, 1], got {d!r}")
    elif builder == "basic_block":
        unknown = sorted(set(spec) - {"builder", "instructions"})
        if unknown:
            raise WorkbenchError(f"{where}: basic_block takes instructions; unknown "
                                 f"{', '.join(unknown)}")
        insts = spec.get("instructions")
        if not isinstance(insts, list) or not 0 < len(insts) <= 10_000:
            raise WorkbenchError(f"{where}: basic_block needs a list of 1 to 10,000 "
                                 "instructions")
    return spec


def read_json_document(path, what: str):
    """The JSON in file `path` (at most MAX_DOCUMENT_BYTES)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_DOCUMENT_BYTES:
            raise WorkbenchError(f"{path}: {size:,} bytes; a {what} is at most "
                                 f"{MAX_DOCUMENT_BYTES:,}")
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkbenchError(f"cannot read the {what} {path}: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise WorkbenchError(f"{path}: not a JSON {what}: {exc}") from None


def identity(cand) -> dict:
    """What a trail replays on: the kernel spec and the space."""
    return {"kernel": cand.problem.root_problem.kernel.spec(),
            "space": cand.space.name.removesuffix(".space")}


def differences(saved: dict, here: dict) -> list[str]:
    """Sentences naming each difference between a document's identity and
    the candidate it is replayed on."""
    out = []
    if "kernel" not in saved:  # it read "the document is for kernel None"
        out.append(f"the document names no kernel (no \"kernel\" field), this is "
                   f"{_spec_text(here['kernel'])}")
    elif saved.get("kernel") != here["kernel"]:
        out.append(f"the document is for kernel {_spec_text(saved.get('kernel'))}, "
                   f"this is {_spec_text(here['kernel'])}")
    saved_space = saved.get("space")
    if isinstance(saved_space, str):
        saved_space = saved_space.removesuffix(".space")
    if saved_space is not None and saved_space != here["space"]:
        out.append(f"the document is for space {saved_space!r}, this is {here['space']!r}")
    return out


def _spec_text(spec) -> str:
    if not isinstance(spec, dict):
        return repr(spec)
    args = ", ".join(f"{k}={v}" for k, v in spec.items() if k != "builder")
    return f"{spec.get('builder')}({args})"


def check_identity(saved: dict, root, allow_other: bool = False, what: str = "trail"
                   ) -> list[str]:
    """Refuse (InvalidDecision) a document written for another kernel or
    space than `root`'s, naming both; with `allow_other`, the differences
    (to say what differs) and no error."""
    diff = differences(saved, identity(root))
    if diff and not allow_other:
        raise InvalidDecision(f"this {what} was written for another kernel or space: "
                              + "; ".join(diff)
                              + " (--allow-other-kernel replays it anyway)")
    return diff


def check_digest(saved: dict, cand, what: str = "trail") -> None:
    """A replayed trail must give the domains it was saved with."""
    want = saved.get("digest")
    if want is not None and want != cand.digest():
        raise InvalidDecision(f"this {what} replays to other domains than it was saved with "
                              f"(digest {str(want)[:12]}…, replayed {cand.digest()[:12]}…): the "
                              "kernel, the space or the trail changed since")


__all__ = ["MAX_ELEMENTS", "MAX_SIZE", "check_digest", "check_identity", "check_int",
           "check_kernel_spec", "differences", "identity", "project_name",
           "read_json_document", "shipped_spaces", "space_name", "target_name"]
