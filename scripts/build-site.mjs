#!/usr/bin/env node
// Assembles the deployable static site in site/: index.html, the JS + CSS bundle
// (esbuild), the .wasm, the model catalog and the trace CSVs when present.
// Run after the WASM build (cmake --preset wasm; npm run build does both).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { generateCatalog } from './gen-catalog.mjs';
import { DEFAULT_MODEL, defaultState } from '../web/src/state.js';
import { budgetInputs } from '../web/src/budget-inputs.js';
import { contextStops } from '../web/src/context-stops.js';
import { CONTROL_PARAMS, POLICY_PARAMS } from '../web/src/message.js';
import { DEFAULT_HUB, withHubCsp } from './csp.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// KVB_SITE_DIR builds elsewhere (parallel builds and tests must not race on site/).
const site = path.resolve(root, process.env.KVB_SITE_DIR || 'site');
const wasmDir = path.join(root, 'build-wasm');

// Two modules (wasm/CMakeLists.txt): the calculator the page needs first, and the whole
// one (with the simulator) its Web Worker loads on the first Run.
const WASM_FILES = ['kvbudget-calc.wasm', 'kvbudget.wasm'];
for (const f of WASM_FILES) {
  if (!fs.existsSync(path.join(wasmDir, f))) {
    console.error(`build-site: build-wasm/${f} is missing; run npm run build:wasm (cmake --preset wasm && cmake --build --preset wasm) first`);
    process.exit(1);
  }
}

fs.rmSync(site, { recursive: true, force: true });
fs.mkdirSync(site, { recursive: true });

