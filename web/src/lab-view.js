// "Measured vs formula" (issue 12, the article's lab): peak memory measured at several
// contexts, pasted here, is fitted by the core's `kvbudget lab` (src/check/lab.cpp) against
// the formula's KV bytes for the model this page shows. The page only shows its JSON: the
// fit, the increments and the deviations are the core's, the same bytes
// `kvbudget lab RUNS --config CONFIG --json` prints. Lives in the log check's chunk and
// module (loadCheckCore), fetched on the first Fit.
import { h, clear } from './dom.js';
import { t, tMsg } from './i18n.js';
import { bytes, int } from './format.js';
import { renderTable, markScrollable } from './tables.js';
import { loadCheckCore } from './check-view.js';

const MEASURES = ['rss', 'footprint', 'nvidia_smi', 'torch_allocated', 'torch_max_allocated', 'torch_reserved', 'torch_max_reserved'];
const KV_TYPES = ['f16', 'bf16', 'f32', 'q8_0', 'q5_1', 'q5_0', 'q4_1', 'q4_0', 'iq4_nl'];

function select(id, role, options, value) {
  const s = h('select', { id, 'data-role': role },
    options.map(([v, label]) => h('option', { value: v }, label)));
  s.value = value;
  return s;
}

// app.lab ({text, settings, report}) survives a rebuild (language switch).
export function buildLabPanel(app) {
  const st = app.lab?.settings || { measure: '', engine: 'llamacpp', type_k: 'f16', type_v: 'f16' };
  const els = {};
  els.area = h('textarea', { id: 'lab-runs', rows: '7', spellcheck: 'false', 'data-role': 'lab-runs', 'aria-describedby': 'lab-hint',
    placeholder: t('lab.placeholder') });
  els.area.value = app.lab?.text ?? '';
  els.measure = select('lab-measure', 'lab-measure', [['', t('lab.measure.auto')], ...MEASURES.map((m) => [m, t('lab.measureName.' + m)])], st.measure);
  els.engine = select('lab-engine', 'lab-engine', [['llamacpp', 'llama.cpp'], ['transformers', 'transformers']], st.engine);
  els.typeK = select('lab-type-k', 'lab-type-k', KV_TYPES.map((k) => [k, k]), st.type_k);
  els.typeV = select('lab-type-v', 'lab-type-v', KV_TYPES.map((k) => [k, k]), st.type_v);
  els.status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite', 'data-role': 'lab-status' });
  els.out = h('div', { class: 'lab-out', 'data-role': 'lab-result' });
  els.run = h('button', { type: 'button', class: 'primary', 'data-role': 'lab-run', onclick: () => runLab(app, els) }, t('lab.run'));
  const field = (id, label, control) => h('div', { class: 'field' }, h('label', { for: id }, label), control);
  const panel = h('section', { class: 'panel lab', 'aria-labelledby': 'lab-h', 'data-role': 'lab' },
    h('h2', { id: 'lab-h' }, t('lab.heading')),
    h('p', { id: 'lab-hint', class: 'muted' }, t('lab.hint')),
    h('label', { for: 'lab-runs' }, t('lab.label')),
    els.area,
    h('div', { class: 'row lab-settings' },
      field('lab-measure', t('lab.measure'), els.measure),
      field('lab-engine', t('lab.engine'), els.engine),
      field('lab-type-k', t('lab.typeK'), els.typeK),
      field('lab-type-v', t('lab.typeV'), els.typeV)),
    h('div', { class: 'row' }, els.run),
    els.status,
    els.out);
  if (app.lab?.report) renderLab(els.out, app.lab.report);
  return panel;
}

async function runLab(app, els) {
  const text = els.area.value;
  const settings = { measure: els.measure.value, engine: els.engine.value };
  if (settings.engine === 'llamacpp') Object.assign(settings, { type_k: els.typeK.value, type_v: els.typeV.value });
  app.lab = { text, settings: { ...settings, type_k: els.typeK.value, type_v: els.typeV.value }, report: null };
  clear(els.out);
  if (!app.configText) {
    els.status.textContent = t('lab.noModel');
    return;
  }
  els.run.disabled = true;
  els.status.textContent = t('lab.loading');
  try {
    const core = await loadCheckCore();
    const report = core.labTable(text, { text: app.configText, name: app.configName || '', quant: app.quantText || '' }, settings);
    if (app.lab?.text !== text) return;
    app.lab.report = report;
    els.status.textContent = '';
    renderLab(els.out, report);
  } catch (e) {
    els.status.textContent = t('lab.failed', { message: e?.detail ? tMsg(e.detail) : e?.message || String(e) });
  } finally {
    els.run.disabled = false;
  }
}

function perToken(v) {
  return t('lab.perToken', { bytes: bytes(v), exact: int(v) });
}

function deviation(d) {
  return (d > 0 ? '+' : '') + d.toFixed(2) + ' %';
}

function renderLab(out, r) {
  clear(out);
  if (r.error) {
    out.append(h('p', { class: 'error', role: 'alert', 'data-role': 'lab-refused', 'data-code': r.error.detail?.code || r.error.code },
      r.error.detail ? tMsg(r.error.detail) : r.error.message));
    return;
  }
  const spec = {
    id: 'lab',
    caption: t('lab.caption', { model: r.model, measure: t('lab.measureName.' + r.measure) }),
    columns: [
      { key: 'context', label: t('lab.col.context'), kind: 'int' },
      { key: 'measured', label: t('lab.col.measured'), kind: 'bytes' },
      { key: 'increment', label: t('lab.col.increment'), kind: 'bytes' },
      { key: 'formula', label: t('lab.col.formula'), kind: 'bytes' },
      { key: 'deviation', label: t('lab.col.deviation'), kind: 'deviation' },
    ],
    rows: r.rows.map((row) => ({
      context: row.context,
      measured: row.measured_bytes,
      increment: row.increment_bytes,
      formula: row.formula_increment_bytes,
      deviation: row.deviation_percent,
      _class: row.increment_bytes !== null && row.increment_bytes <= 0 ? 'lab-falls' : null,
    })),
  };
  const f = r.fit;
  const lines = [
    h('p', { 'data-role': 'lab-fit' }, f.deviation_percent === null
      ? t('lab.fitNoDeviation', { slope: perToken(f.slope_bytes_per_token), formula: perToken(f.formula_bytes_per_token) })
      : t('lab.fit', { slope: perToken(f.slope_bytes_per_token), formula: perToken(f.formula_bytes_per_token), deviation: deviation(f.deviation_percent) })),
    h('p', { 'data-role': 'lab-intercept' }, t('lab.intercept', { intercept: bytes(f.intercept_bytes) })),
    r.weights_bytes !== null ? h('p', { 'data-role': 'lab-runtime' }, t('lab.runtime', { weights: bytes(r.weights_bytes), runtime: bytes(r.runtime_bytes) })) : null,
    r.baseline_bytes !== null ? h('p', { 'data-role': 'lab-baseline' }, t('lab.baseline', { baseline: bytes(r.baseline_bytes) })) : null,
  ];
  out.append(renderTable(spec), ...lines.filter(Boolean));
  if (r.notes?.length) out.append(h('ul', { class: 'notes', 'data-role': 'lab-notes' }, r.notes.map((n) => h('li', { 'data-code': n.code }, tMsg(n)))));
  requestAnimationFrame(() => markScrollable(out));
}
