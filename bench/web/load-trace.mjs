#!/usr/bin/env node
// Where one cold load's time goes (issue 13): a Chromium trace of navigation -> data-state=ready
// (and -> data-core=live, the calculator module running), printed as a timeline in ms from
// navigation start: each request (sent, first byte, done), script evaluation, the WebAssembly
// compile and instantiate, the long tasks on the main thread, first paint. Prints; asserts nothing.
//   node bench/web/load-trace.mjs [QUERY]   (e.g. '?embed=1&model=Qwen/Qwen3-8B&ctx=32768')
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../../tests/web/static-server.mjs';
import { launch } from '../../tests/web/browser.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const site = path.resolve(root, process.env.KVB_SITE_DIR || 'site');
const query = process.argv[2] || '';
const server = await startStaticServer({ root: site });
const browser = await launch();
try {
  // One warm-up load, so the browser process and the server are not what is measured.
  for (const trace of [false, true]) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    await page.addInitScript(() => {
      new MutationObserver(() => {
        const b = document.body;
        if (!b) return;
        for (const [attr, value] of [['state', 'ready'], ['core', 'live']]) {
          const mark = `kvb-${attr}-${value}`;
          if (b.dataset[attr] === value && !performance.getEntriesByName(mark).length) performance.mark(mark);
        }
      }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-state', 'data-core'] });
    });
    if (trace) await browser.startTracing(page, { categories: ['toplevel', 'devtools.timeline', 'v8.wasm', 'blink.user_timing', 'loading'] });
    await page.goto(server.url + query);
    await page.waitForFunction(() => document.body.dataset.state === 'ready' && document.body.dataset.core !== 'loading', null, { timeout: 30000 });
    await page.waitForTimeout(300);
    if (!trace) {
      await context.close();
      continue;
    }
    const buf = await browser.stopTracing();
    const marks = await page.evaluate(() => Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name, m.startTime])));
    // Only the page's renderer (the trace also holds the browser's own pages).
    const all = JSON.parse(buf.toString()).traceEvents;
    const nav = all.find((e) => e.name === 'navigationStart' && String(e.args?.data?.documentLoaderURL).startsWith(server.url));
    const events = all.filter((e) => e.pid === nav.pid || (e.name.startsWith('Resource') && String(e.args?.data?.url || '').startsWith(server.url)) || e.name.startsWith('Resource'));
    const t0 = nav.ts;
    const at = (ts) => ((ts - t0) / 1000).toFixed(1).padStart(7);
    const rows = [];
    const req = new Map();
    for (const e of events) {
      const d = e.args?.data;
      if (e.name === 'ResourceSendRequest' && String(d.url).startsWith(server.url)) req.set(d.requestId, { url: d.url, send: e.ts });
      if (e.name === 'ResourceReceiveResponse' && req.has(d.requestId)) req.get(d.requestId).resp = e.ts;
      if (e.name === 'ResourceFinish' && req.has(d.requestId)) Object.assign(req.get(d.requestId), { done: e.ts, bytes: d.encodedDataLength });
    }
    for (const r of req.values()) {
      const name = new URL(r.url).pathname.replace(/^\//, '') || 'index.html';
      rows.push([r.send, `request ${name}: sent ${at(r.send)}, first byte ${r.resp ? at(r.resp) : '?'}, done ${r.done ? at(r.done) : '?'} (${r.bytes ?? '?'} B)`]);
    }
    const main = events.find((e) => e.name === 'ParseHTML')?.tid;
    for (const e of events) {
      const dur = (e.dur || 0) / 1000;
      if (e.name === 'EvaluateScript' || e.name === 'v8.evaluateModule') rows.push([e.ts, `${e.name} ${(e.args?.data?.url || '').split('/').pop()} ${at(e.ts)} +${dur.toFixed(1)} ms`]);
      else if (/^wasm\.|^v8\.wasm\./.test(e.name) && dur > 1) rows.push([e.ts, `${e.name} ${at(e.ts)} +${dur.toFixed(1)} ms`]);
      else if (e.name === 'ParseHTML' && dur > 1) rows.push([e.ts, `ParseHTML ${at(e.ts)} +${dur.toFixed(1)} ms`]);
      else if (e.name === 'RunTask' && e.tid === main && dur > 8) rows.push([e.ts, `main-thread task ${at(e.ts)} +${dur.toFixed(1)} ms`]);
      else if (['FunctionCall', 'Layout', 'UpdateLayoutTree', 'Paint', 'ParseAuthorStyleSheet'].includes(e.name) && e.tid === main && dur > 4) {
        rows.push([e.ts, `  ${e.name} ${at(e.ts)} +${dur.toFixed(1)} ms`]);
      }
      else if (['firstPaint', 'firstContentfulPaint', 'domContentLoadedEventEnd'].includes(e.name)) rows.push([e.ts, `${e.name} ${at(e.ts)}`]);
    }
    rows.sort((a, b) => a[0] - b[0]);
    for (const [, text] of rows) console.log(text);
    // The marks are on the page's clock, whose origin is navigation start too.
    for (const [k, v] of Object.entries(marks)) console.log(`${k} (page clock) ${v.toFixed(1)}`);
    await context.close();
  }
} finally {
  await browser.close();
  await server.close();
}
