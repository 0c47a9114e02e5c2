// A link presetting a bundled model gets its first answer from the build (issue 13):
// scripts/build-site.mjs writes answers/<catalog file> for every model of the catalog, with
// the core's Answer at each context the page's slider offers for it and at the page's default
// one. Each must be byte for byte what `kvbudget budget --json` prints for the same settings
// and config, asked with exactly the inputs the page's budgetInputs() gives for that state,
// and the page's catalog must name those contexts (web/boot.js reads them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { execFileSync, spawnSync } from 'node:child_process';
import { root, cliPath } from './helpers.mjs';
import { defaultState } from '../../web/src/state.js';
import { budgetInputs } from '../../web/src/budget-inputs.js';
import { contextStops } from '../../web/src/context-stops.js';

const site = path.resolve(root, process.env.KVB_SITE_DIR || 'site');
const html = fs.readFileSync(path.join(site, 'index.html'), 'utf8');
const block = (id) => {
  const m = html.match(new RegExp(`<script type="application/json" id="${id}"[^>]*>([^<]*)</script>`));
  assert.ok(m, `site/index.html has #${id}`);
  return m[1].replace(/\\u003c/g, '<');
};
const catalog = JSON.parse(fs.readFileSync(path.join(site, 'catalog/index.json'), 'utf8')).models;
const inlineModels = JSON.parse(block('kvb-catalog')).models;
const s = defaultState();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-answers-'));
let refused = 0;

// The answers file's lines as written: [{input, answer text}] (one answer a line, the core's bytes).
function answerLines(text) {
  const lines = text.split('\n');
  assert.ok(lines[0].endsWith(',"answers":['), 'the head line ends where the answers begin');
  assert.deepEqual(lines.slice(-2), [']}', '']);
  return lines.slice(1, -2).map((line, i, all) => {
    const body = i < all.length - 1 ? line.slice(0, -1) : line; // the comma between answers
    const m = body.match(/^\{"input":(\{[^}]*\}),"answer":(.*)\}$/);
    assert.ok(m, `an answer line: ${body.slice(0, 120)}`);
    return { input: JSON.parse(m[1]), answer: m[2] };
  });
}

test('the build wrote an answers file for each of the catalog\'s models', () => {
  assert.equal(catalog.length, 62);
  assert.deepEqual(fs.readdirSync(path.join(site, 'answers')).sort(), catalog.map((m) => m.file).sort());
});

for (const entry of catalog) {
  test(`answers for ${entry.id} are the CLI's, byte for byte, at every context the page offers`, () => {
    const text = fs.readFileSync(path.join(site, 'answers', entry.file), 'utf8');
    const data = JSON.parse(text);
    assert.equal(data.model, entry.id);
    // The page's copy of the config, the one its answers were computed from.
    const configText = fs.readFileSync(path.join(site, 'catalog', entry.file), 'utf8');
    assert.equal(data.config, configText.trim());
    const max = data.spec.max_position_embeddings;
    const want = [...new Set([...contextStops(max), s.ctx])].sort((a, b) => a - b);
    const lines = answerLines(text);
    const contexts = lines.map((l) => l.input.context);
    assert.deepEqual(contexts, want, 'every slider stop and the default context has an answer');
    assert.deepEqual(inlineModels.find((m) => m.id === entry.id).ctx, contexts, 'the page\'s catalog names the contexts answered');
    // The CLI reads the page's copy under the catalog's file name (org--name.json), as the page names the model.
    const config = path.join(tmp, entry.file);
    fs.writeFileSync(config, data.config);
    for (const [i, { input, answer }] of lines.entries()) {
      assert.deepEqual(input, budgetInputs({ ...s, model: entry.id, ctx: input.context }));
      assert.deepEqual(data.answers[i].answer, JSON.parse(answer));
      const args = ['budget', config, '--json', '--engine', s.engine, '--gpu', s.gpu, '--gpu-count', String(s.gpuCount),
        '--max-model-len', String(input.context), '--seqs', String(s.seqs), ...(s.util ? ['--gpu-memory-utilization', String(s.util)] : []), '--kv-cache-dtype', s.kv];
      const refusal = data.answers[i].answer.refusal;
      if (refusal === null) {
        const cli = execFileSync(cliPath, args, { encoding: 'utf8' }).trim();
        assert.ok(answer === cli, `${entry.id} at ${input.context}: the file's answer differs from the CLI's:\n${answer.slice(0, 300)}\n${cli.slice(0, 300)}`);
      } else {
        // Past the model's limit the page shows vLLM's refusal beside the numbers; the CLI
        // refuses with the same words (tests/node/answer-vs-cli.test.mjs).
        const r = spawnSync(cliPath, args, { encoding: 'utf8' });
        assert.notEqual(r.status, 0, `${entry.id} at ${input.context}: the CLI answered what the page refuses`);
        assert.equal(r.stderr.trim(), 'kvbudget: error: ' + refusal.message);
        refused++;
      }
    }
  });
}

test('answers past a model\'s limit carry vLLM\'s refusal, as the module\'s do', () => {
  // Run after the per-model tests (node:test runs a file's tests in order).
  assert.ok(refused > 0, 'some slider stops lie past a model\'s limit (a config without max_position_embeddings: the slider runs to 1M)');
});

test('Qwen/Qwen3-8B, the preset embed\'s model: real numbers at 32768 tokens', () => {
  const data = JSON.parse(fs.readFileSync(path.join(site, 'answers/Qwen--Qwen3-8B.json'), 'utf8'));
  assert.equal(data.spec.max_position_embeddings, 40960);
  assert.deepEqual(data.answers.map((a) => a.input.context), [256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 40960]);
  const at = data.answers.find((a) => a.input.context === 32768).answer;
  // 36 layers x 8 KV heads x 128 x (K + V) x 2 bytes (bf16)
  assert.equal(at.kv.bytes_per_token, 36 * 8 * 128 * 2 * 2);
});

// The README's count of the bundled configs is the catalog's (it said 44 while the catalog held 61).
test('the README gives the bundled catalog\'s size', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  assert.match(readme, new RegExp(`bundled catalog\\s+of ${catalog.length} real model configs`));
});
