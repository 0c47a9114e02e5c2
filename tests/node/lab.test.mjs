// kvbudget lab on the page (issue 12): the WASM module's labTable answers byte for byte what
// `kvbudget lab RUNS --config ID --json` prints for the same runs, config and settings: the
// table, or the refusal (mixed measures, bad lines, too few runs, vLLM).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { core, cliPath, fixturesDir, fixtureText } from './helpers.mjs';

const kvb = await core();

function cliLab(text, id, flags) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-lab-')), 'runs.txt');
  fs.writeFileSync(file, text);
  try {
    return { status: 0, stdout: execFileSync(cliPath, ['lab', file, '--config', id, '--json', ...flags], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KVBUDGET_CATALOG: fixturesDir } }) };
  } catch (e) {
    if (e.code === 'ENOENT') throw new Error(`native CLI not found at ${cliPath}`);
    return { status: e.status, stdout: String(e.stdout) };
  } finally {
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

const WORKED = 'measure: rss\nweights 4352 MiB\n4096 5000 MiB\n8192 5530 MiB\n12288 6060 MiB\n16384 6620 MiB\n';
const MAC = 'measure: rss\n4096 5.31 GiB\n8192 5.12 GiB\n16384 6.02 GiB\nweights 4.58 GiB\n';
const TIME_L = [
  '$ /usr/bin/time -l llama-completion -m Llama-3.1-8B-Instruct-Q4_K_M.gguf -c 4096 -n 0 -p hi',
  '          4923056128  maximum resident set size',
  '$ /usr/bin/time -l llama-completion -m Llama-3.1-8B-Instruct-Q4_K_M.gguf -c 4096 -n 64 -p hi',
  '        2.10 real         0.91 user         1.02 sys',
  '          5469007872  maximum resident set size',
  '          5601000000  peak memory footprint',
  '$ /usr/bin/time -l llama-completion -m Llama-3.1-8B-Instruct-Q4_K_M.gguf -c 8192 -n 64 -p hi',
  '          6011543552  maximum resident set size',
  '          6140000000  peak memory footprint',
].join('\n') + '\n';

// [runs, catalog id, page settings, the same as CLI flags]
const CASES = [
  [WORKED, 'meta-llama/Llama-3.1-8B-Instruct', {}, []],
  [WORKED, 'meta-llama/Llama-3.1-8B-Instruct', { type_k: 'q8_0', type_v: 'q4_0' }, ['-ctk', 'q8_0', '-ctv', 'q4_0']],
  [MAC, 'meta-llama/Llama-3.1-8B-Instruct', {}, []],
  [TIME_L, 'meta-llama/Llama-3.1-8B-Instruct', {}, []],
  [TIME_L, 'meta-llama/Llama-3.1-8B-Instruct', { measure: 'footprint' }, ['--measure', 'footprint']],
  [WORKED, 'google/gemma-3-4b-it', {}, []],
  [WORKED, 'Qwen/Qwen3-8B', { engine: 'transformers' }, ['--engine', 'transformers']],
  [WORKED, 'Qwen/Qwen3-8B', { n_seq_max: 2, kv_unified: true }, ['-np', '2', '--kv-unified']],
  // Refusals: both faces give the same {"error"}.
  ['4096 5 GiB rss\n8192 6 GiB nvidia-smi\n', 'meta-llama/Llama-3.1-8B-Instruct', {}, []],
  ['4096 5 GiB\n8192 6 GiB\n', 'meta-llama/Llama-3.1-8B-Instruct', { measure: 'max_memory_reserved' }, ['--measure', 'max_memory_reserved']],
  ['measure: rss\n4096 5.31\n', 'meta-llama/Llama-3.1-8B-Instruct', {}, []],
  ['measure: rss\n4096 5.31 GiB\n', 'meta-llama/Llama-3.1-8B-Instruct', {}, []],
  ['', 'meta-llama/Llama-3.1-8B-Instruct', {}, []],
  [WORKED, 'meta-llama/Llama-3.1-8B-Instruct', { engine: 'vllm' }, ['--engine', 'vllm']],
];

test('WASM labTable == kvbudget lab --json, byte for byte', () => {
  let tables = 0;
  let refusals = 0;
  for (const [runs, id, settings, flags] of CASES) {
    const want = cliLab(runs, id, flags);
    const raw = kvb.m.labTable(runs, fixtureText(id), id, '', JSON.stringify(settings));
    const name = `${id} ${JSON.stringify(settings)} ${JSON.stringify(runs.slice(0, 30))}`;
    assert.equal(raw, '{"ok":true,"value":' + want.stdout.trimEnd() + '}', name);
    const v = JSON.parse(want.stdout);
    assert.equal(want.status, v.error ? 1 : 0, name);
    if (v.error) refusals++;
    else tables++;
  }
  assert.equal(tables, 9);
  assert.equal(refusals, 5);
});

test('the worked example through the wrapper: slope, intercept and deviation', () => {
  const r = kvb.labTable(WORKED, { text: fixtureText('meta-llama/Llama-3.1-8B-Instruct'), name: 'meta-llama/Llama-3.1-8B-Instruct' });
  assert.deepEqual(r.fit, { deviation_percent: 5.27, formula_bytes_per_token: 131072, intercept_bytes: 4671406080, slope_bytes_per_token: 137984 });
  assert.equal(r.runtime_bytes, 103 * 2 ** 20);
  assert.deepEqual(r.rows.map((x) => x.deviation_percent), [null, 3.52, 3.52, 9.38]);
});

test('bad settings from the page are refused by name', () => {
  assert.throws(() => kvb.labTable(WORKED, { text: fixtureText('Qwen/Qwen3-8B'), name: 'Qwen/Qwen3-8B' }, { ctk: 'q8_0' }), /lab settings: unknown key ctk/);
});
