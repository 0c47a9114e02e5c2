#include "base/message.h"

namespace kvb {

std::string Message::param(const std::string& name) const {
    for (const auto& [k, v] : params)
        if (k == name) return v;
    return {};
}

Message note(std::string code, MessageParams params) { return Message{std::move(code), std::move(params)}; }

// One table, grouped by the stage that emits the code. Wording: what happened and,
// where there is one, what to do; CLI flags may be named here (the page's catalogs
// word the same codes in terms of its own controls).
const std::vector<MessageTemplate>& message_templates() {
    static const std::vector<MessageTemplate> t = {
        // --- model: config.json normalization (src/model/model.cpp) ---
        {"no_op_layers", "{n} layers have no attention (no_op): they hold no KV cache"},
        {"cross_attention", "{n} cross-attention layers cache the image tokens, not the context: not counted per token"},
        {"gemma_default", "{field} is not set: Gemma3TextConfig's default {value} used"},
        {"transformers_default", "{field} is not set: transformers' default {value} used"},
        {"gemma_pattern", "sliding_window_pattern is not set: Gemma 3's default 6 used (every 6th layer global)"},
        {"dtype_quantized", "no torch_dtype in config: bfloat16 assumed for the tensors quantization leaves unquantized"},
        {"dtype_float32", "no torch_dtype in config: float32 checkpoint assumed (transformers' default)"},
        {"mha_assumed", "num_key_value_heads is not set: multi-head attention assumed ({n} KV heads, one per attention head)"},
        {"mtp", "num_nextn_predict_layers = {n}: the multi-token-prediction layer is not counted (engines only cache it with speculative decoding)"},
        {"window_unused", "sliding_window = {w} is set but not used by {type}: every layer is full attention"},
        {"window_off", "sliding_window is set but use_sliding_window is false: every layer is full attention"},
        {"indexer", "sparse-attention indexer keys (index_head_dim) are not in the ideal KV; the vLLM view adds its indexer cache"},
        {"nested", "text model read from {where}"},
        {"generic", "model_type '{type}' is not known to kvbudget: sized from the generic fields"},
        {"no_model_type", "no model_type: sized from the generic fields"},
        {"falcon_h1", "each Falcon-H1 layer has an attention and a Mamba-2 mixer in parallel: both are listed"},
        {"state_uncounted", "recurrent layers without state geometry were not counted"},

        // --- weights (src/model/weights.cpp) ---
        {"auto_dtype", "auto: model dtype {dtype}"},
        {"auto_quant", "auto: quantization_config ({q})"},
        {"quant_not_modelled", "auto: quantization_config method '{method}' is not modelled, sized as {dtype}"},
        {"params_ignored", "given parameter count {given} ignored: the checkpoint is pre-quantized ({method}), so its tensor element count is not a parameter count; using the config's {count}"},
        {"params_differ", "given parameter count {given} differs from the config's {count} by {diff}; the difference is stored at the format's main rate"},

        // --- engines (src/engines/) ---

        // --- budget (src/budget/) ---
        {"gpu_reported", "GPU total is what PyTorch reports on a {gpu} ({reported}, marketed {marketed})"},
        {"unified_memory", "unified memory: the GPU may use about {pct} of RAM by default (raise with sysctl iogpu.wired_limit_mb)"},
        {"no_apple_vllm", "vLLM has no Apple GPU backend; --engine llamacpp sizes what runs on {gpu}"},
        {"unused_gpus", "{n} GPU(s) unused by one engine (run more replicas with --data-parallel-size)"},
        {"vllm_gguf", "vLLM's GGUF support is experimental; llama.cpp is the usual engine for {format}"},
        {"pre_quantized", "{format} weights need a pre-quantized checkpoint: point vllm serve at one"},
        {"transformers_pre_quantized", "transformers: {format} weights need a pre-quantized checkpoint"},
        {"sdpa", "transformers: SDPA attention assumed (eager attention adds batch x heads x tokens^2 scores)"},
        {"mmproj", "llama.cpp: the vision tower lives in a separate --mmproj file, not counted"},
        {"gguf_default", "llama.cpp: weights default to a Q4_K_M GGUF (pass --weights to choose)"},
        {"nothing_fits", "no context length fits: free memory (more GPUs, a smaller weights format, lower overheads)"},
        {"bad_engine", "--engine must be vllm, llamacpp or transformers, got '{value}'"},
        {"unknown_gpu", "unknown GPU '{gpu}' (known: {known})"},
        {"transformers_gguf", "transformers loads safetensors checkpoints: GGUF formats ({format}) are for --engine llamacpp"},
        {"llamacpp_not_gguf", "llama.cpp loads GGUF files: --weights must be one of Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q4_0, IQ4_XS, bf16, fp16 (got '{format}')"},
        {"no_context_limit", "model {model} has no max_position_embeddings; pass --max-model-len"},
        {"max_num_seqs_below_seqs", "--max-num-seqs {max_num_seqs} lets vLLM run only {max_num_seqs} of the {seqs} requests at once"},
        {"layers_split", "the layers, their weights and their KV cache are spread evenly over the {n} GPUs; each GPU also holds its own compute buffer and runtime"},
        {"nofit_vllm_pool", "the weights, activations and overhead leave no memory for the KV cache ({short} short per GPU)"},
        {"nofit_vllm_context", "one request of {context} tokens needs {need} of KV cache per GPU, vLLM has {have}: the longest that fits is {max} tokens"},
        {"nofit_llamacpp", "llama.cpp would need {need} (weights {weights}, KV {kv}, compute {compute}, runtime {runtime}) but has {have}"},
        {"nofit_transformers", "transformers would need {need} (weights {weights}, cache {cache} + {transient} while it grows, prefill {prefill}, runtime {runtime}) but has {have}"},
        // Notes of stages not yet coded pass through as English text.
        {"text", "{text}"},

        // --- simulator (src/sim/) ---

        // --- input checks (every inputs struct's validate()) ---
        {"input_wrong_type", "{field} must be a {want}, got {value}"},
        {"input_unknown_field", "unknown input '{field}'"},
        {"inputs_not_object", "the inputs must be a JSON object"},
        {"input_out_of_range", "{flag} must be a whole number from {min} to {max}, got {value}"},
        {"bad_utilization", "gpu_memory_utilization must be in (0, 1], got {value}"},
        {"no_gpu", "no GPU given: pass --gpu NAME or --gpu-memory SIZE"},
        {"parallel_exceeds_gpus", "tensor_parallel_size x pipeline_parallel_size = {needed} exceeds --gpu-count {gpus}"},
    };
    return t;
}

std::string render_english(const Message& m) {
    const char* tpl = nullptr;
    for (const MessageTemplate& t : message_templates())
        if (m.code == t.code) {
            tpl = t.english;
            break;
        }
    if (!tpl) return "<" + m.code + ">";
    std::string out;
    for (const char* p = tpl; *p; ++p) {
        if (*p == '{') {
            const char* e = p + 1;
            while (*e && *e != '}') ++e;
            if (*e == '}') {
                const std::string name(p + 1, e);
                bool found = false;
                for (const auto& [k, v] : m.params)
                    if (k == name) {
                        out += v;
                        found = true;
                        break;
                    }
                if (!found) out += "<" + name + ">";
                p = e;
                continue;
            }
        }
        out += *p;
    }
    return out;
}

}  // namespace kvb
