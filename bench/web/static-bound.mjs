#!/usr/bin/env node
// What a page rendered at build time could win at most (issue 13, docs/page-load.md): the
// default link's DOM as it stands at data-state=ready, its scripts removed, served as a static
// page and loaded cold, interleaved with a blank page and the real page. Prints medians on the
// page's clock: the real page's ready against the static page's DOMContentLoaded, and both first
// contentful paints. The static page runs no JS, so it is a bound, not a design: a module would
// still have to adopt that DOM. Prints; asserts nothing.
//   node bench/web/static-bound.mjs [RUNS]   (default 16; KVB_SITE_DIR= another site)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../../tests/web/static-server.mjs';
import { launch } from '../../tests/web/browser.mjs';
import { coldPage } from './probes.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const site = path.resolve(root, process.env.KVB_SITE_DIR || 'site');
const RUNS = Number(process.argv[2] || 16);
const BLANK = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>blank</title></head><body></body></html>';
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const browser = await launch();
let server = await startStaticServer({ root: site });
let snapshot;
try {
  const context = await browser.newContext();
  // Cloned the moment data-state turns ready (a MutationObserver's callback), not when a poll
  // next looks: the sections built after the first paint are not part of the first answer.
  await context.addInitScript(() => {
    new MutationObserver((_, observer) => {
      if (document.body?.dataset.state !== 'ready') return;
      observer.disconnect();
      window.kvbAtReady = document.documentElement.cloneNode(true);
    }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-state'] });
  });
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => !!window.kvbAtReady);
  // Without the render-blocking expect link (its element was a script's neighbour) and the CSP
  // (it names the scripts by hash): a page of markup and its style sheet.
  snapshot = await page.evaluate(() => {
    const doc = window.kvbAtReady;
    for (const el of doc.querySelectorAll('script, link[rel=expect], link[rel=modulepreload], meta[http-equiv]')) el.remove();
    return '<!doctype html>' + doc.outerHTML;
  });
  await context.close();
} finally {
  await server.close();
}
server = await startStaticServer({ root: site, extra: { '/blank.html': BLANK, '/static.html': snapshot } });

async function coldLoad(url, kind) {
  const { context, page, go } = await coldPage(browser, kind);
  const r = await go(url);
  await new Promise((res) => setTimeout(res, 300));
  const times = await page.evaluate(() => ({
    fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
    parsed: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd,
  }));
  await context.close();
  return { end: r.inPage, ...times };
}

const out = { blank: [], page: [], static: [] };
try {
  await coldLoad(server.url + 'blank.html', 'blank');
  for (let i = 0; i < RUNS; i++) {
    out.blank.push(await coldLoad(server.url + 'blank.html', 'blank'));
    out.page.push(await coldLoad(server.url, 'page'));
    out.static.push(await coldLoad(server.url + 'static.html', 'blank'));
  }
} finally {
  await browser.close();
  await server.close();
}
const ms = (xs) => `${median(xs).toFixed(0)} ms`;
console.log(`${RUNS} cold loads each, interleaved; the static page: ${(snapshot.length / 1000).toFixed(1)} KB of HTML`);
console.log(`  blank page: load event ${ms(out.blank.map((x) => x.end))}`);
console.log(`  page:       data-state=ready ${ms(out.page.map((x) => x.end))}, first contentful paint ${ms(out.page.map((x) => x.fcp))}`);
console.log(`  static DOM: parsed (DOMContentLoaded) ${ms(out.static.map((x) => x.parsed))}, first contentful paint ${ms(out.static.map((x) => x.fcp))}`);
