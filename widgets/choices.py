"""The choices panel's rows: one listed choice with a button per remaining
value, labelled with the bound of its child once the look-ahead has it.
Rows and buttons are reused for whatever choice they show next — creating
widgets costs the page far more than changing their text."""

from __future__ import annotations

import html

from workbench.model.justification import fmt_time


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
    return {"description": f"{value} · {fmt_time(o.bound_ns)}",
            "button_style": "warning" if o.above_best else "", "disabled": False,
            "tooltip": "bound ≥ best measured time" if o.above_best else "force this value"}


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


__all__ = ["ValueRow", "label_buttons"]
