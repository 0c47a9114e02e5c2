// The page's state as the core's BudgetInputs (src/budget/budget.h): the same names the
// CLI's flags fill, so `kvbudget budget` with the copied settings gives this answer. Pure
// (no DOM): scripts/build-site.mjs computes the default link's answer with it at build time.
// hubParams: the Hub's exact parameter count for the loaded model (main.js), 0 when unknown.
import { specConfig } from './state.js';

export function budgetInputs(s, hubParams = 0) {
  const vllm = s.engine === 'vllm';
  const llama = s.engine === 'llamacpp';
  return {
    engine: s.engine,
    context: s.ctx,
    seqs: s.seqs,
    kv_cache_dtype: llama ? s.ctk : s.kv,
    kv_cache_dtype_v: llama ? s.ctv : '',
    gpu: s.gpu,
    gpu_memory_bytes: s.gpu ? s.macRam : s.gpuMem, // macRam: only ever set for a Mac (controls.js)
    gpu_count: s.gpuCount,
    // gpu_memory_utilization is vLLM's knob; llama.cpp and transformers budget against the whole GPU.
    gpu_memory_utilization: vllm ? s.util : 0,
    weights: s.weights,
    tensor_parallel_size: vllm ? s.tp : 0,
    pipeline_parallel_size: vllm ? s.pp : 1,
    // vLLM's flag alone: the core refuses it for llama.cpp and transformers, whose controls do not show it.
    expert_parallel: vllm && s.ep,
    max_num_seqs: vllm ? s.maxNumSeqs : 0,
    speculative_config: vllm ? specConfig(s.spec) : '',
    engine_version: vllm || llama ? s.engineVersion : '',
    // llama.cpp: --spec-type draft-mtp (the model's MTP layers, and as many recurrent rollback
    // snapshots as draft tokens) or ngram-mod (no cache); the core refuses a model without MTP.
    ...llamaSpec(llama ? s.spec : ''),
    rope_scaling: s.rope,
    params: hubParams,
    params_from_hub: hubParams > 0, // a far-off Hub total is set aside with a note, not refused
    // A Hub GGUF: the command downloads it the way the user named it (llama-server -hf org/repo:QUANT).
    hf_ref: llama && s.quant ? `${s.model}:${s.quant}` : '',
    n_gpu_layers: llama ? s.ngl : -1,
    ram_bytes: llama ? s.ram : 0,
  };
}

// The page's spec (METHOD[:TOKENS]) as llama-server's --spec-type and --spec-draft-n-max.
function llamaSpec(spec) {
  const [method, n] = (spec || '').split(':');
  const type = method === 'mtp' ? 'draft-mtp' : method === 'ngram' ? 'ngram-mod' : '';
  return type ? { spec_type: type, spec_draft_n_max: n ? Number(n) : 3 } : {};
}

// The core's advice as the page's settings (the answer card's "Use these settings"): each input the
// answer's advice_inputs changes from its inputs, set in the control that sends it. null when one of
// them is an input no control sends that way, or when the new settings would not ask the core exactly
// what it advised (no button then: it would answer another question than the advice's).
const ADVISED = {
  kv_cache_dtype: (s, value) => (s.engine === 'llamacpp' ? { ctk: value } : { kv: value }),
  kv_cache_dtype_v: (s, value) => (s.engine === 'llamacpp' ? { ctv: value } : null),
  expert_parallel: (s, value) => ({ ep: value }),
  tensor_parallel_size: (s, value) => ({ tp: value }),
  pipeline_parallel_size: (s, value) => ({ pp: value }),
  engine_version: (s, value) => ({ engineVersion: value }),
};
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

export function adviceSettings(state, answer) {
  const asked = answer?.inputs;
  const advised = answer?.advice_inputs;
  if (!asked || !advised) return null;
  const changed = Object.keys(advised).filter((k) => !same(advised[k], asked[k]));
  const settings = {};
  for (const k of changed) {
    const set = ADVISED[k]?.(state, advised[k]);
    if (!set) return null;
    Object.assign(settings, set);
  }
  const before = budgetInputs(state);
  const after = budgetInputs({ ...state, ...settings });
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (!same(after[k], changed.includes(k) ? advised[k] : before[k])) return null;
  }
  return changed.length ? settings : null;
}
