// kvbudget check on the page (issue 12): for every real log of tests/fixtures/engine-logs.md
// the WASM module, driven as the page drives it (checkLogModel names the bundled config,
// the page fetches it, checkLog compares), answers byte for byte what `kvbudget check LOG
// --json` prints with the same bundled catalog: the report, or the refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { core, cliPath, fixtures, fixturesDir, root } from './helpers.mjs';

const kvb = await core();
const catalog = fixtures();
const ids = catalog.map((c) => c.id);

// Every code block of the log sections (V*, L*, C*), with its heading; where the source
// gives the launch command (in backticks on the heading or the line before the block), the
// block once more with the command in front, as a user pastes it: the command names the model.
function fixtureLogs() {
  const md = fs.readFileSync(path.join(root, 'tests/fixtures/engine-logs.md'), 'utf8').split('\n');
  const out = [];
  let section = '';
  let heading = '';
  let block = null;
  let command = '';
  let k = 0;
  const commandIn = (line) => line.match(/`((?:vllm serve|llama-server|llama-cli) [^`]+)`/)?.[1] || '';
  for (const line of md) {
    if (block !== null) {
      if (line.startsWith('```')) {
        if (/^## (vLLM logs|llama\.cpp logs|More real logs|Out-of-memory messages|Speculative decoding in llama\.cpp logs|vLLM's not-enough-memory error by release)/.test(section)) {
          const text = block.join('\n') + '\n';
          out.push({ name: `${heading} #${k}`, text });
          if (command) out.push({ name: `${heading} #${k} with its command`, text: command + '\n' + text });
          k++;
        }
        block = null;
      } else block.push(line);
      continue;
    }
    if (line.startsWith('## ')) section = line;
    else if (line.startsWith('### ')) {
      heading = line.slice(4).split(' ')[0].replace(/\.$/, '');
      command = commandIn(line);
      k = 0;
    } else if (line.startsWith('```')) block = [];
    else if (commandIn(line)) command = commandIn(line);
  }
  return out;
}

// stdout of `kvbudget check FILE --json` (exit 1 for a log it cannot read still prints JSON).
function cliCheck(text, extra = []) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-check-')), 'log.txt');
  fs.writeFileSync(file, text);
  try {
    return { status: 0, stdout: execFileSync(cliPath, ['check', file, '--json', ...extra], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KVBUDGET_CATALOG: fixturesDir } }) };
  } catch (e) {
    if (e.code === 'ENOENT') throw new Error(`native CLI not found at ${cliPath}`);
    return { status: e.status, stdout: String(e.stdout) };
  } finally {
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

// The page's two steps, the second one's raw reply: {"ok":true,"value":<JSON>}.
function wasmCheck(text) {
  const { catalog_id: id } = kvb.checkLogModel(text, ids);
  const entry = catalog.find((c) => c.id === id);
  const config = entry ? fs.readFileSync(entry.path, 'utf8') : '';
  return kvb.m.checkLog(text, config, entry ? id : '', '', entry ? 'catalog' : '');
}

const logs = fixtureLogs();

test('engine-logs.md holds the logs this test walks', () => {
  const names = new Set(logs.map((l) => l.name.split(' ')[0]));
  for (const n of ['V1', 'V2', 'V6', 'V11', 'L1-L3', 'L4', 'L11', 'C1', 'C5', 'C9', 'C10', 'O1', 'O9', 'S1', 'S3']) assert.ok(names.has(n), n);
  assert.ok(logs.length >= 30, `${logs.length} logs`);
});

test('WASM checkLog == kvbudget check --json, byte for byte, for every fixture log', () => {
  let reports = 0;
  let refusals = 0;
  let catalogued = 0;
  for (const { name, text } of logs) {
    const want = cliCheck(text);
    const raw = wasmCheck(text);
    assert.equal(raw, '{"ok":true,"value":' + want.stdout.trimEnd() + '}', name);
    const v = JSON.parse(want.stdout);
    assert.equal(want.status, v.error ? 1 : 0, name);
    if (v.error) refusals++;
    else reports++;
    // Issue 12: each line of a log it reads is matched or has its cause named.
    for (const l of v.lines || []) assert.ok(l.match || l.cause?.code, `${name}, line ${l.number}: neither matched nor explained`);
    if (v.config_source === 'catalog') catalogued++;
  }
  // Both kinds of answer and the catalog path are exercised, not only refusals.
  assert.ok(reports >= 25, `${reports} reports`);
  assert.ok(refusals >= 2, `${refusals} refusals`);
  // V7 and L4 with their launch commands name bundled models (Qwen/Qwen3-0.6B, openai/gpt-oss-20b).
  assert.ok(catalogued >= 3, `${catalogued} logs compared with a bundled config`);
});

// The page's other path (its own model as the config) is the CLI's --config: every log
// against two real configs, so every line kind goes through the comparison, not only refusals.
test('WASM checkLog with a given config == kvbudget check --config, for every fixture log', () => {
  let compared = 0;
  for (const id of ['meta-llama/Llama-3.1-8B-Instruct', 'Qwen/Qwen3-8B']) {
    const entry = catalog.find((c) => c.id === id);
    const config = fs.readFileSync(entry.path, 'utf8');
    for (const { name, text } of logs) {
      const want = cliCheck(text, ['--config', entry.path]);
      assert.equal(kvb.m.checkLog(text, config, entry.path, '', 'argument'), '{"ok":true,"value":' + want.stdout.trimEnd() + '}', `${name} with ${id}`);
      if (!JSON.parse(want.stdout).error) compared += JSON.parse(want.stdout).lines.length;
    }
  }
  assert.ok(compared >= 100, `${compared} lines compared`);
});

test('checkLogModel names the bundled config as the CLI finds it', () => {
  const v6 = logs.find((l) => l.name.startsWith('V6'));
  assert.deepEqual(kvb.checkLogModel(v6.text, ids).catalog_id, JSON.parse(cliCheck(v6.text).stdout).config);
  assert.deepEqual(kvb.checkLogModel('', ids), { model: '', catalog_id: '' });
  assert.throws(() => kvb.checkLogModel('x', 'not a list'), (e) => e.code === 'bad_value');
});

test('a paste that is not a log: the refusal as a value, the same as the CLI\'s', () => {
  for (const [text, code] of [['', 'check_empty'], ['<html><body>hello</body></html>\n', 'check_markup_only'], ['just some text\nand more\n', 'check_not_engine_log']]) {
    const r = kvb.checkLog(text);
    assert.equal(r.error.detail.code, code, JSON.stringify(text));
    assert.equal(JSON.stringify(r), cliCheck(text).stdout.trimEnd());
  }
});

test('a config that is not a config is the call\'s error, not a report', () => {
  const v1 = logs.find((l) => l.name.startsWith('V1')).text;
  assert.throws(() => kvb.checkLog(v1, { text: '{"model_type": 3}', name: 'bad.json', source: 'argument' }), (e) => e.name === 'KvbudgetError');
});
