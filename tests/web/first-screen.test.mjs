// Issue 9, items 1, 2, 6 and 11: the answer is on the first screen of a phone, a desktop
// and the embed card, names its GPU, stays in view while the controls scroll, and no
// label or verdict on the page contradicts another.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startAll, openPage, root } from './harness.mjs';

const en = JSON.parse(fs.readFileSync(path.join(root, 'web/i18n/en.json'), 'utf8'));
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };
const ANSWER = ['[data-role="verdict"]', '[data-role="gpu"]', '[data-metric="max-context"]', '[data-metric="max-concurrency"]'];

let env;
before(async () => {
  env = await startAll();
});
after(async () => {
  await env?.close();
});

async function inViewport(page, selector, viewport) {
  const box = await page.locator(selector).first().boundingBox();
  assert.ok(box, `${selector} is rendered`);
  return box.y >= 0 && box.x >= 0 && box.y + box.height <= viewport.height && box.x + box.width <= viewport.width + 0.5;
}

for (const [name, viewport] of [['phone', PHONE], ['desktop', DESKTOP]]) {
  for (const lang of ['en', 'zh-CN']) {
    test(`first screen (${name}, ${lang}): verdict, GPU, longest context and concurrency without scrolling`, async () => {
      const { page, context, errors } = await openPage(env, `lang=${lang}`, { viewport });
      for (const sel of ANSWER) assert.equal(await inViewport(page, sel, viewport), true, `${sel} on the first screen`);
      // The verdict names the GPU it is for.
      const gpu = await page.textContent('[data-role="gpu"]');
      assert.equal(gpu, 'NVIDIA GeForce RTX 4090 24 GB');
      assert.ok((await page.textContent('[data-role="verdict"]')).includes(gpu));
      // Share and export come after the answer.
      const verdictY = (await page.locator('[data-role="verdict"]').boundingBox()).y;
      const shareY = (await page.locator('[data-role="share"]').boundingBox()).y;
      assert.ok(shareY > verdictY, 'share bar below the verdict');
      // Sticky: with the context control scrolled into view the answer is still there.
      await page.locator('#ctl-seqs').scrollIntoViewIfNeeded();
      await page.evaluate(() => window.scrollBy(0, 400));
      assert.ok(await page.evaluate(() => window.scrollY) > 300, 'the page scrolled');
      for (const sel of ANSWER) assert.equal(await inViewport(page, sel, viewport), true, `${sel} stays in view`);
      assert.deepEqual(errors, []);
      await context.close();
    });
  }
}

for (const viewport of [{ width: 640, height: 560 }, PHONE]) {
  test(`embed card ${viewport.width}×${viewport.height}: the answer first`, async () => {
    const { page, context } = await openPage(env, 'embed=1', { viewport });
    for (const sel of ANSWER) assert.equal(await inViewport(page, sel, viewport), true, `${sel} in the embed's first screen`);
    assert.ok((await page.textContent('[data-role="verdict"]')).includes('RTX 4090'));
    await context.close();
  });
}

