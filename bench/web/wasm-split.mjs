#!/usr/bin/env node
// How small a first module could be (issue 13): the calculator module instrumented with
// wasm-split (binaryen), one workload run on it, and the module split into the functions that
// workload called (what a link's first answer would need) and the rest. Prints both halves'
// bytes and gzip -9: if the first half is not much smaller than the whole, splitting cannot
// bring an off-grid link's bytes down (docs/wasm-size.md).
// Usage: node bench/web/wasm-split.mjs [one|bundled] [FILE.wasm]
//   one:     Qwen/Qwen3-8B, vLLM, one GPU, one context (the least a first answer calls)
//   bundled: every bundled model, vLLM and llama.cpp, three GPUs, two contexts
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import createModule from '../../build-wasm/kvbudget-calc.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const mode = process.argv[2] || 'one';
const wasm = path.resolve(process.argv[3] || path.join(root, 'build-wasm/kvbudget-calc.wasm'));
const catalogDir = path.join(root, 'site/catalog');
if (!['one', 'bundled'].includes(mode) || !fs.existsSync(catalogDir)) {
  console.error('usage: node bench/web/wasm-split.mjs [one|bundled] [FILE.wasm]  (after npm run build: it reads site/catalog)');
  process.exit(2);
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-split-'));
const at = (f) => path.join(dir, f);
execFileSync('wasm-split', ['--instrument', wasm, '-o', at('instrumented.wasm')]);

// The instrumented module under the release glue; the instance is kept for __write_profile.
let instance;
const bytes = fs.readFileSync(at('instrumented.wasm'));
const m = await createModule({
  instantiateWasm(imports, done) {
    WebAssembly.instantiate(bytes, imports).then((r) => done((instance = r.instance), r.module));
    return {};
  },
});
const call = (f, ...args) => {
  const owned = [];
  const c = [];
  for (const a of args) {
    if (typeof a !== 'string') {
      c.push(a);
      continue;
    }
    const n = m.lengthBytesUTF8(a);
    const p = m._malloc(n + 1);
    owned.push(p);
    m.stringToUTF8(a, p, n + 1);
    c.push(p, n);
  }
  const out = JSON.parse(m.UTF8ToString(f(...c)));
  owned.forEach((p) => m._free(p));
  return out;
};

const one = mode === 'one';
const files = one ? ['Qwen--Qwen3-8B.json'] : fs.readdirSync(catalogDir).filter((f) => f !== 'index.json');
let computes = 0;
for (const f of files) {
  const { ok, value } = call(m._kvb_parse_config, fs.readFileSync(path.join(catalogDir, f), 'utf8'), f.replace('--', '/').replace(/\.json$/, ''), '');
  if (!ok) throw new Error(`${f} was not read`);
  const { handle } = value;
  for (const engine of one ? ['vllm'] : ['vllm', 'llamacpp']) {
    for (const gpu of one ? ['rtx-4090'] : ['rtx-4090', 'h100-80g', 'rtx-3090']) {
      for (const context of one ? [30000] : [30000, 131072]) {
        // A refusal (an engine that does not run the model) is an answer too: its code counts.
        call(m._kvb_compute, handle, JSON.stringify({ engine, context, seqs: 1, gpu, gpu_count: 1 }));
        computes++;
      }
    }
  }
  call(m._kvb_release_model, handle);
}
const size = 1 << 20;
const buf = m._malloc(size);
const len = instance.exports.__write_profile(buf, size);
fs.writeFileSync(at('profile'), m.HEAPU8.subarray(buf, buf + len));
execFileSync('wasm-split', [wasm, '--enable-mutable-globals', '--profile=' + at('profile'), '-o1', at('first.wasm'), '-o2', at('rest.wasm')]);

const kb = (n) => (n / 1000).toFixed(1) + ' KB';
const row = (label, f) => {
  const b = fs.readFileSync(f);
  console.log(`  ${label.padEnd(36)} ${kb(b.length).padStart(9)}  gzip -9 ${kb(zlib.gzipSync(b, { level: 9 }).length).padStart(9)}`);
};
console.log(`${path.basename(wasm)}, workload "${mode}": ${files.length} model(s), ${computes} compute(s)`);
row('whole module', wasm);
row('first: the functions it called', at('first.wasm'));
row('rest: loaded when another is called', at('rest.wasm'));
fs.rmSync(dir, { recursive: true });
