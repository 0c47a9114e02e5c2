#!/usr/bin/env node
// Where a context-slider step's time goes (issue 13), counted rather than timed alone: the
// machine the benchmark runs on is shared, so wall times swing; the work does not.
// Drives the built site like bench.mjs (real ArrowRight/ArrowLeft keys on the focused
// slider) under a Chromium trace and a V8 CPU profile, and prints per step:
//   - JS split from the CPU profile (self time): the core's WASM, the JSON answer's parse
//     and the input's stringify (kvbudget-api.js unwrap/call), the page's own JS (render:
//     building and patching the DOM), the rest (chart, GC, other)
//   - from the trace: style recalcs (UpdateLayoutTree, with elements recalculated), layouts
//     (with objects laid out), forced ones (run inside JS: a layout read after a write),
//     paint, and the main thread's busy time between the key and the painted frame
//   - DOM mutations (a MutationObserver: text nodes, attributes, nodes added / removed)
// Function names are readable only in an unminified site (KVB_SITE_DIR pointing at one);
// in the minified site the page's JS all counts as "page JS".
// STEPS (default 40).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../../tests/web/static-server.mjs';
import { launch } from '../../tests/web/browser.mjs';
import { installFrameProbe, installSliderProbe, installFrameEndMark } from './probes.mjs';
import { median, quantile } from './stats.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const site = path.resolve(root, process.env.KVB_SITE_DIR || 'site');
const STEPS = Number(process.env.STEPS || 40);

