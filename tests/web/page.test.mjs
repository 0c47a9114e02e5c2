// End-to-end tests of the built site (site/) in Debian's Chromium, against a fake
// hub started here. Numbers are read through the data-metric hooks and compared
// with the native CLI; errors through [data-role="error"].
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { startStaticServer } from './static-server.mjs';
import { startFakeHub, GOOD_TOKEN, XSS } from './fake-hub.mjs';
import { launch } from './browser.mjs';
import { siteDir } from './harness.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixturesDir = path.join(root, 'tests/fixtures/configs');
const cliPath = process.env.KVB_CLI || path.join(root, 'build/kvbudget');
const en = JSON.parse(fs.readFileSync(path.join(root, 'web/i18n/en.json'), 'utf8'));
const TIMEOUT_MS = 1500;

function msg(key, params = {}) {
  return en[key].replace(/\{(\w+)\}/g, (m, k) => (params[k] === undefined ? m : String(params[k])));
}

function cliJson(args) {
  return JSON.parse(execFileSync(cliPath, [...args, '--json'], { encoding: 'utf8' }));
}

let site, hub, browser;

before(async () => {
  if (!fs.existsSync(path.join(siteDir, 'index.html'))) throw new Error(`${siteDir} is not built: run npm run build`);
  hub = await startFakeHub({ fixturesDir });
  site = await startStaticServer({
    root: siteDir,
    extra: { '/kvbudget.config.json': JSON.stringify({ hubUrl: hub.url, hubTimeoutMs: TIMEOUT_MS }) },
    hubUrl: hub.url,
  });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await site?.close();
  await hub?.close();
});

// A fresh page that records every request and any script error.
async function open(query = '', viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const requests = [];
  const errors = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(site.url + (query ? '?' + query : ''));
  await waitSettled(page);
  return { page, context, requests, errors };
}

async function waitSettled(page) {
  await page.waitForFunction(() => document.body.dataset.state === 'ready' || document.body.dataset.state === 'error', null, { timeout: 15000 });
}

async function metric(page, name) {
  const v = await page.getAttribute(`[data-metric="${name}"]`, 'data-value');
  return v === '' || v === null ? null : Number(v);
}

async function loadId(page, text) {
  // The state goes to loading (or straight to error), then settles. Waiting for "not loading" alone could pass before
  // the form's submit handler has run on a loaded machine, and read the previous model's state: a listener added
  // after the page's own runs after it, so wait for that first.
  await page.evaluate(() => {
    window.__kvbSubmitted = false;
    document.querySelector('form.model-form').addEventListener('submit', () => { window.__kvbSubmitted = true; }, { once: true });
  });
  await page.fill('#model-input', text);
  await page.press('#model-input', 'Enter');
  await page.waitForFunction(() => window.__kvbSubmitted && document.body.dataset.state !== 'loading', null, { timeout: 15000 });
}

function onlyAllowedHosts(requests) {
  const allowed = new Set([new URL(site.url).origin, new URL(hub.url).origin]);
  const foreign = requests.filter((u) => !u.startsWith('data:') && !allowed.has(new URL(u).origin));
  assert.deepEqual(foreign, [], 'requests to other hosts');
}

test('default view: Llama-3.1-8B at 32K from the bundled catalog, no hub request', async () => {
  const { page, context, requests, errors } = await open();
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await metric(page, 'kv-bytes-per-token'), 131072);
  assert.equal(await metric(page, 'kv-bytes-total'), 4294967296);
  assert.equal(await page.inputValue('#model-input'), 'meta-llama/Llama-3.1-8B');
  assert.ok(requests.every((u) => !u.startsWith(hub.url)), 'no hub request for the default view');
  onlyAllowedHosts(requests);
  assert.deepEqual(errors, []);
  await context.close();
});

const METRICS = ['kv-bytes-per-token', 'kv-bytes-total', 'weights-bytes', 'total-bytes', 'max-context', 'max-concurrency'];

test('every fixture id loaded through the hub gives the CLI numbers', async () => {
  const { page, context, requests, errors } = await open();
  const files = fs.readdirSync(fixturesDir).filter((f) => f.endsWith('.json')).sort();
  assert.ok(files.length >= 40);
  for (const f of files) {
    const base = f.slice(0, -5);
    const id = base.replace('--', '/');
    await loadId(page, id);
    const state = await page.getAttribute('body', 'data-state');
    const ctx = Number(await page.inputValue('#ctl-ctx'));
    let expected;
    try {
      expected = cliJson(['kv', path.join(fixturesDir, f), '--context', String(ctx), '--seqs', '1']);
    } catch {
      expected = null;
    }
    if (!expected) {
      assert.equal(state, 'error', `${id}: CLI refuses it, the page must too`);
      continue;
    }
    assert.equal(state, 'ready', `${id}: ${await page.textContent('[data-role="error"]')}`);
    assert.equal(await page.textContent('[data-role="model-name"]'), id);
    assert.equal(await metric(page, 'kv-bytes-per-token'), expected.bytes_per_token, `${id} kv-bytes-per-token`);
    // kv-bytes-total is the engine's layout of the asked sequences (the budget's, below); `kv`
    // gives the formula, which it equals only where the budget refuses.
    // The budget on the default 24 GB GPU, against `kvbudget budget`: every metric the page marks.
    let answer = null;
    let refusal = '';
    try {
      answer = cliJson(['budget', path.join(fixturesDir, f), '--gpu', 'rtx-4090', '--max-model-len', String(ctx), '--seqs', '1']);
    } catch (e) {
      refusal = String(e.stderr).replace(/^kvbudget: error: /, '').trim();
    }
    if (answer) {
      for (const name of METRICS) assert.equal(await metric(page, name), answer.metrics[name], `${id} ${name}`);
      const log = (await page.locator('[data-role="engine-log"]').count()) ? await page.textContent('[data-role="engine-log"]') : '';
      assert.equal(log, answer.budget.log_lines.join('\n'), `${id} vLLM log lines`);
    } else {
      assert.equal(await metric(page, 'kv-bytes-total'), expected.bytes_total, `${id} kv-bytes-total at ${ctx}`);
      assert.ok(refusal, `${id}: the CLI refused without a message`);
      assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'refused', `${id} budget refusal`);
    }
  }
  assert.ok(hub.requests.some((r) => r.path === '/Qwen/Qwen3-8B/resolve/main/config.json'));
  onlyAllowedHosts(requests);
  assert.deepEqual(errors, []);
  await context.close();
});

