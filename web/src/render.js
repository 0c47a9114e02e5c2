// Renders the core's Answer (src/report/answer.h, the JSON `kvbudget budget --json`
// prints). Layout and text only: every number shown is a field of `view`.
// Built as a tree of plain objects each time (dom.js v) and compared with the last one
// (dom.js patchTree): a slider step rewrites only the texts and attributes that changed.
import { h, v, vtext, patchTree, setText, unbrokenFlags, dropClass } from './dom.js';
import { t, tMsg, language } from './i18n.js';
import { bytes, int, tokens, fixed, format, decimalBytes, percent } from './format.js';
import { renderTable, markScrollable } from './tables.js';
// The chart's stand-in: uPlot arrives just after the first answer (lazy.js).
import { KvChart, afterPaint } from './lazy.js';
import { chartToolbar, aboutLine } from './export.js';
import { gpuLabel } from './controls.js';
import { ropeLine } from './rope.js';
import { adviceSettings } from './budget-inputs.js';

function metric(name, label, value, kind, extra, extraRole = null) {
  return v('div', { class: 'metric' },
    v('dt', null, label),
    v('dd', null,
      v('span', { 'data-metric': name, 'data-value': value === null || value === undefined ? '' : String(value) }, format(kind, value)),
      extra ? v('span', { class: 'sub muted', 'data-role': extraRole }, extra) : null));
}

function elemText(type) {
  return type.block_values === 1 ? t('formula.elemBytes', { n: type.block_bytes }) : t('formula.elemBlock', { bytes: type.block_bytes, values: type.block_values });
}


function formulaLines(view) {
  const k = view.kv.k_type;
  const vt = view.kv.v_type;
  const lines = [];
  for (const g of view.kv.formula) {
    const b = bytes(g.bytes_per_token) + ` (${int(g.bytes_per_token)} B)`;
    if (g.kind === 'full' || g.kind === 'sliding' || g.kind === 'chunked') {
      let text;
      if (k.name === vt.name && g.k_head_dim === g.v_head_dim) {
        text = t('formula.kv', { layers: g.layers, heads: g.kv_heads, dim: g.k_head_dim, elem: elemText(k), bytes: b });
      } else if (k.name === vt.name) {
        text = t('formula.kvDiffDims', { layers: g.layers, heads: g.kv_heads, kdim: g.k_head_dim, vdim: g.v_head_dim, elem: elemText(k), bytes: b });
      } else {
        text = t('formula.kvSplitTypes', { layers: g.layers, heads: g.kv_heads, kdim: g.k_head_dim, vdim: g.v_head_dim, kelem: elemText(k), velem: elemText(vt), bytes: b });
      }
      const note = g.kind === 'sliding' ? t('formula.window', { window: int(g.window) }) : g.kind === 'chunked' ? t('formula.chunk', { window: int(g.window) }) : null;
      lines.push({ kind: g.kind, text, note });
    } else if (g.kind === 'mla') {
      lines.push({ kind: g.kind, text: t('formula.mla', { layers: g.layers, rank: g.kv_lora_rank, rope: g.qk_rope_head_dim, elem: elemText(k), bytes: b }) });
    } else if (g.kind === 'linear' || g.kind === 'mamba') {
      lines.push({ kind: g.kind, text: t('formula.state', { layers: g.layers, kind: t('formula.kind.' + g.kind), bytesPerLayer: bytes(g.state_bytes_per_layer), bytes: bytes(g.state_bytes) }) });
    } else {
      lines.push({ kind: g.kind, text: t('formula.none', { layers: g.layers }) });
    }
  }
  return lines;
}

