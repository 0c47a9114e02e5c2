// The whole view is one plain state object. It round-trips through URL
// parameters (names fixed in DESIGN.md), so a copied link reproduces the view.
import { parseModelRef, modelRefText } from './hubid.js';
import { SIM_DEFAULTS, applySimParam, simToParams } from './sim-state.js';
import { parseContextText, langParam } from './url-values.js';

export const DEFAULT_MODEL = 'meta-llama/Llama-3.1-8B';

export function defaultState() {
  return {
    model: DEFAULT_MODEL, // Hub id
    revision: '',
    quant: '', // a GGUF repo's file by its quant tag (model=org/repo:QUANT in the URL)
    engine: 'vllm', // vllm | llamacpp | transformers
    ctx: 32768, // tokens per sequence
    seqs: 1, // requests served at once
    kv: 'auto', // vLLM / transformers KV dtype in the engine's spelling
    ctk: 'f16', // llama.cpp -ctk
    ctv: 'f16', // llama.cpp -ctv
    gpu: 'rtx-4090', // GPU catalog id; '' = custom size
    gpuMem: 24 * 1024 ** 3, // bytes per GPU when gpu = ''
    macRam: 0, // a Mac's RAM in bytes when it differs from the chosen model's (0 = the catalog's)
    gpuCount: 1,
    util: 0, // gpu_memory_utilization; 0 = vLLM's default for the release (0.92 from 0.20.0, 0.9 before: the core's)
    weights: 'auto', // weight format id
    tp: 0, // tensor parallel size; 0 = every GPU (divided by pp)
    pp: 1, // vLLM --pipeline-parallel-size: stages of whole layers; world size tp x pp
    ep: false, // vLLM --enable-expert-parallel (a MoE's routed experts whole per GPU); URL ep=1
    maxNumSeqs: 0, // vLLM --max-num-seqs; 0 = vLLM's default for the GPU (raised to seqs)
    spec: '', // vLLM speculative decoding: METHOD[:TOKENS] (eagle, eagle3, mtp, ngram); '' = none
    engineVersion: '', // the engine's release (vLLM 0.20.1, llama.cpp b6500); '' = the newest (the core checks it)
    rope: '', // RoPE scaling TYPE:FACTOR[:ORIGINAL] ('' = as config.json says), e.g. yarn:4:32768
    ngl: -1, // llama.cpp -ngl; -1 = every layer
    ram: 0, // llama.cpp: system RAM bytes for what stays on the CPU; 0 = not checked
    lang: 'en',
    embed: false,
    theme: 'auto', // light | dark | auto (embed snippets set it for the host page)
    panels: '', // embed card panels, comma list of EMBED_PANELS; '' = EMBED_DEFAULT_PANELS
    ...SIM_DEFAULTS, // the simulator view (sim-state.js)
  };
}

export const EMBED_PANELS = ['controls', 'bar', 'metrics', 'formula', 'context', 'chart', 'compare', 'ladder', 'engine', 'decode'];
export const EMBED_DEFAULT_PANELS = ['controls', 'bar', 'metrics'];

const ENGINES = new Set(['vllm', 'llamacpp', 'transformers']);

// vLLM speculative methods the page offers (the drafter's KV: EAGLE / EAGLE-3 one layer of the model's
// geometry, MTP the model's own next-token layers, n-gram none) and their token count (1-64).
export const SPEC_METHODS = ['eagle', 'eagle3', 'mtp', 'ngram'];
const SPEC_RE = /^(eagle|eagle3|mtp|ngram)(:([1-9]|[1-5][0-9]|6[0-4]))?$/;

// The page's spec as vLLM's --speculative-config JSON ('' = none); 3 draft tokens unless given.
export function specConfig(spec) {
  if (!spec || !SPEC_RE.test(spec)) return '';
  const [method, n] = spec.split(':');
  return JSON.stringify({ method, num_speculative_tokens: n ? Number(n) : 3 });
}

