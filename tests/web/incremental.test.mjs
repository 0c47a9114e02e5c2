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

// A drag fires several input events in one frame: the first is answered at once, the rest
// wait for the next frame, which answers the latest value only; the page never ends on a
// stale answer, and the address follows once the slider is still.
test('a drag of many input events in one frame ends on the last value', async () => {
  const { page, context, errors } = await openPage(env, '');
  await page.waitForSelector('#sec-chart .uplot');
  const answers = await page.evaluate(async () => {
    const slider = document.querySelector('#ctl-ctx-slider');
    const seen = [];
    const watch = new MutationObserver(() => seen.push(document.querySelector('[data-metric="kv-bytes-total"]').dataset.value));
    watch.observe(document.querySelector('.results-body'), { subtree: true, attributes: true, attributeFilter: ['data-value'] });
    for (const v of ['3', '4', '5', '6']) {
      slider.value = v;
      slider.dispatchEvent(new Event('input', { bubbles: true }));
    }
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await new Promise((r) => setTimeout(r, 0));
    watch.disconnect();
    return { seen: [...new Set(seen)], ctx: document.querySelector('#ctl-ctx').value };
  });
  // Stops from 256: index 3 is 2,048 tokens, 6 is 16,384. Two answers: the first event's, then the last one's.
  assert.equal(answers.ctx, '16384');
  assert.deepEqual(answers.seen, [String(2048 * 131072), String(16384 * 131072)]);
  await page.waitForFunction(() => new URL(location.href).searchParams.get('ctx') === '16384');
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
