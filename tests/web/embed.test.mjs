// Embedding (issue 5) in real Chromium: a blog page served on ANOTHER localhost
// port pastes the snippet from "Copy embed code"; the sandboxed iframe works, posts
// its height, and embed-host.js sizes the frame, ignoring anyone else's messages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startAll, openPage, waitSettled, metrics, clipboardAfter } from './harness.mjs';

let env;
let host; // {url, set(path, html)}

function startHost() {
  const pages = new Map();
  const server = http.createServer((req, res) => {
    const body = pages.get(new URL(req.url, 'http://x').pathname);
    if (body === undefined) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}`,
    set: (p, html) => pages.set(p, html),
    close: () => new Promise((r) => server.close(r)),
  })));
}

// A blog post with a 640 px column; records every message it receives.
function blogPage(embedHtml, extra = '') {
  return `<!doctype html><html><head><meta charset="utf-8"><title>My blog</title></head>
<body style="margin:0;font-family:sans-serif">
<script>window.__msgs = []; addEventListener('message', (e) => __msgs.push({ origin: e.origin, data: e.data }));</script>
<h1>How much KV cache does my model need?</h1>
<div id="col" style="width:640px">${embedHtml}</div>
${extra}
</body></html>`;
}

before(async () => {
  env = await startAll();
  host = await startHost();
  assert.notEqual(new URL(host.url).origin, new URL(env.site.url).origin);
});
after(async () => {
  await host?.close();
  await env?.close();
});

async function embedFrame(page) {
  const el = await page.waitForSelector('iframe');
  let frame = null;
  for (let i = 0; i < 100 && !frame; i++) {
    frame = await el.contentFrame();
    if (!frame) await page.waitForTimeout(50);
  }
  await frame.waitForFunction(() => document.body?.dataset.state === 'ready' || document.body?.dataset.state === 'error', null, { timeout: 15000 });
  return { el, frame };
}

const contentHeight = (frame) => frame.evaluate(() => Math.ceil(document.getElementById('app').getBoundingClientRect().height));
const frameHeight = (page) => page.evaluate(() => Math.round(document.querySelector('iframe').getBoundingClientRect().height));

async function waitFrameFits(page, frame) {
  for (let i = 0; i < 100; i++) {
    const [c, f] = [await contentHeight(frame), await frameHeight(page)];
    if (c === f) return f;
    await page.waitForTimeout(50);
  }
  throw new Error(`iframe height ${await frameHeight(page)} never matched its content ${await contentHeight(frame)}`);
}

test('the copied snippet, pasted into a page on another port, works and sizes itself', async () => {
  const src = await openPage(env, 'model=Qwen/Qwen3-8B&ctx=8192', { clipboard: true });
  const expected = await metrics(src.page);
  const snippet = await clipboardAfter(src.page, '[data-action="copy-embed"]');
  await src.context.close();

  host.set('/post.html', blogPage(snippet));
  const context = await env.browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(host.url + '/post.html');
  const { frame } = await embedFrame(page);
  assert.equal(await frame.evaluate(() => document.body.dataset.state), 'ready');
  assert.deepEqual(await metrics(frame), expected);
  assert.equal(await page.getAttribute('iframe', 'sandbox'), 'allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox');

  const h1 = await waitFrameFits(page, frame);
  assert.notEqual(h1, 560, 'the snippet\'s initial height was replaced');
  assert.ok(await frame.evaluate(() => document.documentElement.scrollHeight <= window.innerHeight), 'no inner scrollbar');
  const msgs = await page.evaluate(() => window.__msgs.filter((m) => m.data?.type === 'kvbudget:resize'));
  assert.ok(msgs.length >= 1);
  assert.ok(msgs.every((m) => m.origin === new URL(env.site.url).origin));
  assert.equal(msgs.at(-1).data.height, h1);

  // A narrower column reflows the card: it gets taller, the frame follows.
  await page.evaluate(() => {
    document.getElementById('col').style.width = '360px';
  });
  await page.waitForFunction((h) => document.querySelector('iframe').getBoundingClientRect().height > h, h1, { timeout: 5000 });
  const h2 = await waitFrameFits(page, frame);
  assert.ok(h2 > h1, `${h2} > ${h1}`);
  assert.ok(await frame.evaluate(() => document.documentElement.scrollWidth <= 360), 'no horizontal overflow at 360 px');

  // A control change that adds content (llama.cpp shows K and V types) is followed too.
  await frame.selectOption('#ctl-engine', 'llamacpp');
  await waitSettled(frame);
  await waitFrameFits(page, frame);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the snippet lets the card use the clipboard: its copy buttons work inside the frame, no policy violation', async () => {
  const src = await openPage(env, 'model=Qwen/Qwen3-8B&ctx=8192', { clipboard: true });
  await src.page.click('.embed-options summary');
  await src.page.check('input[name="embed-panel"][value="engine"]');
  const snippet = await clipboardAfter(src.page, '[data-action="copy-embed"]');
  await src.context.close();
  host.set('/copy.html', blogPage(snippet));
  const context = await env.browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await context.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(m.text()));
  await page.goto(host.url + '/copy.html');
  assert.equal(await page.getAttribute('iframe', 'allow'), 'clipboard-write');
  const { frame } = await embedFrame(page);
  await frame.click('#sec-engine button.copy');
  await frame.waitForFunction(() => document.querySelector('#sec-engine button.copy').textContent === 'Copied');
  assert.deepEqual(logs.filter((l) => /permissions policy/i.test(l)), []);
  await context.close();
});

test('works in an iframe sandboxed exactly as the issue says; the link opens the full page', async () => {
  const srcUrl = `${env.site.url}?model=Qwen/Qwen3-8B&embed=1&lang=zh-CN`;
  host.set('/strict.html', blogPage(
    `<iframe src="${srcUrl}" title="kvbudget" style="border:0;width:100%" height="300" sandbox="allow-scripts allow-same-origin allow-popups"></iframe>\n` +
    `<script src="${env.site.url}embed-host.js" async></script>`));
  const context = await env.browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await context.newPage();
  await page.goto(host.url + '/strict.html');
  const { frame } = await embedFrame(page);
  assert.equal(await frame.evaluate(() => document.body.dataset.state), 'ready');
  assert.equal((await metrics(frame))['kv-bytes-per-token'], '147456');
  assert.equal(await frame.evaluate(() => document.documentElement.lang), 'zh-CN');
  assert.equal(await frame.textContent('[data-role="full-page"]'), '打开完整计算器 （在新标签页中打开） ↗');
  await waitFrameFits(page, frame);

  const [popup] = await Promise.all([context.waitForEvent('page'), frame.click('[data-role="full-page"]')]);
  await popup.waitForLoadState();
  await waitSettled(popup);
  assert.equal(await popup.getAttribute('body', 'data-state'), 'ready');
  assert.equal(await popup.isVisible('#model-input'), true, 'the full page, not the card');
  assert.equal((await metrics(popup))['kv-bytes-per-token'], '147456');
  assert.deepEqual(Object.fromEntries(new URL(popup.url()).searchParams), { model: 'Qwen/Qwen3-8B', lang: 'zh-CN' });
  await context.close();
});

test('embed-host.js ignores resize messages that do not come from a kvbudget frame', async () => {
  // Same message shape, but from the host page itself and from a frame on the host's origin.
  host.set('/other.html', '<!doctype html><body><script>parent.postMessage({ type: "kvbudget:resize", height: 9 }, "*");</script></body>');
  host.set('/mixed.html', blogPage(
    `<iframe id="kvb" src="${env.site.url}?embed=1" style="border:0;width:100%" height="300" sandbox="allow-scripts allow-same-origin allow-popups"></iframe>\n` +
    `<script src="${env.site.url}embed-host.js" async></script>\n<script src="${env.site.url}embed-host.js" async></script>`,
    `<iframe id="other" src="${host.url}/other.html" height="123" style="border:0"></iframe>`));
  const context = await env.browser.newContext({ viewport: { width: 1000, height: 700 } });
  const page = await context.newPage();
  await page.goto(host.url + '/mixed.html');
  const { frame } = await embedFrame(page);
  const fitted = await waitFrameFits(page, frame);
  await page.evaluate(() => window.postMessage({ type: 'kvbudget:resize', height: 11 }, '*'));
  await page.waitForFunction(() => window.__msgs.filter((m) => m.data?.height === 11 || m.data?.height === 9).length === 2);
  const heights = await page.evaluate(() => [...document.querySelectorAll('iframe')].map((f) => [f.id, Math.round(f.getBoundingClientRect().height)]));
  assert.deepEqual(heights, [['kvb', fitted], ['other', 123]]);
  await context.close();
});
