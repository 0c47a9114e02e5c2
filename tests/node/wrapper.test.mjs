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
  const v = m.compute({ engine: 'vllm', context: 32768, seqs: 1 });
  assert.equal(v.kv.bytesPerToken, 131072);
  assert.equal(v.kv.bytesTotal, 4294967296);
  assert.deepEqual(v.formula.map((g) => [g.kind, g.layers, g.kvHeads, g.kHeadDim, g.bytesPerTokenPerLayer]), [['full', 32, 8, 128, 4096]]);
  assert.equal(m.spec.maxPositionEmbeddings, 131072);
  m.release();
});

test('llama.cpp K and V types apply separately', async () => {
  const kvb = await core();
  const m = kvb.parseConfig(llama, 'meta-llama/Llama-3.1-8B');
  // K q8_0: 128 values in 4 blocks of 34 B; V f16: 256 B; x 8 heads x 32 layers.
  const v = m.compute({ engine: 'llamacpp', context: 1024, seqs: 1, cacheTypeK: 'q8_0', cacheTypeV: 'f16' });
  assert.equal(v.kv.bytesPerToken, 32 * 8 * (4 * 34 + 256));
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
  assert.throws(() => m.compute({ engine: 'tgi' }), (e) => e.code === 'bad_value' && /engine/.test(e.message));
  assert.throws(() => m.compute({ context: 0 }), (e) => e.code === 'bad_value' && /context/.test(e.message));
  assert.throws(() => m.compute({ context: 1.5 }), (e) => e.code === 'bad_value' && /context/.test(e.message));
  assert.throws(() => m.compute({ seqs: 'many' }), (e) => e.code === 'bad_value' && /seqs/.test(e.message));
  assert.throws(() => m.compute({ engine: 'llamacpp', cacheTypeK: 'q3_k' }), (e) => e instanceof KvbudgetError && /q3_k/.test(e.message));
  assert.throws(() => m.compute({ engine: 'vllm', kvDtype: 'int4' }), (e) => e instanceof KvbudgetError && /int4/.test(e.message));
  m.release();
  assert.throws(() => m.compute({}), (e) => e.code === 'bad_handle');
});

test('sizes parse as the CLI parses them', async () => {
  const kvb = await core();
  assert.equal(kvb.parseSize('24GiB'), 24 * 2 ** 30);
  assert.equal(kvb.parseSize('80GB'), 80e9);
  assert.throws(() => kvb.parseSize('lots'), KvbudgetError);
});

test('GPU catalog and weight formats come from the core', async () => {
  const kvb = await core();
  const c = kvb.catalog();
  assert.ok(c.gpus.length >= 10);
  const g = c.gpus.find((x) => x.id === 'rtx-4090');
  assert.ok(g, 'rtx-4090 in the catalog');
  assert.equal(g.memoryBytes, 24 * 2 ** 30);
  assert.ok(c.weightFormats.some((f) => f.id === 'auto'));
});
