function render({ model, el }) {
  el.classList.add('wb-choices');
  el.tabIndex = 0;
  // JupyterLab's shortcuts (d,d deletes a cell!) must not see our keys
  el.setAttribute('data-lm-suppress-shortcuts', 'true');
  let focus = { row: 0, val: 0 };
  const rows = () => model.get('rows');
  const send = (m) => model.send(m);
  function draw() {
    const list = rows();
    const frag = document.createDocumentFragment();
    const note = model.get('note');
    if (note) {
      const n = document.createElement('div');
      n.className = 'wb-note';
      n.innerHTML = note;
      frag.appendChild(n);
    }
    let group = null;
    focus.row = Math.min(focus.row, Math.max(list.length - 1, 0));
    list.forEach((r, i) => {
      if (r.group !== group) {
        group = r.group;
        const g = document.createElement('div');
        g.className = 'wb-group';
        g.textContent = group;
        frag.appendChild(g);
      }
      const row = document.createElement('div');
      row.className = 'wb-row' + (i === focus.row ? ' wb-focus' : '');
      row.dataset.key = r.key;
      const name = document.createElement('span');
      name.className = 'wb-name';
      name.textContent = r.label;
      name.title = r.raw;
      row.appendChild(name);
      r.values.forEach((v, j) => {
        const b = document.createElement('button');
        const here = i === focus.row && j === focus.val;
        b.className = 'wb-value wb-' + v.style + (here ? ' wb-vfocus' : '');
        b.textContent = v.text;
        b.title = v.tip;
        b.disabled = v.disabled;
        b.onclick = () => {
          focus = { row: i, val: j };
          b.classList.add('wb-clicked');
          send({ kind: 'force', key: r.key, value: v.v, gen: model.get('gen') });
        };
        row.appendChild(b);
      });
      frag.appendChild(row);
    });
    const more = model.get('more');
    if (more) {
      const m = document.createElement('div');
      m.className = 'wb-more';
      m.textContent = more;
      frag.appendChild(m);
    }
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
    if (v && !v.disabled) send({ kind: 'force', key: r.key, value: v.v, gen: model.get('gen') });
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
  model.on('change:rows', draw);
  model.on('change:note', draw);
  draw();
}
export default { render };