test('GPU names are whole: select wide enough, marketed GB never labelled GiB', async () => {
  for (const query of ['', 'embed=1']) {
    const { page, context } = await openPage(env, query, { viewport: PHONE });
    const fit = await page.evaluate(() => {
      const sel = document.getElementById('ctl-gpu');
      const span = document.createElement('span');
      const cs = getComputedStyle(sel);
      span.style.font = cs.font;
      span.style.whiteSpace = 'nowrap';
      span.style.position = 'absolute';
      document.body.append(span);
      // The arrow and padding take about 40 px.
      const room = sel.clientWidth - 40;
      const cut = [];
      for (const o of sel.options) {
        span.textContent = o.textContent;
        if (span.getBoundingClientRect().width > room) cut.push(o.value);
      }
      span.remove();
      return { cut, room };
    });
    // One name is longer than a phone: "Instinct MI250 (one of its two GCDs) 64 GB"; its
    // full name is in the option's title and in the answer card when it is chosen.
    assert.deepEqual(fit.cut.filter((id) => id !== 'mi250'), [], `${query || 'page'}: GPU names wider than ${fit.room} px`);
    const labels = await page.$$eval('#ctl-gpu option', (os) => os.map((o) => o.textContent));
    const titles = await page.$$eval('#ctl-gpu option', (os) => os.map((o) => o.title));
    assert.equal([...labels, ...titles].filter((l) => /GiB/.test(l)).length, 0, 'no GiB in GPU names');
    // Grouped by maker: the group says NVIDIA, the option the rest, the title all of it.
    assert.ok(labels.includes('GeForce RTX 4090 24 GB'));
    assert.ok(titles.includes('NVIDIA GeForce RTX 4090 24 GB'));
    assert.deepEqual(await page.$$eval('#ctl-gpu optgroup', (gs) => gs.map((g) => g.label)), ['NVIDIA', 'AMD', 'Apple']);
    assert.ok(labels.some((l) => /H100.*80GB/.test(l)), 'H100 keeps its 80GB');
    await context.close();
  }
});

test('the GPU note says marketed GB and reported GiB', async () => {
  const { page, context } = await openPage(env, 'gpu=h100-sxm', { viewport: DESKTOP });
  const notes = await page.$$eval('#sec-engine li', (ls) => ls.map((l) => l.textContent));
  assert.ok(notes.includes('GPU total is what PyTorch reports on a NVIDIA H100 SXM5 80GB (79.22 GiB, marketed 80 GB)'), notes.join('\n'));
  assert.equal(await page.textContent('[data-role="gpu"]'), 'NVIDIA H100 SXM5 80GB');
  await context.close();
});

// A grid of settings: nothing on the page contradicts the verdict.
const GRID = [];
for (const engine of ['vllm', 'llamacpp', 'transformers']) {
  for (const seqs of [1, 2, 32]) {
    for (const ctx of [4096, 32768]) GRID.push({ engine, seqs, ctx });
  }
}

test('no contradictory verdicts, labels or numbers across engines, sequences and contexts', async () => {
  const context = await env.browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  const seen = new Set();
  for (const { engine, seqs, ctx } of GRID) {
    for (const model of ['Qwen/Qwen3-8B', 'meta-llama/Llama-3.1-8B']) {
      await page.goto(`${env.site.url}?model=${model}&engine=${engine}&seqs=${seqs}&ctx=${ctx}`);
      await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
      const where = `${model} ${engine} seqs=${seqs} ctx=${ctx}`;
      const v = await page.getAttribute('[data-role="verdict"]', 'data-verdict');
      seen.add(v);
      const verdict = await page.textContent('[data-role="verdict"]');
      const gpu = await page.textContent('[data-role="gpu"]');
      assert.ok(verdict.includes(gpu), `${where}: the verdict names the GPU`);
      const body = await page.textContent('main');
      assert.doesNotMatch(body, /\b1 sequences\b/, `${where}: plural`);
      assert.doesNotMatch(body, /-\d[\d.,]* ?%/, `${where}: no negative percentages`);
      const legend = await page.$$eval('.legend li', (ls) => ls.map((l) => l.textContent));
      if (v === 'fits') assert.equal(legend.some((l) => l.startsWith(en['bar.over'])), false, `${where}: fits but over capacity`);
      if (v === 'partial') assert.equal(legend.some((l) => l.startsWith(en['bar.over'])), false, `${where}: starts but "over capacity"`);
      if (v === 'nofit' || v === 'fewer') assert.equal(legend.some((l) => l.startsWith(en['bar.free'] + ':')), false, `${where}: does not fit but the bar says memory is free`);
      const conc = Number(await page.getAttribute('[data-metric="max-concurrency"]', 'data-value'));
      // "not even one sequence" only when not one fits.
      if (/not even one/.test(verdict)) assert.equal(conc, 0, `${where}: says none fits but ${conc} do`);
      if (v === 'fewer') assert.ok(conc >= 1 && conc < seqs, `${where}: fewer fit`);
      if (v === 'fits') assert.ok(conc >= seqs, `${where}: fits with ${conc} >= ${seqs}`);
      // The longest-context label says it is per sequence with N running.
      const label = await page.textContent('.fact:has([data-metric="max-context"]) dt');
      if (seqs > 1) assert.ok(label.includes(String(seqs)), `${where}: "${label}" names the sequences`);
      // One weights figure per card.
      for (const card of await page.$$('.card')) {
        const txt = await card.textContent();
        const figures = new Set([...txt.matchAll(/Weights[^:]*:\s*([\d.,]+ [KMGT]iB)/g)].map((m) => m[1]));
        assert.ok(figures.size <= 1, `${where}: one weights figure per card, got ${[...figures]}`);
      }
      // The longest context equals what vLLM's numbers allow: the note explains its log line.
      if (engine === 'vllm') {
        const maxCtx = Number(await page.getAttribute('[data-metric="max-context"]', 'data-value'));
        const log = (await page.textContent('[data-role="engine-log"]').catch(() => '')) || '';
        const m = log.match(/GPU KV cache size: ([\d,]+) tokens/);
        const capped = (await page.textContent('.fact:has([data-metric="max-context"]) dd')).includes('maximum');
        if (m && seqs === 1 && !capped) {
          const printed = Number(m[1].replace(/,/g, ''));
          if (printed !== maxCtx) {
            const notes = await page.$$eval('#sec-engine li', (ls) => ls.map((l) => l.textContent));
            assert.ok(notes.some((n) => n.includes(m[1]) && n.includes(maxCtx.toLocaleString('en'))), `${where}: ${printed} vs ${maxCtx} explained`);
          }
        }
      }
    }
  }
  for (const v of ['fits', 'partial', 'fewer']) assert.ok(seen.has(v), `grid reached verdict ${v}`);
  await context.close();
});

