// The wrapper's contract (wasm/kvbudget.d.ts): one module, errors as KvbudgetError
// with the core's stable code and message, exact numbers for the seed article's case.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { core, fixturesDir } from './helpers.mjs';
import { loadKvbudget, KvbudgetError } from '../../wasm/kvbudget.js';

const llama = fs.readFileSync(path.join(fixturesDir, 'meta-llama--Llama-3.1-8B.json'), 'utf8');

test('the module is loaded once', async () => {
  const a = await core();
  const b = await loadKvbudget();
  assert.equal(a, b);
});

test('Llama-3.1-8B at 32K in bf16: 128 KiB per token, 4 GiB per sequence', async () => {
  const kvb = await core();
  const m = kvb.parseConfig(llama, 'meta-llama/Llama-3.1-8B');
  const v = m.compute({ engine: 'vllm', gpu: 'rtx-4090', context: 32768, seqs: 1 });
  assert.equal(v.kv.bytes_per_token, 131072);
  assert.equal(v.kv.bytes_total, 4294967296);
  assert.equal(v.metrics['kv-bytes-per-token'], 131072);
  assert.equal(v.metrics['kv-bytes-total'], 4294967296);
  assert.deepEqual(v.kv.formula.map((g) => [g.kind, g.layers, g.kv_heads, g.k_head_dim, g.bytes_per_token_per_layer]), [['full', 32, 8, 128, 4096]]);
  assert.equal(m.spec.max_position_embeddings, 131072);
  m.release();
});

test('llama.cpp K and V types apply separately', async () => {
  const kvb = await core();
  const m = kvb.parseConfig(llama, 'meta-llama/Llama-3.1-8B');
  // K q8_0: 128 values in 4 blocks of 34 B; V f16: 256 B; x 8 heads x 32 layers.
  const v = m.compute({ engine: 'llamacpp', gpu: 'rtx-4090', context: 1024, seqs: 1, kv_cache_dtype: 'q8_0', kv_cache_dtype_v: 'f16' });
  assert.equal(v.kv.bytes_per_token, 32 * 8 * (4 * 34 + 256));
  m.release();
});

test('bad config text is an error value with the core code', async () => {
  const kvb = await core();
  assert.throws(() => kvb.parseConfig('{', 'x/y'), (e) => e instanceof KvbudgetError && e.code === 'not_json' && /x\/y/.test(e.message));
  assert.throws(() => kvb.parseConfig('[1,2]', 'x/y'), (e) => e instanceof KvbudgetError && e.code !== 'internal');
  assert.throws(() => kvb.parseConfig('{}', 'x/y'), (e) => e instanceof KvbudgetError && e.code !== 'internal');
});

test('bad compute input names the field', async () => {
  const kvb = await core();
  const m = kvb.parseConfig(llama, 'meta-llama/Llama-3.1-8B');
  const gpu = { gpu: 'rtx-4090' };
  assert.throws(() => m.compute({ ...gpu, engine: 'tgi' }), (e) => e.code === 'bad_value' && e.message === "--engine must be vllm, llamacpp or transformers, got 'tgi'" && e.detail.code === 'bad_engine');
  assert.throws(() => m.compute({ ...gpu, context: -1 }), (e) => e.code === 'bad_value' && e.message === '--max-model-len must be a whole number from 0 to 1,073,741,824, got -1' && e.detail.params.field === 'context');
  assert.throws(() => m.compute({ ...gpu, context: 1.5 }), (e) => e.code === 'bad_value' && e.message === 'context must be a whole number, got 1.5');
  assert.throws(() => m.compute({ ...gpu, seqs: 'many' }), (e) => e.code === 'bad_value' && e.message === 'seqs must be a whole number, got "many"');
  assert.throws(() => m.compute({ ...gpu, seqs: 0 }), (e) => e.message === '--seqs must be a whole number from 1 to 1,048,576, got 0');
  assert.throws(() => m.compute({ ...gpu, ctx: 5 }), (e) => e.message === "unknown input 'ctx'");
  assert.throws(() => m.compute({ ...gpu, engine: 'llamacpp', kv_cache_dtype: 'q3_k' }), (e) => e instanceof KvbudgetError && /q3_k/.test(e.message));
  assert.throws(() => m.compute({ ...gpu, engine: 'vllm', kv_cache_dtype: 'int4' }), (e) => e instanceof KvbudgetError && /int4/.test(e.message));
  assert.throws(() => m.compute({}), (e) => e.message === 'no GPU given: pass --gpu NAME or --gpu-memory SIZE');
  m.release();
  assert.throws(() => m.compute({}), (e) => e.code === 'bad_handle');
});

test('sizes parse as the CLI parses them', async () => {
  const kvb = await core();
  assert.equal(kvb.parseSize('24GiB'), 24 * 2 ** 30);
  assert.equal(kvb.parseSize('80GB'), 80e9);
  assert.throws(() => kvb.parseSize('lots'), KvbudgetError);
});

test('GPU names resolve to catalog ids as the CLI\'s --gpu resolves them', async () => {
  const kvb = await core();
  assert.equal(kvb.findGpu('h100'), 'h100-sxm');
  assert.equal(kvb.findGpu('NVIDIA H100'), 'h100-sxm');
  assert.equal(kvb.findGpu('RTX 4090'), 'rtx-4090');
  assert.equal(kvb.findGpu('4090'), 'rtx-4090');
  assert.equal(kvb.findGpu('a100'), 'a100-80gb');
  assert.equal(kvb.findGpu('rtx-4090'), 'rtx-4090');
  assert.equal(kvb.findGpu('no-such-gpu'), '');
  assert.equal(kvb.findGpu(''), '');
});

test('GPU catalog and weight formats come from the core', async () => {
  const kvb = await core();
  const c = kvb.catalog();
  assert.ok(c.gpus.length >= 10);
  const g = c.gpus.find((x) => x.id === 'rtx-4090');
  assert.ok(g, 'rtx-4090 in the catalog');
  assert.equal(g.memory_bytes, 24 * 2 ** 30);
  assert.ok(c.weight_formats.includes('auto'));
  assert.deepEqual(c.limits.seqs, { min: 1, max: 1048576, flag: '--seqs' });
  assert.deepEqual(kvb.kvTypeNames('llamacpp').slice(0, 3), ['f32', 'f16', 'bf16']);
});
