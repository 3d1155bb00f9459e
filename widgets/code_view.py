"""The Code tab of the explorer: the CUDA of a fixed candidate with what
ptxas says of it (registers, spills, shared and local memory, occupancy),
and Run (measure it, every sample into the record store), Check (one run
compared with numpy) and Reference (cuBLAS / numpy alone for the same
sizes)."""

from __future__ import annotations

import html
import threading

from workbench.model.justification import fmt_time


def _launch_text(launch: dict) -> str:
    """The launch configuration in words (it showed as a Python dict)."""
    dims = lambda xs: " × ".join(f"{x:,}" for x in xs)  # noqa: E731
    words = [f"launch: a grid of {dims(launch['grid'])} blocks of {dims(launch['block'])} threads"]
    if launch.get("shared_bytes"):
        words.append(f"{launch['shared_bytes']:,} B of shared memory a block")
    if launch.get("dynamic_shared_bytes"):
        words.append(f"{launch['dynamic_shared_bytes']:,} B of it dynamic")
    if launch.get("scratch_floats"):
        words.append(f"{launch['scratch_floats'] * 4:,} B of global scratch")
    return ", ".join(words)


class CodePanel:
    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex  # the explorer: its session, backend, and refresh after a run
        self._facts: dict = {}  # candidate digest -> the ptxas line
        # candidate digest -> the thread asking ptxas (seconds to a minute
        # for long unrolled code: the CUDA shows at once, the line follows)
        self._compiling: dict = {}
        self._show_lock = threading.Lock()
        self.code_html = w.HTML()
        self.run_b = w.Button(description="Run", icon="play",
                              tooltip="measure on the GPU if there is one, else the CPU")
        self.check_b = w.Button(description="Check", icon="check",
                                tooltip="run once and compare the result with numpy")
        self.ref_b = w.Button(description="Reference", icon="book",
                              tooltip="time cuBLAS (GPU) or numpy (CPU) for the same sizes")
        self.run_b.on_click(lambda _: self.run_current())
        self.check_b.on_click(lambda _: self.check_current())
        self.ref_b.on_click(lambda _: self.run_reference())
        self.run_out = w.HTML()  # a labelled line per button, kept until the candidate changes
        self._lines: dict = {}  # "Run" / "Check" / "Reference" -> its latest line
        self._digest = None
        self._code: dict = {}  # candidate digest -> the code's HTML
        self.widget = w.VBox([w.HBox([self.run_b, self.check_b, self.ref_b]), self.run_out,
                              self.code_html])

    @property
    def session(self):
        return self._ex.session

    @property
    def backend(self) -> str:
        return self._ex.backend

    def refresh(self) -> None:
        cand = self.session.cand
        key = cand.digest()
        if key != self._digest:  # another candidate: the results were of the last one
            self._digest = key
            self._lines = {}
            self._say()
        self.run_b.disabled = self.check_b.disabled = not cand.is_fixed
        if not cand.is_fixed:
            self.code_html.value = "<i>the CUDA appears once every choice is fixed</i>"
            return
        if key not in self._code:
            self.code_html.value = "<i>computing the CUDA …</i>"
            from workbench.codegen import generate
            g = generate(cand)
            self._code[key] = (
                f"<div style='font-size:11px;max-height:420px;overflow:auto'>"
                f"{highlight_cuda(g.cuda)}</div><p>{html.escape(_launch_text(g.launch))}</p>")
            self._ask_ptxas(cand, g)
        self._show(key)

    def _show(self, key) -> None:
        """The code of candidate `key` with its ptxas line, or a line saying
        ptxas is at work (under a lock: the thread that brings the line and
        a click must not leave the older text on show)."""
        with self._show_lock:
            if key != self._digest or key not in self._code:
                return
            line = self._facts.get(key, "ptxas: compiling for registers, spills and "
                                        "occupancy … (seconds for long unrolled code)")
            value = f"{self._code[key]}<p>{html.escape(line)}</p>"
            if self.code_html.value != value:
                self.code_html.value = value

    def _ask_ptxas(self, cand, g) -> None:
        """ptxas's line for this candidate, in a thread of its own: nvcc takes
        0.5 s to over a minute on the unrolled code of random candidates, and
        the explorer answers clicks meanwhile."""
        key = cand.digest()
        if key in self._facts or key in self._compiling:
            return

        def work():
            self._resources(cand, g)  # fills self._facts[key]
            self._compiling.pop(key, None)
            self._show(key)
        t = threading.Thread(target=work, daemon=True, name="ptxas-facts")
        self._compiling[key] = t
        t.start()

    def wait_facts(self, timeout: float | None = None) -> bool:
        """Wait for the ptxas line of the candidate on show; whether it came."""
        t = self._compiling.get(self._digest)
        if t is not None:
            t.join(timeout)
        return self._digest in self._facts

    def _say(self, label: str | None = None, text: str | None = None) -> None:
        """Set the line of one button (Run, Check, Reference), keep the others."""
        if label is not None:
            self._lines[label] = text
        self.run_out.value = "".join(
            f"<div><b>{k}</b>: {self._lines[k]}</div>"
            for k in ("Run", "Check", "Reference") if k in self._lines)

    def _resources(self, cand, g) -> str:
        """ptxas's registers, spills, shared and local memory and the
        occupancy they allow (issue 21), once per candidate."""
        key = cand.digest()
        if key not in self._facts:
            from workbench.codegen.compile import CompileError, nvcc_path, resources
            if nvcc_path() is None:
                self._facts[key] = "ptxas: nvcc is not on PATH (registers and spills need it)"
            else:
                try:
                    r = resources(g, cand.kernel.target.name)
                    o = r["occupancy"]
                    self._facts[key] = (
                        f"ptxas ({r['arch']}): {r['registers']} registers, spills "
                        f"{r['spill_stores']}/{r['spill_loads']} bytes (stores/loads), "
                        f"{r['shared_bytes']} B static shared, {r['local_bytes']} B local; "
                        f"on {o['target']}: {o['blocks_per_sm']} blocks per SM "
                        f"({100 * (o['occupancy'] or 0):.0f} % occupancy, limited by "
                        f"{o['limited_by']})")
                except CompileError as exc:
                    self._facts[key] = f"ptxas: {str(exc)[-300:]}"
        return self._facts[key]

    def show(self) -> None:
        pass

    def _evaluate(self, label: str, samples: int) -> dict | None:
        from workbench.runtime import evaluate
        self.refresh()  # the lines belong to the current candidate
        cand = self.session.cand
        if not cand.is_fixed:
            self._say(label, "fix every choice first")
            return None
        self._say(label, f"<i>computing: compiling and running on {self.backend} …</i>")
        return evaluate([cand], self.backend, store=self.session.store, samples=samples)[0]

    def run_current(self) -> dict | None:
        """Run: measure the fixed candidate (every sample into the store)."""
        from workbench.runtime import summary
        rec = self._evaluate("Run", samples=20)
        if rec is None:
            return None
        s = summary(rec)
        ref = (f", {html.escape(s['reference'])} {fmt_time(s['reference_median_ns'])}"
               if s.get("reference_median_ns") else "")
        self._say("Run", f"<b>{s['status']}</b> on {self.backend}: median "
                         f"{fmt_time(s['median_ns']) if s['median_ns'] else '—'} "
                         f"(bound {fmt_time(s['bound_ns'])}{ref}) "
                         f"{html.escape(s['message'][:200])}")
        self._ex.refresh()
        return rec

    def check_current(self) -> dict | None:
        """Check: the result against numpy (the fewest samples a record takes)."""
        rec = self._evaluate("Check", samples=1)
        if rec is None:
            return None
        if rec["status"] == "ok":
            self._say("Check", f"<b style='color:#080'>correct</b> on {self.backend}: "
                               f"normwise relative error {rec.get('x_max_error', 0):.3g} "
                               f"against numpy")
        else:
            self._say("Check", f"<b style='color:#b00'>{rec['status']}</b> on "
                               f"{self.backend}: {html.escape(rec['message'][:300])}")
        self._ex.refresh()
        return rec

    def run_reference(self) -> dict:
        """Reference: cuBLAS / numpy alone for the kernel's sizes, into the store."""
        from workbench.runtime import measure_reference
        self.refresh()  # the lines belong to the current candidate
        self._say("Reference", f"<i>computing: timing the reference library on "
                               f"{self.backend} …</i>")
        rec = measure_reference(self.session.root.problem.root_problem.kernel, self.backend,
                                store=self.session.store)
        self._say("Reference", f"<b>{html.escape(str(rec['reference']))}</b> on "
                               f"{self.backend}: median {fmt_time(rec['reference_median_ns'])}"
                               if rec["status"] == "reference" else
                               f"<b>{rec['status']}</b>: {html.escape(rec['message'])}")
        self._ex.refresh()
        return rec


