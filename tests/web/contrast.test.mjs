// WCAG AA contrast of every visible text on the default view, light and dark theme:
// 4.5:1 for normal text, 3:1 for large text (>= 24px, or >= 18.66px bold).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startStaticServer } from './static-server.mjs';
import { launch } from './browser.mjs';
import { siteDir } from './harness.mjs';

let site, browser;

before(async () => {
  if (!fs.existsSync(path.join(siteDir, 'index.html'))) throw new Error(`${siteDir} is not built: run npm run build`);
  site = await startStaticServer({ root: siteDir });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await site?.close();
});

// Runs in the page: lowest-contrast texts, as [{text, ratio, need, fg, bg}].
function auditContrast() {
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[,\s/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const lum = ({ r, g, b }) => {
    const f = (v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a),
    a: 1,
  });
  // Effective background: composite the ancestors' backgrounds from the root down.
  const background = (el) => {
    const chain = [];
    for (let a = el; a; a = a.parentElement) chain.push(a);
    let bg = { r: 255, g: 255, b: 255, a: 1 };
    for (const a of chain.reverse()) {
      const c = parse(getComputedStyle(a).backgroundColor);
      if (c && c.a > 0) bg = over(c, bg);
    }
    return bg;
  };
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.textContent.trim();
    if (!text) continue;
    const el = n.parentElement;
    if (!el || el.closest('[hidden], details:not([open]) > :not(summary), canvas, svg, option, select, script, style')) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || Number(cs.opacity) === 0) continue;
    const fg = parse(cs.color);
    const bg = background(el);
    const ratio = (Math.max(lum(over(fg, bg)), lum(bg)) + 0.05) / (Math.min(lum(over(fg, bg)), lum(bg)) + 0.05);
    const size = parseFloat(cs.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(cs.fontWeight) >= 700);
    const need = large ? 3 : 4.5;
    if (ratio < need) out.push({ text: text.slice(0, 40), ratio: Math.round(ratio * 100) / 100, need, fg: cs.color, bg: JSON.stringify(bg) });
  }
  return out;
}

for (const scheme of ['light', 'dark']) {
  test(`WCAG AA text contrast, ${scheme} theme`, async () => {
    const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(site.url);
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    const low = await page.evaluate(auditContrast);
    assert.deepEqual(low, [], 'texts below AA contrast');
    await context.close();
  });
}
