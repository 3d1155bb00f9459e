"""Volume programs (the volume-model paper §4.3, appendix A.3): SSA
assignments over volumes, read from a JSON spec (docs/volume-spec.md), with the
program's volume element map computed by lenient composition in ALAP
use-def order (Lemma A.5) — one pass, no transitive closure:

    A ∘id B = A ∘ (B ∪ id(range A \\ dom B))

starting from the identity on the output and substituting each assignment's
map after all of its uses. The range ends up on live-ins and constants only.

Live-ins are `inputs` (name → shape: values known only at run time) and
`constants` (name → shape: values known at compile time, e.g. the weights
the paper's Figure 1 bakes into the kernel, `[]` for a scalar such as a
padding value). The older constants form, a list of names, declares
rank-0 constants. A spec is data only: names must be identifiers and every
shape or op parameter an integer, since both are written into isl text.
"""

from __future__ import annotations

import graphlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import islpy as isl

from ..errors import WorkbenchError
from . import ops


def box_set(name: str, shape) -> str:
    iv = [f"i{k}" for k in range(len(shape))]
    cond = " and ".join(f"0 <= {v} < {s}" for v, s in zip(iv, shape))
    return f"{{ {name}[{', '.join(iv)}]{' : ' + cond if cond else ''} }}"