// The CLI's spellings of the page's parameters (its flags without the dashes' prefix) and a
// few obvious guesses: a link's author who wrote one gets "did you mean ..." in the note
// that lists ignored parameters (share.js), not only the ignored name.
const CLI_SPELLINGS = {
  'max-model-len': 'ctx', context: 'ctx', c: 'ctx', 'n-ctx': 'ctx', 'gpu-count': 'gpuCount', gpus: 'gpuCount',
  'gpu-memory': 'gpuMem', 'gpu-memory-utilization': 'util', 'tensor-parallel-size': 'tp', 'pipeline-parallel-size': 'pp', 'kv-cache-dtype': 'kv',
  'max-num-seqs': 'maxNumSeqs', 'engine-version': 'engineVersion', 'n-gpu-layers': 'ngl', 'rope-scaling': 'rope',
  'speculative-config': 'spec', language: 'lang', 'enable-expert-parallel': 'ep', 'expert-parallel': 'ep',
};
const PARAM_NAMES = Object.keys(defaultState()).filter((k) => k !== 'revision' && k !== 'quant');

// The parameter an unknown name most likely meant ('' for none): a CLI spelling, or a known
// name in another case or with '-' / '_' ("gpu_count", "GPU").
export function paramGuess(key) {
  const k = String(key).toLowerCase().replace(/_/g, '-').replace(/^-+/, '');
  if (Object.hasOwn(CLI_SPELLINGS, k)) return CLI_SPELLINGS[k];
  const flat = k.replace(/-/g, '');
  return PARAM_NAMES.find((n) => n.toLowerCase() === flat && n !== key) || '';
}

// The core's limits (budget_input_limits, catalog().limits) of the numeric parameters.
export const PARAM_LIMITS = {
  ctx: 'context', seqs: 'seqs', gpuCount: 'gpu_count', maxNumSeqs: 'max_num_seqs', tp: 'tensor_parallel_size', pp: 'pipeline_parallel_size',
  gpuMem: 'gpu_memory_bytes', macRam: 'gpu_memory_bytes', ram: 'ram_bytes', ngl: 'n_gpu_layers',
};

// Reads the parameters it knows; returns {state, ignored, raw} so the page can say what it
// ignored (issue 5) instead of failing: `ignored` holds [name, value] pairs (the value as the
// address has it, or the part of it that was not taken), `raw` each applied parameter's text.
export function stateFromParams(params, base = defaultState()) {
  const s = { ...base };
  const ignored = [];
  const raw = {};
  for (const [key, rawValue] of params) {
    const v = String(rawValue);
    const n = ignored.length;
    const skip = () => ignored.push([key, v]);
    switch (key) {
      case 'model': {
        const ref = parseModelRef(v);
        if (ref.ok) {
          s.model = ref.id;
          s.revision = ref.revision;
          s.quant = ref.quant || '';
        } else skip();
        break;
      }
      case 'engine':
        if (ENGINES.has(v)) s.engine = v; else skip();
        break;
      // The spellings the context field and the CLI's --max-model-len take (128K, 32,768).
      case 'ctx': {
        const c = parseContextText(v);
        if (c !== null) s.ctx = c; else skip();
        break;
      }
      // Whole numbers only here; their ranges are the core's (limitState, below).
      case 'seqs': case 'gpuCount': case 'tp': case 'pp': case 'maxNumSeqs': {
        if (/^\d{1,15}$/.test(v)) s[key] = Number(v); else skip();
        break;
      }
      case 'util': {
        const f = /^0?\.\d+$|^1(\.0*)?$/.test(v) ? Number(v) : NaN;
        if (f > 0 && f <= 1) s.util = f; else skip();
        break;
      }
      case 'ngl': {
        if (/^\d{1,15}$/.test(v)) s.ngl = Number(v); else skip();
        break;
      }
      case 'ram': case 'macRam': case 'gpuMem': {
        const b = /^\d{1,16}$/.test(v) ? Number(v) : NaN;
        if (b > 0) s[key] = b; else skip();
        break;
      }
      // Engine-specific spellings are checked against the core's lists later.
      case 'kv': case 'ctk': case 'ctv': case 'weights':
        if (/^[A-Za-z0-9_.-]{0,40}$/.test(v)) s[key] = v; else skip();
        break;
      // Also the names with spaces the CLI's --gpu takes ("RTX 4090"): controls.js resolves them.
      case 'gpu':
        if (/^[A-Za-z0-9_. -]{0,40}$/.test(v)) s.gpu = v; else skip();
        break;
      case 'rope':
        if (/^(yarn|linear|dynamic):\d{1,4}(\.\d{1,6})?(:\d{1,10})?$/.test(v)) s.rope = v; else skip();
        break;
      case 'spec':
        if (SPEC_RE.test(v)) s.spec = v; else skip();
        break;
      // Its form is the core's to judge (parse_engine_version names what is wrong); only harmless characters pass.
      case 'engineVersion':
        if (/^[A-Za-z0-9_.+=-]{1,64}$/.test(v)) s.engineVersion = v; else skip();
        break;
      case 'lang': {
        const code = langParam(v);
        if (code) s.lang = code; else skip();
        break;
      }
      case 'embed':
        if (v === '1' || v === '0') s.embed = v === '1'; else skip();
        break;
      case 'ep':
        if (v === '1' || v === '0') s.ep = v === '1'; else skip();
        break;
      case 'theme':
        if (v === 'light' || v === 'dark' || v === 'auto') s.theme = v; else skip();
        break;
      case 'panels': {
        // Unknown names are dropped and reported (only they: the known ones apply).
        const names = v.split(',').map((x) => x.trim()).filter(Boolean);
        const known = EMBED_PANELS.filter((p) => names.includes(p));
        const unknown = names.filter((p) => !EMBED_PANELS.includes(p));
        if (known.length) s.panels = known.join(',');
        if (!names.length) skip();
        else if (unknown.length) ignored.push([key, unknown.join(',')]);
        break;
      }
      default:
        if (!applySimParam(s, key, v)) skip();
    }
    if (ignored.length === n) raw[key] = v;
  }
  // llama.cpp: `kv` is the type of both halves, as `kvbudget budget --kv-cache-dtype` sets both;
  // ctk / ctv name one half each and win for theirs. A GGUF (model=org/repo:QUANT) is served
  // by llama.cpp whatever `engine` says. The address then carries ctk / ctv.
  if (Object.hasOwn(raw, 'kv') && (s.engine === 'llamacpp' || s.quant)) {
    if (!Object.hasOwn(raw, 'ctk')) s.ctk = s.kv;
    if (!Object.hasOwn(raw, 'ctv')) s.ctv = s.kv;
    s.kv = base.kv;
  }
  return { state: s, ignored, raw };
}

