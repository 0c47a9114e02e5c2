// The control panel. Controls write into app.state and call onChange (with 'step' for a
// context-slider step, which main.js answers on the cards on screen first); syncControls
// writes the state back (after a model change clamps the context, for instance).
import { h, unbrokenFlags, setText, setHidden } from './dom.js';
import { t, tMsg } from './i18n.js';
import { bytes, tokens, int } from './format.js';
import { SPEC_METHODS } from './state.js';
import { contextStops } from './context-stops.js';
import { afterPaint, fillBeforeOpen } from './lazy.js';

const ENGINES = ['vllm', 'llamacpp', 'transformers'];
const TP_SIZES = [0, 1, 2, 4, 8, 16, 32]; // 0: all the GPUs (vLLM's default is 1; the page sizes one engine over every GPU)
// vLLM's pipeline stages; a link's other count (within the core's limits) gets an option of its own.
const PP_SIZES = [1, 2, 3, 4, 6, 8, 16];
// The GPUs a TP x PP choice needs at least (vLLM's world size; TP 0, all GPUs, needs one a stage). More than
// there are: the GPU count follows, visibly, in its own control.
const ranks = (tp, pp) => Math.max(tp, 1) * pp;
// A count the select does not list, in its place among the listed ones.
function ownOption(select, n) {
  if ([...select.options].some((o) => o.value === String(n))) return;
  const after = [...select.options].find((o) => Number(o.value) > n);
  select.insertBefore(h('option', { value: String(n) }, String(n)), after || null);
}

// The stop at or just below `ctx` (a typed length between stops sits on the lower one).
function stopIndex(stops, ctx) {
  let i = 0;
  while (i + 1 < stops.length && stops[i + 1] <= ctx) i++;
  return i;
}

// A label that is one long word (an engine flag: gpu_memory_utilization) gets the whole
// row, so it is never broken inside the word.
function field(id, label, control, hint) {
  const longWord = label.split(/\s+/).some((w) => w.length > 16);
  return h('div', { class: 'field' + (longWord ? ' wide' : ''), 'data-field': id },
    h('label', { for: id }, unbrokenFlags(label)),
    control,
    hint ? h('p', { class: 'muted hint', id: id + '-hint' }, hint) : null);
}

function numberInput(id, min, max, step = 1) {
  return h('input', { id, type: 'number', inputmode: 'numeric', min, max, step });
}

