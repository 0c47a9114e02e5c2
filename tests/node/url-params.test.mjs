// The page's address as it is read before the calculator module is here (web/src/url-values.js,
// web/src/state.js): a context reads as the core's parse_context reads it (the context field and
// the CLI's --max-model-len), numbers past the core's limits are ignored with their range, and
// llama.cpp's kv sets both halves as `kvbudget budget --kv-cache-dtype` does.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { core } from './helpers.mjs';
import { parseContextText, langParam } from '../../web/src/url-values.js';
import { stateFromParams, limitState } from '../../web/src/state.js';
import { budgetInputs } from '../../web/src/budget-inputs.js';
import { mulberry32 } from '../random.mjs';

let kvb;
before(async () => {
  kvb = await core();
});

// The core's reading: the number, or null where it refuses the text.
function coreContext(text) {
  try {
    return kvb.parseContext(text);
  } catch (e) {
    if (e.name !== 'KvbudgetError') throw e;
    return null;
  }
}

test('parseContextText reads the spellings the context field and --max-model-len take', () => {
  const cases = [
    ['32768', 32768], ['32K', 32768], ['32k', 32768], ['128K', 131072], ['1M', 1048576], ['1m', 1048576],
    ['32,768', 32768], ['32_768', 32768], ['1,048,576', 1048576], [' 8K ', 8192], ['8 K', 8192], ['\t4096\n', 4096],
    ['0', 0], ['007', 7], ['1,024K', 1048576],
    ['', null], ['K', null], ['-5', null], ['1.5K', null], ['32,76', null], ['3,2768', null], [',123', null], ['123,', null],
    ['1,,000', null], ['1,000_000', null], ['32KB', null], ['32 KiB', null], ['0x100', null], ['１２８', null], ['32K ', 32768],
    ['8\tK', null], ['1G', null], ['abc', null],
  ];
  for (const [text, want] of cases) {
    assert.equal(parseContextText(text), want, JSON.stringify(text));
    assert.equal(coreContext(text), want, `core ${JSON.stringify(text)}`);
  }
});

test('parseContextText agrees with the core on 40,000 generated texts', () => {
  // A fixed seed: the same texts every run.
  const rand = mulberry32(0x6b76);
  const pick = (s) => s[Math.floor(rand() * s.length)];
  const ALPHABET = ['0', '1', '2', '3', '5', '7', '9', ',', '_', ' ', 'k', 'K', 'm', 'M', '\t', '\n', '\v', '\f', '\r', '.', '+', '-', 'x', 'é', '\u00a0', '０'];
  const texts = [];
  for (let i = 0; i < 20000; i++) {
    const n = Math.floor(rand() * 10);
    let s = '';
    for (let j = 0; j < n; j++) s += pick(ALPHABET);
    texts.push(s);
  }
  // Well-formed numbers around the edges: grouped, suffixed, long (18 and 19 significant digits, 2^53).
  for (let i = 0; i < 20000; i++) {
    const digits = Math.floor(rand() * 22) + 1;
    let num = String(Math.floor(rand() * 9) + 1);
    while (num.length < digits) num += String(Math.floor(rand() * 10));
    if (rand() < 0.2) num = '0'.repeat(Math.floor(rand() * 3)) + num;
    const sep = rand() < 0.4 ? pick([',', '_']) : '';
    if (sep) num = num.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
    const suffix = rand() < 0.5 ? pick(['', 'K', 'k', 'M', 'm', ' K', '  M']) : '';
    texts.push(pick(['', ' ', '\t']) + num + suffix + pick(['', ' ', '\r\n']));
  }
  texts.push('9007199254740991', '9007199254740992', '9007199254740991K', '9007199254740992K', '8796093022207M', '8796093022208M',
    '999999999999999999', '1000000000000000000', '000000000000000000000001', '9,223,372,036,854,775,807');
  let refused = 0;
  for (const text of texts) {
    const want = coreContext(text);
    if (want === null) refused++;
    assert.equal(parseContextText(text), want, JSON.stringify(text));
  }
  // Both kinds were asked about.
  assert.ok(refused > 10000 && refused < texts.length - 10000, `refused ${refused} of ${texts.length}`);
});

test('?lang= takes the obvious spellings of the two languages, and no Traditional Chinese', () => {
  for (const v of ['zh-CN', 'zh', 'zh-cn', 'ZH-CN', 'zh-Hans', 'zh-hans-CN', 'zh-SG']) assert.equal(langParam(v), 'zh-CN', v);
  for (const v of ['en', 'EN', 'en-US', 'en-GB']) assert.equal(langParam(v), 'en', v);
  for (const v of ['zh-TW', 'zh-Hant', 'zh-HK', 'fr', '', 'zh_CN', 'english']) assert.equal(langParam(v), '', v);
});

