// Issue 9, items 3 and 5: the context field takes contexts as people write them, the
// slider stops where people stop (and ends at the model's maximum); a typed gated id
// whose config is bundled loads the bundled copy; an id without its organisation gets
// the catalog's matches.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAll, openPage, metrics } from './harness.mjs';

let env;
before(async () => {
  env = await startAll({ refuse: ['meta-llama/Llama-3.1-70B'] });
});
after(async () => {
  await env?.close();
});

async function typeContext(page, text) {
  const before = page.url();
  await page.fill('#ctl-ctx', text);
  await page.press('#ctl-ctx', 'Enter');
  await page.waitForFunction((b) => location.href !== b || document.body.dataset.state === 'error', before, { timeout: 5000 }).catch(() => {});
  return new URL(page.url()).searchParams.get('ctx');
}

// 128K context = 131,072 tokens, as model cards and engines count it.
const SPELLINGS = [['128k', '131072'], ['128K', '131072'], ['1M', '1048576'], ['32,768', null], ['131072', '131072'], [' 64 K ', '65536'], ['8192', '8192']];

test('every accepted context spelling', async () => {
  const { page, context, errors } = await openPage(env, 'model=meta-llama/Llama-3.1-8B&ctx=4096');
  for (const [text, param] of SPELLINGS) {
    if (param === null) {
      // 32,768 is the default: the URL drops it.
      await page.fill('#ctl-ctx', text);
      await page.press('#ctl-ctx', 'Enter');
      await page.waitForFunction(() => !new URL(location.href).searchParams.has('ctx'));
      assert.equal(await page.inputValue('#ctl-ctx'), '32768', text);
      continue;
    }
    assert.equal(await typeContext(page, text), param, text);
    assert.equal(await page.inputValue('#ctl-ctx'), param, `${text}: the field shows the tokens`);
    assert.equal(await page.evaluate(() => document.getElementById('ctl-ctx').validationMessage), '');
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('a context that is not one says how to write it', async () => {
  const { page, context } = await openPage(env, 'ctx=4096');
  for (const text of ['1.5k', '128KB', 'lots']) {
    await page.fill('#ctl-ctx', text);
    await page.press('#ctl-ctx', 'Enter');
    const msg = await page.evaluate(() => document.getElementById('ctl-ctx').validationMessage);
    assert.equal(msg, `Context length: “${text}” is not a context length; write tokens as 32768, 32,768, 32K (= 32,768) or 1M (= 1,048,576)`);
    assert.equal(new URL(page.url()).searchParams.get('ctx'), '4096', `${text} leaves the context as it was`);
  }
  // 0 is the CLI's "the model's limit"; the field asks for tokens.
  await page.fill('#ctl-ctx', '0');
  await page.press('#ctl-ctx', 'Enter');
  assert.equal(await page.evaluate(() => document.getElementById('ctl-ctx').validationMessage),
    'Context length must be a whole number from 1 to 1,073,741,824, got 0');
  assert.equal(new URL(page.url()).searchParams.get('ctx'), '4096', '0 leaves the context as it was');
  // Past the range the field says the same range beside it (the core's refusal counts from its 0).
  await page.fill('#ctl-ctx', '99999999999999');
  await page.press('#ctl-ctx', 'Enter');
  assert.equal(await page.evaluate(() => document.getElementById('ctl-ctx').validationMessage),
    'Context length must be a whole number from 1 to 1,073,741,824, got 99999999999999');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready', 'the answer shown stays');
  assert.equal(new URL(page.url()).searchParams.get('ctx'), '4096', 'a huge context leaves the context as it was');
  await context.close();
});

test('the slider stops at 4K, 8K, 16K, 32K ... and ends at the model maximum', async () => {
  const { page, context } = await openPage(env, 'model=Qwen/Qwen3-8B&ctx=4096');
  const slider = page.locator('#ctl-ctx-slider');
  await slider.focus();
  const seen = [];
  for (let i = 0; i < 4; i++) {
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction((n) => document.getElementById('ctl-ctx').value !== String(n), seen.at(-1) ?? 4096);
    seen.push(Number(await page.inputValue('#ctl-ctx')));
  }
  assert.deepEqual(seen, [8192, 16384, 32768, 40960]);
  await page.keyboard.press('Home');
  await page.waitForFunction(() => document.getElementById('ctl-ctx').value === '256');
  await page.keyboard.press('End');
  await page.waitForFunction(() => document.getElementById('ctl-ctx').value === '40960');
  await page.waitForFunction(() => new URL(location.href).searchParams.get('ctx') === '40960');
  assert.equal(await slider.getAttribute('aria-valuetext'), '40,960 tokens');
  assert.match(await page.textContent('#ctl-ctx-max'), /40,960 tokens/);
  // Llama 3.1: 128K is a stop and the end.
  await page.goto(env.site.url + '?model=meta-llama/Llama-3.1-8B&ctx=65536');
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  await page.locator('#ctl-ctx-slider').focus();
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.getElementById('ctl-ctx').value === '131072');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.inputValue('#ctl-ctx'), '131072', 'nothing beyond the maximum');
  await context.close();
});

test('a typed gated id whose config is bundled: the bundled copy, and the page says so', async () => {
  const { page, context } = await openPage(env, '');
  await page.fill('#model-input', 'meta-llama/Llama-3.1-70B');
  await page.press('#model-input', 'Enter');
  await page.waitForFunction(() => document.body.dataset.state !== 'loading' && /70B/.test(document.querySelector('[data-role="model-name"]')?.textContent || ''), null, { timeout: 15000 });
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
  assert.equal(await page.isVisible('[data-role="error"]'), false);
  assert.equal(await page.textContent('[data-role="source"]'),
    'The Hub refused meta-llama/Llama-3.1-70B (HTTP 401: gated or private without a token); showing the bundled copy of its config.json, the same file.');
  // The hub was asked (and refused) first.
  assert.ok(env.hub.requests.some((r) => r.path.includes('meta-llama/Llama-3.1-70B')));
  // Same numbers as the ?model= link, which uses the bundled copy directly.
  const typed = await metrics(page);
  const { page: linked, context: c2 } = await openPage(env, 'model=meta-llama/Llama-3.1-70B');
  assert.deepEqual(await metrics(linked), typed);
  await c2.close();
  await context.close();
});

test('an id without its organisation suggests the catalog matches', async () => {
  const { page, context } = await openPage(env, '');
  const asked = env.hub.requests.length;
  await page.fill('#model-input', 'Qwen3-8B');
  await page.press('#model-input', 'Enter');
  await page.waitForSelector('[data-role="suggestions"]:not([hidden])');
  const ids = await page.$$eval('[data-role="suggestions"] button', (bs) => bs.map((b) => b.dataset.id));
  assert.equal(ids[0], 'Qwen/Qwen3-8B');
  assert.equal(env.hub.requests.length, asked, 'no request for an exact catalog name');
  await page.click('[data-role="suggestions"] button[data-id="Qwen/Qwen3-8B"]');
  await page.waitForFunction(() => document.querySelector('[data-role="model-name"]')?.textContent === 'Qwen/Qwen3-8B');
  assert.equal(await page.isVisible('[data-role="suggestions"]'), false);
  // The address follows after the frame (main.js writeUrl): read at once, it raced the frame
  // under a loaded CI.
  await page.waitForURL((u) => u.searchParams.get('model') === 'Qwen/Qwen3-8B', { timeout: 15000 });
  await context.close();
});
