// One answer, computed once (issue 8): for a grid of settings the WASM simulator's
// summary is byte for byte the JSON `kvbudget simulate --json` prints (both are
// src/report/sim_json.cpp over the same SimSession, and both builds run the same
// deterministic C++). Also: chunked runs equal one run, and bad input comes back as
// a KvbudgetError in the CLI's own terms, with the core's coded detail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { core, cli, cliPath, fixturesDir, root } from './helpers.mjs';
import { KvbudgetError, unpackSnapshots, ownerRuns } from '../../wasm/kvbudget.js';

const kvb = await core();
const traces = path.join(root, 'data/traces');
process.env.KVBUDGET_TRACES = traces;

// A small trace in the raw Azure format, to check the CSV path (a dropped file in the page).
const rawCsv = ['TIMESTAMP,ContextTokens,GeneratedTokens',
  ...Array.from({ length: 120 }, (_, i) => {
    const s = (i * 0.37).toFixed(7).padStart(10, '0');
    return `2023-11-16 18:${String(15 + Math.floor(i / 60)).padStart(2, '0')}:${s.slice(-10)},${100 + ((i * 131) % 1900)},${1 + ((i * 37) % 400)}`;
  })].join('\n') + '\n';
const rawPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-sim-')), 'raw-trace.csv');
fs.writeFileSync(rawPath, rawCsv);

// [fixture, CLI flags, the same settings as SimInputs]
const CASES = [
  ['facebook--opt-1.3b', '--kv-cache-memory 4GiB --policy all --requests 300 --seed 7',
    { kv_cache_memory: 4 * 2 ** 30, policies: 'all', requests: 300, seed: 7 }],
  ['meta-llama--Llama-3.2-1B', '--gpu rtx-4090 --workload alpaca --requests 500 --seed 3 --n 4 --rate 20',
    { gpu: 'rtx-4090', workload: 'alpaca', requests: 500, seed: 3, n: 4, rate: 20, policies: ['paged'] }],
  ['meta-llama--Llama-3.2-1B', '--gpu rtx-4090 --workload alpaca --requests 300 --n 3 --sample-lengths same --policy all',
    { gpu: 'rtx-4090', workload: 'alpaca', requests: 300, n: 3, sample_lengths: 'same', policies: 'all' }],
  ['Qwen--Qwen3-0.6B', '--gpu a100-40gb --gpu-memory-utilization 0.5 --policy pow2 --workload azure-code --requests 400 --max-model-len 8192',
    { gpu: 'a100-40gb', gpu_memory_utilization: 0.5, policies: ['pow2'], workload: 'azure-code', requests: 400, max_model_len: 8192 }],
  ['facebook--opt-1.3b', '--kv-cache-memory 2GiB --workload alpaca --shared-prefix 341 --shared-fraction 0.5 --prefix-caching --requests 300 --preemption swap --seed 11',
    { kv_cache_memory: 2 * 2 ** 30, workload: 'alpaca', shared_prefix: 341, shared_fraction: 0.5, prefix_caching: true, requests: 300, preemption: 'swap', seed: 11, policies: 'paged' }],
  ['meta-llama--Llama-3.2-1B', '--kv-cache-memory 1GiB --beam 4 --requests 200 --block-size 32 --max-num-seqs 64 --max-num-batched-tokens 4096 --max-model-len 4096 --policy all --seed 5',
    { kv_cache_memory: 2 ** 30, beam: 4, requests: 200, block_size: 32, max_num_seqs: 64, max_num_batched_tokens: 4096, max_model_len: 4096, policies: 'all', seed: 5 }],
  ['facebook--opt-1.3b', '--kv-cache-memory 3GiB --beam 2 --requests 150 --block-size 8 --preemption recompute --swap-space 2',
    { kv_cache_memory: 3 * 2 ** 30, beam: 2, requests: 150, block_size: 8, preemption: 'recompute', swap_space_bytes: 2 * 2 ** 30 }],
  ['Qwen--Qwen3-8B', `--gpu h100-sxm --policy all --workload ${rawPath}`,
    { gpu: 'h100-sxm', policies: 'all', workload: 'csv', trace: rawCsv, trace_name: 'raw-trace.csv' }],
  ['Qwen--Qwen3-8B', '--gpu l40s --kv-cache-memory 6GiB --max-model-len 8192 --workload azure-conv --requests 1500 --rate 8 --policy max',
    { gpu: 'l40s', kv_cache_memory: 6 * 2 ** 30, max_model_len: 8192, workload: 'azure-conv', requests: 1500, rate: 8, policies: ['max'] }],
  // The benchmark's case: the whole Azure conversation trace, paged, Llama-3.1-8B on an A100-80GB.
  ['meta-llama--Llama-3.1-8B', '--gpu a100-80gb --workload azure-conv',
    { gpu: 'a100-80gb', workload: 'azure-conv', policies: ['paged'] }],
];

