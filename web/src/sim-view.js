// The paging simulator view (issue 4): takes the model, GPU and vLLM settings of
// the calculator, runs `kvbudget simulate` in a Web Worker (sim-worker.js) with a
// progress bar and Cancel, and shows the policies side by side: the Fig. 2 table,
// the memory split over time per policy, running/waiting, latency, and a block map
// with a scrubber over the snapshots. Every number comes from the WASM core.
import uPlot from 'uplot';
import { h, clear, unbrokenFlags, setText } from './dom.js';
import { t, tMsg, has } from './i18n.js';
import { POLICY_PARAMS } from './message.js';
import { bytes, int, fixed, percent } from './format.js';
import { renderTable } from './tables.js';
import { chartToolbar, aboutLine } from './export.js';
import { unpackSnapshots } from '../../wasm/kvbudget-api.js';
import { SIM_WORKLOADS, SIM_POLICIES, SIM_BLOCK_SIZES, simInputFromState, simRunsOnLoad, checkSimField } from './sim-state.js';

const TRACE_FILES = { 'azure-conv': 'traces/azure-llm-2023-conv.csv', 'azure-code': 'traces/azure-llm-2023-code.csv' };
// The block sizes vLLM's --block-size takes: the core's (catalog().sim_block_sizes,
// src/sim/session.cpp), mirrored in sim-state.js for before the core has loaded.
const blockSizes = (app) => app.core?.catalog().sim_block_sizes || SIM_BLOCK_SIZES;

// The memory split, bottom to top of the stacked chart: [i18n key (sim.part.*), series
// column (the core's TimePoint names), colour variable, fallback].
const PARTS = [
  ['tokenStates', 'token_states', '--c-kv', '#1d4ed8'],
  ['reserved', 'reserved', '--c-sim-reserved', '#d97706'],
  ['internalFragmentation', 'internal_fragmentation', '--c-sim-internal', '#dc2626'],
  ['externalFragmentation', 'external_fragmentation', '--c-sim-external', '#7c3aed'],
  ['cached', 'cached', '--c-sim-cached', '#0d9488'],
  ['nullBlock', 'null_block', '--c-sim-null', '#4b5563'],
  ['free', 'free', '--c-free', '#e5e7eb'],
];

// Fig. 2 of the paper, side by side: one row per policy; keys are the CLI's --json names.
const COMPARE_COLUMNS = [
  ['policy', 'text'],
  ['token_states_fraction', 'percent'],
  ['reserved_fraction', 'percent'],
  ['internal_fragmentation_fraction', 'percent'],
  ['external_fragmentation_fraction', 'percent'],
  ['cached_fraction', 'percent'],
  ['free_fraction', 'percent'],
  ['null_block_fraction', 'percent'],
  ['token_states_of_used_fraction', 'percent'],
  ['reserved_of_used_fraction', 'percent'],
  ['internal_fragmentation_of_used_fraction', 'percent'],
  ['external_fragmentation_of_used_fraction', 'percent'],
  ['finished', 'int'],
  ['refused', 'int'],
  ['truncated', 'int'],
  ['preemptions', 'int'],
  ['swapped_out', 'int'],
  ['recomputed_tokens', 'int'],
  ['mean_running', 'fixed1'],
  ['max_running', 'int'],
  ['sharing_saved_fraction', 'percent'],
  ['throughput_tokens_per_s', 'int'],
  ['makespan_s', 'fixed1'],
];
// What fits a screen; the full tables fold under <details> beneath.
const MAIN_COLUMNS = ['policy', 'token_states_of_used_fraction', 'reserved_of_used_fraction', 'internal_fragmentation_of_used_fraction',
  'external_fragmentation_of_used_fraction', 'finished', 'preemptions', 'mean_running', 'throughput_tokens_per_s'];
const MAIN_LATENCY = ['policy', 'ttft_p50_s', 'ttft_p99_s', 'tpot_p50_s', 'e2e_p50_s', 'normalized_latency_s'];
const LATENCY_COLUMNS = [
  ['policy', 'text'],
  ['ttft_mean_s', 'seconds'], ['ttft_p50_s', 'seconds'], ['ttft_p90_s', 'seconds'], ['ttft_p99_s', 'seconds'],
  ['tpot_mean_s', 'millis'], ['tpot_p50_s', 'millis'], ['tpot_p99_s', 'millis'],
  ['e2e_mean_s', 'seconds'], ['e2e_p50_s', 'seconds'], ['e2e_p90_s', 'seconds'], ['e2e_p99_s', 'seconds'],
  ['normalized_latency_s', 'seconds'],
];

function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

// A number field's error line (readField) sits under it, named by the input.
function field(id, label, control, hint) {
  const error = control.type === 'number' ? h('p', { class: 'field-error', id: id + '-error', 'data-role': 'field-error', 'aria-live': 'polite', hidden: true }) : null;
  if (error) control.setAttribute('aria-describedby', error.id);
  return h('div', { class: 'field', 'data-field': id },
    h('label', { for: id }, unbrokenFlags(label)), control,
    hint ? h('p', { class: 'muted hint' }, hint) : null, error);
}

// State key -> its input in the view's elements (sim-state.js SIM_FIELDS checks them), in the view's order.
const NUM_FIELDS = { simReq: 'req', simRate: 'rate', simSeed: 'seed', simSeqs: 'seqs', simTok: 'tok', simN: 'n', simBeam: 'beam', simPrefix: 'prefix', simFrac: 'frac' };

// Reads one number field into the state, or flags it: the core's message for the value
// under the field, in the page's words. Returns whether it was valid.
function readField(app, key) {
  const sv = app.sim;
  const el = sv.els[NUM_FIELDS[key]];
  let limits = null;
  try {
    limits = app.core?.catalog().sim_limits ?? null;
  } catch {
    // The build's stand-in core has no catalog: the mirror of the core's limits is used.
  }
  const r = checkSimField(key, el.value, { unreadable: !!el.validity?.badInput, unreadableText: t('sim.notANumber'), limits });
  const error = el.parentElement.querySelector('[data-role="field-error"]');
  sv.invalid ||= {};
  if (r.message) {
    const text = tMsg(r.message);
    sv.invalid[key] = text;
    el.setAttribute('aria-invalid', 'true');
    setText(error, text);
    error.hidden = false;
    return false;
  }
  delete sv.invalid[key];
  el.removeAttribute('aria-invalid');
  error.hidden = true;
  setText(error, '');
  app.state[key] = r.value;
  return true;
}

// Every number field read again (a value typed but not yet committed counts too); the
// messages of those that are invalid, in the view's order.
function readFields(app) {
  return Object.keys(NUM_FIELDS).filter((key) => !readField(app, key)).map((key) => app.sim.invalid[key]);
}

function num(id, min, max, step = 1) {
  return h('input', { id, type: 'number', min, max, step, inputmode: step === 1 ? 'numeric' : 'decimal' });
}

// ---------- the view ----------

