// Runs while index.html is parsed, before the page's module runs (scripts/build-site.mjs
// inlines it ahead of the style sheet and that module, and allows it by its hash in the CSP):
// for a link whose answer the build did not compute, the calculator's WebAssembly is fetched
// and compiled as its bytes stream in, and a link's bundled model config (or its answers
// file) is asked for, so neither waits until the page's module has run (issue 13). main.js takes both from
// self.kvbBoot and does the work itself wherever this could not (no streaming compile, a
// server without application/wasm).
import { parseContextText, langParam } from './src/url-values.js';

(() => {
  const boot = (self.kvbBoot = {});
  // A link that sets nothing the answer depends on (only the language, theme, embed card
  // and its panels) gets the build's answer (#kvb-answer): nothing before it waits for the
  // module, which main.js asks for once that answer is painted. So does a link that sets
  // only a bundled model and a context the build answered for it (the catalog's ctx; none:
  // the page's default, #kvb-answer's data-ctx): its answers file (answers/, with the
  // model's config) is asked for now instead. Any other parameter may change the answer:
  // the module is needed first, so it is asked for now.
  const PRESENTATION = ['lang', 'theme', 'embed', 'panels'];
  const params = new URLSearchParams(location.search);
  const preset = [...params.keys()].some((k) => !PRESENTATION.includes(k));
  let answered = null; // the catalog entry whose answers file has this link's answer
  let inlineAnswer = !preset;
  let catalog = null; // #kvb-catalog's models, parsed once for both blocks below
  const bundled = (id) => (catalog ||= JSON.parse(document.getElementById('kvb-catalog').textContent).models).find((m) => m.id === id);
  try {
    const inline = document.getElementById('kvb-config').dataset.id;
    const defaultCtx = Number(document.getElementById('kvb-answer').dataset.ctx);
    const id = params.get('model') ?? inline;
    const ctxParam = params.get('ctx');
    const ctx = ctxParam === null ? defaultCtx : parseContextText(ctxParam) ?? NaN;
    const onlyThese = [...params.keys()].every((k) => PRESENTATION.includes(k) || k === 'model' || k === 'ctx');
    const entry = onlyThese && bundled(id);
    if (entry?.ctx?.includes(ctx)) {
      if (id === inline && ctx === defaultCtx) inlineAnswer = true;
      else answered = entry;
    }
  } catch {
    answered = null;
  }
  try {
    if (answered) {
      const data = fetch('answers/' + answered.file, { credentials: 'same-origin' }).then((r) => (r.ok ? r.json() : null)).catch(() => null);
      boot.answers = { id: answered.id, data };
      // The model's config is in the same file: one request for both.
      boot.config = { id: answered.id, text: data.then((d) => d?.config ?? fetch('catalog/' + answered.file, { credentials: 'same-origin' }).then((r) => (r.ok ? r.text() : null)).catch(() => null)) };
    } else if (!inlineAnswer || !document.getElementById('kvb-answer')) {
      boot.calcWasm = WebAssembly.compileStreaming(fetch('kvbudget-calc.wasm', { credentials: 'same-origin' }));
      boot.calcWasm.catch(() => {});
    }
  } catch {
    boot.calcWasm = null;
  }
  // The theme chosen on an earlier visit (theme.js): the first read of localStorage waits
  // on the browser process, which costs nothing while the page waits for its files.
  try {
    boot.theme = localStorage.getItem('kvbudget-theme') || 'auto';
  } catch {
    boot.theme = 'auto';
  }
  // Another language's strings are a chunk of their own (#kvb-languages names each file),
  // asked for now rather than once the page's module has run and found it needs them. The choice is
  // i18n.js's detectLanguage: a valid ?lang=, else the browser's first English or Chinese.
  try {
    const files = JSON.parse(document.getElementById('kvb-languages').textContent);
    const param = langParam(params.get('lang') ?? '');
    let lang = param === 'en' || files[param] ? param : '';
    for (const l of lang ? [] : navigator.languages || [navigator.language]) {
      const low = String(l).toLowerCase();
      if (low === 'en' || low.startsWith('en-')) break;
      if (low === 'zh' || low.startsWith('zh-')) {
        lang = 'zh-CN';
        break;
      }
    }
    if (files[lang]) document.head.append(Object.assign(document.createElement('link'), { rel: 'modulepreload', href: files[lang] }));
  } catch {
    // i18n.js loads it
  }
  // The catalog's index is in the page (#kvb-catalog); the default model's config too
  // (#kvb-config). A ?model= naming another bundled model: its file, asked for now (with
  // its answers above when the build has this link's).
  try {
    const id = params.get('model');
    const inline = document.getElementById('kvb-config');
    const entry = !boot.config && id && id !== inline?.dataset.id && bundled(id);
    if (entry) {
      boot.config = { id, text: fetch('catalog/' + entry.file, { credentials: 'same-origin' }).then((r) => (r.ok ? r.text() : null)).catch(() => null) };
    }
  } catch {
    // main.js asks for it
  }
})();
