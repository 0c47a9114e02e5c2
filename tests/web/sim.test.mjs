// The simulator view (issue 4 in the page, issue 5 for its link) in real Chromium:
// a run in the Web Worker shows progress and then the Fig. 2 table whose raw
// numbers equal `kvbudget simulate --json` for the same settings; Cancel stops it;
// the block map draws and scrubs; a copied link with sim parameters reproduces the
// view; the Azure trace runs with its attribution shown; bad sim parameters are
// ignored with the page's note.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { startAll, openPage, waitSettled, clipboardAfter, root, simulateCli } from './harness.mjs';

let env;
before(async () => {
  env = await startAll();
});
after(async () => {
  await env?.close();
});

// The simulator view is a lazy chunk that arrives after the first answer: wait for it
// rather than read a placeholder that is not there yet (a loaded machine delays it).
async function simState(page) {
  await page.waitForSelector('#sim', { state: 'attached', timeout: 30000 });
  return page.$eval('#sim', (e) => e.dataset.simState);
}

async function waitSimDone(page, timeout = 120000) {
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#sim')?.dataset.simState), null, { timeout });
  const err = await page.textContent('[data-role="sim-error"]');
  assert.equal(await simState(page), 'done', err);
}

// Records every progress value the bar shows (a MutationObserver in the page).
async function watchProgress(page) {
  await page.evaluate(() => {
    window.__simProgress = [];
    const bar = document.querySelector('[data-role="sim-progress"]');
    new MutationObserver(() => {
      if (bar.dataset.value) window.__simProgress.push([Number(bar.dataset.value), !bar.hidden]);
    }).observe(bar, { attributes: true, attributeFilter: ['data-value'] });
  });
}

// {policyName: {cliKey: raw number}} from the comparison and latency tables.
async function tableValues(page) {
  return page.evaluate(() => {
    const out = {};
    for (const id of ['sim-compare', 'sim-latency']) {
      const table = document.querySelector(`[data-table="${id}"]`);
      const keys = table.closest('[data-columns]').dataset.columns.split(',');
      table.querySelectorAll('tbody tr').forEach((tr, i) => {
        const row = (out[i] ||= {});
        [...tr.children].forEach((cell, j) => {
          if (j > 0) row[keys[j]] = Number(cell.dataset.value);
        });
      });
    }
    return Object.values(out);
  });
}

function assertSameAsCli(rows, cli, where) {
  assert.equal(rows.length, cli.policies.length, where);
  rows.forEach((row, i) => {
    for (const [k, v] of Object.entries(row)) {
      assert.ok(k in cli.policies[i], `${where}: CLI has ${k}`);
      assert.equal(v, cli.policies[i][k], `${where}: ${cli.policies[i].policy} ${k}`);
    }
  });
}

let sharedLink = null;
let sharedRows = null;

