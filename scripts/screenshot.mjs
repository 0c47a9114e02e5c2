#!/usr/bin/env node
// Regenerates docs/screenshot.png from the built site with the same browser
// tooling as the tests: `npm run build && node scripts/screenshot.mjs [out.png] [--dark] [--width=N]`.
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../tests/web/static-server.mjs';
import { launch } from '../tests/web/browser.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const out = path.resolve(args.find((a) => !a.startsWith('--')) || path.join(root, 'docs/screenshot.png'));
const dark = args.includes('--dark');
const width = Number((args.find((a) => a.startsWith('--width=')) || '--width=1280').split('=')[1]);
const query = (args.find((a) => a.startsWith('--query=')) || '--query=').slice('--query='.length);

const server = await startStaticServer({ root: path.join(root, 'site') });
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width, height: 900 }, colorScheme: dark ? 'dark' : 'light', deviceScaleFactor: 1 });
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(server.url + (query ? '?' + query : ''));
  await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 20000 });
  await page.waitForTimeout(200);
  // Off-screen cards skip rendering until scrolled to (styles.css); a whole-page picture needs them all.
  await page.addStyleTag({ content: 'section.card, .sim, .log-check { content-visibility: visible !important; }' });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  await page.screenshot({ path: out, fullPage: true });
  console.log(`screenshot: ${out} (state ${await page.getAttribute('body', 'data-state')})`);
} finally {
  await browser.close();
  await server.close();
}
