"""The hardware abstraction of the lower-bound model (thesis §5.1.1), read from
the `model` table of a target file: parallelism levels, resources per level
per cycle, instruction latencies and occupancy limits. Numbers live in
`data/targets/*.json`, each with its source; nothing here is a constant of a
particular GPU."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..errors import WorkbenchError
from ..target import Target, load_target

LEVELS = ("thread", "block", "gpu")  # parallelism levels 0, 1, 2 (k = 2)

# Resource names, their units and how a person reads them.
RESOURCES = {
    "issue": ("instructions", "instruction issue"),
    "fma": ("FP32 operations", "FP32 units"),
    "lsu": ("wavefronts", "load/store units (L1/shared wavefronts)"),
    "sync": ("barriers", "synchronisation"),
    "l2_bytes": ("bytes", "L2 bandwidth"),
    "dram_bytes": ("bytes", "DRAM bandwidth"),
    "branch": ("taken branches", "taken branches (loop back-edges)"),
}
LATENCIES = ("fp", "mov", "load_shared", "load_l1", "load_readonly", "load_l2", "store")


@dataclass(frozen=True)
class Hardware:
    name: str
    clock_ghz: float
    sms: int
    max_threads_per_sm: int | None
    max_blocks_per_sm: int | None
    shared_bytes_per_sm: int | None
    max_threads_per_block: int | None
    resources: dict  # level name -> {resource: amount per cycle}
    latency: dict  # latency name -> cycles
    compulsory_level: str
    sector_bytes: int
    wavefront_bytes: int
    banks: int
    warp_size: int
    runs: str  # "cuda" or "cpu": the backend whose timings this target bounds
    # loop control (thesis eqs. 5.5, 5.11, 5.16): usage per iteration of a
    # loop that surely stays a loop, e.g. {"issue": 2} (compare, branch)
    loop_overhead: dict = field(default_factory=dict)
    loop_min_trip: int = 1  # shorter loops may be unrolled by the compiler
    global_l1: bool = True  # global loads may hit in L1 (Kepler cc 3.0: no)
    readonly_path: bool = True  # a read-only data cache (__ldg; cc ≥ 3.5)
    replays_issue: bool = False  # each extra wavefront replays the instruction
    launch_cycles: float = 0.0  # a fixed cost before the kernel runs (calibrated CPU)
    # no kernel the backend times is shorter (calibrated GPU: an empty kernel)
    launch_floor_cycles: float = 0.0

    def ns(self, cycles: float) -> float:
        return cycles / self.clock_ghz

    @property
    def least_loop_trip(self) -> int:
        """The fewest iterations of a loop that surely stays a loop with a
        back-edge: `loop_min_trip`, and 2 at least (one iteration has none)."""
        return max(2, self.loop_min_trip)

    def rate(self, level: str, resource: str) -> float | None:
        return self.resources.get(level, {}).get(resource)


def hardware(target: str | Target | Hardware) -> Hardware:
    if isinstance(target, Hardware):
        return target
    t = load_target(target)
    # cached on the Target itself, not by name: two files may share a name
    # (a campaign's own target.json and today's data/targets one for the
    # same device), and the second must not get the first's numbers
    hw = t.__dict__.get("_hardware")
    if hw is not None:
        return hw
    m = t.raw.get("model")
    if m is None:
        raise WorkbenchError(f"target {t.name!r} has no `model` table: the lower bound needs "
                             "resources and latencies (see data/targets/h200.json)")
    try:
        par = m["parallelism"]
        res = {lvl: dict(m["resources"][lvl]) for lvl in LEVELS}
        lat = {k: float(m["latency"][k]) for k in LATENCIES}
        hw = Hardware(
            name=t.name, clock_ghz=float(m["clock_ghz"]), sms=int(par["sms"]),
            max_threads_per_sm=par.get("max_threads_per_sm"),
            max_blocks_per_sm=par.get("max_blocks_per_sm"),
            shared_bytes_per_sm=par.get("shared_bytes_per_sm"),
            max_threads_per_block=t.limits.get("max_threads_per_block"),
            resources=res, latency=lat, compulsory_level=m["compulsory_level"],
            sector_bytes=int(m["sector_bytes"]), wavefront_bytes=int(m["wavefront_bytes"]),
            banks=int(m["banks"]),
            warp_size=int(m.get("warp_size", t.limits.get("warp_size", 32))),
            runs=t.raw.get("runs", "cuda"),
            loop_overhead={k: float(v) for k, v in m.get("loop_overhead", {}).items()},
            loop_min_trip=int(m.get("loop_min_trip", 1)),
            global_l1=bool(m.get("global_l1", True)),
            readonly_path=bool(m.get("readonly_path", True)),
            replays_issue=bool(m.get("replays_issue", False)),
            launch_cycles=float(m.get("launch_cycles", 0.0)),
            launch_floor_cycles=float(m.get("launch_floor_cycles", 0.0)))
    except (KeyError, TypeError, ValueError) as exc:
        raise WorkbenchError(f"target {t.name!r}: malformed model table ({exc!r})") from None
    for lvl, table in res.items():
        unknown = set(table) - set(RESOURCES)
        if unknown:
            raise WorkbenchError(f"target {t.name!r}: unknown resources {sorted(unknown)} at "
                                 f"level {lvl}; known: {', '.join(RESOURCES)}")
        bad = [r for r, v in table.items() if not (isinstance(v, (int, float)) and v > 0)]
        if bad:
            raise WorkbenchError(f"target {t.name!r}: resources {bad} at level {lvl} must be "
                                 "positive numbers")
    if hw.runs == "cpu":
        # the table's trip assumes the reference C's flags; a compiler that
        # does not take them may unroll short loops
        from ..codegen.compile import kept_trip
        hw = replace(hw, loop_min_trip=max(hw.loop_min_trip, kept_trip()))
    t.__dict__["_hardware"] = hw
    return hw


def with_cores(hw: Hardware, cores: int) -> Hardware:
    """A CPU table for `cores` cores running blocks in parallel: the
    whole-machine resources scale, a block still runs on one core."""
    if cores == hw.sms:
        return hw
    scale = cores / hw.sms
    gpu = {r: v * scale for r, v in hw.resources["gpu"].items()}
    return replace(hw, name=hw.name, sms=cores, resources={**hw.resources, "gpu": gpu})
