// The default link's first answer comes from the build (issue 13, web/src/prerender.js): it is
// on screen before the calculator module has arrived, and the module takes over when it does.
// The static server holds kvbudget-calc.wasm until a test lets it go, so "before" is certain;
// the build's answers files and the Chinese strings are held the same way (a slow network).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAll, openPage, metrics } from './harness.mjs';

let env;
let release = () => {};
let held = Promise.resolve();
let wasmAsked = 0;
function holdWasm() {
  held = new Promise((r) => (release = r));
}
// The build's answers files, held the same way (null: served at once).
let answersHeld = null;
let releaseAnswers = () => {};
function holdAnswers() {
  answersHeld = new Promise((r) => (releaseAnswers = r));
}

// Another language's strings (its chunk), held the same way.
let languageHeld = null;
let releaseLanguage = () => {};

before(async () => {
  env = await startAll({
    hold: (p) => {
      if (p.startsWith('/answers/')) return answersHeld;
      if (p.startsWith('/zh-CN-')) return languageHeld;
      if (p !== '/kvbudget-calc.wasm') return null;
      wasmAsked++;
      return held;
    },
  });
});
after(async () => {
  release();
  releaseAnswers();
  releaseLanguage();
  await env?.close();
});

// A page opened while the module is held: waits for its first answer only.
async function openHeld(query = '', options = {}) {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(env.site.url + query);
  return { page, context, errors };
}
const bodyData = (page) => page.evaluate(() => ({ ...document.body.dataset }));

// What the module answers for a link's settings (the module let go first), as the page shows it.
async function moduleMetrics(query) {
  release();
  const want = await openPage(env, query);
  const shown = await metrics(want.page);
  await want.context.close();
  return shown;
}

// The default link opened with the module held, once the build's answer is on screen.
async function openHeldDefault() {
  holdWasm();
  const opened = await openHeld('');
  await opened.page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  return opened;
}

