// Export (issue 5) in real Chromium: Markdown to the clipboard, CSV / PNG / SVG
// downloads, and the print style sheet fitting the budget on one page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startAll, openPage, clipboardAfter } from './harness.mjs';

let env;
before(async () => {
  env = await startAll();
});
after(async () => {
  await env?.close();
});

async function downloadOf(page, selector) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const file = await dl.path();
  return { name: dl.suggestedFilename(), bytes: fs.readFileSync(file) };
}

// RFC 4180: quoted fields, doubled quotes, CRLF records.
function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else if (c === '\n') throw new Error(`bare LF at ${i}`);
    else field += c;
  }
  if (quoted) throw new Error('unterminated quote');
  if (field !== '' || row.length) throw new Error('last record has no CRLF');
  return rows;
}

// The table as the page shows it: header labels, cell texts, raw data-values.
async function domTable(page, id) {
  return page.evaluate((id) => {
    const t = document.querySelector(`table[data-table="${id}"]`);
    return {
      head: [...t.querySelectorAll('thead th')].map((th) => th.textContent),
      rows: [...t.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((c) => ({ text: c.textContent, value: c.dataset.value ?? null }))),
    };
  }, id);
}

// Exact text a blog author gets for the seed article's second model. Every number
// here is also pinned by the native tests (Qwen3-8B: 36 layers x 8 KV heads x 128
// x 2 B x 2 = 147,456 B = 144 KiB per token).
const QWEN3_8B_CONTEXT_MD = [
  'KV cache for one sequence, at the chosen KV dtype',
  '',
  'Model: Qwen/Qwen3-8B · GPU: NVIDIA GeForce RTX 4090 24 GB · Engine: vLLM · KV cache: bfloat16',
  '',
  '| Context | KV per sequence | KV × sequences | vs. weights |',
  '| :-- | --: | --: | --: |',
  '| 1K | 144.00 MiB | 144.00 MiB | 0.9 % |',
  '| 4K | 576.00 MiB | 576.00 MiB | 3.7 % |',
  '| 8K | 1.13 GiB | 1.13 GiB | 7.4 % |',
  '| 32K | 4.50 GiB | 4.50 GiB | 29.5 % |',
  '| 40K (model max) | 5.63 GiB | 5.63 GiB | 36.9 % |',
  '',
].join('\n');