// opts.onState(): the page writes the URL after a setting changed.
// opts.computeInput(state): the calculator's BudgetInputs (main.js), which the run takes.
export function buildSimView(app, opts = {}) {
  const sv = app.sim || (app.sim = { worker: null, result: null, runKey: '', autoRan: false, csv: null });
  sv.onState = opts.onState || (() => {});
  if (opts.computeInput) sv.computeInput = opts.computeInput;
  // A rebuild (language switch) during a run restarts it in the new view.
  const wasRunning = !!sv.worker;
  sv.worker?.terminate();
  sv.worker = null;
  const s = app.state;
  const els = (sv.els = {});
  sv.invalid = {}; // a rebuilt view's fields show the state's values

  // Settings
  els.wl = h('select', { id: 'sim-wl' },
    SIM_WORKLOADS.map((w) => h('option', { value: w }, t('sim.workload.' + w))),
    h('option', { value: 'csv' }, t('sim.workload.csv')));
  els.csvFile = h('input', { id: 'sim-csv-file', type: 'file', accept: '.csv,text/csv' });
  els.csvText = h('textarea', { id: 'sim-csv-text', rows: '4', spellcheck: 'false', placeholder: t('sim.csv.placeholder') });
  els.csvName = h('p', { class: 'muted hint', 'data-role': 'sim-csv-name' });
  els.csvBox = h('div', { class: 'sim-csv', hidden: true },
    h('label', { for: 'sim-csv-file' }, t('sim.csv.file')), els.csvFile,
    h('label', { for: 'sim-csv-text' }, t('sim.csv.paste')), els.csvText,
    h('p', { class: 'muted hint' }, t('sim.csv.hint')), els.csvName);
  els.policies = h('fieldset', { class: 'sim-policies' }, h('legend', null, t('sim.policies')),
    SIM_POLICIES.map((p) => h('label', { class: 'check' },
      h('input', { type: 'checkbox', name: 'sim-pol', value: p }), ' ', t('sim.policy.' + p))));
  els.req = num('sim-req', 1, 1000000);
  els.req.placeholder = t('sim.default');
  els.rate = num('sim-rate', 0, 1000000, 'any');
  els.rate.placeholder = t('sim.rateDefault');
  els.seed = num('sim-seed', 0, 4294967296);
  els.bs = h('select', { id: 'sim-bs' }, blockSizes(app).map((b) => h('option', { value: String(b) }, String(b))));
  els.n = num('sim-n', 1, 64);
  els.beam = num('sim-beam', 1, 64);
  els.prefix = num('sim-prefix', 0, 100000);
  els.frac = num('sim-frac', 0.01, 1, 0.01);
  els.pc = h('input', { id: 'sim-pc', type: 'checkbox' });
  els.seqs = num('sim-seqs', 1, 65536);
  els.seqs.placeholder = t('sim.engineDefault');
  els.tok = num('sim-tok', 1, 1048576);
  els.tok.placeholder = t('sim.engineDefault');
  els.pre = h('select', { id: 'sim-pre' },
    h('option', { value: 'v0' }, t('sim.preemption.v0')),
    h('option', { value: 'recompute' }, t('sim.preemption.recompute')),
    h('option', { value: 'swap' }, t('sim.preemption.swap')));

  els.run = h('button', { type: 'button', class: 'primary', 'data-action': 'sim-run' }, t('sim.run'));
  els.cancel = h('button', { type: 'button', 'data-action': 'sim-cancel', hidden: true }, t('sim.cancel'));
  els.progress = h('progress', { max: '1', value: '0', hidden: true, 'data-role': 'sim-progress', 'aria-label': t('sim.progressLabel') });
  els.status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite', 'data-role': 'sim-status' });
  els.error = h('p', { class: 'error', role: 'alert', hidden: true, 'data-role': 'sim-error' });
  els.uses = h('p', { class: 'muted', 'data-role': 'sim-uses' });
  els.out = h('div', { class: 'sim-out', 'data-role': 'sim-results' });

  const attribution = h('p', { class: 'muted hint sim-attribution', 'data-role': 'sim-attribution' },
    t('sim.attribution'), ' ',
    h('a', { href: 'https://github.com/Azure/AzurePublicDataset', rel: 'noopener', target: '_blank' }, t('sim.attributionLink')),
    ' ', t('sim.attributionLicense'), ' ',
    h('a', { href: 'https://creativecommons.org/licenses/by/4.0/', rel: 'noopener license', target: '_blank' }, t('sim.license')));

  const section = h('section', { id: 'sim', class: 'panel sim', 'aria-labelledby': 'sim-h', 'data-sim-state': 'idle' },
    h('h2', { id: 'sim-h' }, t('sim.heading')),
    h('p', { class: 'muted' }, t('sim.intro')),
    els.uses,
    h('div', { class: 'grid sim-settings' },
      field('sim-wl', t('sim.workload'), els.wl),
      field('sim-req', t('sim.requests'), els.req),
      field('sim-rate', t('sim.rate'), els.rate),
      field('sim-seed', t('sim.seed'), els.seed),
      field('sim-bs', t('sim.blockSize'), els.bs),
      field('sim-seqs', t('sim.maxNumSeqs'), els.seqs),
      field('sim-tok', t('sim.maxNumBatchedTokens'), els.tok),
      field('sim-pre', t('sim.preemption'), els.pre),
      field('sim-n', t('sim.n'), els.n),
      field('sim-beam', t('sim.beam'), els.beam),
      field('sim-prefix', t('sim.sharedPrefix'), els.prefix),
      field('sim-frac', t('sim.sharedFraction'), els.frac),
      h('div', { class: 'field check-field' }, h('label', { class: 'check', for: 'sim-pc' }, els.pc, ' ', t('sim.prefixCaching')))),
    els.csvBox,
    els.policies,
    attribution,
    h('div', { class: 'row wrap sim-actions' }, els.run, els.cancel),
    els.progress, els.status, els.error,
    els.out);
  els.section = section;
  watchIntent(app);

  syncSimControls(app);

  // Settings write into app.state (and the URL); a run uses them. A number field is
  // checked as the core checks it: an invalid one is flagged under the field in the
  // core's words and keeps its old value out of the state, and Run refuses while any
  // field shows a value it would not run (runSim reads them all again).
  const watchNum = (key) => {
    const el = els[NUM_FIELDS[key]];
    el.addEventListener('change', () => {
      readField(app, key);
      changed();
    });
    // A flagged field is cleared as soon as what is typed is right.
    el.addEventListener('input', () => {
      if (el.getAttribute('aria-invalid') === 'true' && readField(app, key)) changed();
    });
    // Text the browser cannot read as a number ('1e') fires no change: said on leaving.
    el.addEventListener('blur', () => {
      if (el.validity?.badInput) readField(app, key);
    });
  };
  const changed = () => {
    if (s.sim) sv.onState();
    // The refusal goes once every field it named is right.
    if (section.dataset.simState === 'invalid' && !Object.keys(sv.invalid).length) {
      showSimError(app, '');
      setSimState(app, sv.result ? 'done' : 'idle');
    }
    markStale(app);
  };
  els.wl.addEventListener('change', () => {
    sv.spare?.postMessage({ type: 'warm', traceUrl: traceUrlFor(els.wl.value) });
    if (els.wl.value === 'csv') {
      els.csvBox.hidden = false;
    } else {
      els.csvBox.hidden = true;
      s.simWl = els.wl.value;
    }
    sv.useCsv = els.wl.value === 'csv';
    changed();
  });
  for (const key of Object.keys(NUM_FIELDS)) watchNum(key);
  els.bs.addEventListener('change', () => {
    s.simBs = Number(els.bs.value);
    changed();
  });
  els.pre.addEventListener('change', () => {
    s.simPre = els.pre.value;
    changed();
  });
  els.pc.addEventListener('change', () => {
    s.simPc = els.pc.checked;
    changed();
  });
  els.policies.addEventListener('change', () => {
    const on = [...els.policies.querySelectorAll('input:checked')].map((i) => i.value);
    if (!on.length) {
      syncSimControls(app);
      return;
    }
    s.simPol = on.join(',');
    changed();
  });

  // A CSV file chosen, dropped anywhere on the section, or pasted.
  const takeCsv = async (file) => {
    if (!file) return;
    // Kept as the File: the worker reads it a slice at a time, so a week of a
    // production trace (gigabytes) never sits in the page's memory.
    sv.csv = { name: file.name, file };
    els.csvText.value = '';
    els.wl.value = 'csv';
    els.csvBox.hidden = false;
    sv.useCsv = true;
    els.csvName.textContent = t('sim.csv.loaded', { name: file.name, size: bytes(file.size) });
    markStale(app);
  };
  els.csvFile.addEventListener('change', () => takeCsv(els.csvFile.files?.[0]));
  els.csvText.addEventListener('input', () => {
    sv.csv = els.csvText.value.trim() ? { name: t('sim.csv.pastedName'), text: els.csvText.value } : null;
    els.csvName.textContent = '';
  });
  section.addEventListener('dragover', (ev) => {
    if (![...(ev.dataTransfer?.types || [])].includes('Files')) return;
    ev.preventDefault();
    section.classList.add('dropping');
  });
  section.addEventListener('dragleave', () => section.classList.remove('dropping'));
  section.addEventListener('drop', (ev) => {
    const file = ev.dataTransfer?.files?.[0];
    if (!file) return;
    ev.preventDefault();
    section.classList.remove('dropping');
    takeCsv(file);
  });

  // Pressing Run leaves the focus in the field being typed in: leaving it would show its
  // error under it at once, which moved Run down before the click landed, so the click
  // was lost (only the field's change was seen). runSim reads every field anyway, and
  // refuses in words naming the field.
  els.run.addEventListener('mousedown', (ev) => ev.preventDefault());
  els.run.addEventListener('click', () => {
    runSim(app);
    // Once a run has read the fields, the field may go: a phone's keyboard closes over the result. A refused run
    // keeps the focus it gave the first field in error.
    const field = document.activeElement;
    if (els.section.dataset.simState === 'running' && field instanceof HTMLInputElement && els.section.contains(field)) field.blur();
  });
  els.cancel.addEventListener('click', () => cancelSim(app, true));

  // A rebuilt page (language switch) shows the last result again.
  if (sv.result) renderSimResult(app, sv.result);
  if (wasRunning) queueMicrotask(() => runSim(app));
  return section;
}

