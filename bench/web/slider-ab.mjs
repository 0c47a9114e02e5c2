#!/usr/bin/env node
// A/B of a slider step (issue 13) on a shared machine: two built sites, one page each, their
// steps interleaved one by one, so both see the same load at nearly the same moment and the
// difference of the two is the change's, not the machine's. Each step as bench.mjs times it
// (key -> end of the frame that paints the answer), plus the input handler's own time.
// Usage: node bench/web/slider-ab.mjs SITE_A SITE_B [rounds]  (a round: 8 steps each).
import path from 'node:path';
import os from 'node:os';
import { launch } from '../../tests/web/browser.mjs';
import { openSliderPage } from './pages.mjs';
import { quantile as q } from './stats.mjs';

const [siteA, siteB] = process.argv.slice(2, 4).map((s) => path.resolve(s));
const ROUNDS = Number(process.argv[4] || 8);

const browser = await launch();
const sides = [];
try {
  for (const site of [siteA, siteB]) {
    const { server, context, page } = await openSliderPage(browser, site);
    // The page's own input handler: a capture listener starts a clock, a bubbling one on
    // the window (after the slider's own) stops it.
    await page.evaluate(() => {
      window.__kvbHandler = [];
      const slider = document.querySelector('#ctl-ctx-slider');
      let t0 = 0;
      slider.addEventListener('input', () => (t0 = performance.now()), true);
      window.addEventListener('input', () => window.__kvbHandler.push(performance.now() - t0));
    });
    sides.push({ site, server, context, page });
  }
  for (let i = 0; i < ROUNDS * 8; i++) {
    const key = Math.floor(i / 4) % 2 === 0 ? 'ArrowRight' : 'ArrowLeft';
    for (const s of i % 2 ? [...sides].reverse() : sides) {
      await s.page.bringToFront();
      await s.page.keyboard.press(key);
      await s.page.evaluate(() => window.__kvbPending);
      await s.page.waitForTimeout(30);
    }
  }
  console.log(`slider A/B, ${ROUNDS * 8} steps each, interleaved; load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  for (const [name, s] of [['A', sides[0]], ['B', sides[1]]]) {
    const steps = await s.page.evaluate(() => window.__kvbSteps);
    const handler = await s.page.evaluate(() => window.__kvbHandler);
    console.log(`  ${name} ${s.site}: key -> painted p10 ${q(steps, 0.1).toFixed(1)} median ${q(steps, 0.5).toFixed(1)} p90 ${q(steps, 0.9).toFixed(1)} ms; input handler p10 ${q(handler, 0.1).toFixed(2)} median ${q(handler, 0.5).toFixed(2)} ms (${steps.length} steps)`);
  }
} finally {
  for (const s of sides) await s.context.close();
  await browser.close();
  for (const s of sides) await s.server.close();
}