test('default view budget: the seed article case, as `kvbudget budget` computes it', async () => {
  const { page, context } = await open();
  const a = cliJson(['budget', path.join(fixturesDir, 'meta-llama--Llama-3.1-8B.json'), '--gpu', 'rtx-4090', '--max-model-len', '32768']);
  for (const name of METRICS) assert.equal(await metric(page, name), a.metrics[name], name);
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'fits');
  assert.equal(await page.textContent('[data-role="engine-log"]'), a.budget.log_lines.join('\n'));
  assert.equal(await page.textContent('[data-role="command"]'), a.budget.command);
  assert.equal(a.budget.command, 'vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768');
  // llama.cpp: its own log line and command.
  await page.selectOption('#ctl-engine', 'llamacpp');
  const l = cliJson(['budget', path.join(fixturesDir, 'meta-llama--Llama-3.1-8B.json'), '--gpu', 'rtx-4090', '--engine', 'llamacpp', '--max-model-len', '32768', '--kv-cache-dtype', 'f16']);
  assert.equal(await page.textContent('[data-role="engine-log"]'), l.budget.log_lines.join('\n'));
  assert.equal(await page.textContent('[data-role="command"]'), l.budget.command);
  for (const name of METRICS) assert.equal(await metric(page, name), l.metrics[name], 'llama.cpp ' + name);
  // A GPU too small: the verdict says so, with vLLM's own words and the core's reason in the page's.
  await page.selectOption('#ctl-engine', 'vllm');
  await page.selectOption('#ctl-gpu', '');
  await page.fill('#ctl-gpu-mem', '8GiB');
  await page.press('#ctl-gpu-mem', 'Enter');
  await page.waitForFunction(() => document.querySelector('[data-role="verdict"]')?.dataset.verdict !== 'fits');
  const small = cliJson(['budget', path.join(fixturesDir, 'meta-llama--Llama-3.1-8B.json'), '--gpu-memory', '8GiB', '--max-model-len', '32768']);
  assert.equal(small.budget.fits, false);
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'nofit');
  assert.equal(await page.textContent('[data-role="engine-error"]'), small.budget.engine_error);
  assert.equal(await page.textContent('[data-role="verdict-reason"]'), msg('msg.' + small.budget.verdict_reason.code, small.budget.verdict_reason.params));
  await context.close();
});

// A refusal's verdict ends in a colon: its reason is on the first screen, not only in the card below.
test('settings the engine refuses: the answer card says why', async () => {
  const { page, context } = await open('model=meta-llama/Llama-3.1-70B&gpu=h100-sxm&gpuCount=3', { width: 390, height: 844 });
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'refused');
  assert.equal(await page.textContent('[data-role="verdict-reason"]'),
    'Total number of attention heads (64) must be divisible by tensor parallel size (3).');
  const box = await page.locator('[data-role="verdict-reason"]').boundingBox();
  assert.ok(box && box.y + box.height <= 844, 'the reason is on the first screen');
  await context.close();
});

// vLLM 0.25 and later have no BaichuanForCausalLM (its registry: "supported until v0.23.0"): refused at start-up, the
// advice names that release, and taking it answers there.
test('an architecture the newest vLLM dropped: refused, and the advice sets the release that serves it', async () => {
  const { page, context } = await open('model=baichuan-inc/Baichuan2-13B-Chat&gpu=h100&ctx=4096', { width: 390, height: 844 });
  assert.equal(await page.textContent('[data-role="verdict"]'), 'vLLM refuses to start on NVIDIA H100 SXM5 80GB with these settings, whatever the memory:');
  assert.equal(await page.textContent('[data-role="verdict-reason"]'),
    'vLLM 0.31.0 no longer serves BaichuanForCausalLM and stops as it reads the model\u2019s config; it names 0.23.0 as the last release that did. Choose vLLM 0.23.0 or earlier');
  assert.equal(await page.textContent('[data-role="verdict-advice"]'), 'vLLM 0.23.0 serves it, and it fits: up to 4,096 tokens per sequence');
  await page.click('[data-role="advice-apply"]');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('engineVersion') === '0.23.0');
  await page.waitForFunction(() => document.querySelector('[data-role="verdict"]')?.dataset.verdict === 'fits');
  assert.equal(await metric(page, 'max-context'), 4096);
  await context.close();
});

// A T4 has no attention backend for an fp8 cache: vLLM stops at start-up whatever the memory holds,
// and the first line says so, not "does not fit" (the numbers below are still the memory's).
test('an fp8 cache the GPU cannot run: refused at start-up, in vLLM\'s words, not "does not fit"', async () => {
  const { page, context } = await open('model=Qwen/Qwen3-0.6B&gpu=t4&kv=fp8', { width: 390, height: 844 });
  assert.equal(await page.textContent('[data-role="verdict"]'), 'vLLM refuses to start on NVIDIA T4 16 GB with these settings, whatever the memory:');
  assert.equal(await page.textContent('[data-role="verdict-reason"]'),
    'FP8 KV cache is not supported by the Triton attention backend on NVIDIA T4 (compute capability 7.5); native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype float16.');
  assert.equal(await metric(page, 'max-concurrency'), 6);  // kvbudget budget ... --max-model-len 32768: memory holds 6
  assert.equal(await page.textContent('[data-role="if-started"]'), 'Were it to start, the memory would hold:');
  await context.close();
});

