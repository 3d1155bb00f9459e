"""The Bound and Path tabs of the explorer: the current bound with its
sentence and justification tree, and each decision of the branch with the
bound after it (a button jumps back to that step)."""

from __future__ import annotations

import html

from workbench.model.justification import fmt_time
from workbench.names import decision_label


class BoundPanel:
    """The bound's value, target, one sentence and the justification tree."""

    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex
        self.widget = self.html = w.HTML()

    def refresh(self) -> None:
        self.html.value = bound_html(self._ex.session.bound())

    def show(self) -> None:
        pass


def bound_html(b) -> str:
    """The bound's value and target once, then its justification tree
    without the root: the root's sentence is the first term's ("lower bound
    X on T: <the first term's sentence>"), so the header, the root and the
    first term said the same sentence three times."""
    j = b.justification
    head = f"<p><b>lower bound {fmt_time(b.value_ns, 4)}</b> on {html.escape(b.target)}"
    if not j.children:
        return f"{head}: {html.escape(j.text)}</p>"
    terms = "".join(f"<li>{_node_html(c)}</li>" for c in j.children)
    return (f"{head}, set by the first term below (the terms it beat follow):</p>"
            f"<ul style='padding-left:1.2em'>{terms}</ul>")


def _node_html(j, depth: int = 0) -> str:
    """A justification node as `Justification.to_html` draws it, with only
    the top terms open: the levels below (where the binding sentence comes
    again for each level that holds it) unfold on a click."""
    body = (f"<b>{html.escape(j.kind)}</b> {html.escape(j.text)} "
            f"<span style='color:#555'>[{fmt_time(j.value_ns)}]</span>")
    if not j.children:
        return body
    inner = "".join(f"<li>{_node_html(c, depth + 1)}</li>" for c in j.children)
    return (f"<details{' open' if depth == 0 else ''}><summary>{body}</summary>"
            f"<ul>{inner}</ul></details>")


class PathPanel:
    """A row per step of the branch: jump button, decision, bound after it
    (raised bounds in red). Rows are kept and re-labelled, never rebuilt."""

    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex
        self._rows: list = []
        self.widget = self.box = w.VBox()

    def refresh(self) -> None:
        import ipywidgets as w
        session = self._ex.session
        steps = session.path_bounds()
        while len(self._rows) < len(steps):
            k = len(self._rows)
            btn = w.Button(description=f"{k}", layout=w.Layout(width="48px"),
                           tooltip=f"back to the candidate after step {k}")
            btn.on_click(lambda _, k=k: self._ex.do(self._ex.session.jump, k))
            self._rows.append(w.HBox([btn, w.HTML()]))
        prev = None
        for (step, d, ns), row in zip(steps, self._rows):
            what = "root" if d is None else decision_label(session.branch.history[step], d)
            raised = "" if prev is None or ns <= prev else \
                f" <span style='color:#b00'>+{fmt_time(ns - prev)}</span>"
            text = f"{html.escape(what)} → {fmt_time(ns, 4)}{raised}"
            btn, label = row.children
            if label.value != text:
                label.value = text
            style = "info" if step == session.branch.pos else ""
            if btn.button_style != style:
                btn.button_style = style
            prev = ns
        children = tuple(self._rows[:len(steps)])
        if self.box.children != children:
            self.box.children = children

    def show(self) -> None:
        pass


__all__ = ["BoundPanel", "PathPanel", "bound_html"]
