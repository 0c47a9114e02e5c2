#!/usr/bin/env node
// A/B of a slider step (issue 13) by the main thread's CPU time, not wall time: on a shared
// machine under load (10-20 on 2 cores) the wall times of slider-ab.mjs swing by tens of ms,
// while the thread time the trace gives each event (tdur) moves far less. Two or more built
// sites, one page each, their steps interleaved one by one (as slider-ab.mjs does) under one
// browser-wide trace; a step is the key to the end of the frame that paints its answer (as
// bench.mjs times it: work a page leaves for after that frame is not the step's); prints per
// site, over the steps that changed the answer:
//   - thread CPU per phase (median and p90): JS (handlers, frame callbacks, timers), style,
//     layout, pre-paint, paint, layerize, commit
//   - the steps that flip the verdict (fits <-> does not fit) apart from the rest
//   - layout dirty objects per step (a count, the same on every run of the same page)
// The page is scrolled where the focused slider is (the focus scrolls it), as in bench.mjs.
// Usage: node bench/web/slider-cpu-ab.mjs SITE_A SITE_B [...] [rounds]  (a round: 8 steps
// each); W, H: the viewport (1280 x 720, Playwright's default, as bench.mjs).
import path from 'node:path';
import os from 'node:os';
import { launch } from '../../tests/web/browser.mjs';
import { openSliderPage } from './pages.mjs';
import { installFrameEndMark } from './probes.mjs';
import { quantile as q } from './stats.mjs';

const args = process.argv.slice(2);
const sites = args.filter((a) => !/^\d+$/.test(a)).map((s) => path.resolve(s));
const ROUNDS = Number(args.find((a) => /^\d+$/.test(a)) || 6);
const viewport = { width: Number(process.env.W || 1280), height: Number(process.env.H || 720) };
const PHASES = {
  js: ['EventDispatch', 'FireAnimationFrame', 'TimerFire', 'FunctionCall'],
  style: ['UpdateLayoutTree'],
  layout: ['Layout'],
  prepaint: ['PrePaint'],
  paint: ['Paint'],
  layerize: ['Layerize'],
  commit: ['Commit'],
};

const browser = await launch();
const sides = [];
try {
  for (const site of sites) {
    const { server, context, page } = await openSliderPage(browser, site, { viewport });
    await page.evaluate(installFrameEndMark);
    sides.push({ site, server, context, page, tag: `kvb${sides.length}`, verdicts: [], walls: [] });
  }
  // Tracing is the browser's, not a page's: one trace, each site's steps told apart by marks.
  const cdp = await sides[0].context.newCDPSession(sides[0].page);
  const events = [];
  cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
  await cdp.send('Tracing.start', { transferMode: 'ReportEvents', traceConfig: { includedCategories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing'] } });
  for (let i = 0; i < ROUNDS * 8; i++) {
    const key = Math.floor(i / 4) % 2 === 0 ? 'ArrowRight' : 'ArrowLeft';
    for (const s of i % 2 ? [...sides].reverse() : sides) {
      await s.page.bringToFront();
      await s.page.evaluate(([name, end]) => {
        performance.mark(name);
        window.__kvbEndMark = end;
      }, [`${s.tag}-step-${i}`, `${s.tag}-end-${i}`]);
      await s.page.keyboard.press(key);
      await s.page.evaluate(() => window.__kvbPending);
      // A key at the slider's end paints nothing new: its window closes here.
      await s.page.evaluate(() => window.__kvbEndMark && performance.mark(window.__kvbEndMark));
      // A key at the slider's end fires no input: no wall time for that step.
      const [verdict, wall] = await s.page.evaluate((n) => [document.querySelector('[data-role="verdict"]')?.dataset.verdict, window.__kvbSteps.length > n ? window.__kvbSteps.at(-1) : null], s.walls.filter((w) => w !== null).length);
      s.verdicts.push(verdict);
      s.walls.push(wall);
      await s.page.waitForTimeout(30);
    }
  }
  const done = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.end');
  await done;

  console.log(`slider CPU A/B ${viewport.width}x${viewport.height}, ${ROUNDS * 8} steps each, interleaved; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  for (const s of sides) {
    const steps = await s.page.evaluate(() => window.__kvbSteps);
    const mark = (name) => events.find((e) => e.name === name);
    const first = mark(`${s.tag}-step-0`);
    const thread = events.filter((e) => e.ph === 'X' && e.pid === first.pid && e.tid === first.tid);
    const per = Object.fromEntries([...Object.keys(PHASES), 'total'].map((k) => [k, []]));
    const flip = { cpu: [], wall: [], dirty: [] };
    const rest = { cpu: [], wall: [], dirty: [] };
    for (let i = 0; i < ROUNDS * 8; i++) {
      const a = mark(`${s.tag}-step-${i}`)?.ts;
      const b = mark(`${s.tag}-end-${i}`)?.ts;
      const inStep = thread.filter((e) => e.ts >= a && e.ts <= b);
      // A key that did not move the slider (at its end) has no answer to lay out.
      if (a === undefined || !inStep.some((e) => e.name === 'Layout')) continue;
      let total = 0;
      for (const [k, names] of Object.entries(PHASES)) {
        const mine = inStep.filter((e) => names.includes(e.name));
        // Outermost events only: a FunctionCall inside an EventDispatch is counted once.
        const outer = mine.filter((e) => !mine.some((o) => o !== e && o.ts <= e.ts && o.ts + o.dur >= e.ts + e.dur && (o.ts < e.ts || o.dur > e.dur)));
        const ms = outer.reduce((acc, e) => acc + (e.tdur ?? e.dur ?? 0), 0) / 1000;
        per[k].push(ms);
        total += ms;
      }
      per.total.push(total);
      const side = i > 0 && s.verdicts[i] !== s.verdicts[i - 1] ? flip : rest;
      side.cpu.push(total);
      if (s.walls[i] !== null) side.wall.push(s.walls[i]);
      side.dirty.push(inStep.filter((e) => e.name === 'Layout').reduce((acc, e) => acc + (e.args?.beginData?.dirtyObjects || 0), 0));
    }
    const line = (name, x) => `${name} (${x.cpu.length}): CPU median ${q(x.cpu, 0.5).toFixed(2)} ms, layout dirty objects median ${q(x.dirty, 0.5)}, wall median ${q(x.wall, 0.5).toFixed(1)} ms`;
    console.log(`  ${s.site}: wall key -> painted median ${q(steps, 0.5).toFixed(1)} p90 ${q(steps, 0.9).toFixed(1)} ms`);
    console.log(`    thread CPU per step, median (p90) ms: ${Object.entries(per).map(([k, xs]) => `${k} ${q(xs, 0.5).toFixed(2)} (${q(xs, 0.9).toFixed(2)})`).join('  ')}`);
    console.log(`    ${line('verdict flips', flip)}; ${line('other steps', rest)}`);
  }
} finally {
  for (const s of sides) await s.context.close();
  await browser.close();
  for (const s of sides) await s.server.close();
}
