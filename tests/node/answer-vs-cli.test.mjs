// One answer, computed once (issue 8): for every fixture, engine and a grid of settings,
// the WASM module's Answer is byte for byte the JSON `kvbudget budget --json` prints for
// the same settings, and its KV report is what `kvbudget kv --json` prints. A refusal is
// the same refusal on both faces. The model spec equals `kvbudget inspect --json`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { core, cliPath, fixtures } from './helpers.mjs';

const kvb = await core();

// {ok, stdout, stderr} of one CLI run.
function run(args) {
  try {
    return { ok: true, stdout: execFileSync(cliPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (e) {
    if (e.code === 'ENOENT') throw new Error(`native CLI not found at ${cliPath}`);
    return { ok: false, status: e.status, stderr: String(e.stderr) };
  }
}

// The module's raw reply for compute(): {"ok":true,"value":<Answer JSON>} or an error object.
function rawCompute(model, input) {
  return kvb.m.compute(model.handle, JSON.stringify(input));
}

// Settings as the page sends them and as the CLI's flags say them.
const GRID = [
  { gpu: 'rtx-4090', gpu_count: 1, context: 32768, seqs: 1 },
  { gpu: 'h100-sxm', gpu_count: 4, context: 8192, seqs: 8, kv: { vllm: 'fp8', llamacpp: 'q8_0' } },
  { gpu: 'a100-80gb', gpu_count: 2, context: 0, seqs: 32, weights: { vllm: 'fp8', llamacpp: 'Q8_0', transformers: 'bf16' } },
  { gpu: '', gpu_memory_bytes: 16 * 2 ** 30, gpu_count: 1, context: 4096, seqs: 2, util: 0.8, max_num_seqs: 64 },
  // Past every config's own limit, then with YaRN x4 (issue 9.4): vLLM refuses beside the numbers.
  { gpu: 'h100-sxm', gpu_count: 1, context: 131072 * 2, seqs: 1 },
  { gpu: 'h100-sxm', gpu_count: 1, context: 131072, seqs: 1, rope: { vllm: 'yarn:4', llamacpp: 'yarn:4', transformers: 'linear:2' } },
  // llama.cpp only: --fit's knobs with no -c on a small GPU, and partial offload read at a given RAM bandwidth.
  { gpu: '', gpu_memory_bytes: 8 * 2 ** 30, gpu_count: 1, context: 0, seqs: 1, llama: { fitt: 512, fitc: 8192 } },
  { gpu: 'rtx-4090', gpu_count: 1, context: 16384, seqs: 2, llama: { ngl: 20, ramBw: 60 } },
  // An engine version (issue 12): vLLM 0.20.1's two lines and legacy count, llama.cpp b6232's unified prefix.
  { gpu: 'h100-sxm', gpu_count: 2, context: 32768, seqs: 1, version: { vllm: '0.20.1', llamacpp: 'b6232' } },
  // A T4 under vLLM 0.15.1: float16 for bfloat16 checkpoints, and the start-up refusals of quantization methods and
  // compressed-tensors schemes below compute capability 8.0 (poolside/Laguna-XS.2-FP8's fp8 blocks among them).
  // `kvbudget kv` knows no GPU or release, and the dtype served here is the budget's own (float32 for Gemma 3).
  { gpu: 't4', gpu_count: 1, context: 4096, seqs: 1, version: { vllm: '0.15.1' }, budgetOnly: true },
  // vLLM 0.10.2, which reads no compressed-tensors fp8 blocks (the Laguna FP8 checkpoints stop at their first block
  // layer). Budget only: its cache does not follow a kv_cache_scheme (0.15.0 on), which `kvbudget kv` always reads.
  { gpu: 'h100-sxm', gpu_count: 1, context: 4096, seqs: 1, version: { vllm: '0.10.2' }, budgetOnly: true },
];

function flags(engine, g) {
  const a = ['--engine', engine, '--gpu-count', String(g.gpu_count), '--max-model-len', String(g.context), '--seqs', String(g.seqs)];
  if (g.gpu) a.push('--gpu', g.gpu); else a.push('--gpu-memory', String(g.gpu_memory_bytes));
  if (g.kv?.[engine]) a.push('--kv-cache-dtype', g.kv[engine]);
  if (g.weights?.[engine]) a.push('--weights', g.weights[engine]);
  if (engine === 'vllm' && g.util) a.push('--gpu-memory-utilization', String(g.util));
  if (engine === 'vllm' && g.max_num_seqs) a.push('--max-num-seqs', String(g.max_num_seqs));
  if (g.rope?.[engine]) a.push('--rope-scaling', g.rope[engine]);
  if (g.version?.[engine]) a.push('--engine-version', g.version[engine]);
  if (engine === 'llamacpp' && g.llama) {
    if (g.llama.fitt) a.push('--fit-target', String(g.llama.fitt), '--fit-ctx', String(g.llama.fitc));
    if (g.llama.ngl) a.push('--ngl', String(g.llama.ngl), '--ram-bandwidth', String(g.llama.ramBw));
  }
  return a;
}

function input(engine, g) {
  const i = { engine, gpu: g.gpu, gpu_count: g.gpu_count, context: g.context, seqs: g.seqs };
  if (!g.gpu) i.gpu_memory_bytes = g.gpu_memory_bytes;
  if (g.kv?.[engine]) i.kv_cache_dtype = g.kv[engine];
  if (g.weights?.[engine]) i.weights = g.weights[engine];
  if (engine === 'vllm' && g.util) i.gpu_memory_utilization = g.util;
  if (engine === 'vllm' && g.max_num_seqs) i.max_num_seqs = g.max_num_seqs;
  if (g.rope?.[engine]) i.rope_scaling = g.rope[engine];
  if (g.version?.[engine]) i.engine_version = g.version[engine];
  if (engine === 'llamacpp' && g.llama) {
    if (g.llama.fitt) Object.assign(i, { fit_target_mb: g.llama.fitt, fit_ctx: g.llama.fitc });
    if (g.llama.ngl) Object.assign(i, { n_gpu_layers: g.llama.ngl, ram_bandwidth_bytes_per_s: g.llama.ramBw * 1e9 });
  }
  return i;
}

for (const fx of fixtures()) {
  test(`page and CLI give one answer: ${fx.id}`, () => {
    const text = fs.readFileSync(fx.path, 'utf8');
    let model;
    try {
      model = kvb.parseConfig(text, fx.id);
    } catch (e) {
      const r = run(['inspect', fx.path, '--json']);
      assert.equal(r.ok, false, `CLI accepted ${fx.id} but WASM refused it: ${e.message}`);
      assert.equal(r.stderr.trim(), 'kvbudget: error: ' + e.message);
      return;
    }
    try {
      const inspect = run(['inspect', fx.path, '--json']);
      assert.equal(JSON.stringify(model.spec), JSON.stringify(JSON.parse(inspect.stdout)), `${fx.id} model spec`);
      for (const engine of ['vllm', 'llamacpp', 'transformers']) {
        for (const g of GRID) {
          if (g.llama && engine !== 'llamacpp') continue;
          const args = ['budget', fx.path, '--json', ...flags(engine, g)];
          const where = `${fx.id}: kvbudget ${args.slice(2).join(' ')}`;
          const cli = run(args);
          const raw = rawCompute(model, input(engine, g));
          const reply = JSON.parse(raw);
          if (reply.ok && reply.value.refusal === null) {
            assert.ok(cli.ok, `${where}: CLI refused: ${cli.stderr}`);
            const prefix = '{"ok":true,"value":';
            assert.ok(raw.startsWith(prefix) && raw.endsWith('}'));
            assert.equal(raw.slice(prefix.length, -1), cli.stdout.trim(), where);
          } else {
            const message = reply.ok ? reply.value.refusal.message : reply.message;
            assert.equal(cli.ok, false, `${where}: CLI answered, WASM refused: ${message}`);
            assert.equal(cli.stderr.trim(), 'kvbudget: error: ' + message, where);
          }
          // The Answer's KV report is `kvbudget kv` for the same engine and types.
          if (reply.ok && engine !== 'llamacpp' && !g.budgetOnly) {
            const a = reply.value;
            const kvArgs = ['kv', fx.path, '--json', '--engine', engine, '--context', String(a.kv.context), '--seqs', String(g.seqs),
              '--kv-dtype', a.inputs.kv_cache_dtype || 'auto'];
            const kv = run(kvArgs);
            assert.ok(kv.ok, `${where}: kv refused: ${kv.stderr}`);
            const k = JSON.parse(kv.stdout);
            // Only the weights compared against differ: kv uses the config's own format.
            // `kvbudget kv` has no RoPE scaling: the curve of a scaled answer runs to the scaled limit.
            for (const key of ['bytes_per_token', 'windowed_bytes_per_token', 'state_bytes_per_seq', 'bytes_total', 'kinds', 'formula', 'head_variants', ...(g.rope ? [] : ['curve'])])
              assert.deepEqual(a.kv[key], k[key], `${where} kv.${key}`);
            // The answer names vLLM's auto as the budget served it (fp8_ds_mla for DeepSeek-V4, float16 on a T4);
            // `kvbudget kv` has no GPU and names auto's own type: the ladder's bytes agree, its baseline rows each
            // name their own.
            const named = (rows, type) => rows.map((r) => (r.detail === type ? { ...r, detail: 'auto' } : r));
            assert.deepEqual(named(a.kv.ladder, a.kv.k_type.name), named(k.ladder, k.k_type.name), `${where} kv.ladder`);
          }
        }
      }
    } finally {
      model.release();
    }
  });
}

test('the metrics are the data-metric names with the Answer\'s own numbers', () => {
  const fx = fixtures().find((f) => f.id === 'meta-llama/Llama-3.1-8B');
  const model = kvb.parseConfig(fs.readFileSync(fx.path, 'utf8'), fx.id);
  const a = model.compute({ engine: 'vllm', gpu: 'rtx-4090', context: 32768, seqs: 1 });
  assert.deepEqual(Object.keys(a.metrics).sort(),
    ['kv-bytes-per-token', 'kv-bytes-total', 'max-concurrency', 'max-context', 'max-context-physical', 'total-bytes', 'weights-bytes']);
  assert.equal(a.metrics['max-context-physical'], a.budget.max_context_physical);
  assert.equal(a.metrics['kv-bytes-per-token'], a.kv.bytes_per_token);
  assert.equal(a.metrics['total-bytes'], a.budget.per_gpu.total_bytes);
  assert.equal(a.metrics['max-context'], a.budget.max_context);
  assert.equal(a.metrics['max-concurrency'], a.budget.max_concurrency);
  model.release();
});
