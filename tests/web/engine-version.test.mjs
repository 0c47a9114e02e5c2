// The engine-version control (issue 12): the page's `engineVersion` URL parameter and field give the
// core the release, and the start-up lines, numbers and command are `kvbudget budget --engine-version`'s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startAll, openPage, metrics, root } from './harness.mjs';

const cliPath = process.env.KVB_CLI || path.join(root, 'build/kvbudget');
const config = path.join(root, 'tests/fixtures/configs/meta-llama--Llama-3.1-8B.json');
const en = JSON.parse(fs.readFileSync(path.join(root, 'web/i18n/en.json'), 'utf8'));
let env;
before(async () => {
  env = await startAll();
});
after(async () => {
  await env?.close();
});

function cli(args) {
  return JSON.parse(execFileSync(cliPath, ['budget', config, ...args, '--json'], { encoding: 'utf8' }));
}

async function sameAsCli(page, want) {
  const m = await metrics(page);
  for (const [name, value] of Object.entries(want.metrics)) assert.equal(Number(m[name]), value, name);
  assert.equal(await page.textContent('[data-role="engine-log"]'), want.budget.log_lines.join('\n'));
  assert.equal(await page.textContent('[data-role="command"]'), want.budget.command);
}

test('vLLM 0.20.1 from the URL: two lines, as the CLI prints them; clearing it gives the newest', async () => {
  const { page, context, errors } = await openPage(env, 'gpu=h100-sxm&ctx=32768&engineVersion=0.20.1');
  assert.deepEqual(errors, []);
  const old = cli(['--gpu', 'h100-sxm', '--max-model-len', '32768', '--engine-version', '0.20.1']);
  assert.equal(old.budget.log_lines.length, 2);
  assert.match(old.budget.log_lines[0], /^GPU KV cache size: [\d,]+ tokens$/);
  await sameAsCli(page, old);
  assert.equal(await page.inputValue('#ctl-engine-version'), '0.20.1');

  await page.fill('#ctl-engine-version', '');
  await page.press('#ctl-engine-version', 'Enter');
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('engineVersion'));
  const newest = cli(['--gpu', 'h100-sxm', '--max-model-len', '32768']);
  assert.equal(newest.budget.log_lines.length, 1);
  assert.match(newest.budget.log_lines[0], /^GPU KV cache size: [\d,]+ tokens, Maximum concurrency for 32,768 tokens/);
  await sameAsCli(page, newest);

  // A llama.cpp build is no vLLM release: the core's own refusal, worded by the page.
  await page.fill('#ctl-engine-version', 'b6500');
  await page.press('#ctl-engine-version', 'Enter');
  await page.waitForFunction(() => document.body.dataset.state === 'error');
  const why = en['msg.engine_version_bad'].replace('{value}', 'b6500').replace('{engine}', 'vLLM');
  assert.equal(await page.textContent('[data-role="error"]'), en['core.controlError'].replace('{message}', why));
  await context.close();
});

test('llama.cpp b6232: llama_kv_cache_unified with 1/1 seqs; another engine starts from its newest', async () => {
  const { page, context, errors } = await openPage(env, 'engine=llamacpp&gpu=rtx-4090&ctx=8192&engineVersion=b6232');
  assert.deepEqual(errors, []);
  const want = cli(['--engine', 'llamacpp', '--gpu', 'rtx-4090', '--max-model-len', '8192', '--engine-version', 'b6232']);
  assert.equal(want.budget.log_lines[0],
    'llama_kv_cache_unified: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (f16):  512.00 MiB, V (f16):  512.00 MiB');
  await sameAsCli(page, want);
  await page.selectOption('#ctl-engine', 'vllm');
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('engineVersion'));
  assert.equal(await page.inputValue('#ctl-engine-version'), '');
  await page.selectOption('#ctl-engine', 'transformers');
  assert.equal(await page.isVisible('#ctl-engine-version'), false);
  await context.close();
});

test('speculative decoding: KV per token counts the drafter layer the pool holds, and its weights are in', async () => {
  const { page, context } = await openPage(env, 'gpu=h100-sxm&ctx=32768&spec=eagle3');
  const want = cli(['--gpu', 'h100-sxm', '--max-model-len', '32768', '--speculative-config', '{"method":"eagle3","num_speculative_tokens":3}']);
  // 32 layers + the EAGLE-3 head's one, 4,096 B each per token; its 268,443,648 parameters in bf16.
  assert.equal(want.metrics['kv-bytes-per-token'], 33 * 4096);
  assert.equal(want.budget.vllm.drafter_params, 268443648);
  assert.equal(want.budget.vllm.drafter_weight_bytes, 536887296);
  await sameAsCli(page, want);
  await context.close();
});