const server = await startStaticServer({ root: site });
const browser = await launch();
try {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 30000 });
  // The lazy chunk (chart, simulator view) arrives just after the first answer.
  await page.waitForFunction(() => !document.querySelector('[data-lazy]') && document.querySelector('.chart canvas'), null, { timeout: 30000 });
  await page.waitForTimeout(500);
  await page.evaluate(() => {
    window.__kvbMut = { text: 0, attrs: 0, added: 0, removed: 0, where: {} };
    const where = (r) => {
      const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      const at = el?.closest('[id]');
      const what = r.type === 'attributes' ? '@' + r.attributeName : r.type === 'childList' ? `+${r.addedNodes.length}-${r.removedNodes.length}` : 'text';
      return `${at ? '#' + at.id : '?'} ${el?.tagName.toLowerCase()}${el?.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : ''} ${what}`;
    };
    new MutationObserver((records) => {
      const m = window.__kvbMut;
      for (const r of records) {
        const k = where(r);
        m.where[k] = (m.where[k] || 0) + 1;
        if (r.type === 'characterData') m.text++;
        else if (r.type === 'attributes') m.attrs++;
        else {
          m.added += r.addedNodes.length;
          m.removed += r.removedNodes.length;
        }
      }
    }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
  await page.evaluate(installFrameProbe);
  await page.evaluate(installSliderProbe);
  await page.evaluate(installFrameEndMark);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
  const events = [];
  cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
  const traced = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.start', {
    transferMode: 'ReportEvents',
    traceConfig: { includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing', 'v8.execute',
      ...(process.env.INV ? ['disabled-by-default-devtools.timeline.invalidationTracking'] : [])] },
  });
  await cdp.send('Profiler.start');
  // Each step is marked in the trace, so its events can be told apart from the waits.
  for (let i = 0; i < STEPS; i++) {
    await page.evaluate((n) => {
      performance.mark('kvb-step-' + n);
      window.__kvbEndMark = 'kvb-end-' + n;
    }, i);
    await page.keyboard.press(Math.floor(i / 4) % 2 === 0 ? 'ArrowRight' : 'ArrowLeft');
    await page.evaluate(() => window.__kvbPending);
    // A key at the slider's end paints nothing new: its window closes here.
    await page.evaluate(() => window.__kvbEndMark && performance.mark(window.__kvbEndMark));
    await page.waitForTimeout(30);
  }
  const { profile } = await cdp.send('Profiler.stop');
  await cdp.send('Tracing.end');
  await traced;
  const steps = await page.evaluate(() => window.__kvbSteps);
  const mut = await page.evaluate(() => window.__kvbMut);

  // ---- the trace: per step window [mark kvb-step-i, mark kvb-end-i] on the renderer main thread
  const marks = events.filter((e) => e.cat?.includes('blink.user_timing') && /^kvb-(step|end)-\d+$/.test(e.name));
  const main = marks[0] ? { pid: marks[0].pid, tid: marks[0].tid } : null;
  const windows = [];
  for (let i = 0; i < STEPS; i++) {
    const a = marks.find((e) => e.name === 'kvb-step-' + i);
    const b = marks.find((e) => e.name === 'kvb-end-' + i);
    if (a && b) windows.push([a.ts, b.ts]);
  }
  const inWindow = (ts) => windows.some(([a, b]) => ts >= a && ts <= b);
  const mine = events.filter((e) => main && e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && inWindow(e.ts));
  const js = mine.filter((e) => ['FunctionCall', 'EventDispatch', 'FireAnimationFrame', 'TimerFire', 'RunMicrotasks', 'v8.callFunction'].includes(e.name));
  const insideJs = (e) => js.some((j) => j !== e && e.ts >= j.ts && e.ts + (e.dur || 0) <= j.ts + (j.dur || 0));
  const sum = (xs) => xs.reduce((a, e) => a + (e.dur || 0), 0) / 1000;
  const style = mine.filter((e) => e.name === 'UpdateLayoutTree');
  const layout = mine.filter((e) => e.name === 'Layout');
  const paint = mine.filter((e) => ['Paint', 'PaintImage', 'PrePaint', 'Layerize', 'Commit', 'UpdateLayer', 'CompositeLayers'].includes(e.name));
  const top = mine.filter((e) => e.name === 'RunTask' || e.name === 'ThreadControllerImpl::RunTask');
  const n = windows.length || 1;
  const per = (x) => (x / n).toFixed(2);
  const elements = style.reduce((a, e) => a + (e.args?.elementCount || e.args?.beginData?.elementCount || 0), 0);
  const objects = layout.reduce((a, e) => a + (e.args?.beginData?.dirtyObjects || 0), 0);

  // ---- the CPU profile: self time by bucket, over the step windows only
  const byId = new Map(profile.nodes.map((nd) => [nd.id, nd]));
  const bucket = (nd) => {
    const f = nd.callFrame;
    if (f.url.startsWith('wasm://') || f.url.endsWith('.wasm') || /^wasm-function/.test(f.functionName)) return 'wasm (core)';
    if (['unwrap'].includes(f.functionName)) return 'JSON.parse of the answer';
    if (['call', 'compute'].includes(f.functionName) && /kvbudget|app|calc/.test(f.url)) return 'stringify + embind call';
    if (f.functionName === '(garbage collector)') return 'GC';
    if (f.functionName === '(program)' || f.functionName === '(idle)') return 'other/idle';
    if (/uplot|chart/i.test(f.url) || /^(setData|redraw|drawSeries|_setScale|commit|_commit|paint|setLegend)$/.test(f.functionName)) return 'chart';
    if (f.url.includes('/app') || f.url.includes('chunk') || f.url.includes('.js')) return 'page JS (render, controls)';
    if (f.url === '' && f.functionName && !f.functionName.startsWith('(')) return 'DOM calls (native)';
    return 'other: ' + (f.functionName || '(anon)');
  };
  // Inclusive time per function (TOPI): each sample counts once for every function on its stack.
  const parentOf = new Map();
  for (const nd of profile.nodes) for (const c of nd.children || []) parentOf.set(c, nd.id);
  const inclMs = new Map();
  const profT0 = profile.startTime;
  const selfMs = new Map();
  const fnMs = new Map();
  const underMs = new Map();
  let t = profT0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    if (!inWindow(t)) continue;
    const nd = byId.get(profile.samples[i]);
    const dt = (profile.timeDeltas[i + 1] ?? 100) / 1000;
    const k = bucket(nd);
    if (k === 'other/idle' && nd.callFrame.functionName === '(idle)') continue;
    selfMs.set(k, (selfMs.get(k) || 0) + dt);
    const name = `${nd.callFrame.functionName || '(anon)'} ${path.basename(nd.callFrame.url || '')}:${nd.callFrame.lineNumber}`;
    fnMs.set(name, (fnMs.get(name) || 0) + dt);
    const seen = new Set();
    // UNDER=name: the functions called (at any depth) by the function of that name, inclusive.
    if (process.env.UNDER) {
      const stack = [];
      for (let p = nd.id; p !== undefined; p = parentOf.get(p)) stack.push(byId.get(p).callFrame);
      const at = stack.findIndex((f) => f.functionName === process.env.UNDER);
      const inside = new Set();
      for (const f of stack.slice(0, Math.max(at, 0))) inside.add(`${f.functionName || '(anon)'} ${path.basename(f.url || '')}:${f.lineNumber}`);
      if (at >= 0) for (const k of inside.size ? inside : ['(self)']) underMs.set(k, (underMs.get(k) || 0) + dt);
    }
    for (let p = nd.id; p !== undefined; p = parentOf.get(p)) {
      const f = byId.get(p).callFrame;
      const k = `${f.functionName || '(anon)'} ${path.basename(f.url || '')}:${f.lineNumber}`;
      if (seen.has(k)) continue;
      seen.add(k);
      inclMs.set(k, (inclMs.get(k) || 0) + dt);
    }
  }

  console.log(`slider step profile, ${windows.length} steps (${site}); load ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log(`  key -> painted: median ${median(steps).toFixed(1)} ms (wall; the machine's load shows here)`);
  console.log(`  main thread busy per step: ${per(sum(top))} ms`);
  const jsTotal = [...selfMs].filter(([k]) => k !== 'other/idle').reduce((a, [, v]) => a + v, 0);
  console.log(`  JS self time per step (CPU profile; shares of the JS sampled, which the load inflates evenly):`);
  for (const [k, v] of [...selfMs].sort((a, b) => b[1] - a[1])) if (k !== 'other/idle') console.log(`    ${k.padEnd(30)} ${per(v)} ms  ${((100 * v) / jsTotal).toFixed(0)}%`);
  console.log(`  style recalcs per step: ${per(style.length)} (${per(sum(style))} ms, ${per(elements)} elements)`);
  console.log(`  layouts per step: ${per(layout.length)} (${per(sum(layout))} ms, ${per(objects)} dirty objects); forced (inside JS): ${per(layout.filter(insideJs).length + style.filter(insideJs).length)}`);
  console.log(`  paint/commit per step: ${per(sum(paint))} ms`);
  console.log(`  DOM mutations per step: text ${per(mut.text)}, attributes ${per(mut.attrs)}, nodes added ${per(mut.added)}, removed ${per(mut.removed)}`);
  // Per step, 10th percentile and median: the low one is near what a step costs when the
  // machine's other work does not preempt it (the load inflates every duration).
  const phases = { 'JS (input handler + frame callbacks)': (e) => e.name === 'EventDispatch' || e.name === 'FireAnimationFrame',
    'style recalc': (e) => e.name === 'UpdateLayoutTree', layout: (e) => e.name === 'Layout',
    'paint (pre-paint, paint, layerize, commit)': (e) => ['Paint', 'PrePaint', 'Layerize', 'Commit'].includes(e.name) };
  // Steps the key did not move (the slider at its end) have no answer to paint.
  const answered = windows.filter(([a, b]) => mine.some((e) => e.ts >= a && e.ts <= b && e.name === 'Layout'));
  const p10 = (xs) => quantile(xs, 0.1);
  console.log(`  per step, trace durations (p10 / median over the ${answered.length} steps that changed the answer):`);
  for (const [name, f] of Object.entries(phases)) {
    const xs = answered.map(([a, b]) => mine.filter((e) => e.ts >= a && e.ts <= b && f(e)).reduce((acc, e) => acc + (e.dur || 0), 0) / 1000);
    console.log(`    ${name.padEnd(44)} ${p10(xs).toFixed(2)} / ${median(xs).toFixed(2)} ms`);
  }
  const frames = mine.filter((e) => e.name === 'FireAnimationFrame');
  const inputs = mine.filter((e) => e.name === 'EventDispatch' && ['input', 'keydown', 'keypress', 'keyup'].includes(e.args?.data?.type));
  console.log(`  animation-frame callbacks per step: ${per(frames.length)} (${per(sum(frames))} ms); key/input handlers ${per(sum(inputs))} ms`);
  // Who forced them: the JS frame the trace names, or the innermost JS event around it.
  const forcedBy = new Map();
  for (const e of [...layout, ...style].filter(insideJs)) {
    const st = e.args?.beginData?.stackTrace?.[0];
    const around = js.filter((j) => e.ts >= j.ts && e.ts <= j.ts + (j.dur || 0)).pop();
    const k = `${e.name} by ` + (st ? `${st.functionName || '(anon)'} ${path.basename(st.url)}:${st.lineNumber}:${st.columnNumber}` : `${around?.name} ${around?.args?.data?.functionName || ''} ${path.basename(around?.args?.data?.url || '')}:${around?.args?.data?.lineNumber ?? ''}`);
    forcedBy.set(k, (forcedBy.get(k) || 0) + 1);
  }
  for (const [k, v] of forcedBy) console.log(`    forced ${per(v)}/step: ${k}`);
  if (process.env.TRACE) {
    const byName = new Map();
    for (const e of mine) byName.set(e.name, (byName.get(e.name) || 0) + (e.dur || 0) / 1000);
    console.log('  trace events (inclusive ms per step):');
    for (const [k, v] of [...byName].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TRACE))) console.log(`    ${per(v).padStart(6)} ms  ${k}`);
  }
  if (process.env.PAINT) {
    const rects = new Map();
    for (const e of mine.filter((x) => x.name === 'Paint')) {
      const c = e.args?.data?.clip;
      const k = c ? `${Math.round(c[2] - c[0])}x${Math.round(c[5] - c[1])} at ${Math.round(c[0])},${Math.round(c[1])} layer ${e.args.data.layerId} node ${e.args.data.nodeId}` : JSON.stringify(e.args?.data);
      rects.set(k, (rects.get(k) || 0) + 1);
    }
    console.log('  paints (count over the run):');
    for (const [k, v] of [...rects].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`    ${v}  ${k}`);
    const lay = layout.map((e) => e.args?.endData?.layoutRoots?.length ?? e.args?.endData?.root?.length);
    console.log('  layout roots/step sample:', JSON.stringify(layout.slice(0, 3).map((e) => ({ b: e.args?.beginData, roots: e.args?.endData?.layoutRoots?.length }))));
  }
  if (process.env.INV) {
    // INV=n: what marked layout or paint dirty, by node and reason (invalidation tracking).
    const inv = new Map();
    for (const e of events.filter((x) => /InvalidationTracking$/.test(x.name) && inWindow(x.ts))) {
      const d = e.args?.data || {};
      const k = `${e.name.replace('InvalidationTracking', '')} ${d.nodeName || ''} ${d.reason || d.changedAttribute || d.changedClass || ''}`;
      inv.set(k, (inv.get(k) || 0) + 1);
    }
    console.log('  invalidations (per step):');
    for (const [k, v] of [...inv].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.INV))) console.log(`    ${per(v).padStart(6)}  ${k}`);
  }
  if (process.env.MUT) {
    console.log('  DOM mutations by place (per step):');
    for (const [k, v] of Object.entries(mut.where).sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.MUT))) console.log(`    ${per(v).padStart(6)}  ${k}`);
  }
  if (process.env.TOPI) {
    console.log('  top functions (inclusive, per step):');
    for (const [k, v] of [...inclMs].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOPI))) console.log(`    ${per(v).padStart(6)} ms  ${k}`);
  }
  if (process.env.UNDER) {
    console.log(`  under ${process.env.UNDER} (inclusive, per step):`);
    for (const [k, v] of [...underMs].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`    ${per(v).padStart(6)} ms  ${k}`);
  }
  if (process.env.TOP) {
    console.log('  top functions (self, per step):');
    for (const [k, v] of [...fnMs].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.TOP))) console.log(`    ${per(v).padStart(6)} ms  ${k}`);
  }
  await context.close();
} finally {
  await browser.close();
  await server.close();
}
