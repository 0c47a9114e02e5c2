// Page entry: builds the DOM, loads the WASM core, the catalog and the model,
// and re-renders from one state object whenever a control changes.
// The calculator module (linked for size, no simulator): the simulator's worker loads the whole one.
// The calculator module's Emscripten glue (about 7 KB gzip) is bundled here, not a chunk of its
// own: as a chunk, a preset link (an embed) asked for it only once this script ran, one more
// round trip before its first answer (708 against 438 ms, bench/web/bench.mjs); the default
// link, whose first answer does not need it (prerender.js), pays those bytes and stays far
// under the 150 KB before its first answer.
import { KvbudgetError } from '../../wasm/kvbudget-api.js';
import { loadKvbudget } from '../../wasm/kvbudget-calc.js';
import { prerenderedCore, firstAnswers, CoreNotYet } from './prerender.js';
import { t, tMsg, setLanguage, detectLanguage, loadLanguage, hasLanguage } from './i18n.js';
import { shareBar, shareRendered, ignoredNote, languageSwitcher, applyThemeParam } from './share.js';
import { buildEmbed, embedRendered } from './embed.js';
import { h, $, clear, dropClass } from './dom.js';
import { Hub, HubError, MAX_CONFIG_BYTES, loadSiteConfig } from './hub.js';
import { parseModelRef, modelRefText, catalogFileName, validId } from './hubid.js';
import { defaultState, stateFromParams, stateToParams, limitState } from './state.js';
import { budgetInputs } from './budget-inputs.js';
import { buildControls, syncControls, syncUtilDefault } from './controls.js';
import { renderResults, answerCard, cardsOnScreen, renderNoAnswer } from './render.js';
import { bytes } from './format.js';
import { initTheme } from './theme.js';
// The simulator view and the log check panel arrive just after the first answer (lazy.js).
import { buildSimView, simSync, buildCheckPanel, buildLabPanel, afterPaint } from './lazy.js';
import { quantPicker, syncQuantPicker, ggufSourceText } from './gguf-view.js';
import { buildOffloadControls, syncOffload } from './offload-view.js';

// The calculator's compile started while the HTML was parsed (web/boot.js) for a link whose
// answer the build did not compute; the default link's answer is in the page (#kvb-answer,
// prerender.js), a bundled model's at the page's contexts in its answers file (answers/,
// asked for by boot.js), and their module is asked for once that answer is painted (boot below). A server that does not
// send application/wasm still gets a compile.
const early = self.kvbBoot || {};
const calcWasmUrl = new URL('kvbudget-calc.wasm', import.meta.url).href;
const compileCalc = () => (typeof WebAssembly.compileStreaming === 'function'
  ? WebAssembly.compileStreaming(fetch(calcWasmUrl, { credentials: 'same-origin' }))
  : Promise.reject(new Error('no streaming compile'))
).catch(() => fetch(calcWasmUrl, { credentials: 'same-origin' }).then((r) => r.arrayBuffer()).then((b) => WebAssembly.compile(b)));
let calcWasm = null;
// How long a link holds its first frame for what its first answer needs (the module and the
// model's config, or the build's answers file; boot below): past it the page is shown, with the
// link's settings and computing, rather than blank.
const FIRST_ANSWER_WAIT_MS = 150;
// What `promise` gives within `ms`, else `late`.
const within = (promise, ms, late) => Promise.race([promise, new Promise((r) => setTimeout(() => r(late), ms))]);
// true when `promise` is fulfilled within FIRST_ANSWER_WAIT_MS, false when it fails or takes longer.
const withinFirstAnswerWait = (promise) => within(promise.then(() => true, () => false), FIRST_ANSWER_WAIT_MS, false);
// Another language's strings (a chunk of their own, web/boot.js asks for it early) are waited
// for as long as this: past it (a stalled request) the page is built in English rather than left
// blank, and takes the language when its strings come (boot's end). Longer than the first
// answer's wait: an English frame is what a reader of Chinese should see only when it would
// otherwise have been a blank one for seconds.
const LANGUAGE_WAIT_MS = 1000;
const loadCore = () => {
  // A browser that runs no WebAssembly (turned off: Safari's Lockdown Mode, a security policy) is
  // told so on every path that waits for the module, instead of a ReferenceError that left it
  // waiting for good.
  if (typeof WebAssembly === 'undefined') return Promise.reject(new Error(t('app.noWasm')));
  calcWasm ||= early.calcWasm ? early.calcWasm.catch(compileCalc) : compileCalc();
  return loadKvbudget({ wasmUrl: calcWasmUrl, wasmModule: calcWasm });
};
// boot.js started the module's compile: this link's answer needs the module, so it is
// instantiated now, not after the page is built (loadKvbudget loads once; boot awaits the same).
if (early.calcWasm) loadCore().catch(() => {});

// A JSON block the build put into the page (scripts/build-site.mjs), or null.
function pageData(id) {
  const el = document.getElementById(id);
  return el ? { text: el.textContent, data: el.dataset } : null;
}

const app = {
  core: null,
  coreFailure: null, // the calculator module's error once it did not come (coreFailed)
  buildCatalog: null, // the core's catalog as the build wrote it (#kvb-answer), for core.useCatalog (useModule)
  modelAsks: 0, // models asked for (loaded or pasted): boot's own for the link yields to one asked while it waited
  hub: null,
  catalog: [], // [{id, file}]
  model: null, // Model from the core
  linkModel: null, // {id, max}: the link's bundled model and its limit from the build, until the module reads it
  modelSource: null, // {kind: 'catalog'|'hub'|'paste'|'fallback', id, revision, name}
  hubInfo: null,
  quantText: '', // the model's hf_quant_config.json, when its repository has one
  gguf: null, // a GGUF repo's file: {id, revision, choices, choice, ignoredRange}
  state: defaultState(),
  fetchCtrl: null,
  els: {},
};

function setPageState(s) {
  if (document.body.dataset.state !== s) document.body.dataset.state = s;
}

function showError(text) {
  const el = app.els.error;
  // Cleared after every answer (each slider step): an empty one is left alone. A message
  // is written again even when the same, so the alert is read again.
  if (!text && el.hidden && !el.textContent) return;
  el.textContent = text || '';
  el.hidden = !text;
}

