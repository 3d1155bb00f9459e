"""Why the explorer is stuck: the explanation of a choice left without a
value, or of a decision that dead-ends (`Session.explain`), with a button
per culprit that drops it and keeps every other decision, each coloured by
where dropping it leads (`explain.ways_out`). It runs in a thread of its
own, so the kernel answers clicks meanwhile; a click's refresh (`clear`)
makes it stale."""

from __future__ import annotations

import html
import threading

from workbench.errors import WorkbenchError
from workbench.explain import describe
from workbench.model.lookahead import Stopped
from workbench.witness import DEAD, OPEN, PROVEN


class WhyPanel:
    """The explorer's explanation panel (`box`, under the status line)."""

    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex
        self.box = w.VBox()
        self._explaining: threading.Thread | None = None  # show's, while it runs
        self._lock = threading.Lock()
        self._gen = 0  # bumped by each refresh and explanation: what is still current
        self.explanation = None  # the last one drawn
        self.ways_out: tuple = ()  # what dropping each of its culprits leads to, once known

    def clear(self) -> None:
        """The candidate changed: an explanation under way or on show is stale."""
        with self._lock:
            self._gen += 1
            if self.box.children:
                self.box.children = ()

    def show(self, ch=None, decision=None, gen: int | None = None) -> None:
        """A listed choice `ch` has no live value left, or `decision`
        dead-ended: say which earlier decisions cause it (`Session.explain`),
        each with a button that removes it and keeps every other decision.
        Explaining takes seconds (tens of checks of subsets of the trail), so
        it runs in a thread of its own (in the caller with the "sync"
        look-ahead): the kernel answers clicks meanwhile, and a click (a
        refresh) or a newer explanation stops it — its result would be about
        a candidate no longer on show. `gen`: the look-ahead generation that
        found `ch` stuck (nothing is done when a newer one has begun). The
        same thread then colours each drop button by where dropping its
        culprit leads (`Session.explainer`'s ways out)."""
        what = "stuck" if decision is None else "dead end"
        choice = None if ch is None else (ch.name, ch.objects)
        try:  # the candidate as it is now, read here (this may be the reader thread)
            cand, explain, ways = self._ex.session.explainer(choice=choice, decision=decision)
        except Stopped:
            return
        with self._lock:
            if gen is not None and gen != self._ex.choices.gen or not self._on_show(cand):
                return
            self._gen += 1
            mine = self._gen
            self.box.children = (_html(f"<div style='background:#fff3f3;padding:4px'><b>"
                                           f"{what}:</b> <i>finding the earlier decisions that "
                                           "cause it…</i></div>"),)
        stale = lambda: self._gen != mine or not self._on_show(cand)  # noqa: E731

        def work() -> None:
            try:
                ex = explain(stale)
            except Stopped:
                return
            except Exception as exc:  # noqa: BLE001 - said in the panel, not lost in a thread
                text = str(exc) if isinstance(exc, WorkbenchError) else \
                    f"the explanation failed: {type(exc).__name__}: {exc}"
                with self._lock:
                    if not stale():
                        self.box.children = (_html(f"<i>{html.escape(text)}</i>"),)
                return
            with self._lock:  # a click's refresh clears the panel under it
                if stale():
                    return
                self._draw(ex, what, cand)
            if not ex.verified:
                return
            try:  # then whether each drop leads somewhere: the rest may hold another conflict
                outs = ways(ex, stale)
            except Exception:  # noqa: BLE001 - Stopped, or a failed search: the buttons stay plain
                return
            with self._lock:
                if not stale():
                    self._mark(outs)

        if self._ex.choices.lookahead == "sync":
            work()
            return
        self._explaining = threading.Thread(target=work, name="explain", daemon=True)
        self._explaining.start()

    def _on_show(self, cand) -> bool:
        """Whether `cand` is the current candidate (read from any thread: a
        `drop` may be between its two writes of the branch)."""
        b = self._ex.session.branch
        try:
            return b.history[b.pos] is cand
        except IndexError:
            return False

    def _draw(self, ex, what: str, cand) -> None:
        import ipywidgets as w
        trail = list(cand.trail)
        drops = []
        for k, d in enumerate(ex.culprits, 1):
            step = trail.index(d) + 1
            num = f"({k}) " if ex.by_value else ""  # the numbers the text's values refer to
            b = w.Button(description=f"drop {num}{describe(d, cand)}",
                         layout=w.Layout(width="auto"),
                         tooltip=f"re-apply every decision but number {step}")
            # a click queued after the panel moved on must not drop another step
            b.on_click(lambda _, step=step: self._on_show(cand)
                       and self._ex.do(self._ex.session.drop, step))
            drops.append(b)
        # one line per value (its own culprits, then the constraint it fails on)
        lines = "".join(f"<li>{html.escape(x)}</li>" for x in ex.lines)
        head = w.HTML(f"<div style='background:#fff3f3;padding:4px'><b>{what}:</b> "
                      f"{html.escape(ex.head)}<ul style='margin:2px 0'>{lines}</ul></div>")
        self.explanation, self.ways_out = ex, ()
        self.box.children = (head, w.HBox(drops, layout=w.Layout(flex_flow="row wrap")))

    _WAY_STYLE = {PROVEN: ("success", "✓ "), DEAD: ("danger", "✗ "), OPEN: ("", "")}

    def _mark(self, outs) -> None:
        """Each drop button says what dropping its culprit leads to
        (`explain.ways_out`): green ✓ an implementation (a witness), red ✗
        none — another conflict remains, the decision tried still fails, or
        the other decisions no longer replay —, plain when not settled."""
        buttons = self.box.children[1].children
        for b, way in zip(buttons, outs):
            style, mark = self._WAY_STYLE[way.status]
            b.button_style, b.description = style, mark + b.description
            b.tooltip = f"{b.tooltip}: {way.why}"
        self.ways_out = tuple(outs)
        if any(way.status != OPEN for way in outs):
            tried = self.explanation.decision is not None
            self.box.children += (_html(
                "<small>✓ dropping it leads to an implementation"
                f"{' with the decision tried' if tried else ''} (a witness found); ✗ it does "
                f"not: {'the decision tried still fails or ' if tried else ''}another conflict "
                "remains, or the other decisions no longer replay (hover for which)</small>"),)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the explanation `show` started is done (drawn
        with its drop buttons coloured, or dropped as stale); False on
        timeout."""
        t = self._explaining
        if t is not None:
            t.join(timeout)
            return not t.is_alive()
        return True


def _html(text: str):
    import ipywidgets as w
    return w.HTML(text)


__all__ = ["WhyPanel"]