export function buildControls(app, onChange) {
  const c = {};
  app.ctl = c;
  const set = (key, value) => {
    app.state[key] = value;
    onChange();
  };

  c.gpu = h('select', { id: 'ctl-gpu' });
  c.gpu.addEventListener('change', () => set('gpu', c.gpu.value));
  c.gpuMem = h('input', { id: 'ctl-gpu-mem', type: 'text', inputmode: 'text', spellcheck: 'false', 'aria-describedby': 'ctl-gpu-mem-hint' });
  c.gpuMem.addEventListener('change', () => {
    try {
      const n = app.core.parseSize(c.gpuMem.value);
      c.gpuMem.setCustomValidity('');
      if (n > 0) set('gpuMem', n);
    } catch (e) {
      if (app.waitForCore?.(e, c.gpuMem)) return; // read again once the calculator module is here
      c.gpuMem.setCustomValidity(t('controls.badSize', { text: c.gpuMem.value }));
      c.gpuMem.reportValidity();
    }
  });
  // A Mac of another size than the list's: its RAM (Apple's "24GB" is 24 GiB; the core reads
  // a decimal GB that way) keeps the rule of what Metal may wire.
  c.macRam = h('input', { id: 'ctl-mac-ram', type: 'text', inputmode: 'text', spellcheck: 'false', 'aria-describedby': 'ctl-mac-ram-hint' });
  c.macRam.addEventListener('change', () => {
    try {
      const text = c.macRam.value.trim();
      const n = text === '' ? 0 : app.core.parseSize(text);
      c.macRam.setCustomValidity('');
      set('macRam', n > 0 ? n : 0);
    } catch (e) {
      if (app.waitForCore?.(e, c.macRam)) return;
      c.macRam.setCustomValidity(t('controls.badSize', { text: c.macRam.value }));
      c.macRam.reportValidity();
    }
  });
  // Counts go to the core as typed: it checks the range and says what is wrong.
  const setCount = (key, input) => {
    const n = Number(input.value);
    if (input.value.trim() !== '' && Number.isInteger(n)) {
      input.setCustomValidity('');
      set(key, n);
    } else {
      input.setCustomValidity(t('controls.badCount', { text: input.value }));
      input.reportValidity();
    }
  };
  c.gpuCount = numberInput('ctl-gpu-count', 1, 1);
  c.gpuCount.addEventListener('change', () => setCount('gpuCount', c.gpuCount));
  c.util = numberInput('ctl-util', 0.05, 1, 0.01);
  c.util.setAttribute('aria-describedby', 'ctl-util-hint');
  c.util.setAttribute('inputmode', 'decimal');
  c.util.addEventListener('change', () => {
    // Emptied: back to vLLM's own default, which the placeholder shows.
    if (c.util.value.trim() === '') return set('util', 0);
    const f = Number(c.util.value);
    if (f > 0 && f <= 1) set('util', f);
  });
  c.engine = h('select', { id: 'ctl-engine' }, ENGINES.map((e) => h('option', { value: e }, t('controls.engine.' + e))));
  c.engine.addEventListener('change', () => {
    // A version names one engine's release: another engine starts from its newest.
    if (c.engine.value !== app.state.engine) app.state.engineVersion = '';
    set('engine', c.engine.value);
  });
  c.engineVersion = h('input', { id: 'ctl-engine-version', type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: t('controls.engineVersionPlaceholder'), 'aria-describedby': 'ctl-engine-version-hint' });
  c.engineVersion.addEventListener('change', () => set('engineVersion', c.engineVersion.value.trim()));
  c.weights = h('select', { id: 'ctl-weights' });
  c.weights.addEventListener('change', () => set('weights', c.weights.value));
  c.kv = h('select', { id: 'ctl-kv' });
  c.kv.addEventListener('change', () => set('kv', c.kv.value));
  c.ctk = h('select', { id: 'ctl-ctk' });
  c.ctk.addEventListener('change', () => set('ctk', c.ctk.value));
  c.ctv = h('select', { id: 'ctl-ctv' });
  c.ctv.addEventListener('change', () => set('ctv', c.ctv.value));
  // The first answer's catalog selects hold the chosen option only (syncControls): each
  // whole list is there before anyone can open one (pointer or keyboard) and just after
  // that answer is painted.
  for (const sel of [c.gpu, c.weights, c.kv, c.ctk, c.ctv]) fillBeforeOpen(sel, () => fillLists(app));
  c.ctxSlider = h('input', { id: 'ctl-ctx-slider', type: 'range', min: 0, max: 1, step: 1, 'aria-label': t('controls.ctxSlider') });
  // A step is answered at once, so its answer is in the very next frame (waiting for an
  // animation frame first cost up to a frame of latency per key press). A drag fires
  // several input events per frame: after one answer the next waits for the following
  // frame, which answers once with the latest value, so the last position is always shown.
  let frameBusy = false;
  let dirty = false;
  const nextFrame = () => {
    if (!dirty) {
      frameBusy = false;
      return;
    }
    dirty = false;
    requestAnimationFrame(nextFrame);
    onChange('step');
  };
  c.ctxSlider.addEventListener('input', () => {
    const stops = c.ctxStops || contextStops(0);
    const n = stops[Math.min(stops.length - 1, Math.max(0, Number(c.ctxSlider.value)))];
    c.ctx.value = String(n);
    c.ctx.setCustomValidity('');
    app.state.ctx = n;
    if (frameBusy) {
      dirty = true;
      return;
    }
    frameBusy = true;
    requestAnimationFrame(nextFrame);
    onChange('step');
  });
  // The next stops' answers are computed while the slider waits for its first key (main.js).
  c.ctxSlider.addEventListener('focus', () => app.computeAhead?.());
  // Text, not a number field: 128K, 1M and 32,768 are how people write contexts.
  c.ctx = h('input', { id: 'ctl-ctx', type: 'text', inputmode: 'text', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'ctl-ctx-hint ctl-ctx-max' });
  c.ctx.addEventListener('change', () => {
    let n;
    try {
      n = app.core.parseContext(c.ctx.value);
    } catch (e) {
      if (app.waitForCore?.(e, c.ctx)) return;
      c.ctx.setCustomValidity(e.detail ? tMsg({ ...e.detail, params: { ...e.detail.params, flag: t('controls.ctxShort') } }) : e.message);
      c.ctx.reportValidity();
      return;
    }
    // 0 is the core's "the model's limit" (the CLI's default); the field asks for a number of tokens,
    // so its range starts at 1 and is said here, beside the field, not as the core's 0-based refusal.
    const lim = app.core.catalog().limits.context;
    if (n < 1 || n > lim.max) {
      c.ctx.setCustomValidity(tMsg({ code: 'input_out_of_range', params: { flag: t('controls.ctxShort'), min: int(1), max: int(lim.max), value: c.ctx.value } }));
      c.ctx.reportValidity();
      return;
    }
    c.ctx.setCustomValidity('');
    c.ctx.value = String(n);
    set('ctx', n);
  });
  c.seqs = numberInput('ctl-seqs', 1, 1);
  c.seqs.addEventListener('change', () => setCount('seqs', c.seqs));
  c.tp = h('select', { id: 'ctl-tp' }, TP_SIZES.map((n) => h('option', { value: String(n) }, n === 0 ? t('controls.tpAuto') : String(n))));
  c.tp.addEventListener('change', () => {
    const tp = Number(c.tp.value);
    app.state.gpuCount = Math.max(app.state.gpuCount, ranks(tp, app.state.pp));
    set('tp', tp);
  });
  // vLLM --pipeline-parallel-size: whole layers per stage, as a model spread over nodes is served.
  c.pp = h('select', { id: 'ctl-pp' }, PP_SIZES.map((n) => h('option', { value: String(n) }, String(n))));
  c.pp.addEventListener('change', () => {
    const pp = Number(c.pp.value);
    app.state.gpuCount = Math.max(app.state.gpuCount, ranks(app.state.tp, pp));
    set('pp', pp);
  });
  c.maxNumSeqs = numberInput('ctl-max-num-seqs', 0, 1);
  c.maxNumSeqs.addEventListener('change', () => setCount('maxNumSeqs', c.maxNumSeqs));
  // vLLM speculative decoding: the drafter's layers take pages from the same KV pool.
  c.spec = h('select', { id: 'ctl-spec' }, ['', ...SPEC_METHODS].map((m) => h('option', { value: m }, m ? t('controls.spec_' + m) : t('controls.specNone'))));
  c.spec.addEventListener('change', () => set('spec', c.spec.value));
  // vLLM --enable-expert-parallel: a MoE's routed experts go whole to the tensor-parallel GPUs.
  c.ep = h('select', { id: 'ctl-ep' }, [h('option', { value: '0' }, t('controls.epOff')), h('option', { value: '1' }, t('controls.epOn'))]);
  c.ep.addEventListener('change', () => set('ep', c.ep.value === '1'));

  c.gpuMemField = field('ctl-gpu-mem', t('controls.gpuMem'), c.gpuMem, t('controls.gpuMemHint'));
  c.macRamField = field('ctl-mac-ram', t('controls.macRam'), c.macRam, t('controls.macRamHint'));
  c.kvField = field('ctl-kv', t('controls.kv'), c.kv);
  c.ctkField = field('ctl-ctk', t('controls.ctk'), c.ctk);
  c.ctvField = field('ctl-ctv', t('controls.ctv'), c.ctv);
  c.ctxMax = h('p', { class: 'muted hint', id: 'ctl-ctx-max' });

  return h('section', { class: 'panel controls', 'aria-labelledby': 'controls-h' },
    h('h2', { id: 'controls-h' }, t('controls.legend')),
    h('div', { class: 'grid' },
      field('ctl-gpu', t('controls.gpu'), c.gpu),
      c.gpuMemField,
      c.macRamField,
      field('ctl-gpu-count', t('controls.gpuCount'), c.gpuCount),
      (c.utilField = field('ctl-util', t('controls.util'), c.util, t('controls.utilHint'))),
      field('ctl-engine', t('controls.engine'), c.engine),
      (c.engineVersionField = field('ctl-engine-version', t('controls.engineVersion'), c.engineVersion, t('controls.engineVersionHint'))),
      field('ctl-weights', t('controls.weights'), c.weights),
      c.kvField, c.ctkField, c.ctvField,
      (c.tpField = field('ctl-tp', t('controls.tp'), c.tp)),
      (c.ppField = field('ctl-pp', t('controls.pp'), c.pp, t('controls.ppHint'))),
      field('ctl-seqs', t('controls.seqs'), c.seqs, t('controls.seqsHint')),
      (c.maxNumSeqsField = field('ctl-max-num-seqs', t('controls.maxNumSeqs'), c.maxNumSeqs, t('controls.maxNumSeqsHint'))),
      (c.specField = field('ctl-spec', t('controls.spec'), c.spec, t('controls.specHint'))),
      (c.epField = field('ctl-ep', t('controls.ep'), c.ep, t('controls.epHint')))),
    h('div', { class: 'field ctx' },
      h('label', { for: 'ctl-ctx' }, t('controls.ctx')),
      h('div', { class: 'row' }, c.ctxSlider, c.ctx),
      h('p', { class: 'muted hint', id: 'ctl-ctx-hint' }, t('controls.ctxHint')),
      c.ctxMax));
}