HIGHLIGHT_LINES = 1000  # past this, plain text: colouring costs ~0.1 ms and ~0.5 kB a line


def highlight_cuda(code: str, max_lines: int = HIGHLIGHT_LINES) -> str:
    """CUDA as coloured HTML (Pygments, which IPython brings); plain without
    it, and for code longer than `max_lines` (random candidates unroll into
    thousands of lines: coloured, 4,400 lines took 0.5 s and 2.3 MB of HTML
    sent to the page on every visit)."""
    lines = code.count("\n") + 1
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import CudaLexer
    except ImportError:
        return f"<pre>{html.escape(code)}</pre>"
    if lines > max_lines:
        return (f"<p><i>{lines:,} lines, shown plain (coloured up to {max_lines:,})</i></p>"
                f"<pre>{html.escape(code)}</pre>")
    return highlight(code, CudaLexer(), HtmlFormatter(noclasses=True, nowrap=False))


def default_backend() -> str:
    """"cuda" where CuPy sees a GPU, else "cpu"."""
    from workbench.runtime.cuda import CudaBackend
    try:
        return "cuda" if CudaBackend().device != "none" else "cpu"
    except Exception:  # noqa: BLE001 - no CuPy, a broken driver: the CPU measures
        return "cpu"


__all__ = ["HIGHLIGHT_LINES", "CodePanel", "default_backend", "highlight_cuda"]
