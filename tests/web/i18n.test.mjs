// Languages (issue 5) in real Chromium: ?lang=zh-CN renders Chinese throughout,
// the browser's language is used when there is no ?lang=, the switcher relabels
// the page in place without touching a number, and numbers format per locale.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAll, openPage, waitSettled, metrics } from './harness.mjs';

let env;
before(async () => {
  env = await startAll();
});
after(async () => {
  await env?.close();
});

// What may stay in Latin letters on a Chinese page. Anything else is a leftover.
const ALLOWED = new Set([
  // units
  'B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'MB', 'GB', 'TB', 'K', 'M', 's', 'x',
  // engines and their spellings
  'vLLM', 'llama.cpp', 'llama-server', 'transformers', 'PyTorch',
  // terms the seed articles keep in English, and the file / format names
  'KV', 'Cache', 'K', 'V', 'GQA', 'MHA', 'MQA', 'MLA', 'RoPE', 'GPU', 'token', 'tokens',
  'Hugging', 'Face', 'Hub', 'huggingface.co', 'config.json', 'safetensors', 'HTTP', 'JSON', 'CORS', 'GGUF', 'Space',
  'ID', 'WebAssembly', 'C++', 'kvbudget', 'Markdown', 'CSV', 'PNG', 'SVG', 'script', 'docs/embed.md',
  'org/name', 'org/name@revision', 'org/name@main', 'English', 'URL',
  // engine flag names shown as flags (a flag token itself starts with "-"), and the
  // config.json fields and config classes the core's notes name
  'gpu_memory_utilization', 'num_key_value_heads', 'num_attention_heads', 'head_dim', 'vocab_size', 'sliding_window',
  'sliding_window_pattern', 'use_sliding_window', 'max_position_embeddings', 'torch_dtype', 'quantization_config',
  'num_nextn_predict_layers', 'index_head_dim', 'model_type', 'auto_map', 'text_config', 'no_op', 'Gemma3TextConfig', 'Gemma',
  'false', 'sysctl', 'iogpu.wired_limit_mb', 'SDPA', 'eager', 'MTP', 'Q4_K_M', 'mxfp4', 'awq', 'gptq',
  // dtype / quantization names in the engines' own spelling
  'auto', 'bfloat16', 'float16', 'float32', 'fp8', 'fp8_e4m3', 'fp8_e5m2', 'nvfp4', 'f32', 'f16', 'bf16',
  'q8_0', 'q4_0', 'q4_1', 'q5_0', 'q5_1', 'iq4_nl', 'Mamba',
  // the reference model of the optimization ladder
  'DeepSeek-V3',
  // the simulator: the paper's systems and allocation policies, the workloads and the
  // trace's source and license (proper names), latency metric abbreviations
  'PagedAttention', 'Orca', 'Max', 'Pow2', 'Oracle', 'ShareGPT', 'Alpaca',
  'Azure', 'LLM', 'Microsoft', 'Patel', 'Splitwise', 'ISCA', 'Azure/AzurePublicDataset', 'CC', 'BY',
  'TTFT', 'TPOT', 'p50', 'p90', 'p99',
  // RoPE scaling methods by their papers' names
  'YaRN', 'NTK', 'Mac', 'Apple',
  // the lab's paste syntax (keywords kvbudget reads) and the commands whose output it reads
  'baseline', 'weights', 'llama-completion', 'usr/bin/time',
  // vLLM's MLA attention backends by their own names (the note vllm_mla_backend)
  'FLASHINFER_MLA', 'CUTLASS_MLA', 'FLASH_ATTN_MLA', 'FLASHMLA', 'TRITON_MLA',
]);
// Regions that show engine output verbatim: log lines, the command, the engine's own
// refusal. The core's notes are shown through their msg.<code> translations (tMsg).
const EXCLUDED = ['[data-role="engine-log"]', '[data-role="fit-log"]', '[data-role="command"]', '[data-role="answer-command"]', '[data-role="engine-error"]'];

