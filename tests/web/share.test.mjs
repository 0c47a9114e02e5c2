// URL state and sharing (issue 5) in real Chromium: a copied link reproduces the
// view exactly, unknown or invalid parameters are ignored with a visible note, and
// "Copy embed code" gives a snippet for this view.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { startAll, openPage, waitSettled, metrics, clipboardAfter, controlValues, root, fixturesDir } from './harness.mjs';
import { XSS } from './fake-hub.mjs';

let env;
before(async () => {
  env = await startAll();
});
after(async () => {
  await env?.close();
});

async function change(page, selector, value) {
  const tag = await page.$eval(selector, (e) => e.tagName);
  if (tag === 'SELECT') await page.selectOption(selector, value);
  else {
    await page.fill(selector, value);
    await page.press(selector, 'Tab');
  }
  await waitSettled(page);
}

test('a copied link round-trips: same numbers, same controls, same language', async () => {
  const { page, context, errors } = await openPage(env, '', { clipboard: true });
  await page.fill('#model-input', 'Qwen/Qwen3-8B');
  await page.press('#model-input', 'Enter');
  await page.waitForFunction(() => document.querySelector('[data-role="model-name"]')?.textContent === 'Qwen/Qwen3-8B');
  await waitSettled(page);
  await change(page, '#ctl-gpu', 'a100-80gb');
  await change(page, '#ctl-util', '0.85'); // vLLM's knob: set before switching engine
  await change(page, '#ctl-engine', 'llamacpp');
  await change(page, '#ctl-ctk', 'q8_0');
  await change(page, '#ctl-ctv', 'q4_0');
  await change(page, '#ctl-ctx', '12288');
  await change(page, '#ctl-seqs', '3');
  await change(page, '#lang', 'zh-CN');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  const before = { metrics: await metrics(page), controls: await controlValues(page) };
  assert.equal(before.controls['ctl-ctk'], 'q8_0');
  assert.equal(before.controls['ctl-ctx'], '12288');

  const link = await clipboardAfter(page, '[data-action="copy-link"]');
  const url = new URL(link);
  assert.equal(url.origin + url.pathname, env.site.url);
  assert.deepEqual(Object.fromEntries(url.searchParams), {
    model: 'Qwen/Qwen3-8B', engine: 'llamacpp', ctx: '12288', seqs: '3', ctk: 'q8_0', ctv: 'q4_0', gpu: 'a100-80gb', util: '0.85', lang: 'zh-CN',
  });
  // The address bar carries the same state (a frame or a quiet moment after the last change:
  // main.js writeUrl).
  await page.waitForFunction((want) => location.href === want, link);

  const fresh = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const p2 = await fresh.newPage();
  await p2.goto(link);
  await waitSettled(p2);
  assert.equal(await p2.getAttribute('body', 'data-state'), 'ready');
  assert.deepEqual(await metrics(p2), before.metrics);
  assert.deepEqual(await controlValues(p2), before.controls);
  assert.equal(await p2.getAttribute('html', 'lang'), 'zh-CN');
  assert.equal(await p2.textContent('[data-role="model-name"]'), 'Qwen/Qwen3-8B');
  assert.equal(await p2.isVisible('[data-role="ignored-params"]'), false);
  assert.deepEqual(errors, []);
  await fresh.close();
  await context.close();
});