// The card as it is sold: the maker's GB (24 GB), never relabelled as GiB; the name
// already says it for most cards ("RTX 3060 12GB", "H100 SXM5 80GB").
export function gpuLabel(g) {
  if (!g) return '';
  return /\d\s?GB\b/i.test(g.name) || !g.marketed_gb ? g.name : `${g.name} ${g.marketed_gb} GB`;
}

// Options with a `group` go under an <optgroup> of that label, in first-seen order.
// The same list as the last time (gpuList's, on every answer) is not compared again.
function fillSelect(sel, options, value) {
  if (sel.__kvbOptions === options) {
    setValue(sel, value);
    return;
  }
  sel.__kvbOptions = options;
  const key = options.map((o) => o.value + '\t' + o.label).join('\n');
  if (sel.dataset.key !== key) {
    const nodes = [];
    const groups = new Map();
    for (const o of options) {
      const opt = h('option', { value: o.value, title: o.title || null }, o.label);
      if (!o.group) {
        nodes.push(opt);
        continue;
      }
      if (!groups.has(o.group)) {
        const g = h('optgroup', { label: o.group });
        groups.set(o.group, g);
        nodes.push(g);
      }
      groups.get(o.group).append(opt);
    }
    sel.replaceChildren(...nodes);
    sel.dataset.key = key;
  }
  setValue(sel, value);
}

