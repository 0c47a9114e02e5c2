// The simulator's part of the URL state (issue 5: a copied link reproduces the
// simulator view too). state.js calls in here so the names and checks stay together.
// A dropped / pasted CSV cannot travel in a link: its run is not put in the URL
// (the view says so); presets are.

export const SIM_WORKLOADS = ['sharegpt', 'alpaca', 'azure-conv', 'azure-code'];
export const SIM_POLICIES = ['paged', 'max', 'pow2', 'oracle'];

export const SIM_DEFAULTS = {
  sim: false, // simulator view open and run on load
  simWl: 'sharegpt',
  simPol: 'paged,max,pow2,oracle',
  simReq: 0, // 0 = the default (1000 for presets, the whole trace)
  simRate: 0, // 0 = all at t=0 (presets) / trace timestamps
  simSeed: 0,
  simBs: 16,
  simN: 1,
  simBeam: 1,
  simPrefix: 0,
  simFrac: 1,
  simPc: false,
  simSeqs: 0, // 0 = vLLM's default for the GPU
  simTok: 0, // 0 = vLLM's default
  simPre: 'v0',
};

// A link is read before the WASM core loads, so these ranges mirror the core's
// sim_input_limits() (src/sim/session.cpp; catalog().sim_limits, which the inputs use);
// 0 stands for "the default" where the core's field is optional.
// tests/node/sim.test.mjs checks that they agree.
export const SIM_URL_INTS = {
  simReq: ['requests', 0], simSeed: ['seed'], simBs: ['block_size'], simN: ['n'], simBeam: ['beam'],
  simPrefix: ['shared_prefix', 0], simSeqs: ['max_num_seqs', 0], simTok: ['max_num_batched_tokens', 0],
};
export const SIM_LIMITS_MIRROR = {
  requests: [1, 10_000_000], seed: [0, 2 ** 53], block_size: [1, 256], n: [1, 1024], beam: [1, 1024],
  shared_prefix: [1, 10_000_000], max_num_seqs: [1, 2_000_000_000], max_num_batched_tokens: [1, 2_000_000_000],
};
// The block sizes vLLM's --block-size takes (the core's sim_block_sizes(); checked alike).
export const SIM_BLOCK_SIZES = [1, 8, 16, 32, 64, 128, 256];
const INTS = Object.fromEntries(Object.entries(SIM_URL_INTS).map(([key, [field, zero]]) => {
  const [lo, hi] = SIM_LIMITS_MIRROR[field];
  return [key, [zero ?? lo, hi]];
}));

// true when `key` is a simulator parameter that was applied; false: not ours or invalid
// (the caller lists it among the ignored parameters).
export function applySimParam(s, key, v) {
  if (!(key in SIM_DEFAULTS)) return false;
  switch (key) {
    case 'sim': case 'simPc':
      if (v !== '1' && v !== '0') return false;
      s[key] = v === '1';
      return true;
    case 'simWl':
      if (!SIM_WORKLOADS.includes(v)) return false;
      s.simWl = v;
      return true;
    case 'simPol': {
      const names = v.split(',').map((x) => x.trim()).filter(Boolean);
      if (!names.length || !names.every((n) => SIM_POLICIES.includes(n))) return false;
      s.simPol = SIM_POLICIES.filter((n) => names.includes(n)).join(',');
      return true;
    }
    case 'simRate': case 'simFrac': {
      const f = /^\d{0,9}(\.\d{1,12})?$/.test(v) && v !== '' && v !== '.' ? Number(v) : NaN;
      if (key === 'simRate' ? !(f >= 0 && f <= 1e6) : !(f > 0 && f <= 1)) return false;
      s[key] = f;
      return true;
    }
    case 'simPre':
      if (v !== 'v0' && v !== 'recompute' && v !== 'swap') return false;
      s.simPre = v;
      return true;
    default: {
      const n = /^\d{1,16}$/.test(v) ? Number(v) : NaN;
      const [lo, hi] = INTS[key];
      if (!(n >= lo && n <= hi)) return false;
      if (key === 'simBs' && !SIM_BLOCK_SIZES.includes(n)) return false; // vLLM would not start with it
      s[key] = n;
      return true;
    }
  }
}