test('unknown and invalid parameters are ignored with a visible note, never an error page', async () => {
  const q = new URLSearchParams([
    ['foo', 'bar'], ['ctx', '-5'], ['engine', 'tpu'], ['lang', 'fr'], ['model', XSS], ['theme', 'neon'], ['embed', 'yes'], ['panels', 'bar,nope'], ['kv', 'bogus'], ['seqs', '2'],
  ]).toString();
  const { page, context, errors } = await openPage(env, q);
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  // The valid one applies; the rest fall back to the defaults (Llama-3.1-8B at 32K).
  assert.equal(await page.inputValue('#ctl-seqs'), '2');
  assert.equal(await page.textContent('[data-role="model-name"]'), 'meta-llama/Llama-3.1-8B');
  assert.equal((await metrics(page))['kv-bytes-per-token'], '131072');
  const note = page.locator('[data-role="ignored-params"]');
  assert.equal(await note.isVisible(), true);
  assert.equal(await note.textContent(),
    `Ignored URL parameters (unknown or invalid): foo=bar, ctx=-5, engine=tpu, lang=fr, model=${XSS}, theme=neon, embed=yes, panels=nope, kv=bogus`);
  assert.equal(await page.evaluate(() => window.__xss), undefined);
  assert.equal(await page.$$eval('img', (imgs) => imgs.length), 0);
  // The address bar is rewritten to the state actually shown (a frame or a quiet moment later:
  // main.js writeUrl).
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('foo'));
  assert.deepEqual(Object.fromEntries(new URL(page.url()).searchParams), { seqs: '2', panels: 'bar' });
  assert.deepEqual(errors, []);
  await context.close();
});

test('an ignored parameter the CLI spells otherwise, or in another case, says which one was meant', async () => {
  const q = 'model=Qwen/Qwen3-8B&gpus=8&max_model_len=8192&GPU=h100&gpu_count=2&foo=1';
  const { page, context, errors } = await openPage(env, q);
  assert.equal(await page.textContent('[data-role="ignored-params"]'),
    'Ignored URL parameters (unknown or invalid): gpus=8 (did you mean gpuCount?), max_model_len=8192 (did you mean ctx?), GPU=h100 (did you mean gpu?), gpu_count=2 (did you mean gpuCount?), foo=1');
  assert.deepEqual(errors, []);
  await context.close();
  const zh = await openPage(env, 'lang=zh-CN&' + q);
  assert.equal(await zh.page.textContent('[data-role="ignored-params"]'),
    '已忽略的 URL 参数（未知或无效）：gpus=8（是否想用 gpuCount？）, max_model_len=8192（是否想用 ctx？）, GPU=h100（是否想用 gpu？）, gpu_count=2（是否想用 gpuCount？）, foo=1');
  await zh.context.close();
});

const cliPath = process.env.KVB_CLI || path.join(root, 'build/kvbudget');
function cliJson(args) {
  return JSON.parse(execFileSync(cliPath, [...args, '--json'], { encoding: 'utf8' }));
}
const ignoredText = (page) => page.textContent('[data-role="ignored-params"]');
// The address as main.js writes it (a frame or a quiet moment after the answer).
async function addressIs(page, want) {
  await page.waitForFunction((w) => new URL(location.href).search === w, want);
}