// The GPU list grouped by maker: the group says "NVIDIA", so each option can drop it
// and stay readable in a phone-wide select ("GeForce RTX 4090 24 GB").
function gpuOptions(gpus) {
  return gpus.map((g) => {
    const full = gpuLabel(g);
    const first = full.split(' ')[0];
    const maker = first.toLowerCase() === String(g.vendor).toLowerCase() ? first : '';
    return { value: g.id, label: maker ? full.slice(maker.length + 1) : full, group: maker || g.vendor, title: full };
  });
}

// The GPU select's options, made once per catalog and language, not on every answer (each
// slider step): 60-odd labels, each matched against a regular expression, then joined into
// fillSelect's key (issue 13).
let gpuListMemo = null;
function gpuList(gpus) {
  const label = t('controls.gpuCustom');
  if (gpuListMemo?.gpus !== gpus || gpuListMemo.label !== label) {
    gpuListMemo = { gpus, label, options: gpuOptions(gpus), list: null };
    gpuListMemo.list = [...gpuListMemo.options, { value: '', label }];
  }
  return gpuListMemo;
}

// The catalog selects' whole lists, once (syncControls keeps them in step from then on).
function fillLists(app) {
  const c = app.ctl;
  if (c.listsFull || !app.core) return;
  c.listsFull = true;
  syncLists(app);
}

