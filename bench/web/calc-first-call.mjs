// The calculator module's cold start under node (issue 13): compile + instantiate, then
// the first parseConfig and the first compute (V8 compiles each wasm function on its
// first call, so a first call pays for the code it reaches), against a warm compute.
// Each sample runs in a fresh node process. Usage: node bench/web/calc-first-call.mjs [runs] [wasm]
// (another .wasm only from a build whose glue matches build-wasm/kvbudget-calc.mjs: it is loaded with that glue).
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median } from './stats.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

if (process.argv[2] === '--child') {
  const wasmPath = process.argv[3];
  const { loadKvbudget } = await import('../../wasm/kvbudget-calc.js');
  const bytes = fs.readFileSync(wasmPath);
  const t0 = performance.now();
  const mod = await WebAssembly.compile(bytes);
  const t1 = performance.now();
  const core = await loadKvbudget({ wasmModule: mod });
  const t2 = performance.now();
  const text = fs.readFileSync(path.join(root, 'tests/fixtures/configs/meta-llama--Llama-3.1-8B.json'), 'utf8');
  const m = core.parseConfig(text, 'meta-llama/Llama-3.1-8B');
  const t3 = performance.now();
  const input = { engine: 'vllm', context: 32768, seqs: 1, gpu: 'rtx-4090', gpu_count: 1 };
  m.compute(input);
  const t4 = performance.now();
  m.compute({ ...input, context: 8192 });
  const t5 = performance.now();
  m.compute({ ...input, engine: 'llamacpp' });
  const t6 = performance.now();
  console.log(JSON.stringify({ compile: t1 - t0, instantiate: t2 - t1, parse: t3 - t2, compute1: t4 - t3, compute2: t5 - t4, llamacpp1: t6 - t5 }));
} else {
  const runs = Number(process.argv[2] || 7);
  const wasm = path.resolve(process.argv[3] || path.join(root, 'build-wasm/kvbudget-calc.wasm'));
  const rows = [];
  for (let i = 0; i < runs; i++) {
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', wasm], { encoding: 'utf8' });
    rows.push(JSON.parse(out));
  }
  const size = fs.statSync(wasm).size;
  console.log(`${path.basename(wasm)} ${size} bytes; ${runs} fresh node processes, median ms (load average ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}):`);
  for (const k of Object.keys(rows[0])) console.log(`  ${k.padEnd(12)} ${median(rows.map((r) => r[k])).toFixed(2)}  (min ${Math.min(...rows.map((r) => r[k])).toFixed(2)})`);
}
