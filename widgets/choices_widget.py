"""The choices column drawn in the page: one anywidget whose whole state —
every listed choice, grouped, with a button per remaining value — is one
`rows` message per refresh; a click or a key comes back as one event.

Dozens of ipywidgets buttons cost the browser a message per changed
attribute of each; here the page redraws the column from one JSON list.

Keys (focus the column by clicking it): ↑/↓ move between choices, ←/→
between values, Enter forces the value under focus, u or Ctrl+Z undoes,
r or Ctrl+Y redoes.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

# a progress mark for any panel still computing (the explorer's page style too)
SPIN_CSS = """
.wb-spin { display: inline-block; width: 10px; height: 10px; border: 2px solid #bbb;
  border-top-color: #333; border-radius: 50%; animation: wb-spin 0.8s linear infinite;
  vertical-align: -1px; }
@keyframes wb-spin { to { transform: rotate(360deg); } }
"""

_CSS = SPIN_CSS + """
.wb-choices { font-size: 13px; outline: none; max-height: 640px; overflow-y: auto; }
.wb-choices:focus { box-shadow: 0 0 0 2px #9cf inset; }
.wb-choices .wb-group { font-weight: 600; color: #555; margin: 6px 0 2px;
  border-bottom: 1px solid #ddd; }
.wb-choices .wb-row { display: flex; flex-wrap: wrap; align-items: center; gap: 3px;
  padding: 2px 0 2px 4px; }
.wb-choices .wb-row.wb-focus { background: #eef6ff; }
.wb-choices .wb-name { flex: 0 0 210px; font-family: var(--jp-code-font-family, monospace);
  font-size: 12px; }
.wb-choices .wb-value { border: 1px solid #bbb; border-radius: 3px; background: #f7f7f7;
  padding: 2px 6px; cursor: pointer; font-size: 12px; }
.wb-choices .wb-value:hover:not(:disabled) { border-color: #555; }
.wb-choices .wb-value.wb-vfocus { outline: 2px solid #39f; }
.wb-choices .wb-value.wb-clicked { opacity: 0.5; }
.wb-choices .wb-proven { background: #d9f2d9; border-color: #6b6; }
.wb-choices .wb-above { background: #fde5c8; border-color: #e90; }
.wb-choices .wb-dead { background: #f8d7d7; border-color: #d66; color: #900; cursor: default; }
.wb-choices .wb-pending { color: #777; font-style: italic; }
.wb-choices .wb-note { color: #555; margin: 2px 0 4px; }
.wb-choices .wb-more { color: #777; font-style: italic; margin-top: 4px; }
"""


class ChoicesView(anywidget.AnyWidget):
    """The rows and their buttons, drawn by the page. `rows`: a list of
    {key, label, raw, group, values: [{v, text, style, tip, disabled}]};
    `on_event(callback)` receives {kind: force|undo|redo, key, value}."""

    _esm = Path(__file__).with_name("choices.js")
    _css = _CSS
    rows = traitlets.List(traitlets.Dict()).tag(sync=True)
    note = traitlets.Unicode("").tag(sync=True)  # progress / why the list is empty
    more = traitlets.Unicode("").tag(sync=True)
    gen = traitlets.Int(0).tag(sync=True)
    labelled = traitlets.Bool(False).tag(sync=True)  # every value carries its bound

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._callbacks: list = []
        self.on_msg(self._on_msg)

    def on_event(self, callback) -> None:
        self._callbacks.append(callback)

    def _on_msg(self, _widget, content, _buffers) -> None:
        if isinstance(content, dict) and content.get("kind") in ("force", "undo", "redo"):
            self.event(content)

    def event(self, content: dict) -> None:
        """What the page sends; tests call it as a click would."""
        for cb in self._callbacks:
            cb(content)


__all__ = ["ChoicesView"]
