// Incremental rendering (issue 13): a control change patches the live results instead of
// rebuilding them (web/src/dom.js patchChildren). The nodes stay, their values are the
// new answer's, and kept buttons act on the new answer (their listeners are carried over).
// The chart library and the simulator view arrive after the first answer (web/src/lazy.js).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAll, openPage, metrics, clipboardAfter } from './harness.mjs';

let env;
before(async () => {
  env = await startAll();
});
after(async () => {
  await env?.close();
});

test('a slider step keeps the result nodes and shows the new answer', async () => {
  const { page, context, errors } = await openPage(env, '', { clipboard: true });
  await page.waitForSelector('#sec-chart .uplot');
  await page.evaluate(() => {
    window.__kept = [...document.querySelectorAll('[data-metric], #sec-chart .chart, [data-role="command"], table[data-table="context"]')];
  });
  const first = await metrics(page);
  assert.equal(first['kv-bytes-total'], String(32768 * 131072));
  await page.focus('#ctl-ctx-slider');
  // Down a step: the model still fits, so the engine section keeps its command (a step up
  // past the 24 GB card's limit would replace it with vLLM's refusal).
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction((v) => document.querySelector('[data-metric="kv-bytes-total"]').dataset.value !== v, first['kv-bytes-total']);
  const ctx = Number(await page.inputValue('#ctl-ctx'));
  assert.ok(ctx < 32768, `the slider stepped down to ${ctx}`);
  assert.equal((await metrics(page))['kv-bytes-total'], String(ctx * 131072));
  const kept = await page.evaluate(() => window.__kept.every((el) => el.isConnected));
  assert.equal(kept, true, 'the same nodes show the new values');
  assert.equal(await page.$$eval('.uplot', (u) => u.length), 1, 'one chart, updated in place');
  // The copy button was kept; it copies the command of the new answer.
  const copied = await clipboardAfter(page, '#sec-engine button.copy');
  assert.match(copied, new RegExp(`--max-model-len ${ctx}\\b`));
  assert.equal(copied, await page.textContent('[data-role="command"]'));
  assert.deepEqual(errors, []);
  await context.close();
});

test('the simulator view and the chart arrive after the first answer', async () => {
  const { page, context, errors } = await openPage(env, '');
  await page.waitForSelector('#sim [data-action="sim-run"]');
  await page.waitForSelector('#sec-chart .uplot');
  assert.equal(await page.$$eval('[data-lazy="sim"]', (p) => p.length), 0, 'the placeholder is replaced');
  assert.deepEqual(errors, []);
  await context.close();
});