test('sharegpt preset on a small model: progress, then the CLI\'s numbers', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-0.6B&ctx=4096', { clipboard: true });
  assert.equal(await simState(page), 'idle');
  await page.fill('#sim-req', '3000');
  await page.press('#sim-req', 'Tab');
  await watchProgress(page);
  await page.click('[data-action="sim-run"]');
  assert.ok(['running', 'done'].includes(await simState(page)));
  await waitSimDone(page);
  const seen = await page.evaluate(() => window.__simProgress);
  assert.ok(seen.some(([v, visible]) => v > 0 && v < 1 && visible), `progress shown while running: ${JSON.stringify(seen.slice(0, 5))}`);
  assert.equal(await page.isHidden('[data-role="sim-progress"]'), true);
  assert.equal(await page.isHidden('[data-action="sim-cancel"]'), true);

  const rows = await tableValues(page);
  const cli = simulateCli('Qwen--Qwen3-0.6B', ['--gpu', 'rtx-4090', '--max-model-len', '4096', '--policy', 'all', '--requests', '3000']);
  assertSameAsCli(rows, cli, 'Qwen3-0.6B sharegpt 3000');
  assert.equal(rows[0].finished, 3000);
  // The table exports like every other table.
  assert.equal(await page.$$eval('[data-export-for="sim-compare"] button', (b) => b.length), 2);
  // Memory charts per policy and the queue chart are drawn, each as it is scrolled to.
  for (const box of await page.$$('.sim-chart')) await box.scrollIntoViewIfNeeded();
  await page.waitForFunction(() => [...document.querySelectorAll('.sim-chart')].every((b) => b.querySelector('canvas')));
  assert.equal(await page.$$eval('.sim-chart canvas', (c) => c.length) >= 5, true);

  // The address bar (and so a copied link) carries the simulator settings.
  sharedLink = await clipboardAfter(page, '[data-action="copy-link"]');
  const params = Object.fromEntries(new URL(sharedLink).searchParams);
  assert.equal(params.sim, '1');
  assert.equal(params.simReq, '3000');
  sharedRows = rows;
  // Switching the language re-labels the result in place, same numbers.
  await page.selectOption('#lang', 'zh-CN');
  // The language's strings are a chunk of their own: the page is rebuilt once it is in (the
  // old page's table matched the selector at once, under load before the new one was built).
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN' && document.body.dataset.state !== 'loading');
  await page.waitForSelector('[data-table="sim-compare"]');
  assert.deepEqual(await tableValues(page), rows);
  assert.equal(await page.textContent('#sim-h'), '分页模拟器');
  assert.equal(await page.textContent('[data-table="sim-compare"] tbody tr th'), '分页（vLLM）');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a copied link with simulator parameters reproduces the view', async () => {
  assert.ok(sharedLink, 'needs the first test');
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(sharedLink);
  await waitSettled(page);
  await waitSimDone(page);
  assert.equal(await page.inputValue('#sim-req'), '3000');
  assert.deepEqual(await tableValues(page), sharedRows);
  assert.equal(page.url(), sharedLink);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the block map draws every block, marks sharing and scrubs through the run', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-0.6B&ctx=4096&sim=1&simReq=300&simN=4&simPol=paged,max');
  await waitSimDone(page);
  await page.waitForSelector('[data-role="sim-blockmap"][data-drawn]');
  const rows = await tableValues(page);
  const cli = simulateCli('Qwen--Qwen3-0.6B', ['--gpu', 'rtx-4090', '--max-model-len', '4096', '--requests', '300', '--n', '4', '--policy', 'all']);
  // The page ran paged and max only: compare against those entries of the CLI's run.
  assertSameAsCli(rows, { policies: cli.policies.filter((p) => p.policy === 'paged' || p.policy === 'max') }, 'n=4');
  const map = await page.$eval('[data-role="sim-blockmap"]', (c) => {
    const ctx = c.getContext('2d');
    const px = ctx.getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    for (let i = 0; i < px.length; i += 4 * 7) colours.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
    return { ...c.dataset, width: c.width, height: c.height, colours: colours.size };
  });
  assert.equal(Number(map.cells), rows[0].num_blocks ?? cli.policies[0].num_blocks);
  assert.equal(map.policy, 'paged');
  assert.ok(map.width > 100 && map.height > 20, JSON.stringify(map));
  assert.ok(map.colours > 10, `requests in many colours: ${map.colours}`);
  assert.ok(await page.isVisible('text=Shared block'));

  // Scrub to the first and the last snapshot: the map redraws at other steps.
  const max = Number(await page.getAttribute('[data-role="sim-scrubber"]', 'max'));
  assert.ok(max >= 4);
  const drawnAt = async (v) => {
    await page.$eval('[data-role="sim-scrubber"]', (el, val) => {
      el.value = String(val);
      el.dispatchEvent(new Event('input'));
    }, v);
    return page.getAttribute('[data-role="sim-blockmap"]', 'data-drawn');
  };
  const first = await drawnAt(0);
  const last = await drawnAt(max);
  assert.ok(Number(last) > Number(first), `${first} < ${last}`);
  // Contiguous policy: regions on the arena.
  await page.selectOption('#sim-map-policy', 'max');
  await drawnAt(Math.floor(max / 2));
  assert.equal(await page.getAttribute('[data-role="sim-blockmap"]', 'data-policy'), 'max');
  // Play animates: the step moves on by itself. Pressed in the page (element.click()), so a
  // layout shift between Playwright's hit test and its mouse event cannot miss the button, and
  // polled on a timer, not on frames a loaded machine may hold back.
  const atStart = await drawnAt(0);
  await page.$eval('[data-action="sim-play"]', (b) => b.click());
  await page.waitForFunction((s) => document.querySelector('[data-role="sim-blockmap"]').dataset.drawn !== s, atStart, { timeout: 30000, polling: 100 });
  await page.$eval('[data-action="sim-play"]', (b) => b.click());
  assert.deepEqual(errors, []);
  await context.close();
});