function stackedBar(g, verdict, ask) {
  const parts = [
    ['weights', g.weights_bytes],
    ['kv', g.kv_bytes],
    ['activations', g.activation_bytes],
    ['overhead', g.overhead_bytes],
  ];
  // Past the usable memory: for a run that starts with fewer sequences this is what
  // all of them would lack, not a failure to start.
  // The engine may use only `usable` (vLLM: total x gpu_memory_utilization): past it the
  // answer does not fit, whatever lies beyond the dashed line, so the legend says by how much.
  const overBy = g.over_usable_bytes;
  const freeLabel = overBy === 0 ? t('bar.free')
    : verdict === 'partial' ? t('bar.shortAll', ask) : t('bar.overUsable', { usable: bytes(g.usable_bytes) });
  const lastValue = overBy > 0 ? overBy : g.free_bytes;
  const scale = Math.max(g.capacity_bytes, g.total_bytes) || 1;
  const segs = [];
  for (const [k, n] of parts) {
    if (n > 0) segs.push(v('span', { class: 'seg seg-' + k, style: `width:${(100 * n) / scale}%`, title: t('bar.item', { label: t('bar.' + k), value: bytes(n) }) }));
  }
  if (g.free_bytes > 0) segs.push(v('span', { class: 'seg seg-free', style: `width:${(100 * g.free_bytes) / scale}%`, title: t('bar.item', { label: t('bar.free'), value: bytes(g.free_bytes) }) }));
  if (g.usable_bytes > 0 && g.usable_bytes < scale) {
    segs.push(v('span', { class: 'util-line', style: `left:${(100 * g.usable_bytes) / scale}%`, title: t('bar.util') }));
  }
  const bar = v('div', { class: 'bar', role: 'img', 'aria-label': t('bar.item', { label: t('bar.label'), value: [...parts.map(([k, n]) => `${t('bar.' + k)} ${bytes(n)}`), `${freeLabel} ${bytes(lastValue)}`].join(t('list.sep')) }) }, segs);
  const legend = v('ul', { class: 'legend' },
    parts.map(([k, n]) => v('li', { 'data-part': k, 'data-value': String(n) }, v('span', { class: 'swatch seg-' + k, 'aria-hidden': 'true' }), t('bar.item', { label: t('bar.' + k), value: bytes(n) }))),
    v('li', { 'data-part': overBy > 0 ? 'over' : 'free', 'data-value': String(lastValue) }, v('span', { class: 'swatch ' + (overBy > 0 ? 'seg-over' : 'seg-free'), 'aria-hidden': 'true' }), t('bar.item', { label: freeLabel, value: bytes(lastValue) })));
  return [v('p', { class: 'bar-title muted' }, t('bar.title', ask)), bar, legend];
}

// fits: every asked sequence fits; offload: llama.cpp's --fit runs them with part in system RAM
// (the core's fits_offload); partial: vLLM starts and serves fewer at once;
// fewer: llama.cpp / transformers allocate all sequences up front, so asking too many
// fails although fewer would fit; nofit: not even one sequence of this context fits.
export function verdictOf(b) {
  if (b.fits) return b.all_seqs_fit ? (b.fits_offload ? 'offload' : 'fits') : 'partial';
  if (b.engine !== 'vllm' && b.seqs > 1 && b.max_concurrency >= 1) return 'fewer';
  return 'nofit';
}