test('llama.cpp takes kv for its K and V cache types, as kvbudget budget --kv-cache-dtype does; ctk / ctv win for their half', async () => {
  const cfg = path.join(fixturesDir, 'Qwen--Qwen3-8B.json');
  for (const [q, flags, command, address] of [
    ['model=Qwen/Qwen3-8B&gpu=rtx-4090&engine=llamacpp&kv=q8_0&ctx=32768', ['--kv-cache-dtype', 'q8_0'],
      'llama-server -m Qwen3-8B-Q4_K_M.gguf -c 32768 -np 1 -ctk q8_0 -ctv q8_0 -fa on -ngl 99', '?model=Qwen%2FQwen3-8B&engine=llamacpp&ctk=q8_0&ctv=q8_0'],
    ['model=Qwen/Qwen3-8B&engine=llamacpp&kv=q8_0&ctv=f16', ['--kv-cache-dtype', 'q8_0', '-ctv', 'f16'],
      'llama-server -m Qwen3-8B-Q4_K_M.gguf -c 32768 -np 1 -ctk q8_0 -ngl 99', '?model=Qwen%2FQwen3-8B&engine=llamacpp&ctk=q8_0'],
    ['model=Qwen/Qwen3-8B&engine=llamacpp&ctk=q8_0', ['-ctk', 'q8_0'],
      'llama-server -m Qwen3-8B-Q4_K_M.gguf -c 32768 -np 1 -ctk q8_0 -ngl 99', '?model=Qwen%2FQwen3-8B&engine=llamacpp&ctk=q8_0'],
  ]) {
    const { page, context, errors } = await openPage(env, q);
    assert.equal(await page.getAttribute('body', 'data-state'), 'ready', q);
    assert.equal(await page.textContent('[data-role="command"]'), command, q);
    const cli = cliJson(['budget', cfg, '--engine', 'llamacpp', '--gpu', 'rtx-4090', '--max-model-len', '32768', ...flags]);
    assert.equal(cli.budget.command, command, flags.join(' '));
    assert.equal((await metrics(page))['kv-bytes-total'], String(cli.metrics['kv-bytes-total']), q);
    assert.equal(await page.isVisible('[data-role="ignored-params"]'), false, q);
    await addressIs(page, address);
    assert.deepEqual(errors, []);
    await context.close();
  }
  // Not a llama.cpp type: listed, both halves stay f16.
  const { page, context } = await openPage(env, 'engine=llamacpp&kv=bogus');
  assert.equal(await ignoredText(page), 'Ignored URL parameters (unknown or invalid): kv=bogus');
  assert.deepEqual([await page.inputValue('#ctl-ctk'), await page.inputValue('#ctl-ctv')], ['f16', 'f16']);
  await context.close();
});