test('a link asking for a large run does not start it on load; Run does', async () => {
  // Issue 14: sim=1&simReq=1000000 once started minutes of worker CPU on page load.
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-0.6B&ctx=4096&sim=1&simReq=1000000&simPol=paged');
  await page.waitForTimeout(1500);
  assert.equal(await simState(page), 'waiting-click');
  assert.equal(await page.isHidden('[data-role="sim-progress"]'), true);
  assert.equal(await page.isEnabled('[data-action="sim-run"]'), true);
  assert.match(await page.textContent('[data-role="sim-status"]'), /1,000,000 requests/);
  assert.equal(await page.inputValue('#sim-req'), '1000000');
  await watchProgress(page);
  await page.click('[data-action="sim-run"]');
  await page.waitForFunction(() => window.__simProgress.length > 0, null, { timeout: 60000 });
  assert.equal(await simState(page), 'running');
  await page.click('[data-action="sim-cancel"]');
  assert.equal(await simState(page), 'cancelled');
  // At the limit (100,000) a link still runs on load.
  const small = await openPage(env, 'model=Qwen/Qwen3-0.6B&ctx=4096&sim=1&simReq=2000&simPol=paged');
  await waitSimDone(small.page);
  assert.deepEqual(errors, []);
  assert.deepEqual(small.errors, []);
  await small.context.close();
  await context.close();
});

