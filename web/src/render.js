// Renders the core's compute() result. Layout and text only: every number shown
// is a field of `view`, computed in WASM.
import { h, clear } from './dom.js';
import { t, tMsg } from './i18n.js';
import { bytes, int, tokens, fixed, format, decimalBytes } from './format.js';
import { renderTable } from './tables.js';
import { KvChart } from './chart.js';
import { chartToolbar } from './export.js';

function metric(name, label, value, kind, extra) {
  return h('div', { class: 'metric' },
    h('dt', null, label),
    h('dd', null,
      h('span', { 'data-metric': name, 'data-value': value === null || value === undefined ? '' : String(value) }, format(kind, value)),
      extra ? h('span', { class: 'sub muted' }, extra) : null));
}

function elemText(type) {
  return type.blockValues === 1 ? t('formula.elemBytes', { n: type.blockBytes }) : t('formula.elemBlock', { bytes: type.blockBytes, values: type.blockValues });
}


function formulaLines(view) {
  const k = view.kvTypes.k;
  const v = view.kvTypes.v;
  const lines = [];
  for (const g of view.formula) {
    const b = bytes(g.bytesPerToken) + ` (${int(g.bytesPerToken)} B)`;
    if (g.kind === 'full' || g.kind === 'sliding' || g.kind === 'chunked') {
      let text;
      if (k.name === v.name && g.kHeadDim === g.vHeadDim) {
        text = t('formula.kv', { layers: g.layers, heads: g.kvHeads, dim: g.kHeadDim, elem: elemText(k), bytes: b });
      } else if (k.name === v.name) {
        text = t('formula.kvDiffDims', { layers: g.layers, heads: g.kvHeads, kdim: g.kHeadDim, vdim: g.vHeadDim, elem: elemText(k), bytes: b });
      } else {
        text = t('formula.kvSplitTypes', { layers: g.layers, heads: g.kvHeads, kdim: g.kHeadDim, vdim: g.vHeadDim, kelem: elemText(k), velem: elemText(v), bytes: b });
      }
      const note = g.kind === 'sliding' ? t('formula.window', { window: int(g.window) }) : g.kind === 'chunked' ? t('formula.chunk', { window: int(g.window) }) : null;
      lines.push({ kind: g.kind, text, note });
    } else if (g.kind === 'mla') {
      lines.push({ kind: g.kind, text: t('formula.mla', { layers: g.layers, rank: g.kvLoraRank, rope: g.qkRopeHeadDim, elem: elemText(k), bytes: b }) });
    } else if (g.kind === 'linear' || g.kind === 'mamba') {
      lines.push({ kind: g.kind, text: t('formula.state', { layers: g.layers, kind: t('formula.kind.' + g.kind), bytesPerLayer: bytes(g.stateBytesPerLayer), bytes: bytes(g.stateBytes) }) });
    } else {
      lines.push({ kind: g.kind, text: t('formula.none', { layers: g.layers }) });
    }
  }
  return lines;
}

function stackedBar(b) {
  const parts = [
    ['weights', b.weightsPerGpuBytes],
    ['kv', b.kvBytes],
    ['activations', b.activationsBytes],
    ['overhead', b.overheadBytes],
  ];
  const used = parts.reduce((a, [, v]) => a + v, 0);
  const scale = Math.max(b.capacityBytes, used) || 1;
  const bar = h('div', { class: 'bar', role: 'img', 'aria-label': t('bar.label') + ': ' + parts.map(([k, v]) => `${t('bar.' + k)} ${bytes(v)}`).join(', ') + (b.freeBytes > 0 ? `, ${t('bar.free')} ${bytes(b.freeBytes)}` : '') });
  for (const [k, v] of parts) {
    if (v > 0) bar.append(h('span', { class: 'seg seg-' + k, style: `width:${(100 * v) / scale}%`, title: `${t('bar.' + k)}: ${bytes(v)}` }));
  }
  if (b.freeBytes > 0) bar.append(h('span', { class: 'seg seg-free', style: `width:${(100 * b.freeBytes) / scale}%`, title: `${t('bar.free')}: ${bytes(b.freeBytes)}` }));
  if (b.usableBytes > 0 && b.usableBytes < scale) {
    bar.append(h('span', { class: 'util-line', style: `left:${(100 * b.usableBytes) / scale}%`, title: t('bar.util') }));
  }
  const legend = h('ul', { class: 'legend' },
    parts.map(([k, v]) => h('li', { 'data-part': k, 'data-value': String(v) }, h('span', { class: 'swatch seg-' + k, 'aria-hidden': 'true' }), `${t('bar.' + k)}: ${bytes(v)}`)),
    h('li', null, h('span', { class: 'swatch seg-free', 'aria-hidden': 'true' }), `${b.freeBytes >= 0 ? t('bar.free') : t('bar.over')}: ${bytes(Math.abs(b.freeBytes))}`));
  return [bar, legend];
}