test('the default link is answered before the calculator module arrives, with the module\'s numbers', async () => {
  // The module's own answer for the default settings, from a page that has it.
  release();
  const live = await openPage(env, '');
  const expected = await metrics(live.page);
  const verdict = await live.page.textContent('[data-role="verdict"]');
  await live.context.close();

  const { page, context, errors } = await openHeldDefault();
  assert.deepEqual(await bodyData(page), { state: 'ready', core: 'loading' });
  assert.deepEqual(await metrics(page), expected);
  assert.equal(await page.textContent('[data-role="verdict"]'), verdict);
  assert.equal(expected['max-context'], '38624');
  release();
  await page.waitForFunction(() => document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.deepEqual(await bodyData(page), { state: 'ready', core: 'live' });
  assert.deepEqual(await metrics(page), expected);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the build\'s answer in another language: the words are the page\'s, from the message codes', async () => {
  holdWasm();
  const { page, context, errors } = await openHeld('?lang=zh-CN');
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  assert.equal((await bodyData(page)).core, 'loading');
  assert.match(await page.textContent('[data-role="verdict"]'), /[\u4e00-\u9fff]/);
  assert.equal((await metrics(page))['max-context'], '38624');
  release();
  await page.waitForFunction(() => document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.deepEqual(errors, []);
  await context.close();
});

test('controls changed before the module arrives: "computing", then applied when it arrives, none lost', async () => {
  // What the module answers for those settings, read from a link that sets them.
  const expected = await moduleMetrics('seqs=4&ctx=65536&engine=vllm');
  const { page, context, errors } = await openHeldDefault();
  const before = await metrics(page);
  // A number field (the page's own state) and a context typed as people write it (the core reads "64K").
  await page.fill('#ctl-seqs', '4');
  await page.dispatchEvent('#ctl-seqs', 'change');
  await page.fill('#ctl-ctx', '64K');
  await page.dispatchEvent('#ctl-ctx', 'change');
  assert.deepEqual(await bodyData(page), { state: 'computing', core: 'loading' });
  assert.equal(await page.textContent('[data-role="status"]'), 'Computing…');
  assert.equal(await page.evaluate(() => document.querySelector('.answer-wrap').classList.contains('stale')), true);
  // The numbers on screen are still the old settings' (marked stale), not a guess.
  assert.deepEqual(await metrics(page), before);
  release();
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.deepEqual(await metrics(page), expected);
  assert.notDeepEqual(expected, before);
  assert.equal(await page.inputValue('#ctl-ctx'), '65536');
  assert.equal(await page.inputValue('#ctl-seqs'), '4');
  assert.equal(await page.textContent('[data-role="status"]'), '');
  assert.equal(await page.evaluate(() => document.querySelector('.answer-wrap').classList.contains('stale')), false);
  await page.waitForFunction(() => /ctx=65536/.test(location.search) && /seqs=4/.test(location.search), null, { timeout: 5000 });
  assert.deepEqual(errors, []);
  await context.close();
});

// The default model's answers file (the slider's stops) is asked for after the first frame:
// a slider step taken before the module is running gets the build's answer for that stop.
test('a slider step before the module arrives: the stop\'s answer from the build, the module\'s numbers', async () => {
  const expected = await moduleMetrics('ctx=65536');
  const { page, context, errors } = await openHeldDefault();
  await page.focus('#ctl-ctx-slider');
  await page.keyboard.press('ArrowRight');
  // Until the file is here the step says "computing"; then its answer is shown.
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && document.getElementById('ctl-ctx').value === '65536', null, { timeout: 5000 });
  assert.equal((await bodyData(page)).core, 'loading');
  assert.deepEqual(await metrics(page), expected);
  release();
  await page.waitForFunction(() => document.body.dataset.core === 'live' && document.body.dataset.state === 'ready', null, { timeout: 15000 });
  assert.deepEqual(await metrics(page), expected);
  assert.deepEqual(errors, []);
  await context.close();
});

// The page's own record of when it first showed an answer and when it first asked for the
// calculator module (fetch or a streaming compile), on its clock: "before" is in the page.
function recordOrder() {
  const seen = (window.__kvbOrder = []);
  const note = (what) => seen.includes(what) || seen.push(what);
  const wasm = (u) => String(u?.url ?? u).includes('kvbudget-calc.wasm');
  const fetch0 = window.fetch;
  window.fetch = function (u, ...rest) {
    if (wasm(u)) note('module');
    if (String(u?.url ?? u).includes('answers/')) note('answers');
    return fetch0.call(this, u, ...rest);
  };
  new MutationObserver(() => {
    if (document.body?.dataset.state === 'ready') note('ready');
  }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-state'] });
}

test('a preset embed of a bundled model at a context the page offers: the build\'s answer before the module is asked for', async () => {
  holdWasm();
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(recordOrder);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(env.site.url + '?embed=1&model=Qwen/Qwen3-8B&ctx=32768');
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  assert.equal((await bodyData(page)).core, 'loading');
  const order = await page.evaluate(() => window.__kvbOrder);
  assert.deepEqual(order.slice(0, 2), ['answers', 'ready'], `the answers file, then the answer, then the module: ${order}`);
  const shown = await metrics(page);
  const verdict = await page.textContent('[data-role="verdict"]');
  assert.equal(await page.inputValue('#ctl-ctx'), '32768');
  assert.match(await page.textContent('body'), /Qwen3-8B/);
  // Qwen3-8B: 36 layers x 8 KV heads x 128 x (K + V) x 2 bytes.
  assert.equal(shown['kv-bytes-per-token'], String(36 * 8 * 128 * 2 * 2));
  // The module, once here, answers the same settings itself: the same numbers and words.
  release();
  await page.waitForFunction(() => document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.deepEqual(await bodyData(page), { state: 'ready', core: 'live' });
  assert.deepEqual(await metrics(page), shown);
  assert.equal(await page.textContent('[data-role="verdict"]'), verdict);
  assert.ok((await page.evaluate(() => window.__kvbOrder)).includes('module'), 'the module was asked for after the answer');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a preset embed at a context the build did not answer waits for the module and asks for it at once', async () => {
  holdWasm();
  const asked = wasmAsked;
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(recordOrder);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(env.site.url + '?embed=1&model=Qwen/Qwen3-8B&ctx=30000');
  for (let i = 0; i < 300 && wasmAsked === asked; i++) await new Promise((r) => setTimeout(r, 50));
  await page.waitForTimeout(300);
  assert.equal(wasmAsked, asked + 1, 'the module was asked for while the page loaded');
  assert.equal((await bodyData(page)).state, 'loading');
  // The first frame waits a moment for the module (main.js FIRST_ANSWER_WAIT_MS), not for
  // ever: a module still on its way gets the page built meanwhile, its fields the link's
  // (from the build's catalog), and a context typed then is read once the module is here.
  await page.waitForSelector('#ctl-ctx', { timeout: 5000 });
  assert.equal((await bodyData(page)).state, 'loading');
  assert.equal(await page.inputValue('#ctl-ctx'), '30000');
  assert.equal(await page.inputValue('#ctl-gpu'), 'rtx-4090');
  await page.fill('#ctl-ctx', '16K');
  await page.dispatchEvent('#ctl-ctx', 'change');
  assert.equal(await page.evaluate(() => document.getElementById('ctl-ctx').validationMessage), '');
  release();
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  assert.equal((await bodyData(page)).core, 'live');
  assert.equal(await page.inputValue('#ctl-ctx'), '16384');
  assert.match(await page.textContent('[data-role="verdict"]'), /one sequence of 16K tokens/);
  assert.match(await page.textContent('body'), /Qwen3-8B/);
  assert.ok(!(await page.evaluate(() => window.__kvbOrder)).includes('answers'), 'no answers file for a context it does not hold');
  assert.deepEqual(errors, []);
  await context.close();
});

// While the module is on its way the fields are the link's as far as the build knows them: a
// bundled model's slider ends at its limit (the catalog's, the core's at build time), and a GPU
// the link names otherwise than by its catalog id is shown as written until the core reads it.
test('a link the build did not answer, module held: the bundled model\'s slider stops and the GPU as the link wrote it', async () => {
  holdWasm();
  const { page, context, errors } = await openHeld('?model=Qwen/Qwen3-8B&ctx=30000&gpu=4090');
  await page.waitForSelector('#ctl-ctx', { timeout: 5000 });
  await page.waitForFunction(() => document.getElementById('ctl-ctx').value === '30000', null, { timeout: 5000 });
  assert.equal((await bodyData(page)).core, 'loading');
  assert.equal(await page.inputValue('#ctl-gpu'), '4090');
  assert.equal(await page.evaluate(() => document.getElementById('ctl-gpu').selectedOptions[0].textContent), '4090');
  assert.equal(await page.isVisible('#ctl-gpu-mem'), false, 'a named GPU, not a custom size');
  // Qwen3-8B's max_position_embeddings is 40960: 256 ... 32768, then 40960.
  assert.equal(await page.getAttribute('#ctl-ctx-slider', 'max'), '8');
  assert.equal(await page.inputValue('#ctl-ctx-slider'), '6'); // 16384, the stop at or below 30000
  assert.equal(await page.textContent('#ctl-ctx-max'), 'Model maximum: 40,960 tokens (max_position_embeddings); the slider ends there.');
  release();
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.equal(await page.inputValue('#ctl-gpu'), 'rtx-4090');
  assert.equal(await page.evaluate(() => [...document.getElementById('ctl-gpu').options].some((o) => o.value === '4090')), false);
  assert.equal(await page.getAttribute('#ctl-ctx-slider', 'max'), '8');
  assert.match(await page.textContent('[data-role="gpu"]'), /RTX 4090/);
  assert.equal(await page.isVisible('[data-role="ignored-params"]'), false, 'the alias was taken, not ignored');
  assert.deepEqual(errors, []);
  await context.close();
});

// A link the build answered waits for its answers file before the page is built, but not for
// ever: on a slow network the page shows the link's settings meanwhile, never a blank page, and
// the file's answer once it comes; the module is not asked for before that answer.
// openAnswersHeld: the module and the answers files held, the link's page once its fields show
// the link's context; letAnswersGo: the files served again.
async function openAnswersHeld(query) {
  holdAnswers();
  holdWasm();
  const opened = await openHeld(query);
  await opened.page.waitForFunction(() => document.getElementById('ctl-ctx')?.value === '32768', null, { timeout: 5000 });
  return opened;
}
function letAnswersGo() {
  releaseAnswers();
  answersHeld = null;
}

test('a preset embed whose answers file is slow: the link\'s settings at once, then the build\'s answer', async () => {
  const module = await moduleMetrics('?embed=1&model=Qwen/Qwen3-8B&ctx=32768');
  const asked = wasmAsked;
  const { page, context, errors } = await openAnswersHeld('?embed=1&model=Qwen/Qwen3-8B&ctx=32768');
  assert.equal((await bodyData(page)).state, 'loading');
  assert.equal(await page.inputValue('#ctl-gpu'), 'rtx-4090');
  assert.equal(await page.getAttribute('#ctl-ctx-slider', 'max'), '8');
  assert.match(await page.textContent('[data-role="answer"]'), /Working out the answer/);
  assert.equal(wasmAsked, asked, 'the module is not asked for while the build\'s answer may still come');
  letAnswersGo();
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  assert.equal((await bodyData(page)).core, 'loading', 'the build\'s answer, not the module\'s');
  assert.deepEqual(await metrics(page), module);
  assert.match(await page.textContent('[data-role="verdict"]'), /one sequence of 32K tokens/);
  release();
  await page.waitForFunction(() => document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.deepEqual(errors, []);
  await context.close();
});

test('a field changed while the answers file is slow is answered by the module, not lost', async () => {
  const { page, context, errors } = await openAnswersHeld('?embed=1&model=Qwen/Qwen3-8B&ctx=32768');
  await page.fill('#ctl-ctx', '16K');
  await page.dispatchEvent('#ctl-ctx', 'change');
  letAnswersGo();
  await page.waitForTimeout(300);
  assert.notEqual((await bodyData(page)).state, 'ready', 'the file has no answer for 16K: the module is needed');
  release();
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.equal(await page.inputValue('#ctl-ctx'), '16384');
  assert.match(await page.textContent('[data-role="verdict"]'), /one sequence of 16K tokens/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a model loaded while the answers file is slow: that model once the module is here, the link\'s not over it', async () => {
  const { page, context, errors } = await openAnswersHeld('?model=Qwen/Qwen3-8B&ctx=32768');
  assert.equal(await page.inputValue('#model-input'), 'Qwen/Qwen3-8B');
  await page.fill('#model-input', 'meta-llama/Llama-3.1-8B');
  await page.press('#model-input', 'Enter');
  letAnswersGo();
  await page.waitForTimeout(300);
  release();
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && document.body.dataset.core === 'live', null, { timeout: 15000 });
  await page.waitForTimeout(300);
  assert.equal(await page.inputValue('#model-input'), 'meta-llama/Llama-3.1-8B');
  assert.match(await page.textContent('.results'), /meta-llama\/Llama-3\.1-8B/);
  assert.doesNotMatch(await page.textContent('.results'), /Qwen3-8B/);
  assert.deepEqual(errors, []);
  await context.close();
});

// A model asked for while a link's module is still on its way waits for the module, and is the
// one shown: the link's own model does not come back over it.
test('a model loaded while a link waits for the module: loaded once it arrives, the link\'s not over it', async () => {
  holdWasm();
  const { page, context, errors } = await openHeld('?model=Qwen/Qwen3-8B&ctx=30000');
  await page.waitForSelector('#model-input', { timeout: 5000 });
  await page.waitForFunction(() => document.getElementById('model-input').value === 'Qwen/Qwen3-8B', null, { timeout: 5000 });
  await page.fill('#model-input', 'meta-llama/Llama-3.1-8B');
  await page.press('#model-input', 'Enter');
  await page.waitForTimeout(300);
  assert.equal((await bodyData(page)).core, 'loading');
  release();
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && document.body.dataset.core === 'live', null, { timeout: 15000 });
  await page.waitForTimeout(300);
  assert.match(await page.textContent('[data-role="verdict"]'), /30,000|30K/);
  assert.equal(await page.inputValue('#model-input'), 'meta-llama/Llama-3.1-8B');
  assert.match(await page.textContent('.results'), /meta-llama\/Llama-3\.1-8B/);
  assert.doesNotMatch(await page.textContent('.results'), /Qwen3-8B/);
  assert.deepEqual(errors, []);
  await context.close();
});

// What the first screen does not show is built just after the build's answer is painted
// (render.js, controls.js, share.js), still without the module, and ends the same as the
// module's page: the result sections with their rows, the catalog selects' whole lists.
test('the build\'s answer shows the first screen first; the sections below and the selects\' lists follow without the module', async () => {
  release();
  const live = await openPage(env, '');
  const page0 = live.page;
  const snapshot = (p) => p.evaluate(() => ({
    sections: [...document.querySelectorAll('section[id^="sec-"]')].map((s) => s.id),
    rows: document.querySelectorAll('#table-context tbody tr').length,
    gpus: document.querySelectorAll('#ctl-gpu option').length,
    weights: [...document.querySelectorAll('#ctl-weights option')].map((o) => o.value),
    kv: [...document.querySelectorAll('#ctl-kv option')].map((o) => o.value),
    embedTheme: !!document.getElementById('embed-theme'),
    log: document.querySelector('[data-role="engine-log"]')?.textContent ?? null,
  }));
  const want = await snapshot(page0);
  await live.context.close();
  assert.ok(want.sections.includes('sec-context') && want.rows > 3 && want.gpus > 40 && want.weights.length > 10 && want.log);

  const { page, context, errors } = await openHeldDefault();
  await page.waitForFunction(() => document.getElementById('sec-context') && document.getElementById('embed-theme'), null, { timeout: 15000 });
  assert.deepEqual(await bodyData(page), { state: 'ready', core: 'loading' });
  assert.deepEqual(await snapshot(page), want);
  release();
  await page.waitForFunction(() => document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.deepEqual(await snapshot(page), want);
  assert.deepEqual(errors, []);
  await context.close();
});

// A bundled model at a slider stop is answered from the build's answers file, advice included (Qwen3-8B at 32K on the
// default 24 GB card: fp8 KV makes it fit). Its button pressed before the module is here asks for the module, like any
// control: "computing", then the module's answer for fp8.
test('the advice\'s button on a build-answered link waits for the module and is then answered', async () => {
  const want = await moduleMetrics('?model=Qwen/Qwen3-8B&ctx=32768&kv=fp8');
  holdWasm();
  const { page, context, errors } = await openHeld('?model=Qwen/Qwen3-8B&ctx=32768');
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  assert.equal(await page.getAttribute('body', 'data-core'), 'loading');
  assert.match(await page.textContent('[data-role="verdict-advice"]'), /--kv-cache-dtype fp8/);
  await page.click('[data-role="advice-apply"]');
  assert.equal(await page.getAttribute('body', 'data-state'), 'computing');
  release();
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && document.body.dataset.core === 'live', null, { timeout: 15000 });
  assert.equal(await page.inputValue('#ctl-kv'), 'fp8');
  assert.deepEqual(await metrics(page), want);
  assert.equal(await page.locator('[data-role="verdict-advice"]').count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

// A stalled request for another language's strings left the page blank until they came (no
// limit): now it is built in English after LANGUAGE_WAIT_MS and takes the language when they come.
// openLanguageHeld: a Chinese link with its strings held, once its answer is shown (in English);
// letLanguageGo: the strings served, and the page in Chinese and ready again.
async function openLanguageHeld() {
  release();
  languageHeld = new Promise((r) => (releaseLanguage = r));
  const opened = await openHeld('?lang=zh-CN');
  await opened.page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
  return opened;
}
async function letLanguageGo(page) {
  releaseLanguage();
  languageHeld = null;
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN', null, { timeout: 15000 });
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 15000 });
}

test('a Chinese link whose strings are slow: an answer in English first, then the page in Chinese', async () => {
  const { page, context, errors } = await openLanguageHeld();
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  assert.equal(await page.textContent('#results-h'), 'Memory budget');
  assert.match(await page.textContent('[data-role="verdict"]'), /one sequence of 32K tokens/);
  const english = await metrics(page);
  await letLanguageGo(page);
  assert.equal(await page.textContent('#results-h'), '显存预算');
  assert.equal(await page.inputValue('#lang'), 'zh-CN');
  assert.deepEqual(await metrics(page), english, 'the same answer, in the other language');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a reader who chooses the language while its strings are slow: the page takes it when they come', async () => {
  const { page, context, errors } = await openLanguageHeld();
  await page.waitForFunction(() => document.querySelectorAll('#lang option').length === 2);
  await page.selectOption('#lang', 'zh-CN');
  await page.waitForTimeout(200);
  assert.equal(await page.getAttribute('html', 'lang'), 'en', 'still waiting for the strings');
  await letLanguageGo(page);
  assert.equal(await page.textContent('#results-h'), '显存预算');
  assert.equal(await page.inputValue('#lang'), 'zh-CN');
  assert.equal(await page.evaluate(() => new URL(location.href).searchParams.get('lang')), 'zh-CN');
  assert.deepEqual(errors, []);
  await context.close();
});

// The module that does not come (a browser without WebAssembly: Safari's Lockdown Mode, a policy;
// or a failed request). A ReferenceError left an off-grid link on "Working out the answer…" for
// good, and the default link's error was cleared by its next render 60 ms later, a change then
// "computing" for good.
test('no WebAssembly: the build\'s answers stay, the reason stays said, a change it cannot answer says so', async () => {
  release();
  const expected = await moduleMetrics('ctx=65536');
  const reason = 'The calculator could not start: this browser does not run WebAssembly (turned off, as by Safari\'s Lockdown Mode or a security policy)';
  const { page, context, errors } = await openPage(env, '', { init: () => delete window.WebAssembly });
  await page.waitForFunction(() => document.body.dataset.core === 'error', null, { timeout: 15000 });
  await page.waitForTimeout(500);
  assert.equal((await bodyData(page)).state, 'ready');
  assert.equal(await page.textContent('[data-role="error"]'), reason);
  assert.equal(await page.isHidden('[data-role="error"]'), false);
  // A stop of the slider: the build's answer, the reason still said.
  await page.focus('#ctl-ctx-slider');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && document.getElementById('ctl-ctx').value === '65536', null, { timeout: 5000 });
  assert.deepEqual(await metrics(page), expected);
  assert.equal(await page.textContent('[data-role="error"]'), reason);
  // A change only the module could answer.
  await page.selectOption('#ctl-engine', 'llamacpp');
  await page.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 5000 });
  assert.equal(await page.textContent('[data-role="error"]'), reason);
  assert.equal(await page.getAttribute('.answer-wrap', 'class'), 'answer-wrap stale', 'the last answer, marked as not the settings\'');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a link the build did not answer whose module does not come: the reason, not "working out" for good', async () => {
  const { page, context, errors } = await openPage(env, 'gpu=rtx-3090', { abort: /kvbudget-calc\.wasm$/ });
  assert.deepEqual(await bodyData(page), { state: 'error', core: 'error' });
  assert.match(await page.textContent('[data-role="error"]'), /^The calculator could not start: could not load the WebAssembly core: /);
  assert.equal(await page.textContent('[data-role="verdict"]'), 'No answer: the calculator could not be loaded.');
  // Another model waits for no module that will not come.
  await page.fill('#model-input', 'Qwen/Qwen3-8B');
  await page.press('#model-input', 'Enter');
  await page.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 5000 });
  assert.match(await page.textContent('[data-role="error"]'), /^The calculator could not start: /);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a Hub model asked for before the module arrives keeps the page loading until its answer or its error', async () => {
  // The module going live re-answered the model on screen and set data-state "ready" while the Hub
  // was still being asked: a page (or an embedding host) then read "ready" during the fetch.
  const { page, context, errors } = await openHeldDefault();
  await page.evaluate(() => {
    window.kvbStates = [];
    new MutationObserver(() => window.kvbStates.push(document.body.dataset.state))
      .observe(document.body, { attributes: true, attributeFilter: ['data-state'] });
  });
  await page.fill('#model-input', 'busy/model');
  await page.press('#model-input', 'Enter');
  await page.waitForTimeout(100);
  release();
  await page.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 15000 });
  assert.equal(await page.getAttribute('body', 'data-core'), 'live');
  assert.deepEqual(await page.evaluate(() => window.kvbStates), ['loading', 'error']);
  assert.match(await page.textContent('[data-role="error"]'), /429/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a Hub model cancelled while it waits for the module: the page is the model it had once the module is here', async () => {
  const { page, context, errors } = await openHeldDefault();
  await page.fill('#model-input', 'busy/model');
  await page.press('#model-input', 'Enter');
  await page.waitForFunction(() => document.body.dataset.state === 'loading');
  await page.click('form.model-form button[type="button"]');
  release();
  await page.waitForFunction(() => document.body.dataset.core === 'live', null, { timeout: 15000 });
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 5000 });
  assert.equal(await page.textContent('[data-role="model-name"]'), 'meta-llama/Llama-3.1-8B');
  assert.equal(await page.isVisible('progress'), false);
  assert.equal(await page.textContent('[role="status"]'), 'Cancelled.');
  assert.deepEqual(errors, []);
  await context.close();
});