// vLLM 0.20 and later carry no kernels for a V100 (compute capability 7.0): the same kind of no, with the release
// that still runs there; that release sizes it, and the numbers then stand on their own.
test('a V100 under vLLM: refused at start-up, sized under 0.19.1', async () => {
  const { page, context } = await open('lang=zh-CN&model=Qwen/Qwen3-8B&gpu=v100-32gb&ctx=32768', { width: 390, height: 844 });
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'nofit');
  assert.match(await page.textContent('[data-role="verdict-reason"]'), /^从 0\.20\.0 起，vLLM 的安装包只带计算能力 7\.5 及以上的 CUDA 内核/);
  assert.equal(await page.textContent('[data-role="if-started"]'), '假如能启动，显存可以容纳：');
  assert.equal(await page.$('[data-role="answer-command"]'), null, 'no command starts it as asked');
  await page.fill('#ctl-engine-version', '0.19.1');
  await page.press('#ctl-engine-version', 'Enter');
  await page.waitForFunction(() => document.querySelector('[data-role="verdict"]')?.dataset.verdict === 'fits');
  assert.equal(await page.$('[data-role="if-started"]'), null);
  await context.close();
});

// No context fits at all and more memory than a higher utilization frees is missing: the reason says what would
// help, and the card shows no command (the one asked does not start); the engine section still gives the CLI's.
test('nothing fits: the remedy that can work, and no command on the first screen', async () => {
  const { page, context } = await open('model=Qwen/Qwen3.5-35B-A3B&gpu=rtx-4090&ctx=32768', { width: 390, height: 844 });
  const a = cliJson(['budget', path.join(fixturesDir, 'Qwen--Qwen3.5-35B-A3B.json'), '--gpu', 'rtx-4090', '--max-model-len', '32768']);
  assert.equal(a.budget.verdict_reason.code, 'vllm_kv_pool_negative_far');
  assert.equal(await page.textContent('[data-role="verdict-reason"]'), msg('msg.vllm_kv_pool_negative_far', a.budget.verdict_reason.params));
  assert.equal(await page.$('[data-role="answer-command"]'), null, 'no command starts it');
  assert.equal(a.budget.command, 'vllm serve Qwen/Qwen3.5-35B-A3B --max-model-len 32768');
  await context.close();
});

// The first screen names the fix when an 8-bit KV cache turns the no into a yes: the core's advice.
test('a no that fp8 KV would turn into a yes: the answer card says so, as the CLI does', async () => {
  const { page, context } = await open('model=Qwen/Qwen3-8B&gpu=rtx-4090&ctx=32768', { width: 390, height: 844 });
  const a = cliJson(['budget', path.join(fixturesDir, 'Qwen--Qwen3-8B.json'), '--gpu', 'rtx-4090', '--max-model-len', '32768']);
  assert.equal(a.advice.code, 'advice_vllm_fp8_kv');
  assert.equal(await page.textContent('[data-role="verdict-advice"]'), msg('msg.advice_vllm_fp8_kv', a.advice.params));
  const box = await page.locator('[data-role="verdict-advice"]').boundingBox();
  assert.ok(box && box.y + box.height <= 844, 'the advice is on the first screen');
  // The command that runs it (the longest context that fits) is on the first screen too, the CLI's own.
  assert.equal(await page.textContent('[data-role="answer-command"]'), a.budget.command);
  assert.equal(a.budget.command, 'vllm serve Qwen/Qwen3-8B --max-model-len 31008');
  const cmd = await page.locator('[data-role="answer-command"]').boundingBox();
  assert.ok(cmd && cmd.y + cmd.height <= 844, 'the command is on the first screen');
  // One click sets the advised cache; the core then answers it, as the CLI does with --kv-cache-dtype fp8.
  const use = await page.locator('[data-role="advice-apply"]').boundingBox();
  assert.ok(use && use.y + use.height <= 844, 'the advice\'s button is on the first screen');
  await page.click('[data-role="advice-apply"]');
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && !document.querySelector('[data-role="verdict-advice"]'));
  assert.equal(await page.inputValue('#ctl-kv'), 'fp8');
  const fp8 = cliJson(['budget', path.join(fixturesDir, 'Qwen--Qwen3-8B.json'), '--gpu', 'rtx-4090', '--max-model-len', '32768', '--kv-cache-dtype', 'fp8']);
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'fits');
  assert.equal(await page.getAttribute('[data-metric="max-context"]', 'data-value'), String(fp8.metrics['max-context']));
  assert.equal(fp8.metrics['max-context'], Number(a.advice.params.max.replace(/,/g, '')));
  assert.equal(await page.textContent('[data-role="answer-command"]'), fp8.budget.command);
  await page.waitForFunction(() => new URL(location.href).searchParams.get('kv') === 'fp8');
  await context.close();
});

