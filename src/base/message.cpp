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

        // --- model: config.json refusals (src/model/model.cpp, src/model/config_reader.cpp) ---
        {"config_too_deep", "{model}: config.json is nested deeper than {depth} levels"},
        {"config_not_json", "{model}: config.json is not valid JSON"},
        {"config_not_json_at", "{model}: config.json is not valid JSON (syntax error near byte {byte})"},
        {"config_not_object", "{model}: config.json must be a JSON object, got {got}"},
        {"missing_field", "{model}: missing field {field}"},
        {"missing_field_alternatives", "{model}: missing field {field} (also looked for {others})"},
        {"out_of_range", "{model}: {field} = {value} is out of range ({min} to {max})"},
        {"not_integer", "{model}: {field} must be an integer, got {value}"},
        {"not_integer_type", "{model}: {field} must be an integer, got {got} {value}"},
        {"not_string", "{model}: {field} must be a string, got {got}"},
        {"not_array", "{model}: {field} must be an array, got {got}"},
        {"not_object", "{model}: {field} must be an object, got {got}"},
        {"not_positive", "{model}: {field} must be a positive number"},
        {"pattern_not_string", "{model}: {field} must be a string"},
        {"length_mismatch", "{model}: {field} has {n} entries but num_hidden_layers is {layers}"},
        {"pattern_length_mismatch", "{model}: {field} has {n} layers but num_hidden_layers is {layers}"},
        {"list_length_mismatch", "{model}: {field} must list one entry per layer ({layers})"},
        {"entry_length_mismatch", "{model}: {field} must have one entry per layer ({layers})"},
        {"head_dim_not_derivable", "{model}: hidden_size ({hidden}) is not a multiple of num_attention_heads ({heads}) and head_dim is not given"},
        {"kv_heads_above_heads", "{model}: {field} ({kv_heads}) is greater than num_attention_heads ({heads})"},
        {"heads_not_multiple_of_kv_heads", "{model}: num_attention_heads ({heads}) is not a multiple of {field} ({kv_heads})"},
        {"group_not_divisor", "{model}: {field} ({group}) does not divide num_attention_heads ({heads})"},
        {"unknown_layer_type", "{model}: {field} is '{value}', which is not a known layer type"},
        {"bad_pattern_letter", "{model}: hybrid_override_pattern has '{letter}' at position {position} (expected M, *, - or E)"},
        {"mla_head_dims_zero", "{model}: qk_rope_head_dim and qk_nope_head_dim are both 0"},
        {"attn_offset_not_below_period", "{model}: attn_layer_offset must be less than attn_layer_period"},
        {"experts_per_token_above_experts", "{model}: num_experts_per_tok ({k}) is greater than the number of experts ({experts})"},
        {"unsupported_type_missing_field", "{model}: model_type '{type}' is not supported and the generic fields are missing (missing field {field})"},
        {"unsupported_type_missing_field_alternatives", "{model}: model_type '{type}' is not supported and the generic fields are missing (missing field {field} (also looked for {others}))"},
        {"no_model_type_missing_field", "{model}: config.json has no model_type and the generic fields are missing (missing field {field})"},
        {"no_model_type_missing_field_alternatives", "{model}: config.json has no model_type and the generic fields are missing (missing field {field} (also looked for {others}))"},
        {"no_layers", "{model}: the model has no layers"},
        {"no_cache_layers", "{model}: no layer of this model holds a KV cache or state"},

        // --- units (src/base/units.cpp) ---
        {"bad_size", "invalid size '{value}' (use bytes or a unit: 512MiB, 24GB, 8GiB)"},
        {"size_too_large", "size '{value}' is too large"},
        {"not_a_count", "{flag} must be a non-negative integer, got '{value}'"},

        // --- KV cache (src/model/dtype.cpp, src/kv/) ---
        {"unknown_vllm_kv_dtype", "unknown vLLM --kv-cache-dtype '{value}' (choose from {choices})"},
        {"unknown_llamacpp_kv_type", "unknown llama.cpp cache type '{value}' (choose from {choices})"},
        {"unknown_transformers_kv_dtype", "unknown transformers cache dtype '{value}' (choose from auto, bfloat16, float16, float32)"},
        {"unknown_engine", "engine must be vllm, llamacpp or transformers, got '{value}'"},
        {"negative_context", "context and sequence count must not be negative"},
        {"kv_overflow", "{model}: KV cache for {seqs} sequences of {context} tokens exceeds 8 EiB"},

        // --- weights (src/model/weights.cpp) ---
        {"auto_dtype", "auto: model dtype {dtype}"},
        {"auto_quant", "auto: quantization_config ({q})"},
        {"quant_not_modelled", "auto: quantization_config method '{method}' is not modelled, sized as {dtype}"},
        {"params_ignored", "given parameter count {given} ignored: the checkpoint is pre-quantized ({method}), so its tensor element count is not a parameter count; using the config's {count}"},
        {"params_differ", "given parameter count {given} differs from the config's {count} by {diff}; the difference is stored at the format's main rate"},

        // --- engines (src/engines/) ---

        // --- transformers cache (src/engines/transformers_cache.cpp) ---
        {"unknown_cache_dtype", "unknown dtype '{value}' for the transformers cache of {model}"},
        {"negative_tokens", "tokens and batch must not be negative"},
        {"transformers_cache_overflow", "transformers cache bytes overflow int64"},

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

        // --- simulator setup (src/sim/setup.cpp) ---
        {"no_paging", "{model} has no context-proportional KV cache (only sliding-window or recurrent state): paging does not apply"},
        {"sim_unknown_gpu", "unknown GPU '{gpu}'"},
        {"no_max_model_len", "{model} has no max_position_embeddings: give the max model length"},
        {"gpu_or_memory_needed", "a GPU or its memory size is needed"},
        {"no_kv_memory", "no memory is left for the KV cache on {gpu} at utilization {utilization} (weights {weights})"},
        {"unknown_workload", "unknown workload '{value}'"},

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