// Latin-letter words in the visible text that the allowlist does not cover.
async function leftovers(page, extraAllowed = []) {
  const { words, cjk } = await page.evaluate((excluded) => {
    const out = [];
    let cjkCount = 0;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || !el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
      if (excluded.some((sel) => el.closest(sel))) continue;
      const text = n.textContent;
      cjkCount += (text.match(/[\u4e00-\u9fff]/g) || []).length;
      for (const m of text.matchAll(/-{0,2}[A-Za-z][A-Za-z0-9_.\-+/@]*/g)) out.push({ word: m[0].replace(/[.\-/]+$/, ''), context: text.trim().slice(0, 120) });
    }
    return { words: out, cjk: cjkCount };
  }, EXCLUDED);
  const modelName = (await page.textContent('[data-role="model-name"]').catch(() => '')) || '';
  const gpuNames = await page.$$eval('#ctl-gpu option', (os) => os.map((o) => o.title || o.textContent));
  // Rates ("GiB/s", "tokens/s") are allowed when each part is.
  const allowed = (w) => ALLOWED.has(w) || (w.includes('/') && w.split('/').every((p) => ALLOWED.has(p))) || extraAllowed.includes(w) ||
    /^-{1,2}[a-z]/.test(w) || // a flag
    /^[A-Z][A-Za-z0-9]*For(CausalLM|ConditionalGeneration)$/.test(w) || // architecture class (model name)
    (w.length > 1 && modelName.includes(w)) ||
    gpuNames.some((g) => g.split(/[\s()]+/).includes(w)); // GPU product names
  return { bad: words.filter((x) => !allowed(x.word)), cjk };
}

const CASES = [
  '',
  'model=Qwen/Qwen3-8B&engine=llamacpp&ctk=q8_0&ctv=q4_0&seqs=4',
  'model=Qwen/Qwen3-Next-80B-A3B-Thinking',
  'model=deepseek-ai/DeepSeek-V3&gpu=h200&gpuCount=8&tp=8',
  'model=google/gemma-3-4b-it&engine=transformers',
  'model=openai/gpt-oss-20b&kv=fp8&ctx=131072',
  'model=Qwen/Qwen3-8B&embed=1&panels=controls,bar,metrics,context,compare,formula',
  'model=missing/nothing-here',
  'model=meta-llama/Llama-3.1-8B&foo=1',
];

