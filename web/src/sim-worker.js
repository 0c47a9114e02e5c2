// Web Worker that runs the paging simulator (issue 4) off the page's thread: it
// loads its own copy of the WASM core, parses the model's config, runs the
// simulation in chunks of about 30 ms and posts progress between them. The page
// cancels by terminating the worker; nothing here needs to clean up for that.
//
// in:  {type: 'warm', traceUrl?} (load the module and the trace ahead of a run), then
//      {type: 'run', configText, configName, gguf?, input (SimInputs without trace), traceUrl?, traceText?, traceFile?}
//      (gguf: {headers: [{bytes, name, fileSize}], name}, a GGUF file's header bytes, read
//      again here as the page read them: the same model without config.json; traceFile:
//      the user's File, read a slice at a time, so a trace of any size fits)
// out: {type: 'warmed', ms} (after a warm message's warm-up), {type: 'started', run} {type: 'progress', progress, policy, policy_index} ... then
//      {type: 'done', result (without snapshots), maps (whether maps follow), timing}, then when maps:
//      {type: 'maps', packed (the snapshots: Simulation.packedSnapshots()), packMs}; or {type: 'error', code, message, detail}
import { loadKvbudget } from '../../wasm/kvbudget.js';

const CHUNK_MS = 30;

// A worker is started ahead of the first Run ({type: 'warm'}) and kept between runs,
// so Run pays for the simulation, not for compiling the module or fetching a trace:
// both are loaded once and kept here.
let corePromise = null;
const traces = new Map(); // url -> Promise<Uint8Array>

function loadCore() {
  corePromise ||= loadKvbudget({ wasmUrl: new URL('kvbudget.wasm', self.location.href).href });
  return corePromise;
}

function loadTrace(url) {
  if (!traces.has(url)) {
    const unreachable = (e) => {
      throw Object.assign(new Error(`${url}: ${e?.message || e}`), { code: 'trace_fetch' });
    };
    const p = fetch(url).catch(unreachable).then((res) => {
      if (!res.ok) throw Object.assign(new Error(`${url}: HTTP ${res.status}`), { code: 'trace_fetch' });
      // Bytes, read by the core through a reader: as text inside the input JSON the
      // trace (1.7 MB for Azure's) was escaped, converted and lexed a character at a time.
      return res.arrayBuffer().then((b) => new Uint8Array(b));
    });
    p.catch(() => traces.delete(url)); // a failed fetch is tried again on the next run
    traces.set(url, p);
  }
  return traces.get(url);
}

function ggufModel(core, gguf) {
  const ids = gguf.headers.map((hd) => {
    const r = core.readGguf(hd.bytes, hd.name, hd.fileSize);
    if (r.status !== 'ok') throw Object.assign(new Error(`${hd.name}: header incomplete`), { code: 'truncated_gguf' });
    return r.header;
  });
  return core.ggufModel(ids, gguf.name);
}

// A simulation over a fetched trace's bytes (read by the core through a reader), or over
// the input alone (a synthetic workload, or a pasted trace in input.trace).
function simulate(core, model, input, traceBytes) {
  return traceBytes ? core.simulate(model, input, (at, n) => traceBytes.subarray(at, at + n)) : core.simulate(model, input);
}

async function run(msg) {
  const t0 = performance.now();
  const core = await loadCore();
  stopWarming = true;
  await warming;
  const tLoaded = performance.now();
  const trace = msg.traceText;
  const traceBytes = !trace && msg.traceUrl ? await loadTrace(msg.traceUrl) : null;
  const model = msg.gguf ? ggufModel(core, msg.gguf) : core.parseConfig(msg.configText, msg.configName || 'config.json', msg.quantText || '');
  let sim;
  try {
    if (msg.traceFile) {
      // FileReaderSync: the core asks for bytes as it goes, synchronously, from this worker.
      const file = msg.traceFile;
      const reader = new FileReaderSync();
      sim = core.simulate(model, msg.input, (at, n) => new Uint8Array(reader.readAsArrayBuffer(file.slice(at, at + n))));
    } else {
      sim = simulate(core, model, trace ? { ...msg.input, trace } : msg.input, traceBytes);
    }
    self.postMessage({ type: 'started', run: sim.info });
    const tRun = performance.now();
    let steps = 2000;
    for (;;) {
      const c0 = performance.now();
      const p = sim.run(steps);
      const dt = performance.now() - c0;
      if (p.done) break;
      self.postMessage({ type: 'progress', progress: p.progress, policy: p.policy, policy_index: p.policy_index });
      // Aim each chunk at CHUNK_MS so progress stays smooth on slow and fast machines.
      steps = Math.max(100, Math.min(1_000_000, Math.round(steps * (dt > 0 ? Math.min(4, CHUNK_MS / dt) : 4))));
    }
    const tDone = performance.now();
    // The result first, so the page draws the tables and charts while the block maps
    // are packed here (on the machine's other core); the maps follow in their own
    // message, packed (millions of numbers): transferred, never parsed or copied
    // again; the page reads them with unpackSnapshots().
    const result = sim.result({ snapshots: false });
    const maps = msg.input.snapshots > 0;
    // Where the time went, for bench/web/sim-bench.mjs: module load, trace fetch +
    // parse + workload, the simulation itself, and reading the result.
    const timing = { loadMs: tLoaded - t0, prepareMs: tRun - tLoaded, runMs: tDone - tRun, resultMs: performance.now() - tDone };
    self.postMessage({ type: 'done', result, maps, timing });
    if (maps) {
      const p0 = performance.now();
      const packed = sim.packedSnapshots();
      self.postMessage({ type: 'maps', packed, packMs: performance.now() - p0 }, [packed.f64.buffer, packed.i32.buffer, packed.u16.buffer]);
    }
  } finally {
    sim?.release();
    model.release();
  }
}