test('Cancel stops a long run; the page stays responsive meanwhile', async () => {
  const { page, context, errors } = await openPage(env, 'model=meta-llama/Llama-3.1-8B&gpu=a100-80gb&ctx=131072');
  await page.selectOption('#sim-wl', 'azure-conv');
  await watchProgress(page);
  await page.click('[data-action="sim-run"]');
  await page.waitForFunction(() => window.__simProgress.length > 0, null, { timeout: 60000 });
  assert.equal(await simState(page), 'running');
  // The main thread answers while the worker computes, and controls still work.
  await page.fill('#ctl-seqs', '2');
  await page.press('#ctl-seqs', 'Tab');
  await waitSettled(page);
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  await page.click('[data-action="sim-cancel"]');
  assert.equal(await simState(page), 'cancelled');
  assert.equal(await page.isHidden('[data-role="sim-progress"]'), true);
  assert.equal(await page.isEnabled('[data-action="sim-run"]'), true);
  const shown = await page.evaluate(() => window.__simProgress.length);
  await page.waitForTimeout(1000);
  // No more progress and no result from the stopped worker.
  assert.equal(await page.evaluate(() => window.__simProgress.length), shown);
  assert.equal(await page.$$eval('[data-table="sim-compare"]', (t) => t.length), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the Azure conversation trace runs whole, with its attribution shown', async () => {
  const { page, context, errors } = await openPage(env, 'model=meta-llama/Llama-3.1-8B&gpu=a100-80gb&ctx=16384&sim=1&simWl=azure-conv&simPol=paged');
  await waitSimDone(page);
  const rows = await tableValues(page);
  const cli = simulateCli('meta-llama--Llama-3.1-8B', ['--gpu', 'a100-80gb', '--max-model-len', '16384', '--workload', 'azure-conv']);
  assertSameAsCli(rows, cli, 'azure-conv');
  assert.equal(rows[0].finished, 19366);
  const attribution = await page.textContent('[data-role="sim-attribution"]');
  assert.match(attribution, /Azure LLM inference trace 2023/);
  assert.match(attribution, /CC BY 4\.0/);
  assert.ok(await page.isVisible('[data-role="sim-attribution"]'));
  assert.deepEqual(errors, []);
  await context.close();
});

// A Run in a fresh worker would spend its simulation in the browser's baseline code
// (sim-worker.js warmUp): the spare worker warms the simulator on the view's settings,
// but only once the visitor is about to use it (the view near the screen), never on a
// plain page load; the warmed worker's run is still exactly the CLI's.
test('the spare worker warms the simulator once the view is near the screen; its run is the CLI\'s', async () => {
  const { page, context, errors } = await openPage(env, 'model=meta-llama/Llama-3.1-8B&gpu=a100-80gb&ctx=16384&simWl=azure-conv&simPol=paged');
  await page.waitForSelector('#sim', { state: 'attached', timeout: 30000 });
  await page.waitForFunction(() => document.body.dataset.core === 'live', null, { timeout: 30000 });
  await page.waitForTimeout(1500);
  assert.equal(await page.$eval('#sim', (e) => e.dataset.simWarmMs ?? null), null, 'no warm-up while the view is off screen');
  await page.$eval('#sim', (e) => e.scrollIntoView());
  await page.waitForFunction(() => Number(document.querySelector('#sim').dataset.simWarmMs) > 0, null, { timeout: 60000 });
  await page.click('[data-action="sim-run"]');
  await waitSimDone(page);
  const cli = simulateCli('meta-llama--Llama-3.1-8B', ['--gpu', 'a100-80gb', '--max-model-len', '16384', '--workload', 'azure-conv']);
  assertSameAsCli(await tableValues(page), cli, 'azure-conv after the warm-up');
  assert.deepEqual(errors, []);
  await context.close();
});

// A chosen file is not read into the page: the worker reads it a 64 KiB slice at a time
// (FileReaderSync), so a trace of any size fits; the run is the CLI's on the same file.
test('a chosen CSV file is read in pieces by the worker and gives the CLI\'s numbers', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-0.6B&ctx=4096&simPol=paged');
  const file = path.join(root, 'data/traces/azure-llm-2023-code.csv');
  await page.selectOption('#sim-wl', 'csv');
  await page.setInputFiles('#sim-csv-file', file);
  assert.match(await page.textContent('[data-role="sim-csv-name"]'), /^azure-llm-2023-code\.csv \(16\d\.\d+ KiB\): read a piece at a time/);
  await page.fill('#sim-req', '');
  await page.press('#sim-req', 'Tab');
  await page.click('[data-action="sim-run"]');
  await waitSimDone(page);
  const rows = await tableValues(page);
  const cli = simulateCli('Qwen--Qwen3-0.6B', ['--gpu', 'rtx-4090', '--max-model-len', '4096', '--policy', 'paged', '--workload', file]);
  assert.equal(cli.requests, 8819);
  assert.equal(rows[0].finished, 7578); // the rest are prompts past the 4,096-token context
  assertSameAsCli(rows, cli, 'chosen file');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a pasted CSV trace runs; invalid simulator parameters are ignored with the note', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-0.6B&ctx=4096&simWl=bogus&simBs=4&simPol=paged,best&simReq=50');
  const note = await page.textContent('[data-role="ignored-params"]');
  // 4 is no block size vLLM takes (vllm/config/cache.py): ignored like any bad value.
  for (const k of ['simWl=bogus', 'simBs=4', 'simPol=paged,best']) assert.ok(note.includes(k), note);
  assert.equal(await page.inputValue('#sim-req'), '50');
  assert.equal(await page.inputValue('#sim-bs'), '16');
  // The list is vLLM's choices, the core's (catalog().sim_block_sizes).
  assert.deepEqual(await page.$$eval('#sim-bs option', (o) => o.map((e) => e.value)), ['1', '8', '16', '32', '64', '128', '256']);
  await page.selectOption('#sim-wl', 'csv');
  const csv = 'arrived_at,num_prefill_tokens,num_decode_tokens\n' + Array.from({ length: 40 }, (_, i) => `${i * 0.5},${100 + i * 13},${20 + i}`).join('\n') + '\n';
  await page.fill('#sim-csv-text', csv);
  await page.fill('#sim-req', '');
  await page.press('#sim-req', 'Tab');
  await page.click('[data-action="sim-run"]');
  await waitSimDone(page);
  const rows = await tableValues(page);
  assert.equal(rows.length, 4);
  for (const r of rows) assert.equal(r.finished, 40);
  // A bad CSV is the core's message, naming the line.
  await page.fill('#sim-csv-text', 'arrived_at,num_prefill_tokens,num_decode_tokens\n0,12\n');
  await page.click('[data-action="sim-run"]');
  await page.waitForFunction(() => document.querySelector('#sim').dataset.simState === 'error', null, { timeout: 30000 });
  assert.match(await page.textContent('[data-role="sim-error"]'), /line 2/);
  assert.deepEqual(errors, []);
  await context.close();
});