function setStatus(text) {
  app.els.status.textContent = text || '';
}

// ---------- model loading ----------

function errorText(e, id) {
  if (e instanceof HubError) {
    return t('hub.' + e.code, { id, status: e.detail?.status ?? '', seconds: Math.round((app.hub?.timeoutMs ?? 0) / 100) / 10,
      quant: e.detail?.quant ?? '', quants: e.detail?.quants ?? '' });
  }
  if (e instanceof KvbudgetError) return t('core.error', { message: e.detail ? tMsg(e.detail) : e.message });
  // Neither the Hub's nor the core's: a part of the page that did not load (a GGUF repo's reader
  // is in the views chunk), not a config that could not be used.
  return t('model.loadFailed', { id, message: e?.message || String(e) });
}

// quant: the checkpoint's hf_quant_config.json text ('' when it has none), which the core reads beside it.
function useConfig(text, name, source, quant = '') {
  const model = app.core.parseConfig(text, name, quant);
  // The simulator's worker parses its own copy in its own module instance.
  app.configText = text;
  app.configName = name;
  app.quantText = quant;
  app.gguf = null;
  useModel(model, source);
}

function useModel(model, source) {
  // The first model is the link's: its ctx and rope are what the link asks for (past the
  // model's limit too: the answer then shows vLLM's refusal and what memory would hold).
  const first = !app.model;
  if (app.model) app.model.release();
  app.model = model;
  app.modelSource = source;
  // A context beyond the new model's limit would only be refused by vLLM: it is brought
  // to the limit, and the context field says so (controls.js).
  const max = model.spec.max_position_embeddings;
  app.ctxCapped = null;
  if (!first) app.state.rope = ''; // a RoPE scaling belongs to the model it was chosen for
  if (max > 0 && !first && source.kind !== 'initial' && app.state.ctx > max) {
    app.ctxCapped = { asked: app.state.ctx, max };
    app.state.ctx = max;
  }
}

async function fetchCatalogConfig(id) {
  const entry = app.catalog.find((c) => c.id === id);
  if (!entry) return null;
  if (app.prefetched?.id === id) {
    const text = await app.prefetched.text;
    app.prefetched = null;
    if (text !== null) return text;
  }
  // A bundled copy that does not come (a network error, a deploy that replaced it) is as good as
  // none: the Hub is asked, and its answer or its error is what the page shows.
  const res = await fetch('catalog/' + entry.file).catch(() => null);
  return res?.ok ? res.text().catch(() => null) : null;
}

// Loads `ref` ({id, revision}); `preferCatalog` serves bundled ids without a
// request (first paint, links); otherwise the Hub is asked and the bundled copy
// is only the fallback when the Hub is unreachable.
async function loadModel(ref, { preferCatalog = false } = {}) {
  app.modelAsks++;
  app.fetchCtrl?.abort();
  const ctrl = new AbortController();
  app.fetchCtrl = ctrl;
  showError('');
  setPageState('loading');
  // Before the calculator module is here only the first model (the page's prerendered
  // default) has an answer: another one waits for the module, as does any model while the
  // stand-in holds only the catalog (boot: a link the build did not answer).
  const needsModule = !app.core || (app.core.standIn && (app.model || app.core.catalogOnly));
  if (needsModule && app.core?.standIn) {
    setBusy(true, t('app.loadingCore'));
    await app.coreLive;
    if (ctrl.signal.aborted) {
      // Cancelled meanwhile (not replaced by a newer load): the module has answered the model on screen.
      if (app.fetchCtrl === ctrl) {
        app.fetchCtrl = null;
        setBusy(false, t('hub.cancelled'));
      }
      return;
    }
  }
  if (needsModule && app.coreFailure) {
    setBusy(false);
    failWithCore();
    return;
  }
  const inCatalog = !ref.revision && app.catalog.some((c) => c.id === ref.id);
  let cancelled = false;
  try {
    if (preferCatalog && inCatalog) {
      const text = await fetchCatalogConfig(ref.id);
      // A load asked for meanwhile (a model typed while the link's own was on its way) owns the page now.
      if (ctrl.signal.aborted) return;
      if (text !== null) {
        app.hubInfo = null;
        useConfig(text, ref.id, { kind: 'catalog', id: ref.id });
        finishLoad(ref);
        return;
      }
    }
    setBusy(true, t('model.fetching', { id: ref.id }));
    await app.hubReady;
    if (ref.quant || ref.file) {
      await loadGguf(ref, ctrl);
      return;
    }
    let got;
    try {
      got = await app.hub.fetchModel(ref.id, ref.revision, {
        signal: ctrl.signal,
        onProgress: (n) => setStatus(t('model.fetchingBytes', { id: ref.id, bytes: bytes(n) })),
      });
    } catch (e) {
      if (e instanceof HubError && e.code === 'gguf') {
        await loadGguf(ref, ctrl);
        return;
      }
      // The bundled copy is the same config.json: a gated repo (401/403 without a token),
      // a rate limit or an unreachable Hub still gets the answer, and the source line says why.
      const fallback = e instanceof HubError && inCatalog && ['network', 'timeout', 'gated', 'rateLimited', 'server'].includes(e.code);
      if (fallback) {
        const text = await fetchCatalogConfig(ref.id);
        if (ctrl.signal.aborted) return;
        if (text !== null) {
          app.hubInfo = null;
          useConfig(text, ref.id, { kind: e.code === 'network' || e.code === 'timeout' ? 'fallback' : 'fallbackRefused', id: ref.id, status: e.detail?.status ?? '' });
          finishLoad(ref);
          return;
        }
      }
      throw e;
    }
    if (ctrl.signal.aborted) return;
    app.hubInfo = got.info;
    useConfig(got.configText, ref.id, { kind: 'hub', id: ref.id, revision: ref.revision || 'main' }, got.quantText);
    finishLoad(ref);
  } catch (e) {
    if (e instanceof HubError && e.code === 'cancelled') {
      cancelled = true;
      // Cancelled by the button: the model on screen is the page's again. Replaced by a newer load: that one says.
      if (app.fetchCtrl === ctrl) setPageState(app.model ? 'ready' : 'error');
      return;
    }
    if (e instanceof HubError && e.code === 'gated') app.els.tokenBox.open = true;
    if (e instanceof HubError && e.code !== 'network') app.els.pasteBox.open = e.code !== 'rateLimited' && e.code !== 'server' && e.code !== 'timeout' ? true : app.els.pasteBox.open;
    // The field shows what could not be loaded (a link's model too), to be corrected there.
    if (!app.els.modelInput.value) app.els.modelInput.value = modelRefText(ref.id, ref.revision, ref.quant);
    failWith(() => errorText(e, ref.id), () => t('answer.noneModel', { id: ref.id }));
  } finally {
    if (app.fetchCtrl === ctrl) {
      app.fetchCtrl = null;
      setBusy(false);
      if (cancelled) setStatus(t('hub.cancelled'));
    }
  }
}

