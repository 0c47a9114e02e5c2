// The answer card's "Use these settings" (issue 8's one answer): the core's advice comes with the
// inputs it was computed with (advice_inputs), and the page's settings for it (budget-inputs.js
// adviceSettings) ask the core exactly those inputs, so the answer after the click is the one the
// advice promised. Each advice the core gives, from a real config through the module the page loads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { core, fixtureText } from './helpers.mjs';
import { defaultState } from '../../web/src/state.js';
import { budgetInputs, adviceSettings } from '../../web/src/budget-inputs.js';

const kvb = await core();

// The advice for `state`, the settings the page takes from it, and the answer to those settings.
function takeAdvice(text, id, state) {
  const model = kvb.parseConfig(text, id);
  try {
    const answer = model.compute(budgetInputs(state));
    const settings = adviceSettings(state, answer);
    const after = settings && model.compute(budgetInputs({ ...state, ...settings }));
    return { answer, settings, after };
  } finally {
    model.release();
  }
}

// The advice's settings give the inputs it was computed with, and the longest context it named.
function assertTaken({ answer, settings, after }, code, want) {
  assert.equal(answer.advice.code, code);
  assert.deepEqual(settings, want);
  assert.deepEqual(after.inputs, answer.advice_inputs);
  assert.equal(after.advice, null);
  assert.equal(after.advice_inputs, null);
  assert.equal(after.metrics['max-context'], Number(answer.advice.params.max.replace(/,/g, '')));
}

test('vLLM: the fp8 KV cache the advice names is the kv setting', () => {
  const state = { ...defaultState(), gpu: 'rtx-4090', ctx: 32768 };
  assertTaken(takeAdvice(fixtureText('Qwen/Qwen3-8B'), 'Qwen/Qwen3-8B', state), 'advice_vllm_fp8_kv', { kv: 'fp8' });
});

test('llama.cpp: q8_0 for both halves is -ctk and -ctv', () => {
  const state = { ...defaultState(), engine: 'llamacpp', gpu: 'rtx-4060-ti-16gb', ctx: 40960, seqs: 2 };
  assertTaken(takeAdvice(fixtureText('Qwen/Qwen3-8B'), 'Qwen/Qwen3-8B', state), 'advice_llamacpp_q8_kv', { ctk: 'q8_0', ctv: 'q8_0' });
});

test('vLLM: expert parallelism for fp8 expert blocks TP splits is the ep setting', () => {
  const state = { ...defaultState(), gpu: 'rtx-4090', gpuCount: 4, ctx: 32768 };
  assertTaken(takeAdvice(fixtureText('Qwen/Qwen3-30B-A3B-FP8'), 'Qwen/Qwen3-30B-A3B-FP8', state), 'advice_vllm_ep', { ep: true });
});

test('vLLM: fewer TP ranks times pipeline stages on the same GPUs are the tp and pp settings', () => {
  // Qwen's FP8 form of Qwen3.5-35B-A3B (tests/unit/test_quant.cpp): TP 8 splits the shared expert off the block grid.
  const c = JSON.parse(fixtureText('Qwen/Qwen3.5-35B-A3B'));
  c.quantization_config = { activation_scheme: 'dynamic', fmt: 'e4m3', quant_method: 'fp8', weight_block_size: [128, 128] };
  const state = { ...defaultState(), gpu: 'h100', gpuCount: 8, ctx: 32768 };
  assertTaken(takeAdvice(JSON.stringify(c), 'Qwen/Qwen3.5-35B-A3B-FP8', state), 'advice_vllm_tp_pp', { tp: 4, pp: 2 });
});

test('vLLM: an AWQ checkpoint split off its groups is advised the same GPUs as fewer TP ranks times stages', () => {
  // Qwen2-VL-2B-Instruct-AWQ (tests/unit/test_quant.cpp): down_proj's 8,960 inputs are 2,240 per GPU at TP 4.
  const state = { ...defaultState(), gpu: 'rtx-4090', gpuCount: 4, ctx: 8192 };
  const taken = takeAdvice(fixtureText('Qwen/Qwen2-VL-2B-Instruct-AWQ'), 'Qwen/Qwen2-VL-2B-Instruct-AWQ', state);
  assert.equal(taken.answer.budget.engine_error,
    'The input size is not aligned with the quantized weight shape. This can be caused by too large tensor parallel size.');
  assertTaken(taken, 'advice_vllm_tp_pp_awq', { tp: 2, pp: 2 });
});

test('vLLM: an architecture the release dropped is advised the release its registry names', () => {
  // Baichuan2-13B (BaichuanForCausalLM, out of vLLM's registry from 0.25.0, "supported until v0.23.0").
  const state = { ...defaultState(), gpu: 'h100', ctx: 4096 };
  const taken = takeAdvice(fixtureText('baichuan-inc/Baichuan2-13B-Chat'), 'baichuan-inc/Baichuan2-13B-Chat', state);
  assert.equal(taken.answer.budget.verdict_reason.code, 'vllm_arch_dropped');
  assertTaken(taken, 'advice_vllm_release', { engineVersion: '0.23.0' });
});

test('no advice, no settings; an advice that changes an input no control sends gets no button', () => {
  const state = { ...defaultState(), gpu: 'h100', ctx: 8192 };
  const { answer, settings } = takeAdvice(fixtureText('Qwen/Qwen3-8B'), 'Qwen/Qwen3-8B', state);
  assert.equal(answer.advice, null);
  assert.equal(answer.advice_inputs, null);
  assert.equal(settings, null);
  const asked = budgetInputs(state);
  assert.equal(adviceSettings(state, { inputs: asked, advice_inputs: { ...asked, block_size: 32 } }), null);
  // vLLM has one KV dtype: an advice splitting K and V is not one its controls can set.
  assert.equal(adviceSettings(state, { inputs: asked, advice_inputs: { ...asked, kv_cache_dtype_v: 'fp8' } }), null);
});
