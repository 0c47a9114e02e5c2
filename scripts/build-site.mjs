#!/usr/bin/env node
// Assembles the deployable static site in site/: index.html, the JS + CSS bundle
// (esbuild), the .wasm, the model catalog and the trace CSVs when present.
// Run after the WASM build (cmake --preset wasm; npm run build does both).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { generateCatalog } from './gen-catalog.mjs';
import { DEFAULT_HUB, withHubCsp } from './csp.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// KVB_SITE_DIR builds elsewhere (parallel builds and tests must not race on site/).
const site = path.resolve(root, process.env.KVB_SITE_DIR || 'site');
const wasmDir = path.join(root, 'build-wasm');

if (!fs.existsSync(path.join(wasmDir, 'kvbudget.wasm'))) {
  console.error('build-site: build-wasm/kvbudget.wasm is missing; run npm run build:wasm (cmake --preset wasm && cmake --build --preset wasm) first');
  process.exit(1);
}

fs.rmSync(site, { recursive: true, force: true });
fs.mkdirSync(site, { recursive: true });

await esbuild.build({
  // The simulator runs in its own module worker (site/sim-worker.js) with its own WASM instance.
  entryPoints: { app: path.join(root, 'web/src/main.js'), 'sim-worker': path.join(root, 'web/src/sim-worker.js') },
  bundle: true,
  format: 'esm',
  target: ['es2020'],
  minify: true,
  sourcemap: false,
  outdir: site,
  legalComments: 'none',
  loader: { '.json': 'json' },
  logLevel: 'warning',
  // The Emscripten glue mentions node modules behind ENVIRONMENT checks it never takes in a browser.
  external: ['fs', 'path', 'url', 'crypto', 'module', 'worker_threads'],
});

// Page CSS goes after uPlot's so the page can restyle the chart.
const pageCss = fs.readFileSync(path.join(root, 'web/styles.css'), 'utf8');
fs.appendFileSync(path.join(site, 'app.css'), '\n' + pageCss);
fs.appendFileSync(path.join(site, 'app.css'), '\n' + fs.readFileSync(path.join(root, 'web/sim.css'), 'utf8'));
// Print style sheet (all inside @media print) and the embed host script (docs/embed.md).
fs.appendFileSync(path.join(site, 'app.css'), '\n' + fs.readFileSync(path.join(root, 'web/print.css'), 'utf8'));
fs.copyFileSync(path.join(root, 'web/embed-host.js'), path.join(site, 'embed-host.js'));

// KVB_HUB_URL: the hub this site talks to (default the Hugging Face Hub); it goes into
// kvbudget.config.json and into the CSP's connect-src, which allows nothing else off-site.
const hubUrl = process.env.KVB_HUB_URL || DEFAULT_HUB;
fs.writeFileSync(path.join(site, 'index.html'), withHubCsp(fs.readFileSync(path.join(root, 'web/index.html'), 'utf8'), hubUrl));
fs.copyFileSync(path.join(wasmDir, 'kvbudget.wasm'), path.join(site, 'kvbudget.wasm'));
const models = generateCatalog(site);

const traces = path.join(root, 'data/traces');
let traceCount = 0;
if (fs.existsSync(traces)) {
  fs.mkdirSync(path.join(site, 'traces'), { recursive: true });
  for (const f of fs.readdirSync(traces)) {
    if (f.endsWith('.csv')) {
      fs.copyFileSync(path.join(traces, f), path.join(site, 'traces', f));
      traceCount++;
    }
  }
}
// The hub the page talks to. A deployment may add "hubTimeoutMs": 2000; another hub means
// building with KVB_HUB_URL, since the CSP above allows only this one. Shipping it avoids a 404 per load.
fs.writeFileSync(path.join(site, 'kvbudget.config.json'), JSON.stringify({ hubUrl: hubUrl.replace(/\/+$/, '') }) + '\n');
// GitHub Pages: serve files as they are (no Jekyll processing of names).
fs.writeFileSync(path.join(site, '.nojekyll'), '');

const size = (f) => fs.statSync(path.join(site, f)).size;
console.log(`site/: app.js ${size('app.js')} B, app.css ${size('app.css')} B, kvbudget.wasm ${size('kvbudget.wasm')} B, ` +
  `${models.length} catalog configs, ${traceCount} traces`);