test('ctx in the address takes the spellings of the context field and --max-model-len (32K, 128K, 32,768, 1M)', async () => {
  const plain = await openPage(env, 'model=Qwen/Qwen3-8B&ctx=131072');
  const want = await metrics(plain.page);
  await plain.context.close();
  for (const [q, ctx] of [['model=Qwen/Qwen3-8B&ctx=128K', 131072], ['model=Qwen/Qwen3-8B&ctx=32K', 32768], ['model=Qwen/Qwen3-8B&ctx=32%2C768', 32768], ['model=Qwen/Qwen3-8B&ctx=1M', 1048576], ['model=Qwen/Qwen3-8B&ctx=4k', 4096]]) {
    const { page, context, errors } = await openPage(env, q);
    assert.equal(await page.getAttribute('body', 'data-state'), 'ready', q);
    assert.equal(await page.inputValue('#ctl-ctx'), String(ctx), q);
    assert.equal(await page.isVisible('[data-role="ignored-params"]'), false, q);
    if (ctx === 131072) assert.deepEqual(await metrics(page), want);
    // As a number (32,768 is the default: left out).
    await addressIs(page, '?model=Qwen%2FQwen3-8B' + (ctx === 32768 ? '' : `&ctx=${ctx}`));
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('numbers outside the core\'s limits are ignored like malformed ones, the note giving the range; the card answers', async () => {
  const q = 'ctx=99999999999&gpuCount=0&seqs=1000000000&engineVersion=foo';
  const { page, context, errors } = await openPage(env, q);
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await ignoredText(page),
    'Ignored URL parameters (unknown or invalid): ctx=99999999999 (allowed: 1 to 1,073,741,824), gpuCount=0 (allowed: 1 to 4,096), seqs=1000000000 (allowed: 1 to 1,048,576), engineVersion=foo');
  // The defaults answer: Llama-3.1-8B at 32K on one RTX 4090.
  assert.equal(await page.textContent('[data-role="verdict"]'), 'Fits on NVIDIA GeForce RTX 4090 24 GB: one sequence of 32K tokens needs 21.03 GiB of 21.75 GiB usable');
  assert.equal(await page.isVisible('[data-role="error"]'), false);
  await addressIs(page, '');
  assert.deepEqual(errors, []);
  await context.close();
  const mixed = await openPage(env, 'seqs=1000000000&gpus=2&ctx=128K');
  assert.equal(await ignoredText(mixed.page), 'Ignored URL parameters (unknown or invalid): seqs=1000000000 (allowed: 1 to 1,048,576), gpus=2 (did you mean gpuCount?)');
  assert.equal(await mixed.page.inputValue('#ctl-ctx'), '131072');
  await mixed.context.close();
  const zh = await openPage(env, 'lang=zh-CN&gpuCount=100000&embed=1');
  assert.equal(await zh.page.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await ignoredText(zh.page), '已忽略的 URL 参数（未知或无效）：gpuCount=100000（允许范围：1 到 4,096）');
  assert.equal(await zh.page.inputValue('#ctl-gpu-count'), '1');
  await zh.context.close();
});

test('a refused setting names its control without a stray space in Chinese; the earlier answer stays, marked stale', async () => {
  const { page, context } = await openPage(env, 'lang=zh-CN&model=Qwen/Qwen3-8B&ctx=8192');
  const verdict = await page.textContent('[data-role="verdict"]');
  // (The context field says its own range beside it: tests/web/context-input.test.mjs. The core refuses the count.)
  await page.fill('#ctl-seqs', '99999999999');
  await page.press('#ctl-seqs', 'Tab');
  await page.waitForFunction(() => document.body.dataset.state === 'error');
  assert.equal(await page.textContent('[data-role="error"]'), '无法按这些设置计算：并发请求数必须是 1 到 1,048,576 之间的整数，收到的是 99,999,999,999');
  assert.equal(await page.textContent('[data-role="verdict"]'), verdict);
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'fits');
  assert.equal(await page.$eval('.answer-wrap', (e) => e.classList.contains('stale')), true);
  await context.close();
});

test('a link whose model cannot be loaded says on the card that there is no answer, and why, in either language', async () => {
  const { page, context } = await openPage(env, 'model=missing/bar-7b');
  assert.equal(await page.getAttribute('body', 'data-state'), 'error');
  assert.equal(await page.textContent('[data-role="error"]'), 'missing/bar-7b was not found on the Hub (HTTP 404). Check the spelling and the revision, or paste its config.json.');
  assert.equal(await page.textContent('[data-role="answer"]'), 'No answer: missing/bar-7b could not be loaded.');
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'none');
  assert.equal(await page.inputValue('#model-input'), 'missing/bar-7b');
  // A language switch builds the page anew: the card and the error say it again, in Chinese.
  await page.selectOption('#lang', 'zh-CN');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN' && document.body.dataset.state === 'error');
  assert.equal(await page.textContent('[data-role="answer"]'), '没有结果：无法加载 missing/bar-7b。');
  assert.equal(await page.textContent('[data-role="error"]'), 'Hub 上找不到 missing/bar-7b（HTTP 404）。请检查拼写和版本，或粘贴它的 config.json。');
  await context.close();
  const embed = await openPage(env, 'lang=zh-CN&embed=1&model=missing/bar-7b');
  assert.equal(await embed.page.textContent('[data-role="answer"]'), '没有结果：无法加载 missing/bar-7b。');
  await embed.context.close();
});

test('?lang= takes zh, zh-cn and zh-Hans for zh-CN; the address then says zh-CN', async () => {
  for (const lang of ['zh', 'zh-cn', 'zh-Hans']) {
    const { page, context, errors } = await openPage(env, 'lang=' + lang, { locale: 'en-US' });
    assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN', lang);
    assert.equal(await page.isVisible('[data-role="ignored-params"]'), false, lang);
    await addressIs(page, '?lang=zh-CN');
    assert.deepEqual(errors, []);
    await context.close();
  }
  const tw = await openPage(env, 'lang=zh-TW', { locale: 'en-US' });
  assert.equal(await tw.page.getAttribute('html', 'lang'), 'en');
  assert.equal(await ignoredText(tw.page), 'Ignored URL parameters (unknown or invalid): lang=zh-TW');
  await tw.context.close();
});

