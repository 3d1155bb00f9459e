"""Domain table: every choice instance with its remaining values, the values
the last decision pruned struck through, and the constraint that pruned them."""

from __future__ import annotations

import html


def domain_table_html(cand, include_fixed: bool = True) -> str:
    pruned = {}
    for p in cand.pruned():
        pruned.setdefault((p.choice, p.objects), []).append(p)
    rows = []
    for ch in cand.choices(include_fixed=include_fixed):
        cut = pruned.get((ch.name, ch.objects), [])
        removed = [v for p in cut for v in p.removed]
        vals = " ".join(f"<b>{html.escape(v)}</b>" if len(ch.values) == 1 else html.escape(v)
                        for v in ch.values)
        if removed:
            vals += " " + " ".join(f"<s style='color:#b00'>{html.escape(v)}</s>" for v in removed)
        why = "<br>".join(html.escape(p.by) for p in cut)
        rows.append(f"<tr><td>{html.escape(ch.name)}</td><td>{html.escape(', '.join(ch.objects))}"
                    f"</td><td>{vals}</td><td style='font-size:85%'>{why}</td></tr>")
    return ("<table><thead><tr><th>choice</th><th>objects</th><th>domain</th>"
            "<th>pruned by (last decision)</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def show_domains(cand, include_fixed: bool = True):
    """An ipywidgets HTML view of `domain_table_html`."""
    import ipywidgets

    return ipywidgets.HTML(domain_table_html(cand, include_fixed))