// A GGUF repo: its files as the quant picker, the chosen file's header by range requests,
// llama.cpp as the engine (the file is what llama.cpp loads).
async function loadGguf(ref, ctrl) {
  let got;
  try {
    // The GGUF reader is in the whole module only (the calculator module is what every
    // first answer waits on): the model it builds computes in that module too. The module
    // loads while the file's listing and header come over the network (half a MB and up).
    const { loadGgufModel, loadFullCore } = await import('./views.js');
    const core = loadFullCore();
    core.catch(() => {}); // awaited where the header is read; a failure surfaces there
    got = await loadGgufModel(app.hub, core, ref.id, ref.revision, { quant: ref.quant || '', file: ref.file || '' }, {
      signal: ctrl.signal,
      onProgress: (n, path) => setStatus(t('model.ggufReading', { file: path, bytes: bytes(n) })),
    });
  } catch (e) {
    if (e instanceof HubError && e.code === 'gguf' && e.detail?.base && !ctrl.signal.aborted && (await loadGgufFallback(ref, e.detail, ctrl))) return;
    throw e;
  }
  if (ctrl.signal.aborted) {
    got.model.release();
    return;
  }
  app.hubInfo = null;
  app.configText = null;
  app.configName = null;
  app.quantText = '';
  app.gguf = { id: ref.id, revision: ref.revision || '', choices: got.choices, choice: got.choice, ignoredRange: got.ignoredRange,
    headers: got.headers, modelName: got.modelName };
  useModel(got.model, { kind: 'gguf', id: ref.id, revision: ref.revision || 'main' });
  app.state.engine = 'llamacpp';
  app.state.weights = 'auto';
  syncQuantPicker(app);
  finishLoad({ ...ref, quant: got.choice.quant });
}

// The file's header could not be read: the base model the repo's card names, with the
// chosen quant as the weight format when the core knows it, and the file's size beside it.
// The command still downloads the file the user chose (-hf org/repo:QUANT).
async function loadGgufFallback(ref, d, ctrl) {
  let text = null;
  try {
    text = (await app.hub.fetchModel(d.base, '', { signal: ctrl.signal })).configText;
  } catch {
    text = await fetchCatalogConfig(d.base);
  }
  if (text === null || text === undefined || ctrl.signal.aborted) return false;
  try {
    useConfig(text, d.base, { kind: 'ggufFallback', id: ref.id, base: d.base, file: d.file, size: d.choice.size, cause: d.status || d.cause });
  } catch {
    return false;
  }
  const formats = app.core.catalog().weight_formats;
  app.gguf = { id: ref.id, revision: ref.revision || '', choices: d.choices, choice: d.choice, fallback: { base: d.base } };
  app.state.engine = 'llamacpp';
  app.state.weights = formats.includes(d.choice.quant) ? d.choice.quant : 'auto';
  syncQuantPicker(app);
  finishLoad({ ...ref, quant: d.choice.quant });
  return true;
}

function finishLoad(ref) {
  app.state.model = ref.id;
  app.state.revision = ref.revision || '';
  app.state.quant = app.gguf ? ref.quant || '' : '';
  if (!app.gguf) syncQuantPicker(app);
  app.els.modelInput.value = modelRefText(ref.id, ref.revision, app.state.quant);
  recompute();
}

// text: the error, why: the card's few words when it has no answer yet (each a string or a
// function, called again when a language switch builds the page anew). An answer already on
// the card stays, marked stale; a card still "working out" its first answer says there is none.
function failWith(text, why = () => t('answer.noneSettings')) {
  app.failure = { text, why };
  showFailure();
}

// The calculator module did not come (a network error, a browser without WebAssembly): said on
// every path that would otherwise wait for it for good (a change the build's answers cannot
// answer, another model, a paste), and kept said while the build's answers are shown (their
// next render would have cleared it 60 ms later).
function coreFailed(e) {
  app.coreFailure = e;
  document.body.dataset.core = 'error';
}
const coreFailedText = () => t('app.coreFailed', { message: app.coreFailure.message });
const failWithCore = () => failWith(coreFailedText, () => t('answer.noneCore'));

function showFailure() {
  const words = (x) => (typeof x === 'function' ? x() : x);
  showError(words(app.failure.text));
  if (!renderNoAnswer(app, words(app.failure.why))) app.els.answer?.classList.add('stale');
  setStatus('');
  app.els.results.classList.add('stale');
  setPageState('error');
}

function setBusy(busy, text) {
  app.els.loadBtn.disabled = busy;
  app.els.cancelBtn.hidden = !busy;
  app.els.progress.hidden = !busy;
  if (text !== undefined) setStatus(text);
  else if (!busy) setStatus('');
}

async function usePasted(text, name) {
  app.modelAsks++;
  if (app.core?.standIn) await app.coreLive;
  if (app.coreFailure) {
    failWithCore();
    return;
  }
  showError('');
  try {
    app.hubInfo = null;
    useConfig(text, name, { kind: 'paste', name });
    app.state.model = '';
    app.state.revision = '';
    recompute();
  } catch (e) {
    failWith(() => errorText(e, name), () => t('answer.noneConfig'));
  }
}

// ---------- compute + render ----------

// The Hub's safetensors total is the exact count only for plain float checkpoints of a
// text model: packed int4/int8 tensors (AWQ, GPTQ) and vision towers would miscount it.
function exactHubParameters() {
  const info = app.hubInfo;
  const spec = app.model?.spec;
  if (!info?.parameters || !spec || spec.multimodal || spec.quantization?.method) return 0;
  const dtypes = Object.keys(info.parametersByDtype || {});
  return dtypes.length && dtypes.every((d) => d === 'BF16' || d === 'F16' || d === 'F32') ? info.parameters : 0;
}

