"""The choices panel's rows: one listed choice with a button per remaining
value, labelled with the bound of its child once the look-ahead has it.
Rows and buttons are reused for whatever choice they show next — creating
widgets costs the page far more than changing their text."""

from __future__ import annotations

import html
import threading
import time

from workbench.errors import WorkbenchError
from workbench.model.justification import fmt_time
from workbench.model.lookahead import Stopped


def _w():
    import ipywidgets
    return ipywidgets


class ValueRow:
    """One listed choice: its name and a button per remaining value. The
    widgets are reused for whatever choice the row shows next."""

    def __init__(self, force):
        w = _w()
        self._force = force
        self.name = w.HTML(layout=w.Layout(width="180px", flex="0 0 auto"))
        self.buttons: list = []
        self.box = w.HBox([self.name], layout=w.Layout(flex_flow="row wrap"))
        self.choice = None

    def _click(self, btn) -> None:
        ch = self.choice
        if ch is not None:
            self._force(ch.name, ch.objects, btn._wb_value)

    def show(self, ch, opts=None) -> None:
        w = _w()
        self.choice = ch
        text = f"<code>{html.escape(ch.name)}({html.escape(', '.join(ch.objects))})</code>"
        if self.name.value != text:
            self.name.value = text
        while len(self.buttons) < len(ch.values):
            b = w.Button(layout=w.Layout(width="auto"))
            b.on_click(self._click)
            self.buttons.append(b)
        by_value = {o.value: o for o in opts or ()}
        for b, v in zip(self.buttons, ch.values):
            b._wb_value = v
            _set(b, _look(v, by_value.get(v)))
        children = (self.name, *self.buttons[:len(ch.values)])
        if self.box.children != children:
            self.box.children = children
        if self.box.layout.display is not None:
            self.box.layout.display = None

    def hide(self) -> None:
        self.choice = None
        self.box.layout.display = "none"

    def buttons_for(self, ch) -> dict:
        return dict(zip(ch.values, self.buttons))


def _look(value: str, o) -> dict:
    """A value button's text, colour and tooltip, from its Option (None:
    look-ahead not computed yet)."""
    if o is None:
        return {"description": value, "button_style": "", "disabled": False,
                "tooltip": "force this value (child bound: computing)"}
    if o.bound_ns is None:
        return {"description": value, "button_style": "danger", "disabled": True,
                "tooltip": o.dead_end or "dead end"}
    if o.status == "dead":
        return {"description": f"✗ {value}", "button_style": "danger", "disabled": True,
                "tooltip": "no implementation below: its subtree was searched exhaustively"}
    mark = "✓ " if o.status == "proven" else ""
    tip = ("proven: an implementation below it is known (it cannot get you stuck)"
           if o.status == "proven" else
           "open: not proven yet — propagation alone allows it, but it may get you stuck")
    if o.above_best:
        tip += "; its bound reaches the best measured time"
    style = "warning" if o.above_best else "success" if o.status == "proven" else ""
    return {"description": f"{mark}{value} · {fmt_time(o.bound_ns)}", "button_style": style,
            "disabled": False, "tooltip": tip}


def _set(widget, attrs: dict) -> None:
    """Change only what differs, in one message to the page."""
    changed = {k: v for k, v in attrs.items() if getattr(widget, k) != v}
    if changed:
        with widget.hold_sync():
            for k, v in changed.items():
                setattr(widget, k, v)


def label_buttons(buttons: dict, opts) -> None:
    """Put each option's child bound and marks on its button."""
    for o in opts:
        b = buttons.get(o.value)
        if b is not None:
            _set(b, _look(o.value, o))



