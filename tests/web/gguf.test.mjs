// GGUF repos on the page (issue 10): the ids and spellings llama.cpp users paste, the quant
// picker from the Hub's file list, the header read by growing Range requests (and a server
// that ignores Range, whose download the page must stop), each failure with its own message,
// and the numbers equal to the CLI on the same header.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startAll, openPage, metrics, root } from './harness.mjs';
import { qwen3_8b_q4km } from './gguf-fixture.mjs';

const cliPath = process.env.KVB_CLI || path.join(root, 'build/kvbudget');
const en = JSON.parse(fs.readFileSync(path.join(root, 'web/i18n/en.json'), 'utf8'));
function msg(key, params = {}) {
  return en[key].replace(/\{(\w+)\}/g, (m, k) => (params[k] === undefined ? m : String(params[k])));
}

let env;
let ggufPath;
before(async () => {
  env = await startAll({ hubTimeoutMs: 5000 });
  // The same header as a local file of the published size (sparse: only the header is written).
  const g = qwen3_8b_q4km();
  ggufPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-gguf-')), 'Qwen3-8B-Q4_K_M.gguf');
  const fd = fs.openSync(ggufPath, 'w');
  fs.writeSync(fd, g.header);
  fs.ftruncateSync(fd, g.size);
  fs.closeSync(fd);
});
after(async () => {
  await env?.close();
  if (ggufPath) fs.rmSync(path.dirname(ggufPath), { recursive: true, force: true });
});

function cli(args) {
  return JSON.parse(execFileSync(cliPath, [...args, '--json'], { encoding: 'utf8' }));
}

async function command(page) {
  return page.textContent('[data-role="command"]');
}

test('Qwen/Qwen3-8B-GGUF: Q4_K_M by default, its header by growing ranges, the CLI\'s numbers, llama-server -hf', async () => {
  const before = { ...env.hub.ggufSent };
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B-GGUF&gpu=rtx-4090&ctx=32768');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready', await page.textContent('[data-role="error"]'));
  assert.deepEqual(errors, []);
  // The picker lists the repo's GGUF files with the Hub's sizes (decimal GB), not the projector.
  const options = await page.$$eval('[data-role="quant"] option', (os) => os.map((o) => [o.value, o.textContent]));
  assert.deepEqual(options, [['Q4_K_M', 'Q4_K_M — 5.02 GB'], ['Q8_0', 'Q8_0 — 8.71 GB']]);
  assert.equal(await page.inputValue('[data-role="quant"]'), 'Q4_K_M');
  // The 2.8 MB header took several ranges (512 KiB first, then what the core asked for), not the 5 GB file.
  const ranges = env.hub.ggufSent.ranges - before.ranges;
  assert.ok(ranges >= 3 && ranges <= 6, `ranges: ${ranges}`);
  // Each range at least doubles what was read, so at most twice the header crosses the wire.
  const sent = env.hub.ggufSent.bytes - before.bytes;
  assert.ok(sent >= 2800017 && sent < 2 * 2800017, `sent ${sent}`);
  const want = cli(['budget', ggufPath, '--engine', 'llamacpp', '--gpu', 'rtx-4090', '--max-model-len', '32768', '--hf', 'Qwen/Qwen3-8B-GGUF:Q4_K_M']);
  const m = await metrics(page);
  assert.equal(Number(m['weights-bytes']), want.metrics['weights-bytes']);
  assert.equal(Number(m['total-bytes']), want.metrics['total-bytes']);
  assert.equal(Number(m['max-context']), want.metrics['max-context']);
  assert.equal(Number(m['kv-bytes-total']), want.metrics['kv-bytes-total']);
  assert.equal(want.budget.weights.bytes, 5021827072); // the file's tensors: llama.cpp's "file size"
  assert.equal(await command(page), want.budget.command);
  assert.match(want.budget.command, /^llama-server -hf Qwen\/Qwen3-8B-GGUF:Q4_K_M -c 32768 -np 1 -ngl 99$/);
  // The address follows a frame or a quiet moment later (main.js writeUrl): wait for it.
  await page.waitForFunction(() => new URL(location.href).searchParams.get('model') === 'Qwen/Qwen3-8B-GGUF:Q4_K_M');
  assert.match(await page.textContent('[data-role="source"]'), /Qwen3-8B-Q4_K_M\.gguf in Qwen\/Qwen3-8B-GGUF \(5\.02 GB on the Hub\)/);
  await context.close();
});