function section(id, title, ...body) {
  return h('section', { class: 'card', id: 'sec-' + id, 'aria-labelledby': 'sec-' + id + '-h' }, h('h3', { id: 'sec-' + id + '-h' }, title), ...body);
}

function copyButton(getText) {
  const btn = h('button', { type: 'button', class: 'copy' }, t('engine.copy'));
  btn.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(getText());
      btn.textContent = t('engine.copied');
      setTimeout(() => (btn.textContent = t('engine.copy')), 1500);
    } catch {
      // Clipboard refused (insecure context): the text stays selectable.
    }
  });
  return btn;
}

export function renderResults(app, view) {
  const body = app.els.resultsBody;
  const s = app.state;
  const b = view.budget;
  app.view = view;
  const ctxText = tokens(s.ctx);
  const seqText = int(s.seqs);

  if (!app.chart) {
    app.chartBox = h('div', { class: 'chart', role: 'img', 'aria-label': t('chart.label') });
    app.chart = new KvChart(app.chartBox);
  }
  clear(body);

  // Source line
  const src = app.modelSource;
  const srcText = !src ? '' : src.kind === 'hub' ? t('model.source.hub', { id: src.id, revision: src.revision, hub: app.hub.baseUrl })
    : src.kind === 'paste' ? t('model.source.paste', { name: src.name })
    : src.kind === 'fallback' ? t('model.source.fallback', { id: src.id })
    : t('model.source.catalog', { id: src.id });
  app.els.source.textContent = srcText;
  const m = app.model.spec;
  const kinds = Object.entries(m.layerCounts).map(([k, n]) => `${n} ${t('layerKind.' + k)}`).join(t('list.sep'));
  const summary = h('p', { class: 'model-summary' },
    h('strong', { 'data-role': 'model-name' }, m.name), ' — ',
    t('model.summary', { arch: m.architecture || m.modelType, layers: m.numLayers, kinds, dtype: m.dtype, maxctx: m.maxPositionEmbeddings ? int(m.maxPositionEmbeddings) : t('value.none') }));

  // Verdict + bar
  const top = [summary];
  if (b) {
    const verdict = !b.fits ? 'nofit' : b.allSeqsFit ? 'fits' : 'partial';
    const params = { used: bytes(b.totalBytes), capacity: bytes(b.usableBytes), gpu: b.gpuName || t('controls.gpuCustom'), n: int(b.maxConcurrency), seqs: seqText, ctx: ctxText };
    top.push(h('p', { class: 'verdict ' + verdict, 'data-role': 'verdict', 'data-verdict': verdict }, t('verdict.' + verdict, params)));
    top.push(...stackedBar(b));
    if (b.gpuCount > 1) top.push(h('p', { class: 'muted' }, t('bar.perGpu', { n: b.gpuCount, tp: b.tp, pp: b.pp })));
  } else if (view.budgetError) {
    top.push(h('p', { class: 'verdict nofit', 'data-role': 'verdict', 'data-verdict': 'refused' }, t('verdict.refused')),
      h('pre', { class: 'engine-refusal', 'data-role': 'budget-error' }, view.budgetError.message));
  }

  // Headline metrics
  const kv = view.kv;
  const metrics = h('dl', { class: 'metrics' },
    metric('kv-bytes-per-token', t('metric.kv-bytes-per-token'), kv.bytesPerToken, 'bytes',
      kv.stateBytesPerSeq > 0 ? t('metric.state-bytes', { bytes: bytes(kv.stateBytesPerSeq) })
        : kv.windowedBytesPerToken > 0 ? t('metric.windowed', { bytes: bytes(kv.windowedBytesPerToken) }) : null),
    metric('kv-bytes-total', t('metric.kv-bytes-total', { ctx: ctxText, seqs: seqText }), kv.bytesTotal, 'bytes'),
    metric('weights-bytes', t('metric.weights-bytes'), b ? b.weightsBytes : null, 'bytes'),
    metric('total-bytes', t('metric.total-bytes'), b ? b.totalBytes : null, 'bytes'),
    metric('max-context', t('metric.max-context'), b ? b.maxContext : null, 'int'),
    metric('max-concurrency', t('metric.max-concurrency', { ctx: ctxText }), b ? b.maxConcurrency : null, 'int'));

  // Formula
  const lines = formulaLines(view);
  const formula = section('formula', t('formula.heading'),
    h('p', { class: 'muted' }, t('formula.intro')),
    h('ul', { class: 'formula' }, lines.map((l) => h('li', { 'data-kind': l.kind }, h('code', null, l.text), l.note ? h('span', { class: 'muted' }, ' — ' + l.note) : null))),
    h('p', null, h('strong', null, t('formula.total', { bytes: `${bytes(kv.bytesPerToken)} (${int(kv.bytesPerToken)} B)` }))));

  // Context table
  const ctxTable = {
    id: 'context',
    caption: t('table.context.caption', { seqs: seqText }),
    columns: [
      { key: 'context', label: t('col.context'), kind: 'text' },
      { key: 'bytesPerSeq', label: t('col.perSeq'), kind: 'bytes' },
      { key: 'bytesTotal', label: t('col.total'), kind: 'bytes' },
      ...(b ? [{ key: 'vsWeights', label: t('col.vsWeights'), kind: 'percent' }] : []),
    ],
    rows: view.contextTable.map((r) => ({
      context: r.isModelMax ? t('row.modelMax', { ctx: tokens(r.context) }) : tokens(r.context),
      bytesPerSeq: r.bytesPerSeq,
      bytesTotal: r.bytesTotal,
      vsWeights: r.vsWeights,
      _class: r.beyondModelMax ? 'beyond' : null,
    })),
  };

  // Comparison
  const cmpTable = {
    id: 'compare',
    caption: t('table.compare.heading'),
    columns: [
      { key: 'variant', label: t('col.variant'), kind: 'text' },
      { key: 'kvHeads', label: t('col.kvHeads'), kind: 'int' },
      { key: 'bytesPerToken', label: t('col.perToken'), kind: 'bytes' },
      { key: 'bytesTotal', label: t('col.atCtx', { ctx: ctxText, seqs: seqText }), kind: 'bytes' },
    ],
    rows: view.comparison.map((r) => ({ ...r, variant: t('variant.' + r.variant), _class: r.variant === 'actual' ? 'current' : null })),
  };

  const chart = view.chart;
  const chartSec = section('chart', t('chart.heading'), app.chartBox, chartToolbar(() => app.chart, 'kv-vs-context', t('chart.heading')),
    h('p', { class: 'muted', 'data-role': 'crossover', 'data-value': String(chart.crossoverContext || 0) },
      chart.crossoverContext ? t('chart.crossover', { ctx: int(chart.crossoverContext) }) : chart.weightsBytes ? t('chart.noCrossover') : ''));

  const out = [h('div', { class: 'card headline' }, ...top, metrics), formula,
    section('context', t('table.context.heading'), renderTable(ctxTable)), chartSec,
    section('compare', t('table.compare.heading'), renderTable(cmpTable))];

  if (view.ladder && view.ladder.length) {
    out.push(section('ladder', t('table.ladder.heading'), renderTable({
      id: 'ladder',
      caption: t('table.ladder.heading'),
      columns: [
        { key: 'step', label: t('col.step'), kind: 'text' },
        { key: 'bytesPerToken', label: t('col.perToken'), kind: 'bytes' },
        { key: 'kvBytes', label: t('col.kvBytes', { ctx: ctxText, seqs: seqText }), kind: 'bytes' },
        { key: 'saving', label: t('col.savingVsModel'), kind: 'percent' },
      ],
      rows: view.ladder.map((r) => ({ ...r, step: t('ladder.' + r.step, { detail: r.detail }), _class: r.step === 'model' ? 'current' : null })),
    })));
  }

  const eng = view.engineView;
  if (eng) {
    const logText = (eng.logLines || []).join('\n');
    out.push(section('engine', t('engine.heading'),
      eng.error ? h('div', { class: 'engine-error' }, h('p', null, t('engine.error')), h('pre', { 'data-role': 'engine-error' }, eng.error)) : null,
      logText ? [h('h4', null, t('engine.logs')), h('pre', { class: 'log', 'data-role': 'engine-log' }, logText)] : null,
      eng.command ? [h('h4', null, t('engine.command')), h('div', { class: 'cmd' }, h('pre', { 'data-role': 'engine-command' }, eng.command), copyButton(() => eng.command))] : null,
      eng.notes && eng.notes.length ? [h('h4', null, t('engine.notes')), h('ul', null, eng.notes.map((n) => h('li', null, tMsg(n))))] : null));
  }

  if (view.decode) {
    const d = view.decode;
    out.push(section('decode', t('decode.heading'), h('p', { 'data-role': 'decode' },
      d.bandwidthBytesPerS > 0
        ? t('decode.text', { weights: bytes(d.weightBytesPerToken), kv: bytes(d.kvBytesPerToken), ctx: tokens(d.context), bw: decimalBytes(d.bandwidthBytesPerS),
          tps: fixed(d.tokensPerSecondSingle, 1), batch: int(d.batch), agg: fixed(d.tokensPerSecondBatch, 1) })
        : t('decode.none'))));
  }

  const notes = [...(m.notes || []), ...(view.notes || [])].map(tMsg);
  if (app.hubInfo?.parameters) notes.push(t('model.hubParams', { params: int(app.hubInfo.parameters) }));
  if (notes.length) out.push(section('notes', t('notes.heading'), h('ul', { class: 'notes' }, notes.map((n) => h('li', null, n)))));

  body.append(...out);
  // After insertion, so the chart takes the width its card really has.
  app.chart.update(chart);
}