function traceFor(input) {
  if (input.workload === 'azure-conv') return fs.readFileSync(path.join(traces, 'azure-llm-2023-conv.csv'), 'utf8');
  if (input.workload === 'azure-code') return fs.readFileSync(path.join(traces, 'azure-llm-2023-code.csv'), 'utf8');
  return input.trace;
}

function loadModel(name) {
  return kvb.parseConfig(fs.readFileSync(path.join(fixturesDir, name + '.json'), 'utf8'), name.replace('--', '/'));
}

function withSim(model, input, f) {
  const trace = traceFor(input);
  const sim = kvb.simulate(model, trace ? { ...input, trace } : input);
  try {
    return f(sim);
  } finally {
    sim.release();
  }
}

function runToEnd(sim, chunk) {
  let p;
  do p = sim.run(chunk); while (!p.done);
  assert.equal(p.progress, 1);
}

function runAll(model, input, chunk = 20000) {
  return withSim(model, input, (sim) => {
    runToEnd(sim, chunk);
    return sim.result();
  });
}

// The CLI's stdout, raw.
function cliText(args) {
  return execFileSync(cliPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
}

for (const [fixture, flags, input] of CASES) {
  test(`simulate is the CLI's JSON byte for byte: ${fixture} ${flags.replace(rawPath, 'raw-trace.csv')}`, () => {
    const native = cliText(['simulate', path.join(fixturesDir, fixture + '.json'), ...flags.split(' '), '--json']).trim();
    const model = loadModel(fixture);
    try {
      withSim(model, input, (sim) => {
        runToEnd(sim, 20000);
        const raw = kvb.m.simResult(sim.id, JSON.stringify({ series: false, snapshots: false }));
        const prefix = '{"ok":true,"value":{"summary":';
        assert.ok(raw.startsWith(prefix) && raw.endsWith('}}'), raw.slice(0, 200));
        assert.equal(raw.slice(prefix.length, -2), native);
        // simCreate's echo is the report's head.
        const report = JSON.parse(native);
        for (const [k, v] of Object.entries(sim.info)) assert.deepEqual(report[k], v, k);
        assert.deepEqual(Object.keys(report).filter((k) => !(k in sim.info)).sort(), ['conclusions', 'done', 'policies']);
        // Whole runs with no refusal finish everything.
        for (const p of report.policies) assert.equal(p.finished + p.refused, p.requests);
      });
    } finally {
      model.release();
    }
  });
}

// A trace read in pieces through a reader (the worker reads a File's slices, never the
// whole text) is the CLI's run of the same file, byte for byte; a reader that fails is
// the core's message, not a crash.
test('a trace read in pieces is the CLI\'s run of the file', () => {
  const bytes = fs.readFileSync(path.join(traces, 'azure-llm-2023-code.csv'));
  const tracePath = path.join(path.dirname(rawPath), 'code-copy.csv');
  fs.writeFileSync(tracePath, bytes);
  const native = cliText(['simulate', path.join(fixturesDir, 'Qwen--Qwen3-0.6B.json'), '--gpu', 'a100-40gb',
    '--max-model-len', '8192', '--workload', tracePath, '--json']).trim();
  const model = loadModel('Qwen--Qwen3-0.6B');
  let largest = 0;
  const reader = (at, n) => {
    largest = Math.max(largest, n);
    return new Uint8Array(bytes.buffer, bytes.byteOffset + Math.min(at, bytes.length), Math.max(0, Math.min(n, bytes.length - at)));
  };
  try {
    const sim = kvb.simulate(model, { gpu: 'a100-40gb', max_model_len: 8192, workload: 'csv', trace_name: 'code-copy.csv' }, reader);
    try {
      runToEnd(sim, 20000);
      const raw = kvb.m.simResult(sim.id, JSON.stringify({ series: false, snapshots: false }));
      assert.equal(raw.slice('{"ok":true,"value":{"summary":'.length, -2), native);
    } finally {
      sim.release();
    }
    assert.equal(largest, 65536);
    const broken = (at) => {
      if (at > 0) throw new Error('NotReadableError');
      return new Uint8Array(bytes.buffer, bytes.byteOffset, 100);
    };
    assert.throws(() => kvb.simulate(model, { workload: 'csv', trace_name: 'gone.csv' }, broken),
      (e) => e instanceof KvbudgetError && e.message === 'cannot read gone.csv past line 4');
  } finally {
    model.release();
  }
});

test('a refusal is the CLI\'s refusal', () => {
  // One sequence of the model's whole context does not fit in 1 GiB of 32-token blocks.
  const r = cli(['simulate', path.join(fixturesDir, 'meta-llama--Llama-3.2-1B.json'), '--kv-cache-memory', '1GiB', '--block-size', '32', '--json']);
  assert.equal(r.ok, false);
  const model = loadModel('meta-llama--Llama-3.2-1B');
  try {
    assert.throws(() => kvb.simulate(model, { kv_cache_memory: 2 ** 30, block_size: 32, policies: 'paged' }),
      (e) => e instanceof KvbudgetError && r.stderr.trim() === 'kvbudget: error: ' + e.message);
  } finally {
    model.release();
  }
});

test('chunked runs (one step at a time) equal one run, series and snapshots included', () => {
  const model = loadModel('facebook--opt-1.3b');
  try {
    const input = { kv_cache_memory: 2 ** 30, requests: 60, seed: 2, policies: ['paged', 'pow2'], snapshots: 60 };
    assert.deepEqual(runAll(model, input, 1), runAll(model, input, 1e9));
  } finally {
    model.release();
  }
});

test('series and block-map snapshots are well formed', () => {
  const model = loadModel('facebook--opt-1.3b');
  try {
    const r = runAll(model, { kv_cache_memory: 2 ** 30, requests: 200, seed: 1, n: 2, policies: ['paged', 'max'], snapshots: 60 });
    assert.equal(r.series.length, 2);
    assert.equal(r.snapshots.length, 2);
    const [pagedSnaps, maxSnaps] = r.snapshots;
    const s = r.series[0];
    assert.ok(s.time_s.length >= 2);
    for (let i = 0; i < s.time_s.length; i++) {
      const sum = s.token_states[i] + s.reserved[i] + s.internal_fragmentation[i] + s.external_fragmentation[i] + s.cached[i] + s.free[i] + s.null_block[i];
      assert.ok(Math.abs(sum - 1) < 1e-9, `memory split sums to 1 at ${i}: ${sum}`);
      if (i) assert.ok(s.time_s[i] >= s.time_s[i - 1], 'time never goes back');
    }
    assert.ok(pagedSnaps.length > 4 && pagedSnaps.length <= 60);
    const blocks = r.summary.policies[0].num_blocks;
    let sawShared = false;
    for (const sn of pagedSnaps) {
      assert.equal(sn.num_blocks, blocks);
      let total = 0;
      for (let i = 0; i < sn.owner.length; i += 2) total += sn.owner[i + 1];
      assert.equal(total, blocks, 'runs cover the pool');
      assert.equal(sn.owner[0], -3, 'block 0 is the null block');
      if (sn.shared.length) sawShared = true;
    }
    assert.ok(sawShared, 'n=2 shares prompt blocks');
    assert.ok(maxSnaps.some((sn) => sn.regions.length > 0));
    for (const sn of maxSnaps) for (const g of sn.regions) assert.equal(g.length, 7);
  } finally {
    model.release();
  }
});

// The page takes the block maps in the packed form (the worker transfers three arrays
// instead of millions of numbers as JSON; owners as a table and a Uint16 index per
// block): read back, the same snapshots as the JSON, number for number, for paged
// (shared and partial blocks, prefix caching) and contiguous policies.
test('packed block-map snapshots read back as the JSON ones', () => {
  const model = loadModel('facebook--opt-1.3b');
  try {
    const cases = [
      { kv_cache_memory: 2 ** 30, requests: 200, seed: 1, n: 2, policies: 'all', snapshots: 60 },
      { kv_cache_memory: 2 ** 30, workload: 'alpaca', shared_prefix: 341, prefix_caching: true, requests: 150, policies: 'paged', snapshots: 7 },
      { kv_cache_memory: 2 ** 30, requests: 20, policies: ['max', 'paged'], snapshots: 0 },
    ];
    for (const input of cases) {
      withSim(model, input, (sim) => {
        runToEnd(sim, 20000);
        const json = sim.result({ series: false }).snapshots;
        const packed = sim.packedSnapshots();
        for (const a of [packed.f64, packed.i32, packed.u16]) assert.ok(a.buffer.byteLength === a.byteLength, 'owns its buffer (transferable)');
        const plain = unpackSnapshots(packed).map((list) => list.map((sn) => {
          const out = {};
          for (const [k, v] of Object.entries(sn)) {
            if (k === 'owner_index') continue;
            if (k === 'owners') {
              assert.ok(sn.owner_index, 'a Uint16 index for a map of a few owners');
              assert.equal(new Set(v).size, v.length, 'each owner once in the table');
              out.owner = ownerRuns(sn);
            } else {
              out[k] = v instanceof Int32Array ? Array.from(v) : v;
            }
          }
          return out;
        }));
        assert.deepEqual(plain, json, JSON.stringify(input));
        if (input.snapshots) assert.ok(json.every((list) => list.length > 0));
      });
    }
    // After a simPack the next one starts afresh (the module keeps no stale arrays).
    withSim(model, cases[2], (sim) => {
      runToEnd(sim, 20000);
      assert.deepEqual(unpackSnapshots(sim.packedSnapshots()), [[], []]);
    });
  } finally {
    model.release();
  }
});

// A map with more owners than a Uint16 can index (kMaxOwnerIndex, src/report/sim_json.h)
// lists every block's owner instead (owner_index null); read back, still the JSON's map.
// 66,000 one-token requests arrive together and are all running at step 8, the first
// snapshot: with the free, null and cached markers, more than 65,536 distinct owners.
test('a packed map of more than 65,536 owners lists every block\'s owner and reads back as the JSON one', () => {
  const N = 66000;
  const trace = ['TIMESTAMP,ContextTokens,GeneratedTokens', ...Array.from({ length: N }, () => '2023-11-16 18:15:00.0000000,1,9')].join('\n') + '\n';
  const model = loadModel('Qwen--Qwen3-0.6B');
  try {
    withSim(model, { kv_cache_memory: 130 * 2 ** 30, block_size: 16, max_num_seqs: 100000, max_num_batched_tokens: 100000,
      policies: ['paged'], snapshots: 4, workload: 'csv', trace, trace_name: 'wide.csv' }, (sim) => {
      runToEnd(sim, 100000);
      const json = sim.result({ series: false }).snapshots;
      const [maps] = unpackSnapshots(sim.packedSnapshots());
      assert.equal(maps.length, json[0].length);
      assert.ok(maps.length > 0);
      const wide = maps.filter((sn) => sn.owner_index === null);
      assert.ok(wide.length > 0, 'at least one map too wide for a Uint16 index');
      for (const sn of wide) {
        assert.equal(sn.owners.length, sn.num_blocks, 'one owner per block');
        assert.ok(new Set(sn.owners).size > 65536);
      }
      maps.forEach((sn, i) => {
        assert.deepEqual(ownerRuns(sn), json[0][i].owner, `map ${i}: owners`);
        assert.deepEqual(Array.from(sn.shared), json[0][i].shared);
        assert.deepEqual(Array.from(sn.partial), json[0][i].partial);
        assert.equal(sn.step, json[0][i].step);
      });
    });
  } finally {
    model.release();
  }
});

// The page's refusal is the CLI's for the same setting: one validate() in the core.
test('bad settings are refused by name in the CLI\'s terms, never a crash', () => {
  const fixture = path.join(fixturesDir, 'facebook--opt-1.3b.json');
  const model = loadModel('facebook--opt-1.3b');
  try {
    const bad = (input, detailCode, message, flags) => {
      assert.throws(() => kvb.simulate(model, input),
        (e) => e instanceof KvbudgetError && e.code === 'bad_value' && e.message === message && e.detail?.code === detailCode,
        JSON.stringify(input));
      if (flags) {
        const r = cli(['simulate', fixture, '--kv-cache-memory', '4GiB', ...flags]);
        assert.equal(r.ok, false);
        assert.equal(r.stderr.trim(), 'kvbudget: error: ' + message, flags.join(' '));
      }
    };
    bad({ policies: ['best'] }, 'sim_bad_policy', "--policy must be paged, max, pow2, oracle or all, got 'best'", ['--policy', 'best']);
    bad({ block_size: 0 }, 'input_out_of_range', '--block-size must be a whole number from 1 to 256, got 0', ['--block-size', '0']);
    // vLLM's --block-size choices (vllm/config/cache.py) and its SchedulerConfig's rule.
    bad({ block_size: 3 }, 'vllm_block_size_choice', "--block-size must be one of vLLM's block sizes 1, 8, 16, 32, 64, 128 or 256, got 3", ['--block-size', '3']);
    bad({ kv_cache_memory: 4 * 2 ** 30, max_num_batched_tokens: 10 }, 'vllm_batched_below_seqs',
      'vLLM refuses to start: max_num_batched_tokens (10) must be greater than or equal to max_num_seqs (256)', ['--max-num-batched-tokens', '10']);
    bad({ n: 2000 }, 'input_out_of_range', '--n must be a whole number from 1 to 1,024, got 2,000', ['--n', '2000']);
    bad({ workload: 'nonsense' }, 'sim_bad_workload', "--workload must be sharegpt, alpaca, azure-conv, azure-code or a .csv file, got 'nonsense'", ['--workload', 'nonsense']);
    bad({ workload: 'csv' }, 'sim_trace_needed', "workload csv needs the trace's CSV text");
    bad({ preemption: 'never' }, 'sim_bad_preemption', "--preemption must be v0, recompute or swap, got 'never'", ['--preemption', 'never']);
    bad({ sample_lengths: 'random' }, 'sim_bad_sample_lengths', "--sample-lengths must be independent or same, got 'random'", ['--sample-lengths', 'random']);
    bad({ rate: -3 }, 'sim_bad_rate', "--rate must be a positive number of requests per second, got '-3'", ['--rate', '-3']);
    bad({ shared_fraction: 0.5 }, 'sim_fraction_needs_prefix', '--shared-fraction needs --shared-prefix', ['--shared-fraction', '0.5']);
    bad({ shared_prefix: 10, shared_fraction: 1.5 }, 'sim_bad_fraction', '--shared-fraction must be a number above 0 and at most 1, got 1.5');
    bad({ blockSize: 16 }, 'input_unknown_field', "unknown input 'blockSize'");
    bad({ n: '4' }, 'input_wrong_type', 'n must be a whole number, got "4"');
    bad({ prefix_caching: 1 }, 'input_wrong_type', 'prefix_caching must be a true or false, got 1');
    assert.throws(() => kvb.simulate(model, { gpu: 'tpu-9000' }), (e) => e instanceof KvbudgetError && e.message === "unknown GPU 'tpu-9000'");
    assert.throws(() => kvb.simulate(model, { workload: 'csv', trace: 'a,b,c\n1,2\n', trace_name: 'mine.csv' }),
      (e) => e instanceof KvbudgetError && /mine\.csv/.test(e.message));
    const sim = kvb.simulate(model, { kv_cache_memory: 2 ** 30, requests: 10 });
    sim.release();
    assert.throws(() => sim.run(), (e) => e instanceof KvbudgetError && e.code === 'bad_handle');
  } finally {
    model.release();
  }
});

test('the page takes the simulator\'s ranges from the core', () => {
  const l = kvb.catalog().sim_limits;
  assert.deepEqual(l.block_size, { min: 1, max: 256, flag: '--block-size' });
  assert.deepEqual(kvb.catalog().sim_block_sizes, [1, 8, 16, 32, 64, 128, 256]);
  assert.deepEqual(l.n, { min: 1, max: 1024, flag: '--n' });
  assert.deepEqual(l.max_num_seqs, { min: 1, max: 2000000000, flag: '--max-num-seqs' });
});

test('the page\'s link parser reads the core\'s ranges', async () => {
  const { SIM_LIMITS_MIRROR, SIM_BLOCK_SIZES } = await import('../../web/src/sim-state.js');
  const l = kvb.catalog().sim_limits;
  assert.deepEqual(SIM_BLOCK_SIZES, kvb.catalog().sim_block_sizes);
  for (const [field, [min, max]] of Object.entries(SIM_LIMITS_MIRROR)) assert.deepEqual([min, max], [l[field].min, l[field].max], field);
});

// The page flags a field before any run (sim-view.js readField) with the message the core
// would give for the same value: same code, same parameters, from the same limits.
test('the page\'s field check is the core\'s validate() for each number field', async () => {
  const { checkSimField } = await import('../../web/src/sim-state.js');
  const limits = kvb.catalog().sim_limits;
  const model = loadModel('facebook--opt-1.3b');
  try {
    const cases = [['simReq', 'requests', 0], ['simReq', 'requests', 10_000_001], ['simSeed', 'seed', -1], ['simN', 'n', 0], ['simBeam', 'beam', 1025],
      ['simPrefix', 'shared_prefix', 10_000_001], ['simSeqs', 'max_num_seqs', 0], ['simTok', 'max_num_batched_tokens', 2_000_000_001],
      ['simRate', 'rate', -1], ['simRate', 'rate', 0], ['simFrac', 'shared_fraction', 0], ['simFrac', 'shared_fraction', 1.5]];
    for (const [key, field, v] of cases) {
      const input = { kv_cache_memory: 2 ** 30, [field]: v, ...(field === 'shared_fraction' ? { shared_prefix: 10 } : {}) };
      let detail = null;
      try {
        kvb.simulate(model, input).release();
      } catch (e) {
        detail = e.detail;
      }
      assert.ok(detail, `${field} = ${v} is refused`);
      const page = checkSimField(key, String(v), { limits }).message;
      assert.deepEqual({ code: page.code, params: page.params }, { code: detail.code, params: detail.params }, `${field} = ${v}`);
    }
    // And what the core takes, the page takes.
    for (const [key, text, value] of [['simReq', '1', 1], ['simRate', '0.5', 0.5], ['simFrac', '1', 1], ['simPrefix', '0', 0], ['simSeqs', '', 0], ['simN', '', 1]]) {
      assert.deepEqual(checkSimField(key, text, { limits }), { value }, `${key} ${text}`);
    }
  } finally {
    model.release();
  }
});
