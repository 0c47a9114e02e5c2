// The default link's first answer comes from the build (issue 13, web/src/prerender.js): it is
// on screen before the calculator module has arrived, and the module takes over when it does.
// The static server holds kvbudget-calc.wasm until a test lets it go, so "before" is certain.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAll, openPage, metrics } from './harness.mjs';

let env;
let release = () => {};
let held = Promise.resolve();
let wasmAsked = 0;
function holdWasm() {
  held = new Promise((r) => (release = r));
}

before(async () => {
  env = await startAll({
    hold: (p) => {
      if (p !== '/kvbudget-calc.wasm') return null;
      wasmAsked++;
      return held;
    },
  });
});
after(async () => {
  release();
  await env?.close();
});

// A page opened while the module is held: waits for its first answer only.
async function openHeld(query = '', options = {}) {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(env.site.url + query);
  return { page, context, errors };
}
const bodyData = (page) => page.evaluate(() => ({ ...document.body.dataset }));

test('the default link is answered before the calculator module arrives, with the module\'s numbers', async () => {
  // The module's own answer for the default settings, from a page that has it.
  release();
  const live = await openPage(env, '');
  const expected = await metrics(live.page);
  const verdict = await live.page.textContent('[data-role="verdict"]');
  await live.context.close();

  holdWasm();
  const { page, context, errors } = await openHeld('');
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  assert.deepEqual(await bodyData(page), { state: 'ready', core: 'loading' });
  assert.deepEqual(await metrics(page), expected);
  assert.equal(await page.textContent('[data-role="verdict"]'), verdict);
  assert.equal(expected['max-context'], '34752');
  release();
  await page.waitForFunction(() => document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.deepEqual(await bodyData(page), { state: 'ready', core: 'live' });
  assert.deepEqual(await metrics(page), expected);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the build\'s answer in another language: the words are the page\'s, from the message codes', async () => {
  holdWasm();
  const { page, context, errors } = await openHeld('?lang=zh-CN');
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  assert.equal((await bodyData(page)).core, 'loading');
  assert.match(await page.textContent('[data-role="verdict"]'), /[\u4e00-\u9fff]/);
  assert.equal((await metrics(page))['max-context'], '34752');
  release();
  await page.waitForFunction(() => document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.deepEqual(errors, []);
  await context.close();
});

test('controls changed before the module arrives: "computing", then applied when it arrives, none lost', async () => {
  // What the module answers for those settings, read from a link that sets them.
  release();
  const want = await openPage(env, 'seqs=4&ctx=65536&engine=vllm');
  const expected = await metrics(want.page);
  await want.context.close();

  holdWasm();
  const { page, context, errors } = await openHeld('');
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  const before = await metrics(page);
  // A number field (the page's own state) and a context typed as people write it (the core reads "64K").
  await page.fill('#ctl-seqs', '4');
  await page.dispatchEvent('#ctl-seqs', 'change');
  await page.fill('#ctl-ctx', '64K');
  await page.dispatchEvent('#ctl-ctx', 'change');
  assert.deepEqual(await bodyData(page), { state: 'computing', core: 'loading' });
  assert.equal(await page.textContent('[data-role="status"]'), 'Computing…');
  assert.equal(await page.evaluate(() => document.querySelector('.answer-wrap').classList.contains('stale')), true);
  // The numbers on screen are still the old settings' (marked stale), not a guess.
  assert.deepEqual(await metrics(page), before);
  release();
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.deepEqual(await metrics(page), expected);
  assert.notDeepEqual(expected, before);
  assert.equal(await page.inputValue('#ctl-ctx'), '65536');
  assert.equal(await page.inputValue('#ctl-seqs'), '4');
  assert.equal(await page.textContent('[data-role="status"]'), '');
  assert.equal(await page.evaluate(() => document.querySelector('.answer-wrap').classList.contains('stale')), false);
  await page.waitForFunction(() => /ctx=65536/.test(location.search) && /seqs=4/.test(location.search), null, { timeout: 5000 });
  assert.deepEqual(errors, []);
  await context.close();
});

test('a link with presets waits for the module (its answer is not the build\'s) and asks for it at once', async () => {
  holdWasm();
  const asked = wasmAsked;
  const { page, context, errors } = await openHeld('?embed=1&model=Qwen/Qwen3-8B&ctx=32768');
  for (let i = 0; i < 300 && wasmAsked === asked; i++) await new Promise((r) => setTimeout(r, 50));
  await page.waitForTimeout(300);
  assert.equal(wasmAsked, asked + 1, 'the module was asked for while the page loaded');
  assert.equal((await bodyData(page)).state, 'loading');
  release();
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  assert.equal((await bodyData(page)).core, 'live');
  assert.match(await page.textContent('body'), /Qwen3-8B/);
  assert.deepEqual(errors, []);
  await context.close();
});