// llama.cpp's advice is both halves at q8_0 (-ctk q8_0 -ctv q8_0): its button sets both selects.
test('llama.cpp starting with layers in system RAM: the q8_0 advice, set in one click, as the CLI answers it', async () => {
  const { page, context } = await open('model=Qwen/Qwen3-8B&engine=llamacpp&gpu=rtx-4060-ti-16gb&ctx=40960&seqs=2');
  const cfg = path.join(fixturesDir, 'Qwen--Qwen3-8B.json');
  const base = ['budget', cfg, '--engine', 'llamacpp', '--gpu', 'rtx-4060-ti-16gb', '--max-model-len', '40960', '--seqs', '2'];
  const a = cliJson(base);
  assert.equal(a.advice.code, 'advice_llamacpp_q8_kv');
  assert.equal(await page.textContent('[data-role="verdict-advice"]'), msg('msg.advice_llamacpp_q8_kv', a.advice.params));
  await page.click('[data-role="advice-apply"]');
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && !document.querySelector('[data-role="verdict-advice"]'));
  assert.deepEqual([await page.inputValue('#ctl-ctk'), await page.inputValue('#ctl-ctv')], ['q8_0', 'q8_0']);
  const q8 = cliJson([...base, '--kv-cache-dtype', 'q8_0']);
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'fits');
  assert.equal(await page.getAttribute('[data-metric="total-bytes"]', 'data-value'), String(q8.metrics['total-bytes']));
  assert.equal(await page.textContent('[data-role="answer-command"]'), q8.budget.command);
  await context.close();
});