test('result changes are announced once to screen readers', async () => {
  const { page, context } = await openPage(env, '', { viewport: DESKTOP });
  const live = page.locator('[data-role="announce"]');
  assert.equal(await live.getAttribute('aria-live'), 'polite');
  const before = await live.textContent();
  assert.ok(before.includes('RTX 4090'));
  await page.fill('#ctl-seqs', '40');
  await page.press('#ctl-seqs', 'Enter');
  await page.waitForFunction((b) => document.querySelector('[data-role="announce"]').textContent !== b, before);
  assert.match(await live.textContent(), /40/);
  await context.close();
});

test('phone: wide tables say they scroll; labels never break inside a word', async () => {
  const { page, context } = await openPage(env, 'engine=vllm', { viewport: PHONE });
  // Off-screen cards are not laid out (content-visibility); the hint is set by a
  // ResizeObserver once a table is, before that frame is painted. So each table is looked
  // at as a reader does: scrolled to, then one frame later.
  const tables = await page.evaluate(async () => {
    const out = [];
    for (const b of document.querySelectorAll('.table-block')) {
      b.scrollIntoView();
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const w = b.querySelector('.table-wrap');
      const hint = b.querySelector('.scroll-hint');
      out.push({ over: w.scrollWidth > w.clientWidth + 1, hint: !!hint && getComputedStyle(hint).display !== 'none' });
    }
    return out;
  });
  assert.ok(tables.length >= 3);
  for (const tb of tables) assert.equal(tb.hint, tb.over, 'hint shown exactly when the table is wider than its box');
  const broken = await page.evaluate(() => {
    const out = [];
    for (const label of document.querySelectorAll('label, .fact dt, .metric dt')) {
      if (!label.offsetParent) continue;
      const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        for (const m of n.textContent.matchAll(/[A-Za-z0-9_]{4,}/g)) {
          const r = document.createRange();
          r.setStart(n, m.index);
          r.setEnd(n, m.index + m[0].length);
          const lines = new Set([...r.getClientRects()].map((q) => Math.round(q.top)));
          if (lines.size > 1) out.push(m[0]);
        }
      }
    }
    return out;
  });
  assert.deepEqual(broken, []);
  await context.close();
});