// The simulator takes the calculator's settings and refuses in the core's terms, in
// the page's language (tMsg of the error's coded detail), as `kvbudget simulate` does.
test('a refusal is the core\'s coded message in the page\'s language', async () => {
  const { page, context, errors } = await openPage(env, 'model=meta-llama/Llama-3.1-8B&gpu=rtx-3080&ctx=4096&simReq=10&lang=zh-CN');
  await page.click('[data-action="sim-run"]');
  await page.waitForFunction(() => document.querySelector('#sim').dataset.simState === 'error', null, { timeout: 30000 });
  const text = await page.textContent('[data-role="sim-error"]');
  assert.match(text, /已没有留给 KV Cache 的显存/);
  assert.match(text, /NVIDIA GeForce RTX 3080 10GB/);
  // The number inputs' ranges are the core's.
  assert.equal(await page.getAttribute('#sim-n', 'max'), '1024');
  assert.equal(await page.getAttribute('#sim-seqs', 'max'), '2000000000');
  assert.deepEqual(errors, []);
  await context.close();
  // The simulator's own refusals are coded too, its policy in the page's words (it read
  // "模拟器拒绝了输入：paged：the KV cache holds 1723 usable blocks...").
  const second = await openPage(env, 'model=Qwen/Qwen3-8B&gpu=rtx-4090&ctx=40960&simReq=10&lang=zh-CN');
  await second.page.click('[data-action="sim-run"]');
  await second.page.waitForFunction(() => document.querySelector('#sim').dataset.simState === 'error', null, { timeout: 30000 });
  assert.equal(await second.page.textContent('[data-role="sim-error"]'),
    '模拟器拒绝了输入：分页（vLLM）：KV Cache 只有 1,938 个可用块（每块 16 个 token），而一条最大长度为 40,960 的序列需要 2,560 个（空块不可用）');
  assert.deepEqual(second.errors, []);
  await second.context.close();
});

// The worker's script may not load (a network error, a deploy that replaced it): the spare worker
// started after the first answer failed long before Run listened, and Run waited on it for good.
test('a worker whose script did not load: Run says so, and the next Run asks for it again', async () => {
  const blocked = /\/sim-worker\.js$/;
  const { page, context, errors } = await openPage(env, 'simReq=10', { abort: blocked });
  await page.waitForSelector('[data-action="sim-run"]');
  await page.waitForTimeout(500); // the spare worker, started when the page is idle, has failed by now
  await page.click('[data-action="sim-run"]');
  await page.waitForFunction(() => document.querySelector('#sim').dataset.simState === 'error', null, { timeout: 15000 });
  assert.equal(await page.textContent('[data-role="sim-error"]'), 'The simulator could not run: the simulator\'s worker failed to start');
  assert.equal(await page.textContent('#sim [data-role="sim-status"]'), '');
  await context.unroute(blocked);
  await page.click('[data-action="sim-run"]');
  await page.waitForFunction(() => document.querySelector('#sim').dataset.simState === 'done', null, { timeout: 30000 });
  assert.equal(await page.isHidden('[data-role="sim-error"]'), true);
  assert.deepEqual(errors, []);
  await context.close();
});