// Simulator parameters that differ from the defaults, only while the view is open
// (and never in embed links).
export function simToParams(s, p) {
  if (!s.sim || s.embed) return p; // embed cards show the calculator only
  p.set('sim', '1');
  for (const key of Object.keys(SIM_DEFAULTS)) {
    if (key === 'sim') continue;
    const v = s[key] ?? SIM_DEFAULTS[key];
    if (v === SIM_DEFAULTS[key]) continue;
    p.set(key, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  return p;
}

// A link opens the simulator view and runs it at once, unless the run is large:
// then it waits for the user's Run (issue 14: `simReq=1000000` in a link must not
// start minutes of worker CPU on page load). Large = more requests than this; the
// bundled Azure traces (19,366 and 8,819 requests) and the presets' default 1,000
// run on load as before.
export const SIM_AUTORUN_MAX_REQUESTS = 100_000;

export function simRunsOnLoad(s) {
  return s.simReq <= SIM_AUTORUN_MAX_REQUESTS;
}

// The module input (wasm/kvbudget.d.ts SimInputs, the core's member names) for these
// settings, minus the model/GPU part that the view takes from the calculator.
export function simInputFromState(s) {
  const input = {
    policies: s.simPol.split(','),
    workload: s.simWl,
    seed: s.simSeed,
    block_size: s.simBs,
    n: s.simN,
    beam: s.simBeam,
    prefix_caching: s.simPc,
    preemption: s.simPre,
  };
  if (s.simReq > 0) input.requests = s.simReq;
  if (s.simRate > 0) input.rate = s.simRate;
  if (s.simPrefix > 0) {
    input.shared_prefix = s.simPrefix;
    input.shared_fraction = s.simFrac;
  }
  if (s.simSeqs > 0) input.max_num_seqs = s.simSeqs;
  if (s.simTok > 0) input.max_num_batched_tokens = s.simTok;
  return input;
}

// The view's number fields, checked as the core checks SimInputs (validate() in
// src/sim/session.cpp): a whole number within sim_input_limits() (input_out_of_range),
// a rate above 0 (sim_bad_rate), a fraction in (0, 1] (sim_bad_fraction). An empty field
// is the default the placeholder names (`empty`, the state's value for it); a shared
// prefix of 0 is "none", as the state stores it. [core field, empty, kind].
export const SIM_FIELDS = {
  simReq: ['requests', 0],
  simRate: ['rate', 0, 'rate'],
  simSeed: ['seed', 0],
  simN: ['n', 1],
  simBeam: ['beam', 1],
  simPrefix: ['shared_prefix', 0, 'zeroIsNone'],
  simFrac: ['shared_fraction', 1, 'fraction'],
  simSeqs: ['max_num_seqs', 0],
  simTok: ['max_num_batched_tokens', 0],
};
const CLI_FLAGS = { rate: '--rate', shared_fraction: '--shared-fraction' };

// As the core writes them (with_commas): 10,000,000.
const commas = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

// {value} for the state, or {message}: the core's coded Message for this value (code and
// params; the page words it with tMsg from msg.<code>, the field's label for {field}/{flag}). `text`: what was typed;
// `unreadable`: the browser could not read it as a number (its value is then ''), named
// by `unreadableText` in the message. limits: catalog().sim_limits (or the mirror above).
export function checkSimField(key, text, { unreadable = false, unreadableText = '?', limits = null } = {}) {
  const [field, empty, kind] = SIM_FIELDS[key];
  const typed = String(text ?? '').trim();
  if (typed === '' && !unreadable) return { value: empty };
  const n = unreadable ? NaN : Number(typed);
  const shown = unreadable ? unreadableText : Number.isSafeInteger(n) ? commas(n) : typed;
  const flag = limits?.[field]?.flag || CLI_FLAGS[field] || '--' + field.replace(/_/g, '-');
  if (kind === 'rate') {
    if (n > 0 && n < 1e12) return { value: n };
    return { message: { code: 'sim_bad_rate', params: { field, flag, value: shown } } };
  }
  if (kind === 'fraction') {
    if (n > 0 && n <= 1) return { value: n };
    return { message: { code: 'sim_bad_fraction', params: { field, flag, value: shown } } };
  }
  if (kind === 'zeroIsNone' && n === 0) return { value: 0 };
  const [lo, hi] = limits?.[field] ? [limits[field].min, limits[field].max] : SIM_LIMITS_MIRROR[field];
  if (Number.isInteger(n) && n >= lo && n <= hi) return { value: n };
  const [min, max] = [commas(lo), commas(hi)];
  return { message: { code: 'input_out_of_range', params: { field, flag, min, max, value: shown } } };
}