@dataclass
class Program:
    inputs: dict  # name → shape
    constants: dict  # name → shape of each compile-time constant volume ([] a scalar)
    ops: list  # the spec's op dicts, in the given order
    output: str
    shapes: dict = field(default_factory=dict)  # every value's shape
    maps: dict = field(default_factory=dict)  # result → element map text

    @classmethod
    def from_spec(cls, spec: dict | str | Path) -> Program:
        """A program from a spec (a dict, JSON text or a file), every field
        checked against docs/volume-spec.md before any isl text is built."""
        spec = _read_spec(spec)
        if not isinstance(spec, dict):
            raise WorkbenchError(f"volume spec: expected a JSON object, got {type(spec).__name__}")
        for key in ("inputs", "ops", "output"):
            if key not in spec:
                raise WorkbenchError(f"volume spec: missing {key!r}")
        if not isinstance(spec["inputs"], dict):
            raise WorkbenchError("volume spec: 'inputs' must map names to shapes")
        inputs = {_name("input", k): _shape_list(f"input {k!r}", v)
                  for k, v in spec["inputs"].items()}
        consts = spec.get("constants", {})
        if isinstance(consts, list):  # the older form: names of rank-0 constants
            consts = {_name("constant", c): [] for c in consts}
        if not isinstance(consts, dict):
            raise WorkbenchError("volume spec: 'constants' must map names to shapes "
                                 "(or list names of scalars)")
        constants = {_name("constant", k): _shape_list(f"constant {k!r}", v)
                     for k, v in consts.items()}
        both = sorted(set(inputs) & set(constants))
        if both:
            raise WorkbenchError(f"volume spec: {both} declared both as input and constant")
        if not isinstance(spec["ops"], list) or not all(isinstance(o, dict) for o in spec["ops"]):
            raise WorkbenchError("volume spec: 'ops' must be a list of op objects")
        if len(spec["ops"]) > MAX_OPS:
            raise WorkbenchError(f"volume spec: {len(spec['ops'])} ops; at most {MAX_OPS}")
        if not isinstance(spec["output"], str):
            raise WorkbenchError(f"volume spec: 'output' must be a name, got {spec['output']!r}")
        p = cls(inputs, constants, list(spec["ops"]), spec["output"])
        p._infer()
        return p

    # ---------------------------------------------------------- shapes, maps
    def _shape(self, name: str, op: dict):
        if name not in self.shapes:
            raise WorkbenchError(f"op {op.get('result')!r} ({op.get('op')}) reads {name!r}, "
                                 "which is not defined before it")
        return self.shapes[name]

    def _infer(self) -> None:
        self.shapes = {**self.inputs, **self.constants}
        for op in self.ops:
            res, kind = op.get("result"), op.get("op")
            if not isinstance(res, str) or not res or res in self.shapes:
                raise WorkbenchError(f"every op needs a new result name (SSA); got {res!r}")
            _name("result", res)
            _check_fields(res, op)
            try:
                shape, text = self._build(res, kind, op)
            except KeyError as exc:
                raise WorkbenchError(f"op {res!r} ({kind}): missing field {exc.args[0]!r}"
                                     ) from None
            _check_shape(f"op {res!r} ({kind}) result", shape)
            self.shapes[res], self.maps[res] = list(shape), text
        if self.output not in self.maps:
            raise WorkbenchError(f"output {self.output!r} is not the result of an op")

    def _build(self, res: str, kind: str, op: dict):
        sh = self._shape
        if kind == "pad":
            value = op.get("value")
            if value is None and op.get("mode") != "periodic":  # None means periodic below
                raise WorkbenchError(f"pad {res!r}: needs a constant 'value' or "
                                     "\"mode\": \"periodic\"")
            if value is not None and value not in self.constants:
                raise WorkbenchError(f"pad {res!r}: value {value!r} is not a declared constant")
            if value is not None and self.constants[value]:
                # the padding map reads value[] for every padded element
                raise WorkbenchError(f"pad {res!r}: value {value!r} has shape "
                                     f"{self.constants[value]}; a padding value must be a scalar")
            return ops.pad(res, op["source"], sh(op["source"], op), op["low"], op["high"],
                           None if op.get("mode") == "periodic" else value)
        if kind == "conv2d_nchw_fchw":
            return ops.conv2d_nchw_fchw(res, op["input"], sh(op["input"], op), op["filter"],
                                        sh(op["filter"], op), op.get("strides", [1, 1]),
                                        op.get("dilations", [1, 1]))
        if kind == "elementwise":
            return ops.elementwise(res, {o: sh(o, op) for o in op["operands"]})
        if kind == "matmul":
            return ops.matmul(res, op["lhs"], sh(op["lhs"], op), op["rhs"], sh(op["rhs"], op))
        if kind == "outer":
            return ops.outer(res, op["lhs"], sh(op["lhs"], op), op["rhs"], sh(op["rhs"], op))
        if kind == "reduce":
            return ops.reduce(res, op["source"], sh(op["source"], op), op["axes"])
        if kind == "diagonal":
            return ops.diagonal(res, op["source"], sh(op["source"], op), op["s"], op["t"])
        if kind == "slice":
            s = sh(op["source"], op)
            return ops.slice_(res, op["source"], s, op["offsets"], op["sizes"],
                              op.get("strides", [1] * len(s)))
        if kind == "transpose":
            return ops.transpose(res, op["source"], sh(op["source"], op), op["permutation"])
        if kind == "insert_slice":
            d = sh(op["dest"], op)
            _check_insert(res, d, sh(op["source"], op), op["offsets"],
                          op.get("strides", [1] * len(d)))
            return ops.insert_slice(res, op["dest"], d, op["source"], sh(op["source"], op),
                                    op["offsets"], op.get("strides", [1] * len(d)))
        raise WorkbenchError(f"unknown volume op {kind!r}; known: pad, conv2d_nchw_fchw, "
                             "elementwise, matmul, outer, reduce, diagonal, slice, transpose, "
                             "insert_slice")

    # ------------------------------------------------------------ the model
    def domain(self, name: str):
        return isl.UnionSet(box_set(name, self.shapes[name]))

    def op_map(self, name: str):
        return isl.UnionMap(f"{{ {self.maps[name]} }}")

    def element_map(self, output: str | None = None):
        """The program's volume element map from `output` (default: the
        spec's) to live-ins and constants, by lenient composition."""
        out = output or self.output
        if out not in self.shapes:
            raise WorkbenchError(f"output {out!r}: the program has no value of that name; "
                                 f"its values: {', '.join(sorted(self.shapes))}")
        uses = {op["result"]: set() for op in self.ops}
        for op in self.ops:
            for name in _operands(op):
                if name in uses:
                    uses[name].add(op["result"])
        # ALAP use-def order: a value after every op that uses it
        order = list(graphlib.TopologicalSorter(uses).static_order())
        m = self.domain(out).identity()
        for name in order:
            b = self.op_map(name)
            keep = m.range().subtract(b.domain())
            m = m.apply_range(b.union(keep.identity()))
        return m.coalesce()


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# isl keywords: a volume of that name would not parse (or would change the map)
_ISL_WORDS = {"and", "or", "not", "exists", "mod", "floor", "ceil", "min", "max", "true",
              "false", "infty", "NaN", "cond", "implies", "xor"}