export function syncSimControls(app) {
  const s = app.state;
  const e = app.sim?.els;
  if (!e) return;
  applySimLimits(app);
  e.wl.value = app.sim.useCsv ? 'csv' : s.simWl;
  e.csvBox.hidden = !app.sim.useCsv;
  e.req.value = s.simReq > 0 ? String(s.simReq) : '';
  e.rate.value = s.simRate > 0 ? String(s.simRate) : '';
  e.seed.value = String(s.simSeed);
  if (!blockSizes(app).includes(s.simBs)) e.bs.append(h('option', { value: String(s.simBs) }, String(s.simBs)));
  e.bs.value = String(s.simBs);
  e.n.value = String(s.simN);
  e.beam.value = String(s.simBeam);
  e.prefix.value = s.simPrefix > 0 ? String(s.simPrefix) : '';
  e.frac.value = String(s.simFrac);
  e.pc.checked = s.simPc;
  e.seqs.value = s.simSeqs > 0 ? String(s.simSeqs) : '';
  e.tok.value = s.simTok > 0 ? String(s.simTok) : '';
  e.pre.value = s.simPre;
  const on = s.simPol.split(',');
  for (const i of e.policies.querySelectorAll('input')) i.checked = on.includes(i.value);
}

// What the simulator takes from the calculator: its BudgetInputs (main.js computeInput,
// the core's names, shared with SimInputs) for one vLLM server on one GPU. Utilization
// and KV dtype are vLLM's knobs; other engines' settings do not carry over.
function calculatorInput(app) {
  const b = app.sim.computeInput(app.state);
  const input = { gpu: b.gpu, weights: b.weights, params: b.params };
  if (!b.gpu) input.gpu_memory_bytes = b.gpu_memory_bytes;
  if (b.context > 0) input.max_model_len = b.context;
  if (b.engine === 'vllm') {
    if (b.gpu_memory_utilization > 0) input.gpu_memory_utilization = b.gpu_memory_utilization;
    input.kv_cache_dtype = b.kv_cache_dtype;
  }
  return input;
}

// Number inputs take their ranges from the core (catalog().sim_limits, src/sim/session.cpp).
const LIMITED = { req: 'requests', seed: 'seed', n: 'n', beam: 'beam', prefix: 'shared_prefix', seqs: 'max_num_seqs', tok: 'max_num_batched_tokens' };
function applySimLimits(app) {
  const limits = app.core?.catalog().sim_limits;
  const e = app.sim?.els;
  if (!limits || !e) return;
  for (const [el, name] of Object.entries(LIMITED)) {
    const l = limits[name];
    if (!l || !e[el]) continue;
    // On every answer: written only when they differ (an equal write still queues DOM work).
    if (e[el].min !== String(l.min)) e[el].min = String(l.min);
    if (e[el].max !== String(l.max)) e[el].max = String(l.max);
  }
}

function usesText(app) {
  const s = app.state;
  const gpu = s.gpu ? (app.core?.catalog().gpus.find((g) => g.id === s.gpu)?.name || s.gpu) : bytes(s.gpuMem);
  const parts = [t('sim.uses', { model: app.model?.spec?.name || s.model, gpu, ctx: int(s.ctx) })];
  if (s.engine !== 'vllm') parts.push(t('sim.usesVllmOnly'));
  if (s.gpuCount > 1 || s.tp > 1) parts.push(t('sim.usesOneGpu'));
  return parts.join(' ');
}

// The model the worker builds: config.json text, or a GGUF file's header bytes (every
// shard's) when the model came from a GGUF repo (main.js loadGguf keeps them).
function simGguf(app) {
  const g = app.gguf;
  return g?.headers?.length ? { headers: g.headers, name: g.modelName } : null;
}

function hasSimModel(app) {
  return !!app.configText || !!simGguf(app);
}

function runKey(app) {
  return JSON.stringify([app.configText?.length ?? simGguf(app)?.modelName, app.state.model, calculatorInput(app), simInputFromState(app.state), app.sim.useCsv ? app.sim.csv?.name : '']);
}

function markStale(app) {
  const sv = app.sim;
  if (!sv?.els) return;
  setText(sv.els.uses, usesText(app));
  // A field showing a value the result was not run with (an invalid one) makes it stale too.
  const stale = !!sv.result && (sv.runKey !== runKey(app) || Object.keys(sv.invalid || {}).length > 0);
  sv.els.out.classList.toggle('stale', stale);
  // Said in words at the top of the results, not only greyed out.
  let note = sv.els.out.querySelector('[data-role="sim-stale"]');
  if (stale && !note) {
    note = h('p', { class: 'warning sim-stale', 'data-role': 'sim-stale', role: 'status' }, t('sim.staleNote'));
    sv.els.out.prepend(note);
  }
  if (!stale) note?.remove();
  if (stale && sv.els.section.dataset.simState === 'done') sv.els.status.textContent = t('sim.stale');
}

// Called by the page after every recompute (model or calculator control changed).
export function simSync(app) {
  const sv = app.sim;
  if (!sv?.els) return;
  applySimLimits(app);
  markStale(app);
  if (hasSimModel(app)) warmSpare(app);
  // A link with sim=1 runs the simulator once the model is ready; a large run waits
  // for the user's click (sim-state.js simRunsOnLoad).
  if (app.state.sim && !sv.autoRan && hasSimModel(app)) {
    sv.autoRan = true;
    if (simRunsOnLoad(app.state)) {
      runSim(app);
    } else {
      sv.els.status.textContent = t('sim.largeWaits', { requests: int(app.state.simReq) });
      setSimState(app, 'waiting-click');
    }
  }
}