// The page's state as the core's BudgetInputs (budget-inputs.js), with the Hub's count.
export function computeInput(s) {
  return budgetInputs(s, exactHubParameters());
}

app.recompute = () => recompute();
app.fetchCatalogConfig = (id) => fetchCatalogConfig(id);

// step: a context-slider step (controls.js), answered in its frame on the cards on screen
// only (render.js renderResults), the rest of the page just after it (finishStep).
export function recompute(step = false) {
  if (!app.model) return;
  // A field the stand-in could not read is still to be applied: no answer until it is.
  if (app.waitingInputs.size) {
    showComputing();
    return;
  }
  let view;
  try {
    syncControls(app);
    view = answerFor(computeInput(app.state));
  } catch (e) {
    if (e instanceof CoreNotYet) {
      showComputing();
      return;
    }
    // The link's first answer: a parameter of its address the core refuses is ignored, as a
    // malformed one is, and the note lists it (embed.md).
    if (app.linkPending && dropRefusedParam()) {
      recompute(step);
      return;
    }
    failWith(() => t('core.controlError', { message: e.detail ? tMsg(e.detail) : e.message }));
    return;
  }
  app.linkPending = false;
  app.failure = null;
  showError(app.coreFailure ? coreFailedText() : '');
  if (app.computing) {
    app.computing = false;
    setStatus('');
  }
  dropClass(app.els.results, 'stale');
  const whole = renderResults(app, view, step ? cardsOnScreen(app) : null);
  if (app.state.rope) syncControls(app); // the slider ends at the limit this answer derived
  syncUtilDefault(app); // this answer's release
  if (app.gguf) app.els.source.textContent = ggufSourceText(app);
  syncOffload(app, view);
  if (app.state.embed) embedRendered(app); else shareRendered(app);
  writeUrl();
  if (step) computeAhead();
  if (!whole) {
    // data-state says "ready" only once everything shown is this answer's.
    setPageState('updating');
    finishStep();
    return;
  }
  simSync(app);
  setPageState('ready');
}

// The core's answers for the context slider's next stops either way, computed after a step's
// frame (or when the slider takes the focus), so the step to one of them calls no core in
// its frame (1.3-1.8 ms of WebAssembly a step, issue 13). Kept by the exact BudgetInputs
// text they answer, for the model they were computed with: any other setting differs in
// that text, so only the very same question gets a kept answer.
let ahead = { model: null, answers: new Map() };
let aheadQueued = false;
// Each answer's BudgetInputs text. The answer shown is kept by its own question, not by the
// settings': between a drag's first step and its next frame the settings are already the
// latest position's (controls.js), and an idle moment (or the 200 ms timeout on a loaded
// machine) can fall in between; keyed by the settings, the next frame was given the shown,
// stale answer back and the page ended on it.
const questionOf = new WeakMap();

function answerFor(input) {
  const key = JSON.stringify(input);
  let answer = ahead.model === app.model && ahead.answers.size ? ahead.answers.get(key) : null;
  answer ||= app.model.compute(input);
  questionOf.set(answer, key);
  return answer;
}

// The parameters of an address that reach the core (budget-inputs.js).
const ANSWER_PARAMS = ['engine', 'ctx', 'seqs', 'kv', 'ctk', 'ctv', 'gpu', 'gpuMem', 'macRam', 'gpuCount', 'util', 'weights', 'tp', 'pp',
  'maxNumSeqs', 'spec', 'ep', 'engineVersion', 'rope', 'ngl', 'ram'];

// The link's first answer failed: the first parameter of its address (in the address's order)
// whose default alone gives an answer (an engine version the core does not know, a count
// the other settings cannot take) goes back to its default and joins the ignored ones.
// false when none does: the settings are then refused as a whole (failWith).
function dropRefusedParam() {
  const base = defaultState();
  const raw = app.urlRaw || {};
  const fromKv = (key) => (key === 'ctk' || key === 'ctv') && Object.hasOwn(raw, 'kv');
  const keys = [...new Set([...Object.keys(raw), ...(Object.hasOwn(raw, 'kv') ? ['ctk', 'ctv'] : [])])];
  for (const key of keys) {
    if (!ANSWER_PARAMS.includes(key) || app.state[key] === base[key]) continue;
    if (!Object.hasOwn(raw, key) && !fromKv(key)) continue;
    try {
      app.model.compute(computeInput({ ...app.state, [key]: base[key] }));
    } catch {
      continue;
    }
    app.ignored.push([fromKv(key) && !Object.hasOwn(raw, key) ? 'kv' : key, raw[key] ?? raw.kv]);
    app.state[key] = base[key];
    return true;
  }
  return false;
}

function computeAhead() {
  if (aheadQueued) return;
  aheadQueued = true;
  const run = () => {
    aheadQueued = false;
    const model = app.model;
    const stops = app.ctl?.ctxStops;
    const state = document.body.dataset.state;
    // The build's stand-in answers only its own settings.
    if (!model || model.standIn || app.core?.standIn || !stops || (state !== 'ready' && state !== 'updating')) return;
    const answers = new Map();
    // The answer shown, for a step back to it.
    const shown = app.view && questionOf.get(app.view);
    if (shown) answers.set(shown, app.view);
    const at = Number(app.ctl.ctxSlider.value);
    for (const i of [at + 1, at - 1]) {
      if (!(i >= 0 && i < stops.length)) continue;
      const input = computeInput({ ...app.state, ctx: stops[i] });
      const key = JSON.stringify(input);
      if (answers.has(key)) continue;
      let answer = ahead.model === model ? ahead.answers.get(key) : null;
      try {
        answer ||= model.compute(input);
      } catch {
        continue; // a setting the core refuses: the step itself says so
      }
      answers.set(key, answer);
    }
    ahead = { model, answers };
  };
  if (typeof requestIdleCallback === 'function') requestIdleCallback(run, { timeout: 200 });
  else afterPaint(run);
}
app.computeAhead = computeAhead;

