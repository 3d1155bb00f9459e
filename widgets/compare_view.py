"""The Compare tab of the explorer: two branches side by side (issue 22) —
the decisions where their current candidates differ, their bounds and best
measured times, and the difference in the generated CUDA, added and removed
lines coloured. Views only: the numbers are `workbench.compare.compare`'s."""

from __future__ import annotations

import html

from workbench.compare import Comparison, compare
from workbench.errors import InvalidDecision
from workbench.model.justification import fmt_time
from workbench.names import choice_label, plural

ONE_BRANCH = ("<p><i>Only one branch so far.</i> Press <b>Branch</b> (above) to start "
              "another from the current candidate, take other decisions on it, and the "
              "two compare here.</p>")

_LINE_STYLE = {"+": "background:#e6ffec;color:#116329",
               "-": "background:#ffebe9;color:#a40e26",
               "@": "background:#ddf4ff;color:#0550ae"}


class ComparePanel:
    def __init__(self, ex):
        import ipywidgets as w
        self._ex = ex  # the explorer: its session
        self._cuda: dict = {}  # candidate digest -> its CUDA (generated once)
        self._picked = False  # the user chose the branches (else: current vs previous)
        self._setting = False  # options being set: not a pick
        self.comparison: Comparison | None = None
        self.a_pick = w.Dropdown(description="compare", layout=w.Layout(width="230px"))
        self.b_pick = w.Dropdown(description="with", layout=w.Layout(width="230px"))
        for d in (self.a_pick, self.b_pick):
            d.observe(self._on_pick, names="value")
        self.picks = w.HBox([self.a_pick, self.b_pick])
        self.message = w.HTML()
        self.table = w.HTML()
        self.code_html = w.HTML()
        self.widget = w.VBox([self.picks, self.message, self.table, self.code_html])

    @property
    def session(self):
        return self._ex.session

    # -------------------------------------------------------------- picks
    def _defaults(self) -> tuple[int, int]:
        cur = self.session.current
        return cur, (cur - 1 if cur > 0 else 1)

    def refresh(self) -> None:
        """Cheap: the branch lists follow the session (no comparison here)."""
        branches = self.session.branches
        options = [(f"{i}: {b.name}", i) for i, b in enumerate(branches)]
        if len(branches) < 2:
            self.picks.layout.display = "none"
            self.message.value = ONE_BRANCH
            self.table.value = self.code_html.value = ""
            self.comparison = None
            return
        self.picks.layout.display = None
        a, b = self.a_pick.value, self.b_pick.value
        if not self._picked or a is None or b is None or max(a, b) >= len(branches):
            a, b = self._defaults()
        self._setting = True
        try:
            for d, v in ((self.a_pick, a), (self.b_pick, b)):
                if list(d.options) != options:
                    d.options = options
                d.value = v
        finally:
            self._setting = False

    def _on_pick(self, _change) -> None:
        if self._setting:
            return
        self._picked = True
        self.show()

    def pick(self, a: int, b: int) -> Comparison | None:
        """Compare branches `a` and `b` (as the dropdowns do)."""
        self.refresh()
        self._setting = True
        try:
            self.a_pick.value, self.b_pick.value = a, b
        finally:
            self._setting = False
        self._picked = True
        return self.show()

    # --------------------------------------------------------------- draw
    def _code(self, cand) -> str:
        key = cand.digest()
        if key not in self._cuda:
            from workbench.codegen import generate
            self._cuda[key] = generate(cand).cuda
        return self._cuda[key]

    def show(self) -> Comparison | None:
        """Compare the picked branches and draw the result (the CUDA is
        generated once per candidate; bounds and records are cached by the
        session)."""
        self.refresh()
        if len(self.session.branches) < 2:
            return None
        a, b = self.a_pick.value, self.b_pick.value
        c = compare(self.session, a, b, cuda=self._code)
        if c == self.comparison:
            return c
        self.comparison = c
        na, nb = (html.escape(n) for n in c.names)
        if a == b:
            head = "<p><i>the same branch on both sides: choose another</i></p>"
        elif c.same:
            head = (f"<p><b>{na}</b> and <b>{nb}</b> are the same candidate "
                    f"({plural(c.common, 'decision')} in common).</p>")
        else:
            head = (f"<p><b>{na}</b> against <b>{nb}</b>: {plural(c.common, 'decision')} "
                    "in common, "
                    f"{len(c.differ)} differ, {len(c.only_a)} only in {na}, "
                    f"{len(c.only_b)} only in {nb}.</p>")
        self.message.value = head
        ca, cb = self.session.branches[a].cand, self.session.branches[b].cand
        self.table.value = decisions_html(c, ca, cb)
        self.code_html.value = (
            f"<p><b>code</b>: {html.escape(c.code_note)}</p>"
            + (f"<div style='max-height:420px;overflow:auto'>{diff_html(c.code_diff)}</div>"
               if c.code_diff else ""))
        return c