class ChoicesPanel:
    """The left column: a filter, "most discriminating first", and a
    `ValueRow` per listed open choice (at most `max_choices`), whose buttons
    the look-ahead labels with their child's bound: "background" after the
    click has updated every other panel (a click stays fast on big kernels),
    "sync" before returning, "off" never."""

    prove_s = 0.3  # seconds per value spent looking for a witness of its child
    witness_s = 30.0  # for the current candidate's (lowerings cost seconds cold)
    last_proof_ms = 0.0

    def __init__(self, ex, max_choices: int, lookahead: str, on_change):
        """`ex`: the explorer (its session, and `force` for a click);
        `on_change()`: the filter or the ranking changed."""
        if lookahead not in ("background", "sync", "off"):
            raise WorkbenchError(f"lookahead must be background, sync or off, not {lookahead!r}")
        w = _w()
        self._ex = ex
        self.max_choices = max_choices
        self.lookahead = lookahead
        self.gen = 0  # bumped by every refresh and click: a stale look-ahead stops
        self._worker: threading.Thread | None = None
        self.last_lookahead_ms = 0.0
        self.filter = w.Text(placeholder="filter: choice or object",
                             layout=w.Layout(width="260px"))
        self.filter.observe(lambda _: on_change(), names="value")
        self.hint = w.Checkbox(description="most discriminating first", value=False)
        self.hint.observe(lambda _: on_change(), names="value")
        self.box = w.VBox()
        self.box.add_class("wb-choices")  # for the browser test
        self._rows: list = []
        self._more = w.HTML()
        self.widget = w.VBox([w.HBox([self.filter, self.hint]), self.box],
                             layout=w.Layout(width="46%"))

    def listed(self, chs: list) -> list:
        """The open choices `chs` on show: filtered, ranked when asked, cut."""
        session = self._ex.session
        f = self.filter.value.strip().lower()
        if f:
            chs = [c for c in chs if f in c.name.lower() or any(f in o.lower() for o in c.objects)]
        if self.hint.value and chs:
            from workbench.model.lookahead import rank_choices
            try:
                rank = {(r.choice, r.objects): k for k, r in
                        enumerate(rank_choices(session.cand, session.target,
                                               parent=session.bound()))}
            except WorkbenchError:
                rank = {}
            chs.sort(key=lambda c: rank.get((c.name, c.objects), len(rank)))
        return chs[:self.max_choices]

    def refresh(self, cand) -> tuple:
        """Rows for the listed choices of `cand`, labelled from the
        look-ahead cache; (generation, candidate, (choice, buttons) still to
        label) for `start_lookahead`. Rows and buttons are kept and
        re-labelled, never rebuilt: creating widgets costs the browser far
        more than changing their text."""
        self.gen += 1
        open_choices = cand.choices()
        listed = self.listed(open_choices)
        while len(self._rows) < len(listed):
            self._rows.append(ValueRow(self._ex.force))
        pending = []
        for row, ch in zip(self._rows, listed):
            opts = self._ex.session.cached_options(ch.name, ch.objects, cand)
            row.show(ch, opts)
            if opts is None:
                pending.append((ch, row.buttons_for(ch)))
        for row in self._rows[len(listed):]:
            row.hide()
        more = len(open_choices) - len(listed)
        self._more.value = f"<i>{more} more open choices (filter to see them)</i>" \
            if more > 0 else ""
        children = (*[r.box for r in self._rows], self._more)
        if self.box.children != children:
            self.box.children = children
        return self.gen, cand, pending

    def start_lookahead(self, gen: int, cand, pending: list) -> None:
        if not pending or self.lookahead == "off":
            return
        if self.lookahead == "sync":
            self.fill(gen, cand, pending)
        else:
            self._worker = threading.Thread(target=self.fill, args=(gen, cand, pending),
                                            daemon=True, name="explorer-lookahead")
            self._worker.start()

    def fill(self, gen: int, cand, pending: list) -> None:
        """Each listed value's child bound; stops as soon as a newer refresh
        (another click) has made this candidate stale."""
        t0 = time.perf_counter()
        session = self._ex.session
        stuck = None
        # first every child's bound (and what known witnesses prove), then
        # a witness of this candidate and of each value's child, time-boxed
        for prove_s in (0.0, self.prove_s):
            if prove_s:
                session.witness(cand, budget_s=self.witness_s, stop=lambda: gen != self.gen)
            for ch, buttons in pending:
                if gen != self.gen:
                    return
                try:
                    opts = session.options(ch.name, ch.objects, cand, prove_s=prove_s,
                                           stop=lambda: gen != self.gen)
                except Stopped:
                    return
                except WorkbenchError as exc:
                    for b in buttons.values():
                        b.tooltip = f"no look-ahead: {exc}"
                    continue
                label_buttons(buttons, opts)
                if stuck is None and opts and all(o.status == "dead" for o in opts):
                    stuck = ch
            if not prove_s:
                self.last_lookahead_ms = (time.perf_counter() - t0) * 1e3
        self.last_proof_ms = (time.perf_counter() - t0) * 1e3
        if stuck is not None and gen == self.gen:
            self._ex.show_stuck(stuck)

    def wait_lookahead(self, timeout: float | None = None) -> None:
        """Block until the background look-ahead of the last refresh is done."""
        if self._worker is not None:
            self._worker.join(timeout)


__all__ = ["ChoicesPanel", "ValueRow", "label_buttons"]