function setSimState(app, state) {
  app.sim.els.section.dataset.simState = state;
}

function showSimError(app, text) {
  const e = app.sim.els.error;
  e.textContent = text || '';
  e.hidden = !text;
}

const SIM_SNAPSHOTS = 60; // the block map's scrubber

// A worker that has loaded its module ahead of Run (and the selected trace), so a
// run pays for the simulation alone (issue 13: Run to the drawn result within 2x
// the native time). Started once the page is idle after its first answer, never
// before it; a finished run's worker is kept as the next spare.
// A worker whose script did not load (a network error, a deploy that replaced it) fires its error
// once, maybe long before a Run listens: kept as `failed`, so a Run does not wait on it for good.
function newWorker() {
  const worker = new Worker(new URL('sim-worker.js', import.meta.url), { type: 'module' });
  worker.addEventListener('error', () => (worker.failed = true));
  return worker;
}

function traceUrlFor(workload) {
  return TRACE_FILES[workload] ? new URL(TRACE_FILES[workload], document.baseURI).href : null;
}

function warmSpare(app) {
  const sv = app.sim;
  // Not while the page's first answer is the build's (prerender.js): the calculator module,
  // which every control waits for, comes first; the next answer (goLive's) calls this again.
  if (!sv || sv.spare || sv.warmPending || app.core?.standIn) return;
  sv.warmPending = true;
  const start = () => {
    sv.warmPending = false;
    if (sv.spare) return;
    sv.spare = newWorker();
    sv.spare.postMessage({ type: 'warm', traceUrl: traceUrlFor(app.state.simWl) });
    // For bench/web/sim-bench.mjs: when a Run would find the simulator's code warm.
    sv.spare.onmessage = (ev) => {
      if (ev.data?.type === 'warmed') sv.els.section.dataset.simWarmMs = String(Math.round(ev.data.ms));
    };
    warmCode(app);
  };
  if (typeof requestIdleCallback === 'function') requestIdleCallback(start, { timeout: 2000 });
  else setTimeout(start, 200);
}

// The spare worker's simulator code is warmed (up to a second of its CPU, sim-worker.js
// warmUp) only once the visitor is about to use it: the view near the screen, or one of
// its controls touched. Not on every page load: most visits never run the simulator.
// Calls fn once, when el comes within `below` under the bottom of the screen; returns what
// stops the watch, or null where there is no IntersectionObserver (the caller decides).
function onceNear(el, below, fn) {
  if (typeof IntersectionObserver !== 'function') return null;
  const io = new IntersectionObserver((entries) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    io.disconnect();
    fn();
  }, { rootMargin: `0px 0px ${below} 0px` });
  io.observe(el);
  return () => io.disconnect();
}

function watchIntent(app) {
  const sv = app.sim;
  if (sv.wantsRun) return;
  const want = () => {
    if (sv.wantsRun) return;
    sv.wantsRun = true;
    sv.stopIntent?.();
    warmCode(app);
  };
  sv.stopIntent?.();
  sv.stopIntent = onceNear(sv.els.section, '50%', want);
  sv.els.section.addEventListener('pointerdown', want, { once: true });
  sv.els.section.addEventListener('focusin', want, { once: true });
}

function warmCode(app) {
  const sv = app.sim;
  if (!sv.wantsRun || !sv.spare || sv.spare.codeWarm) return;
  const run = warmRun(app);
  if (!run) return;
  sv.spare.codeWarm = true;
  sv.spare.postMessage({ type: 'warm', traceUrl: run.traceUrl, run });
}

// The settings a spare worker warms its code on (sim-worker.js warmUp): the next Run's,
// as far as the worker can read them itself (not a CSV file, not a GGUF-only model).
function warmRun(app) {
  if (app.sim.useCsv || !app.configText) return null;
  const input = { ...calculatorInput(app), ...simInputFromState(app.state), snapshots: SIM_SNAPSHOTS };
  return { configText: app.configText, configName: app.configName, quantText: app.quantText, input, traceUrl: traceUrlFor(input.workload) };
}

function cancelSim(app, byUser) {
  const sv = app.sim;
  if (sv.worker) {
    sv.worker.terminate();
    sv.worker = null;
  }
  sv.els.run.disabled = false;
  sv.els.cancel.hidden = true;
  sv.els.progress.hidden = true;
  if (byUser) {
    sv.els.status.textContent = t('sim.cancelled');
    setSimState(app, 'cancelled');
  }
}

export function runSim(app) {
  const sv = app.sim;
  const els = sv.els;
  if (!hasSimModel(app)) {
    showSimError(app, t('sim.noModel'));
    return;
  }
  // Never a run of other values than the fields show: an invalid one refuses, in words.
  const invalid = readFields(app);
  if (invalid.length) {
    els.status.textContent = '';
    showSimError(app, t('sim.invalidNotRun', { messages: invalid.join(t('sim.ran.sep')) }));
    setSimState(app, 'invalid');
    markStale(app);
    els.section.querySelector('[aria-invalid="true"]')?.focus();
    return;
  }
  cancelSim(app, false);
  showSimError(app, '');
  const input = { ...calculatorInput(app), ...simInputFromState(app.state) };
  let traceUrl = null;
  let traceText = null;
  let traceFile = null;
  if (sv.useCsv) {
    if (!sv.csv) {
      showSimError(app, t('sim.csv.missing'));
      return;
    }
    input.workload = 'csv';
    input.trace_name = sv.csv.name;
    traceText = sv.csv.text ?? null;
    traceFile = sv.csv.file ?? null;
  } else if (TRACE_FILES[input.workload]) {
    traceUrl = traceUrlFor(input.workload);
  }
  input.snapshots = SIM_SNAPSHOTS;
  // A preset run goes into the link; a CSV run cannot.
  if (!sv.useCsv && !app.state.sim) {
    app.state.sim = true;
  }
  sv.onState();
  const key = runKey(app);
  // A spare that failed to load is dropped for a new one: its script is asked for again.
  if (sv.spare?.failed) {
    sv.spare.terminate();
    sv.spare = null;
  }
  const worker = sv.spare || newWorker();
  sv.spare = null;
  sv.worker = worker;
  els.run.disabled = true;
  els.cancel.hidden = false;
  els.progress.hidden = false;
  els.progress.value = 0;
  els.status.textContent = t('sim.starting');
  setSimState(app, 'running');
  const t0 = performance.now();
  // A finished run's worker is kept as the next spare, once it has sent the maps.
  const keep = () => {
    if (sv.spare) worker.terminate();
    else sv.spare = Object.assign(worker, { codeWarm: true });
  };
  let result = null;
  worker.onmessage = (ev) => {
    const m = ev.data;
    if (m.type === 'maps') {
      keep();
      // Drawn unless another run or a cancel replaced this result meanwhile.
      if (result && sv.result === result) {
        result.snapshots = unpackSnapshots(m.packed);
        sv.mapsPending = false;
        sv.els.section.dataset.simPackMs = String(Math.round(m.packMs));
        showBlockMap(app, result);
      }
      return;
    }
    if (sv.worker !== worker) {
      // Packing the maps failed after the result was drawn: the map stays empty.
      if (m.type === 'error' && result) worker.terminate();
      return;
    }
    if (m.type === 'started') {
      els.status.textContent = t('sim.running', { policy: t('sim.policy.' + input.policies[0]), pct: percent(0, 0) });
    } else if (m.type === 'progress') {
      els.progress.value = m.progress;
      els.progress.dataset.value = String(m.progress);
      els.status.textContent = t('sim.running', { policy: m.policy ? t('sim.policy.' + m.policy) : '', pct: percent(m.progress, 0) });
    } else if (m.type === 'done') {
      sv.worker = null; // kept: its module and traces are loaded
      if (!m.maps) keep();
      cancelSim(app, false);
      result = m.result;
      sv.result = m.result;
      sv.mapsPending = !!m.maps;
      sv.runKey = key;
      sv.lastMs = performance.now() - t0;
      // Test and benchmark hooks: wall time from Run to the result, and the worker's split.
      sv.els.section.dataset.simMs = String(Math.round(sv.lastMs));
      sv.els.section.dataset.simTiming = JSON.stringify(m.timing || {});
      els.status.textContent = plural('sim.done', m.result.summary.requests, { seconds: fixed(sv.lastMs / 1000, 2), requests: int(m.result.summary.requests) });
      const r0 = performance.now();
      renderSimResult(app, m.result);
      sv.els.section.dataset.simRenderMs = String(Math.round(performance.now() - r0));
      setSimState(app, 'done');
    } else if (m.type === 'error') {
      cancelSim(app, false);
      els.status.textContent = '';
      // The core's refusal in the page's language, in the calculator's terms; a trace that did not
      // come, or a fault of the worker's own, is no refusal.
      const refused = !!m.detail || !['trace_fetch', 'load_failed', 'internal'].includes(m.code);
      showSimError(app, refused ? t('sim.error', { message: m.detail ? tMsg(named(m.detail)) : m.message }) : t('sim.crashed', { message: m.message }));
      setSimState(app, 'error');
    }
  };
  worker.onerror = (ev) => {
    if (sv.worker !== worker) return;
    cancelSim(app, false);
    els.status.textContent = '';
    // Not the core's refusal: the worker itself stopped (its script did not load, or it threw).
    showSimError(app, t('sim.crashed', { message: ev.message || t('sim.workerFailed') }));
    setSimState(app, 'error');
  };
  const gguf = app.configText ? null : simGguf(app);
  worker.postMessage({ type: 'run', configText: app.configText, configName: app.configName, quantText: app.quantText, gguf, input, traceUrl, traceText, traceFile });
}