def _domain_text(cand, choice: str, objects) -> str:
    """The other side of a decision only one trail holds: the value that
    follows there, or the values left open."""
    try:
        dom = sorted(cand.domain(choice, objects),  # sizes by number: 2, 4, …, 128
                     key=lambda v: (not v.isdigit(), int(v) if v.isdigit() else 0, v))
    except InvalidDecision:
        return "—"
    if len(dom) == 1:
        return f"{dom[0]} <span style='color:#888'>(follows)</span>"
    return f"<span style='color:#888'>open {{{html.escape(', '.join(dom))}}}</span>"


def decisions_html(c: Comparison, ca, cb) -> str:
    """The differing decisions side by side, then bounds and measured times."""
    na, nb = (html.escape(n) for n in c.names)
    td = "<td style='padding:1px 8px'>"
    rows = []
    for choice, objects, va, vb in c.differ:
        rows.append(f"<tr>{td}{html.escape(choice_label(ca, choice, objects))}</td>"
                    f"{td}<b>{html.escape(va)}</b></td>{td}<b>{html.escape(vb)}</b></td></tr>")
    for d in c.only_a:
        rows.append(f"<tr>{td}{html.escape(choice_label(ca, d.choice, d.objects))}</td>"
                    f"{td}{html.escape('|'.join(d.values))}</td>"
                    f"{td}{_domain_text(cb, d.choice, d.objects)}</td></tr>")
    for d in c.only_b:
        rows.append(f"<tr>{td}{html.escape(choice_label(cb, d.choice, d.objects))}</td>"
                    f"{td}{_domain_text(ca, d.choice, d.objects)}</td>"
                    f"{td}{html.escape('|'.join(d.values))}</td></tr>")

    where = f" on {html.escape(c.target)}" if c.target else ""
    rows.append(f"<tr style='border-top:1px solid #ccc'>{td}<i>bound</i></td>"
                f"{td}{fmt_time(c.bounds[0])}</td>{td}{fmt_time(c.bounds[1])}</td></tr>")
    rows.append(f"<tr>{td}<i>best measured{where}</i></td>{td}{fmt_time(c.measured[0])}</td>"
                f"{td}{fmt_time(c.measured[1])}</td></tr>")
    return (f"<table style='font-size:12px;border-collapse:collapse'><tr><th>decision</th>"
            f"<th>{na}</th><th>{nb}</th></tr>{''.join(rows)}</table>")


def diff_html(diff: str) -> str:
    """A unified diff as HTML: added lines green, removed red, hunks blue."""
    out = []
    for line in diff.splitlines():
        style = ("font-weight:bold;color:#555" if line.startswith(("+++", "---"))
                 else _LINE_STYLE.get(line[:1], ""))
        out.append(f"<span style='{style}'>{html.escape(line) or ' '}</span>" if style
                   else html.escape(line))
    return ("<pre style='font-size:11px;line-height:1.3;margin:0'>" + "\n".join(out)
            + "</pre>")


__all__ = ["ComparePanel", "decisions_html", "diff_html"]