// The rest of a slider step's answer (the result cards off screen, the simulator's
// settings line). A step after a still moment has it just after the frame that painted the
// cards on screen. Steps in quick succession (a key held down repeats every 30-80 ms, a drag)
// share one, once the slider has been still for STEP_QUIET_MS (at most STEP_MAX_WAIT_MS
// after the first of them): each would otherwise lay out and paint the page below the
// screen again between two steps. It renders the latest answer.
const STEP_QUIET_MS = 100;
const STEP_MAX_WAIT_MS = 500;
let lastStepAt = -Infinity;
let finishSince = 0;
let finishPending = false;
let finishTimer = 0;

function finishStep() {
  const now = performance.now();
  const quick = now - lastStepAt < STEP_QUIET_MS;
  lastStepAt = now;
  if (!finishPending) {
    finishPending = true;
    finishSince = now;
  }
  clearTimeout(finishTimer);
  finishTimer = 0;
  if (quick) finishTimer = setTimeout(finishNow, Math.max(0, Math.min(STEP_QUIET_MS, finishSince + STEP_MAX_WAIT_MS - now)));
  else afterPaint(finishNow);
}

function finishNow() {
  if (!finishPending) return;
  finishPending = false;
  clearTimeout(finishTimer);
  finishTimer = 0;
  // Anything since (another control's answer, an error, a new model) has set the state itself.
  if (document.body.dataset.state !== 'updating' || !app.view) return;
  renderResults(app, app.view);
  if (app.state.embed) embedRendered(app);
  simSync(app);
  setPageState('ready');
}

// A change made before the calculator module has arrived: the answer on screen is marked
// as no longer the settings' (stale, and a status line says it is computing; data-state
// "computing") and the module is asked for now if it was not yet. goLive answers it.
function showComputing() {
  if (app.coreFailure) {
    failWithCore();
    return;
  }
  app.computing = true;
  setPageState('computing');
  app.els.answer?.classList.add('stale');
  app.els.results.classList.add('stale');
  setStatus(t('app.computing'));
  app.wantCore?.();
}

// A text field that needs the core to read it (a size, a context: parseSize, parseContext)
// changed before the module arrived: its change event is dispatched again once it has.
app.waitForCore = (e, input) => {
  if (!(e instanceof CoreNotYet)) return false;
  app.waitingInputs.add(input);
  showComputing();
  return true;
};
app.waitingInputs = new Set();

// The calculator module has arrived (data-core="live"): it takes over from the prerendered
// stand-in, answers the current settings itself (the same bytes as the build's answer for
// the default ones, and its code compiled before the first real change), then reads the
// fields that waited for it, in the order they were changed.
function goLive(core) {
  useModule(core);
  if (app.model?.standIn) {
    try {
      app.model = core.parseConfig(app.configText, app.configName, app.quantText);
    } catch (e) {
      failWith(() => errorText(e, app.configName), () => t('answer.noneConfig'));
      return;
    }
  }
  const waiting = [...app.waitingInputs];
  app.waitingInputs.clear();
  // A model being loaded answers itself (or fails) when it is here: answering the model it replaces
  // now would say "ready" while the Hub is still being asked. A cancelled one leaves that model.
  if (!app.fetchCtrl || app.fetchCtrl.signal.aborted) recompute();
  for (const input of waiting) input.dispatchEvent(new Event('change'));
}

// history.replaceState is a synchronous round trip to the browser process (1-50 ms, at
// times 200, on a loaded machine) and Chromium throttles pages that call it too often.
// Written during a drag (even every 250 ms) it blocked the main thread between slider
// steps: the slow steps of issue 13's profile. So a change after a still moment is
// written just after the frame that shows its answer, and changes in quick succession
// (a drag, keys held down) once the state has been still for URL_QUIET_MS. The write
// reads the state when it runs, so it always ends on the last one.
const URL_QUIET_MS = 300;
let urlTimer = 0;
let urlChangedAt = -Infinity;

function writeUrl() {
  const now = performance.now();
  const still = now - urlChangedAt >= URL_QUIET_MS;
  urlChangedAt = now;
  clearTimeout(urlTimer);
  urlTimer = 0;
  const write = () => {
    urlTimer = 0;
    writeUrlNow();
  };
  if (still) {
    requestAnimationFrame(() => {
      if (urlChangedAt === now) urlTimer = setTimeout(write, 0);
    });
  } else {
    urlTimer = setTimeout(write, URL_QUIET_MS);
  }
}

function writeUrlNow() {
  if (app.modelSource?.kind === 'paste') return;
  const p = stateToParams(app.state).toString();
  const url = location.pathname + (p ? '?' + p : '') + location.hash;
  if (url !== location.pathname + location.search + location.hash) {
    history.replaceState(null, '', url);
  }
}

// ---------- skeleton ----------