// The choices a select offers: all of them, or while the build's answer is shown (before
// fillLists) only the chosen one, which is all a closed select shows.
function offered(c, options, value) {
  return c.listsFull ? options : options.filter((o) => o.value === value);
}

// The GPU, weights and KV cache type selects from the catalog, after syncControls has
// brought the state's values to ones the catalog knows.
function syncLists(app) {
  const c = app.ctl;
  const s = app.state;
  const cat = app.core.catalog();
  // A name the core has yet to read (syncControls) is shown as the link wrote it.
  const unread = s.gpu !== '' && !cat.gpus.some((g) => g.id === s.gpu) ? [{ value: s.gpu, label: s.gpu }] : null;
  if (c.listsFull) {
    const list = gpuList(cat.gpus).list;
    fillSelect(c.gpu, unread ? [...unread, ...list] : list, s.gpu);
  } else {
    // The build's answer (prerender.js) is painted before the select's 60-odd labels and
    // their <option>s are made (issue 13).
    const chosen = cat.gpus.find((g) => g.id === s.gpu);
    fillSelect(c.gpu, chosen ? gpuOptions([chosen]) : unread || [{ value: '', label: t('controls.gpuCustom') }], s.gpu);
  }
  const formats = cat.weight_formats.length ? cat.weight_formats.map((w) => ({ value: w, label: w })) : [{ value: 'auto', label: 'auto' }];
  fillSelect(c.weights, offered(c, formats, s.weights), s.weights);
  if (s.engine === 'llamacpp') {
    const names = app.core.kvTypeNames('llamacpp').map((n) => ({ value: n, label: n }));
    fillSelect(c.ctk, offered(c, names, s.ctk), s.ctk);
    fillSelect(c.ctv, offered(c, names, s.ctv), s.ctv);
  } else {
    fillSelect(c.kv, offered(c, app.core.kvTypeNames(s.engine).map((n) => ({ value: n, label: n })), s.kv), s.kv);
  }
}

// syncControls runs on every answer (each slider step): a write of an unchanged value
// still queues DOM work (attribute records, style invalidation), so only changes are written.
function setValue(el, value) {
  if (el.value !== value) el.value = value;
}

