// "Compare with your log" on the real page (issue 12): a real log from
// tests/fixtures/engine-logs.md pasted into the panel gives, row by row, what
// `kvbudget check LOG --json` says of it (the page loads the bundled config the log
// names), in English and in Chinese; a paste that is not a log is refused in words.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startAll, openPage, root, fixturesDir } from './harness.mjs';

const cliPath = process.env.KVB_CLI || path.join(root, 'build/kvbudget');
const md = fs.readFileSync(path.join(root, 'tests/fixtures/engine-logs.md'), 'utf8');

// The first code block under "### <id>.", with the launch command its source gives.
function fixtureLog(id, command) {
  const at = md.indexOf(`### ${id}. `);
  const start = md.indexOf('```\n', at) + 4;
  return command + '\n' + md.slice(start, md.indexOf('```', start));
}

// V7: vLLM's not-enough-memory error for Qwen3-0.6B at gpu_memory_utilization 0.2.
const V7 = fixtureLog('V7', 'vllm serve Qwen/Qwen3-0.6B --gpu-memory-utilization 0.2');
// L4: llama.cpp b6699, gpt-oss-20b with -c 131072 -fa on: the non-SWA and SWA caches.
const L4 = fixtureLog('L4', 'llama-server -m gpt-oss-20b-mxfp4.gguf -ngl 99 --n-cpu-moe 99 -c 131072 -fa on --reasoning-format auto --jinja');

