#!/usr/bin/env node
// What a page rendered at build time could win (issue 13, docs/page-load.md). Takes the default
// link's DOM the moment data-state turns ready (field values written into their attributes, as
// a build-time render would write them) and loads cold, interleaved with a blank page and the
// real page:
//   - static:         that DOM with its scripts removed, a page of markup and its style sheet
//                     (the bound: no JS at all);
//   - prefilled:      the real page with that DOM already in #app, so it is on screen before the
//                     module runs; the module then builds its own in its place (buildPage clears
//                     #app), so adopting the build's DOM is taken to cost what building it costs
//                     today; rendering still blocked until the module is parsed (as built);
//   - prefilled, unblocked: the same without the render-blocking expect link, so the browser
//                     may paint the prefilled DOM before the module runs.
// Prints medians on the page's clock: when the prefilled DOM was parsed (a mark just after it),
// ready (the module's), DOMContentLoaded and the first contentful paint. The CSP (it names the
// scripts by hash) is left out of every variant, the real page's included, so the mark can run.
// Prints; asserts nothing.
//   node bench/web/static-bound.mjs [RUNS]   (default 16; KVB_SITE_DIR= another site)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../../tests/web/static-server.mjs';
import { launch } from '../../tests/web/browser.mjs';
import { coldPage } from './probes.mjs';
import { median } from './stats.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const site = path.resolve(root, process.env.KVB_SITE_DIR || 'site');
const RUNS = Number(process.argv[2] || 16);
const BLANK = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>blank</title></head><body></body></html>';

const browser = await launch();
let server = await startStaticServer({ root: site });
let snapshot;
try {
  const context = await browser.newContext();
  // Taken the moment data-state turns ready (a MutationObserver's callback), not when a poll
  // next looks: the sections built after the first paint are not part of the first answer.
  await context.addInitScript(() => {
    new MutationObserver((_, observer) => {
      if (document.body?.dataset.state !== 'ready') return;
      observer.disconnect();
      for (const el of document.querySelectorAll('#app input, #app textarea')) if (el.type !== 'password') el.setAttribute('value', el.value);
      for (const el of document.querySelectorAll('#app select')) for (const o of el.options) o.toggleAttribute('selected', o.selected);
      window.kvbAtReady = { doc: document.documentElement.cloneNode(true), app: document.getElementById('app').innerHTML };
    }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-state'] });
  });
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => !!window.kvbAtReady);
  // Without the render-blocking expect link (its element was a script's neighbour) and the CSP:
  // a page of markup and its style sheet.
  snapshot = await page.evaluate(() => {
    const doc = window.kvbAtReady.doc;
    for (const el of doc.querySelectorAll('script, link[rel=expect], link[rel=modulepreload], meta[http-equiv]')) el.remove();
    return { html: '<!doctype html>' + doc.outerHTML, app: window.kvbAtReady.app };
  });
  await context.close();
} finally {
  await server.close();
}
const index = fs.readFileSync(path.join(site, 'index.html'), 'utf8').replace(/<meta http-equiv="Content-Security-Policy"[^>]*>/, '');
if (!index.includes('<div id="app">')) throw new Error('static-bound: index.html has no <div id="app">');
const prefilled = index.replace('<div id="app">', () => `<div id="app">${snapshot.app}</div><script>performance.mark('kvb-prefilled')</script><div hidden>`);
const variants = {
  page: index,
  static: snapshot.html,
  prefilled,
  'prefilled, unblocked': prefilled.replace(/<link rel="expect"[^>]*>/, ''),
};
const file = (name) => '/' + name.replace(/\W+/g, '-') + '.html';
const extra = { '/blank.html': BLANK };
for (const [name, html] of Object.entries(variants)) extra[file(name)] = html;
server = await startStaticServer({ root: site, extra });

async function coldLoad(url, kind) {
  const { context, page, go } = await coldPage(browser, kind);
  const r = await go(url);
  await new Promise((res) => setTimeout(res, 400));
  const times = await page.evaluate(() => ({
    fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
    prefilled: performance.getEntriesByName('kvb-prefilled')[0]?.startTime ?? NaN,
    parsed: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd,
  }));
  await context.close();
  return { end: r.inPage, ...times };
}

const out = { blank: [] };
for (const name of Object.keys(variants)) out[name] = [];
try {
  await coldLoad(server.url + 'blank.html', 'blank');
  for (let i = 0; i < RUNS; i++) {
    out.blank.push(await coldLoad(server.url + 'blank.html', 'blank'));
    for (const name of Object.keys(variants)) out[name].push(await coldLoad(server.url + file(name).slice(1), name === 'static' ? 'blank' : 'page'));
  }
} finally {
  await browser.close();
  await server.close();
}
const ms = (xs) => (xs.some(Number.isNaN) ? '   -' : `${median(xs).toFixed(0).padStart(4)}`);
console.log(`${RUNS} cold loads each, interleaved; medians on the page's clock (ms); the static page ${(snapshot.html.length / 1000).toFixed(1)} KB of HTML, #app at ready ${(snapshot.app.length / 1000).toFixed(1)} KB`);
console.log(`  blank page: load event ${ms(out.blank.map((x) => x.end))}`);
console.log('                         #app parsed  ready  DOMContentLoaded  first contentful paint');
for (const name of Object.keys(variants)) {
  const xs = out[name];
  // The static page has no module: its "ready" is its load event.
  console.log(`  ${name.padEnd(21)}  ${ms(xs.map((x) => x.prefilled))}         ${ms(xs.map((x) => x.end))}   ${ms(xs.map((x) => x.parsed))}              ${ms(xs.map((x) => x.fcp))}`);
}