test('a parameter beyond the model\'s limits is reported when the page corrects it', async () => {
  const { page, context } = await openPage(env, 'model=Qwen/Qwen3-8B&ctx=1048576&gpu=no-such-gpu&tp=3');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  // A context past the model's limit is the link's question, kept: the answer says vLLM
  // refuses it and how much memory alone would hold (issue 9, item 4), so it is not "corrected".
  assert.equal(Number((await page.inputValue('#ctl-ctx')).replace(/,/g, '')), 1048576);
  assert.match(await page.textContent('[data-role="verdict"]'), /^vLLM refuses 1M tokens on NVIDIA GeForce RTX 4090 24 GB: the model's limit is 40,960 tokens/);
  const text = await page.textContent('[data-role="ignored-params"]');
  assert.match(text, /gpu=no-such-gpu/);
  assert.match(text, /tp=3/);
  assert.doesNotMatch(text, /ctx=/);
  await context.close();
});

test('a GPU named as the CLI\'s --gpu takes it is that GPU, and the address then carries its id', async () => {
  for (const [name, id, verdict] of [
    ['h100', 'h100-sxm', 'Fits on NVIDIA H100 SXM5 80GB: one sequence of 30,000 tokens needs 24.08 GiB of 72.88 GiB usable'],
    ['RTX 4090', 'rtx-4090', 'Fits on NVIDIA GeForce RTX 4090 24 GB: one sequence of 30,000 tokens needs 21.61 GiB of 21.75 GiB usable'],
  ]) {
    const { page, context, errors } = await openPage(env, new URLSearchParams({ model: 'Qwen/Qwen3-8B', gpu: name, ctx: '30000', embed: '1' }).toString());
    assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
    assert.equal(await page.inputValue('#ctl-gpu'), id);
    assert.equal(await page.textContent('[data-role="verdict"]'), verdict);
    assert.equal(await page.isVisible('[data-role="ignored-params"]'), false);
    // rtx-4090 is the default GPU: the address leaves it out (written a frame or a quiet
    // moment after the answer: main.js writeUrl).
    await page.waitForFunction((want) => new URL(location.href).searchParams.get('gpu') === want, id === 'rtx-4090' ? null : id);
    assert.equal(new URL(page.url()).searchParams.get('ctx'), '30000');
    assert.deepEqual(errors, []);
    await context.close();
  }
});

test('Copy embed code gives an iframe for this view with theme, panels and language', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B&ctx=8192&seqs=2', { clipboard: true });
  await page.click('.embed-options summary');
  await page.selectOption('#embed-theme', 'dark');
  await page.selectOption('#embed-lang', 'zh-CN');
  await page.check('input[name="embed-panel"][value="context"]');
  await page.uncheck('input[name="embed-panel"][value="controls"]');
  const snippet = await clipboardAfter(page, '[data-action="copy-embed"]');
  const parsed = await page.evaluate((html) => {
    const doc = new DOMParser().parseFromString(html, 'text/html');
    const f = doc.querySelector('iframe');
    const s = doc.querySelector('script');
    return { src: f.getAttribute('src'), sandbox: f.getAttribute('sandbox'), allow: f.getAttribute('allow'), title: f.getAttribute('title'), style: f.getAttribute('style'), script: s?.getAttribute('src'), count: doc.body.children.length + doc.head.children.length };
  }, snippet);
  const src = new URL(parsed.src);
  assert.equal(src.origin + src.pathname, env.site.url);
  assert.deepEqual(Object.fromEntries(src.searchParams), {
    model: 'Qwen/Qwen3-8B', ctx: '8192', seqs: '2', embed: '1', theme: 'dark', panels: 'bar,metrics,context', lang: 'zh-CN',
  });
  for (const token of ['allow-scripts', 'allow-same-origin', 'allow-popups']) assert.ok(parsed.sandbox.split(' ').includes(token), token);
  // The card's copy buttons use the Clipboard API, which a frame has only when allowed.
  assert.equal(parsed.allow, 'clipboard-write');
  assert.equal(parsed.script, env.site.url + 'embed-host.js');
  assert.equal(parsed.title, 'kvbudget: GPU memory budget of Qwen/Qwen3-8B');
  assert.match(parsed.style, /max-width:640px/);
  assert.equal(parsed.count, 2, 'an iframe and a script, nothing else');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the embed URL shows the same numbers as the full page, in a 640 px column', async () => {
  const view = 'model=Qwen/Qwen3-8B&ctx=8192&seqs=2&gpuCount=2&tp=2';
  const full = await openPage(env, view);
  const expected = await metrics(full.page);
  await full.context.close();

  const { page, context, errors } = await openPage(env, view + '&embed=1&theme=dark&panels=controls,bar,metrics,context', { viewport: { width: 640, height: 800 } });
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.deepEqual(await metrics(page), expected);
  assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
  assert.equal(await page.isVisible('#sec-context'), true);
  assert.equal(await page.isVisible('#sec-chart'), false);
  assert.equal(await page.isVisible('#model-input'), false);
  assert.equal(await page.isVisible('.bar'), true);
  // Key controls always; secondary ones only when this view changed them.
  for (const id of ['ctl-gpu', 'ctl-engine', 'ctl-kv', 'ctl-ctx', 'ctl-seqs', 'ctl-gpu-count', 'ctl-tp']) assert.equal(await page.isVisible('#' + id), true, id);
  for (const id of ['ctl-util', 'ctl-weights', 'ctl-pp']) assert.equal(await page.isVisible('#' + id), false, id);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 640), 'no horizontal overflow at 640 px');
  const link = page.locator('[data-role="full-page"]');
  assert.equal(await link.getAttribute('target'), '_blank');
  const href = new URL(await link.getAttribute('href'));
  assert.deepEqual(Object.fromEntries(href.searchParams), { model: 'Qwen/Qwen3-8B', ctx: '8192', seqs: '2', gpuCount: '2', tp: '2' });
  assert.deepEqual(errors, []);
  await context.close();
});

