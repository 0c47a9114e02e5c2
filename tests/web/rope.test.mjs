// Issue 9.4 and 9.8 in real Chromium: past the model's limit vLLM refuses in its own
// words while the page still shows how much context memory would hold (the same
// max-context-physical as `kvbudget budget --json`); the model card's YaRN x4 for
// Qwen3-8B is offered and reaches the seed article's "128K -> 18 GiB" row with the
// flags each engine needs; llama.cpp warns past n_ctx_train as llama.cpp does; the
// chart's ticks are whole powers of two, its legend shows values, and it marks where
// memory runs out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startAll, openPage, waitSettled, metrics, root, fixturesDir } from './harness.mjs';

const cliPath = process.env.KVB_CLI || path.join(root, 'build/kvbudget');
function budgetCli(fixture, args) {
  return JSON.parse(execFileSync(cliPath, ['budget', path.join(fixturesDir, fixture + '.json'), ...args, '--json'], { encoding: 'utf8' }));
}
// data-metric values as the CLI's metrics object writes them (null -> '').
function cliMetrics(answer) {
  return Object.fromEntries(Object.entries(answer.metrics).filter(([, v]) => v !== null).map(([k, v]) => [k, String(v)]));
}

let env;
before(async () => {
  env = await startAll();
});
after(async () => {
  await env?.close();
});

test('vLLM past the model limit: its refusal, and the context memory would hold', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B&gpu=h100-sxm&ctx=131072');
  const m = await metrics(page);
  assert.equal(m['max-context'], '40960');
  assert.equal(m['max-context-physical'], '385360');
  const cli = budgetCli('Qwen--Qwen3-8B', ['--gpu', 'h100-sxm', '--max-model-len', '131072']);
  const shown = cliMetrics(cli);
  for (const [k, v] of Object.entries(shown)) assert.equal(m[k], v, k);
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'nofit');
  assert.equal(await page.textContent('[data-role="verdict-reason"]'),
    "131,072 tokens is past the model's limit of 40,960: vLLM refuses to start. Memory alone would hold 385,360 tokens per sequence");
  assert.ok((await page.textContent('[data-role="engine-error"]')).startsWith(
    "User-specified max_model_len (131072) is greater than the derived max_model_len (max_position_embeddings=40960.0 or model_max_length=None in model's config.json)."));
  // The context table runs to the chosen context.
  const rows = await page.$$eval('[data-table="context"] tbody tr th', (r) => r.map((e) => e.textContent));
  assert.equal(rows.at(-1), '128K');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the model card\'s YaRN x4: 131,072 tokens, 18 GiB at 128K, the flags each engine needs', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B&gpu=h100-sxm');
  assert.equal(await page.textContent('[data-role="rope"] button'), 'Use it');
  assert.ok((await page.textContent('[data-role="rope"]')).includes('YaRN ×4 (from 32,768 tokens) for 131,072 tokens (native 40,960)'));
  await page.click('[data-role="rope-toggle"]');
  await waitSettled(page);
  await page.waitForFunction(() => document.querySelector('[data-metric="kv-bytes-total"]')?.dataset.value === '19327352832');
  // The address follows a frame or a quiet moment later (main.js writeUrl): wait for it.
  await page.waitForFunction(() => new URL(location.href).searchParams.has('rope'));
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('rope'), 'yarn:4:32768');
  assert.equal(url.searchParams.get('ctx'), '131072');
  assert.equal(await page.textContent('[data-metric="kv-bytes-total"]'), '18.00 GiB');
  // The slider ends at the scaled limit, and the hint says which limit that is.
  await page.focus('#ctl-ctx-slider');
  await page.keyboard.press('End');
  await waitSettled(page);
  assert.equal(await page.inputValue('#ctl-ctx'), '131072');
  assert.equal(await page.textContent('#ctl-ctx-max'), 'Model maximum with the chosen RoPE scaling: 131,072 tokens (native 40,960); the slider ends there.');
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'fits');
  assert.equal(await page.textContent('[data-role="command"]'),
    'vllm serve Qwen/Qwen3-8B --max-model-len 131072 --hf-overrides \'{"rope_scaling":{"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768}}\'');
  const cli = budgetCli('Qwen--Qwen3-8B', ['--gpu', 'h100-sxm', '--max-model-len', '131072', '--rope-scaling', 'yarn:4:32768']);
  const m = await metrics(page);
  for (const [k, v] of Object.entries(cliMetrics(cli))) assert.equal(m[k], v, k);
  const rows = await page.$$eval('[data-table="context"] tbody tr th', (r) => r.map((e) => e.textContent));
  assert.equal(rows.at(-1), '128K (model max)');
  // Within the scaled range the KV/weights crossover is quoted.
  assert.ok(Number(await page.getAttribute('[data-role="crossover"]', 'data-value')) > 40960);

  await page.selectOption('#ctl-engine', 'llamacpp');
  await waitSettled(page);
  const cmd = await page.textContent('[data-role="command"]');
  assert.ok(cmd.includes(' --rope-scaling yarn --rope-scale 4 --yarn-orig-ctx 32768'), cmd);
  assert.ok((await page.textContent('#results')).includes('llama_context: n_ctx_seq (131072) > n_ctx_train (40960) -- possible training context overflow'));
  assert.deepEqual(errors, []);
  await context.close();
});