// The first thing on the page (and in the embed): whether it fits, on which GPU, the
// longest context and the most requests at once. Sticky while the controls scroll.
function renderAnswer(app, view) {
  const el = app.els.answerCard;
  if (!el) return;
  const b = view.budget;
  const ctxText = tokens(view.kv.context);
  const seqs = view.kv.seqs;
  const mx = view.metrics;
  const gpuName = (b && b.gpu.count > 1 ? `${b.gpu.count} × ` : '') + gpuDisplayName(app, b);
  let verdictEl;
  let key = 'refused';
  if (b) {
    const g = b.per_gpu;
    key = verdictOf(b);
    const mns = b.engine === 'vllm' && b.max_concurrency >= b.seqs && b.max_num_seqs < b.seqs;
    const params = { used: bytes(g.total_bytes), capacity: bytes(g.usable_bytes), gpu: gpuName, n: int(b.max_concurrency), seqs: int(seqs), ctx: ctxText, mns: int(b.max_num_seqs) };
    // Past the model's limit vLLM refuses whatever the memory: the verdict says that, not "does not fit".
    const overLimit = b.engine === 'vllm' && b.over_model_max;
    if (overLimit) params.max = int(b.model_max_len);
    // An engine that stops at start-up for another reason (an fp8 cache the GPU's backends refuse): not memory either.
    const textKey = overLimit ? 'verdict.overLimit'
      : b.startup_refused ? 'verdict.startupRefused'
      : key === 'fits' ? (seqs === 1 ? 'verdict.fits.one' : 'verdict.fits')
      : key === 'offload' ? (seqs === 1 ? 'verdict.fitsOffload.one' : 'verdict.fitsOffload')
      : key === 'partial' ? (mns ? 'verdict.partialMaxNumSeqs' : 'verdict.partial')
        : key === 'fewer' ? 'verdict.fewer'
          : seqs === 1 || b.engine === 'vllm' ? 'verdict.nofit' : 'verdict.nofitAll';
    verdictEl = v('p', { class: 'verdict ' + (key === 'fewer' ? 'nofit' : key === 'offload' ? 'fits' : key), 'data-role': 'verdict', 'data-verdict': key }, withGpu(textKey, params));
  } else {
    verdictEl = v('p', { class: 'verdict nofit', 'data-role': 'verdict', 'data-verdict': 'refused' }, withGpu('verdict.refused.on', { gpu: gpuName }));
  }
  const maxCtx = mx['max-context'];
  const maxConc = mx['max-concurrency'];
  const fact = (label, valueEl, unit) => v('div', { class: 'fact' }, v('dt', null, label), v('dd', null, valueEl, unit ? v('span', { class: 'unit' }, ' ' + unit) : null));
  const num = (name, n) => v('span', { 'data-metric': name, 'data-value': n === null || n === undefined ? '' : String(n) }, format('int', n));
  // Where the longest context stops is the core's (budget.max_context_stop), as the CLI says it.
  const stopUnit = { memory: t('answer.tokens'), slot: t('answer.tokensSlotCap'), asked: b && t('answer.tokensAsked', { max: int(b.model_max_len) }), model: t('answer.tokensModelMax') };
  const facts = v('dl', { class: 'facts' },
    fact(t(seqs === 1 ? 'metric.max-context.one' : 'metric.max-context', { seqs: int(seqs) }), num('max-context', maxCtx),
      !maxCtx ? null : stopUnit[b?.max_context_stop ?? 'memory']),
    fact(t('metric.max-concurrency', { ctx: ctxText }), num('max-concurrency', maxConc), maxConc !== null && maxConc !== undefined ? t(maxConc === 1 ? 'answer.requests.one' : 'answer.requests') : null));
  // The command that runs it (the core's, as the CLI prints it), on the first screen; not where it is the one asked
  // and does not start: a start-up refusal, or no context fitting at all.
  const starts = b && !b.startup_refused && (b.fits || b.max_context > 0);
  const command = starts && b.command ? v('div', { class: 'cmd answer-cmd' }, v('pre', { 'data-role': 'answer-command', 'aria-label': t('engine.command') }, b.command), copyButton(() => b.command)) : null;
  // A start-up refusal is not memory: the numbers below are what the memory would give, said as such.
  const ifStarted = b?.startup_refused ? v('p', { class: 'if-started', 'data-role': 'if-started' }, t('answer.ifStarted')) : null;
  // Screen readers hear the new answer once per change, not on every re-render.
  // Why it does not fit (or how llama.cpp's --fit runs it), in the core's words, on the
  // first screen: "does not fit" alone leaves the reader to find the cause below.
  // A refusal's reason too: the verdict ends in a colon that its reason completes.
  const reason = b ? b.verdict_reason : view.refusal?.detail;
  const why = reason ? v('p', { class: 'verdict-why', 'data-role': 'verdict-reason' }, unbrokenFlags(tMsg(reason), v))
    : !b && view.refusal?.message ? v('p', { class: 'verdict-why', 'data-role': 'verdict-reason' }, view.refusal.message) : null;
  // An 8-bit KV cache that would turn the answer into yes (or a start-up the same GPUs split otherwise would pass): the
  // fix, with its flags, beside the no, and a button that sets it, so the core answers those settings.
  const adviceText = view.advice ? tMsg(view.advice) : '';
  const settings = view.advice && adviceSettings(app.state, view);
  const use = settings ? v('button', { type: 'button', class: 'advice-use', 'data-role': 'advice-apply', onclick: () => {
    Object.assign(app.state, settings);
    app.recompute?.();
  } }, t('answer.useAdvice')) : null;
  const advice = view.advice ? v('p', { class: 'verdict-advice', 'data-role': 'verdict-advice' }, unbrokenFlags(adviceText, v)) : null;
  // Sentences that end in their own stop (or a colon) are not given a second one; a Chinese page stops with its own.
  const stop = language().startsWith('zh') ? '。' : '. ';
  const spoken = [vtext(verdictEl), ...(why ? [vtext(why)] : []), ...(advice ? [adviceText] : []), ...(ifStarted ? [vtext(ifStarted)] : []), ...facts.kids.map((f) => vtext(f.kids[0]) + ': ' + vtext(f.kids[1]))]
    .map((x) => x.trim()).reduce((acc, x) => (acc === '' ? x : /[.。:：!?！？]$/.test(acc) ? acc + ' ' + x : acc + stop + x), '');
  patchTree(el, [verdictEl, why, advice, use, ifStarted, facts, command]);
  el.__kvbAnswered = true;
  dropClass(app.els.answer, 'stale');
  if (app.els.announce && app.lastSpoken !== spoken) {
    app.lastSpoken = spoken;
    app.els.announce.textContent = spoken;
  }
}

