"""What padding a staged tile's rows changes (gpu.space's `padding`), read
from the bound without a GPU.

For every register-tiled plan of `recipes.PLANS` on the thesis's matmul
sizes: the plan forced with its tiles unpadded (`padded=False`), padded
(`padded=True`) and left open (`padded=None`: the bound takes the least of
both layouts), each candidate's bound on a GPU table, its L1/shared
wavefronts over the GPU, and the wavefronts a warp access of B's tile store
and A's tile read; with nvcc, what ptxas and the PTX say of the padded
kernel (registers, shared bytes, `ld.shared.v4` against scalar shared loads:
the float4 rows stay aligned).

    python benchmarks/bench_padding.py [--target nvidia_h200] [--out data/bench/padding.json]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile

from peer import write_figures

import workbench as wb
from workbench.codegen import generate
from workbench.codegen.compile import compile_cuda, nvcc_path, ptxas_info
from workbench.descent import random_fixed
from workbench.model.bound import _Model
from workbench.model.facts import Facts
from workbench.model.hardware import hardware
from workbench.recipes import PLANS, forced_candidate, plan_name
from workbench.target import available_targets

SIZES = ((1024, 1024, 1024), (256, 256, 32))


def _wavefronts(cand, hw) -> dict:
    m = _Model(Facts(cand), hw)
    lsu = m.usage(2)["lsu"]
    out = {"total": sum(lsu.values())}
    for name in ("st_ld_b_mad", "ld_ld_a_mad"):
        inst = cand.kernel.instruction(name)
        out[f"{name}_per_warp_access"] = m.warp(inst, 1)[1] if cand.is_fixed else None
    return out


def _ptx(cand) -> dict | None:
    if nvcc_path() is None:
        return None
    g = generate(cand, "padded")
    with tempfile.TemporaryDirectory() as tmp:
        [ptx] = compile_cuda([g.cuda], workdir=tmp, jobs=1)
        ops = re.findall(r"\b(ld\.shared(?:\.v[24])?)\.f32", ptx.read_text())
        info = ptxas_info(g.cuda, "padded", "sm_90", tmp)
    return {"ld_shared_v4": ops.count("ld.shared.v4"), "ld_shared_scalar": ops.count("ld.shared"),
            "registers": info["registers"], "shared_bytes": info["shared_bytes"],
            "spill_bytes": info["spill_bytes"]}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="nvidia_h200" if "nvidia_h200" in available_targets()
                    else "h200")
    ap.add_argument("--out", default="data/bench/padding.json")
    a = ap.parse_args(argv)
    hw = hardware(a.target)
    rows = []
    for sizes in SIZES:
        kernel = wb.kernels.matmul(*sizes)
        root = wb.Candidate.root(kernel)
        for recipe, options in PLANS["matmul"]:
            if "padded" in options:
                continue
            row = {"kernel": f"matmul {sizes[0]}×{sizes[1]}×{sizes[2]}",
                   "plan": plan_name(recipe, options)}
            for padded in (False, True, None):
                try:
                    c = forced_candidate(root, recipe, **options, padded=padded)
                except wb.WorkbenchError as exc:
                    row[str(padded)] = {"refused": str(exc)}
                    continue
                fixed = c if c.is_fixed else random_fixed(c, random.Random(0))
                b = wb.bound(c, hw)
                row[str(padded)] = {"open": c.open_count(), "bound_ns": b.value_ns,
                                    "limited_by": b.justification.children[0].text,
                                    "wavefronts": _wavefronts(c, hw)}
                if padded:
                    row[str(padded)]["ptx"] = _ptx(fixed)
            rows.append(row)
            got = {k: row[k].get("bound_ns") for k in ("False", "True", "None")}
            w0, w1 = row["False"]["wavefronts"], row["True"]["wavefronts"]
            print(f"{row['kernel']} {row['plan']}: bound unpadded {got['False'] / 1e3:,.1f} µs, "
                  f"padded {got['True'] / 1e3:,.1f} µs, open {got['None'] / 1e3:,.1f} µs; "
                  f"wavefronts {w0['total']:.3g} → {w1['total']:.3g}; B store a warp access "
                  f"{w0['st_ld_b_mad_per_warp_access']} → {w1['st_ld_b_mad_per_warp_access']}, "
                  f"A read {w0['ld_ld_a_mad_per_warp_access']} → "
                  f"{w1['ld_ld_a_mad_per_warp_access']}; ptx {row['True'].get('ptx')}", flush=True)
    out = {"target": a.target, "rows": rows}
    write_figures(a.out, json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