const common = {
  absWorkingDir: root,
  bundle: true,
  format: 'esm',
  target: ['es2020'],
  // KVB_NO_MINIFY=1: readable function names in the profiles (bench/web/slider-profile.mjs).
  minify: !process.env.KVB_NO_MINIFY,
  sourcemap: false,
  outdir: site,
  legalComments: 'none',
  loader: { '.json': 'json' },
  logLevel: 'warning',
  // The Emscripten glue mentions node modules behind ENVIRONMENT checks it never takes in a browser.
  external: ['fs', 'path', 'url', 'crypto', 'module', 'worker_threads'],
};
// check-view.js's import('../../wasm/kvbudget.js') is the separately built kvbudget-full.js.
const fullModuleApart = {
  name: 'full-module-apart',
  setup(b) {
    b.onResolve({ filter: /\/wasm\/kvbudget\.js$/ }, (args) => (args.kind === 'dynamic-import' ? { path: './kvbudget-full.js', external: true } : undefined));
  },
};
// web/i18n/en.json in two parts: the strings of the views views.js loads after the first
// answer (sim.*, lab.*, check.*) for its import, the rest for the page's (i18n.js).
const VIEW_PREFIXES = ['sim.', 'lab.', 'check.'];
const englishSplit = {
  name: 'english-split',
  setup(b) {
    b.onResolve({ filter: /\/i18n\/en\.json$/ }, (args) => ({
      path: path.resolve(args.resolveDir, args.path),
      namespace: path.basename(args.importer) === 'views.js' ? 'en-views' : 'en-page',
    }));
    // As JSON.parse of a string, not an object literal: V8 reads a string and JSON faster than
    // it parses ~700 properties of JavaScript, on the main thread before the first answer.
    const asJson = (text) => ({ contents: `export default JSON.parse(${JSON.stringify(text)});`, loader: 'js' });
    b.onLoad({ filter: /.*/, namespace: 'en-page' }, (args) => asJson(englishPart(args.path, false)));
    b.onLoad({ filter: /.*/, namespace: 'en-views' }, (args) => asJson(englishPart(args.path, true)));
  },
};
function englishPart(file, views) {
  const all = JSON.parse(fs.readFileSync(file, 'utf8'));
  return JSON.stringify(Object.fromEntries(Object.entries(all).filter(([k, v]) => VIEW_PREFIXES.some((p) => k.startsWith(p)) === views && !coreWords(k, v))));
}
// The calculator module the page loads, run under node: the build's answers are its bytes.
const { loadKvbudget } = await import('../wasm/kvbudget-calc.js');
const calc = await loadKvbudget({ wasmBinary: fs.readFileSync(path.join(wasmDir, 'kvbudget-calc.wasm')) });
// A Message reaches the page with its English `text`, which the core rendered from its own
// template (src/base/message.cpp), and message.js shows that text for a code the catalog
// lacks. So English msg.<code> the core words the same way is left out of the page's bundle
// (issue 13: ~9 KB gzip before every first answer): the page then shows the same sentence.
// Kept: a template the page words differently, and one naming a parameter the page words
// itself (message.js: a control's label, a policy's name); a brace that is not a {name}
// placeholder too. The whole module's table: the calculator's lacks the codes only the views emit.
const PAGE_WORDED = [...CONTROL_PARAMS, ...POLICY_PARAMS];
const { loadKvbudget: loadWhole } = await import('../wasm/kvbudget.js');
const whole = await loadWhole({ wasmBinary: fs.readFileSync(path.join(wasmDir, 'kvbudget.wasm')) });
const coreTemplates = new Map(whole.catalog().messages.map((m) => [m.code, m.english]));
function coreWords(key, english) {
  if (!key.startsWith('msg.')) return false;
  const core = coreTemplates.get(key.slice(4));
  const names = [...english.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  return core === english && !names.some((n) => PAGE_WORDED.includes(n)) && !/[{}]/.test(english.replace(/\{\w+\}/g, ''));
}
// The page's own JS goes into index.html (below), in one inline module: as app.js and a chunk it
// shared with views.js it was two more requests the first answer waited for, a round trip after
// the HTML's (issue 13). What the first answer does not need stays in files of their own, fetched
// after it (views.js: the chart library, the simulator view, the log check and lab panels; other
// languages). A module in the page and in views.js must be one instance (i18n.js's language and
// strings, the error classes instanceof checks): the page puts its namespace on
// self.kvbPageModules, and views.js's build reads it from there instead of bundling a copy.
// In order: the page's module graph, then views.js (bundled against it), then the languages, then
// the page's module, naming their files.
const rel = (p) => path.relative(root, p).split(path.sep).join('/');
// files: {views, <language>: file name}, or null while the names are not known yet.
const lazyApart = (files) => ({
  name: 'lazy-apart',
  setup(b) {
    b.onResolve({ filter: /\/views\.js$|\/i18n\/[^/]+\.json$/ }, (args) => {
      if (args.kind !== 'dynamic-import') return undefined;
      const name = path.basename(args.path).replace(/\.js(on)?$/, '');
      if (files && !files[name]) throw new Error(`build-site: no file built for import('${args.path}')`);
      return { path: './' + (files ? files[name] : name + '.js'), external: true };
    });
  },
});
const pageEntry = path.join(root, 'web/src/main.js');
const graph = async (entry, plugins) => Object.keys((await esbuild.build({ ...common, entryPoints: [entry], write: false, metafile: true, plugins })).metafile.inputs);
const pageInputs = new Set(await graph(pageEntry, [fullModuleApart, englishSplit, lazyApart(null)]));
const viewsEntry = path.join(root, 'web/src/views.js');
const shared = (await graph(viewsEntry, [fullModuleApart, englishSplit])).filter((f) => pageInputs.has(f) && !f.includes(':'));
// Each shared module's export names, from a build of it alone.
const sharedExports = {};
for (const f of shared) {
  const out = await esbuild.build({ absWorkingDir: root, format: 'esm', entryPoints: [path.join(root, f)], write: false, metafile: true, outdir: site });
  sharedExports[f] = Object.values(out.metafile.outputs)[0].exports;
}
const fromPage = {
  name: 'from-page',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.fromPage || args.kind === 'entry-point' || args.namespace !== 'file') return undefined;
      const r = await b.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: { fromPage: true } });
      if (r.errors.length || r.external) return undefined;
      const f = rel(r.path);
      return shared.includes(f) ? { path: f, namespace: 'kvb-page' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'kvb-page' }, (args) => {
      const names = sharedExports[args.path];
      const named = names.filter((n) => n !== 'default');
      return {
        contents: `const m = self.kvbPageModules[${JSON.stringify(args.path)}];\n` +
          (named.length ? `export const { ${named.join(', ')} } = m;\n` : '') + (names.includes('default') ? 'export default m.default;\n' : ''),
        loader: 'js',
      };
    });
  },
};
const viewsBuild = await esbuild.build({ ...common, entryPoints: { views: viewsEntry }, entryNames: '[name]-[hash]', metafile: true, plugins: [fullModuleApart, englishSplit, fromPage] });
const outName = (metafile) => path.basename(Object.keys(metafile.outputs).find((o) => o.endsWith('.js')));
const lazyFiles = { views: outName(viewsBuild.metafile) };
const languageFiles = {};
for (const f of fs.readdirSync(path.join(root, 'web/i18n')).filter((n) => n.endsWith('.json') && n !== 'en.json')) {
  const code = path.basename(f, '.json');
  // As UTF-8, not esbuild's default \uXXXX escapes: a module is always read as UTF-8, and the
  // escapes made the Chinese strings 160 KB instead of 107 (38.3 KB gzip instead of 35.5).
  const out = await esbuild.build({ ...common, charset: 'utf8', entryPoints: { [code]: path.join(root, 'web/i18n', f) }, entryNames: '[name]-[hash]', metafile: true });
  languageFiles[code] = lazyFiles[code] = outName(out.metafile);
}
const pageModule = {
  name: 'page-module',
  setup(b) {
    b.onResolve({ filter: /^kvb-page-entry$/ }, () => ({ path: 'kvb-page-entry', namespace: 'kvb-entry' }));
    b.onLoad({ filter: /.*/, namespace: 'kvb-entry' }, () => ({
      resolveDir: root,
      contents: shared.map((f, i) => `import * as m${i} from ${JSON.stringify('./' + f)};\n`).join('') +
        `import ${JSON.stringify('./' + rel(pageEntry))};\n` +
        `self.kvbPageModules = { ${shared.map((f, i) => `${JSON.stringify(f)}: m${i}`).join(', ')} };\n`,
      loader: 'js',
    }));
  },
};
const pageBuild = await esbuild.build({ ...common, entryPoints: ['kvb-page-entry'], write: false, metafile: true, plugins: [pageModule, fullModuleApart, englishSplit, lazyApart(lazyFiles)] });
const pageJs = pageBuild.outputFiles.find((o) => o.path.endsWith('.js')).text.trim();
if (/<\/script/i.test(pageJs)) throw new Error('build-site: the page\'s JS contains </script and cannot be inlined');
// The simulator runs in its own module worker with its own WASM instance, and the log
// check loads the whole module on first use (kvbudget-full.js). Both are built on their
// own, so the wrapper they share with the page (wasm/kvbudget-api.js) is not one more
// chunk before the first answer.
await esbuild.build({ ...common, entryPoints: { 'sim-worker': path.join(root, 'web/src/sim-worker.js'), 'kvbudget-full': path.join(root, 'wasm/kvbudget.js') } });