test('the chart: binary ticks, legend values, the crossover only inside the range, where memory runs out', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B&gpu=h100-sxm&ctx=32768');
  await page.waitForSelector('#sec-chart canvas');
  const ticks = (await page.getAttribute('#sec-chart [data-y-ticks]', 'data-y-ticks')).split(',').map(Number);
  assert.ok(ticks.length >= 4 && ticks.length <= 8, String(ticks));
  for (const v of ticks) assert.equal(2 ** Math.round(Math.log2(v)), v, `${v} is a power of two`);
  const step = Math.log2(ticks[1]) - Math.log2(ticks[0]);
  ticks.forEach((v, i) => i && assert.equal(Math.log2(v) - Math.log2(ticks[i - 1]), step));
  // GPU memory (79.22 GiB) and the weights (15.26 GiB) lie inside the axis.
  assert.ok(ticks[0] <= 15.26 * 2 ** 30 && ticks.at(-1) >= 79.22 * 2 ** 30, String(ticks));
  const values = await page.$$eval('#sec-chart .u-legend .u-series .u-value', (v) => v.map((e) => e.textContent));
  assert.equal(values[0], '32K');
  assert.equal(values[1], '4.50 GiB');
  assert.ok(values.slice(2).every((v) => /GiB$/.test(v)), JSON.stringify(values));
  // A context between the curve's points: the legend quotes it and the answer's KV, not the point before.
  await page.fill('#ctl-ctx', '30000');
  await page.press('#ctl-ctx', 'Enter');
  await page.waitForFunction(() => document.querySelector('#sec-chart .u-legend .u-series .u-value')?.textContent === '30,000');
  const off = await page.$$eval('#sec-chart .u-legend .u-series .u-value', (v) => v.map((e) => e.textContent));
  assert.equal(off[1], await page.$eval('[data-metric="kv-bytes-total"]', (e) => e.textContent));
  await page.fill('#ctl-ctx', '32768');
  await page.press('#ctl-ctx', 'Enter');
  await page.waitForFunction(() => document.querySelector('#sec-chart .u-legend .u-series .u-value')?.textContent === '32K');
  // 111K > the model's 40,960: no crossover is quoted.
  assert.equal(await page.getAttribute('[data-role="crossover"]', 'data-value'), '0');
  assert.equal(await page.textContent('[data-role="crossover"]'), "KV stays below the weights up to the model's limit of 40,960 tokens");
  assert.equal(await page.getAttribute('#sec-chart [data-memory-limit]', 'data-memory-limit'), '385360');
  assert.deepEqual(errors, []);
  await context.close();
});
