// Thin wrapper over an embind module: loads it once, lazily, and turns the core's
// error values ({ok:false, code, message}) into KvbudgetError in one place. Shared by
// the two modules' entry files (kvbudget.js: everything; kvbudget-calc.js: the page's
// calculator without the simulator); see kvbudget.d.ts for the contract.

export class KvbudgetError extends Error {
  constructor(code, message, detail = null) {
    super(message);
    this.name = 'KvbudgetError';
    this.code = code;
    this.detail = detail; // the core's Message {code, params, text}, for other languages
  }
}

function unwrap(text) {
  let r;
  try {
    r = JSON.parse(text);
  } catch {
    throw new KvbudgetError('internal', 'the core returned something that is not JSON');
  }
  if (!r || r.ok !== true) {
    throw new KvbudgetError(String(r?.code || 'internal'), String(r?.message || 'unknown error in the core'), r?.detail || null);
  }
  return r.value;
}

// Anything thrown by the module itself (an abort, a bare number) still becomes a KvbudgetError.
function call(fn, ...args) {
  let text;
  try {
    text = fn(...args);
  } catch (e) {
    const msg = e instanceof Error ? e.message : 'the WebAssembly core failed (' + String(e) + ')';
    throw new KvbudgetError('internal', msg);
  }
  return unwrap(text);
}

class Model {
  constructor(core, handle, spec) {
    this.core = core;
    this.handle = handle;
    this.spec = spec;
  }
  // input: BudgetInputs by their C++ names (engine, gpu, context, seqs, ...); returns the Answer.
  compute(input) {
    return call(this.core.m.compute, this.handle, JSON.stringify(input ?? {}));
  }
  release() {
    if (this.handle) call(this.core.m.releaseModel, this.handle);
    this.handle = 0;
  }
}

// A paging simulation (issue 4), driven in chunks so a Web Worker can report
// progress between run() calls and cancel by not calling again (then release()).
class Simulation {
  constructor(core, id, info) {
    this.core = core;
    this.id = id;
    this.info = info; // the resolved run (SimRunInfo)
  }
  run(maxSteps = 20000) {
    return call(this.core.m.simRun, this.id, Number(maxSteps));
  }
  result(options = {}) {
    return call(this.core.m.simResult, this.id, JSON.stringify(options));
  }
  // The block maps in their packed form ({f64: Float64Array, i32: Int32Array,
  // u16: Uint16Array}, copies that own their buffers, so a worker can transfer them to
  // the page); unpackSnapshots() reads them.
  packedSnapshots() {
    call(this.core.m.simPack, this.id);
    try {
      // Views of the module's memory: copied before anything else can grow (move) it.
      return { f64: this.core.m.simPacked(0).slice(), i32: this.core.m.simPacked(1).slice(), u16: this.core.m.simPacked(2).slice() };
    } finally {
      this.core.m.simPackFree();
    }
  }
  release() {
    if (this.id) call(this.core.m.simRelease, this.id);
    this.id = 0;
  }
}

