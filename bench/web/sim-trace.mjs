#!/usr/bin/env node
// Where a simulator Run's time goes in the page (issue 13): a Chromium trace of each Run, from
// the click to the first frame after the result is drawn, printed per thread (the page's main
// thread and the simulator's worker) as time summed by event name, plus the WebAssembly
// compile jobs that ran meanwhile (a function optimized during a Run ran slow until then).
// Prints; asserts nothing.
//   node bench/web/sim-trace.mjs [RUNS]   (KVB_SITE_DIR: another built site)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../../tests/web/static-server.mjs';
import { launch } from '../../tests/web/browser.mjs';
import { openSimView } from './pages.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const site = path.resolve(root, process.env.KVB_SITE_DIR || 'site');
const RUNS = Number(process.argv[2] || 2);
const CATEGORIES = ['toplevel', 'devtools.timeline', 'v8', 'v8.wasm', 'disabled-by-default-v8.wasm.detailed', 'blink.user_timing'];
const server = await startStaticServer({ root: site });
const browser = await launch();
try {
  const page = await browser.newPage();
  await openSimView(page, server.url);
  for (let run = 1; run <= RUNS; run++) {
    await browser.startTracing(page, { categories: CATEGORIES });
    const r = await page.evaluate(() => new Promise((resolve) => {
      const sec = document.querySelector('#sim');
      performance.mark('kvb-run');
      const t0 = performance.now();
      const obs = new MutationObserver(() => {
        if (!['done', 'error'].includes(sec.dataset.simState)) return;
        obs.disconnect();
        requestAnimationFrame(() => setTimeout(() => {
          performance.mark('kvb-drawn');
          resolve({ drawn: performance.now() - t0, timing: JSON.parse(sec.dataset.simTiming || '{}'), render: Number(sec.dataset.simRenderMs) });
        }, 0));
      });
      obs.observe(sec, { attributes: true, attributeFilter: ['data-sim-state'] });
      document.querySelector('[data-action="sim-run"]').click();
    }));
    await page.waitForTimeout(100);
    const events = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
    const mark = (name) => events.find((e) => e.name === name)?.ts;
    const t0 = mark('kvb-run');
    const t1 = mark('kvb-drawn');
    const threads = new Map(); // "pid:tid" -> name
    for (const e of events) if (e.name === 'thread_name') threads.set(`${e.pid}:${e.tid}`, e.args.name);
    const pid = events.find((e) => e.name === 'kvb-run').pid;
    const inRun = events.filter((e) => e.pid === pid && e.ts >= t0 && e.ts <= t1 && e.ph === 'X');
    const t = r.timing;
    console.log(`Run ${run}: drawn ${r.drawn.toFixed(1)} ms; worker: prepare ${t.prepareMs?.toFixed(1)}, simulation ${t.runMs?.toFixed(1)}, result ${t.resultMs?.toFixed(1)}; render ${r.render.toFixed(1)} ms`);
    const byThread = new Map();
    for (const e of inRun) {
      const name = threads.get(`${e.pid}:${e.tid}`) || String(e.tid);
      if (!byThread.has(name)) byThread.set(name, new Map());
      const m = byThread.get(name);
      const k = e.name;
      const v = m.get(k) || { n: 0, ms: 0 };
      v.n++;
      v.ms += (e.dur || 0) / 1000;
      m.set(k, v);
    }
    for (const [name, m] of byThread) {
      const top = [...m].filter(([, v]) => v.ms >= 1).sort((a, b) => b[1].ms - a[1].ms).slice(0, 12);
      if (!top.length) continue;
      console.log(`  ${name}: ` + top.map(([k, v]) => `${k} ${v.ms.toFixed(1)} ms (${v.n})`).join(', '));
    }
    // Events are nested (RunTask > FunctionCall > ...): the sums above overlap by design.
    const main = [...threads].find(([k, v]) => v === 'CrRendererMain' && k.startsWith(`${pid}:`))?.[0].split(':')[1];
    const long = inRun.filter((e) => String(e.tid) === main && e.name === 'RunTask' && e.dur > 3000);
    const jobs = inRun.filter((e) => /TopTier|CompileLazy/.test(e.name) && e.dur > 2000);
    for (const e of jobs) console.log(`    ${e.name} at +${((e.ts - t0) / 1000).toFixed(1)} ms: ${(e.dur / 1000).toFixed(1)} ms ${JSON.stringify(e.args || {})}`);
    // The page's own JS by function (devtools.timeline's FunctionCall carries its name).
    const fn = new Map();
    for (const e of inRun) {
      if (String(e.tid) !== main || !['FunctionCall', 'FireAnimationFrame', 'TimerFire', 'HandlePostMessage', 'EventDispatch'].includes(e.name)) continue;
      const d = e.args?.data || {};
      const k = `${e.name} ${d.functionName || d.type || ''} ${(d.url || '').split('/').pop()}:${d.lineNumber ?? ''}`;
      const v = fn.get(k) || { n: 0, ms: 0 };
      v.n++;
      v.ms += (e.dur || 0) / 1000;
      fn.set(k, v);
    }
    for (const [k, v] of [...fn].sort((a, b) => b[1].ms - a[1].ms).slice(0, 8)) console.log(`    ${k}: ${v.ms.toFixed(1)} ms (${v.n})`);
    for (const e of long) console.log(`    main task at +${((e.ts - t0) / 1000).toFixed(1)} ms: ${(e.dur / 1000).toFixed(1)} ms`);
  }
} finally {
  await browser.close();
  await server.close();
}
