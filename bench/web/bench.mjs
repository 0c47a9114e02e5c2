#!/usr/bin/env node
// Web benchmarks (prints numbers; asserts nothing). Needs a built site/ (npm run build).
//   1. navigation -> <body data-state="ready"> on localhost, cold cache (goal <= 500 ms)
//   2. bytes transferred with gzip, without the model catalog (goal <= 300 KB)
//   3. one full recompute in WASM after a control change (goal <= 1 ms), and the
//      whole change handler in the page (recompute + re-render), for context
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startStaticServer } from '../../tests/web/static-server.mjs';
import { launch } from '../../tests/web/browser.mjs';
import { loadKvbudget } from '../../wasm/kvbudget.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS = Number(process.env.RUNS || 10);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function pageLoad() {
  const server = await startStaticServer({ root: path.join(root, 'site') });
  const browser = await launch();
  const times = [];
  const rerender = [];
  let bytes = null;
  try {
    for (let i = 0; i < RUNS; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      // Record the moment data-state first becomes "ready", relative to navigation start.
      await page.addInitScript(() => {
        new MutationObserver((_, obs) => {
          if (document.body?.dataset.state === 'ready') {
            window.__readyAt = performance.now();
            obs.disconnect();
          }
        }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-state'] });
      });
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
      const urls = new Map();
      let total = 0;
      let catalog = 0;
      cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
      cdp.on('Network.loadingFinished', (e) => {
        const u = urls.get(e.requestId) || '';
        if (u.includes('/catalog/')) catalog += e.encodedDataLength;
        else total += e.encodedDataLength;
      });
      await page.goto(server.url);
      await page.waitForFunction(() => window.__readyAt !== undefined, null, { timeout: 20000 });
      times.push(await page.evaluate(() => window.__readyAt));
      // A control change: compute in WASM + re-render, synchronously in the change handler.
      rerender.push(await page.evaluate(() => {
        const el = document.querySelector('#ctl-ctx');
        let best = Infinity;
        for (let k = 0; k < 5; k++) {
          el.value = String(8192 + 1024 * k);
          const t0 = performance.now();
          el.dispatchEvent(new Event('change'));
          best = Math.min(best, performance.now() - t0);
        }
        return best;
      }));
      await page.waitForTimeout(100);
      if (i === 0) bytes = { total, catalog };
      await context.close();
    }
  } finally {
    await browser.close();
    await server.close();
  }
  return { times, bytes, rerender };
}

async function recompute() {
  const core = await loadKvbudget({ wasmBinary: fs.readFileSync(path.join(root, 'build-wasm/kvbudget.wasm')) });
  const out = [];
  for (const [file, id] of [
    ['meta-llama--Llama-3.1-8B.json', 'meta-llama/Llama-3.1-8B'],
    ['deepseek-ai--DeepSeek-V3.json', 'deepseek-ai/DeepSeek-V3'],
    ['Qwen--Qwen3-Next-80B-A3B-Thinking.json', 'Qwen/Qwen3-Next-80B-A3B-Thinking'],
  ]) {
    const m = core.parseConfig(fs.readFileSync(path.join(root, 'tests/fixtures/configs', file), 'utf8'), id);
    for (const engine of ['vllm', 'llamacpp']) {
      const input = { engine, context: 32768, seqs: 1, gpu: 'h100-sxm', gpuCount: 8 };
      for (let i = 0; i < 300; i++) m.compute({ ...input, context: 4096 + i });
      const samples = [];
      for (let r = 0; r < 15; r++) {
        const n = 200;
        const t0 = performance.now();
        for (let i = 0; i < n; i++) m.compute({ ...input, context: 4096 + i * 16 });
        samples.push((performance.now() - t0) / n);
      }
      out.push({ id, engine, ms: median(samples) });
    }
    m.release();
  }
  return out;
}

const rc = await recompute();
for (const r of rc) console.log(`recompute (WASM compute(), median) ${r.id} ${r.engine}: ${r.ms.toFixed(3)} ms  (goal <= 1 ms)`);
const { times, bytes, rerender } = await pageLoad();
console.log(`control change -> WASM recompute + page re-render (in the browser): median ${median(rerender).toFixed(1)} ms`);
console.log(`navigation -> data-state=ready, cold cache, ${times.length} runs: median ${median(times).toFixed(0)} ms, ` +
  `min ${Math.min(...times).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms  (goal <= 500 ms)`);
console.log(`bytes transferred (gzip) without the catalog: ${(bytes.total / 1024).toFixed(1)} KiB (${bytes.total} B)  (goal <= 300 KB); ` +
  `catalog requests: ${(bytes.catalog / 1024).toFixed(1)} KiB`);