test('Copy as Markdown of the Qwen3-8B context table gives the expected text exactly', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B', { clipboard: true });
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready');
  const md = await clipboardAfter(page, '[data-export-for="context"] [data-export="markdown"]');
  assert.equal(md, QWEN3_8B_CONTEXT_MD);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Markdown of every table has the page\'s header and cells', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B&ctx=16384&seqs=4', { clipboard: true });
  const ids = await page.$$eval('[data-export-for]', (els) => els.map((e) => e.dataset.exportFor).filter((id) => document.querySelector(`table[data-table="${id}"]`)));
  assert.ok(ids.includes('context') && ids.includes('compare'), ids.join());
  for (const id of ids) {
    const md = await clipboardAfter(page, `[data-export-for="${id}"] [data-export="markdown"]`);
    const dom = await domTable(page, id);
    // The caption and what the table is about, then the table.
    const all = md.trimEnd().split('\n');
    const lines = all.slice(all.findIndex((l) => l.startsWith('|')));
    assert.match(all.join('\n'), /Model: Qwen\/Qwen3-8B · GPU: .* · Engine: vLLM · KV cache: bfloat16/, id);
    assert.equal(lines.length, dom.rows.length + 2, id);
    const cells = (l) => l.slice(2, -2).split(' | ');
    assert.deepEqual(cells(lines[0]), dom.head, id);
    dom.rows.forEach((r, i) => assert.deepEqual(cells(lines[i + 2]), r.map((c) => c.text), `${id} row ${i}`));
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('Download CSV of every table: valid RFC 4180 with the core\'s raw numbers', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B&ctx=16384&seqs=4');
  const ids = await page.$$eval('[data-export-for] [data-export="csv"]', (els) => els.map((e) => e.parentElement.dataset.exportFor));
  assert.ok(ids.length >= 2, ids.join());
  for (const id of ids) {
    const { name, bytes } = await downloadOf(page, `[data-export-for="${id}"] [data-export="csv"]`);
    assert.equal(name, `kvbudget-Qwen-Qwen3-8B-${id}.csv`);
    const text = bytes.toString('utf8');
    assert.equal(text.charCodeAt(0), 0xfeff, 'UTF-8 BOM for spreadsheets');
    const rows = parseCsv(text.slice(1));
    const dom = await domTable(page, id);
    assert.equal(rows.length, dom.rows.length + 1, id);
    // The settings as columns of the same value on every row: model, GPU, engine, KV cache type.
    assert.equal(rows[0].length, dom.head.length + 4, id);
    assert.deepEqual(rows[0].slice(-4), ['Model', 'GPU', 'Engine', 'KV cache'], id);
    assert.deepEqual([rows[1].at(-4), rows[1].at(-2), rows[1].at(-1)], ['Qwen/Qwen3-8B', 'vLLM', 'bfloat16'], id);
    dom.rows.forEach((r, i) => {
      r.forEach((c, j) => {
        if (c.value !== null) assert.equal(rows[i + 1][j], c.value, `${id} row ${i} col ${j}`);
        else if (j === 0) assert.equal(rows[i + 1][j], c.text, `${id} row ${i} col ${j}`);
      });
    });
  }
  // The context table's numbers are exact bytes: 16K x 4 sequences of Qwen3-8B.
  const { bytes } = await downloadOf(page, '[data-export-for="context"] [data-export="csv"]');
  const rows = parseCsv(bytes.toString('utf8').slice(1));
  assert.deepEqual(rows[0].slice(0, 3), ['Context', 'KV per sequence (bytes)', 'KV × sequences (bytes)']);
  assert.deepEqual(rows[1].slice(0, 3), ['1K', String(147456 * 1024), String(147456 * 1024 * 4)]);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the chart downloads as a valid PNG and a valid SVG', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B');
  const png = await downloadOf(page, '[data-export-for="kv-vs-context"] [data-export="png"]');
  assert.equal(png.name, 'kvbudget-Qwen-Qwen3-8B-kv-vs-context.png');
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  assert.equal(png.bytes.toString('latin1', 12, 16), 'IHDR');
  const w = png.bytes.readUInt32BE(16);
  const hgt = png.bytes.readUInt32BE(20);
  assert.ok(w >= 240 && hgt >= 200, `${w}x${hgt}`);
  assert.equal(png.bytes.toString('latin1', png.bytes.length - 8, png.bytes.length - 4), 'IEND');

  const svg = await downloadOf(page, '[data-export-for="kv-vs-context"] [data-export="svg"]');
  assert.equal(svg.name, 'kvbudget-Qwen-Qwen3-8B-kv-vs-context.svg');
  const parsed = await page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    if (doc.querySelector('parsererror')) return { error: doc.querySelector('parsererror').textContent };
    const svgEl = doc.documentElement;
    return {
      root: svgEl.localName, ns: svgEl.namespaceURI,
      title: svgEl.querySelector('title')?.textContent,
      paths: svgEl.querySelectorAll('path').length,
      texts: [...svgEl.querySelectorAll('text')].map((t) => t.textContent),
      finite: [...svgEl.querySelectorAll('path')].every((p) => !/NaN|Infinity/.test(p.getAttribute('d'))),
    };
  }, svg.bytes.toString('utf8'));
  assert.equal(parsed.error, undefined);
  assert.equal(parsed.root, 'svg');
  assert.equal(parsed.ns, 'http://www.w3.org/2000/svg');
  assert.equal(parsed.title, 'KV cache vs. context length — Qwen/Qwen3-8B');
  const series = await page.evaluate(() => document.querySelectorAll('#sec-chart .u-legend .u-series').length - 1);
  assert.equal(parsed.paths, series, 'one path per series');
  assert.ok(parsed.finite);
  for (const label of ['KV cache', 'Context (tokens)']) assert.ok(parsed.texts.includes(label), label);
  assert.deepEqual(errors, []);
  await context.close();
});

for (const model of ['Qwen/Qwen3-8B', 'meta-llama/Llama-3.1-8B', 'Qwen/Qwen3-Next-80B-A3B-Thinking', 'google/gemma-3-4b-it']) test(`the print style sheet puts the budget of ${model} on one page`, async () => {
  const { page, context, errors } = await openPage(env, 'model=' + model);
  const hasBar = await page.evaluate(() => !!document.querySelector('.bar')?.offsetParent);
  await page.emulateMedia({ media: 'print' });
  const visible = await page.evaluate(() => ({
    metrics: [...document.querySelectorAll('[data-metric]')].every((e) => e.offsetParent !== null),
    bar: !!document.querySelector('.bar')?.offsetParent, // shown when the screen shows it
    share: document.querySelector('[data-role="share"]')?.offsetParent ?? null,
    buttons: [...document.querySelectorAll('button')].filter((b) => b.offsetParent !== null).length,
  }));
  assert.deepEqual(visible, { metrics: true, bar: hasBar, share: null, buttons: 0 });
  for (const format of ['A4', 'Letter']) {
    const pdf = await page.pdf({ format, printBackground: true });
    const pages = pdf.toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g) || [];
    assert.equal(pages.length, 1, `${format}: ${pages.length} pages`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});
