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

        // --- simulator (src/sim/) ---


        // --- gguf: GGUF header reader and metadata -> ModelSpec (src/model/gguf*.cpp) ---
        {"gguf_not_gguf", "{file} is not a GGUF file (it starts with '{magic}', not 'GGUF')"},
        {"gguf_v1", "{file} is a GGUF version 1 file, which llama.cpp no longer reads: convert it again"},
        {"gguf_version", "{file} has GGUF version {version}; kvbudget reads versions 2 and 3"},
        {"gguf_big_endian", "{file} has GGUF version {version}: a big-endian file (llama.cpp reads little-endian GGUF only)"},
        {"gguf_truncated", "{file} is truncated: it ends at byte {size} inside {what}, the header needs at least {need} bytes"},
        {"gguf_header_too_large", "{file}: {what} would make the header larger than {limit}: not a real GGUF header"},
        {"gguf_string_too_long", "{file}: {what} is a string of {len} bytes, more than the {max} allowed"},
        {"gguf_bad_value_type", "{file}: {what} has value type {id}, which is not a GGUF type (0..12)"},
        {"gguf_bad_bool", "{file}: {what} is a bool stored as {value} (must be 0 or 1)"},
        {"gguf_nesting", "{file}: {what} nests arrays deeper than {max} levels"},
        {"gguf_count", "{file}: {what} is {count}, more than a header of {limit} could hold"},
        {"gguf_duplicate_key", "{file}: metadata key {key} appears twice"},
        {"gguf_alignment", "{file}: general.alignment is {value}; it must be a u32 power of two"},
        {"gguf_tensor_name", "{file}: tensor name '{tensor}' is {len} bytes long; ggml allows at most 63"},
        {"gguf_duplicate_tensor", "{file}: tensor {tensor} appears twice"},
        {"gguf_tensor_dims", "{file}: tensor {tensor} has {n} dimensions; ggml allows at most 4"},
        {"gguf_tensor_size", "{file}: tensor {tensor} has more elements or bytes than fit in 64 bits"},
        {"gguf_tensor_type", "{file}: tensor {tensor} has ggml type {id}, which is not a type GGUF files may hold"},
        {"gguf_tensor_block", "{file}: tensor {tensor} has rows of {ne0} values, not a multiple of the {type} block ({block})"},
        {"gguf_tensor_offset", "{file}: tensor {tensor} starts at data offset {offset}, expected {expected}"},
        {"gguf_data_past_end", "{file}: tensor data runs to byte {end} but the file has {size} bytes"},
        {"gguf_no_architecture", "{file}: general.architecture is missing: not a llama.cpp model file"},
        {"gguf_missing_key", "{file}: {key} is missing"},
        {"gguf_bad_key", "{file}: {key} must be {expected}, got {got}"},
        {"gguf_array_length", "{file}: {key} has {n} entries but {arch}.block_count is {layers}"},
        {"gguf_no_tensors", "{file} has no tensor infos: a vocabulary-only GGUF holds no model"},
        {"gguf_split_mismatch", "{file}: shard {shard} says split.count = {count}, the first shard says {expected}"},
        {"gguf_split_missing", "{file}: the model is split in {count} files; shard {shard} is missing"},
        {"gguf_split_tensors", "{file}: the shards hold {have} tensors, the first shard says split.tensors.count = {expected}"},
        {"gguf_nextn", "{arch}.nextn_predict_layers = {n}: llama.cpp keeps the multi-token-prediction layer's weights but gives it no KV cache"},
        {"gguf_legacy_mla", "{file} was converted without the split MLA tensors (attn_k_b / attn_v_b): llama.cpp caches full K and V per head ({heads} heads x {k} + {v}), not the {latent}-wide latent"},
        {"gguf_read", "read from the GGUF header: {tensors} tensors, {bytes} of weights"},

        // --- input checks (every inputs struct's validate()) ---
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