// ---------- results ----------

function policyLabel(p) {
  return t('sim.policy.' + p);
}

// A count of one takes the '.one' wording where the language has one ("1 request").
function plural(key, n, params) {
  return t(n === 1 && has(key + '.one') ? key + '.one' : key, params);
}

function rateText(r) {
  return Number.isInteger(r) ? int(r) : String(r);
}

// What was run, in words: the workload, its requests and arrivals, the seed and any
// sampling or sharing settings (c: the core's SimReport, so these are the values the
// simulation used, not the fields').
function runText(c) {
  const workload = SIM_WORKLOADS.includes(c.workload) ? t('sim.workload.' + c.workload) : c.workload;
  const arrivals = c.arrivals === 'poisson' ? t('sim.arrivals.poisson', { rate: rateText(c.rate) }) : t('sim.arrivals.' + c.arrivals);
  const extras = [];
  if (c.n > 1) extras.push(t('sim.ran.n', { n: int(c.n) }));
  if (c.beam > 1) extras.push(t('sim.ran.beam', { beam: int(c.beam) }));
  if (c.shared_prefix > 0) extras.push(t('sim.ran.prefix', { tokens: int(c.shared_prefix), share: percent(c.shared_fraction, 0) }));
  if (c.prefix_caching) extras.push(t('sim.prefixCaching'));
  if (c.preemption && c.preemption !== 'v0') extras.push(t('sim.ran.preemption', { preemption: t('sim.preemption.' + c.preemption) }));
  return plural('sim.ran', c.requests, { workload, requests: int(c.requests), arrivals, seed: c.seed, extras: extras.map((e) => t('sim.ran.sep') + e).join('') });
}

function configText(c) {
  return t('sim.config', {
    kv: bytes(c.kv_cache_bytes), slots: int(Math.floor(c.kv_cache_bytes / c.kv_bytes_per_token)), perToken: bytes(c.kv_bytes_per_token),
    bs: c.block_size, mml: int(c.max_model_len), seqs: int(c.max_num_seqs), tokens: int(c.max_num_batched_tokens),
    gpu: c.time_model_gpu,
  });
}

// A file name per run: two runs of one model no longer export under the same name. The
// settings people tell runs apart by, and a short hash of all of them (GPU, context, ...).
function runSlug(c, key) {
  let hsh = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hsh = Math.imul(hsh ^ key.charCodeAt(i), 0x01000193) >>> 0;
  const arrivals = c.arrivals === 'poisson' ? `${c.rate}rps` : c.arrivals;
  return [c.workload.replace(/\.csv$/i, ''), `${c.requests}req`, arrivals, `bs${c.block_size}`, `seed${c.seed}`, hsh.toString(16).padStart(8, '0').slice(0, 6)].join('-');
}

// The GPU the run is of: the one the KV cache was sized on, else the time model's.
function runGpu(c) {
  return c.from_gpu && c.gpu_name ? c.gpu_name : c.time_model_gpu;
}

// What a table's export is about, above its settings: a blog post's copy names the model.
function modelText(c) {
  return aboutLine([[t('export.model'), c.model], [t('export.gpu'), runGpu(c)]]);
}

// The run's settings as CSV columns (export.js tableCsv): the core's raw values.
function runColumns(c) {
  const f = (k) => t('field.' + k);
  return [
    { label: t('export.model'), value: c.model },
    { label: t('export.gpu'), value: runGpu(c) },
    { label: f('workload'), value: c.workload },
    { label: f('requests'), value: c.requests },
    { label: t('sim.export.arrivals'), value: c.arrivals },
    { label: t('sim.rate'), value: c.rate },
    { label: f('seed'), value: c.seed },
    { label: t('sim.blockSize'), value: c.block_size },
    { label: f('n'), value: c.n },
    { label: f('beam'), value: c.beam },
    { label: f('shared_prefix'), value: c.shared_prefix },
    { label: t('export.colRatio', { label: f('shared_fraction') }), value: c.shared_fraction },
    { label: t('sim.prefixCaching'), value: c.prefix_caching },
    { label: f('preemption'), value: c.preemption },
    { label: t('sim.export.gpu'), value: c.time_model_gpu },
    { label: t('export.colBytes', { label: f('kv_cache_memory') }), value: c.kv_cache_bytes },
    { label: f('max_model_len'), value: c.max_model_len },
    { label: f('max_num_seqs'), value: c.max_num_seqs },
    { label: f('max_num_batched_tokens'), value: c.max_num_batched_tokens },
  ];
}

// A core message with its policy names in the page's words ("Paged (vLLM)"): one
// policy's name, or a list ("paged, pow2 and oracle") joined as the page's language joins.
function named(m) {
  const word = (k, v) => {
    if (k === 'policies') {
      const labels = String(v).split(/, | and /).map(policyLabel);
      return labels.length < 2 ? labels.join('') : labels.slice(0, -1).join(t('sim.listSep')) + t('sim.listAnd') + labels.at(-1);
    }
    return POLICY_PARAMS.includes(k) ? policyLabel(v) : v;
  };
  return { ...m, params: Object.fromEntries(Object.entries(m.params || {}).map(([k, v]) => [k, word(k, v)])) };
}