// A trace that did not come was worded as the core's refusal ("The simulator refused: Failed to fetch").
test('a trace that does not come: the run says which file, as no refusal, and the next Run fetches it', async () => {
  const blocked = /\/traces\//;
  const { page, context, errors } = await openPage(env, 'simWl=azure-conv', { abort: blocked });
  await page.click('[data-action="sim-run"]');
  await page.waitForFunction(() => document.querySelector('#sim').dataset.simState === 'error', null, { timeout: 30000 });
  assert.match(await page.textContent('[data-role="sim-error"]'), /^The simulator could not run: http:\/\/127\.0\.0\.1:\d+\/traces\/azure-llm-2023-conv\.csv: Failed to fetch$/);
  await context.unroute(blocked);
  await page.click('[data-action="sim-run"]');
  await page.waitForFunction(() => document.querySelector('#sim').dataset.simState === 'done', null, { timeout: 60000 });
  assert.deepEqual(errors, []);
  await context.close();
});

// Issue 9.9: every run ends with what it found, in the core's coded messages (the same
// as `kvbudget simulate --json`'s conclusions); arrivals faster than the GPU serves are
// called an overload; results of earlier settings are marked stale in words.
test('the conclusion, the overload warning and stale results', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B&ctx=4096&sim=1&simReq=400&simRate=200');
  await waitSimDone(page);
  const cli = simulateCli('Qwen--Qwen3-8B', ['--gpu', 'rtx-4090', '--max-model-len', '4096', '--policy', 'all', '--requests', '400', '--rate', '200']);
  const codes = cli.conclusions.map((m) => m.code);
  assert.deepEqual(codes, ['sim_most_served', 'sim_policy_waste', 'sim_policy_waste', 'sim_policy_waste', 'sim_policy_waste', 'sim_why', 'sim_overload']);
  const overload = cli.conclusions.at(-1);
  const label = { paged: 'Paged (vLLM)', max: 'Max (Orca)', pow2: 'Pow2 (Orca)', oracle: 'Oracle (Orca)' };
  const shown = await page.textContent('[data-role="sim-overload"]');
  assert.equal(shown, overload.text.replace(`with ${overload.params.policy}:`, `with ${label[overload.params.policy] || overload.params.policy}:`));
  assert.ok(shown.startsWith(`overloaded: requests arrive at ${overload.params.offered}/s, faster than the GPU serves them`), shown);
  assert.ok(shown.includes(`the last request arrived behind ${overload.params.waiting} waiting requests`), shown);
  const items = await page.$$eval('[data-role="sim-conclusions"] li', (li) => li.map((e) => e.dataset.code));
  assert.deepEqual(items, codes.slice(0, -1));
  const first = await page.textContent('[data-role="sim-conclusions"] li');
  const best = cli.conclusions[0].params;
  assert.ok(first.includes(`served the most: ${best.finished} of ${best.requests} requests finished`), first);
  // The main table fits a 1280 px screen; the rest is folded.
  assert.equal(await page.$$eval('[data-table="sim-compare"] thead th', (th) => th.length), 9);
  assert.equal(await page.$eval('[data-table="sim-compare-all"]', (t) => t.closest('details').open), false);
  const width = await page.$eval('[data-table="sim-compare"]', (t) => t.getBoundingClientRect().right);
  assert.ok(width <= 1280, String(width));
  // One running/waiting chart per policy, its legend filled once it is scrolled to
  // (charts below the fold are drawn as they near the screen).
  assert.equal(await page.$$eval('[data-chart^="sim-queue-"]', (c) => c.length), 4);
  assert.equal(await page.$$eval('[data-chart^="sim-"] .uplot', (u) => u.length), 0, 'no chart drawn off screen');
  await page.$eval('[data-chart="sim-queue-paged"]', (e) => e.scrollIntoView());
  await page.waitForSelector('[data-chart="sim-queue-paged"] .u-value');
  const legend = await page.$$eval('[data-chart="sim-queue-paged"] .u-value', (v) => v.map((e) => e.textContent));
  assert.ok(legend.slice(1).every((v) => /^\d/.test(v)), JSON.stringify(legend));
  assert.equal(await page.$$eval('[data-role="sim-stale"]', (e) => e.length), 0);

  await page.fill('#ctl-ctx', '8192');
  await page.press('#ctl-ctx', 'Tab');
  await waitSettled(page);
  await page.waitForSelector('[data-role="sim-stale"]');
  assert.equal(await page.textContent('[data-role="sim-stale"]'), 'These results are for earlier settings: run the simulation again to update them.');
  assert.deepEqual(errors, []);
  await context.close();
});