function buildPage() {
  document.title = t('app.title');
  const root = $('#app');
  clear(root);
  const els = app.els;

  els.modelInput = h('input', {
    id: 'model-input', type: 'text', name: 'model', autocomplete: 'off', spellcheck: 'false',
    list: 'model-list', 'aria-describedby': 'model-hint', placeholder: 'org/name',
  });
  els.modelList = h('datalist', { id: 'model-list' });
  els.loadBtn = h('button', { type: 'submit', class: 'primary' }, t('model.load'));
  els.cancelBtn = h('button', { type: 'button', hidden: true, onclick: () => app.fetchCtrl?.abort() }, t('model.cancel'));
  els.progress = h('progress', { hidden: true, 'aria-label': t('model.load') });
  els.status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite', 'data-role': 'status' });
  els.error = h('p', { class: 'error', 'data-role': 'error', role: 'alert', hidden: true });
  els.source = h('p', { class: 'source muted', 'data-role': 'source' });

  els.pasteArea = h('textarea', { id: 'paste-config', rows: '6', spellcheck: 'false' });
  els.pasteBox = h('details', { class: 'paste' },
    h('summary', null, t('model.pasteSummary')),
    h('label', { for: 'paste-config' }, t('model.pasteLabel')),
    els.pasteArea,
    h('p', { class: 'muted' }, t('model.dropHint')),
    h('button', { type: 'button', onclick: () => usePasted(els.pasteArea.value, t('model.pasteName')) }, t('model.pasteApply')));

  // A rebuild (language switch) keeps the token the Hub client holds: the box shows it is
  // set (masked) and offers to clear it, so what is sent is never hidden.
  const held = app.hub?.token || '';
  els.token = h('input', { id: 'hub-token', type: 'password', autocomplete: 'off', 'aria-describedby': 'token-hint', value: held });
  els.tokenSet = h('p', { class: 'muted', 'data-role': 'token-set', role: 'status', hidden: !held }, t('model.tokenSet'));
  els.tokenClear = h('button', { type: 'button', 'data-role': 'token-clear', hidden: !held }, t('model.tokenClear'));
  const showToken = () => {
    els.tokenSet.hidden = els.tokenClear.hidden = !app.hub?.token;
  };
  els.token.addEventListener('input', () => {
    app.hub.token = els.token.value.trim();
    showToken();
  });
  els.tokenClear.addEventListener('click', () => {
    app.hub.token = '';
    els.token.value = '';
    showToken();
    els.token.focus();
  });
  els.tokenBox = h('details', { class: 'token', open: !!held },
    h('summary', null, t('model.tokenSummary')),
    h('label', { for: 'hub-token' }, t('model.tokenLabel')),
    h('div', { class: 'row' }, els.token, els.tokenClear),
    els.tokenSet,
    h('p', { id: 'token-hint', class: 'muted' }, t('model.tokenHint')));

  const form = h('form', { class: 'model-form', role: 'search', onsubmit: (ev) => {
    ev.preventDefault();
    const text = els.modelInput.value;
    const ref = parseModelRef(text);
    if (!ref.ok) {
      failWith(() => t('input.' + ref.reason, { text }), () => t('answer.noneModel', { id: text }));
      return;
    }
    // "Qwen3-8B" without its organisation: offer the bundled models of that name
    // (an exact name is not fetched: the Hub has no repo without an owner but a few legacy ones).
    const matches = ref.id.includes('/') ? [] : catalogMatches(ref.id);
    showSuggestions(matches, ref.id);
    if (matches.some((m) => m.toLowerCase().endsWith('/' + ref.id.toLowerCase()))) {
      showError('');
      return;
    }
    loadModel(ref);
  } },
  h('label', { for: 'model-input' }, t('model.inputLabel')),
  h('div', { class: 'row' }, els.modelInput, els.loadBtn, els.cancelBtn),
  h('p', { id: 'model-hint', class: 'muted' }, t('model.inputHint')),
  els.modelList);

  // Drop a config.json anywhere on the model panel.
  els.suggest = h('div', { class: 'suggest', 'data-role': 'suggestions', hidden: true });
  const modelPanel = h('section', { class: 'panel model', 'aria-labelledby': 'model-h' },
    h('h2', { id: 'model-h' }, t('model.legend')),
    form, quantPicker(app, (quant) => loadModel({ id: app.state.model, revision: app.state.revision, quant })),
    els.suggest, els.progress, els.status, els.error, els.source, els.pasteBox, els.tokenBox);
  modelPanel.addEventListener('dragover', (ev) => {
    ev.preventDefault();
    modelPanel.classList.add('dropping');
  });
  modelPanel.addEventListener('dragleave', () => modelPanel.classList.remove('dropping'));
  modelPanel.addEventListener('drop', async (ev) => {
    ev.preventDefault();
    modelPanel.classList.remove('dropping');
    const file = ev.dataTransfer?.files?.[0];
    if (!file) return;
    if (file.size > MAX_CONFIG_BYTES) {
      failWith(() => t('hub.tooLarge', { id: file.name }), () => t('answer.noneConfig'));
      return;
    }
    const text = await file.text();
    els.pasteArea.value = text;
    usePasted(text, file.name);
  });

  els.controls = buildControls(app, (step) => recompute(step === 'step'));
  els.results = h('section', { id: 'results', class: 'results', 'aria-labelledby': 'results-h', tabindex: '-1' },
    h('h2', { id: 'results-h' }, t('results.heading')), ignoredNote(app), shareBar(app));
  els.resultsBody = h('div', { class: 'results-body' });
  els.results.append(els.resultsBody);

  els.answer = answerCard(app);
  root.append(
    h('a', { class: 'skip', href: '#results' }, t('app.skip')),
    h('header', { class: 'top' },
      h('div', null, h('h1', null, t('app.name')), h('p', { class: 'tagline' }, t('app.tagline'))),
      h('div', { class: 'prefs' }, languageSwitcher(switchLanguage), initTheme())),
    h('main', null,
      els.answer,
      h('div', { class: 'inputs' }, modelPanel, els.controls, buildOffloadControls(app, () => recompute())),
      els.results,
      buildSimView(app, { onState: writeUrl, computeInput }),
      buildCheckPanel(app),
      buildLabPanel(app)),
    h('footer', null, h('p', { class: 'muted' }, t('footer.text'))));
  stickyWhileCalculating(els.answer, els.results);
  applyThemeParam(app.state);
}

// The answer stays in view while the calculator's controls and results are; past the
// results (the simulator, the log check) it would only cover what the reader is working
// on, so it goes back to its place. While it is stuck, a field scrolled or focused into
// view lands below it, not under it (scroll-padding). Read once a frame at most.
function stickyWhileCalculating(wrap, results) {
  let pending = false;
  const update = () => {
    pending = false;
    if (!wrap.isConnected) return;
    const height = wrap.offsetHeight;
    const unstuck = results.getBoundingClientRect().bottom < height;
    // Written only when changed: the root's inline style restyles the whole document.
    if (wrap.classList.contains('unstuck') !== unstuck) wrap.classList.toggle('unstuck', unstuck);
    const padding = unstuck ? '' : `${height + 8}px`;
    if (document.documentElement.style.scrollPaddingTop !== padding) document.documentElement.style.scrollPaddingTop = padding;
  };
  const later = () => {
    if (!pending) {
      pending = true;
      requestAnimationFrame(update);
    }
  };
  // A language switch builds the page anew: the old page's watchers go with it.
  app.stopSticky?.();
  addEventListener('scroll', later, { passive: true });
  const ro = typeof ResizeObserver !== 'undefined' ? new ResizeObserver(later) : null;
  ro?.observe(wrap);
  app.stopSticky = () => {
    removeEventListener('scroll', later);
    ro?.disconnect();
  };
}

