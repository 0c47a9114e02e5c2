// Incremental rendering (issue 13): a control change patches the live results instead of
// rebuilding them (web/src/dom.js patchChildren). The nodes stay, their values are the
// new answer's, and kept buttons act on the new answer (their listeners are carried over).
// The chart library and the simulator view arrive after the first answer (web/src/lazy.js).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startAll, openPage, metrics, clipboardAfter, root } from './harness.mjs';

const cliPath = process.env.KVB_CLI || path.join(root, 'build/kvbudget');
// The page's default model, GPU and engine (web/src/state.js defaultState).
const config = path.join(root, 'tests/fixtures/configs/meta-llama--Llama-3.1-8B.json');
function cli(args) {
  return JSON.parse(execFileSync(cliPath, ['budget', config, '--gpu', 'rtx-4090', ...args, '--json'], { encoding: 'utf8' }));
}

// The numbers of a row as its cells carry them (a cell without a number has no data-value).
const nums = (xs) => xs.filter((x) => typeof x === 'number').map(String);

// Every value-bearing node of the results as [what, value], in page order.
async function shownValues(page) {
  return page.evaluate(() => ({
    legend: [...document.querySelectorAll('.legend li')].map((li) => [li.dataset.part, li.dataset.value]),
    tables: Object.fromEntries([...document.querySelectorAll('table[data-table]')].map((t) => [t.dataset.table,
      [...t.tBodies[0].rows].map((r) => [...r.querySelectorAll('td[data-value]')].map((td) => td.dataset.value))])),
    command: document.querySelector('[data-role="command"]')?.textContent,
    log: document.querySelector('[data-role="engine-log"]')?.textContent,
  }));
}

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
  // The cards off screen follow just after the step's frame: ready once they have.
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
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

// The fast path (dom.js patchTree): between 4,096 and 8,192 tokens the answer has the same
// shape (the same sections, rows and notes), so a step rewrites values only: every element
// and every value's text node of the results and the answer card is the one that was there,
// and what they show is the CLI's JSON for the new context.
test('a slider step with the same shape replaces no node and shows the CLI\'s numbers', async () => {
  const { page, context, errors } = await openPage(env, 'ctx=4096');
  await page.waitForSelector('#sec-chart .uplot');
  const before4096 = await metrics(page);
  assert.equal(before4096['kv-bytes-total'], String(cli(['--max-model-len', '4096']).metrics['kv-bytes-total']));
  await page.evaluate(() => {
    window.__nodes = [...document.querySelectorAll('.results-body *, [data-role="answer"] *')];
    window.__texts = [...document.querySelectorAll('[data-metric], td[data-value], .legend li')].map((el) => el.lastChild);
  });
  await page.focus('#ctl-ctx-slider');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.querySelector('#ctl-ctx').value === '8192' && document.body.dataset.state === 'ready');
  await page.waitForFunction((v) => document.querySelector('[data-metric="kv-bytes-total"]').dataset.value !== v, before4096['kv-bytes-total']);
  const kept = await page.evaluate(() => {
    const now = [...document.querySelectorAll('.results-body *, [data-role="answer"] *')];
    const texts = [...document.querySelectorAll('[data-metric], td[data-value], .legend li')].map((el) => el.lastChild);
    return { nodes: now.length === window.__nodes.length && now.every((el, i) => el === window.__nodes[i]), count: now.length,
      texts: texts.length === window.__texts.length && texts.every((n, i) => n === window.__texts[i]) };
  });
  assert.ok(kept.count > 200, `${kept.count} result nodes`);
  assert.equal(kept.nodes, true, 'no element of the results or the answer card was replaced');
  assert.equal(kept.texts, true, 'the values\' text nodes were written in place');

  const want = cli(['--max-model-len', '8192']);
  const m = await metrics(page);
  for (const [name, value] of Object.entries(want.metrics)) if (name in m) assert.equal(m[name], value === null ? '' : String(value), name);
  assert.equal(m['kv-bytes-total'], String(8192 * 131072));
  const shown = await shownValues(page);
  const g = want.budget.per_gpu;
  assert.deepEqual(shown.legend.slice(0, 4), [['weights', String(g.weights_bytes)], ['kv', String(g.kv_bytes)], ['activations', String(g.activation_bytes)], ['overhead', String(g.overhead_bytes)]]);
  assert.deepEqual(shown.tables.context, want.kv.context_table.map((r) => nums([r.bytes_per_seq, r.bytes_total, r.vs_weights])));
  assert.deepEqual(shown.tables.compare, want.kv.head_variants.map((r) => nums([r.kv_heads, r.bytes_per_token, r.bytes_total])));
  assert.deepEqual(shown.tables.ladder, want.kv.ladder.map((r) => nums([r.bytes_per_token, r.kv_bytes])));
  assert.equal(shown.command, want.budget.command);
  assert.equal(shown.log, want.budget.log_lines.join('\n'));
  assert.match(shown.command, /--max-model-len 8192\b/);

  // A step that changes the shape (16,384 tokens is a row of its own in the context table):
  // the new row is built, the rest patched, and the numbers are still the CLI's.
  const metricNode = await page.evaluate(() => (window.__metric = document.querySelector('[data-metric="kv-bytes-total"]')) && true);
  assert.ok(metricNode);
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.querySelector('#ctl-ctx').value === '16384' && document.body.dataset.state === 'ready');
  await page.waitForFunction(() => document.querySelector('[data-metric="kv-bytes-total"]').dataset.value === String(16384 * 131072));
  assert.equal(await page.evaluate(() => window.__metric.isConnected), true, 'an unchanged part keeps its nodes');
  const want16 = cli(['--max-model-len', '16384']);
  const shown16 = await shownValues(page);
  assert.deepEqual(shown16.tables.context, want16.kv.context_table.map((r) => nums([r.bytes_per_seq, r.bytes_total, r.vs_weights])));
  assert.deepEqual(shown16.tables.ladder, want16.kv.ladder.map((r) => nums([r.bytes_per_token, r.kv_bytes])));
  assert.equal(shown16.command, want16.budget.command);
  assert.deepEqual(errors, []);
  await context.close();
});

