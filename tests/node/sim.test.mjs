// The WASM simulator gives the native `kvbudget simulate --json` summary for the
// same settings and seed: integers exactly, doubles to 1e-12 relative (both builds
// run the same deterministic C++; the bound only absorbs printing, and the CLI
// prints 17 significant digits). Also: chunked runs equal one run, and bad input
// comes back as a KvbudgetError naming the setting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { core, cli, fixturesDir, root } from './helpers.mjs';
import { KvbudgetError } from '../../wasm/kvbudget.js';

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

// [fixture, CLI flags, the same settings for the WASM module]
const CASES = [
  ['facebook--opt-1.3b', '--kv-cache-memory 4GiB --policy all --requests 300 --seed 7',
    { kvCacheMemory: 4 * 2 ** 30, policies: 'all', requests: 300, seed: 7 }],
  ['meta-llama--Llama-3.2-1B', '--gpu rtx-4090 --workload alpaca --requests 500 --seed 3 --n 4 --rate 20',
    { gpu: 'rtx-4090', workload: 'alpaca', requests: 500, seed: 3, n: 4, rate: 20, policies: ['paged'] }],
  ['Qwen--Qwen3-0.6B', '--gpu a100-40gb --gpu-memory-utilization 0.5 --policy pow2 --workload azure-code --requests 400 --max-model-len 8192',
    { gpu: 'a100-40gb', gpuMemoryUtilization: 0.5, policies: ['pow2'], workload: 'azure-code', requests: 400, maxModelLen: 8192 }],
  ['facebook--opt-1.3b', '--kv-cache-memory 2GiB --workload alpaca --shared-prefix 341 --shared-fraction 0.5 --prefix-caching --requests 300 --preemption swap --seed 11',
    { kvCacheMemory: 2 * 2 ** 30, workload: 'alpaca', sharedPrefix: 341, sharedFraction: 0.5, prefixCaching: true, requests: 300, preemption: 'swap', seed: 11, policies: 'paged' }],
  ['meta-llama--Llama-3.2-1B', '--kv-cache-memory 1GiB --beam 4 --requests 200 --block-size 32 --max-num-seqs 64 --max-num-batched-tokens 4096 --max-model-len 4096 --policy all --seed 5',
    { kvCacheMemory: 2 ** 30, beam: 4, requests: 200, blockSize: 32, maxNumSeqs: 64, maxNumBatchedTokens: 4096, maxModelLen: 4096, policies: 'all', seed: 5 }],
  ['Qwen--Qwen3-8B', `--gpu h100-sxm --policy all --workload ${rawPath}`,
    { gpu: 'h100-sxm', policies: 'all', workload: 'csv', trace: rawCsv, traceName: 'raw-trace.csv' }],
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

function runAll(model, input, chunk = 20000) {
  const sim = kvb.simulate(model, { ...input, trace: traceFor(input) });
  try {
    let p;
    do p = sim.run(chunk); while (!p.done);
    assert.equal(p.progress, 1);
    return sim.result();
  } finally {
    sim.release();
  }
}

function assertSameSummary(wasm, native, where) {
  assert.deepEqual(Object.keys(wasm).sort(), Object.keys(native).sort(), where + ': same fields');
  for (const [k, c] of Object.entries(native)) {
    const w = wasm[k];
    if (typeof c === 'number' && !Number.isInteger(c) || typeof w === 'number' && !Number.isInteger(w)) {
      const tol = 1e-12 * Math.max(Math.abs(c), Math.abs(w));
      assert.ok(Math.abs(w - c) <= tol, `${where}: ${k} wasm ${w} vs native ${c}`);
    } else {
      assert.equal(w, c, `${where}: ${k}`);
    }
  }
}

for (const [fixture, flags, input] of CASES) {
  test(`simulate matches the CLI: ${fixture} ${flags.replace(rawPath, 'raw-trace.csv')}`, () => {
    const r = cli(['simulate', path.join(fixturesDir, fixture + '.json'), ...flags.split(' '), '--json']);
    assert.ok(r.ok, r.stderr);
    const model = loadModel(fixture);
    try {
      const w = runAll(model, input);
      const n = r.json;
      assert.equal(w.config.requests, n.requests);
      assert.equal(w.config.kvCacheBytes, n.kv_cache_bytes);
      assert.equal(w.config.kvBytesPerToken, n.kv_bytes_per_token);
      assert.equal(w.config.blockSize, n.block_size);
      assert.equal(w.config.maxModelLen, n.max_model_len);
      assert.equal(w.config.maxNumSeqs, n.max_num_seqs);
      assert.equal(w.config.maxNumBatchedTokens, n.max_num_batched_tokens);
      assert.equal(w.policies.length, n.policies.length);
      n.policies.forEach((p, i) => assertSameSummary(w.policies[i].summary, p, `${fixture} ${p.policy}`));
      // Whole runs with no refusal finish everything.
      for (const p of w.policies) assert.equal(p.summary.finished + p.summary.refused, p.summary.requests);
    } finally {
      model.release();
    }
  });
}

test('a refusal is the CLI\'s refusal', () => {
  // One sequence of the model's whole context does not fit in 1 GiB of 32-token blocks.
  const r = cli(['simulate', path.join(fixturesDir, 'meta-llama--Llama-3.2-1B.json'), '--kv-cache-memory', '1GiB', '--block-size', '32', '--json']);
  assert.equal(r.ok, false);
  const model = loadModel('meta-llama--Llama-3.2-1B');
  try {
    assert.throws(() => kvb.simulate(model, { kvCacheMemory: 2 ** 30, blockSize: 32, policies: 'paged' }),
      (e) => e instanceof KvbudgetError && r.stderr.trim() === 'kvbudget: error: ' + e.message);
  } finally {
    model.release();
  }
});

test('chunked runs (one step at a time) equal one run, series and snapshots included', () => {
  const model = loadModel('facebook--opt-1.3b');
  try {
    const input = { kvCacheMemory: 2 ** 30, requests: 60, seed: 2, policies: ['paged', 'pow2'] };
    assert.deepEqual(runAll(model, input, 1), runAll(model, input, 1e9));
  } finally {
    model.release();
  }
});

test('series and block-map snapshots are well formed', () => {
  const model = loadModel('facebook--opt-1.3b');
  try {
    const r = runAll(model, { kvCacheMemory: 2 ** 30, requests: 200, seed: 1, n: 2, policies: ['paged', 'max'] });
    const [paged, max] = r.policies;
    const s = paged.series;
    assert.ok(s.time.length >= 2);
    for (let i = 0; i < s.time.length; i++) {
      const sum = s.tokenStates[i] + s.reserved[i] + s.internalFragmentation[i] + s.externalFragmentation[i] + s.cached[i] + s.free[i] + s.nullBlock[i];
      assert.ok(Math.abs(sum - 1) < 1e-9, `memory split sums to 1 at ${i}: ${sum}`);
      if (i) assert.ok(s.time[i] >= s.time[i - 1], 'time never goes back');
    }
    assert.ok(paged.snapshots.length > 4 && paged.snapshots.length <= 60);
    const blocks = paged.summary.num_blocks;
    let sawShared = false;
    for (const sn of paged.snapshots) {
      assert.equal(sn.numBlocks, blocks);
      let total = 0;
      for (let i = 0; i < sn.owner.length; i += 2) total += sn.owner[i + 1];
      assert.equal(total, blocks, 'runs cover the pool');
      assert.equal(sn.owner[0], -3, 'block 0 is the null block');
      if (sn.shared.length) sawShared = true;
    }
    assert.ok(sawShared, 'n=2 shares prompt blocks');
    assert.ok(max.snapshots.some((sn) => sn.regions.length > 0));
    for (const sn of max.snapshots) for (const g of sn.regions) assert.equal(g.length, 7);
  } finally {
    model.release();
  }
});

test('bad settings are errors naming the setting, never a crash', () => {
  const model = loadModel('facebook--opt-1.3b');
  try {
    const bad = (input, code, message) => assert.throws(() => kvb.simulate(model, input),
      (e) => e instanceof KvbudgetError && e.code === code && e.message === message);
    bad({ policies: ['best'] }, 'bad_value', 'policies must list paged, max, pow2 or oracle, got "best"');
    bad({ blockSize: 0 }, 'bad_value', 'blockSize must be a whole number from 1 to 4,096, got 0');
    bad({ workload: 'nonsense' }, 'bad_value', 'workload must be sharegpt, alpaca, azure-conv, azure-code or csv, got "nonsense"');
    bad({ workload: 'csv' }, 'bad_value', 'workload csv needs the trace CSV text in trace');
    bad({ preemption: 'never' }, 'bad_value', 'preemption must be v0, recompute or swap, got "never"');
    bad({ rate: -3 }, 'bad_value', 'rate must be a positive number of requests per second, got -3');
    bad({ sharedFraction: 0.5 }, 'bad_value', 'sharedFraction needs sharedPrefix');
    bad({ gpu: 'tpu-9000' }, 'bad_value', "unknown GPU 'tpu-9000'");
    assert.throws(() => kvb.simulate(model, { workload: 'csv', trace: 'a,b,c\n1,2\n', traceName: 'mine.csv' }),
      (e) => e instanceof KvbudgetError && /mine\.csv/.test(e.message));
    const sim = kvb.simulate(model, { kvCacheMemory: 2 ** 30, requests: 10 });
    sim.release();
    assert.throws(() => sim.run(), (e) => e instanceof KvbudgetError && e.code === 'bad_handle');
  } finally {
    model.release();
  }
});