// Catalog ids whose name part is `name` or contains it (case-insensitive), exact first.
function catalogMatches(name) {
  const low = name.toLowerCase();
  const exact = app.catalog.filter((c) => c.id.toLowerCase().split('/')[1] === low).map((c) => c.id);
  const near = app.catalog.filter((c) => !exact.includes(c.id) && c.id.toLowerCase().split('/')[1]?.includes(low)).map((c) => c.id);
  return [...exact, ...near].slice(0, 8);
}

function showSuggestions(ids, typed) {
  const el = app.els.suggest;
  if (!el) return;
  clear(el);
  el.hidden = !ids.length;
  if (!ids.length) return;
  el.append(h('p', null, t('model.suggest', { name: typed })),
    h('ul', null, ids.map((id) => h('li', null, h('button', { type: 'button', class: 'link', 'data-id': id, onclick: () => {
      showSuggestions([]);
      loadModel({ id, revision: '' }, { preferCatalog: true });
    } }, id)))));
}

function buildView() {
  if (app.state.embed) buildEmbed(app, (step) => recompute(step === 'step'), switchLanguage);
  else buildPage();
}

// Language switch (issue 5): rebuild every string in place, keeping the loaded model.
async function switchLanguage(code) {
  app.lateLanguage = null; // this is the page's language now, whatever boot was waiting for
  // Another language's catalog is a chunk of its own: loaded once, the page says it is busy meanwhile.
  const before = document.body.dataset.state;
  if (!hasLanguage(code)) {
    setPageState('loading');
    code = await loadLanguage(code);
    setPageState(before);
  }
  app.state.lang = setLanguage(code);
  const input = app.els.modelInput?.value || '';
  app.chart?.ro?.disconnect();
  app.chart?.plot?.destroy();
  app.chart = null;
  buildView();
  fillModelList();
  app.els.modelInput.value = input;
  if (app.model) recompute();
  else if (app.failure) showFailure(); // the new card would say "working out" an answer that will not come
  // A language switch is one deliberate step, not a drag: the address bar follows at once.
  writeUrlNow();
}

// The bundled ids as the model field's suggestions (a rebuild makes a new, empty list).
function fillModelList() {
  const list = app.els.modelList;
  if (!list || list.childElementCount) return;
  const frag = document.createDocumentFragment();
  for (const m of app.catalog) frag.append(h('option', { value: m.id }));
  list.append(frag);
}

// ---------- boot ----------