_INT_LISTS = ("low", "high", "strides", "dilations", "offsets", "sizes", "permutation", "axes")
_NAME_FIELDS = ("source", "input", "filter", "lhs", "rhs", "dest", "value")


def _name(what: str, name) -> str:
    if not isinstance(name, str) or not _IDENT.match(name) or name in _ISL_WORDS \
            or ops.PAD_TAG in name:
        raise WorkbenchError(f"volume spec: {what} name {name!r} is not an identifier "
                             f"(letters, digits, _; no {ops.PAD_TAG!r}, no isl keyword)")
    return name


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


# limits of a spec (every number reaches isl text and isl's counting)
MAX_RANK = 8
MAX_EXTENT = 2**31 - 1  # one dimension of a volume, one offset, stride or width
MAX_ELEMENTS = 2**40  # the elements of one volume
MAX_OPS = 1000
# the fields each op takes (besides "op" and "result"), so a misspelled one is named
_FIELDS = {"pad": {"source", "low", "high", "value", "mode"},
           "conv2d_nchw_fchw": {"input", "filter", "strides", "dilations"},
           "elementwise": {"operands"}, "matmul": {"lhs", "rhs"}, "outer": {"lhs", "rhs"},
           "reduce": {"source", "axes"}, "diagonal": {"source", "s", "t"},
           "slice": {"source", "offsets", "sizes", "strides"},
           "transpose": {"source", "permutation"},
           "insert_slice": {"dest", "source", "offsets", "strides"}}
_POSITIVE = ("strides", "dilations", "sizes")


def _shape_list(what: str, shape) -> list:
    if not isinstance(shape, list) or not all(_is_int(s) for s in shape):
        raise WorkbenchError(f"volume spec: {what} has shape {shape!r}; a shape is a list of "
                             "integers ([] for a scalar)")
    bad = [s for s in shape if s < 1]
    if bad:
        raise WorkbenchError(f"volume spec: {what} has shape {shape}; dimension(s) {bad} "
                             "are not positive")
    _check_shape(what, shape)
    return list(shape)


def _check_shape(what: str, shape) -> None:
    if len(shape) > MAX_RANK:
        raise WorkbenchError(f"volume spec: {what} has rank {len(shape)}; at most {MAX_RANK}")
    big = [s for s in shape if s > MAX_EXTENT]
    if big:
        raise WorkbenchError(f"volume spec: {what} has shape {shape}; a dimension is at most "
                             f"{MAX_EXTENT:,}")
    n = 1
    for s in shape:
        n *= s
    if n > MAX_ELEMENTS:
        raise WorkbenchError(f"volume spec: {what} has shape {shape}: {n:,} elements; at most "
                             f"{MAX_ELEMENTS:,}")


def _read_spec(spec):
    if isinstance(spec, Path) or (isinstance(spec, str) and not spec.lstrip().startswith("{")):
        from ..validate import read_json_document
        return read_json_document(spec, "volume spec")  # its errors name the spec
    if isinstance(spec, str):
        try:
            return json.loads(spec)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise WorkbenchError(f"the volume spec is not JSON: {exc}") from None
    return spec