function renderSimResult(app, result) {
  const sv = app.sim;
  const out = sv.els.out;
  for (const c of sv.charts || []) c.destroy();
  sv.charts = [];
  sv.player?.stop();
  clear(out);
  out.classList.remove('stale');
  const c = result.summary;
  const notes = [runText(c), configText(c)];
  const slug = runSlug(c, sv.runKey || '');
  out.append(h('p', { class: 'sim-config', 'data-role': 'sim-config' },
    h('span', { 'data-role': 'sim-run' }, notes[0]), h('br'), notes[1]));
  if (c.windowed_or_state_left_out) out.append(h('p', { class: 'muted hint' }, t('sim.windowNote')));
  // What the core noted about the workload as it read it (a trace out of time order).
  for (const n of c.notes || []) out.append(h('p', { class: 'muted hint', 'data-role': 'sim-note', 'data-code': n.code }, tMsg(n)));

  // One entry per policy: its summary, series and snapshots (parallel arrays in the core's JSON).
  const policies = c.policies.map((summary, i) => ({ summary, series: result.series?.[i], snapshots: result.snapshots?.[i] }));
  const rows = policies.map((p) => ({ ...p.summary, policy: policyLabel(p.summary.policy) }));

  // What the run found, in the core's words (sim/conclusions.cpp); an overload first.
  // Policy names in the page's words ("Paged (vLLM)"), the numbers as the core wrote them.
  const found = (c.conclusions || []).map(named);
  const overload = found.filter((m) => m.code === 'sim_overload');
  const conclusions = h('div', { class: 'sim-conclusions', 'data-role': 'sim-conclusions' },
    overload.map((m) => h('p', { class: 'warning', 'data-role': 'sim-overload', 'data-code': m.code, role: 'note' }, tMsg(m))),
    h('ul', null, found.filter((m) => m.code !== 'sim_overload').map((m) => h('li', { 'data-code': m.code }, tMsg(m)))));
  out.append(h('h3', null, t('sim.conclusions.heading')), conclusions);

  // Every export carries the run's settings (notes; CSV columns) and a name of its own.
  const context = runColumns(c);
  const tableNotes = [modelText(c), ...notes];
  const table = (id, caption, cols, keys) => {
    const el = renderTable({ id, caption, columns: cols.filter(([k]) => keys.includes(k)).map(([key, kind]) => ({ key, kind, label: t('sim.col.' + key) })), rows, notes: tableNotes, context, fileStem: id + '-' + slug });
    el.dataset.columns = cols.filter(([k]) => keys.includes(k)).map(([k]) => k).join(',');
    return el;
  };
  // Refusals in the main table whenever a policy refused requests: a policy that served
  // few or none must not read as a quiet row of dashes.
  const mainColumns = c.policies.some((p) => p.refused > 0) ? MAIN_COLUMNS.flatMap((k) => (k === 'finished' ? [k, 'refused'] : [k])) : MAIN_COLUMNS;
  const compareTable = table('sim-compare', t('sim.table.caption'), COMPARE_COLUMNS, mainColumns);
  const compareAll = table('sim-compare-all', t('sim.table.captionAll'), COMPARE_COLUMNS, COMPARE_COLUMNS.map(([k]) => k));
  const latencyTable = table('sim-latency', t('sim.latency.caption'), LATENCY_COLUMNS, MAIN_LATENCY);
  const latencyAll = table('sim-latency-all', t('sim.latency.caption'), LATENCY_COLUMNS, LATENCY_COLUMNS.map(([k]) => k));
  out.append(h('h3', null, t('sim.table.heading')), compareTable,
    h('details', { class: 'sim-more' }, h('summary', null, t('sim.table.all')), compareAll),
    h('p', { class: 'muted hint' }, t('sim.table.hint')));

  // A chart's export is drawn again off screen at one size, whatever the screen's width.
  const toolbar = (name, title, make, legend) => chartToolbar(() => exportChart(make, { legend, notes }), name, title, { fileStem: () => name + '-' + slug });

  // Memory split over time, one small chart per policy.
  const grid = h('div', { class: 'sim-charts' });
  out.append(h('h3', null, t('sim.memory.heading')), memoryLegend(), grid);
  // A policy that ran no step (it refused every request) has no time to draw: a line says so instead of an empty box.
  const nothingRan = (p, title) => (p.series.time_s.length ? null
    : h('figure', { class: 'sim-figure', 'data-chart-none': p.summary.policy }, h('figcaption', null, title),
      h('p', { class: 'muted' }, t('sim.chart.none', { policy: policyLabel(p.summary.policy) }))));
  for (const p of policies) {
    const title = t('sim.memory.title', { policy: policyLabel(p.summary.policy) });
    const none = nothingRan(p, title);
    if (none) {
      grid.append(none);
      continue;
    }
    const box = h('div', { class: 'sim-chart', 'data-chart': 'sim-memory-' + p.summary.policy });
    const holder = { plot: null };
    const make = (w, ht) => memoryChart(p.series, w, ht);
    grid.append(h('figure', { class: 'sim-figure' }, h('figcaption', null, title), box,
      toolbar('sim-memory-' + p.summary.policy, title, make, memoryLegendItems())));
    sv.charts.push(lazyChart(box, holder, make));
  }

  // Running and waiting requests: one small chart per policy on its own scale, so one
  // policy's long queue does not flatten the others.
  const queueGrid = h('div', { class: 'sim-charts', 'data-chart': 'sim-queue' });
  out.append(h('h3', null, t('sim.queue.heading')), queueGrid);
  for (const p of policies) {
    const title = t('sim.queue.title', { policy: policyLabel(p.summary.policy) });
    const none = nothingRan(p, title);
    if (none) {
      queueGrid.append(none);
      continue;
    }
    const box = h('div', { class: 'sim-chart', 'data-chart': 'sim-queue-' + p.summary.policy });
    const holder = { plot: null };
    const make = (w, ht) => queueChart(p, w, ht);
    queueGrid.append(h('figure', { class: 'sim-figure' }, h('figcaption', null, title), box,
      toolbar('sim-queue-' + p.summary.policy, title, make, null)));
    sv.charts.push(lazyChart(box, holder, make));
  }

  out.append(h('h3', null, t('sim.latency.heading')), latencyTable,
    h('details', { class: 'sim-more' }, h('summary', null, t('sim.table.all')), latencyAll));

  out.append(blockMap(app, policies, sv.mapsPending));
}

// An exported chart's size in CSS pixels: wide enough for its title, settings and
// legend to read at 1x, the same from a phone or a wide screen.
const EXPORT_WIDTH = 800;
const EXPORT_HEIGHT = 320;

// The chart drawn for an export alone, in a box off screen (uPlot lays its axes out in
// the page), dropped by the toolbar once written (dispose).
async function exportChart(make, extra) {
  const box = h('div', { 'aria-hidden': 'true', style: `position:fixed;left:-10000px;top:0;width:${EXPORT_WIDTH}px;pointer-events:none` });
  document.body.append(box);
  let plot;
  try {
    const { opts, data } = make(EXPORT_WIDTH, EXPORT_HEIGHT);
    plot = new uPlot({ ...opts, legend: { show: false } }, data, box);
  } catch (e) {
    box.remove();
    throw e;
  }
  // uPlot draws in a microtask after it is made: drawn by the next frame.
  await new Promise((r) => requestAnimationFrame(() => r()));
  return {
    plot, legend: extra.legend || undefined, notes: extra.notes,
    dispose: () => {
      plot.destroy();
      box.remove();
    },
  };
}

// The block maps arrived after the result was drawn: the map's place filled in.
function showBlockMap(app, result) {
  const old = app.sim.els.out.querySelector('[data-role="sim-blockmap-wrap"]');
  if (!old) return;
  const policies = result.summary.policies.map((summary, i) => ({ summary, snapshots: result.snapshots?.[i] }));
  old.replaceWith(blockMap(app, policies, false));
}

