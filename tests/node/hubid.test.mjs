// Model references as people paste them, validated before any request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseModelRef, validId, validRevision, catalogFileName } from '../../web/src/hubid.js';

test('plain ids and @revision', () => {
  assert.deepEqual(parseModelRef('meta-llama/Llama-3.1-8B'), { ok: true, id: 'meta-llama/Llama-3.1-8B', revision: '' });
  assert.deepEqual(parseModelRef('  Qwen/Qwen3-8B@main '), { ok: true, id: 'Qwen/Qwen3-8B', revision: 'main' });
  assert.deepEqual(parseModelRef('gpt2'), { ok: true, id: 'gpt2', revision: '' });
  assert.deepEqual(parseModelRef('org/name@0123456789abcdef0123456789abcdef01234567'),
    { ok: true, id: 'org/name', revision: '0123456789abcdef0123456789abcdef01234567' });
});

test('huggingface.co links: repo, tree, blob, resolve, config.json, refs/pr', () => {
  const cases = [
    ['https://huggingface.co/Qwen/Qwen3-8B', 'Qwen/Qwen3-8B', ''],
    ['https://huggingface.co/Qwen/Qwen3-8B/tree/main', 'Qwen/Qwen3-8B', 'main'],
    ['https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json', 'Qwen/Qwen3-8B', 'main'],
    ['https://huggingface.co/Qwen/Qwen3-8B/resolve/abc123/config.json?download=true', 'Qwen/Qwen3-8B', 'abc123'],
    ['huggingface.co/Qwen/Qwen3-8B', 'Qwen/Qwen3-8B', ''],
    ['https://hf.co/Qwen/Qwen3-8B', 'Qwen/Qwen3-8B', ''],
    ['https://huggingface.co/models/Qwen/Qwen3-8B', 'Qwen/Qwen3-8B', ''],
    ['https://huggingface.co/org/name/tree/refs%2Fpr%2F3', 'org/name', 'refs/pr/3'],
    ['https://huggingface.co/org/name/blob/refs/pr/3/config.json', 'org/name', 'refs/pr/3'],
  ];
  for (const [text, id, revision] of cases) assert.deepEqual(parseModelRef(text), { ok: true, id, revision }, text);
});

test('refused before any request, each with its reason', () => {
  const cases = [
    ['', 'empty'],
    ['   ', 'empty'],
    ['a--b/c', 'badId'],
    ['org/na me', 'badId'],
    ['../etc/passwd', 'badId'],
    ['org/name/extra', 'badId'],
    ['-org/name', 'badId'],
    ['org/name.', 'badId'],
    ['org/' + 'x'.repeat(100), 'badId'],
    ['<img src=x onerror=alert(1)>', 'badId'],
    ['org/name@', 'badRevision'],
    ['org/name@../../x', 'badRevision'],
    ['org/name@a b', 'badRevision'],
    ['https://evil.example/org/name', 'foreignUrl'],
    ['https://huggingface.co.evil.example/org/name', 'foreignUrl'],
    ['javascript://huggingface.co/%0aalert(1)', 'foreignUrl'],
    ['https://huggingface.co/datasets/org/name', 'notModel'],
    ['https://huggingface.co/spaces/org/name', 'notModel'],
  ];
  for (const [text, reason] of cases) assert.deepEqual(parseModelRef(text), { ok: false, reason }, JSON.stringify(text));
});

test('id and revision rules', () => {
  assert.equal(validId('a/b'), true);
  assert.equal(validId('a'.repeat(96)), true);
  assert.equal(validId('a'.repeat(97)), false);
  assert.equal(validId('a/b/c'), false);
  assert.equal(validRevision('v1.0'), true);
  assert.equal(validRevision('/main'), false);
  assert.equal(catalogFileName('meta-llama/Llama-3.1-8B'), 'meta-llama--Llama-3.1-8B.json');
});

test('GGUF spellings: org/repo:QUANT, hf.co links, the commands people copy, .gguf file links', () => {
  const q = { ok: true, id: 'unsloth/Qwen3-8B-GGUF', revision: '', quant: 'Q4_K_M' };
  assert.deepEqual(parseModelRef('unsloth/Qwen3-8B-GGUF:Q4_K_M'), q);
  assert.deepEqual(parseModelRef('hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M'), q);
  assert.deepEqual(parseModelRef('https://hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M'), q);
  assert.deepEqual(parseModelRef('ollama run hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M'), q);
  assert.deepEqual(parseModelRef('llama-server -hf unsloth/Qwen3-8B-GGUF:Q4_K_M'), q);
  assert.deepEqual(parseModelRef('Qwen/Qwen3-8B-GGUF'), { ok: true, id: 'Qwen/Qwen3-8B-GGUF', revision: '' });
  assert.deepEqual(parseModelRef('org/repo@dev:UD-Q4_K_XL'), { ok: true, id: 'org/repo', revision: 'dev', quant: 'UD-Q4_K_XL' });
  assert.deepEqual(parseModelRef('https://huggingface.co/Qwen/Qwen3-8B-GGUF/blob/main/Qwen3-8B-Q4_K_M.gguf'),
    { ok: true, id: 'Qwen/Qwen3-8B-GGUF', revision: 'main', file: 'Qwen3-8B-Q4_K_M.gguf' });
  assert.deepEqual(parseModelRef('https://huggingface.co/org/big-GGUF/resolve/main/Q4_K_M/big-Q4_K_M-00001-of-00002.gguf?download=true'),
    { ok: true, id: 'org/big-GGUF', revision: 'main', file: 'Q4_K_M/big-Q4_K_M-00001-of-00002.gguf' });
  assert.deepEqual(parseModelRef('org/repo:'), { ok: false, reason: 'badQuant' });
  assert.deepEqual(parseModelRef('org/repo:Q4 K'), { ok: false, reason: 'badQuant' });
  assert.deepEqual(parseModelRef('org/repo:Q4/../x'), { ok: false, reason: 'badQuant' });
});