// uPlot's style sheet first (chart.js is a lazy chunk, so esbuild would not put it in
// the bundle's CSS), then the page's, so the page can restyle the chart.
// The whole style sheet goes into index.html (below): as a file of its own it was one more
// request the first answer waited for (app.js runs only once the sheet is in), and on a loaded
// machine any of those requests could be the last to arrive (issue 13).
const uplotCss = fs.readFileSync(path.join(root, 'node_modules/uplot/dist/uPlot.min.css'), 'utf8');
const pageCss = fs.readFileSync(path.join(root, 'web/styles.css'), 'utf8');
const bundledCss = pageBuild.outputFiles.find((o) => o.path.endsWith('.css'))?.text || '';
// Print style sheet last (all inside @media print).
const appCss = [uplotCss, bundledCss, pageCss, fs.readFileSync(path.join(root, 'web/sim.css'), 'utf8'), fs.readFileSync(path.join(root, 'web/print.css'), 'utf8')]
  .join('\n');
if (/<\/style/i.test(appCss)) throw new Error('build-site: the style sheet contains </style and cannot be inlined');
// The embed host script (docs/embed.md).
fs.copyFileSync(path.join(root, 'web/embed-host.js'), path.join(site, 'embed-host.js'));

// What the first answer needs and is small goes into the page itself (issue 13): the
// catalog's index, the default model's config (a link without ?model= needs it) and
// web/boot.js, which starts the calculator's WebAssembly and a link's model config while
// the page is still being parsed. The CSP allows that one inline script by its hash; the
// JSON blocks are data, never run. Ahead of the style sheet (in the page too, below): its
// parse does not delay boot.js's requests.
const models = generateCatalog(site);
// Every byte of index.html is ASCII: Blink decodes an HTML chunk holding any character past
// Latin-1 into a 16-bit string, and decoding and tokenizing the whole 210 KB page that way cost
// 9-12 ms of the main thread before the first answer (issue 13; two characters in a regular
// expression and one in a comment did it). JSON and JS take \\uXXXX for any UTF-16 code unit
// (surrogates included) with the same meaning; CSS takes \\XXXX followed by a space.
const jsAscii = (text) => text.replace(/[^\x00-\x7f]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
const cssAscii = (text) => text.replace(/[^\x00-\x7f]/gu, (c) => '\\' + c.codePointAt(0).toString(16) + ' ');
const jsonBlock = (text) => jsAscii(text).replace(/</g, '\\u003c');
const defaultFile = models.find((m) => m.id === DEFAULT_MODEL)?.file;
// Minified: every page carries it, and its comments are for this repository. Bundled: it reads
// the address with the page's own readers (web/src/url-values.js), so both take a link alike.
const bootJs = jsAscii((await esbuild.build({
  entryPoints: [path.join(root, 'web/boot.js')], bundle: true, write: false, format: 'iife', minify: true, target: 'es2020', legalComments: 'none', logLevel: 'warning',
})).outputFiles[0].text.trim());
if (/<\/script/i.test(bootJs)) throw new Error('build-site: web/boot.js contains </script and cannot be inlined');
const bootHash = crypto.createHash('sha256').update(bootJs).digest('base64');
if (!defaultFile) throw new Error(`build-site: the default model ${DEFAULT_MODEL} is not in the catalog (data/), so the page has no first answer to prerender`);
const defaultConfig = fs.readFileSync(path.join(site, 'catalog', defaultFile), 'utf8').trim();
const ANSWER_PREFIX = '{"ok":true,"value":';
// The core's Answer for `input` as the bytes it wrote, or null with what it said instead.
function coreAnswer(model, input) {
  const raw = calc.m.compute(model.handle, JSON.stringify(input));
  return raw.startsWith(ANSWER_PREFIX) && raw.endsWith('}') ? { text: raw.slice(ANSWER_PREFIX.length, -1) } : { text: null, raw };
}
const answersStart = performance.now();
const answerFiles = writeCatalogAnswers();
const answersMs = performance.now() - answersStart;
const inline = [
  `<script type="application/json" id="kvb-languages">${jsonBlock(JSON.stringify(languageFiles))}</script>`,
  // Each bundled model's contexts with an answer in answers/ (web/boot.js decides by them whether a link needs the module first).
  `<script type="application/json" id="kvb-catalog">${jsonBlock(JSON.stringify({ models }))}</script>`,
  `<script type="application/json" id="kvb-config" data-id="${DEFAULT_MODEL}">${jsonBlock(defaultConfig)}</script>`,
  `<script type="application/json" id="kvb-answer" data-ctx="${defaultState().ctx}">${jsonBlock(prerenderDefault(defaultConfig))}</script>`,
  `<script>${bootJs}</script>`,
];

// The default link's answer, computed now by the core itself: the calculator module the
// page loads, run under node on the config the page holds (#kvb-config), asked exactly what
// the page asks for the default state (budget-inputs.js). The page shows it before the
// module has arrived (web/src/prerender.js); the module answers everything after. The
// Answer goes in as the bytes the core wrote (what `kvbudget budget --json` prints for these
// settings; tests/node/prerender.test.mjs), last in the block. No answer, no site: an
// exception here (a refusal included) stops the build.
function prerenderDefault(configText) {
  const model = calc.parseConfig(configText, DEFAULT_MODEL);
  const input = budgetInputs(defaultState());
  const got = coreAnswer(model, input);
  if (got.text === null) throw new Error(`build-site: the core gave no answer for the default link (${DEFAULT_MODEL}, ${JSON.stringify(input)}): ${got.raw}`);
  const spec = model.spec;
  model.release();
  // The message table (messages) is for other faces; the page never reads it. The catalog
  // here is also what a bundled model's answers (answers/) are shown with.
  const catalog = { ...calc.catalog() };
  delete catalog.messages;
  const head = JSON.stringify({ model: DEFAULT_MODEL, input, catalog, spec });
  return head.slice(0, -1) + ',"answer":' + got.text + '}';
}

// A link that presets a bundled model (an embed in a post about it) and, at most, a context
// the page's slider offers for it or the page's default one: its answer is computed now too,
// so it needs no calculator module first either (issue 13). answers/<its catalog file>:
// its config (the page's copy, one request for both), its spec and, one a line, the
// BudgetInputs the page asks for the default settings at each of those contexts with the
// Answer the core wrote for them, byte for byte (`kvbudget budget --json`;
// tests/node/catalog-answers.test.mjs). Each model's entry in the page's catalog gets the
// contexts answered (ctx), so web/boot.js knows at once which file, if any, a link needs, and
// the model's limit (max).
// A bundled model the core cannot read stops the build, as the default does; a context the
// core refuses to answer is left out (the module then says why).
function writeCatalogAnswers() {
  const dir = path.join(site, 'answers');
  fs.mkdirSync(dir, { recursive: true });
  let total = 0;
  for (const entry of models) {
    // Trimmed as #kvb-config is: the default model's file then holds the page's own copy.
    const configText = fs.readFileSync(path.join(site, 'catalog', entry.file), 'utf8').trim();
    const model = calc.parseConfig(configText, entry.id);
    const max = model.spec.max_position_embeddings;
    // The model's limit as the core read it: until the module is here (a slow network, a link
    // the build did not answer) the page's context slider ends there, not at 1M.
    entry.max = max;
    const contexts = [...new Set([...contextStops(max), defaultState().ctx])].sort((a, b) => a - b);
    const lines = [];
    entry.ctx = [];
    for (const ctx of contexts) {
      const input = budgetInputs({ ...defaultState(), model: entry.id, ctx });
      const got = coreAnswer(model, input);
      if (got.text === null) {
        console.warn(`build-site: no answer for ${entry.id} at context ${ctx} (the module will say why): ${got.raw.slice(0, 200)}`);
        continue;
      }
      lines.push(`{"input":${JSON.stringify(input)},"answer":${got.text}}`);
      entry.ctx.push(ctx);
    }
    const head = JSON.stringify({ model: entry.id, config: configText, spec: model.spec });
    model.release();
    const text = head.slice(0, -1) + ',"answers":[\n' + lines.join(',\n') + '\n]}\n';
    fs.writeFileSync(path.join(dir, entry.file), text);
    total += text.length;
  }
  return { count: models.length, bytes: total };
}
// KVB_HUB_URL: the hub this site talks to (default the Hugging Face Hub); it goes into
// kvbudget.config.json and into the CSP's connect-src, which allows nothing else off-site.
const hubUrl = process.env.KVB_HUB_URL || DEFAULT_HUB;
let html = fs.readFileSync(path.join(root, 'web/index.html'), 'utf8');
// The inline blocks and boot.js where web/index.html links the style sheet, the style sheet in
// its place, and the page's JS in the module script's: the first answer waits for no request
// but the HTML's (issue 13).
const cssLink = '<link rel="stylesheet" href="app.css">';
const appScript = '<script type="module" src="app.js"></script>';
for (const marker of [cssLink, appScript]) if (!html.includes(marker)) throw new Error(`web/index.html has no ${marker}`);
html = html.replace(cssLink, () => inline.join('\n') + '\n<style>\n' + cssAscii(appCss) + '\n</style>');
const pageJsAscii = jsAscii(pageJs);
html = html.replace(appScript, () => `<script type="module">${pageJsAscii}</script>`);
const pageHash = crypto.createHash('sha256').update(pageJsAscii).digest('base64');
html = html.replace("script-src 'self'", `script-src 'self' 'sha256-${bootHash}' 'sha256-${pageHash}'`);
if (!html.includes(bootHash)) throw new Error("web/index.html's CSP has no script-src 'self'");
const nonAscii = html.search(/[^\x00-\x7f]/);
if (nonAscii >= 0) throw new Error(`build-site: index.html has a character past ASCII at ${nonAscii} (web/index.html?): ${JSON.stringify(html.slice(nonAscii - 40, nonAscii + 10))}`);
fs.writeFileSync(path.join(site, 'index.html'), withHubCsp(html, hubUrl));
for (const f of WASM_FILES) fs.copyFileSync(path.join(wasmDir, f), path.join(site, f));

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
console.log(`site/: index.html ${size('index.html')} B (the page's JS ${pageJs.length} B, its style sheet ${appCss.length} B), kvbudget-calc.wasm ${size('kvbudget-calc.wasm')} B, kvbudget.wasm ${size('kvbudget.wasm')} B, ` +
  `${models.length} catalog configs, ${traceCount} traces`);
console.log(`site/answers/: ${answerFiles.count} files, ${answerFiles.bytes} B, computed in ${Math.round(answersMs)} ms`);