// The numeric parameters outside the core's limits (`limits`: catalog().limits) go back to
// their defaults, as malformed ones do: returns their [name, value, {min, max}] for the
// note, which gives the allowed range. `raw`: stateFromParams's.
export function limitState(s, limits, raw, base = defaultState()) {
  const out = [];
  for (const [key, name] of Object.entries(PARAM_LIMITS)) {
    const lim = limits?.[name];
    if (!lim || !Object.hasOwn(raw, key) || s[key] === base[key]) continue;
    // The page's own floors: a count of at least one, a size above zero (stateFromParams).
    // A context of 0 is the core's "the model's limit", which the page's field and slider cannot show.
    const min = key === 'gpuMem' || key === 'macRam' || key === 'ram' || key === 'ctx' ? Math.max(1, lim.min) : key === 'ngl' ? Math.max(0, lim.min) : lim.min;
    if (s[key] >= min && s[key] <= lim.max) continue;
    s[key] = base[key];
    out.push([key, raw[key], { min, max: lim.max }]);
  }
  return out;
}

// Only what differs from the defaults, in a stable order.
export function stateToParams(s, base = defaultState()) {
  const p = new URLSearchParams();
  if (s.model !== base.model || s.revision || s.quant) {
    p.set('model', modelRefText(s.model, s.revision, s.quant));
  }
  for (const key of ['engine', 'engineVersion', 'ctx', 'seqs', 'kv', 'ctk', 'ctv', 'gpu', 'gpuMem', 'macRam', 'gpuCount', 'util', 'weights', 'tp', 'pp', 'maxNumSeqs', 'spec', 'rope', 'ngl', 'ram', 'lang']) {
    if (key === 'gpuMem' && s.gpu !== '') continue;
    // vLLM's TP and stages alone (the page sends llama.cpp and transformers none), as ep below.
    if ((key === 'tp' || key === 'pp') && s.engine !== 'vllm') continue;
    if (s[key] !== base[key]) p.set(key, String(s[key]));
  }
  // vLLM's flag alone (the core refuses it for llama.cpp and transformers): another engine's link leaves it out.
  if (s.ep && s.engine === 'vllm') p.set('ep', '1');
  if (s.embed) p.set('embed', '1');
  if (s.theme !== base.theme) p.set('theme', s.theme);
  if (s.panels !== base.panels) p.set('panels', s.panels);
  return simToParams(s, p);
}
