#!/usr/bin/env node
// How much of the page's JS a link's first answer runs (issue 13): Chromium's coverage from
// navigation to data-state=ready, per script, split into the bytes of functions that ran and
// of those that never did (what a smaller first path could leave for after the first paint).
// A module's top level counts as run, so its string tables (web/i18n/en.json in the chunk)
// are "ran" whether or not a string is used. "gz alone" gzips each part by itself.
// Usage: node bench/web/js-coverage.mjs ['?embed=1&model=Qwen/Qwen3-8B&ctx=30000']  (KVB_SITE_DIR= another site)
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../../tests/web/static-server.mjs';
import { launch } from '../../tests/web/browser.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const site = path.resolve(root, process.env.KVB_SITE_DIR || 'site');
const query = process.argv[2] ?? '?embed=1&model=Qwen/Qwen3-8B&ctx=30000';
const gz = (s) => zlib.gzipSync(s, { level: 9 }).length;

const server = await startStaticServer({ root: site });
const browser = await launch();
try {
  const page = await browser.newPage();
  await page.coverage.startJSCoverage({ resetOnNavigation: false });
  await page.goto(server.url + query);
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 30000 });
  const cov = await page.coverage.stopJSCoverage();
  console.log(`JS run before the first answer of ${query || '/'}:`);
  for (const c of cov) {
    if (!/\.js$/.test(c.url)) continue;
    const src = c.source || '';
    const ran = new Uint8Array(src.length).fill(1);
    for (const f of c.functions) for (const r of f.ranges) if (r.count === 0) ran.fill(0, r.startOffset, r.endOffset);
    let yes = '';
    let no = '';
    for (let i = 0; i < src.length; i++) ran[i] ? (yes += src[i]) : (no += src[i]);
    console.log(`  ${path.basename(c.url)}: ${src.length} B (${gz(src)} gz); ran ${yes.length} B (${gz(yes)} gz alone), never ran ${no.length} B (${gz(no)} gz alone)`);
  }
} finally {
  await browser.close();
  await server.close();
}