test('an address: ctx spelled as people write it, only the unknown panels reported, kv for both llama.cpp halves', () => {
  const r = stateFromParams(new URLSearchParams('model=Qwen/Qwen3-8B&engine=llamacpp&kv=q8_0&ctx=32K&panels=context,foo,nope&lang=zh'));
  assert.deepEqual(r.ignored, [['panels', 'foo,nope']]);
  assert.equal(r.state.ctx, 32768);
  assert.equal(r.state.panels, 'context');
  assert.equal(r.state.lang, 'zh-CN');
  assert.deepEqual([r.state.kv, r.state.ctk, r.state.ctv], ['auto', 'q8_0', 'q8_0']);
  // What the core is asked: the same as `kvbudget budget --engine llamacpp --kv-cache-dtype q8_0`.
  const input = budgetInputs(r.state);
  assert.deepEqual([input.kv_cache_dtype, input.kv_cache_dtype_v], ['q8_0', 'q8_0']);

  // ctk / ctv win for their half, as -ctk / -ctv do beside --kv-cache-dtype.
  const k = stateFromParams(new URLSearchParams('engine=llamacpp&kv=q8_0&ctv=f16')).state;
  assert.deepEqual([k.ctk, k.ctv], ['q8_0', 'f16']);
  const both = stateFromParams(new URLSearchParams('engine=llamacpp&ctk=q4_0&kv=q8_0')).state;
  assert.deepEqual([both.ctk, both.ctv], ['q4_0', 'q8_0']);
  // A GGUF is llama.cpp's whatever engine says; vLLM keeps its own kv.
  const gguf = stateFromParams(new URLSearchParams('model=unsloth/Qwen3-8B-GGUF:Q4_K_M&kv=q4_0')).state;
  assert.deepEqual([gguf.kv, gguf.ctk, gguf.ctv], ['auto', 'q4_0', 'q4_0']);
  const vllm = stateFromParams(new URLSearchParams('kv=fp8')).state;
  assert.deepEqual([vllm.kv, vllm.ctk, vllm.ctv], ['fp8', 'f16', 'f16']);

  // Nothing known: the whole value.
  assert.deepEqual(stateFromParams(new URLSearchParams('panels=foo')).ignored, [['panels', 'foo']]);
  assert.deepEqual(stateFromParams(new URLSearchParams('panels=')).ignored, [['panels', '']]);
  assert.deepEqual(stateFromParams(new URLSearchParams('ctx=128K&ctx=-5&lang=zh-TW')).ignored, [['ctx', '-5'], ['lang', 'zh-TW']]);
});

test('numbers past the core\'s limits go back to their defaults, each with the range it allows', () => {
  const limits = kvb.catalog().limits;
  const q = 'ctx=99999999999&gpuCount=0&seqs=1000000000&maxNumSeqs=99999999999&tp=5000&gpuMem=9999999999999999&ngl=40&ram=1&gpuCount=4096';
  const { state, raw } = stateFromParams(new URLSearchParams(q));
  assert.deepEqual(limitState(state, limits, raw), [
    ['ctx', '99999999999', { min: 1, max: 1073741824 }],
    ['seqs', '1000000000', { min: 1, max: 1048576 }],
    ['maxNumSeqs', '99999999999', { min: 0, max: 2147483647 }],
    ['tp', '5000', { min: 0, max: 4096 }],
    ['gpuMem', '9999999999999999', { min: 1, max: 1125899906842624 }],
  ]);
  // The last gpuCount (4096) is in range; the rest kept.
  assert.deepEqual([state.ctx, state.seqs, state.maxNumSeqs, state.tp, state.gpuMem, state.gpuCount, state.ngl, state.ram],
    [32768, 1, 0, 0, 24 * 1024 ** 3, 4096, 40, 1]);
  // In range: nothing; 1M = 1,048,576 tokens is.
  const ok = stateFromParams(new URLSearchParams('ctx=1M&seqs=1048576&gpuCount=1'));
  assert.deepEqual(limitState(ok.state, limits, ok.raw), []);
  assert.equal(ok.state.ctx, 1048576);
  const zero = stateFromParams(new URLSearchParams('gpuCount=0'));
  assert.deepEqual(limitState(zero.state, limits, zero.raw), [['gpuCount', '0', { min: 1, max: 4096 }]]);
  assert.equal(zero.state.gpuCount, 1);
  // ctx=0 is the core's "the model's limit" (the CLI's default), which the field cannot show: ignored.
  const noCtx = stateFromParams(new URLSearchParams('ctx=0'));
  assert.deepEqual(limitState(noCtx.state, limits, noCtx.raw), [['ctx', '0', { min: 1, max: 1073741824 }]]);
  assert.equal(noCtx.state.ctx, 32768);
});

// vLLM's pipeline stages: pp, the CLI's --pipeline-parallel-size by name; the core's range (1-4096; 0 is not a
// stage count); sent to the core for vLLM only, and written into a vLLM link only.
test('pp: vLLM\'s pipeline stages, read, limited, sent and written for vLLM only', async () => {
  const { stateToParams, paramGuess } = await import('../../web/src/state.js');
  const limits = kvb.catalog().limits;
  const r = stateFromParams(new URLSearchParams('pp=4&gpuCount=8'));
  assert.deepEqual([r.state.pp, r.ignored], [4, []]);
  assert.deepEqual(limitState(r.state, limits, r.raw), []);
  assert.equal(budgetInputs(r.state).pipeline_parallel_size, 4);
  assert.equal(stateToParams(r.state).toString(), 'gpuCount=8&pp=4');
  const llama = { ...r.state, engine: 'llamacpp' };
  assert.equal(budgetInputs(llama).pipeline_parallel_size, 1);
  assert.equal(stateToParams(llama).toString(), 'engine=llamacpp&gpuCount=8');
  const bad = stateFromParams(new URLSearchParams('pp=0&pp=4097'));
  assert.deepEqual(limitState(bad.state, limits, bad.raw), [['pp', '4097', { min: 1, max: 4096 }]]);
  assert.equal(bad.state.pp, 1);
  assert.equal(paramGuess('pipeline-parallel-size'), 'pp');
  assert.equal(paramGuess('pipeline_parallel_size'), 'pp');
});