// Browsers compile a module's functions for speed only once they have run for a while
// (V8: Liftoff first, TurboFan in the background once a function's budget is spent, and a
// call already running keeps the slow code: no on-stack replacement). A Run in a fresh
// worker spent its whole simulation in the baseline code: 87-90 ms for the Azure trace in
// Chromium against 42 ms with every function optimized (--no-wasm-dynamic-tiering), and
// only about the sixth Run was fast. So a spare worker first runs the same settings on a
// slice of the workload, in short calls, to get the hot code optimized before the click.
// The first Run of the whole Azure trace was still the slowest: its simulation took
// 150-260 ms while the step was one 26 KB function whose optimization outlasted a quarter
// second of warm-up; split (src/base/split.h) 98-155 ms, and after a second of warm-up
// 60-75 ms, as fast as the Runs after it (Dec 2026, bench/web/sim-bench.mjs, three runs each;
// bench/web/sim-trace.mjs shows the compile jobs still running in a Run). A second of one
// core, once, for a visitor about to run it; a Run stops it at its next call.
const WARM_REQUESTS = 2000;
const WARM_STEPS = 250;
const WARM_BUDGET_MS = 1000;
let warming = null;
let stopWarming = false;

// A macrotask turn without the 4 ms clamp of nested timers: a Run posted meanwhile is
// handled before the next warm-up call.
const yieldTurn = () => new Promise((resolve) => {
  const ch = new MessageChannel();
  ch.port1.onmessage = () => resolve();
  ch.port2.postMessage(null);
});

async function warmUp(msg) {
  const core = await loadCore();
  const traceBytes = msg.traceUrl ? await loadTrace(msg.traceUrl) : null;
  const model = core.parseConfig(msg.configText, msg.configName || 'config.json', msg.quantText || '');
  const input = { ...msg.input, requests: Math.min(msg.input.requests || WARM_REQUESTS, WARM_REQUESTS) };
  const t0 = performance.now();
  const going = () => !stopWarming && performance.now() - t0 < WARM_BUDGET_MS;
  try {
    while (going()) {
      const sim = simulate(core, model, input, traceBytes);
      try {
        while (!sim.run(WARM_STEPS).done && going()) await yieldTurn();
        // What a Run does after the simulation too, on what this one got to: V8 compiles a
        // function only when it is first called, and the result's and the block maps' code
        // (about 80 functions) was compiled during the first Run, in its way.
        sim.result({ snapshots: false });
        if (input.snapshots > 0) sim.packedSnapshots();
      } finally {
        sim.release();
      }
    }
  } finally {
    model.release();
  }
}

self.onmessage = (ev) => {
  const msg = ev.data || {};
  if (msg.type === 'warm') {
    loadCore().catch(() => { corePromise = null; });
    if (msg.traceUrl) loadTrace(msg.traceUrl).catch(() => {});
    // Only for settings the worker can read itself (a config text, no user file).
    if (msg.run?.configText && !stopWarming && !warming) {
      const w0 = performance.now();
      // 'warmed' only after a warm-up that ran (settings the core refuses are reported by Run).
      warming = warmUp(msg.run).then(() => self.postMessage({ type: 'warmed', ms: performance.now() - w0 }), () => {});
    }
    return;
  }
  if (msg.type !== 'run') return;
  run(msg).catch((e) => {
    self.postMessage({ type: 'error', code: e?.code || 'internal', message: e?.message || String(e), detail: e?.detail || null });
  });
};
