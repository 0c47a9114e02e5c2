// "Compare with your log" (issue 12): a vLLM or llama.cpp start-up log pasted here is
// read by the core's `kvbudget check` (src/check/), which recomputes every engine line
// and names the cause where they differ. The page only shows its JSON: the numbers,
// verdicts and causes are the core's, the same bytes `kvbudget check LOG --json` prints.
// The check lives in the whole module (kvbudget.wasm, which the simulator's worker also
// loads), fetched on the first Compare: the first answer never waits for it.
import { h, clear } from './dom.js';
import { t, tMsg } from './i18n.js';

let corePromise = null;

// Also the lab panel's (lab-view.js): one module for both.
export function loadCheckCore() {
  corePromise ||= import('../../wasm/kvbudget.js')
    .then((m) => m.loadKvbudget({ wasmUrl: new URL('kvbudget.wasm', import.meta.url).href }))
    .catch((e) => {
      corePromise = null;
      throw e;
    });
  return corePromise;
}

// The panel; app.check ({text, report, error}) survives a rebuild (language switch).
export function buildCheckPanel(app) {
  const els = {};
  els.area = h('textarea', { id: 'check-log', rows: '8', spellcheck: 'false', 'data-role': 'check-log', 'aria-describedby': 'check-hint' });
  els.area.value = app.check?.text ?? '';
  els.status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite', 'data-role': 'check-status' });
  els.out = h('div', { class: 'check-out', 'data-role': 'check-result' });
  els.run = h('button', { type: 'button', class: 'primary', 'data-role': 'check-run', onclick: () => runCheck(app, els) }, t('check.run'));
  const panel = h('section', { class: 'panel log-check', 'aria-labelledby': 'check-h', 'data-role': 'check' },
    h('h2', { id: 'check-h' }, t('check.heading')),
    h('p', { id: 'check-hint', class: 'muted' }, t('check.hint')),
    h('label', { for: 'check-log' }, t('check.label')),
    els.area,
    h('div', { class: 'row' }, els.run),
    els.status,
    els.out);
  if (app.check?.report) renderReport(app, els.out, app.check.report, els);
  return panel;
}

// pageModel: compare with the config of the model this page shows (as --config on the CLI),
// offered when the log names no bundled model.
async function runCheck(app, els, pageModel = false) {
  const text = els.area.value;
  app.check = { text, report: null };
  clear(els.out);
  els.run.disabled = true;
  els.status.textContent = t('check.loading');
  try {
    const core = await loadCheckCore();
    // Which bundled config the log names (the core matches ids, paths and GGUF names).
    const { catalog_id: id } = core.checkLogModel(text, app.catalog.map((c) => c.id));
    let config = null;
    if (pageModel && app.configText) {
      config = { text: app.configText, name: app.configName || '', quant: app.quantText || '', source: 'page' };
    } else if (id) {
      const cfg = await app.fetchCatalogConfig(id);
      if (cfg !== null && cfg !== undefined) config = { text: cfg, name: id, source: 'catalog' };
    }
    const report = core.checkLog(text, config);
    if (app.check?.text !== text) return; // another Compare started meanwhile
    app.check.report = report;
    els.status.textContent = '';
    renderReport(app, els.out, report, els);
  } catch (e) {
    els.status.textContent = t('check.failed', { message: e?.detail ? tMsg(e.detail) : e?.message || String(e) });
  } finally {
    els.run.disabled = false;
  }
}

const ENGINE_NAMES = { vllm: 'vLLM', llamacpp: 'llama.cpp' };

function causeText(line) {
  return [line.cause, ...(line.more_causes || [])].filter(Boolean).map((m) => tMsg(m)).join(' ');
}

function deviationText(d) {
  return (d > 0 ? '+' : '') + d.toFixed(2) + '%';
}

function renderReport(app, out, r, els) {
  clear(out);
  if (r.error) {
    out.append(h('p', { class: 'error', role: 'alert', 'data-role': 'check-refused', 'data-code': r.error.detail?.code || r.error.code },
      t('check.refused', { message: r.error.detail ? tMsg(r.error.detail) : r.error.message })));
    return;
  }
  const engine = ENGINE_NAMES[r.engine] || r.engine;
  const source = r.config_source ? t('check.source.' + r.config_source, { config: r.config }) : t('check.source.none');
  const settings = Object.entries(r.settings || {});
  out.append(
    h('p', { 'data-role': 'check-engine' }, r.version ? t('check.engineVersion', { engine, version: r.version }) : t('check.engine', { engine })),
    h('p', { 'data-role': 'check-model' }, r.model ? t('check.model', { model: r.model }) : t('check.modelUnnamed')),
    h('p', { class: 'muted', 'data-role': 'check-config' }, source),
    !r.config_source && app.configText && app.configName
      ? h('button', { type: 'button', 'data-role': 'check-page-model', onclick: () => runCheck(app, els, true) },
        t('check.usePageModel', { id: app.configName }))
      : null,
    settings.length
      ? h('details', { class: 'check-settings' }, h('summary', null, t('check.settings', { n: settings.length })),
        h('ul', null, settings.map(([k, v]) => h('li', null, h('code', null, k + ' = ' + v)))))
      : null,
    h('p', { 'data-role': 'check-summary' }, t('check.summary', { matched: r.matched, explained: r.explained, unexplained: r.unexplained })));
  const rows = r.lines.map((l) => h('tr', { 'data-line': l.number, 'data-match': String(l.match), 'data-cause': l.cause?.code || '' },
    h('td', { class: 'num' }, String(l.number)),
    h('td', null, h('code', null, l.printed)),
    h('td', null, l.predicted ? h('code', null, l.predicted) : h('span', { class: 'muted' }, t(l.kind.endsWith('out_of_memory') ? 'check.oomExplained' : 'check.noPrediction'))),
    h('td', { class: l.match ? 'agrees' : 'differs' }, l.match ? t('check.agree')
      // An out-of-memory error is explained from its own numbers, not predicted.
      : l.kind.endsWith('out_of_memory') ? t('check.oom')
        : l.deviation_percent === null ? t('check.differ') : t('check.differBy', { deviation: deviationText(l.deviation_percent) })),
    h('td', null, causeText(l))));
  out.append(h('div', { class: 'table-wrap' }, h('table', { class: 'data check-table', 'data-role': 'check-table' },
    h('caption', null, t('check.caption')),
    h('thead', null, h('tr', null,
      h('th', { scope: 'col' }, t('check.col.line')),
      h('th', { scope: 'col' }, t('check.col.printed')),
      h('th', { scope: 'col' }, t('check.col.predicted')),
      h('th', { scope: 'col' }, t('check.col.verdict')),
      h('th', { scope: 'col' }, t('check.col.cause')))),
    h('tbody', null, rows))));
  if (r.notes?.length) out.append(h('ul', { class: 'notes', 'data-role': 'check-notes' }, r.notes.map((n) => h('li', { 'data-code': n.code }, tMsg(n)))));
}