// llama.cpp allocates a context past the model's limit (it warns), but llama-server gives a slot at
// most the training context: the longest context is 40,960, and the answer card says why.
test('llama.cpp past the model limit: the cache holds the asked context, a request gets the training context', async () => {
  const { page, context } = await open('model=Qwen/Qwen3-30B-A3B&gpu=rtx-4090&engine=llamacpp&ctx=65536&ctk=q8_0&ctv=q8_0');
  const a = cliJson(['budget', path.join(fixturesDir, 'Qwen--Qwen3-30B-A3B.json'), '--gpu', 'rtx-4090', '--engine', 'llamacpp', '--max-model-len', '65536', '-ctk', 'q8_0', '-ctv', 'q8_0']);
  assert.equal(a.metrics['max-context'], 40960);
  assert.equal(a.budget.llamacpp.slot_capped, true);
  assert.equal(await metric(page, 'max-context'), 40960);
  const fact = await page.locator('[data-role="answer"] .facts .fact').first().textContent();
  assert.match(fact, /40,960 tokens \(the model's maximum\)/);
  assert.equal(await page.textContent('[data-role="verdict-reason"]'), msg('msg.llamacpp_slot_capped', a.budget.verdict_reason.params));
  assert.match(await page.textContent('[data-role="verdict-reason"]'), /srv {4}load_model: the slot context \(65536\) exceeds the training context of the model \(40960\) - capping/);
  await context.close();
  // Builds before b6925 gave a slot the whole cache: the longest context is the one asked.
  const old = await open('model=Qwen/Qwen3-30B-A3B&gpu=rtx-4090&engine=llamacpp&ctx=65536&ctk=q8_0&ctv=q8_0&engineVersion=b6924');
  const oldFact = await old.page.locator('[data-role="answer"] .facts .fact').first().textContent();
  assert.match(oldFact, /65,536 tokens \(as asked, past the model's 40,960\)/);
  await old.context.close();
});

// YaRN on a build without ggml-org/llama.cpp#28030: the scaled limit is 131,072, the slot cap 40,960.
test('llama.cpp YaRN on an older build: the longest context is llama-server\'s cap, labelled as such', async () => {
  const { page, context } = await open('model=Qwen/Qwen3-8B&gpu=h100-sxm&engine=llamacpp&ctx=131072&rope=yarn:4&engineVersion=b10678');
  assert.equal(await metric(page, 'max-context'), 40960);
  const fact = await page.locator('[data-role="answer"] .facts .fact').first().textContent();
  assert.match(fact, /40,960 tokens \(llama-server's cap per request, the model's training context\)/);
  await context.close();
});

// Two weights figures sit side by side: vLLM's "Model loading took" (the checkpoint plus the RoPE caches it
// builds, per GPU) in the bar, and the checkpoint in the numbers card. Each is named for what it is.
test('the bar\'s weights are named as loaded, the card\'s as the checkpoint, each with the CLI\'s bytes', async () => {
  const { page, context } = await open('');
  const a = cliJson(['budget', path.join(fixturesDir, 'meta-llama--Llama-3.1-8B.json'), '--gpu', 'rtx-4090', '--max-model-len', '32768']);
  assert.equal(Number(await page.getAttribute('[data-part="weights"]', 'data-value')), a.budget.per_gpu.weights_bytes);
  assert.equal(await page.textContent('[data-part="weights"]'), 'Weights as loaded: 14.99 GiB');
  assert.equal(await metric(page, 'weights-bytes'), a.metrics['weights-bytes']);
  assert.equal(await page.textContent('.metric:has([data-metric="weights-bytes"]) dt'), 'Weights (the checkpoint)');
  await context.close();
});

test('tensor parallel: the bar is per GPU, as kvbudget budget splits it', async () => {
  const { page, context } = await open('model=Qwen/Qwen3-32B&gpu=h100-sxm&gpuCount=4&tp=4&ctx=32768&seqs=8');
  const a = cliJson(['budget', path.join(fixturesDir, 'Qwen--Qwen3-32B.json'), '--gpu', 'h100-sxm', '--gpu-count', '4', '-tp', '4', '--max-model-len', '32768', '--seqs', '8']);
  const part = async (k) => Number(await page.getAttribute(`[data-part="${k}"]`, 'data-value'));
  const g = a.budget.per_gpu;
  assert.equal(await part('weights'), g.weights_bytes);
  assert.equal(await part('kv'), g.kv_bytes);
  assert.equal(await part('activations'), g.activation_bytes);
  assert.equal(await part('overhead'), g.overhead_bytes);
  for (const name of METRICS) assert.equal(await metric(page, name), a.metrics[name], name);
  assert.equal(await page.textContent('[data-role="command"]'), a.budget.command);
  await context.close();
});

test('speculative decoding control: the drafter layer shares the pool, as kvbudget budget --speculative-config', async () => {
  const { page, context } = await open('gpu=h100-sxm&ctx=32768&spec=eagle3');
  const args = ['budget', path.join(fixturesDir, 'meta-llama--Llama-3.1-8B.json'), '--gpu', 'h100-sxm', '--max-model-len', '32768'];
  const a = cliJson([...args, '--speculative-config', '{"method":"eagle3","num_speculative_tokens":3}']);
  const plain = cliJson(args);
  assert.ok(a.budget.vllm.num_blocks < plain.budget.vllm.num_blocks, 'a 33rd layer makes blocks dearer');
  for (const name of METRICS) assert.equal(await metric(page, name), a.metrics[name], name);
  assert.equal(await page.textContent('[data-role="command"]'), a.budget.command);
  assert.equal(await page.inputValue('#ctl-spec'), 'eagle3');
  await page.selectOption('#ctl-spec', '');
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('spec'));
  for (const name of METRICS) assert.equal(await metric(page, name), plain.metrics[name], name);
  // llama.cpp has its own speculative control (MTP, n-gram: issue 12); transformers has none.
  await page.selectOption('#ctl-engine', 'llamacpp');
  await page.waitForFunction(() => document.querySelector('[data-field="ctl-spec"] label')?.textContent === 'llama.cpp speculative decoding');
  await page.selectOption('#ctl-engine', 'transformers');
  await page.waitForFunction(() => document.querySelector('[data-field="ctl-spec"]')?.hidden === true);
  await context.close();
});

test('controls recompute: context, sequences, KV dtype', async () => {
  const { page, context } = await open();
  await page.fill('#ctl-ctx', '8192');
  await page.press('#ctl-ctx', 'Enter');
  await page.fill('#ctl-seqs', '4');
  await page.press('#ctl-seqs', 'Enter');
  await page.selectOption('#ctl-kv', 'fp8');
  const llama = path.join(fixturesDir, 'meta-llama--Llama-3.1-8B.json');
  const cli = cliJson(['kv', llama, '--context', '8192', '--seqs', '4', '--kv-dtype', 'fp8']);
  assert.equal(await metric(page, 'kv-bytes-per-token'), cli.bytes_per_token);
  // The KV for the asked sequences is the engine's layout: the answer's, as `budget` gives it.
  const budgetKv = (args) => cliJson(['budget', llama, '--gpu', 'rtx-4090', '--max-model-len', '8192', '--seqs', '4', ...args]).metrics['kv-bytes-total'];
  assert.equal(await metric(page, 'kv-bytes-total'), budgetKv(['--kv-cache-dtype', 'fp8']));
  await page.selectOption('#ctl-engine', 'llamacpp');
  await page.selectOption('#ctl-ctk', 'q8_0');
  await page.selectOption('#ctl-ctv', 'q8_0');
  const cl2 = cliJson(['kv', path.join(fixturesDir, 'meta-llama--Llama-3.1-8B.json'), '--context', '8192', '--seqs', '4', '--engine', 'llamacpp', '--kv-dtype', 'q8_0']);
  assert.equal(await metric(page, 'kv-bytes-per-token'), cl2.bytes_per_token);
  assert.equal(await metric(page, 'kv-bytes-total'), budgetKv(['--engine', 'llamacpp', '--kv-cache-dtype', 'q8_0']));
  // A burst of changes writes the address once it has been still for a moment (main.js),
  // not on every change: wait for it.
  await page.waitForFunction(() => new URL(location.href).searchParams.get('engine') === 'llamacpp', null, { timeout: 5000 });
  const url = new URL(page.url());
  assert.equal(url.searchParams.get('ctx'), '8192');
  assert.equal(url.searchParams.get('engine'), 'llamacpp');
  await context.close();
});

test('URL state reproduces the view', async () => {
  const { page, context } = await open('model=Qwen/Qwen3-8B&ctx=4096&seqs=2&engine=llamacpp&ctk=q4_0&ctv=q4_0');
  const qwen = path.join(fixturesDir, 'Qwen--Qwen3-8B.json');
  const cli = cliJson(['kv', qwen, '--context', '4096', '--seqs', '2', '--engine', 'llamacpp', '--kv-dtype', 'q4_0']);
  assert.equal(await metric(page, 'kv-bytes-per-token'), cli.bytes_per_token);
  const a = cliJson(['budget', qwen, '--gpu', 'rtx-4090', '--max-model-len', '4096', '--seqs', '2', '--engine', 'llamacpp', '--kv-cache-dtype', 'q4_0']);
  assert.equal(await metric(page, 'kv-bytes-total'), a.metrics['kv-bytes-total']);
  await context.close();
});

const ERROR_CASES = [
  ['gated/model', 'hub.gated', { id: 'gated/model', status: 401 }],
  ['missing/model', 'hub.notFound', { id: 'missing/model' }],
  ['nosuch/model', 'hub.notFound', { id: 'nosuch/model' }],
  ['busy/model', 'hub.rateLimited', {}],
  ['broken/model', 'hub.server', { status: 500 }],
  ['slow/model', 'hub.timeout', { seconds: TIMEOUT_MS / 1000 }],
  ['html/model', 'hub.notJson', { id: 'html/model' }],
  ['huge/model', 'hub.tooLarge', { id: 'huge/model' }],
  ['gguf/model', 'hub.gguf', { id: 'gguf/model' }],
];

for (const [id, key, params] of ERROR_CASES) {
  test(`hub error ${key} for ${id} has its own message`, async () => {
    const { page, context, requests } = await open();
    await loadId(page, id);
    assert.equal(await page.getAttribute('body', 'data-state'), 'error');
    assert.equal(await page.textContent('[data-role="error"]'), msg(key, params));
    onlyAllowedHosts(requests);
    await context.close();
  });
}

test('a slow fetch shows progress and can be cancelled, keeping the current model', async () => {
  const { page, context } = await open();
  await page.fill('#model-input', 'slow/model');
  await page.press('#model-input', 'Enter');
  await page.waitForFunction(() => document.body.dataset.state === 'loading');
  assert.equal(await page.isVisible('progress'), true);
  assert.equal(await page.textContent('[role="status"]'), msg('model.fetching', { id: 'slow/model' }));
  await page.click('text=' + msg('model.cancel'));
  await page.waitForFunction(() => document.body.dataset.state !== 'loading');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await page.textContent('[role="status"]'), msg('hub.cancelled'));
  assert.equal(await page.textContent('[data-role="model-name"]'), 'meta-llama/Llama-3.1-8B');
  await context.close();
});

test('gated model loads with an access token, which stays out of the URL', async () => {
  const { page, context } = await open();
  await loadId(page, 'gated/model');
  assert.equal(await page.getAttribute('body', 'data-state'), 'error');
  assert.equal(await page.isVisible('#hub-token'), true, 'token field offered');
  await page.fill('#hub-token', GOOD_TOKEN);
  await loadId(page, 'gated/model');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await metric(page, 'kv-bytes-per-token'), 131072);
  assert.ok(!page.url().includes(GOOD_TOKEN));
  assert.ok(hub.requests.some((r) => r.auth === 'Bearer ' + GOOD_TOKEN));
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + document.cookie);
  assert.ok(!stored.includes(GOOD_TOKEN));
  await context.close();
});