test('the spellings llama.cpp and ollama users paste, and picking another quant', async () => {
  const { page, context } = await openPage(env, 'gpu=rtx-4090');
  for (const text of ['hf.co/unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL', 'ollama run hf.co/unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL', 'unsloth/Qwen3-8B-GGUF:ud-q4_k_xl']) {
    await page.fill('#model-input', text);
    await page.press('#model-input', 'Enter');
    await page.waitForFunction(() => document.body.dataset.state !== 'loading', null, { timeout: 15000 });
    assert.equal(await page.getAttribute('body', 'data-state'), 'ready', text);
    assert.equal(await page.inputValue('[data-role="quant"]'), 'UD-Q4_K_XL', text);
    assert.match(await command(page), /^llama-server -hf unsloth\/Qwen3-8B-GGUF:UD-Q4_K_XL /, text);
  }
  await page.selectOption('[data-role="quant"]', 'Q4_K_M');
  await page.waitForFunction(() => document.querySelector('[data-role="command"]')?.textContent.includes(':Q4_K_M '), null, { timeout: 15000 });
  // The address follows after the frame (main.js writeUrl), so wait for it.
  await page.waitForURL((u) => u.searchParams.get('model') === 'unsloth/Qwen3-8B-GGUF:Q4_K_M', { timeout: 5000 });
  // A link to the file itself.
  await page.fill('#model-input', 'https://huggingface.co/Qwen/Qwen3-8B-GGUF/blob/main/Qwen3-8B-Q8_0.gguf');
  await page.press('#model-input', 'Enter');
  await page.waitForFunction(() => document.querySelector('[data-role="command"]')?.textContent.includes('Qwen/Qwen3-8B-GGUF:Q8_0'), null, { timeout: 15000 });
  await context.close();
});

// What the page itself reads of a 200 answer to a GGUF file (a body its hub fetch got), and
// whether it cancelled that read.
function recordWholeReads() {
  const got = (window.__wholeRead = { bytes: 0, cancelled: false });
  const bodies = new WeakSet();
  const readers = new WeakSet();
  const fetch0 = window.fetch;
  window.fetch = async function (url, ...rest) {
    const res = await fetch0.call(this, url, ...rest);
    if (/\.gguf$/.test(new URL(String(url), location.href).pathname) && res.status === 200 && res.body) bodies.add(res.body);
    return res;
  };
  const getReader = ReadableStream.prototype.getReader;
  ReadableStream.prototype.getReader = function (...args) {
    const reader = getReader.apply(this, args);
    if (bodies.has(this)) readers.add(reader);
    return reader;
  };
  const read = ReadableStreamDefaultReader.prototype.read;
  ReadableStreamDefaultReader.prototype.read = async function () {
    const r = await read.call(this);
    if (readers.has(this) && r.value) got.bytes += r.value.byteLength;
    return r;
  };
  const cancel = ReadableStreamDefaultReader.prototype.cancel;
  ReadableStreamDefaultReader.prototype.cancel = function (...args) {
    if (readers.has(this)) got.cancelled = true;
    return cancel.apply(this, args);
  };
}