// Draws once the box nears the screen, redraws when its width changes; destroy() on
// re-render. A Run's result opens above its charts, which sit below the fold on a phone
// and on a 1280 x 720 screen: making both uPlots there (and the layout they force) was
// 20-25 ms of the frame that first showed the result. The box keeps its height, so one
// drawn a frame late on a fast scroll moves nothing. A printout asks for the chart
// itself (holder.ready), drawn then if it was not yet; an export draws its own (exportChart).
function lazyChart(box, holder, make) {
  let last = 0;
  let near = false;
  const draw = () => {
    if (!near) return;
    const w = Math.max(240, box.clientWidth || 320);
    if (Math.abs(w - last) < 8 && holder.plot) return;
    last = w;
    holder.plot?.destroy();
    clear(box);
    const { opts, data } = make(w);
    holder.plot = new uPlot(opts, data, box);
  };
  const nearNow = () => {
    near = true;
    requestAnimationFrame(draw);
  };
  const stopWatch = onceNear(box, '25%', nearNow);
  if (!stopWatch) nearNow();
  holder.ready = () => {
    near = true;
    draw();
    return holder.plot;
  };
  // A printout has every chart, scrolled past or not.
  const print = () => holder.ready();
  addEventListener('beforeprint', print);
  const ro = typeof ResizeObserver !== 'undefined' ? new ResizeObserver(() => requestAnimationFrame(draw)) : null;
  ro?.observe(box);
  return { destroy: () => { stopWatch?.(); ro?.disconnect(); removeEventListener('beforeprint', print); holder.plot?.destroy(); } };
}

// The stacked parts bottom to top, as the page's legend lists them (an export's legend).
function memoryLegendItems() {
  return PARTS.map(([key, , v, fb]) => ({ label: t('sim.part.' + key), fill: cssVar(v, fb) }));
}

function memoryLegend() {
  return h('ul', { class: 'legend' }, PARTS.map(([key, , v, fb]) =>
    h('li', null, h('span', { class: 'swatch', style: `background:${cssVar(v, fb)}`, 'aria-hidden': 'true' }), t('sim.part.' + key))));
}

function axes(yLabel, yValues) {
  const axisColor = cssVar('--fg-muted', '#555');
  const gridColor = cssVar('--grid', '#ddd');
  return [
    // Axes sized to their text (uPlot's default room for them left a phone's plot ~100 px high).
    { stroke: axisColor, grid: { stroke: gridColor }, size: 30, label: t('sim.axis.time'), labelSize: 20, values: (u, vals) => vals.map((v) => (v == null ? '' : fixed(v, v >= 100 ? 0 : 1))) },
    { stroke: axisColor, grid: { stroke: gridColor }, size: 48, label: yLabel, labelSize: 20, values: yValues },
  ];
}

// Stacked areas: each series is the running sum up to its part, drawn top part
// first so the lower ones paint over it; the legend shows the part itself.
function memoryChart(series, width, height = 180) {
  const x = series.time_s.map((t0, i) => t0 + series.duration_s[i] / 2);
  const parts = PARTS.map(([, column]) => series[column]);
  const cum = [];
  let acc = x.map(() => 0);
  for (const p of parts) {
    acc = acc.map((a, i) => a + p[i]);
    cum.push(acc);
  }
  const order = PARTS.map((_, i) => PARTS.length - 1 - i);
  const data = [x, ...order.map((i) => cum[i])];
  const opts = {
    width, height,
    scales: { x: { time: false }, y: { range: [0, 1] } },
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    axes: axes(t('sim.axis.share'), (u, vals) => vals.map((v) => (v == null ? '' : percent(v, 0)))),
    series: [
      { label: t('sim.axis.time') },
      ...order.map((i) => {
        const color = cssVar(PARTS[i][2], PARTS[i][3]);
        return {
          label: t('sim.part.' + PARTS[i][0]), stroke: color, fill: color, width: 0, points: { show: false },
          value: (u, v, si, idx) => (idx == null ? '' : percent(parts[i][idx])),
        };
      }),
    ],
  };
  return { opts, data };
}

function queueChart(p, width, height = 180) {
  const x = p.series.time_s.map((t0, i) => t0 + p.series.duration_s[i] / 2);
  const color = ['#1d4ed8', '#b45309', '#7c3aed', '#0d9488'][SIM_POLICIES.indexOf(p.summary.policy) % 4];
  // Until the pointer picks a moment, the legend shows the run's time-weighted means.
  const legendValue = (mean) => (u, v, si, idx) => fixed(idx == null ? mean : v ?? 0, 1);
  const opts = {
    width, height,
    scales: { x: { time: false }, y: { range: (u, min, max) => [0, Math.max(1, max * 1.05)] } },
    legend: { show: true, live: true },
    cursor: { drag: { x: false, y: false } },
    axes: axes(t('sim.axis.requests'), (u, vals) => vals.map((v) => (v == null ? '' : int(v)))),
    series: [
      { label: t('sim.axis.time'), value: (u, v, si, idx) => (idx == null ? t('sim.queue.mean') : fixed(v, v >= 100 ? 0 : 1)) },
      { label: t('sim.queue.runningShort'), stroke: color, width: 2, spanGaps: true, points: { show: false }, value: legendValue(p.summary.mean_running) },
      { label: t('sim.queue.waitingShort'), stroke: color, width: 1.5, dash: [5, 4], spanGaps: true, points: { show: false }, value: legendValue(p.summary.mean_waiting) },
    ],
  };
  return { opts, data: [x, p.series.running, p.series.waiting] };
}

// ---------- block map ----------

function hsl(hue, s, l) {
  s /= 100;
  l /= 100;
  const k = (n) => (n + hue / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n) => Math.round(255 * (l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)))));
  return [f(0), f(8), f(4)];
}