test('issue 14.12: after a language switch the held token shows as set and can be cleared', async () => {
  const zh = JSON.parse(fs.readFileSync(path.join(root, 'web/i18n/zh-CN.json'), 'utf8'));
  const { page, context } = await open();
  assert.equal(await page.isVisible('[data-role="token-set"]'), false, 'no token, no note');
  await page.click('details.token summary');
  await page.fill('#hub-token', GOOD_TOKEN);
  assert.equal(await page.textContent('[data-role="token-set"]'), msg('model.tokenSet'));
  await page.selectOption('#lang', 'zh-CN');
  // The Chinese catalog is a chunk of its own: wait until the page is rebuilt with it.
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN' && document.body.dataset.state !== 'loading');
  // Rebuilt in Chinese: the box is open, says a token is set and holds it (masked).
  assert.equal(await page.isVisible('[data-role="token-set"]'), true);
  assert.equal(await page.textContent('[data-role="token-set"]'), zh['model.tokenSet']);
  assert.equal(await page.inputValue('#hub-token'), GOOD_TOKEN);
  assert.equal(await page.getAttribute('#hub-token', 'type'), 'password');
  await loadId(page, 'gated/model');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready', 'the token is still sent');
  await page.click('[data-role="token-clear"]');
  assert.equal(await page.inputValue('#hub-token'), '');
  assert.equal(await page.isVisible('[data-role="token-set"]'), false);
  const before = hub.requests.length;
  await loadId(page, 'gated/other');
  assert.equal(await page.getAttribute('body', 'data-state'), 'error', 'no token after clearing');
  assert.ok(hub.requests.slice(before).every((r) => r.auth === ''), 'cleared means not sent');
  await context.close();
});

test('issue 14.13: connect-src allows the page and its hub only; another origin is blocked', async () => {
  // The built page names the Hugging Face Hub and its download hosts, nothing else.
  const built = fs.readFileSync(path.join(siteDir, 'index.html'), 'utf8');
  const builtSrc = built.match(/connect-src ([^;"]*)/)[1].split(' ');
  assert.deepEqual(builtSrc.slice(0, 2), ["'self'", 'https://huggingface.co']);
  assert.ok(builtSrc.includes('https://cas-bridge.xethub.hf.co') && builtSrc.includes('https://cdn-lfs.huggingface.co'));
  assert.ok(!builtSrc.includes('*') && builtSrc.every((s) => s === "'self'" || /^https:\/\/[a-z0-9.-]+$/.test(s)));
  // Served for the fake hub (as a build with KVB_HUB_URL writes it), configs load from it ...
  const other = await startFakeHub({ fixturesDir });
  const { page, context } = await open();
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  assert.match(csp, new RegExp(`connect-src 'self' ${new URL(hub.url).origin};`));
  await loadId(page, 'Qwen/Qwen3-8B');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await page.textContent('[data-role="model-name"]'), 'Qwen/Qwen3-8B');
  // ... and a fetch to any other origin is refused by the browser before it leaves.
  const verdict = await page.evaluate(async (url) => {
    const violations = [];
    document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective));
    let fetched = 'ok';
    try {
      await fetch(url);
    } catch (e) {
      fetched = e.name;
    }
    await new Promise((r) => setTimeout(r, 50));
    return { fetched, violations };
  }, other.url + '/Qwen/Qwen3-8B/resolve/main/config.json');
  assert.equal(verdict.fetched, 'TypeError');
  assert.deepEqual(verdict.violations, ['connect-src']);
  assert.equal(other.requests.length, 0, 'the other origin saw no request');
  await other.close();
  await context.close();
});