class Kvbudget {
  constructor(m) {
    this.m = m;
    this.memo = new Map();
  }
  // quant: the checkpoint's hf_quant_config.json text, '' when it has none.
  parseConfig(text, name = 'config.json', quant = '') {
    const r = call(this.m.parseConfig, String(text), String(name), String(quant ?? ''));
    return new Model(this, r.handle, r.spec);
  }
  // A GGUF file's header from a prefix of its bytes (Uint8Array): {status: 'need_more',
  // need_total} asks for a longer prefix; {status: 'ok', header, ...} holds the parsed header
  // until ggufModel() takes it. fileSize (-1 unknown) lets the core refuse a header that
  // would run past the end of the file.
  readGguf(bytes, name = 'model.gguf', fileSize = -1) {
    return call(this.m.ggufRead, bytes, String(name), Number(fileSize));
  }
  // One file's header id, or every shard's in order: the model, like parseConfig().
  ggufModel(headerIds, name = 'model.gguf') {
    const ids = Array.isArray(headerIds) ? headerIds : [headerIds];
    const r = call(this.m.ggufModel, JSON.stringify(ids), String(name));
    return new Model(this, r.handle, r.spec);
  }
  // KV cache types an engine accepts, in its own spelling (from catalog()).
  kvTypeNames(engine) {
    const names = this.catalog().kv_types[engine];
    if (!names) throw new KvbudgetError('bad_value', `engine must be vllm, llamacpp or transformers, got "${engine}"`);
    return names;
  }
  parseSize(text) {
    return call(this.m.parseSize, String(text));
  }
  // "128K" (131,072), "1M", "32,768", "131072": as the CLI parses --max-model-len and -c.
  parseContext(text) {
    return call(this.m.parseContext, String(text));
  }
  // The catalog id of a GPU named as `kvbudget budget --gpu` takes it ("h100", "RTX 4090",
  // "4090"), "" for none.
  findGpu(name) {
    return call(this.m.findGpu, String(name));
  }
  formatBytes(n) {
    return call(this.m.formatBytes, Number(n));
  }
  // Input limits, KV types, GPUs, weight formats and message codes: constant for a
  // module, computed once; callers must not modify it.
  catalog() {
    if (!this.memo.has('catalog')) this.memo.set('catalog', Object.freeze(call(this.m.catalog)));
    return this.memo.get('catalog');
  }
  // What catalog() returns, as these same module bytes wrote it earlier (the page holds the
  // build's): taken instead of the first call, which compiles and serializes the whole
  // catalog (10-20 ms on a loaded machine, on the way to a page's first answer). A catalog
  // without `messages` suits only callers that do not read them (the page).
  useCatalog(catalog) {
    if (!this.memo.has('catalog')) this.memo.set('catalog', Object.freeze(catalog));
  }
  // kvbudget check (issue 12), only in the whole module (kvbudget.js): which bundled config
  // the log names ({model, catalog_id}; catalogIds are the catalog's "org/name" ids) ...
  checkLogModel(text, catalogIds = []) {
    return call(this.m.checkLogModel, String(text), JSON.stringify(catalogIds));
  }
  // ... then the comparison, what `kvbudget check LOG --json` prints: a CheckReport, or
  // {error} for a paste that is not a log it can read. config: {text, name, source} or null.
  checkLog(text, config = null) {
    return call(this.m.checkLog, String(text), String(config?.text ?? ''), String(config?.name ?? ''), String(config?.quant ?? ''), String(config?.source ?? ''));
  }
  // kvbudget lab (issue 12): peak memory measured at several contexts against the formula,
  // what `kvbudget lab RUNS --config CONFIG --json` prints: a LabReport, or {error} for runs
  // or a config it refuses. config: {text, name}; settings: LabSettings.
  labTable(text, config, settings = {}) {
    return call(this.m.labTable, String(text), String(config?.text ?? ''), String(config?.name ?? ''), String(config?.quant ?? ''), JSON.stringify(settings ?? {}));
  }
  // traceReader (optional): (at, n) => Uint8Array of at most n bytes from byte `at` of
  // the trace CSV (empty at its end), for a trace read in pieces instead of input.trace
  // (the worker reads a File's slices). A reader that throws counts as unreadable.
  simulate(model, input, traceReader = null) {
    const reader = traceReader && ((at, n) => {
      try {
        return traceReader(at, n);
      } catch {
        return null;
      }
    });
    const r = call(this.m.simCreate, model.handle, JSON.stringify(input ?? {}), reader);
    return new Simulation(this, r.sim, r.run);
  }
}