// A step is answered in its own frame on what the screen shows (the answer card, the result
// cards in view); the cards off screen are laid out and painted just after that frame, and
// data-state is "updating" until they show the same answer (web/src/render.js, main.js
// finishStep). Bench's viewport, the slider focused: the numbers card is above the screen
// and the ladder below it.
test('a slider step renders the cards off screen just after its frame, then data-state is ready', async () => {
  const { page, context, errors } = await openPage(env, '', { viewport: { width: 1280, height: 720 } });
  await page.waitForSelector('#sec-chart .uplot');
  await page.focus('#ctl-ctx-slider');
  // The cards' places are known once an IntersectionObserver has seen the scrolled page.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0)))));
  const before = await page.evaluate(() => {
    const offScreen = (sel) => {
      const r = document.querySelector(sel).getBoundingClientRect();
      return r.bottom < 0 || r.top > innerHeight;
    };
    window.__inStep = null;
    // After the page's own input listener (on the slider): what its frame will paint.
    window.addEventListener('input', () => {
      window.__inStep = {
        state: document.body.dataset.state,
        maxConcurrency: document.querySelector('[data-role="answer"] [data-metric="max-concurrency"]').dataset.value,
        kvTotal: document.querySelector('[data-metric="kv-bytes-total"]').dataset.value,
        ladder: document.querySelector('[data-table="ladder"] tr.current td[data-value]').nextElementSibling.dataset.value,
      };
    }, { once: true });
    return { numbersOff: offScreen('.numbers'), ladderOff: offScreen('#sec-ladder'), answerOn: !offScreen('[data-role="answer"]') };
  });
  assert.deepEqual(before, { numbersOff: true, ladderOff: true, answerOn: true }, 'the bench\'s view of the page');
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  assert.equal(await page.inputValue('#ctl-ctx'), '16384');
  const want = cli(['--max-model-len', '16384']);
  const old = cli(['--max-model-len', '32768']);
  const inStep = await page.evaluate(() => window.__inStep);
  const model = (a) => String(a.kv.ladder.find((r) => r.step === 'model').kv_bytes);
  assert.deepEqual(inStep, { state: 'updating', maxConcurrency: String(want.metrics['max-concurrency']),
    kvTotal: String(old.metrics['kv-bytes-total']), ladder: model(old) }, 'in the step: the answer card new, the cards off screen not yet');
  const m = await metrics(page);
  for (const [name, value] of Object.entries(want.metrics)) if (name in m) assert.equal(m[name], value === null ? '' : String(value), name);
  const shown = await shownValues(page);
  assert.deepEqual(shown.tables.ladder, want.kv.ladder.map((r) => nums([r.bytes_per_token, r.kv_bytes])));
  assert.equal(shown.command, want.budget.command);
  // The answers of the next stops either way are the core's, computed ahead of the step
  // (main.js computeAhead): back up a step, and on up past the last answer shown.
  for (const [key, ctx] of [['ArrowRight', 32768], ['ArrowRight', 65536]]) {
    await page.keyboard.press(key);
    await page.waitForFunction((c) => document.querySelector('#ctl-ctx').value === c && document.body.dataset.state === 'ready', String(ctx));
    const cliAt = cli(['--max-model-len', String(ctx)]);
    const at = await metrics(page);
    for (const [name, value] of Object.entries(cliAt.metrics)) if (name in at) assert.equal(at[name], value === null ? '' : String(value), `${name} at ${ctx}`);
    const shownAt = await shownValues(page);
    assert.deepEqual(shownAt.tables.ladder, cliAt.kv.ladder.map((r) => nums([r.bytes_per_token, r.kv_bytes])));
    assert.equal(shownAt.command, cliAt.budget.command);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

// A drag fires several input events in one frame: the first is answered at once, the rest
// wait for the next frame, which answers the latest value only; the page never ends on a
// stale answer, and the address follows once the slider is still.
// idleFirst: the answers ahead (main.js computeAhead, an idle callback with a 200 ms timeout)
// are computed between the events and that frame, as on a loaded machine where the frame
// comes after the timeout (the clean-clone CI's failure): the page then had the shown answer
// kept under the latest position's settings, gave it back to the frame and ended on it.
async function dragInOneFrame(idleFirst) {
  const { page, context, errors } = await openPage(env, '');
  await page.waitForSelector('#sec-chart .uplot');
  const answers = await page.evaluate(async (idleFirst) => {
    const slider = document.querySelector('#ctl-ctx-slider');
    const idle = [];
    const requestIdle = window.requestIdleCallback;
    if (idleFirst) window.requestIdleCallback = (fn) => idle.push(fn);
    const seen = [];
    const watch = new MutationObserver(() => seen.push(document.querySelector('[data-metric="kv-bytes-total"]').dataset.value));
    watch.observe(document.querySelector('.results-body'), { subtree: true, attributes: true, attributeFilter: ['data-value'] });
    for (const v of ['3', '4', '5', '6']) {
      slider.value = v;
      slider.dispatchEvent(new Event('input', { bubbles: true }));
    }
    if (idleFirst) {
      window.requestIdleCallback = requestIdle;
      for (const fn of idle) fn({ didTimeout: true, timeRemaining: () => 0 });
    }
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await new Promise((r) => setTimeout(r, 0));
    watch.disconnect();
    return { seen: [...new Set(seen)], ctx: document.querySelector('#ctl-ctx').value, idle: idle.length };
  }, idleFirst);
  if (idleFirst) assert.equal(answers.idle, 1, 'the first step asked for the answers ahead');
  // Stops from 256: index 3 is 2,048 tokens, 6 is 16,384. Two answers: the first event's, then the last one's.
  assert.equal(answers.ctx, '16384');
  assert.deepEqual(answers.seen, [String(2048 * 131072), String(16384 * 131072)]);
  // Ready on the last value's answer, in every card.
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  const shown = await page.evaluate(() => [...document.querySelectorAll('[data-metric="kv-bytes-total"]')].map((e) => e.dataset.value));
  assert.deepEqual(shown, shown.map(() => String(16384 * 131072)));
  await page.waitForFunction(() => new URL(location.href).searchParams.get('ctx') === '16384');
  assert.deepEqual(errors, []);
  await context.close();
}

test('a drag of many input events in one frame ends on the last value', () => dragInOneFrame(false));

test('a drag whose answers ahead are computed before its next frame ends on the last value', () => dragInOneFrame(true));

test('the simulator view and the chart arrive after the first answer', async () => {
  const { page, context, errors } = await openPage(env, '');
  await page.waitForSelector('#sim [data-action="sim-run"]');
  await page.waitForSelector('#sec-chart .uplot');
  assert.equal(await page.$$eval('[data-lazy="sim"]', (p) => p.length), 0, 'the placeholder is replaced');
  assert.deepEqual(errors, []);
  await context.close();
});

// The chunk may not come (a network error; a deploy that replaced it while the page was open):
// each part it brings says so where it would be, and nothing is thrown.
test('the views chunk failing: the chart, the simulator and both panels say so, nothing thrown', async () => {
  const { page, context, errors } = await openPage(env, '', { abort: /\/views-[^/]*\.js$/ });
  const parts = () => page.$$eval('[data-role="part-failed"]', (els) => els.map((e) => e.parentElement.closest('[data-lazy], .chart')?.dataset.lazy ?? 'chart'));
  await page.waitForFunction(() => document.querySelectorAll('[data-role="part-failed"]').length === 4, null, { timeout: 15000 });
  assert.deepEqual(await parts(), ['chart', 'sim', 'check', 'lab']);
  assert.match(await page.textContent('#sec-chart [data-role="part-failed"]'), /^This part of the page could not be loaded \(.*views-.*\.js\)\. Reload the page to try again\.$/);
  assert.deepEqual(await page.$$eval('[data-lazy] h2', (hs) => hs.map((x) => x.textContent)), ['Paging simulator', 'Compare with your log', 'Measured vs formula']);
  assert.equal(await page.$$eval('[aria-busy="true"]', (els) => els.length), 0);
  // The chart's download buttons do nothing rather than throw.
  await page.click('#sec-chart [data-export="png"]');
  // A rebuild (a language switch) says it again, in the new language.
  await page.waitForFunction(() => document.querySelectorAll('#lang option').length === 2);
  await page.selectOption('#lang', 'zh-CN');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN' && document.querySelectorAll('[data-role="part-failed"]').length === 4, null, { timeout: 15000 });
  assert.deepEqual(await parts(), ['chart', 'sim', 'check', 'lab']);
  assert.match(await page.textContent('[data-lazy="sim"] [data-role="part-failed"]'), /^页面的这一部分没能加载/);
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  await page.waitForTimeout(300);
  assert.deepEqual(errors, []);
  await context.close();
});