def _check_fields(res: str, op: dict) -> None:
    """Types of the op's fields, before any of them reaches isl text."""
    kind = op.get("op")
    if kind in _FIELDS:
        unknown = sorted(set(op) - _FIELDS[kind] - {"op", "result"})
        if unknown:
            raise WorkbenchError(f"op {res!r} ({kind}): unknown field(s) {', '.join(unknown)}; "
                                 f"{kind} takes {', '.join(sorted(_FIELDS[kind]))}")
    _check_int_lists(res, kind, op)
    _check_names(res, kind, op)


def _check_int_lists(res: str, kind, op: dict) -> None:
    for key in _INT_LISTS:
        if key in op and not (isinstance(op[key], list) and all(_is_int(v) for v in op[key])
                              and len(op[key]) <= MAX_RANK):
            raise WorkbenchError(f"op {res!r} ({kind}): {key} must be a list of integers "
                                 f"(at most {MAX_RANK}), got {op[key]!r}")
        if key in op and any(abs(v) > MAX_EXTENT for v in op[key]):
            raise WorkbenchError(f"op {res!r} ({kind}): {key} {op[key]} has a number beyond "
                                 f"±{MAX_EXTENT:,}")
        if key in _POSITIVE and key in op and any(v < 1 for v in op[key]):
            raise WorkbenchError(f"op {res!r} ({kind}): {key} must be positive, got {op[key]}")
    if kind == "conv2d_nchw_fchw":
        for key in ("strides", "dilations"):
            if key in op and len(op[key]) != 2:
                raise WorkbenchError(f"op {res!r} ({kind}): {key} must list 2 integers "
                                     f"(height, width), got {op[key]}")
    for key in ("s", "t"):
        if key in op and not (_is_int(op[key]) and 0 <= op[key] < MAX_RANK):
            raise WorkbenchError(f"op {res!r} ({kind}): {key} must be a dimension index "
                                 f"(0 to {MAX_RANK - 1}), got {op[key]!r}")


def _check_names(res: str, kind, op: dict) -> None:
    for key in _NAME_FIELDS:
        if key in op and op[key] is not None and not isinstance(op[key], str):
            raise WorkbenchError(f"op {res!r} ({kind}): {key} must be a volume name, "
                                 f"got {op[key]!r}")
    if "operands" in op and not (isinstance(op["operands"], list) and op["operands"]
                                 and all(isinstance(v, str) for v in op["operands"])):
        raise WorkbenchError(f"op {res!r} ({kind}): operands must be a non-empty list of "
                             f"volume names, got {op['operands']!r}")
    if "mode" in op and op["mode"] not in ("constant", "periodic"):
        raise WorkbenchError(f"op {res!r} ({kind}): mode must be 'constant' or 'periodic', "
                             f"got {op['mode']!r}")


def _check_insert(res: str, dshape, sshape, offsets, strides) -> None:
    """insert_slice: one offset and stride per dimension, the source inside dest."""
    rank = len(dshape)
    if len(sshape) != rank or len(offsets) != rank or len(strides) != rank:
        raise WorkbenchError(f"op {res!r} (insert_slice): a rank-{rank} dest needs a rank-{rank} "
                             f"source and {rank} offsets and strides; got source {sshape}, "
                             f"offsets {offsets}, strides {strides}")
    for d, (ds, ss, off, st) in enumerate(zip(dshape, sshape, offsets, strides)):
        if off < 0 or off + st * (ss - 1) >= ds:
            raise WorkbenchError(f"op {res!r} (insert_slice): dimension {d}: the source "
                                 f"({ss} elements from {off} by {st}) does not fit the dest "
                                 f"({ds})")


def _operands(op: dict) -> list:
    keys = ("source", "input", "filter", "lhs", "rhs", "dest")
    out = [op[k] for k in keys if isinstance(op.get(k), str)]
    out += list(op.get("operands", []))
    if isinstance(op.get("value"), str):
        out.append(op["value"])
    return out


__all__ = ["Program", "box_set"]