test('a view from a pasted config.json says the link cannot carry the config', async () => {
  const { page, context, errors } = await openPage(env, 'ctx=4096', { clipboard: true });
  assert.equal(await page.isVisible('[data-role="share-paste-note"]'), false);
  const config = JSON.stringify({ architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 2048, num_hidden_layers: 4, num_attention_heads: 16, num_key_value_heads: 4, intermediate_size: 8192, vocab_size: 32000, max_position_embeddings: 8192, torch_dtype: 'bfloat16' });
  await page.click('details.paste summary');
  await page.fill('#paste-config', config);
  await page.click('details.paste button');
  await page.waitForFunction(() => !document.querySelector('[data-role="share-paste-note"]').hidden);
  assert.equal(await page.textContent('[data-role="share-paste-note"]'), 'A link cannot carry a pasted config.json: it opens the default model with these settings.');
  const link = new URL(await clipboardAfter(page, '[data-action="copy-link"]'));
  assert.deepEqual(Object.fromEntries(link.searchParams), { ctx: '4096' });
  assert.deepEqual(errors, []);
  await context.close();
});

// vLLM --enable-expert-parallel (state ep, URL ep=1): Qwen3-30B-A3B-FP8 on 4 GPUs is refused at start-up (768 / 4 =
// 192 is off fp8's 128-block grid), and the answer offers expert parallelism, sized; the control turns it on, the
// command carries the flag, and the copied link reproduces it. A dense model has no such control.
test('expert parallelism: offered for a refused fp8 MoE, its control and ep=1 round-trip', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-30B-A3B-FP8&gpuCount=4', { clipboard: true });
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await page.isVisible('#ctl-ep'), true);
  assert.equal(await page.inputValue('#ctl-ep'), '0');
  assert.match(await page.textContent('[data-role="verdict-advice"]'), /--enable-expert-parallel.*40,960/);
  // The advice's button sets the control, as choosing it does.
  await page.click('[data-role="advice-apply"]');
  await waitSettled(page);
  assert.equal(await page.inputValue('#ctl-ep'), '1');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.match(await page.textContent('[data-role="command"]'), /--tensor-parallel-size 4 --enable-expert-parallel$/);
  const m = await metrics(page);
  assert.equal(m['max-context'], '40960');
  const link = await clipboardAfter(page, '[data-action="copy-link"]');
  assert.equal(new URL(link).searchParams.get('ep'), '1');
  const fresh = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const p2 = await fresh.newPage();
  await p2.goto(link);
  await waitSettled(p2);
  assert.deepEqual(await metrics(p2), m);
  assert.equal(await p2.inputValue('#ctl-ep'), '1');
  await fresh.close();
  // Another engine's link leaves vLLM's flag out (the core refuses it there); back on vLLM it is on again.
  await change(page, '#ctl-engine', 'llamacpp');
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('ep'));
  await change(page, '#ctl-engine', 'vllm');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('ep') === '1');
  // A dense model on 4 GPUs: nothing to place, no control.
  await page.fill('#model-input', 'Qwen/Qwen3-8B');
  await page.press('#model-input', 'Enter');
  await page.waitForFunction(() => document.querySelector('[data-role="model-name"]')?.textContent === 'Qwen/Qwen3-8B');
  await waitSettled(page);
  await change(page, '#ctl-ep', '0');
  assert.equal(await page.isVisible('#ctl-ep'), false);
  assert.deepEqual(errors, []);
  await context.close();
});

