// The WASM module's budget equals `kvbudget budget --json` on every fixture, for
// vLLM, llama.cpp and transformers, on a small and a large GPU: weights, KV pool, longest context,
// concurrency, the predicted log lines, the command and the engine's refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { core, cli, fixtures } from './helpers.mjs';

const kvb = await core();
const SETUPS = [
  { engine: 'vllm', gpu: 'rtx-4090', seqs: 1, kv: 'auto' },
  { engine: 'vllm', gpu: 'h100-sxm', gpuCount: 8, seqs: 16, kv: 'fp8' },
  { engine: 'llamacpp', gpu: 'rtx-4090', seqs: 2, kv: 'q8_0' },
  { engine: 'transformers', gpu: 'h100-sxm', seqs: 2, kv: 'auto' },
];

for (const fx of fixtures()) {
  test(`budget matches the CLI: ${fx.id}`, () => {
    let model;
    try {
      model = kvb.parseConfig(fs.readFileSync(fx.path, 'utf8'), fx.id);
    } catch {
      return; // refused configs are covered by kv-vs-cli
    }
    try {
      const max = model.spec.maxPositionEmbeddings || 32768;
      const ctx = Math.min(32768, max);
      for (const s of SETUPS) {
        const args = ['budget', fx.path, '--json', '--engine', s.engine, '--gpu', s.gpu, '--gpu-count', String(s.gpuCount || 1),
          '--max-model-len', String(ctx), '--max-num-seqs', String(s.seqs), '--kv-cache-dtype', s.kv];
        const r = cli(args);
        const v = model.compute({ engine: s.engine, context: ctx, seqs: s.seqs, gpu: s.gpu, gpuCount: s.gpuCount || 1,
          kvDtype: s.kv, cacheTypeK: s.kv, cacheTypeV: s.kv });
        const where = `${fx.id} ${args.slice(3).join(' ')}`;
        if (!r.ok) {
          assert.equal(v.budget, null, where);
          assert.equal(r.stderr.trim(), 'kvbudget: error: ' + v.budgetError.message, where);
          continue;
        }
        const b = v.budget;
        assert.ok(b, `${where}: ${v.budgetError?.message}`);
        const j = r.json;
        assert.equal(b.weightsBytes, j.weights.bytes, where + ' weights');
        assert.equal(b.weightsPerGpuBytes, j.weights.per_gpu_bytes, where + ' weights per GPU');
        assert.equal(b.kvPoolBytes, j.kv_pool_bytes, where + ' kv pool');
        assert.equal(b.activationsBytes, j.activation_bytes, where + ' activations');
        assert.equal(b.overheadBytes, j.overhead_bytes + j.cudagraph_bytes, where + ' overhead');
        assert.equal(b.fits, j.fits, where + ' fits');
        assert.equal(b.allSeqsFit, j.all_seqs_fit, where + ' all seqs fit');
        assert.equal(b.maxContext, j.max_context, where + ' max context');
        assert.equal(b.maxConcurrency, j.max_concurrency, where + ' max concurrency');
        assert.deepEqual(v.engineView.logLines, j.log_lines, where + ' log lines');
        assert.equal(v.engineView.command, j.command, where + ' command');
        assert.equal(v.engineView.error || null, j.error, where + ' error');
        assert.equal(v.decode.tokensPerSecondSingle.toFixed(2), j.decode.tokens_per_s_single.toFixed(2), where + ' decode');
      }
    } finally {
      model.release();
    }
  });
}