// Simulation.packedSnapshots()'s arrays, per policy, per snapshot: result().snapshots'
// fields and numbers, except that a paged map's owners come as `owners` (each owner
// once, an Int32Array view of `i32`) and `owner_index` (each block's position in
// owners, a Uint16Array view of `u16`; null when the map had too many owners for it,
// and owners then holds every block's owner) instead of runs: a request's blocks lie
// scattered, so runs were nearly two numbers a block. shared and partial are Int32Array
// views; regions [request, seq, offset, allocated, reserved, length, stored] lists.
// ownerRuns() gives the JSON's runs back. The layout is src/report/sim_json.h's.
const SNAPSHOT_HEADER = 14;
export function unpackSnapshots({ f64, i32, u16 }) {
  const policies = f64[0];
  let at = 1 + policies;
  const out = [];
  for (let p = 0; p < policies; p++) {
    const list = [];
    for (let k = f64[1 + p]; k > 0; k--, at += SNAPSHOT_HEADER) {
      const hd = f64.subarray(at, at + SNAPSHOT_HEADER);
      const sn = { step: hd[0], time_s: hd[1], block_size: hd[2], capacity_tokens: hd[3], num_blocks: hd[4] };
      if (sn.num_blocks > 0) {
        sn.owners = i32.subarray(hd[5], hd[5] + hd[6]);
        sn.owner_index = hd[7] >= 0 ? u16.subarray(hd[7], hd[7] + sn.num_blocks) : null;
        sn.shared = i32.subarray(hd[8], hd[8] + hd[9]);
        sn.partial = i32.subarray(hd[10], hd[10] + hd[11]);
      } else {
        sn.regions = [];
        for (let r = hd[12], end = hd[12] + hd[13]; r < end; r += 7) sn.regions.push(Array.from(f64.subarray(r, r + 7)));
      }
      list.push(sn);
    }
    out.push(list);
  }
  return out;
}

// An unpacked paged map's owners as the JSON's runs, [owner, run, owner, run, ...].
export function ownerRuns(sn) {
  const runs = [];
  const { owners, owner_index: idx } = sn;
  const at = idx ? (b) => owners[idx[b]] : (b) => owners[b];
  for (let b = 0; b < sn.num_blocks;) {
    const o = at(b);
    let e = b + 1;
    while (e < sn.num_blocks && at(e) === o) e++;
    runs.push(o, e - b);
    b = e;
  }
  return runs;
}

// A loadKvbudget for one Emscripten factory; the module is created once.
// options: {wasmBinary} (node), {wasmUrl} (page: where the .wasm is served) and/or
// {wasmModule}: a promise of the compiled WebAssembly.Module, when the page started
// compiling the .wasm (streaming) before this code was loaded.
// adapt: the module's calls under the names Kvbudget uses (kvbudget-calc.js; embind's are already).
export function makeLoader(createModule, adapt = (m) => m) {
  let loading = null;
  return function loadKvbudget(options = {}) {
    if (!loading) {
      const moduleArgs = {};
      if (options.wasmBinary) moduleArgs.wasmBinary = options.wasmBinary;
      if (options.wasmUrl) moduleArgs.locateFile = () => options.wasmUrl;
      if (options.wasmModule) {
        // Instantiated synchronously once compiled (under 1 ms: V8 compiles a function on
        // its first call): the asynchronous instantiate resolves in a task of its own, and
        // the browser painted a frame of the page without its answer before it (style and
        // layout of the whole page, 40-60 ms on a loaded machine; issue 13).
        moduleArgs.instantiateWasm = (imports, done) => {
          Promise.resolve(options.wasmModule)
            .then((mod) => {
              try {
                return new WebAssembly.Instance(mod, imports);
              } catch {
                return WebAssembly.instantiate(mod, imports);
              }
            })
            .then((instance) => done(instance), (e) => moduleArgs.onAbort?.(e));
          return {};
        };
      }
      loading = new Promise((resolve, reject) => {
        moduleArgs.onAbort = (e) => reject(e);
        createModule(moduleArgs).then(resolve, reject);
      }).then(
        (m) => new Kvbudget(adapt(m)),
        (e) => {
          loading = null;
          throw new KvbudgetError('load_failed', 'could not load the WebAssembly core: ' + (e?.message || String(e)));
        },
      );
    }
    return loading;
  };
}