function rgb(css) {
  const m = /^#([0-9a-f]{6})$/i.exec(css.trim());
  if (!m) return [200, 200, 200];
  const n = parseInt(m[1], 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

// A request's colour: golden-angle hues so neighbours differ.
function requestColor(id, shade = 0) {
  return hsl((id * 137.508) % 360, 62, 46 + shade);
}

function mix(c, to, f) {
  return [0, 1, 2].map((i) => Math.round(c[i] + (to[i] - c[i]) * f));
}

// pending: the maps are on their way from the worker (showBlockMap draws them).
function blockMap(app, all, pending) {
  const sv = app.sim;
  const policies = all.filter((p) => p.snapshots?.length);
  const wrap = h('div', { class: 'sim-blockmap', 'data-role': 'sim-blockmap-wrap' });
  wrap.append(h('h3', null, t('sim.map.heading')));
  if (!policies.length) {
    if (pending) wrap.setAttribute('aria-busy', 'true');
    else wrap.append(h('p', { class: 'muted' }, t('sim.map.none')));
    return wrap;
  }
  const sel = h('select', { id: 'sim-map-policy' }, policies.map((p) => h('option', { value: p.summary.policy }, policyLabel(p.summary.policy))));
  const scrub = h('input', { id: 'sim-map-step', type: 'range', min: '0', max: '0', step: '1', value: '0', 'data-role': 'sim-scrubber' });
  const play = h('button', { type: 'button', 'data-action': 'sim-play' }, t('sim.map.play'));
  const label = h('p', { class: 'muted hint', 'data-role': 'sim-map-label', 'aria-live': 'off' });
  const canvas = h('canvas', { class: 'sim-canvas', 'data-role': 'sim-blockmap', role: 'img', 'aria-label': t('sim.map.label') });
  const legend = h('ul', { class: 'legend' });
  wrap.append(
    h('div', { class: 'row wrap' },
      h('div', { class: 'field' }, h('label', { for: 'sim-map-policy' }, t('sim.map.policy')), sel),
      h('div', { class: 'field grow' }, h('label', { for: 'sim-map-step' }, t('sim.map.time')), scrub),
      play),
    label, canvas, legend, h('p', { class: 'muted hint' }, t('sim.map.hint')));

  const current = () => policies.find((p) => p.summary.policy === sel.value) || policies[0];
  const draw = () => {
    const p = current();
    const i = Math.min(Number(scrub.value) || 0, p.snapshots.length - 1);
    const sn = p.snapshots[i];
    drawSnapshot(canvas, sn, p.summary);
    label.textContent = t('sim.map.at', { step: int(sn.step), time: fixed(sn.time_s, 1), i: i + 1, n: p.snapshots.length });
  };
  const setPolicy = () => {
    const p = current();
    scrub.max = String(p.snapshots.length - 1);
    if (Number(scrub.value) > p.snapshots.length - 1) scrub.value = String(p.snapshots.length - 1);
    clear(legend);
    const paged = p.snapshots[0].num_blocks > 0;
    const swatch = (color, key) => h('li', null, h('span', { class: 'swatch', style: `background:${color}`, 'aria-hidden': 'true' }), t(key));
    const c1 = `rgb(${requestColor(3).join(',')})`;
    const free = cssVar('--c-free', '#e5e7eb');
    if (paged) {
      legend.append(swatch(c1, 'sim.map.owned'), swatch(`rgb(${mix(requestColor(3), [0, 0, 0], 0.45).join(',')})`, 'sim.map.shared'),
        swatch(`rgb(${mix(requestColor(3), [255, 255, 255], 0.55).join(',')})`, 'sim.map.partial'),
        swatch('#8b929e', 'sim.map.cached'), swatch(free, 'sim.map.free'), swatch(cssVar('--fg', '#16181d'), 'sim.map.null'));
    } else {
      legend.append(swatch(c1, 'sim.map.stored'), swatch(`rgb(${mix(requestColor(3), [255, 255, 255], 0.5).join(',')})`, 'sim.map.reserved'),
        swatch(`rgb(${mix(requestColor(3), [255, 255, 255], 0.82).join(',')})`, 'sim.map.internal'), swatch(free, 'sim.map.free'));
    }
    draw();
  };
  sel.addEventListener('change', setPolicy);
  scrub.addEventListener('input', draw);
  let timer = null;
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = null;
    play.textContent = t('sim.map.play');
  };
  play.addEventListener('click', () => {
    if (timer) {
      stop();
      return;
    }
    const p = current();
    if (Number(scrub.value) >= p.snapshots.length - 1) scrub.value = '0';
    play.textContent = t('sim.map.pause');
    timer = setInterval(() => {
      const n = current().snapshots.length;
      const next = Number(scrub.value) + 1;
      if (next >= n) {
        stop();
        return;
      }
      scrub.value = String(next);
      draw();
    }, 120);
  });
  sv.player = { stop };
  // Start in the middle of the run, where the memory is busiest.
  scrub.max = String(policies[0].snapshots.length - 1);
  scrub.value = String(Math.floor((policies[0].snapshots.length - 1) / 2));
  requestAnimationFrame(setPolicy);
  const ro = typeof ResizeObserver !== 'undefined' ? new ResizeObserver(() => requestAnimationFrame(draw)) : null;
  ro?.observe(wrap);
  return wrap;
}

// One pixel per cell in an ImageData, scaled up without smoothing: a pool of tens
// of thousands of blocks draws in a few milliseconds.
function drawSnapshot(canvas, sn, summary) {
  const width = Math.max(240, canvas.parentElement?.clientWidth || 600);
  const maxH = 320;
  const paged = sn.num_blocks > 0;
  const cells = paged ? sn.num_blocks : Math.min(sn.capacity_tokens, Math.floor((width * maxH) / 9));
  const cell = Math.max(1, Math.min(24, Math.floor(Math.sqrt((width * maxH) / cells))));
  const cols = Math.max(1, Math.floor(width / cell));
  const rows = Math.ceil(cells / cols);
  const img = new ImageData(cols, rows);
  const px = img.data;
  const put = (i, c) => {
    px[i * 4] = c[0];
    px[i * 4 + 1] = c[1];
    px[i * 4 + 2] = c[2];
    px[i * 4 + 3] = 255;
  };
  const free = rgb(cssVar('--c-free', '#e5e7eb'));
  const bg = rgb(cssVar('--bg', '#ffffff'));
  for (let i = 0; i < cells; i++) put(i, free);
  const marks = [];
  if (paged) {
    // A request's colour worked out once per map, not once per block.
    const nul = rgb(cssVar('--fg', '#16181d'));
    const cached = [139, 146, 158];
    const colors = new Map();
    const colorOf = (o) => {
      let c = colors.get(o);
      if (!c) colors.set(o, (c = requestColor(o)));
      return c;
    };
    const paint = (o) => (o >= 0 ? colorOf(o) : o === -2 ? cached : o === -3 ? nul : free);
    // Owners come as a table and each block's position in it (the packed form), or,
    // when a map has more owners than a Uint16 indexes, one per block.
    const { owners, owner_index: idx } = sn;
    const ownerAt = idx ? (b) => owners[idx[b]] : (b) => owners[b];
    const n = Math.min(cells, sn.num_blocks);
    if (idx) {
      const tableColor = Array.from(owners, paint);
      for (let b = 0; b < n; b++) put(b, tableColor[idx[b]]);
    } else {
      for (let b = 0; b < n; b++) put(b, paint(owners[b]));
    }
    for (let k = 0; k < sn.partial.length; k += 2) {
      const i = sn.partial[k];
      const o = ownerAt(i);
      if (o >= 0) put(i, mix(colorOf(o), [255, 255, 255], 0.55));
    }
    for (let k = 0; k < sn.shared.length; k += 2) {
      const i = sn.shared[k];
      const o = ownerAt(i);
      if (o >= 0) put(i, mix(colorOf(o), [0, 0, 0], 0.45));
      marks.push(i);
    }
  } else {
    // Contiguous arena: each cell a run of token slots, painted by what holds its first slot.
    const per = sn.capacity_tokens / cells;
    const paint = (a, b, c) => {
      if (b <= a) return;
      const i0 = Math.floor(a / per);
      const i1 = Math.min(cells, Math.ceil(b / per));
      for (let i = i0; i < i1; i++) put(i, c);
    };
    for (const [req, , off, alloc, , length, stored] of sn.regions) {
      const c = requestColor(req);
      paint(off + Math.min(length, alloc), off + alloc, mix(c, [255, 255, 255], 0.82));
      paint(off + stored, off + Math.min(length, alloc), mix(c, [255, 255, 255], 0.5));
      paint(off, off + stored, c);
    }
  }
  for (let i = cells; i < cols * rows; i++) put(i, bg);
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(cols * cell * dpr);
  canvas.height = Math.round(rows * cell * dpr);
  canvas.style.width = cols * cell + 'px';
  canvas.style.height = rows * cell + 'px';
  const ctx = canvas.getContext('2d');
  const tmp = document.createElement('canvas');
  tmp.width = cols;
  tmp.height = rows;
  tmp.getContext('2d').putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(tmp, 0, 0, canvas.width, canvas.height);
  // Shared blocks also get a dot when cells are big enough to see one.
  if (cell * dpr >= 5) {
    ctx.fillStyle = '#ffffff';
    const r = Math.max(1, (cell * dpr) / 5);
    for (const i of marks) {
      const x = ((i % cols) + 0.5) * cell * dpr;
      const y = (Math.floor(i / cols) + 0.5) * cell * dpr;
      ctx.fillRect(x - r / 2, y - r / 2, r, r);
    }
  }
  canvas.dataset.drawn = String(sn.step);
  canvas.dataset.cells = String(cells);
  canvas.dataset.policy = summary.policy;
}
