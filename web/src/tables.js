// Tables are data first: {columns: [{key, label, kind}], rows: [{key: value}]}
// rendered generically, so Markdown / CSV export (issue 5) reads the same rows.
import { h } from './dom.js';
import { format } from './format.js';
import { tableToolbar } from './export.js';
import { t } from './i18n.js';

// make: h (real nodes) or v (a tree for dom.js patchTree, as the results use).
export function renderTable(spec, make = h) {
  const { caption, columns, rows, id } = spec;
  const numeric = (c) => c.align === 'num' || (c.kind !== 'text' && c.kind !== undefined);
  const body = rows.map((r) => make('tr', { class: r._class || null, key: r[columns[0].key] },
    columns.map((c, i) => {
      const v = r[c.key];
      const text = c.kind === 'text' || c.kind === undefined ? (v ?? '') : format(c.kind, v);
      return i === 0 ? make('th', { scope: 'row' }, text) : make('td', { class: numeric(c) ? 'num' : null, 'data-value': typeof v === 'number' ? String(v) : null }, text);
    })));
  const table = make('table', { class: 'data', id: id ? 'table-' + id : null, 'data-table': id || null },
    caption ? make('caption', null, caption) : null,
    make('thead', null, make('tr', null, columns.map((c) => make('th', { scope: 'col', class: numeric(c) ? 'num' : null }, c.label)))),
    make('tbody', null, body));
  const wrap = make('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': caption || '' }, table);
  // Shown only while the table is wider than its box (markScrollable), so a phone
  // reader knows more columns are to the right.
  const hint = make('p', { class: 'scroll-hint muted', 'aria-hidden': 'true' }, t('table.scrollHint'));
  // Copy as Markdown / Download CSV read this same spec (export.js).
  return make('div', { class: 'table-block' }, hint, wrap, id ? (make === h ? tableToolbar(spec) : keptToolbar(spec)) : null);
}

// The results' tables (a tree, make = v) keep their toolbar from render to render rather
// than building and patching it on every slider step: its buttons read `live`, which
// takes each render's rows. A new one when the caption or the language changes its label.
const toolbars = new Map();
function keptToolbar(spec) {
  const key = `${spec.caption}\n${t('export.copyMarkdown')}`;
  let kept = toolbars.get(spec.id);
  if (!kept || kept.key !== key) {
    const live = { ...spec };
    kept = { key, live, node: tableToolbar(live) };
    kept.node.__kvbKept = true;
    toolbars.set(spec.id, kept);
  }
  Object.assign(kept.live, spec);
  // A failed copy's text box (export.js showManualCopy) held the old rows: a render took it away before too.
  while (kept.node.childElementCount > 2) kept.node.lastElementChild.remove();
  return kept.node;
}

// Flags every table that is wider than its box (and its scroll position). Measured in a
// ResizeObserver, which runs after layout: measuring right after a render would force a
// layout of the whole page in the middle of every slider step (16 ms of it, issue 13).
// The table is observed as well as its box: new rows widen it inside a box that keeps
// its size.
let observer = null;

// Reads every box first, then writes: a class toggled between two reads would make the
// second read lay the page out again (a forced style recalc on every slider step).
function measureScroll(wrap) {
  const over = wrap.scrollWidth > wrap.clientWidth + 1;
  return [wrap, over, wrap.scrollLeft + wrap.clientWidth >= wrap.scrollWidth - 1];
}

function markScroll([wrap, over, atEnd]) {
  wrap.__kvbOwnClasses = ['scrolls', 'at-end'];
  if (wrap.parentElement) wrap.parentElement.__kvbOwnClasses = ['scrolls'];
  wrap.classList.toggle('scrolls', over);
  wrap.classList.toggle('at-end', atEnd);
  wrap.parentElement?.classList.toggle('scrolls', over);
}

function updateScroll(wrap) {
  markScroll(measureScroll(wrap));
}

export function markScrollable(root) {
  observer ||= new ResizeObserver((entries) => {
    const wraps = new Set(entries.map((e) => e.target.closest('.table-wrap')).filter(Boolean));
    for (const m of [...wraps].map(measureScroll)) markScroll(m);
  });
  for (const wrap of root.querySelectorAll('.table-wrap')) {
    // A property, not an attribute: the next render's patch would take an attribute off.
    if (!wrap.__kvbScrollWatch) {
      wrap.__kvbScrollWatch = true;
      wrap.addEventListener('scroll', () => updateScroll(wrap), { passive: true });
      observer.observe(wrap);
    }
    const table = wrap.firstElementChild;
    if (table && wrap.__kvbObserved !== table) {
      if (wrap.__kvbObserved) observer.unobserve(wrap.__kvbObserved);
      wrap.__kvbObserved = table;
      observer.observe(table);
    }
  }
}

// Plain-text cell values exactly as displayed, for export.
export function tableText(spec) {
  return spec.rows.map((r) => spec.columns.map((c) => (c.kind === 'text' || c.kind === undefined ? String(r[c.key] ?? '') : format(c.kind, r[c.key]))));
}
