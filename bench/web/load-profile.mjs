#!/usr/bin/env node
// Where the main thread's time goes between navigation and data-state=ready (issue 13), summed
// over RUNS cold loads (default 5) and printed as medians: self time per trace event (the time in
// an event not spent in an event nested inside it: parsing the HTML, compiling and running the
// JS, style, layout, paint), the main thread's busy and idle time before the answer, and the ready
// mark. Prints; asserts nothing. With PROFILE=1 it also prints the page JS's heaviest functions
// from a V8 CPU profile (readable names need an unminified site: KVB_SITE_DIR).
//   node bench/web/load-profile.mjs [QUERY]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../../tests/web/static-server.mjs';
import { launch } from '../../tests/web/browser.mjs';
import { median } from './stats.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const site = path.resolve(root, process.env.KVB_SITE_DIR || 'site');
const query = process.argv[2] || '';
const RUNS = Number(process.env.RUNS || 5);
const server = await startStaticServer({ root: site });
const browser = await launch();

async function one(trace) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  await page.addInitScript(() => {
    new MutationObserver((_, obs) => {
      if (document.body?.dataset.state === 'ready') {
        performance.mark('kvb-ready');
        obs.disconnect();
      }
    }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-state'] });
  });
  const events = [];
  let traced = null;
  if (trace) {
    cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
    traced = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    await cdp.send('Tracing.start', {
      transferMode: 'ReportEvents',
      traceConfig: { includedCategories: ['toplevel', 'devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8', 'v8.execute', 'blink.user_timing', 'loading'] },
    });
  }
  if (process.env.PROFILE && trace) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
  }
  await page.goto(server.url + query);
  await page.waitForFunction(() => performance.getEntriesByName('kvb-ready').length, null, { timeout: 30000 });
  const ready = await page.evaluate(() => performance.getEntriesByName('kvb-ready')[0].startTime);
  let profile = null;
  if (process.env.PROFILE && trace) profile = (await cdp.send('Profiler.stop')).profile;
  if (trace) {
    await cdp.send('Tracing.end');
    await traced;
  }
  await context.close();
  return { ready, events, profile };
}

try {
  await one(false);
  const sums = {};
  const readies = [];
  const busy = [];
  const busyCpu = [];
  const cpuSums = {};
  const fns = {};
  const incl = {};
  for (let r = 0; r < RUNS; r++) {
    const { ready, events, profile } = await one(true);
    readies.push(ready);
    const nav = events.find((e) => e.name === 'navigationStart' && String(e.args?.data?.documentLoaderURL || '').startsWith(server.url));
    const mark = events.find((e) => e.name === 'kvb-ready');
    if (!nav || !mark) continue;
    const main = events.find((e) => e.name === 'ParseHTML' && e.pid === nav.pid)?.tid;
    const end = mark.ts;
    // Complete events of the page's main thread up to the mark, nested by time.
    const xs = events.filter((e) => e.pid === nav.pid && e.tid === main && e.ph === 'X' && e.ts >= nav.ts && e.ts < end)
      .sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const self = {};
    const selfCpu = {};
    const stack = [];
    let top = 0;
    let topCpu = 0;
    for (const e of xs) {
      while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
      const parent = stack.at(-1);
      const d = Math.min(e.dur, end - e.ts);
      // Thread (CPU) time, tdur, swings far less than wall time on a loaded machine.
      const c = e.tdur ?? 0;
      if (parent) {
        self[parent.name] = (self[parent.name] || 0) - d;
        selfCpu[parent.name] = (selfCpu[parent.name] || 0) - c;
      } else {
        top += d;
        topCpu += c;
      }
      self[e.name] = (self[e.name] || 0) + d;
      selfCpu[e.name] = (selfCpu[e.name] || 0) + c;
      stack.push(e);
    }
    for (const [k, v] of Object.entries(self)) (sums[k] ||= []).push(v / 1000);
    for (const [k, v] of Object.entries(selfCpu)) (cpuSums[k] ||= []).push(v / 1000);
    busy.push(top / 1000);
    busyCpu.push(topCpu / 1000);
    if (profile) {
      const byId = new Map(profile.nodes.map((n) => [n.id, n]));
      const dt = profile.timeDeltas;
      const t = new Map();
      // Samples up to the ready mark only (the profile's clock is the trace's).
      let ts = profile.startTime;
      profile.samples.forEach((id, i) => {
        ts += dt[i];
        if (ts <= end) t.set(id, (t.get(id) || 0) + (dt[i + 1] || 0));
      });
      // Inclusive time: each sample's time goes to every function on its stack once.
      const parent = new Map();
      for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
      for (const [id, us] of t) {
        const seen = new Set();
        for (let p = id; p !== undefined; p = parent.get(p)) {
          const f = byId.get(p).callFrame;
          const k = `${f.functionName || '(anon)'} ${f.url.split('/').pop()}:${f.lineNumber}`;
          if (seen.has(k)) continue;
          seen.add(k);
          incl[k] = (incl[k] || 0) + us / 1000 / RUNS;
        }
      }
      for (const [id, us] of t) {
        const n = byId.get(id).callFrame;
        const k = `${n.functionName || '(anon)'} ${n.url.split('/').pop()}:${n.lineNumber}`;
        fns[k] = (fns[k] || 0) + us / 1000 / RUNS;
      }
    }
  }
  console.log(`navigation -> data-state=ready (page clock), ${RUNS} cold loads: median ${median(readies).toFixed(1)} ms [${readies.map((x) => x.toFixed(0)).join(' ')}]`);
  console.log(`main thread before ready: busy (wall) median ${median(busy).toFixed(1)} ms, CPU (thread time) median ${median(busyCpu).toFixed(1)} ms`);
  const med = (v) => median(v.concat(Array(RUNS - v.length).fill(0)));
  const rows = Object.entries(sums).map(([k, v]) => [k, med(v), med(cpuSums[k] || [])]).filter(([, v, c]) => v >= 0.5 || c >= 0.5).sort((a, b) => b[2] - a[2]);
  console.log('  self time per event, medians:                  wall      CPU');
  for (const [k, v, c] of rows) console.log(`  ${k.padEnd(40)} ${v.toFixed(1).padStart(8)} ${c.toFixed(1).padStart(8)} ms`);
  if (process.env.PROFILE) {
    console.log('heaviest functions (self, mean per load, navigation to ready):');
    for (const [k, v] of Object.entries(fns).sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`  ${v.toFixed(1).padStart(6)} ms ${k}`);
    console.log('heaviest functions (inclusive, mean per load):');
    for (const [k, v] of Object.entries(incl).sort((a, b) => b[1] - a[1]).slice(0, 50)) console.log(`  ${v.toFixed(1).padStart(6)} ms ${k}`);
  }
} finally {
  await browser.close();
  await server.close();
}