// A card with no answer yet whose answer will not come (the link's model could not be
// loaded, the core refused the settings, the calculator did not load): it says so in a few
// words (`why`), the error line the rest. true when it did; a card that has shown an answer
// keeps it (main.js marks it stale).
export function renderNoAnswer(app, why) {
  const el = app.els.answerCard;
  if (!el || el.__kvbAnswered) return false;
  patchTree(el, [v('p', { class: 'verdict none', 'data-role': 'verdict', 'data-verdict': 'none' }, why)]);
  if (app.els.announce) app.els.announce.textContent = '';
  app.lastSpoken = '';
  return true;
}

// The verdict sentence with the GPU's name as its own element ([data-role="gpu"]), so
// the name is said once, inside the sentence it qualifies.
// A colon or comma right after the name goes inside its element, so it never starts a line
// when a long name wraps on its own (styles.css .gpu-name).
function withGpu(key, params) {
  const [before, ...rest] = t(key, { ...params, gpu: '\u0000' }).split('\u0000');
  const after = rest.join(params.gpu);
  const stick = /^[:：,，]/.exec(after)?.[0] || '';
  return [before, v('span', { class: 'gpu-name' }, v('span', { 'data-role': 'gpu' }, params.gpu), stick), after.slice(stick.length)];
}

// The answer card (renderAnswer fills it) and the polite live region that reads each new
// answer once; both exist before the first answer so the layout does not jump.
export function answerCard(app) {
  app.els.announce = h('p', { class: 'visually-hidden', 'aria-live': 'polite', 'data-role': 'announce' });
  const card = h('section', { class: 'answer', 'data-role': 'answer', 'aria-label': t('answer.label') },
    h('p', { class: 'verdict pending' }, t('answer.loading')));
  app.els.answerCard = card;
  return h('div', { class: 'answer-wrap' }, card, app.els.announce);
}

// The catalog's name for the GPU, with the maker's GB when the name lacks it.
function gpuDisplayName(app, b) {
  const id = b ? b.gpu.id : app.state.gpu;
  const g = id ? app.core?.catalog().gpus.find((x) => x.id === id) : null;
  if (g && (!b || b.gpu.name === g.name)) return gpuLabel(g);
  if (b?.gpu?.id && b.gpu.name) return b.gpu.name;
  return t('controls.gpuCustomSize', { size: bytes(b ? b.per_gpu.capacity_bytes : app.state.gpuMem) });
}

function section(id, title, ...body) {
  return v('section', { class: 'card', id: 'sec-' + id, 'aria-labelledby': 'sec-' + id + '-h' }, v('h3', { id: 'sec-' + id + '-h' }, title), ...body);
}

// A kept button gets the new answer's getText (dom.js listen). Its label is changed on the
// live node, so a render meanwhile leaves "Copied" alone (its text is the tree's own).
function copyButton(getText) {
  return v('button', { type: 'button', class: 'copy', onclick: async function () {
    const label = this.firstChild;
    try {
      await navigator.clipboard.writeText(getText());
      label.data = t('engine.copied');
      setTimeout(() => (label.data = t('engine.copy')), 1500);
    } catch {
      // Clipboard refused (insecure context): the text stays selectable.
    }
  } }, t('engine.copy'));
}

