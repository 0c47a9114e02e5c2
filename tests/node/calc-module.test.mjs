// The page's first answer comes from the calculator module (build-wasm/kvbudget-calc.wasm,
// linked for size without the simulator, issue 13). It must be the same calculator: for
// every fixture, engine and a grid of settings its replies are byte for byte those of the
// whole module (which answer-vs-cli.test.mjs holds to the CLI), refusals included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { core, root, fixtures } from './helpers.mjs';
import { loadKvbudget as loadCalc, KvbudgetError } from '../../wasm/kvbudget-calc.js';
import { KvbudgetError as FullError } from '../../wasm/kvbudget.js';

const full = await core();
const calc = await loadCalc({ wasmBinary: fs.readFileSync(path.join(root, 'build-wasm/kvbudget-calc.wasm')) });

const GRID = [
  { gpu: 'rtx-4090', gpu_count: 1, context: 32768, seqs: 1 },
  { gpu: 'h100-sxm', gpu_count: 4, context: 8192, seqs: 8, kv_cache_dtype: 'fp8' },
  { gpu: 'a100-80gb', gpu_count: 2, context: 0, seqs: 32, weights: 'fp8', tensor_parallel_size: 2 },
  { gpu: '', gpu_memory_bytes: 16 * 2 ** 30, gpu_count: 1, context: 4096, seqs: 2, gpu_memory_utilization: 0.8, max_num_seqs: 64 },
  { gpu: 'rtx-4090', context: -5 },
];

test('the calculator module answers byte for byte as the whole module', () => {
  let compared = 0;
  for (const f of fixtures()) {
    const text = fs.readFileSync(f.path, 'utf8');
    const a = full.m.parseConfig(text, f.id, '');
    const b = calc.m.parseConfig(text, f.id, '');
    assert.equal(b, a, `${f.file}: parseConfig`);
    const ha = JSON.parse(a).value?.handle;
    const hb = JSON.parse(b).value?.handle;
    if (!ha) continue;
    for (const engine of ['vllm', 'llamacpp', 'transformers']) {
      for (const g of GRID) {
        const input = JSON.stringify({ engine, ...g });
        assert.equal(calc.m.compute(hb, input), full.m.compute(ha, input), `${f.file} ${input}`);
        compared++;
      }
    }
    full.m.releaseModel(ha);
    calc.m.releaseModel(hb);
  }
  assert.ok(compared > 100, `compared ${compared} answers`);
  // Its message table leaves out the codes only the log check, the lab, the simulator and
  // the GGUF reader emit (src/base/message.cpp); the rest of the catalog is the same bytes.
  const calcCatalog = JSON.parse(calc.m.catalog()).value;
  const fullCatalog = JSON.parse(full.m.catalog()).value;
  const viewsOnly = /^(check|lab|sim|gguf)_/;
  assert.deepEqual(calcCatalog.messages, fullCatalog.messages.filter((m) => calcCatalog.messages.some((c) => c.code === m.code)));
  const left = fullCatalog.messages.filter((m) => !calcCatalog.messages.some((c) => c.code === m.code));
  assert.ok(left.length > 100, `${left.length} codes left out`);
  for (const m of left) assert.match(m.code, viewsOnly);
  delete calcCatalog.messages;
  delete fullCatalog.messages;
  assert.deepEqual(calcCatalog, fullCatalog);
  for (const s of ['24GB', '80 GiB', 'lots']) assert.equal(calc.m.parseSize(s), full.m.parseSize(s));
  for (const s of ['h100', 'RTX 4090', 'nope']) assert.equal(calc.m.findGpu(s), full.m.findGpu(s));
});

test('the calculator module has no simulator, GGUF reader, log check or lab; errors are the same KvbudgetError class', () => {
  // The page loads the whole module for these (web/src/views.js loadFullCore): their code
  // would otherwise be bytes every first answer waits for.
  for (const f of ['simCreate', 'ggufRead', 'ggufModel', 'checkLog', 'checkLogModel', 'labTable']) {
    assert.equal(typeof calc.m[f], 'undefined', f);
    assert.equal(typeof full.m[f], 'function', f);
  }
  assert.equal(KvbudgetError, FullError);
  assert.throws(() => calc.parseConfig('{', 'bad.json'), (e) => e instanceof KvbudgetError && e.code !== 'internal');
});
