// Shared setup of the node tests: the built WASM module (through the same wrapper
// the page uses) and the native CLI they are compared against.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadKvbudget } from '../../wasm/kvbudget.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const fixturesDir = path.join(root, 'tests/fixtures/configs');
export const cliPath = process.env.KVB_CLI || path.join(root, 'build/kvbudget');

export function fixtures() {
  return fs.readdirSync(fixturesDir).filter((f) => f.endsWith('.json')).sort().map((file) => {
    const base = file.slice(0, -5);
    const i = base.indexOf('--');
    return { file, path: path.join(fixturesDir, file), id: base.slice(0, i) + '/' + base.slice(i + 2) };
  });
}

// A fixture config's text by its Hub id ("Qwen/Qwen3-8B" -> Qwen--Qwen3-8B.json).
export function fixtureText(id) {
  return fs.readFileSync(path.join(fixturesDir, id.replace('/', '--') + '.json'), 'utf8');
}

export function core() {
  return loadKvbudget({ wasmBinary: fs.readFileSync(path.join(root, 'build-wasm/kvbudget.wasm')) });
}

// {ok: true, json} or {ok: false, status, stderr}
export function cli(args) {
  try {
    const out = execFileSync(cliPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { ok: true, json: JSON.parse(out) };
  } catch (e) {
    if (e.code === 'ENOENT') throw new Error(`native CLI not found at ${cliPath}: build it with cmake first (or set KVB_CLI)`);
    return { ok: false, status: e.status, stderr: String(e.stderr) };
  }
}
