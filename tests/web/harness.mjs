// Shared setup for browser tests: the built site served on localhost with a
// kvbudget.config.json that points the page at the fake hub, plus Debian's
// Chromium. Builds on static-server.mjs, fake-hub.mjs and browser.mjs.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from './static-server.mjs';
import { startFakeHub } from './fake-hub.mjs';
import { launch } from './browser.mjs';
import { execFileSync } from 'node:child_process';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const fixturesDir = path.join(root, 'tests/fixtures/configs');
// Same variable as scripts/build-site.mjs, so a private build can be tested.
// `kvbudget simulate CONFIG ARGS --json` on a fixture config, with the bundled traces.
export function simulateCli(fixture, args) {
  const cli = process.env.KVB_CLI || path.join(root, 'build/kvbudget');
  return JSON.parse(execFileSync(cli, ['simulate', path.join(fixturesDir, fixture + '.json'), ...args, '--json'], {
    encoding: 'utf8', env: { ...process.env, KVBUDGET_TRACES: path.join(root, 'data/traces') },
  }));
}

export const siteDir = path.resolve(root, process.env.KVB_SITE_DIR || 'site');

// hold: the static server's (static-server.mjs), to serve a file late.
export async function startAll({ hubTimeoutMs = 1500, refuse = [], hold = null } = {}) {
  if (!fs.existsSync(path.join(siteDir, 'index.html'))) throw new Error(`${siteDir} is not built: run npm run build`);
  const hub = await startFakeHub({ fixturesDir, refuse });
  const site = await startStaticServer({
    root: siteDir,
    extra: { '/kvbudget.config.json': JSON.stringify({ hubUrl: hub.url, hubTimeoutMs }) },
    hubUrl: hub.url,
    hold,
  });
  const browser = await launch();
  return {
    hub, site, browser,
    close: async () => {
      await browser.close();
      await site.close();
      await hub.close();
    },
  };
}

// Ready with the calculator module running (data-core="live"): the default link's first
// answer is painted from the build (prerender.js) before the module is there, and a test
// that changes a control wants the module's answer at once.
export async function waitSettled(page) {
  await page.waitForFunction(() => (document.body.dataset.state === 'ready' && document.body.dataset.core !== 'loading') || document.body.dataset.state === 'error', null, { timeout: 15000 });
}

// A fresh context (own clipboard permissions, locale) and page, settled.
// Collects script errors so tests can assert there were none. init: a script run in the
// page before its own (context.addInitScript). touch: a phone's touch screen (page.tap).
// abort: a RegExp of the requests that fail as on a broken network (context.unroute(abort) lets them through again).
export async function openPage(env, query = '', { viewport = { width: 1280, height: 900 }, locale, clipboard = false, init = null, touch = false, abort = null } = {}) {
  const context = await env.browser.newContext({ viewport, locale, acceptDownloads: true, ...(touch ? { hasTouch: true, isMobile: true } : {}) });
  if (clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(env.site.url).origin });
  if (init) await context.addInitScript(init);
  if (abort) await context.route(abort, (r) => r.abort());
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(env.site.url + (query ? '?' + query.replace(/^\?/, '') : ''));
  await waitSettled(page);
  return { page, context, errors };
}

// Every headline number, keyed by data-metric.
export async function metrics(page) {
  return page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-metric]')].map((e) => [e.dataset.metric, e.dataset.value])));
}

// Clicks a copy button and returns what it put on the clipboard (the context needs
// openPage(..., {clipboard: true})).
export async function clipboardAfter(page, selector) {
  await page.evaluate(() => navigator.clipboard.writeText(''));
  await page.click(selector);
  await page.waitForFunction(async () => (await navigator.clipboard.readText()) !== '', null, { timeout: 5000 });
  return page.evaluate(() => navigator.clipboard.readText());
}

// id -> value of every control of the page (inputs and selects named ctl-*).
export async function controlValues(page) {
  return page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[id^="ctl-"]')].filter((e) => 'value' in e).map((e) => [e.id, e.value])));
}
