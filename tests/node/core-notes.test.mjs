// Every note the core writes for the bundled models has a coreNote.* template, so the
// Chinese page shows it in Chinese with the core's own values.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { core, fixtures, root } from './helpers.mjs';
import { compileCoreTemplates, matchCoreNote } from '../../web/src/core-notes.js';

const en = JSON.parse(fs.readFileSync(path.join(root, 'web/i18n/en.json'), 'utf8'));
const zh = JSON.parse(fs.readFileSync(path.join(root, 'web/i18n/zh-CN.json'), 'utf8'));
const templates = compileCoreTemplates(en);
const kvb = await core();

test('templates fill back to the English note exactly', () => {
  const note = 'num_key_value_heads is not set: multi-head attention assumed (40 KV heads, one per attention head)';
  const m = matchCoreNote(templates, note);
  assert.deepEqual(m, { key: 'coreNote.mhaAssumed', params: { n: '40' } });
  assert.equal(zh[m.key].replace('{n}', m.params.n), 'num_key_value_heads 未设置：按多头注意力 MHA 计算（40 个 KV 头，每个注意力头一个）');
  assert.equal(matchCoreNote(templates, 'something the core never says'), null);
});

test('every note of every bundled model, engine and GPU has a template in both languages', () => {
  const missing = new Set();
  let seen = 0;
  for (const fx of fixtures()) {
    const model = kvb.parseConfig(fs.readFileSync(fx.path, 'utf8'), fx.id);
    try {
      const notes = [...model.spec.notes];
      for (const engine of ['vllm', 'llamacpp', 'transformers']) {
        for (const gpu of ['rtx-4090', 'h100', 'm4-max-128gb']) {
          for (const context of [4096, 32768]) {
            let v;
            try {
              v = model.compute({ engine, gpu, context, seqs: 1, gpuCount: gpu === 'h100' ? 2 : 1 });
            } catch {
              continue;  // a refusal is an error message, not a note
            }
            notes.push(...(v.notes || []), ...(v.engineView?.notes || []));
          }
        }
      }
      for (const n of notes) {
        seen++;
        const m = matchCoreNote(templates, n);
        if (!m || !(m.key in zh)) missing.add(n);
      }
    } finally {
      model.release();
    }
  }
  assert.ok(seen > 1000);
  assert.deepEqual([...missing], []);
});

test('notes that need unusual inputs have templates too: a Hub count, an unmodelled quantization', () => {
  const notes = [];
  const collect = (text, name, input) => {
    const model = kvb.parseConfig(text, name);
    try {
      const v = model.compute({ engine: 'vllm', gpu: 'h100', context: 4096, ...input });
      notes.push(...model.spec.notes, ...v.notes, ...(v.engineView?.notes || []));
    } finally {
      model.release();
    }
  };
  const llama = fs.readFileSync(path.join(root, 'tests/fixtures/configs/meta-llama--Llama-3.1-8B.json'), 'utf8');
  collect(llama, 'meta-llama/Llama-3.1-8B', { hubParameters: 8_030_261_248 + 1_000_000 });
  const awq = fs.readFileSync(path.join(root, 'tests/fixtures/configs/Qwen--Qwen2-VL-2B-Instruct-AWQ.json'), 'utf8');
  collect(awq, 'Qwen/Qwen2-VL-2B-Instruct-AWQ', { hubParameters: 1_000_000_000 });
  const hqq = JSON.parse(llama);
  hqq.quantization_config = { quant_method: 'hqq' };
  collect(JSON.stringify(hqq), 'someone/llama-hqq', {});
  const keys = notes.map((n) => matchCoreNote(templates, n)?.key);
  for (const k of ['coreNote.paramsDiffer', 'coreNote.paramsIgnored', 'coreNote.quantNotModelled']) assert.ok(keys.includes(k), k);
  assert.deepEqual(notes.filter((n, i) => !keys[i] || !(keys[i] in zh)), []);
});