// A slider step (main.js) passes `near`, the result cards on or near the screen
// (cardsOnScreen): only those and the answer card are built and patched in the step's
// frame; the others keep what they showed, and main.js renders the whole answer just after
// that frame. Laying out and painting the sections off screen (the ladder, the engine's
// log, decode: inside the browser's pre-render margin, so laid out on every step) was a
// third of a step (issue 13). Without `near`, or when the step changes which cards the
// answer has, everything is rendered. Returns whether the render was whole.
export function renderResults(app, view, near = null) {
  const body = app.els.resultsBody;
  const b = view.budget;
  app.view = view;
  // The context and sequences the core resolved, not the ones the page asked for.
  const ctxText = tokens(view.kv.context);
  const seqText = int(view.kv.seqs);

  if (!app.chart) {
    app.chartBox = h('div', { class: 'chart', role: 'img', 'aria-label': t('chart.label') });
    app.chart = new KvChart(app.chartBox);
  }
  // Source line
  const src = app.modelSource;
  const srcText = !src ? '' : src.kind === 'hub' ? t('model.source.hub', { id: src.id, revision: src.revision, hub: app.hub.baseUrl })
    : src.kind === 'paste' ? t('model.source.paste', { name: src.name })
    : src.kind === 'fallback' ? t('model.source.fallback', { id: src.id })
    : src.kind === 'fallbackRefused' ? t('model.source.fallbackRefused', { id: src.id, status: src.status })
    : t('model.source.catalog', { id: src.id });
  setText(app.els.source, srcText);

  // The bar: what one GPU holds for the asked context and sequences.
  const headline = () => {
    const m = app.model.spec;
    const kindCounts = Object.entries(m.layer_counts);
    const kinds = kindCounts.length === 1 ? t('model.kindsAll', { kind: t('layerKind.' + kindCounts[0][0]) })
      : kindCounts.map(([k, n]) => t('model.kindCount', { n: int(n), kind: t('layerKind.' + k) })).join(t('list.sep'));
    const summary = v('p', { class: 'model-summary' },
      v('strong', { 'data-role': 'model-name' }, m.name), ' — ',
      t('model.summary', { arch: m.architecture || m.model_type, layers: int(m.num_layers), kinds, dtype: m.dtype, maxctx: m.max_position_embeddings ? int(m.max_position_embeddings) : t('value.none') }));
    const top = [summary];
    if (b) {
      const g = b.per_gpu;
      const rope = ropeLine(app, view);
      if (rope) top.push(rope);
      top.push(...stackedBar(g, verdictOf(b), { seqs: seqText, ctx: ctxText }));
      // With expert parallelism the bar's GPU is the one holding the most experts (ep_local_experts of each MoE layer's).
      const perGpuKey = b.engine !== 'vllm' ? 'bar.perGpuLayers' : b.expert_parallel_size > 1 ? 'bar.perGpuEp' : 'bar.perGpu';
      if (b.gpu.count > 1) top.push(v('p', { class: 'muted' }, t(perGpuKey, { n: b.gpu.count, tp: b.tensor_parallel_size, pp: b.pipeline_parallel_size, experts: b.ep_local_experts })));
    } else if (view.refusal) {
      // The core's reason in this page's words; an engine's own text (vLLM's) stays verbatim beneath.
      const r = view.refusal;
      top.push(r.detail ? v('p', { 'data-role': 'budget-error' }, tMsg(r.detail)) : v('pre', { class: 'engine-refusal', 'data-role': 'budget-error' }, r.message));
    }
    return v('div', { class: 'card headline' }, ...top);
  };
  renderAnswer(app, view);

  // The other headline numbers (the longest context and the concurrency are in the answer card).
  const numbers = () => {
    const kv = view.kv;
    const mx = view.metrics;
    return v('div', { class: 'card numbers' }, v('dl', { class: 'metrics' },
      metric('kv-bytes-per-token', t('metric.kv-bytes-per-token'), mx['kv-bytes-per-token'], 'bytes',
        kv.state_bytes_per_seq > 0 ? t('metric.state-bytes', { bytes: bytes(kv.state_bytes_per_seq) })
          : kv.windowed_bytes_per_token > 0 ? t('metric.windowed', { bytes: bytes(kv.windowed_bytes_per_token) }) : null),
      // The engine's layout (padded cells, sliding windows' extra blocks) beside the formula the
      // tables and the chart draw, when they differ.
      metric('kv-bytes-total', t(view.kv.seqs === 1 ? 'metric.kv-bytes-total.one' : 'metric.kv-bytes-total', { ctx: ctxText, seqs: seqText }), mx['kv-bytes-total'], 'bytes',
        b && mx['kv-bytes-total'] !== kv.bytes_total ? t('metric.kv-engine', { engine: t('controls.engine.' + b.engine), bytes: bytes(kv.bytes_total) }) : null, 'kv-formula'),
      metric('weights-bytes', t(b && b.gpu.count > 1 ? 'metric.weights-bytes.all' : 'metric.weights-bytes'), mx['weights-bytes'], 'bytes'),
      metric('total-bytes', t('metric.total-bytes'), mx['total-bytes'], 'bytes'),
      mx['max-context-physical'] > mx['max-context']
        ? metric('max-context-physical', t('metric.max-context-physical', { max: tokens(view.budget.model_max_len) }), mx['max-context-physical'], 'int', t('answer.tokens')) : null));
  };

  // The build's first answer (prerender.js) shows what the first screen holds: the cards
  // above and, in the embed, the panels it shows (app.firstSections). The sections below
  // (formula, tables, chart, engine, decode, notes: most of the page's elements) are built
  // just after that frame is painted, by an answer of the same settings (issue 13).
  const whole = !app.core?.standIn || app.resultsWhole;
  if (!whole && !app.resultsQueued) {
    app.resultsQueued = true;
    afterPaint(() => {
      app.resultsWhole = true;
      app.recompute?.();
    });
  }
  const chart = chartData(app, view);
  const old = body.__kvbTree;
  // A step patches part of a page that shows the whole of the last answer, never part of
  // the build's first screen.
  const partial = !!near && whole && app.resultsShownWhole && !!old;
  let out;
  if (partial) {
    // The cards this answer has, in order (the dry run builds nothing), against those shown:
    // the same list, so each card off screen keeps its old tree in its place.
    const keys = ['headline', 'numbers'];
    lowerSections(app, view, (id) => {
      keys.push(id);
      return false;
    }, chart);
    if (keys.length === old.length && old.every((o, i) => cardKey(o) === keys[i])) {
      const fresh = new Map();
      if (near.has('headline')) fresh.set('headline', headline());
      if (near.has('numbers')) fresh.set('numbers', numbers());
      for (const n of lowerSections(app, view, (id) => near.has(id), chart)) fresh.set(cardKey(n), n);
      out = old.map((o) => fresh.get(cardKey(o)) || o);
    }
  }
  const complete = !out;
  if (complete) {
    const want = (id) => whole || !!app.firstSections?.has(id);
    out = [headline(), numbers(), ...lowerSections(app, view, want, chart)];
    app.resultsShownWhole = whole;
  }

  // Tables built anew (not only patched) are watched for overflow.
  if (patchTree(body, out)) markScrollable(body);
  watchCards(app, body);
  // After insertion, so the chart takes the width its card really has.
  if (complete || near.has('chart')) app.chart.update(chart);
  return complete;
}

