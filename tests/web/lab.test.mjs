// "Measured vs formula" on the real page (issue 12, the article's lab): runs pasted into the
// panel give the table `kvbudget lab RUNS --config ID --json` computes for the model the page
// shows (context, measured, increment, formula, deviation), the fitted slope beside the
// formula's and the intercept; the table copies as Markdown; mixed measures are refused in
// words; the Chinese page words it all.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startAll, openPage, root, fixturesDir, clipboardAfter } from './harness.mjs';

const cliPath = process.env.KVB_CLI || path.join(root, 'build/kvbudget');
const ID = 'meta-llama/Llama-3.1-8B-Instruct';
const WORKED = 'measure: rss\nweights 4352 MiB\n4096 5000 MiB\n8192 5530 MiB\n12288 6060 MiB\n16384 6620 MiB\n';
const MAC = 'measure: rss\n4096 5.31 GiB\n8192 5.12 GiB\n16384 6.02 GiB\n';

function cliLab(text) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-lab-web-'));
  const file = path.join(dir, 'runs.txt');
  fs.writeFileSync(file, text);
  try {
    return JSON.parse(execFileSync(cliPath, ['lab', file, '--config', ID, '--json'], { encoding: 'utf8', env: { ...process.env, KVBUDGET_CATALOG: fixturesDir } }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

let env;
before(async () => {
  env = await startAll();
});
after(async () => {
  await env?.close();
});

async function fit(page, text) {
  await page.waitForSelector('[data-role="lab-runs"]', { timeout: 20000 });
  await page.fill('[data-role="lab-runs"]', text);
  await page.click('[data-role="lab-run"]');
  await page.waitForSelector('[data-role="lab-result"] table[data-table="lab"], [data-role="lab-refused"]', { timeout: 20000 });
}

function tableRows(page) {
  return page.$$eval('table[data-table="lab"] tbody tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
}

test('the worked example: rows, fitted slope vs formula, intercept and runtime, as the CLI computes them', async () => {
  const { page, context, errors } = await openPage(env, `model=${ID}`, { clipboard: true });
  await fit(page, WORKED);
  const want = cliLab(WORKED);
  assert.equal(want.fit.deviation_percent, 5.27);
  assert.deepEqual(await tableRows(page), [
    ['4,096', '4.88 GiB', '—', '—', '—'],
    ['8,192', '5.40 GiB', '530.00 MiB', '512.00 MiB', '+3.52 %'],
    ['12,288', '5.92 GiB', '530.00 MiB', '512.00 MiB', '+3.52 %'],
    ['16,384', '6.46 GiB', '560.00 MiB', '512.00 MiB', '+9.38 %'],
  ]);
  assert.equal(await page.textContent('[data-role="lab-fit"]'),
    'Fitted: 134.75 KiB (137,984 B) per token; formula (KV cache): 128.00 KiB (131,072 B) per token; deviation +5.27 %.');
  assert.equal(await page.textContent('[data-role="lab-intercept"]'), 'Fixed part (the intercept: weights and runtime): 4.35 GiB.');
  assert.equal(await page.textContent('[data-role="lab-runtime"]'), 'Weight file 4.25 GiB, so runtime (intercept minus weights) 103.00 MiB.');
  const md = await clipboardAfter(page, '[data-export-for="lab"] [data-export="markdown"]');
  assert.equal(md, [
    '| Context (tokens) | Measured | Increment | Formula (KV) | Deviation |',
    '| --: | --: | --: | --: | --: |',
    '| 4,096 | 4.88 GiB | — | — | — |',
    '| 8,192 | 5.40 GiB | 530.00 MiB | 512.00 MiB | +3.52 % |',
    '| 12,288 | 5.92 GiB | 530.00 MiB | 512.00 MiB | +3.52 % |',
    '| 16,384 | 6.46 GiB | 560.00 MiB | 512.00 MiB | +9.38 % |',
    ''].join('\n'));
  assert.deepEqual(errors, []);
  await context.close();
});

test('RSS that falls on a Mac is marked and explained; mixed measures are refused by name', async () => {
  const { page, context, errors } = await openPage(env, `model=${ID}`);
  await fit(page, MAC);
  assert.deepEqual(await page.$$eval('table[data-table="lab"] tbody tr', (trs) => trs.map((tr) => tr.className)), ['', 'lab-falls', '']);
  const want = cliLab(MAC);
  assert.deepEqual(await page.$$eval('[data-role="lab-notes"] li', (lis) => lis.map((li) => li.textContent)), want.notes.map((n) => n.text));
  assert.match(want.notes[0].text, /mmap, always on a Mac/);
  await fit(page, '4096 5 GiB rss\n8192 6 GiB nvidia-smi\n');
  assert.equal(await page.getAttribute('[data-role="lab-refused"]', 'data-code'), 'lab_mixed_measures');
  assert.equal(await page.textContent('[data-role="lab-refused"]'),
    'one table takes one measure, and this one holds both maximum resident set size (RSS) and nvidia-smi memory.used: they count different memory, so measure every run the same way or make two tables');
  assert.deepEqual(errors, []);
  await context.close();
});

test('in Chinese: the panel, the fit and the mmap note', async () => {
  const { page, context, errors } = await openPage(env, `model=${ID}&lang=zh-CN`);
  await fit(page, MAC);
  assert.equal(await page.textContent('#lab-h'), '实测与公式对照');
  assert.match(await page.textContent('[data-role="lab-fit"]'), /^拟合值：每 token .+；公式（KV Cache）：每 token 128\.00 KiB（131,072 B）；偏差 /);
  assert.match(await page.textContent('[data-role="lab-notes"] li'), /llama\.cpp 以 mmap 映射权重文件/);
  assert.deepEqual(errors, []);
  await context.close();
});
