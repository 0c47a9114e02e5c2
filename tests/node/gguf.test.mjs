// The GGUF reader through the WASM module (issue 10): a prefix of the file in, "need N
// bytes in total" or the header out; the model built from it answers byte for byte what
// `kvbudget budget FILE.gguf --json` prints for the same header, -ngl and -hf included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { core, cliPath } from './helpers.mjs';
import { qwen3_8b_q4km } from '../web/gguf-fixture.mjs';

const kvb = await core();
const g = qwen3_8b_q4km();

function readAll(bytes, size) {
  let want = 512 * 1024;
  const asked = [];
  for (;;) {
    asked.push(want);
    const r = kvb.readGguf(bytes.subarray(0, want), 'Qwen3-8B-Q4_K_M.gguf', size);
    if (r.status === 'ok') return { r, asked };
    assert.equal(r.status, 'need_more');
    assert.ok(r.need_total > want, 'the core asks for more than it had');
    want = Math.min(bytes.length, Math.max(r.need_total, want * 2));
  }
}

test('readGguf grows to the whole header, then ggufModel gives the same answer as the CLI', () => {
  const { r, asked } = readAll(g.header, g.size);
  assert.equal(r.header_bytes, 2800017);
  assert.equal(r.tensor_bytes, 5021827072);
  assert.equal(r.split_count, 0);
  assert.deepEqual(asked, [524288, 1216173, 2432346, 2800017]); // the core asks for at least what the next item needs
  const model = kvb.ggufModel([r.header], 'Qwen3-8B-Q4_K_M'); // as the CLI names a local file
  assert.equal(model.spec.source, 'gguf');
  assert.equal(model.spec.gguf.tensor_bytes, 5021827072);
  assert.equal(model.spec.num_layers, 36);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-gguf-node-'));
  const file = path.join(dir, 'Qwen3-8B-Q4_K_M.gguf');
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, g.header);
  fs.ftruncateSync(fd, g.size);
  fs.closeSync(fd);
  try {
    for (const [flags, input] of [
      [['--gpu', 'rtx-4090', '--max-model-len', '32768', '--hf', 'Qwen/Qwen3-8B-GGUF:Q4_K_M'],
        { gpu: 'rtx-4090', context: 32768, hf_ref: 'Qwen/Qwen3-8B-GGUF:Q4_K_M' }],
      [['--gpu', 'rtx-4060-ti-16gb', '--max-model-len', '40960', '--ngl', '30', '--ram', '32GiB'],
        { gpu: 'rtx-4060-ti-16gb', context: 40960, n_gpu_layers: 30, ram_bytes: 32 * 2 ** 30 }],
      [['--gpu', 'm4-16gb', '--max-model-len', '40960'], { gpu: 'm4-16gb', context: 40960 }],
    ]) {
      const cli = execFileSync(cliPath, ['budget', file, '--engine', 'llamacpp', ...flags, '--json'], { encoding: 'utf8' });
      const wasm = kvb.m.compute(model.handle, JSON.stringify({ engine: 'llamacpp', ...input }));
      assert.equal(wasm, '{"ok":true,"value":' + cli.trim() + '}', flags.join(' '));
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    model.release();
  }
});

test('refusals: not a GGUF, a header cut short, a header longer than the file', () => {
  assert.throws(() => kvb.readGguf(new TextEncoder().encode('<!doctype html><html></html>'), 'x.gguf', 100), (e) => e.code === 'not_gguf');
  assert.throws(() => kvb.readGguf(g.header.subarray(0, 300000), 'x.gguf', 300000), (e) => e.code === 'truncated_gguf' && /x\.gguf/.test(e.message));
  assert.throws(() => kvb.ggufModel([12345]), (e) => e.code === 'bad_handle');
});