// Which result card a tree (or an element) of the results body is: its section's id, or
// the headline / numbers card.
function cardKey(n) {
  const attrs = n.attrs || { id: n.id, class: n.className };
  if (attrs.id?.startsWith('sec-')) return attrs.id.slice(4);
  return /\bheadline\b/.test(attrs.class || '') ? 'headline' : 'numbers';
}

// Each result card's place on screen, as an IntersectionObserver last said (it runs after
// layout, so asking never forces one). A card not yet reported counts as on screen.
function watchCards(app, body) {
  if (typeof IntersectionObserver === 'undefined') return;
  if (app.cardsWatch?.body !== body) {
    app.cardsWatch?.io.disconnect();
    app.cardsWatch = { body, io: new IntersectionObserver((entries) => {
      for (const e of entries) e.target.__kvbOnScreen = e.isIntersecting;
    }) };
  }
  for (let el = body.firstElementChild; el; el = el.nextElementSibling) {
    if (el.__kvbWatched) continue;
    el.__kvbWatched = true;
    app.cardsWatch.io.observe(el);
  }
}

// The keys (cardKey) of the result cards on screen: what a slider step renders in its frame.
export function cardsOnScreen(app) {
  const keys = new Set();
  for (let el = app.els.resultsBody?.firstElementChild; el; el = el.nextElementSibling) {
    if (el.__kvbOnScreen !== false) keys.add(cardKey(el));
  }
  return keys;
}