// vLLM --pipeline-parallel-size (state pp, URL pp): Laguna-XS.2-FP8 on 8 H100s is refused at start-up (TP 8 cuts its
// fp8 blocks), and the answer names the same GPUs as TP 4 x 2 pipeline stages; set on the page, that is what the CLI
// computes for -tp 4 -pp 2, the command carries both flags and the copied link reproduces it.
test('pipeline parallelism: the advised TP x PP set on the page, as the CLI computes it, and pp round-trips', async () => {
  const cfg = path.join(fixturesDir, 'poolside--Laguna-XS.2-FP8.json');
  const { page, context, errors } = await openPage(env, 'model=poolside/Laguna-XS.2-FP8&gpu=h100&gpuCount=8&ctx=32768', { clipboard: true });
  assert.equal(await page.isVisible('#ctl-pp'), true);
  assert.equal(await page.inputValue('#ctl-pp'), '1');
  assert.match(await page.textContent('[data-role="verdict-advice"]'), /--tensor-parallel-size 4 --pipeline-parallel-size 2 .*262,144/);
  // The advice's button sets both controls.
  await page.click('[data-role="advice-apply"]');
  await waitSettled(page);
  assert.equal(await page.inputValue('#ctl-tp'), '4');
  assert.equal(await page.inputValue('#ctl-pp'), '2');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  assert.match(await page.textContent('[data-role="command"]'), /--tensor-parallel-size 4 --pipeline-parallel-size 2 --trust-remote-code$/);
  const cli = cliJson(['budget', cfg, '--gpu', 'h100', '--gpu-count', '8', '-tp', '4', '-pp', '2', '--max-model-len', '32768']);
  const m = await metrics(page);
  assert.deepEqual(m, Object.fromEntries(Object.entries(cli.metrics).map(([k, v]) => [k, String(v)])));
  assert.equal(m['max-context'], '262144');
  assert.equal(await page.locator('[data-role="verdict-advice"]').count(), 0);
  const link = new URL(await clipboardAfter(page, '[data-action="copy-link"]'));
  assert.equal(link.searchParams.get('tp'), '4');
  assert.equal(link.searchParams.get('pp'), '2');
  const fresh = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const p2 = await fresh.newPage();
  await p2.goto(link.href);
  await waitSettled(p2);
  assert.deepEqual(await metrics(p2), m);
  assert.equal(await p2.inputValue('#ctl-pp'), '2');
  await fresh.close();
  // "All GPUs" with stages is the GPUs over the stages (the core's tensor_parallel_size 0): 8 / 2.
  await change(page, '#ctl-tp', '0');
  assert.equal(await page.textContent('#ctl-tp option[value="0"]'), 'GPUs \u00f7 2');
  assert.match(await page.textContent('[data-role="command"]'), /--tensor-parallel-size 4 --pipeline-parallel-size 2 --trust-remote-code$/);
  // More stages than GPUs over TP: the GPU count follows, visibly.
  await change(page, '#ctl-pp', '16');
  assert.equal(await page.inputValue('#ctl-gpu-count'), '16');
  // llama.cpp places whole layers on each GPU by itself: neither control (they would do nothing there), and its link
  // leaves vLLM's TP and stages out; back on vLLM they are the view's again.
  await change(page, '#ctl-tp', '1');
  await change(page, '#ctl-engine', 'llamacpp');
  assert.equal(await page.isVisible('#ctl-pp'), false);
  assert.equal(await page.isVisible('#ctl-tp'), false);
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('pp') && !new URL(location.href).searchParams.has('tp'));
  await change(page, '#ctl-engine', 'vllm');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('pp') === '16' && new URL(location.href).searchParams.get('tp') === '1');
  assert.deepEqual(errors, []);
  await context.close();
});