test('network failure: own message, bundled copy used when the id is in the catalog', async () => {
  const { page, context } = await open();
  await page.route(hub.url + '/**', (route) => route.abort('connectionrefused'));
  await loadId(page, 'not-in/catalog');
  assert.equal(await page.textContent('[data-role="error"]'), msg('hub.network'));
  await loadId(page, 'Qwen/Qwen3-8B');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await page.textContent('[data-role="source"]'), msg('model.source.fallback', { id: 'Qwen/Qwen3-8B' }));
  await context.close();
});

// A bundled copy that did not come (a network error; a deploy that replaced it) read as "This config
// could not be used: Failed to fetch": it is as good as none, so the Hub is asked for the model.
test('a bundled config that does not come: the model is asked of the Hub', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.route(/\/catalog\/Qwen--Qwen3-8B\.json$/, (route) => route.abort());
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(site.url + '?model=Qwen/Qwen3-8B&gpu=rtx-3090');
  await waitSettled(page);
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await page.textContent('[data-role="source"]'), msg('model.source.hub', { id: 'Qwen/Qwen3-8B', revision: 'main', hub: hub.url.replace(/\/$/, '') }));
  assert.equal(await page.textContent('[data-role="gpu"]'), 'NVIDIA GeForce RTX 3090 24 GB');
  assert.deepEqual(errors, []);
  await context.close();
});

test("the Hub's safetensors parameter count is used for the weights", async () => {
  const { page, context } = await open();
  await loadId(page, 'params/model');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  const a = cliJson(['budget', path.join(fixturesDir, 'meta-llama--Llama-3.1-8B.json'), '--gpu', 'rtx-4090', '--max-model-len', '32768', '--params', '9000000000']);
  assert.equal(await metric(page, 'weights-bytes'), a.metrics['weights-bytes']);
  assert.equal(a.budget.weights.bytes, 18e9);
  await context.close();
});

// A ModelOpt export of 0.29 or before keeps its quantization in hf_quant_config.json, which vLLM
// reads when config.json has none: the page asks for it when the repository lists it, only then.
test('hf_quant_config.json beside a config without quantization_config: the numbers of the folder with both', async () => {
  const { page, context } = await open();
  const before = hub.requests.length;
  await loadId(page, 'modelopt/Llama-3.1-8B-Instruct-FP8');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-modelopt-'));
  fs.mkdirSync(path.join(dir, 'Llama-3.1-8B-Instruct-FP8'));
  fs.copyFileSync(path.join(fixturesDir, 'meta-llama--Llama-3.1-8B-Instruct.json'), path.join(dir, 'Llama-3.1-8B-Instruct-FP8', 'config.json'));
  fs.copyFileSync(path.join(fixturesDir, '..', 'hf_quant_config', 'modelopt-fp8.json'), path.join(dir, 'Llama-3.1-8B-Instruct-FP8', 'hf_quant_config.json'));
  const a = cliJson(['budget', path.join(dir, 'Llama-3.1-8B-Instruct-FP8', 'config.json'), '--gpu', 'rtx-4090', '--max-model-len', '32768']);
  fs.rmSync(dir, { recursive: true });
  assert.equal(a.budget.kv_cache_dtype, 'fp8_e4m3');
  assert.equal(a.budget.weights.bytes, 9081202432);
  for (const name of ['weights-bytes', 'kv-bytes-per-token', 'max-context', 'max-concurrency']) {
    assert.equal(await metric(page, name), a.metrics[name], name);
  }
  assert.match(await page.textContent('body'), /vLLM caches KV as fp8_e4m3 under --kv-cache-dtype auto: the checkpoint's ModelOpt quantization declares its KV cache as FP8/);
  const asked = hub.requests.slice(before).map((r) => r.path).filter((p) => p.endsWith('hf_quant_config.json'));
  assert.deepEqual(asked, ['/modelopt/Llama-3.1-8B-Instruct-FP8/resolve/main/hf_quant_config.json']);
  // A repository that does not list the file is not asked for it.
  await loadId(page, 'Qwen/Qwen3-8B');
  assert.equal(hub.requests.filter((r) => r.path.endsWith('hf_quant_config.json')).length, 1);
  await context.close();
});

test('URL parameters never point fetches at another host', async () => {
  const evil = 'http://127.0.0.2:9/';
  const q = new URLSearchParams({ hubUrl: evil, hub: evil, model: evil + 'org/name', config: evil + 'x.json' }).toString();
  const { page, context, requests } = await open(q);
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await metric(page, 'kv-bytes-per-token'), 131072, 'default model shown');
  onlyAllowedHosts(requests);
  await loadId(page, 'Qwen/Qwen3-8B');
  assert.ok(requests.some((u) => u.startsWith(hub.url + '/Qwen/Qwen3-8B/')), 'the configured hub was asked');
  onlyAllowedHosts(requests);
  await context.close();
});

test('invalid ids are refused before any request', async () => {
  const { page, context } = await open();
  const before = hub.requests.length;
  for (const bad of ['a--b/c', 'org/na me', '../etc/passwd', 'org/name/extra', 'https://evil.example/org/name']) {
    await loadId(page, bad);
    assert.equal(await page.getAttribute('body', 'data-state'), 'error', bad);
  }
  assert.equal(await page.textContent('[data-role="error"]'), msg('input.foreignUrl', { text: 'https://evil.example/org/name' }));
  assert.equal(hub.requests.length, before);
  await context.close();
});

