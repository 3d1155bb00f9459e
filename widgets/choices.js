function render({ model, el }) {
  el.classList.add('wb-choices');
  el.tabIndex = 0;
  // JupyterLab's shortcuts (d,d deletes a cell!) must not see our keys
  el.setAttribute('data-lm-suppress-shortcuts', 'true');
  let focus = { row: 0, val: 0 };
  const rows = () => model.get('rows');
  const send = (m) => model.send(m);
  const force = (r, v) => send({ kind: 'force', key: r.key, value: v.v, gen: model.get('gen') });
  // an element of class `cls` with `text` appended to `parent`
  const add = (parent, tag, cls, text) => {
    const e = document.createElement(tag);
    e.className = cls;
    if (text !== undefined) e.textContent = text;
    parent.appendChild(e);
    return e;
  };
  function draw() {
    const list = rows();
    const frag = document.createDocumentFragment();
    const note = model.get('note');
    if (note) add(frag, 'div', 'wb-note').innerHTML = note;
    let group = null;
    focus.row = Math.min(focus.row, Math.max(list.length - 1, 0));
    list.forEach((r, i) => {
      if (r.group !== group) {
        group = r.group;
        add(frag, 'div', 'wb-group', group);
      }
      const row = add(frag, 'div', 'wb-row' + (i === focus.row ? ' wb-focus' : ''));
      row.dataset.key = r.key;
      add(row, 'span', 'wb-name', r.label).title = r.raw;
      r.values.forEach((v, j) => {
        const here = i === focus.row && j === focus.val;
        const b = add(row, 'button', 'wb-value wb-' + v.style + (here ? ' wb-vfocus' : ''),
                      v.text);
        b.title = v.tip;
        b.disabled = v.disabled;
        b.onclick = () => {
          focus = { row: i, val: j };
          b.classList.add('wb-clicked');
          force(r, v);
        };
      });
    });
    const more = model.get('more');
    if (more) add(frag, 'div', 'wb-more', more);
    el.replaceChildren(frag);
    el.dataset.gen = model.get('gen');
    el.dataset.labelled = model.get('labelled');
  }
  const ctrl = (e) => e.ctrlKey || e.metaKey;
  const moveRow = (d) => {
    const n = rows().length;
    focus = { row: Math.max(0, Math.min(focus.row + d, n - 1)), val: 0 };
    draw();
  };
  const moveVal = (d) => {
    const r = rows()[focus.row];
    const n = r ? r.values.length : 1;
    focus.val = Math.max(0, Math.min(focus.val + d, n - 1));
    draw();
  };
  const forceFocused = () => {
    const r = rows()[focus.row];
    const v = r && r.values[focus.val];
    if (v && !v.disabled) force(r, v);
  };
  el.addEventListener('keydown', (e) => {
    const k = e.key;
    const undo = k === 'u' || (k === 'z' && ctrl(e) && !e.shiftKey);
    const redo = k === 'r' || (k === 'y' && ctrl(e)) || (k === 'Z' && ctrl(e));
    if (undo) send({ kind: 'undo' });
    else if (redo) send({ kind: 'redo' });
    else if (k === 'ArrowDown' || k === 'j') moveRow(1);
    else if (k === 'ArrowUp' || k === 'k') moveRow(-1);
    else if (k === 'ArrowRight' || k === 'l') moveVal(1);
    else if (k === 'ArrowLeft' || k === 'h') moveVal(-1);
    else if (k === 'Enter') forceFocused();
    else return;
    e.preventDefault();
    e.stopPropagation();
  });
  // rows and note arrive in one message: draw once for both
  let queued = false;
  const redraw = () => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => { queued = false; draw(); });
  };
  model.on('change:rows', redraw);
  model.on('change:note', redraw);
  draw();
  return followTabs(el);
}

// Plotly's `responsive` figures resize on a window resize only; a tab shown
// (a figure drawn while hidden is 700 px wide) or a narrowed column is not one.
// So: when a tab panel of this explorer changes width, one window resize event.
function followTabs(el) {
  let ex = null, timer = null, poll = null;
  const widths = new WeakMap();
  const ro = new ResizeObserver((entries) => {
    let moved = false;
    for (const e of entries) {
      const w = Math.round(e.contentRect.width);
      if (widths.get(e.target) !== w) { widths.set(e.target, w); moved = true; }
    }
    if (!moved) return;
    clearTimeout(timer);
    timer = setTimeout(() => window.dispatchEvent(new Event('resize')), 120);
  });
  // the tab panels render after this column: look for them a while
  const look = (n) => {
    ex = ex || el.closest('.wb-explorer');
    if (ex) {
      for (const p of ex.querySelectorAll('.widget-tab-contents > *')) {
        if (!widths.has(p)) { widths.set(p, -1); ro.observe(p); }
      }
    }
    if (n > 0) poll = setTimeout(() => look(n - 1), 1000);
  };
  look(30);
  return () => { clearTimeout(poll); clearTimeout(timer); ro.disconnect(); };
}
export default { render };