for (const q of CASES) {
  test(`?lang=zh-CN shows no English leftovers: ${q || 'default view'}`, async () => {
    const { page, context, errors } = await openPage(env, 'lang=zh-CN&' + q);
    assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
    // Echoed user input is not page text: the id that failed, the ignored parameter; nor is a config's model_type
    // that a note names (vllm_trust_remote_code).
    const { bad, cjk } = await leftovers(page, ['missing/nothing-here', 'foo', 'deepseek_v3']);
    assert.deepEqual(bad, [], JSON.stringify(bad.slice(0, 10), null, 1));
    assert.ok(cjk > 40, `only ${cjk} Chinese characters`);
    assert.equal(await page.title(), 'kvbudget — 部署大模型时，显存都去哪了？');
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('the error message of a hub failure is Chinese too', async () => {
  const { page, context } = await openPage(env, 'lang=zh-CN&model=missing/nothing-here');
  assert.equal(await page.getAttribute('body', 'data-state'), 'error');
  assert.equal(await page.textContent('[data-role="error"]'), 'Hub 上找不到 missing/nothing-here（HTTP 404）。请检查拼写和版本，或粘贴它的 config.json。');
  await context.close();
});

// The language select holds the page's language alone until the first answer is painted (no
// CJK font looked up for the first frame of an English page), then every language, in the
// catalog's order, still showing the page's.
test('the language select lists every language once the first answer is painted', async () => {
  for (const [q, shown] of [['', 'en'], ['lang=zh-CN', 'zh-CN']]) {
    const { page, context } = await openPage(env, q);
    await page.waitForFunction(() => document.querySelectorAll('#lang option').length === 2);
    assert.deepEqual(await page.$$eval('#lang option', (os) => os.map((o) => [o.value, o.textContent])), [['en', 'English'], ['zh-CN', '简体中文']]);
    assert.equal(await page.inputValue('#lang'), shown);
    await context.close();
  }
});

test('without ?lang= the browser language decides; ?lang= wins over it', async () => {
  const zh = await openPage(env, '', { locale: 'zh-CN' });
  assert.equal(await zh.page.getAttribute('html', 'lang'), 'zh-CN');
  assert.equal(await zh.page.textContent('#results-h'), '显存预算');
  await zh.context.close();
  const tw = await openPage(env, '', { locale: 'zh-TW' });
  assert.equal(await tw.page.getAttribute('html', 'lang'), 'zh-CN', 'the only Chinese catalog');
  await tw.context.close();
  const en = await openPage(env, '', { locale: 'en-US' });
  assert.equal(await en.page.getAttribute('html', 'lang'), 'en');
  assert.equal(await en.page.textContent('#results-h'), 'Memory budget');
  await en.context.close();
  const fr = await openPage(env, '', { locale: 'fr-FR' });
  assert.equal(await fr.page.getAttribute('html', 'lang'), 'en');
  await fr.context.close();
  const forced = await openPage(env, 'lang=en', { locale: 'zh-CN' });
  assert.equal(await forced.page.getAttribute('html', 'lang'), 'en');
  assert.equal(await forced.page.textContent('#results-h'), 'Memory budget');
  await forced.context.close();
});

test('the switcher relabels the page in place: same numbers, same model, no new request', async () => {
  const { page, context, errors } = await openPage(env, '');
  await page.fill('#model-input', 'Qwen/Qwen3-8B');
  await page.press('#model-input', 'Enter');
  await page.waitForFunction(() => document.querySelector('[data-role="model-name"]')?.textContent === 'Qwen/Qwen3-8B');
  await waitSettled(page);
  const numbers = await metrics(page);
  const hubRequests = env.hub.requests.length;

  await page.selectOption('#lang', 'zh-CN');
  await waitSettled(page);
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
  assert.equal(await page.textContent('#results-h'), '显存预算');
  assert.equal(await page.textContent('[data-metric="kv-bytes-per-token"]'), '144.00 KiB');
  assert.deepEqual(await metrics(page), numbers);
  assert.equal(await page.inputValue('#model-input'), 'Qwen/Qwen3-8B');
  // The address follows a frame or a quiet moment later (main.js writeUrl).
  await page.waitForFunction(() => new URL(location.href).searchParams.get('lang') === 'zh-CN');
  assert.equal(env.hub.requests.length, hubRequests, 'the model is not fetched again');
  assert.equal(await page.$$eval('#sec-chart .u-legend .u-series .u-label', (s) => s[1]?.textContent.trim()), 'KV Cache');
  // The source line names the hub URL and the revision: data, not page text.
  const { bad } = await leftovers(page, ['http', 'main']);
  assert.deepEqual(bad, []);

  await page.selectOption('#lang', 'en');
  await waitSettled(page);
  assert.equal(await page.textContent('#results-h'), 'Memory budget');
  assert.deepEqual(await metrics(page), numbers);
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('lang'));
  assert.equal(await page.$$eval('.chart', (c) => c.length), 1, 'one chart after two rebuilds');
  assert.deepEqual(errors, []);
  await context.close();
});

test('numbers and units are formatted for the language by Intl', async () => {
  for (const lang of ['en', 'zh-CN']) {
    const { page, context } = await openPage(env, `lang=${lang}&model=Qwen/Qwen3-8B&gpu=h100-sxm`);
    const raw = Number(await page.getAttribute('[data-metric="max-context"]', 'data-value'));
    assert.ok(raw >= 10000, String(raw)); // big enough to need a group separator
    assert.equal(await page.textContent('[data-metric="max-context"]'), new Intl.NumberFormat(lang).format(raw));
    const perToken = await page.textContent('[data-metric="kv-bytes-per-token"]');
    assert.equal(perToken, new Intl.NumberFormat(lang, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(144) + ' KiB');
    await context.close();
  }
});

// Issue 9.7: the Chinese page reads as Chinese: measure words, full-width punctuation,
// a natural name for the optimization steps, no "1 个序列和 1 个序列", grouped numbers.
test('zh-CN wording: measure words, full-width punctuation, formatted numbers', async () => {
  const { page, context, errors } = await openPage(env, 'lang=zh-CN&model=Qwen/Qwen3-8B&gpu=h100-sxm');
  const summary = await page.textContent('.model-summary');
  assert.ok(summary.includes('36 层，均为全注意力'), summary);
  assert.ok(summary.includes('最大上下文长度 40,960'), summary);
  const legend = await page.$$eval('.bar-legend li, [data-part]', (li) => li.map((e) => e.textContent));
  assert.ok(legend.some((x) => /^加载后的权重：\d/.test(x)), JSON.stringify(legend));
  const body = await page.textContent('#results');
  assert.ok(!/[\u4e00-\u9fff]: /.test(body), 'no half-width colon after Chinese text');
  assert.ok(body.includes('逐级优化'));
  assert.ok(!body.includes('优化阶梯'));
  assert.ok(!body.includes('1 个序列和 1 个序列'));
  assert.ok(body.includes('所选 KV 数据类型下，1 个序列的 KV Cache'));
  await context.close();

  const hybrid = await openPage(env, 'lang=zh-CN&model=Qwen/Qwen3-Next-80B-A3B-Thinking');
  const s2 = await hybrid.page.textContent('.model-summary');
  assert.ok(s2.includes('48 层，12 层全注意力、36 层线性注意力'), s2);
  await hybrid.context.close();
  // A Latin kind name keeps the space Chinese sets before Latin; a Han one takes none.
  const mla = await openPage(env, 'lang=zh-CN&model=deepseek-ai/DeepSeek-V3');
  const s3 = await mla.page.textContent('.model-summary');
  assert.ok(s3.includes('61 层，均为 MLA'), s3);
  await mla.context.close();
  assert.deepEqual(errors, []);
});
