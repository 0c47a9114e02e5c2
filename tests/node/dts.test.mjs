// wasm/kvbudget.d.ts is the contract of the module's JSON: every field the core sends is
// typed there under the same name, and every typed field is sent (issue 8).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { core, root, fixturesDir } from './helpers.mjs';

const dts = fs.readFileSync(path.join(root, 'wasm/kvbudget.d.ts'), 'utf8');

// Top-level member names of `export interface Name { ... }` (nested object types are skipped).
function members(name) {
  const start = dts.indexOf(`export interface ${name} `);
  assert.ok(start >= 0, `interface ${name} in kvbudget.d.ts`);
  let i = dts.indexOf('{', start) + 1;
  let depth = 1;
  let body = '';
  for (; depth > 0; i++) {
    const c = dts[i];
    if (c === '{' || c === '(' || c === '[') depth++;
    if (c === '}' || c === ')' || c === ']') depth--;
    if (depth === 1 && c !== '}') body += c;
    else if (depth === 2 && (c === '{' || c === '(' || c === '[')) body += c;
  }
  const names = new Set();
  for (const m of body.replace(/\/\*\*[\s\S]*?\*\//g, '').matchAll(/(?:^|[;\n{,]\s*)'?([a-z_][\w-]*)'?\??\s*:/g)) names.add(m[1]);
  return [...names].sort();
}

function keys(obj) {
  return Object.keys(obj).sort();
}

const kvb = await core();

test('Answer, Budget, PerGpu, KvReport and ModelSpec have exactly the typed fields', () => {
  for (const [file, engine] of [['meta-llama--Llama-3.1-8B.json', 'vllm'], ['Qwen--Qwen3-Next-80B-A3B-Thinking.json', 'llamacpp'], ['deepseek-ai--DeepSeek-V3.json', 'transformers']]) {
    const model = kvb.parseConfig(fs.readFileSync(path.join(fixturesDir, file), 'utf8'), file);
    const a = model.compute({ engine, gpu: 'h200', gpu_count: 8, context: 8192 });
    assert.deepEqual(keys(a), members('Answer'), 'Answer');
    assert.deepEqual(keys(a.inputs), members('BudgetInputs'), 'BudgetInputs');
    assert.deepEqual(keys(a.kv), members('KvReport'), 'KvReport');
    assert.deepEqual(keys(a.budget.per_gpu), members('PerGpu'), 'PerGpu');
    const typed = members('Budget').filter((k) => !['vllm', 'llamacpp', 'transformers'].includes(k) || k === engine);
    assert.deepEqual(keys(a.budget), typed, `Budget (${engine})`);
    assert.deepEqual(keys(model.spec), members('ModelSpec'), 'ModelSpec');
    assert.deepEqual(keys(model.spec.notes[0] ?? a.budget.notes[0]), members('Message'), 'Message');
    if (engine === 'vllm') assert.deepEqual(keys(a.budget.vllm.stages[0]), members('VllmStage'), 'VllmStage');
    if (engine === 'llamacpp') assert.deepEqual(keys(a.budget.llamacpp.draft), members('LlamaDraft'), 'LlamaDraft');
    model.release();
  }
  assert.deepEqual(keys(kvb.catalog()), members('Catalog'), 'Catalog');
});

test('CheckReport, CheckLine and CheckRefusal have exactly the typed fields', () => {
  const config = fs.readFileSync(path.join(fixturesDir, 'Qwen--Qwen3-0.6B.json'), 'utf8');
  const log = 'vllm serve Qwen/Qwen3-0.6B --gpu-memory-utilization 0.2\n' +
    "ValueError: To serve at least one request with the model's max seq len (40960), (4.38 GiB KV cache is needed, which is larger than the available KV cache memory (1.31 GiB). Based on the available memory, the estimated maximum model length is 12288.\n";
  const r = kvb.checkLog(log, { text: config, name: 'Qwen/Qwen3-0.6B', source: 'catalog' });
  assert.deepEqual(keys(r), members('CheckReport'), 'CheckReport');
  assert.deepEqual(keys(r.lines[0]), members('CheckLine'), 'CheckLine');
  assert.deepEqual(keys(kvb.checkLog('not a log')), members('CheckRefusal'), 'CheckRefusal');
  assert.deepEqual(keys(kvb.checkLogModel(log, ['Qwen/Qwen3-0.6B'])), ['catalog_id', 'model']);
});

test('LabReport and LabRow have exactly the typed fields', () => {
  const config = fs.readFileSync(path.join(fixturesDir, 'meta-llama--Llama-3.1-8B-Instruct.json'), 'utf8');
  const r = kvb.labTable('measure: rss\nweights 4 GiB\nbaseline 4.5 GiB\n4096 5 GiB\n8192 5.5 GiB\n', { text: config, name: 'm' });
  assert.deepEqual(keys(r), members('LabReport'), 'LabReport');
  assert.deepEqual(keys(r.rows[0]), members('LabRow'), 'LabRow');
  assert.deepEqual(keys(r.fit), ['deviation_percent', 'formula_bytes_per_token', 'intercept_bytes', 'slope_bytes_per_token']);
  assert.deepEqual(keys(kvb.labTable('', { text: config, name: 'm' })), members('CheckRefusal'), 'refusal');
});
