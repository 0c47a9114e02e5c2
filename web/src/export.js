// Export (issue 5): every table as Markdown (clipboard) and CSV (download), every
// chart as PNG and SVG (drawn by chart-export.js, which comes with views.js: a chart's
// buttons are there before the chart is). Tables export from their data spec ({columns, rows}), the
// same object the page renders, never by scraping the DOM; Markdown shows the cells
// as the page does, CSV carries the core's raw numbers so spreadsheets can compute.
import { h } from './dom.js';
import { t } from './i18n.js';
import { format } from './format.js';

// Set by the page after each render: names downloaded files after the model.
export const exportContext = { model: '' };

// The line above an exported table saying what it is about ([[label, value]]: the model, the GPU, ...), so a
// table pasted into a post names them; the same pairs go into a CSV as columns.
export function aboutLine(pairs) {
  return pairs.map(([label, value]) => t('export.pair', { label, value })).join(' · ');
}

const isText = (c) => c.kind === 'text' || c.kind === undefined;

function cellText(c, v) {
  return isText(c) ? String(v ?? '') : format(c.kind, v);
}

function mdCell(s) {
  return String(s).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

// GitHub-flavoured Markdown; numeric columns right-aligned as on the page. A table
// whose numbers depend on settings the page shows elsewhere (spec.notes: the simulator's
// run) carries its caption and those settings above it.
export function tableMarkdown(spec) {
  const line = (cells) => '| ' + cells.map(mdCell).join(' | ') + ' |';
  const head = spec.notes?.length ? [spec.caption, ...spec.notes].filter(Boolean).map((n) => n + '\n') : [];
  const out = [line(spec.columns.map((c) => c.label)), '| ' + spec.columns.map((c) => (isText(c) ? ':--' : '--:')).join(' | ') + ' |'];
  for (const r of spec.rows) out.push(line(spec.columns.map((c) => cellText(c, r[c.key]))));
  return head.join('\n') + (head.length ? '\n' : '') + out.join('\n') + '\n';
}

function csvField(v) {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

// The unit of the raw number a column carries (the page may show it in another: a
// time per output token in ms, the CSV the core's seconds).
function csvHeader(c) {
  if (c.kind === 'bytes') return t('export.colBytes', { label: c.label });
  if (c.kind === 'percent' || c.kind === 'ratio') return t('export.colRatio', { label: c.label });
  if (c.kind === 'seconds' || c.kind === 'millis') return t('export.colSeconds', { label: c.label });
  return c.label;
}

// RFC 4180 (CRLF, quoted when needed). A BOM so Excel reads UTF-8 (Chinese labels).
// spec.context ([{label, value}]): settings the rows were computed with, as columns of
// the same value on every row, so the file says what it holds and runs stack up.
export function tableCsv(spec) {
  const context = spec.context || [];
  const rows = [[...spec.columns.map(csvHeader), ...context.map((c) => c.label)]];
  const raw = (v) => (typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '') : String(v ?? ''));
  for (const r of spec.rows) {
    rows.push([...spec.columns.map((c) => {
      const v = r[c.key];
      if (isText(c)) return String(v ?? '');
      return typeof v === 'number' && Number.isFinite(v) ? String(v) : '';
    }), ...context.map((c) => raw(c.value))]);
  }
  return '\uFEFF' + rows.map((r) => r.map(csvField).join(',')).join('\r\n') + '\r\n';
}

function slug(s) {
  return String(s || 'model').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 80) || 'model';
}

export function fileName(name, ext) {
  return `kvbudget-${slug(exportContext.model)}-${slug(name)}.${ext}`;
}

export function download(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// Clipboard API first; the older execCommand path covers embeds and browsers where
// the API is refused. Returns false when both fail so the caller can show the text.
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // fall through
  }
  const ta = h('textarea', { readonly: true, 'aria-hidden': 'true', style: 'position:fixed;top:0;left:-9999px;opacity:0' });
  ta.value = text;
  document.body.append(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}

export function flash(btn, key) {
  const original = btn.textContent;
  btn.textContent = t(key);
  btn.disabled = true;
  setTimeout(() => {
    btn.textContent = original;
    btn.disabled = false;
  }, 1200);
}

function toolButton(key, action, role) {
  // Through on(): a re-render that keeps this button gives it the new rows (dom.js).
  return h('button', { type: 'button', class: 'tool', 'data-export': role, onclick: function () {
    action(this);
  } }, t(key));
}

// Buttons under a table: the spec is captured, so export reads exactly these rows.
// spec.fileStem: the download's name when one table can hold several runs (the simulator's).
export function tableToolbar(spec) {
  const name = spec.id || 'table';
  return h('div', { class: 'export-tools no-print', role: 'group', 'aria-label': t('export.tableTools', { name: spec.caption || name }), 'data-export-for': name },
    toolButton('export.copyMarkdown', async (btn) => {
      const text = tableMarkdown(spec);
      if (await copyText(text)) flash(btn, 'export.copied');
      else showManualCopy(btn.parentElement, text);
    }, 'markdown'),
    toolButton('export.downloadCsv', () => download(fileName(spec.fileStem || name, 'csv'), new Blob([tableCsv(spec)], { type: 'text/csv;charset=utf-8' })), 'csv'));
}

function showManualCopy(host, text) {
  let ta = host.querySelector('textarea.manual-copy');
  if (!ta) {
    ta = h('textarea', { class: 'manual-copy', readonly: true, rows: '6', 'aria-label': t('share.copyFailed') });
    host.append(h('p', { class: 'muted' }, t('share.copyFailed')), ta);
  }
  ta.value = text;
  ta.focus();
  ta.select();
}

// ---------- charts ----------

// The page's KV chart is a stand-in until uPlot has loaded (lazy.js): wait for the real one.
function liveChart(getChart) {
  const chart = getChart();
  return chart?.whenReady ? chart.whenReady() : chart;
}

// getChart() returns the live chart: a KvChart (its .plot) or any uPlot instance,
// so other views (the simulator's) get the same buttons with one call. It may instead
// give (or promise) a chart drawn for the export alone ({plot, legend, notes, yLabel,
// dispose}: chart-export.js), dropped once written. opts.fileStem(): the download's name
// when it differs from `name` (a simulator run's settings).
export function chartToolbar(getChart, name, title, opts = {}) {
  const full = () => title + (exportContext.model ? ' — ' + exportContext.model : '');
  const file = (ext) => fileName(opts.fileStem?.() || name, ext);
  const exportAs = (ext, write) => async () => {
    // Nothing to draw when the chart's chunk did not come: its box says so (lazy.js).
    const [chart, views] = await Promise.all([liveChart(getChart), import('./views.js')]).catch(() => []);
    if (!views) return;
    try {
      if (!(chart?.plot ?? chart)?.ctx) return;
      download(file(ext), await write(chart, views));
    } finally {
      chart?.dispose?.();
    }
  };
  return h('div', { class: 'export-tools no-print', role: 'group', 'aria-label': t('export.chartTools', { name: title }), 'data-export-for': name },
    toolButton('export.downloadPng', exportAs('png', (chart, { chartPng }) => chartPng(chart, full())), 'png'),
    toolButton('export.downloadSvg', exportAs('svg', (chart, { chartSvg }) => new Blob([chartSvg(chart, full())], { type: 'image/svg+xml' })), 'svg'));
}