test('huggingface.co URLs and @revision are understood', async () => {
  const { page, context } = await open();
  await loadId(page, 'https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await page.inputValue('#model-input'), 'Qwen/Qwen3-8B@main');
  await loadId(page, 'mistralai/Mistral-7B-v0.1@abc123');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.ok(hub.requests.some((r) => r.path === '/mistralai/Mistral-7B-v0.1/resolve/abc123/config.json'));
  await context.close();
});

test('markup in ids and config strings is shown as text', async () => {
  const { page, context, errors } = await open();
  await loadId(page, XSS);
  assert.equal(await page.textContent('[data-role="error"]'), msg('input.badId', { text: XSS }));
  await loadId(page, 'xss/model');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  const text = await page.textContent('#results');
  assert.ok(text.includes(XSS + 'ForCausalLM'), 'architecture shown literally');
  // Pasted config with markup in the strings.
  await page.click('details.paste summary');
  await page.fill('#paste-config', JSON.stringify({ ...JSON.parse(fs.readFileSync(path.join(fixturesDir, 'Qwen--Qwen3-8B.json'), 'utf8')), model_type: XSS }));
  await page.click('details.paste button');
  await waitSettled(page);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal(await page.locator('#app img').count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('pasted config.json is computed; broken paste gets the core message', async () => {
  const { page, context } = await open();
  await page.click('details.paste summary');
  await page.fill('#paste-config', fs.readFileSync(path.join(fixturesDir, 'Qwen--Qwen3-8B.json'), 'utf8'));
  await page.click('details.paste button');
  await waitSettled(page);
  assert.equal(await metric(page, 'kv-bytes-per-token'), 147456);
  await page.fill('#paste-config', '{"model_type": ');
  await page.click('details.paste button');
  await waitSettled(page);
  assert.equal(await page.getAttribute('body', 'data-state'), 'error');
  assert.match(await page.textContent('[data-role="error"]'), /^This config could not be used: .*not valid JSON/);
  await context.close();
});

test('a config.json dropped on the model panel is computed', async () => {
  const { page, context } = await open();
  const text = fs.readFileSync(path.join(fixturesDir, 'Qwen--Qwen3-8B.json'), 'utf8');
  const dt = await page.evaluateHandle((t) => {
    const d = new DataTransfer();
    d.items.add(new File([t], 'config.json', { type: 'application/json' }));
    return d;
  }, text);
  await page.dispatchEvent('section.model', 'drop', { dataTransfer: dt });
  // The bundled model's source line names a config.json too: wait for the dropped file's.
  const dropped = msg('model.source.paste', { name: 'config.json' });
  await page.waitForFunction((want) => document.querySelector('[data-role="source"]')?.textContent === want, dropped);
  assert.equal(await metric(page, 'kv-bytes-per-token'), 147456);
  await context.close();
});

test('keyboard only: type an id and press Enter', async () => {
  const { page, context } = await open();
  await page.focus('#model-input');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('Qwen/Qwen3-0.6B');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('[data-role="model-name"]')?.textContent === 'Qwen/Qwen3-0.6B');
  assert.equal(await metric(page, 'kv-bytes-per-token'), 28 * 2 * 8 * 128 * 2);
  await context.close();
});

test('every control has a label; fits a 360 px wide phone without sideways scrolling', async () => {
  const { page, context } = await open('', { width: 360, height: 740 });
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, select, textarea')].filter((el) => {
    if (el.type === 'hidden') return false;
    return !(el.labels && el.labels.length) && !el.getAttribute('aria-label');
  }).map((el) => el.id || el.outerHTML));
  assert.deepEqual(unlabelled, []);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
  await context.close();
});

// Issue 8's operator case: the page and `kvbudget budget` give one answer, and the command the
// page prints, read back flag by flag, serves what the page promises (vLLM's own --max-num-seqs).
test('operator case: Llama-3.1-70B on 4 x H100, TP 4, 32K: the CLI\'s numbers and a command that means the same', async () => {
  const { page, context } = await open('model=meta-llama/Llama-3.1-70B&gpu=h100-sxm&gpuCount=4&tp=4&ctx=32768&seqs=16');
  const file = path.join(fixturesDir, 'meta-llama--Llama-3.1-70B.json');
  const args = ['budget', file, '--gpu', 'h100-sxm', '--gpu-count', '4', '-tp', '4', '--max-model-len', '32768', '--seqs', '16'];
  const check = async (a) => {
    for (const name of METRICS) assert.equal(await metric(page, name), a.metrics[name], name);
    const command = await page.textContent('[data-role="command"]');
    assert.equal(command, a.budget.command);
    // Read back: every flag is one the page set, with the page's value; the rest is vLLM's default.
    const words = command.split(' ');
    assert.deepEqual(words.slice(0, 3), ['vllm', 'serve', 'meta-llama/Llama-3.1-70B']);
    const flags = Object.fromEntries(words.slice(3).reduce((acc, w, i, all) => (i % 2 ? acc : [...acc, [w, all[i + 1]]]), []));
    // The page's own controls: the values the page computed with.
    assert.equal(flags['--max-model-len'], await page.inputValue('#ctl-ctx'));
    assert.equal(flags['--tensor-parallel-size'], await page.inputValue('#ctl-tp'));
    const kv = await page.inputValue('#ctl-kv');
    assert.equal(flags['--kv-cache-dtype'], kv === 'auto' ? undefined : kv);
    assert.equal(flags['--max-num-seqs'], undefined, 'vLLM keeps its own --max-num-seqs default');
    assert.deepEqual(Object.keys(flags).filter((f) => !['--max-model-len', '--tensor-parallel-size', '--kv-cache-dtype'].includes(f)), []);
  };
  const a = cliJson(args);
  assert.equal(a.metrics['max-concurrency'], 13);
  assert.equal(a.budget.max_num_seqs, 1024);
  await check(a);
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'partial');
  await page.selectOption('#ctl-kv', 'fp8');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('kv') === 'fp8');
  const f = cliJson([...args, '--kv-cache-dtype', 'fp8']);
  assert.equal(f.metrics['max-concurrency'], 27);
  await check(f);
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'fits');
  await context.close();
});
