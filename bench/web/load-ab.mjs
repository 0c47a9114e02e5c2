#!/usr/bin/env node
// A/B of a cold load (issue 13) on a shared machine: a blank page and two built sites' default
// link (or QUERY), loaded in turn (A and B in alternating order), so the three see the same load
// at nearly the same moment. Each load as bench.mjs part 1 times it (wall time from page.goto in a
// fresh context with the cache off, until the page reports its load event or data-state=ready
// through an exposed binding), plus on the page's own clock (from navigation start): ready, the
// first paint, and data-core=live. Prints medians, quartiles and the ready/blank ratios.
// Usage: node bench/web/load-ab.mjs SITE_A SITE_B [RUNS] [QUERY]   (RUNS default 20)
import path from 'node:path';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { startStaticServer } from '../../tests/web/static-server.mjs';
import { launch } from '../../tests/web/browser.mjs';
import { coldPage } from './probes.mjs';
import { quantile as q } from './stats.mjs';

const [siteA, siteB] = process.argv.slice(2, 4).map((s) => path.resolve(s));
const RUNS = Number(process.argv[4] || 20);
const QUERY = process.argv[5] || '';
const BLANK = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>blank</title></head><body></body></html>';
const ms = (x) => x.toFixed(0).padStart(4);

async function coldLoad(browser, url, kind) {
  const { context, page, go } = await coldPage(browser, kind);
  const t0 = performance.now();
  const r = await go(url);
  await new Promise((res) => setTimeout(res, 100));
  const paint = await page.evaluate(() => performance.getEntriesByType('paint').find((p) => p.name === 'first-paint')?.startTime ?? NaN).catch(() => NaN);
  await context.close();
  await new Promise((res) => setTimeout(res, 500));
  return { wall: r.wall - t0, inPage: r.inPage, paint, live: r.live?.inPage };
}

const servers = [];
for (const site of [siteA, siteB]) servers.push(await startStaticServer({ root: site, extra: { '/blank.html': BLANK } }));
const browser = await launch();
const out = { blank: [], A: [], B: [] };
const load0 = os.loadavg()[0];
try {
  await coldLoad(browser, servers[0].url + 'blank.html', 'blank');
  for (const s of servers) await coldLoad(browser, s.url + QUERY, 'page');
  for (let i = 0; i < RUNS; i++) {
    out.blank.push(await coldLoad(browser, servers[0].url + 'blank.html', 'blank'));
    for (const k of i % 2 ? ['B', 'A'] : ['A', 'B']) out[k].push(await coldLoad(browser, servers[k === 'A' ? 0 : 1].url + QUERY, 'page'));
  }
} finally {
  await browser.close();
  for (const s of servers) await s.close();
}
const line = (xs) => `median ${ms(q(xs, 0.5))}  q1 ${ms(q(xs, 0.25))}  q3 ${ms(q(xs, 0.75))}`;
console.log(`${RUNS} runs each, interleaved; load average ${load0.toFixed(1)} -> ${os.loadavg()[0].toFixed(1)}; query '${QUERY}'`);
console.log(`blank  wall ${line(out.blank.map((x) => x.wall))} | in page ${line(out.blank.map((x) => x.inPage))}`);
for (const k of ['A', 'B']) {
  const xs = out[k];
  console.log(`${k} (${path.basename(k === 'A' ? siteA : siteB)}) ready wall ${line(xs.map((x) => x.wall))} | in page ${line(xs.map((x) => x.inPage))} | first paint ${line(xs.map((x) => x.paint))} | live ${line(xs.map((x) => x.live))}`);
  console.log(`   ratio ready/blank (wall medians) ${(q(xs.map((x) => x.wall), 0.5) / q(out.blank.map((x) => x.wall), 0.5)).toFixed(2)}x`);
}
// Paired by round: B - A of the loads made side by side.
const diff = out.A.map((a, i) => out.B[i].wall - a.wall);
console.log(`B - A ready wall, paired by round: ${line(diff)}`);