function setAttr(el, name, value) {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

// A label's text with its flags kept whole (unbrokenFlags), rebuilt only when it changes.
function setLabel(el, text) {
  if (el.__kvbText !== text) {
    el.__kvbText = text;
    el.replaceChildren(...unbrokenFlags(text));
  }
}

// The gpu_memory_utilization field empty means vLLM's default for the chosen release: the last
// answer's (the core reads it off the release), shown as the placeholder.
export function syncUtilDefault(app) {
  const d = app.view?.budget?.gpu_memory_utilization_default;
  if (app.ctl?.util) setAttr(app.ctl.util, 'placeholder', d > 0 ? String(d) : '');
}

// Writes the state into the controls; corrects state values the core does not know.
export function syncControls(app) {
  const c = app.ctl;
  const s = app.state;
  const core = app.core;
  const cat = core.catalog();

  // '' is the custom size. Another name the CLI's --gpu takes ("h100", "RTX 4090") becomes
  // its catalog id (the address then carries the id); a name the core does not know falls
  // back to the default GPU (share.js lists it as ignored). Only the core reads names: while a
  // stand-in holds the controls (the module on its way) the name stays as the link wrote it.
  if (s.gpu !== '' && !core.standIn && !cat.gpus.some((g) => g.id === s.gpu)) {
    s.gpu = core.findGpu(s.gpu) || (cat.gpus.length ? (cat.gpus.find((g) => g.id === 'rtx-4090') || cat.gpus[0]).id : '');
  }
  if (!core.standIn) c.listsFull = true;
  else if (!c.listsQueued) {
    c.listsQueued = true;
    afterPaint(() => fillLists(app));
  }
  setHidden(c.gpuMemField, s.gpu !== '');
  const mac = cat.gpus.find((g) => g.id === s.gpu)?.vendor === 'apple';
  setHidden(c.macRamField, !mac);
  if (!mac) s.macRam = 0;
  if (document.activeElement !== c.macRam) setValue(c.macRam, s.macRam > 0 ? bytes(s.macRam).replace(/[\s,]/g, '').replace('.00', '') : '');
  if (document.activeElement !== c.gpuMem) setValue(c.gpuMem, bytes(s.gpuMem).replace(/[\s,]/g, '').replace('.00', ''));
  setValue(c.gpuCount, String(s.gpuCount));
  setValue(c.util, s.util > 0 ? String(s.util) : '');
  syncUtilDefault(app);
  setValue(c.engine, s.engine);
  setHidden(c.engineVersionField, s.engine === 'transformers');
  c.engineVersionField.classList.toggle('unset', !s.engineVersion); // the print sheet leaves an empty one out
  if (document.activeElement !== c.engineVersion) setValue(c.engineVersion, s.engineVersion);

  const formats = cat.weight_formats;
  if (!formats.includes(s.weights)) s.weights = formats.length ? formats[0] : 'auto';

  const llama = s.engine === 'llamacpp';
  setHidden(c.utilField, s.engine !== 'vllm');
  setHidden(c.kvField, llama);
  setHidden(c.ctkField, !llama);
  setHidden(c.ctvField, !llama);
  if (llama) {
    const names = core.kvTypeNames('llamacpp');
    if (!names.includes(s.ctk)) s.ctk = 'f16';
    if (!names.includes(s.ctv)) s.ctv = 'f16';
  } else {
    const names = core.kvTypeNames(s.engine);
    if (!names.includes(s.kv)) s.kv = names.includes('auto') ? 'auto' : names[0];
  }
  syncLists(app);
  // A link's other count (tp=6 for a model with 12 heads) is an option of its own, as PP's is:
  // the core takes any count within its limits, and refuses one the model cannot split.
  ownOption(c.tp, s.tp);
  setValue(c.tp, String(s.tp));
  // llama.cpp and transformers place whole layers on each GPU (budgetInputs sends them no TP): no control that does nothing.
  setHidden(c.tpField, s.engine !== 'vllm');
  // Pipeline stages are vLLM's alone (llama.cpp places whole layers on each GPU by itself); shown
  // with more than one GPU, and whenever a link set them, so they can be set back.
  ownOption(c.pp, s.pp);
  setValue(c.pp, String(s.pp));
  setHidden(c.ppField, s.engine !== 'vllm' || (s.gpuCount < 2 && s.pp === 1));
  c.ppField.classList.toggle('unset', s.pp === 1);
  // "All GPUs" with pipeline stages is the GPUs over the stages (the core's tensor_parallel_size 0).
  setText(c.tp.options[0], s.pp > 1 && s.engine === 'vllm' ? t('controls.tpAutoStages', { pp: int(s.pp) }) : t('controls.tpAuto'));
  setValue(c.seqs, String(s.seqs));
  setHidden(c.maxNumSeqsField, s.engine !== 'vllm');
  setValue(c.maxNumSeqs, String(s.maxNumSeqs));
  // llama.cpp drafts here from the model's own MTP block or from n-grams (--spec-type draft-mtp /
  // ngram-mod): an EAGLE-3 draft model's config is not on the page.
  const llamaSpec = s.engine === 'llamacpp';
  setHidden(c.specField, s.engine !== 'vllm' && !llamaSpec);
  for (const o of c.spec.options) setHidden(o, llamaSpec && (o.value === 'eagle' || o.value === 'eagle3'));
  setLabel(c.specField.querySelector('label'), t(llamaSpec ? 'controls.specLlama' : 'controls.spec'));
  setText(c.specField.querySelector('.hint'), t(llamaSpec ? 'controls.specLlamaHint' : 'controls.specHint'));
  // The print sheet leaves out a speculative-decoding field that says "none".
  c.specField.classList.toggle('unset', !s.spec);
  // A URL's METHOD:TOKENS keeps its tokens; the select shows the method.
  setValue(c.spec, s.spec.split(':')[0]);
  // Expert parallelism changes something only for a MoE model on more than one tensor-parallel GPU; once
  // on (a link's ep=1) it stays visible so it can be turned off, and the core's note says where it does nothing.
  const moe = (app.model?.spec.num_experts || 0) > 0;
  const tpSize = s.tp > 0 ? s.tp : Math.max(1, Math.floor(s.gpuCount / s.pp));
  setHidden(c.epField, s.engine !== 'vllm' || (!s.ep && !(moe && tpSize > 1)));
  c.epField.classList.toggle('unset', !s.ep);
  setValue(c.ep, s.ep ? '1' : '0');
  // Bounds from the core's own limits table (the same check refuses out-of-range values).
  const lim = cat.limits;
  for (const [input, name] of [[c.ctx, 'context'], [c.seqs, 'seqs'], [c.gpuCount, 'gpu_count'], [c.maxNumSeqs, 'max_num_seqs']]) {
    if (input.type !== 'number') continue;
    setAttr(input, 'min', String(Math.max(lim[name].min, name === 'context' ? 1 : lim[name].min)));
    setAttr(input, 'max', String(lim[name].max));
  }

  // With a RoPE scaling chosen the model's limit is what the core derived (YaRN: original x
  // factor), known from the last answer; main.js syncs again after each answer while it is set.
  // Before the module has read the link's model, a bundled one's limit is the build's (its catalog entry).
  const native = app.model?.spec.max_position_embeddings || (app.linkModel?.id === s.model ? app.linkModel.max : 0) || 0;
  const derived = s.rope && app.view?.budget?.model_max_len > 0 ? app.view.budget.model_max_len : 0;
  const max = derived || native;
  const stops = contextStops(max);
  c.ctxStops = stops;
  setAttr(c.ctxSlider, 'max', String(stops.length - 1));
  setValue(c.ctxSlider, String(stopIndex(stops, s.ctx)));
  setAttr(c.ctxSlider, 'aria-valuetext', t('controls.ctxTokens', { n: int(s.ctx) }));
  if (document.activeElement !== c.ctx) setValue(c.ctx, String(s.ctx));
  setText(c.ctxMax, app.ctxCapped ? t('controls.ctxCapped', { asked: tokens(app.ctxCapped.asked), max: tokens(app.ctxCapped.max) })
    : derived && derived !== native ? t('controls.ctxModelMaxScaled', { ctx: int(max), native: int(native) })
      : max ? t('controls.ctxModelMax', { ctx: int(max) }) : '');
}