function cliCheck(text, extra = []) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-check-web-'));
  const file = path.join(dir, 'log.txt');
  fs.writeFileSync(file, text);
  try {
    return JSON.parse(execFileSync(cliPath, ['check', file, '--json', ...extra], { encoding: 'utf8', env: { ...process.env, KVBUDGET_CATALOG: fixturesDir } }));
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

async function compare(page, text) {
  await page.fill('[data-role="check-log"]', text);
  await page.click('[data-role="check-run"]');
  await page.waitForSelector('[data-role="check-result"] [data-role="check-table"], [data-role="check-refused"]', { timeout: 20000 });
}

// Each row as the page shows it: [line, printed, predicted, verdict, cause], and its data-*.
function rows(page) {
  return page.$$eval('[data-role="check-table"] tbody tr', (trs) => trs.map((tr) => ({
    cells: [...tr.querySelectorAll('td')].map((td) => td.textContent),
    match: tr.dataset.match,
    cause: tr.dataset.cause,
  })));
}

test('V7 and L4 pasted: every row is the CLI\'s, with the bundled config the log names', async () => {
  const { page, context, errors } = await openPage(env);
  await compare(page, V7);
  const want = cliCheck(V7);
  assert.equal(want.config, 'Qwen/Qwen3-0.6B');
  assert.equal(want.config_source, 'catalog');
  const got = await rows(page);
  assert.equal(got.length, 1);
  assert.deepEqual(got[0].cells, [
    '2',
    'To serve at least one request with the model\'s max seq len (40960), (4.38 GiB KV cache is needed, which is larger than the available KV cache memory (1.31 GiB). Based on the available memory, the estimated maximum model length is 12288. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.',
    want.lines[0].predicted,
    'agrees',
    want.lines[0].cause ? want.lines[0].cause.text : '',
  ]);
  assert.equal(got[0].cells[1], want.lines[0].printed);
  assert.match(want.lines[0].predicted, /\(4\.38 GiB KV cache is needed.*\(1\.31 GiB\).*is 12288\./);
  assert.equal(got[0].match, 'true');
  assert.equal(await page.textContent('[data-role="check-config"]'), 'Compared with the bundled config.json of Qwen/Qwen3-0.6B.');
  assert.equal(await page.textContent('[data-role="check-summary"]'), `${want.matched} matched, ${want.explained} explained, ${want.unexplained} unexplained`);

  await compare(page, L4);
  await page.waitForFunction(() => document.querySelectorAll('[data-role="check-table"] tbody tr').length === 4);
  const l4 = cliCheck(L4);
  assert.equal(l4.config, 'openai/gpt-oss-20b');
  const got4 = await rows(page);
  assert.equal(got4.length, l4.lines.length);
  got4.forEach((r, i) => {
    const l = l4.lines[i];
    assert.deepEqual(r.cells.slice(0, 3), [String(l.number), l.printed, l.predicted || 'no prediction'], `row ${i}`);
    assert.equal(r.match, String(l.match));
    assert.equal(r.cause, l.cause?.code || '');
  });
  assert.equal(got4[1].cells[1], 'llama_kv_cache: size = 3072.00 MiB (131072 cells,  12 layers,  1/1 seqs), K (f16): 1536.00 MiB, V (f16): 1536.00 MiB');
  assert.equal(got4[3].cells[1], 'llama_kv_cache: size =   18.00 MiB (   768 cells,  12 layers,  1/1 seqs), K (f16):    9.00 MiB, V (f16):    9.00 MiB');
  assert.ok(got4.every((r) => r.match === 'true'), 'L4 agrees line by line');
  assert.equal(await page.textContent('[data-role="check-engine"]'), 'Engine: llama.cpp');
  assert.deepEqual(errors, []);
  await context.close();
});

test('in Chinese: the same rows, the verdicts and headings in Chinese', async () => {
  const { page, context, errors } = await openPage(env, 'lang=zh-CN');
  assert.equal(await page.textContent('#check-h'), '与你的日志对照');
  await compare(page, V7);
  const got = await rows(page);
  assert.equal(got[0].cells[3], '一致');
  assert.equal(await page.textContent('[data-role="check-summary"]'), '1 行一致，0 行的差异有已知原因，0 行无法解释');
  // A language switch rebuilds the page: the paste and the answer stay, in the other language.
  await page.selectOption('#lang', 'en');
  await page.waitForFunction(() => document.querySelector('#check-h')?.textContent === 'Compare with your log');
  assert.equal((await rows(page))[0].cells[3], 'agrees');
  assert.equal(await page.inputValue('[data-role="check-log"]'), V7);
  assert.deepEqual(errors, []);
  await context.close();
});

test('not a log, markup, an out-of-memory error: refused or explained in words, nothing in the paste runs', async () => {
  const { page, context, errors } = await openPage(env);
  await compare(page, 'hello\nthis is not a log\n');
  assert.equal(await page.getAttribute('[data-role="check-refused"]', 'data-code'), 'check_not_engine_log');
  assert.equal(await page.textContent('[data-role="check-refused"]'),
    'Not a log kvbudget can read: none of the 2 lines is a vLLM or llama.cpp start-up line: kvbudget reads the logs of those two engines');
  await compare(page, '<img src=x onerror="window.__ran=1"><script>window.__ran=1</script>\n' + V7);
  assert.equal(await page.evaluate(() => window.__ran), undefined);
  assert.equal(await page.getAttribute('[data-role="check-notes"] li', 'data-code'), 'check_markup_ignored');
  assert.equal((await rows(page))[0].match, 'true');
  // O1 (vllm#783): PyTorch's older out-of-memory wording, explained without a config.
  await compare(page, fixtureLog('O1', '').trimStart());
  const oom = cliCheck(fixtureLog('O1', '').trimStart()).lines[0];
  const [row] = await rows(page);
  assert.deepEqual(row.cells.slice(1), [oom.printed, 'explained from its own numbers', 'out of memory',
    oom.cause.text + ' ' + oom.more_causes[0].text]);
  assert.match(row.cells[4], /16\.08 GiB was outside PyTorch.*1\.08 GiB was missing/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a log that names no bundled model: compared with the model the page shows, as --config does', async () => {
  const { page, context, errors } = await openPage(env, 'model=meta-llama/Llama-3.1-8B-Instruct');
  // C1 (vllm#19996): EAGLE decoding on Llama-3.1-8B-Instruct, the paste does not name the model.
  const c1 = fixtureLog('C1', '').trimStart();
  await compare(page, c1);
  assert.equal((await rows(page))[0].cause, 'check_no_model');
  // The page's own wording: its model box, not the CLI's --config.
  assert.equal((await rows(page))[0].cells[4],
    'the log does not name its model: compare with the model this page shows, or enter the model in the model box above and compare again');
  await page.click('[data-role="check-page-model"]');
  await page.waitForFunction(() => document.querySelector('[data-role="check-table"] tbody tr')?.dataset.cause === 'check_drafter_layers');
  const want = cliCheck(c1, ['--config', path.join(fixturesDir, 'meta-llama--Llama-3.1-8B-Instruct.json')]);
  const [row] = await rows(page);
  assert.deepEqual(row.cells.slice(1, 4), [want.lines[0].printed, 'GPU KV cache size: 422,944 tokens', 'differs by -3.03%']);
  assert.equal(want.lines[0].predicted, 'GPU KV cache size: 422,944 tokens');
  assert.equal(await page.textContent('[data-role="check-config"]'),
    'Compared with the config.json of meta-llama/Llama-3.1-8B-Instruct, the model this page shows.');
  assert.deepEqual(errors, []);
  await context.close();
});