// What the page read is counted in the page: the bytes the server wrote are not a measure of
// it. While the page waits for the core between two reads, Chromium goes on reading the
// body into its own buffers (up to ~64 MB on localhost, in well under a second; measured:
// 11-68 MB written for the page's 3-4.4 MB) and so do the kernel's socket buffers, as far
// as the time to the cancel allows.
test('a server that ignores Range: the page reads the 200 stream only as far as the header and stops', async () => {
  const before = { ...env.hub.ggufSent };
  const { page, context } = await openPage(env, 'model=norange/Qwen3-8B-GGUF&gpu=rtx-4090', { init: recordWholeReads });
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready', await page.textContent('[data-role="error"]'));
  assert.equal(env.hub.ggufSent.whole - before.whole, 1);
  // The 5 GB body is read as far as the 2.8 MB header: the page asks the core after each
  // growth and reads on to at most twice what it had, plus a chunk (Chromium hands over at
  // most 2 MiB at a time), then cancels.
  const header = qwen3_8b_q4km().header.length;
  const read = await page.evaluate(() => window.__wholeRead);
  assert.ok(read.bytes >= header && read.bytes < 8 * 1024 * 1024, `read ${read.bytes} of the 200 body (header ${header})`);
  assert.equal(read.cancelled, true, 'the page cancelled its read');
  // And the download stops: the server sees the client go away before the file's end.
  for (let waited = 0; env.hub.ggufSent.stopped - before.stopped < 1; waited += 20) {
    assert.ok(waited < 15000, `the server is still sending after 15 s (${env.hub.ggufSent.bytes - before.bytes} bytes)`);
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.match(await page.textContent('[data-role="source"]'), /ignored range requests/);
  await context.close();
});

test('each GGUF failure has its own message', async () => {
  const cases = [
    ['empty/Nothing-GGUF', msg('hub.noGguf', { id: 'empty/Nothing-GGUF' })],
    ['unsloth/Qwen3-8B-GGUF:Q2_K', msg('hub.noQuant', { id: 'unsloth/Qwen3-8B-GGUF', quant: 'Q2_K', quants: 'Q4_K_M, UD-Q4_K_XL' })],
    ['ggated/Qwen3-8B-GGUF:Q4_K_M', msg('hub.gated', { id: 'ggated/Qwen3-8B-GGUF', status: 401 })],
  ];
  for (const [query, text] of cases) {
    const { page, context } = await openPage(env, 'model=' + encodeURIComponent(query));
    assert.equal(await page.getAttribute('body', 'data-state'), 'error', query);
    assert.equal(await page.textContent('[data-role="error"]'), text, query);
    await context.close();
  }
  // The core's own refusals, in the page's words.
  for (const [query, pattern] of [['trunc/Qwen3-8B-GGUF', /trunc|ends|short/i], ['notgguf/Fake-GGUF', /not a GGUF/i]]) {
    const { page, context } = await openPage(env, 'model=' + encodeURIComponent(query));
    assert.equal(await page.getAttribute('body', 'data-state'), 'error', query);
    assert.match(await page.textContent('[data-role="error"]'), pattern, query);
    await context.close();
  }
});

// The GGUF reader comes with the views chunk: when that did not load, the error said "This config
// could not be used", of a config that was never read.
test('a GGUF repo when the views chunk did not load: the model could not be loaded, and why', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B-GGUF&gpu=rtx-4090', { abort: /\/views-[^/]*\.js$/ });
  assert.equal(await page.getAttribute('body', 'data-state'), 'error');
  assert.match(await page.textContent('[data-role="error"]'), /^Qwen\/Qwen3-8B-GGUF could not be loaded: Failed to fetch dynamically imported module: http:\/\/127\.0\.0\.1:\d+\/views-\w+\.js$/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a file whose header cannot be read: the base model the card names, with the file\'s quant and size, said so', async () => {
  const { page, context } = await openPage(env, 'model=nofile/Qwen3-8B-GGUF&gpu=rtx-4090');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready', await page.textContent('[data-role="error"]'));
  const body = await page.textContent('body');
  assert.match(body, /The header of Qwen3-8B-Q4_K_M\.gguf could not be read from the Hub, so this is Qwen\/Qwen3-8B's config\.json/);
  assert.match(body, /the file itself is 5\.0\d GB/);
  assert.equal(await page.inputValue('[data-role="quant"]'), 'Q4_K_M');
  assert.match(await command(page), /^llama-server -hf nofile\/Qwen3-8B-GGUF:Q4_K_M /);
  await context.close();
});


// {policyName: {cliKey: raw number}} from the simulator's comparison table (as sim.test.mjs reads it).
async function simRows(page) {
  return page.evaluate(() => {
    const table = document.querySelector('[data-table="sim-compare"]');
    const keys = table.closest('[data-columns]').dataset.columns.split(',');
    return [...table.querySelectorAll('tbody tr')].map((tr) => {
      const row = {};
      [...tr.children].forEach((cell, j) => {
        if (j > 0) row[keys[j]] = Number(cell.dataset.value);
      });
      return row;
    });
  });
}

test('a GGUF repo runs in the simulator: the worker reads the same header, the CLI\'s numbers; --fit as the CLI predicts it', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B-GGUF&gpu=rtx-4090&ctx=4096');
  assert.equal(await page.getAttribute('body', 'data-state'), 'ready', await page.textContent('[data-role="error"]'));
  // llama.cpp's automatic fit: the core's lines, as the CLI prints them for the same header.
  const want = cli(['budget', ggufPath, '--engine', 'llamacpp', '--gpu', 'rtx-4090', '--max-model-len', '4096', '--hf', 'Qwen/Qwen3-8B-GGUF:Q4_K_M']);
  assert.equal(want.budget.llamacpp.fit.outcome, 'unchanged');
  assert.equal(await page.textContent('[data-role="fit-log"]'), want.budget.llamacpp.fit.log_lines.join('\n'));
  await page.fill('#sim-req', '200');
  await page.press('#sim-req', 'Tab');
  await page.click('[data-action="sim-run"]');
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#sim')?.dataset.simState), null, { timeout: 120000 });
  assert.equal(await page.$eval('#sim', (e) => e.dataset.simState), 'done', await page.textContent('[data-role="sim-error"]'));
  const rows = await simRows(page);
  const sim = JSON.parse(execFileSync(cliPath, ['simulate', ggufPath, '--gpu', 'rtx-4090', '--max-model-len', '4096', '--policy', 'all', '--requests', '200', '--json'], {
    encoding: 'utf8', env: { ...process.env, KVBUDGET_TRACES: path.join(root, 'data/traces') },
  }));
  assert.equal(rows.length, sim.policies.length);
  rows.forEach((row, i) => {
    for (const [k, v] of Object.entries(row)) assert.equal(v, sim.policies[i][k], `${sim.policies[i].policy} ${k}`);
  });
  assert.deepEqual(errors, []);
  await context.close();
});