// A stage count the select does not list (within the core's limits) keeps an option of its own; one past them is ignored
// with the range.
test('pipeline parallelism: a link\'s own stage count, and one out of range', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-32B&gpu=h100&gpuCount=5&pp=5');
  assert.equal(await page.inputValue('#ctl-pp'), '5');
  assert.match(await page.textContent('[data-role="command"]'), /--max-model-len 32768 --pipeline-parallel-size 5$/);
  const cli = cliJson(['budget', path.join(fixturesDir, 'Qwen--Qwen3-32B.json'), '--gpu', 'h100', '--gpu-count', '5', '-pp', '5', '--max-model-len', '32768']);
  assert.deepEqual(await metrics(page), Object.fromEntries(Object.entries(cli.metrics).map(([k, v]) => [k, String(v)])));
  const { page: p2, context: c2 } = await openPage(env, 'model=Qwen/Qwen3-32B&gpuCount=2&pp=5000');
  assert.equal(await p2.inputValue('#ctl-pp'), '1');
  assert.match(await ignoredText(p2), /pp=5000/);
  assert.deepEqual(errors, []);
  await c2.close();
  await context.close();
});

// The same for tensor parallelism: a CLI's -tp 6 reproduces on the page instead of becoming "all GPUs", and the page
// answers as the CLI does. Qwen2-VL-2B's text model takes TP 6 (12 heads, 2 KV heads replicated), but vLLM splits its
// vision encoder's 16 heads (Qwen2VLVisionConfig's default) over the ranks too, and stops there.
test('tensor parallelism: a link\'s own TP count is kept, and the page answers as the CLI does', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen2-VL-2B-Instruct-AWQ&gpu=h100&gpuCount=6&tp=6');
  assert.equal(await page.inputValue('#ctl-tp'), '6');
  assert.deepEqual(await page.$$eval('#ctl-tp option', (os) => os.map((o) => o.value)), ['0', '1', '2', '4', '6', '8', '16', '32']);
  const reason = 'AssertionError: 16 is not divisible by 6 (vLLM splits the vision encoder\'s 16 attention heads over tensor parallel size 6)';
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'refused');
  assert.equal(await page.textContent('[data-role="verdict-reason"]'), reason);
  const cli = spawnSync(cliPath, ['budget', path.join(fixturesDir, 'Qwen--Qwen2-VL-2B-Instruct-AWQ.json'), '--gpu', 'h100', '--gpu-count', '6', '-tp', '6', '--max-model-len', '32768'], { encoding: 'utf8' });
  assert.equal(cli.stderr.trim(), `kvbudget: error: ${reason}`);
  assert.equal(await page.isVisible('[data-role="ignored-params"]'), false);
  await page.waitForFunction(() => new URL(location.href).searchParams.get('tp') === '6');
  assert.deepEqual(errors, []);
  await context.close();
});