async function boot() {
  // A model loaded or pasted while boot waits (for the build's answers file, the module) is the one to show.
  const asksBefore = app.modelAsks;
  // What waits for the module while a stand-in holds the page (a model loaded or pasted
  // meanwhile) goes on once it is running: coreIsLive is called then, on every path below.
  let coreIsLive;
  app.coreLive = new Promise((resolve) => (coreIsLive = resolve));
  setPageState('loading');
  const params = new URLSearchParams(location.search);
  const { state, ignored, raw } = stateFromParams(params);
  // Numbers outside the core's limits are ignored as malformed ones are, before anything is
  // answered: the limits are in the build's answer block (its catalog), so this needs no module.
  const answerBlock = pageData('kvb-answer');
  const inlineAnswer = answerBlock ? JSON.parse(answerBlock.text) : null;
  app.buildCatalog = inlineAnswer?.catalog ?? null;
  app.urlRaw = raw;
  app.linkPending = true;
  app.urlLimited = !!inlineAnswer?.catalog?.limits;
  if (app.urlLimited) ignored.push(...limitState(state, inlineAnswer.catalog.limits, raw));
  app.state = state;
  app.urlParams = params;
  app.urlState = { ...state };
  app.ignored = ignored;
  const wanted = detectLanguage(params.has('lang') && !ignored.some(([k]) => k === 'lang') ? state.lang : '', navigator.languages || [navigator.language]);
  const strings = loadLanguage(wanted);
  const here = await within(strings, LANGUAGE_WAIT_MS, null);
  state.lang = setLanguage(here ?? 'en');
  if (here === null) app.lateLanguage = strings;
  const inlineCatalog = pageData('kvb-catalog');
  const inlineModels = inlineCatalog ? JSON.parse(inlineCatalog.text) : null;
  // A link answered by a bundled model's answers file (web/boot.js asked for it while the HTML
  // was parsed) waits for it before the page is built, not after: a page built and then left
  // waiting was painted meanwhile (its first style and layout, 50-100 ms on a loaded machine),
  // and the answer then waited for that frame (issue 13). Not for longer than the module's wait
  // below: past that (a slow network) the page is built and shows the link's settings while the
  // file comes, never a blank page.
  let answersFile = null;
  let builtEarly = false;
  if (early.answers?.id === state.model) {
    if (!(await withinFirstAnswerWait(early.answers.data))) {
      buildView();
      builtEarly = true;
      showLinkWhileWaiting(state, inlineModels?.models);
    }
    answersFile = await early.answers.data;
  }
  // The first model's bundled config: in the page for the default model, asked for by
  // web/boot.js for a link's, else fetched now alongside the core (its file name follows
  // from the id), saving a round trip before the first paint.
  const inlineConfig = pageData('kvb-config');
  if (state.revision || !validId(state.model)) {
    app.prefetched = null;
  } else if (inlineConfig?.data.id === state.model) {
    app.prefetched = { id: state.model, text: Promise.resolve(inlineConfig.text) };
  } else if (early.config?.id === state.model) {
    app.prefetched = early.config;
  } else {
    app.prefetched = {
      id: state.model,
      text: fetch('catalog/' + catalogFileName(state.model)).then((r) => (r.ok ? r.text() : null)).catch(() => null),
    };
  }
  // A bundled model's link the build did not answer (web/boot.js started compiling the module
  // and asked for the config) waits a moment for both before the page is built, for the
  // same reason: when they are here within FIRST_ANSWER_WAIT_MS the config is read, the
  // answer computed and the page built in one task, and the first frame shows the answer
  // instead of a "computing" page (whose style and layout cost the answer 40-60 ms on a
  // loaded machine). Past that (a slow network) the page is built and painted meanwhile.
  let moduleHere = false;
  if (!answersFile && early.calcWasm && app.prefetched && (inlineConfig?.data.id === state.model || early.config?.id === state.model)) {
    moduleHere = await withinFirstAnswerWait(Promise.all([loadCore(), app.prefetched.text]));
  }
  if (!builtEarly) buildView();
  setStatus(t('app.loadingCore'));
  // The hub's address is needed only once a model is asked of the hub (loadModel waits
  // for it there): for a first model from the bundled catalog it is asked for after that
  // answer is painted, so it takes no request slot from what the answer needs.
  app.hub = new Hub({});
  const siteConfig = () => loadSiteConfig().then((cfg) => {
    app.hub.baseUrl = cfg.hubUrl;
    app.hub.timeoutMs = cfg.hubTimeoutMs;
  });
  const bundledFirst = !state.revision && !state.quant && !!inlineModels?.models?.some((m) => m.id === state.model);
  app.hubReady = bundledFirst ? new Promise((resolve) => afterPaint(resolve)).then(siteConfig) : siteConfig();
  // The default link (its settings give exactly the inputs the build computed), or a link
  // presetting a bundled model at a context the build answered (its answers file, asked for
  // by web/boot.js): the build's answer is painted first, and the module is asked for after
  // that frame (or at once, when a control is changed before then). Any other link waits
  // for the module, as before.
  const first = firstAnswers(state, JSON.stringify(budgetInputs(state)), {
    inline: inlineAnswer,
    inlineConfig: inlineConfig?.data.id === state.model ? inlineConfig.text : null,
    file: answersFile,
  });
  const prerendered = !!first;
  const catalogP = inlineModels
    || fetch('catalog/index.json').then((r) => (r.ok ? r.json() : { models: [] })).catch(() => ({ models: [] }));
  let core;
  if (prerendered) {
    core = prerenderedCore(first.data, first.configText);
    let asked = null;
    app.wantCore = () => (asked ||= loadCore().then(goLive, (e) => {
      coreFailed(e);
      if (app.computing) failWithCore();
      else showError(coreFailedText());
      return null; // what waited for the module goes on, and finds it failed
    }));
    afterPaint(() => coreIsLive(app.wantCore()));
    // The default link's model has an answers file too (the slider's stops): asked for after
    // the first frame, beside the module, it answers a slider step taken before the module
    // is running instead of "computing" (on a slow network, seconds).
    const entry = !answersFile && inlineModels?.models?.find((m) => m.id === first.data.model && m.ctx?.length);
    if (entry) afterPaint(() => addBuildAnswers(core, entry.file, first));
  } else {
    // Until the module is here (a slow network) the link's settings are shown, once: a second
    // time would write the link's values over fields changed while the answers file came.
    const loading = loadCore().catch((e) => e);
    if (!moduleHere && !builtEarly) showLinkWhileWaiting(state, inlineModels?.models);
    core = await loading;
  }
  const catalog = await catalogP;
  if (core instanceof Error) {
    app.core = null;
    coreFailed(core);
    failWithCore();
    coreIsLive(null);
    return;
  }
  if (prerendered) {
    app.core = core;
  } else {
    useModule(core);
    coreIsLive(core);
  }
  // A page without the build's answer block reads the limits from the module.
  if (!app.urlLimited) {
    app.urlLimited = true;
    app.ignored.push(...limitState(app.state, core.catalog().limits, raw));
    app.urlState = { ...app.state };
  }
  app.catalog = Array.isArray(catalog.models) ? catalog.models : [];
  // The model field's suggestions (a <datalist> of the 44 bundled ids) show only once someone
  // types there: filled after the first answer is painted, not before it (issue 13).
  afterPaint(fillModelList);
  setStatus('');
  // Fields changed while the stand-in held them are read by the module now, before the first answer.
  const waiting = [...app.waitingInputs];
  app.waitingInputs.clear();
  for (const input of waiting) input.dispatchEvent(new Event('change'));
  // A model loaded or pasted while the module was on its way (it waited for it too) is the one to show.
  if (app.modelAsks !== asksBefore) return;
  await loadModel({ id: state.model, revision: state.revision, quant: state.quant }, { preferCatalog: true });
}

// The calculator module becomes the page's core. It takes the build's catalog (the same module's,
// in the page) rather than compiling and serializing its own on the way to an answer.
function useModule(core) {
  if (app.buildCatalog) core.useCatalog(app.buildCatalog);
  app.core = core;
  document.body.dataset.core = 'live';
}

// A bundled model's answers file into the stand-in, when it holds answers for the same config.
async function addBuildAnswers(core, file, first) {
  const data = await fetch('answers/' + file, { credentials: 'same-origin' }).then((r) => (r.ok ? r.json() : null)).catch(() => null);
  if (!data || data.model !== first.data.model || data.config !== first.configText || app.core !== core) return;
  core.addAnswers(data.answers);
  if (app.computing) recompute();
}

// Until the first answer can be computed (a slow network: the module, or the build's answers
// file, still on its way) a stand-in with the build's catalog shows the link's settings in the
// controls, not empty ones (a bundled model's slider ending at its limit), and a field the core
// must read waits for the module (app.waitForCore) and is read once it is.
function showLinkWhileWaiting(state, models) {
  if (!app.buildCatalog) return;
  app.core = { ...prerenderedCore({ model: '', catalog: app.buildCatalog, spec: null, answers: [] }, null), catalogOnly: true };
  const entry = !state.revision && !state.quant && models?.find((m) => m.id === state.model);
  app.linkModel = entry?.max > 0 ? { id: entry.id, max: entry.max } : null;
  showLinkSettings(state);
}

// The link's model and settings in the page's fields while its module loads.
function showLinkSettings(state) {
  app.els.modelInput.value = modelRefText(state.model, state.revision, state.quant);
  try {
    syncControls(app);
  } catch (e) {
    if (!(e instanceof CoreNotYet)) throw e; // a GPU named otherwise than by its catalog id waits for the module
  }
}

// A language whose strings came after the page was built in English (LANGUAGE_WAIT_MS) is taken
// once boot is done with the page, unless its reader chose another meanwhile.
boot().finally(async () => {
  const late = app.lateLanguage;
  const code = await late;
  if (late && app.lateLanguage === late && code !== 'en') switchLanguage(code);
});
