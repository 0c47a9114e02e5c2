// Tables are data first: {columns: [{key, label, kind}], rows: [{key: value}]}
// rendered generically, so Markdown / CSV export (issue 5) reads the same rows.
import { h } from './dom.js';
import { format } from './format.js';
import { tableToolbar } from './export.js';

export function renderTable(spec) {
  const { caption, columns, rows, id } = spec;
  const table = h('table', { class: 'data', id: id ? 'table-' + id : null, 'data-table': id || null });
  if (caption) table.append(h('caption', null, caption));
  table.append(h('thead', null, h('tr', null, columns.map((c) => h('th', { scope: 'col', class: c.kind === 'text' ? null : 'num' }, c.label)))));
  const tbody = h('tbody');
  for (const r of rows) {
    tbody.append(h('tr', { class: r._class || null },
      columns.map((c, i) => {
        const v = r[c.key];
        const text = c.kind === 'text' || c.kind === undefined ? (v ?? '') : format(c.kind, v);
        return i === 0 ? h('th', { scope: 'row' }, text) : h('td', { class: c.kind === 'text' ? null : 'num', 'data-value': typeof v === 'number' ? String(v) : null }, text);
      })));
  }
  table.append(tbody);
  const wrap = h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': caption || '' }, table);
  // Copy as Markdown / Download CSV read this same spec (export.js).
  return id ? h('div', { class: 'table-block' }, wrap, tableToolbar(spec)) : wrap;
}

// Plain-text cell values exactly as displayed, for export.
export function tableText(spec) {
  return spec.rows.map((r) => spec.columns.map((c) => (c.kind === 'text' || c.kind === undefined ? String(r[c.key] ?? '') : format(c.kind, r[c.key]))));
}
