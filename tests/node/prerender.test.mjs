// The default link's first answer is in the page (issue 13): scripts/build-site.mjs runs the
// calculator module on the default model and settings and inlines what it wrote (#kvb-answer).
// It must be the core's answer for exactly what the page asks: byte for byte what
// `kvbudget budget --json` prints for the default settings, for the config the page holds,
// with the inputs the page's own budgetInputs() gives for its default state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { root, cliPath } from './helpers.mjs';
import { defaultState, DEFAULT_MODEL } from '../../web/src/state.js';
import { budgetInputs } from '../../web/src/budget-inputs.js';

const site = path.resolve(root, process.env.KVB_SITE_DIR || 'site');
const html = fs.readFileSync(path.join(site, 'index.html'), 'utf8');
const block = (id) => {
  const m = html.match(new RegExp(`<script type="application/json" id="${id}"[^>]*>([^<]*)</script>`));
  assert.ok(m, `site/index.html has #${id}`);
  // The build writes every character past ASCII as \\uXXXX (scripts/build-site.mjs); the core
  // writes them as UTF-8 and escapes only control characters.
  return m[1].replace(/\\u003c/g, '<').replace(/\\u([0-9a-f]{4})/g, (e, hex) => (parseInt(hex, 16) >= 0x80 ? String.fromCharCode(parseInt(hex, 16)) : e));
};

test('the prerendered answer is the CLI\'s for the default settings, byte for byte', () => {
  const text = block('kvb-answer');
  const data = JSON.parse(text);
  assert.equal(data.model, DEFAULT_MODEL);
  assert.deepEqual(data.input, budgetInputs(defaultState()));
  const s = defaultState();
  assert.deepEqual([data.input.engine, data.input.gpu, data.input.context, data.input.seqs, data.input.gpu_count, data.input.gpu_memory_utilization],
    [s.engine, s.gpu, s.ctx, s.seqs, s.gpuCount, s.util]);
  // The config the page holds for the default model, in a file the CLI names as the page does.
  const config = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-prerender-')), DEFAULT_MODEL.replace('/', '--') + '.json');
  fs.writeFileSync(config, block('kvb-config'));
  const cli = execFileSync(cliPath, ['budget', config, '--json', '--engine', s.engine, '--gpu', s.gpu, '--gpu-count', String(s.gpuCount),
    '--max-model-len', String(s.ctx), '--seqs', String(s.seqs), ...(s.util ? ['--gpu-memory-utilization', String(s.util)] : []),
    '--kv-cache-dtype', s.kv], { encoding: 'utf8' }).trim();
  // The block ends with the answer as the core wrote it.
  const at = text.indexOf(',"answer":');
  assert.ok(at > 0);
  const answer = text.slice(at + ',"answer":'.length, -1);
  assert.ok(answer === cli, `the page's answer differs from the CLI's:\n${answer.slice(0, 300)}\n${cli.slice(0, 300)}`);
  assert.equal(data.spec.max_position_embeddings, 131072);
  assert.equal(data.answer.kv.bytes_per_token, 131072);
  assert.equal(data.catalog.messages, undefined, 'the message table stays out of the page');
  assert.ok(data.catalog.gpus.some((g) => g.id === 'rtx-4090'));
});

// The page gives the module the block's catalog (main.js, Kvbudget.useCatalog) instead of
// asking it: it must be what the module the page loads returns, less the message table.
test('the page\'s catalog is the calculator module\'s own, less the message table', async () => {
  const { loadKvbudget } = await import('../../wasm/kvbudget-calc.js');
  const calc = await loadKvbudget({ wasmBinary: fs.readFileSync(path.join(site, 'kvbudget-calc.wasm')) });
  const { messages, ...rest } = calc.catalog();
  assert.ok(messages.length > 100);
  assert.deepEqual(JSON.parse(block('kvb-answer')).catalog, rest);
  // useCatalog answers catalog() from then on; the module's own first one stays if asked first.
  calc.useCatalog({ gpus: [] });
  assert.equal(calc.catalog().messages, messages);
});
