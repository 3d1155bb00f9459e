"""A kernel and sizes picker above an explorer: the first open shows a kernel
the CPU measures in about a second (matmul 256×256×32), the thesis sizes are
one menu away, and Open (re)builds the explorer below — loading the saved
state of that kernel and sizes when there is one.

Used by the explorer notebook (`notebooks/00_explorer.ipynb`) and the Voilà
demo (`make demo`).
"""

from __future__ import annotations

import html
from pathlib import Path

import workbench as wb


def pow2(lo: int, hi: int) -> list:
    """(label, value) for the powers of two from `lo` to `hi`."""
    return [(f"{v:,}" if v < 2 ** 14 else f"{v:,} (2^{v.bit_length() - 1})", v)
            for v in (2 ** e for e in range(lo.bit_length() - 1, hi.bit_length()))]


_MM = {"m": (256, pow2(16, 4096)), "n": (256, pow2(16, 4096)), "k": (32, pow2(8, 4096))}
_BATCHED = {"b": (64, pow2(1, 1024)), "m": (32, pow2(8, 1024)), "n": (32, pow2(8, 1024)),
            "k": (64, pow2(8, 1024))}
# kernel builder -> {size: (default, menu)}; the defaults measure on a CPU in
# about a second, the thesis sizes (matmul 1024³, axpy 2^26, …) are a menu away
KERNELS = {
    "matmul": _MM,
    "axpy": {"n": (2 ** 20, pow2(2 ** 10, 2 ** 26))},
    "strided_matmul": {**_MM, "stride": (32, pow2(1, 64))},
    "batched_matmul": _BATCHED,
    "reuse_matmul": _BATCHED,
}
TITLES = {"matmul": "matmul C = A·B", "axpy": "axpy z = αx + y",
          "strided_matmul": "strided matmul", "batched_matmul": "batched matmul",
          "reuse_matmul": "batched matmul, shared B"}


def state_path(kernel) -> Path:
    """Where the explorer saves its state for this kernel and sizes."""
    spec = kernel.spec()
    sizes = "x".join(str(v) for k, v in spec.items() if k != "builder")
    return wb.data_dir() / "explorer" / f"{spec['builder']}_{sizes}.json"


class KernelPicker:
    """Kernel and sizes menus, an Open button and the explorer below
    (`self.explorer`, `self.widget`). `store`: the explorer's record store;
    `autosave`: keep each kernel's decisions in `state_path(kernel)`;
    `on_open(explorer)`: called after each Open."""

    def __init__(self, kernel: str = "matmul", sizes: dict | None = None, *, store="default",
                 autosave: bool = True, on_open=None, **explorer_options):
        import ipywidgets as w
        if kernel not in KERNELS:
            raise wb.WorkbenchError(f"no kernel {kernel!r} in the picker: "
                                    f"one of {', '.join(KERNELS)}")
        self.store, self.autosave, self.on_open = store, autosave, on_open
        self.options = explorer_options
        self.kernel = w.Dropdown(options=[(TITLES[k], k) for k in KERNELS], value=kernel,
                                 description="kernel", layout=w.Layout(width="280px"))
        self.sizes = w.HBox()
        self.open_b = w.Button(description="Open", icon="folder-open", button_style="primary",
                               tooltip="(re)build the explorer on the picked kernel and sizes")
        self.note = w.HTML()
        self.holder = w.VBox()
        self.explorer = None
        self.menus: dict = {}
        self._size_menus(sizes or {})
        self.kernel.observe(lambda _: self._size_menus({}), names="value")
        self.open_b.on_click(lambda _: self.open())
        self.picker = w.HBox([self.kernel, self.sizes, self.open_b],
                             layout=w.Layout(flex_flow="row wrap", align_items="center"))
        self.picker.add_class("wb-picker")  # the menus, wherever a page places them
        self.widget = w.VBox([self.picker, self.note, self.holder])

    def _size_menus(self, given: dict) -> None:
        import ipywidgets as w
        menus = {}
        for name, (default, menu) in KERNELS[self.kernel.value].items():
            value = given.get(name, default)
            if value not in [v for _, v in menu]:
                menu = sorted({*menu, (f"{value:,}", value)}, key=lambda o: o[1])
            menus[name] = w.Dropdown(options=menu, value=value, description=name,
                                     layout=w.Layout(width="190px"),
                                     style={"description_width": "24px"})
        self.menus = menus
        self.sizes.children = tuple(menus.values())

    def open(self):
        """The explorer on the picked kernel and sizes (its saved state when
        autosaving and one exists, else its root candidate)."""
        name = self.kernel.value
        sizes = {k: m.value for k, m in self.menus.items()}
        label = f"{name}({', '.join(f'{k}={v:,}' for k, v in sizes.items())})"
        self.open_b.disabled = True
        self.note.value = (f"<i><span class='wb-spin'></span> building the root candidate of "
                           f"{html.escape(label)} …</i>")
        try:
            old, self.explorer = self.explorer, None
            if old is not None:  # its look-ahead worker stops
                old.close()
            kernel = getattr(wb.kernels, name)(**sizes)
            path = state_path(kernel) if self.autosave else None
            session, said = self._session(kernel, path)
            self.explorer = wb.explore(session, **self.options)
            self.holder.children = (self.explorer.widget,)
            self.note.value = (f"<span style='color:#a60'>{html.escape(said)}</span>"
                               if said else "")
        except wb.WorkbenchError as exc:  # a person reads the message, not a traceback
            self.note.value = (f"<span style='color:#b00'>could not open {html.escape(label)}: "
                               f"{html.escape(str(exc))}</span>")
        finally:
            self.open_b.disabled = False
        if self.on_open is not None and self.explorer is not None:
            self.on_open(self.explorer)
        return self.explorer

    def _session(self, kernel, path) -> tuple:
        """(the session to open on `kernel`, what the picker says of it): the
        state saved at `path` when there is one. One whose decisions replay
        to other domains (stronger propagation since) opens with them, said;
        one that no longer replays is moved aside, never deleted, and a fresh
        session starts at the root, saying where it went — or, where it
        cannot be moved, leaves it as it is and saves nothing over it."""
        def fresh(at):
            return wb.Session(wb.Candidate.root(kernel), path=at, store=self.store)
        if path is None or not path.exists():
            return fresh(path), ""
        try:
            session = wb.Session.load(path, store=self.store, strict=False)
        except wb.WorkbenchError as exc:
            aside = path.with_name(f"{path.name}.unreadable")
            n = 1
            while aside.exists():
                n += 1
                aside = path.with_name(f"{path.name}.unreadable{n}")
            try:
                path.replace(aside)
            except OSError as why:  # left where it is, and not written over
                return fresh(None), (f"the saved explorer state could not be opened ({exc}) "
                                     f"nor moved aside ({why.strerror or why}); this opens "
                                     "at the root and saves nothing")
            return fresh(path), (f"the saved explorer state could not be opened ({exc}); it "
                                 f"is kept as {aside.name}, and this opens at the root")
        return session, "; ".join(session.load_notes)

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)


def pick(kernel: str = "matmul", sizes: dict | None = None, **options) -> KernelPicker:
    """A `KernelPicker` opened on `kernel` and `sizes` (display it)."""
    p = KernelPicker(kernel, sizes, **options)
    p.open()
    return p


__all__ = ["KERNELS", "KernelPicker", "pick", "pow2", "state_path"]