// What the chart draws for `view`. The crossover is quoted only inside the model's range;
// the chart marks where memory runs out.
function chartData(app, view) {
  const kv = view.kv;
  const modelMax = view.budget?.model_max_len || app.model.spec.max_position_embeddings || 0;
  const crossoverInRange = kv.crossover_context > 0 && (!modelMax || kv.crossover_context <= modelMax) ? kv.crossover_context : 0;
  const memoryLimit = view.budget && view.budget.max_context_physical > 0 && view.budget.max_context_physical < (1 << 24) ? view.budget.max_context_physical : 0;
  return { contexts: kv.curve.contexts, kvBytes: kv.curve.bytes, weightsBytes: kv.weights_bytes, capacityBytes: view.chart_capacity_bytes, crossoverContext: crossoverInRange, context: kv.context, contextKvBytes: kv.bytes_total, memoryLimit, modelMax };
}

// The result sections under the headline cards, those `want(id)` names. `want` is asked
// once for each section this answer has, in page order (renderResults reads the list from it).
function lowerSections(app, view, want, chart) {
  const b = view.budget;
  const m = app.model.spec;
  const kv = view.kv;
  const ctxText = tokens(view.kv.context);
  const seqText = int(view.kv.seqs);
  const out = [];
  // What a copied table is about (a blog post's table names the model, the GPU, the engine and the KV cache type);
  // the CSV carries the same as columns.
  const kvType = kv.v_type && kv.v_type.name !== kv.k_type.name ? `${kv.k_type.name}/${kv.v_type.name}` : kv.k_type.name;
  const aboutValues = [[t('export.model'), kv.model], ...(b ? [[t('export.gpu'), gpuDisplayName(app, b)]] : []),
    [t('export.engine'), t('controls.engine.' + kv.engine)], [t('export.kvType'), kvType]];
  const about = { notes: [aboutLine(aboutValues)], context: aboutValues.map(([label, value]) => ({ label, value })) };

  // Formula
  if (want('formula')) {
    const lines = formulaLines(view);
    out.push(section('formula', t('formula.heading'),
      v('p', { class: 'muted' }, t('formula.intro')),
      v('ul', { class: 'formula' }, lines.map((l) => v('li', { 'data-kind': l.kind }, v('code', null, l.text), l.note ? v('span', { class: 'muted' }, ' — ' + l.note) : null))),
      v('p', null, v('strong', null, t('formula.total', { bytes: `${bytes(kv.bytes_per_token)} (${int(kv.bytes_per_token)} B)` })))));
  }

  // Context table
  if (want('context')) {
    const ctxTable = {
      ...about,
      id: 'context',
      caption: t(view.kv.seqs === 1 ? 'table.context.caption.one' : 'table.context.caption', { seqs: seqText }),
      columns: [
        { key: 'context', label: t('col.context'), kind: 'text' },
        { key: 'bytesPerSeq', label: t('col.perSeq'), kind: 'bytes' },
        { key: 'bytesTotal', label: t('col.total'), kind: 'bytes' },
        ...(b ? [{ key: 'vsWeights', label: t('col.vsWeights'), kind: 'percent' }] : []),
      ],
      rows: kv.context_table.map((r) => ({
        context: r.is_model_max ? t('row.modelMax', { ctx: tokens(r.context) }) : tokens(r.context),
        bytesPerSeq: r.bytes_per_seq,
        bytesTotal: r.bytes_total,
        vsWeights: r.vs_weights,
      })),
    };
    out.push(section('context', t('table.context.heading'), renderTable(ctxTable, v)));
  }

  const { crossoverContext: crossoverInRange, modelMax } = chart;
  if (want('chart')) {
    // The chart's buttons read app.chart when pressed: built once per language, then kept.
    const toolsKey = t('chart.heading') + '\n' + t('export.downloadPng');
    if (app.chartTools?.key !== toolsKey) {
      app.chartTools = { key: toolsKey, node: chartToolbar(() => app.chart, 'kv-vs-context', t('chart.heading')) };
      app.chartTools.node.__kvbKept = true;
    }
    out.push(section('chart', t('chart.heading'), app.chartBox, app.chartTools.node,
      v('p', { class: 'muted', 'data-role': 'crossover', 'data-value': String(crossoverInRange) },
        crossoverInRange ? t('chart.crossover', { ctx: int(crossoverInRange) })
          : kv.weights_bytes ? (modelMax ? t('chart.noCrossoverInRange', { max: int(modelMax) }) : t('chart.noCrossover')) : '')));
  }

  // Comparison
  if (want('compare')) {
    const cmpTable = {
      ...about,
      id: 'compare',
      caption: t('table.compare.heading'),
      columns: [
        { key: 'variant', label: t('col.variant'), kind: 'text' },
        { key: 'kvHeads', label: t('col.kvHeads'), kind: 'int' },
        { key: 'bytesPerToken', label: t('col.perToken'), kind: 'bytes' },
        { key: 'bytesTotal', label: t('col.atCtx', { ctx: ctxText, seqs: seqText }), kind: 'bytes' },
      ],
      rows: kv.head_variants.map((r) => ({ variant: t('variant.' + r.variant), kvHeads: r.kv_heads, bytesPerToken: r.bytes_per_token, bytesTotal: r.bytes_total, _class: r.variant === 'actual' ? 'current' : null })),
    };
    out.push(section('compare', t('table.compare.heading'), renderTable(cmpTable, v)));
  }

  if (kv.ladder.length && want('ladder')) {
    out.push(section('ladder', t('table.ladder.heading'), renderTable({
      ...about,
      id: 'ladder',
      caption: t('table.ladder.heading'),
      columns: [
        { key: 'step', label: t('col.step'), kind: 'text' },
        { key: 'bytesPerToken', label: t('col.perToken'), kind: 'bytes' },
        { key: 'kvBytes', label: t('col.kvBytes', { ctx: ctxText, seqs: seqText }), kind: 'bytes' },
        { key: 'saving', label: t('col.savingVsModel'), kind: 'text', align: 'num' },
      ],
      // Each step against the model's own bytes: "50.0 % less", "4.00× as much" (MHA, a contiguous
      // reservation), never a bare percentage a reader could take for the share it keeps.
      rows: kv.ladder.map((r) => ({ step: t('ladder.' + r.step, { detail: r.step === 'contiguous' ? int(Number(r.detail)) : r.detail }), bytesPerToken: r.bytes_per_token, kvBytes: r.kv_bytes,
        saving: r.step === 'model' ? t('ladder.baseline') : r.saving >= 0 ? t('ladder.less', { pct: percent(r.saving) }) : t('ladder.more', { x: fixed(1 - r.saving, 2) }),
        _class: r.step === 'model' ? 'current' : null })),
    }, v)));
  }

  if (b && want('engine')) {
    const logText = b.log_lines.join('\n');
    out.push(section('engine', t('engine.heading'),
      b.engine_error ? v('div', { class: 'engine-error' }, v('p', null, t('engine.error')), v('pre', { 'data-role': 'engine-error' }, b.engine_error)) : null,
      logText ? [v('h4', null, t('engine.logs')), v('pre', { class: 'log', 'data-role': 'engine-log' }, logText)] : null,
      b.command ? [v('h4', null, t('engine.command')), v('div', { class: 'cmd' }, v('pre', { 'data-role': 'command' }, b.command), copyButton(() => b.command))] : null,
      b.notes.length ? [v('h4', null, t('engine.notes')), v('ul', null, b.notes.map((n) => v('li', null, tMsg(n))))] : null));
  }
  if (b && want('decode')) {
    const d = b.decode;
    out.push(section('decode', t('decode.heading'), v('p', { 'data-role': 'decode' },
      d.bandwidth_bytes_per_s > 0
        ? t(d.batch === 1 ? 'decode.text.one' : 'decode.text', { weights: bytes(d.weight_bytes_per_token), kv: bytes(d.kv_bytes_per_token), ctx: tokens(d.context), bw: decimalBytes(d.bandwidth_bytes_per_s),
          tps: fixed(d.tokens_per_s_single, 1), batch: int(d.batch), agg: fixed(d.tokens_per_s_batch, 1) })
          + (d.ram_bandwidth_bytes_per_s > 0 ? ' ' + t(d.ram_bandwidth_assumed ? 'decode.ramAssumed' : 'decode.ram', {
            weights: bytes(d.cpu_weight_bytes_per_token), kv: bytes(d.cpu_kv_bytes_per_token), bw: decimalBytes(d.ram_bandwidth_bytes_per_s) }) : '')
        : t('decode.none'))));
  }

  if (((m.notes || []).length || app.hubInfo?.parameters) && want('notes')) {
    const notes = (m.notes || []).map(tMsg);
    if (app.hubInfo?.parameters) notes.push(t('model.hubParams', { params: int(app.hubInfo.parameters) }));
    out.push(section('notes', t('notes.heading'), v('ul', { class: 'notes' }, notes.map((n) => v('li', null, n)))));
  }
  return out;
}
