#include "base/message.h"

namespace kvb {

std::string Message::param(const std::string& name) const {
    for (const auto& [k, v] : params)
        if (k == name) return v;
    return {};
}

Message note(std::string code, MessageParams params) {
    return Message{std::move(code), std::move(params)};
}

// The calculator module (the page's first answer, wasm/CMakeLists.txt) emits none of the
// codes of the log check, the lab, a simulation's conclusions and setup, or the GGUF reader
// (src/check/, src/sim/, src/model/gguf*: not among its sources). Built with
// KVB_CALCULATOR_MESSAGES, their English stays out of it: ~5 KB gzip fewer before an answer
// it computes (issue 13). Every other build, the CLI's and the whole module's, has them all.
// One table, grouped by the stage that emits the code. Wording: what happened and,
// where there is one, what to do; CLI flags may be named here (the page's catalogs
// word the same codes in terms of its own controls).
const std::vector<MessageTemplate>& message_templates() {
    static const std::vector<MessageTemplate> t = {
        // --- model: config.json normalization (src/model/model.cpp) ---
        {"no_op_layers", "{n} layers have no attention (no_op): they hold no KV cache"},
        {"cross_attention",
         "{n} cross-attention layers cache the image tokens, not the context: not counted per token"},
        {"gemma_default", "{field} is not set: Gemma3TextConfig's default {value} used"},
        {"transformers_default", "{field} is not set: transformers' default {value} used"},
        {"gemma_pattern", "sliding_window_pattern is not set: Gemma 3's default 6 used (every 6th layer global)"},
        {"gemma4_pattern", "layer_types is not set: Gemma4TextConfig's default used (every 6th layer full attention)"},
        {"gemma4_last_full", "the last layer is not full_attention: Gemma4TextConfig makes it one"},
        {"kv_shared_layers",
         "the last {n} layers (num_kv_shared_layers) read an earlier layer's KV cache and hold none of their own"},
        {"dtype_quantized",
         "no torch_dtype in config: bfloat16 assumed for the tensors quantization leaves unquantized"},
        {"dtype_float32",
         "no torch_dtype in config: float32 checkpoint assumed (what transformers and vLLM fall back to without the "
         "Hub's weights)"},
        {"mha_assumed",
         "num_key_value_heads is not set: multi-head attention assumed ({n} KV heads, one per attention head)"},
        {"mtp",
         "{field} = {n}: the multi-token-prediction layer is not counted (engines only cache it with "
         "speculative decoding)"},
        {"window_unused", "sliding_window = {w} is set but not used by {type}: every layer is full attention"},
        {"window_off", "sliding_window is set but use_sliding_window is false: every layer is full attention"},
        {"indexer",
         "sparse-attention indexer keys (index_head_dim) are not in the ideal KV; the vLLM view adds its indexer "
         "cache"},
        {"nested", "text model read from {where}"},
        {"generic", "model_type '{type}' is not known to kvbudget: sized from the generic fields"},
        {"no_model_type", "no model_type: sized from the generic fields"},
        {"falcon_rw_new_arch",
         "model_type {type} with hidden_size 8192 (falcon-40b): the new decoder architecture, as vLLM's RWConfig and "
         "llama.cpp's converter read it: {n} KV heads (n_head_kv)"},
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
        {"head_dim_not_derivable",
         "{model}: hidden_size ({hidden}) is not a multiple of num_attention_heads ({heads}) and head_dim is not "
         "given"},
        {"kimi_k3_weights",
         "{model}: Kimi K3's latent routed experts (routed_expert_hidden_size), full-rank KDA gates and "
         "attention-residual "
         "blocks are not modelled yet, so kvbudget cannot count its weights (its safetensors hold about 1.5 "
         "trillion parameters) and gives no budget built on a wrong count"},
        {"kimi_layer_both",
         "{model}: layer {layer} is listed in both linear_attn_config.kda_layers and "
         "linear_attn_config.full_attn_layers"},
        {"kv_heads_above_heads", "{model}: {field} ({kv_heads}) is greater than num_attention_heads ({heads})"},
        {"mimo_swa_heads_differ",
         "{model}: swa_num_attention_heads ({swa}) differs from num_attention_heads ({heads}); kvbudget counts one "
         "query-head count for both layer kinds, as llama.cpp's converter requires"},
        {"heads_not_multiple_of_kv_heads",
         "{model}: num_attention_heads ({heads}) is not a multiple of {field} ({kv_heads})"},
        {"group_not_divisor", "{model}: {field} ({group}) does not divide num_attention_heads ({heads})"},
        {"unknown_layer_type", "{model}: {field} is '{value}', which is not a known layer type"},
        {"unknown_choice", "{model}: {field} is '{value}' (expected one of: {list})"},
        {"bad_pattern_letter",
         "{model}: hybrid_override_pattern has '{letter}' at position {position} (expected M, *, - or E)"},
        {"mla_head_dims_zero", "{model}: qk_rope_head_dim and qk_nope_head_dim are both 0"},
        {"dsv4_compress_ratio",
         "{model}: compress_ratios[{layer}] is {value}; DeepSeek-V4 layers compress by 0, 1 (none), 4 or 128"},
        {"attn_offset_not_below_period", "{model}: attn_layer_offset must be less than attn_layer_period"},
        {"experts_per_token_above_experts",
         "{model}: num_experts_per_tok ({k}) is greater than the number of experts ({experts})"},
        {"unsupported_type_missing_field",
         "{model}: model_type '{type}' is not supported and the generic fields are missing (missing field {field})"},
        {"unsupported_type_missing_field_alternatives",
         "{model}: model_type '{type}' is not supported and the generic fields are missing (missing field {field} "
         "(also looked for {others}))"},
        {"no_model_type_missing_field",
         "{model}: config.json has no model_type and the generic fields are missing (missing field {field})"},
        {"no_model_type_missing_field_alternatives",
         "{model}: config.json has no model_type and the generic fields are missing (missing field {field} (also "
         "looked for {others}))"},
        {"no_layers", "{model}: the model has no layers"},
        {"no_cache_layers", "{model}: no layer of this model holds a KV cache or state"},

        // --- units (src/base/units.cpp) ---
        {"bad_size", "invalid size '{value}' (use bytes or a unit: 512MiB, 24GB, 8GiB)"},
        {"size_too_large", "size '{value}' is too large"},
        {"not_a_count", "{flag} must be a non-negative integer, got '{value}'"},
        {"not_a_context",
         "{flag}: '{value}' is not a context length; write tokens as 32768, 32,768, 32K (= 32,768) or 1M (= "
         "1,048,576)"},

        // --- KV cache (src/model/dtype.cpp, src/kv/) ---
        // vLLM's argparse refusal, in its words; {choices} as argparse quotes them ('auto', 'bfloat16', ...).
        {"unknown_vllm_kv_dtype",
         "vllm serve: error: argument --kv-cache-dtype: invalid choice: '{value}' (choose from {choices})"},
        {"vllm_kv_dtype_not_modelled",
         "vLLM takes --kv-cache-dtype {value}, but kvbudget does not size that cache for this model (a page layout or "
         "attention backend kvbudget does not model); it sizes {choices}"},
        {"unknown_llamacpp_kv_type", "unknown llama.cpp cache type '{value}' (choose from {choices})"},
        {"unknown_transformers_kv_dtype",
         "unknown transformers cache dtype '{value}' (choose from auto, bfloat16, float16, float32)"},
        {"unknown_engine", "engine must be vllm, llamacpp or transformers, got '{value}'"},
        {"negative_context", "context and sequence count must not be negative"},
        {"kv_overflow", "{model}: KV cache for {seqs} sequences of {context} tokens exceeds 8 EiB"},

        // --- weights (src/model/weights.cpp) ---
        {"auto_dtype", "auto: model dtype {dtype}"},
        {"vllm_auto_cast",
         "auto: vLLM serves this {checkpoint} checkpoint in {dtype} (its dtype auto casts float32, and a dtype the GPU "
         "lacks, to the GPU's first supported type)"},
        {"auto_quant", "auto: quantization_config ({method})"},
        {"auto_quant_bits", "auto: quantization_config ({method}, {bits} bits)"},
        {"auto_quant_bits_group", "auto: quantization_config ({method}, {bits} bits, group {group})"},
        {"quant_not_modelled", "auto: quantization_config method '{method}' is not modelled, sized as {dtype}"},
        {"params_ignored",
         "given parameter count {given} ignored: the checkpoint is pre-quantized ({method}), so its tensor element "
         "count is not a parameter count; using the config's {count}"},
        {"params_differ",
         "given parameter count {given} differs from the config's {count} by {diff}; the difference is stored at the "
         "format's main rate"},
        {"weights_unknown_format", "unknown weights format '{name}' (expected one of: {list})"},
        {"weights_params_negative", "parameter count must not be negative (got {value})"},
        {"weights_params_implausible", "parameter count {value} is not plausible"},
        {"weights_parallel_range", "tensor and pipeline parallel sizes must be at least 1"},
        {"weights_pp_over_layers", "pipeline parallel size {pp} exceeds the {layers} layers of {model}"},
        // count_params (src/model/params.cpp)
        {"weights_field_missing", "cannot count parameters of {model}: {field} is missing or not positive"},
        {"weights_no_layers", "cannot count parameters of {model}: num_hidden_layers is 0"},
        {"weights_dim_range", "cannot count parameters of {model}: a dimension is out of range ({value})"},
        {"weights_layer_width_range",
         "cannot count parameters of {model}: layer intermediate size is out of range ({value})"},
        {"weights_no_heads",
         "cannot count parameters of {model}: num_attention_heads / head_dim is missing for an attention layer"},
        {"weights_mla_incomplete",
         "cannot count parameters of {model}: MLA geometry (num_attention_heads, kv_lora_rank, v_head_dim) is "
         "incomplete"},
        {"weights_too_large", "cannot count parameters of {model}: parameter count is absurdly large"},

        // --- engines (src/engines/) ---
        {"engine_no_layers", "model {model} has no layers"},
        {"engine_kv_overflow", "KV cache of {model} does not fit in 64-bit bytes"},
        // vLLM options (vllm.cpp)
        {"vllm_bad_mamba_cache_mode", "--mamba-cache-mode must be none, align or all, got '{value}'"},
        {"vllm_bad_log_format", "--log-format must be current, split, legacy or v0, got '{value}'"},
        {"vllm_tp_range", "--tensor-parallel-size must be between 1 and 4096, got {value}"},
        {"vllm_pp_range", "--pipeline-parallel-size must be between 1 and 4096, got {value}"},
        {"vllm_block_size_range", "--block-size must be a positive number of tokens, got {value}"},
        {"vllm_mla_block_size_range", "MLA block size must be positive, got {value}"},
        {"vllm_compute_capability_range", "GPU compute capability must be like 90 (9.0) or 100 (10.0), got {value}"},
        {"vllm_mla_backend",
         "On a GPU of compute capability {capability} vLLM picks the {backend} attention backend for MLA, and its "
         "KV cache blocks hold {block} tokens (--block-size changes it)"},
        {"vllm_mla_backend_hybrid",
         "On a GPU of compute capability {capability} vLLM picks the {backend} attention backend for MLA; its "
         "kernels take blocks in multiples of {align} tokens, and the linear-attention state raises the blocks "
         "to {block} tokens"},
        {"vllm_lengths_negative", "--max-model-len and --max-num-batched-tokens must not be negative"},
        {"vllm_kernel_alignment_range", "kernel block alignment must be between 1 and 4096 tokens"},
        {"vllm_spec_tokens_range", "num_speculative_tokens must be between 0 and 64"},
        {"vllm_kv_elem_unknown", "unknown KV cache element size for '{dtype}'"},
        {"vllm_max_model_len_absurd", "--max-model-len is absurdly large"},
        {"vllm_mamba_dtype_unknown", "unknown --mamba-cache-dtype '{value}'"},
        {"vllm_mamba_ssm_dtype_unknown", "unknown --mamba-ssm-cache-dtype '{value}'"},
        {"vllm_state_sizes_differ", "state layers of {model} differ in size; vLLM pads all to one page"},
        {"vllm_empty_page", "layer {layer} of {model} has an empty KV page"},
        // vLLM's own start-up refusals, in vLLM's words (vllm.cpp, vllm_groups.cpp)
        {"vllm_pp_partition_invalid", "Invalid partition string: {value}"},
        {"vllm_pp_partition_count", "len(partitions)={count} does not match pp_size={pp}."},
        {"vllm_pp_partition_sum", "sum(partitions)={sum} does not match num_hidden_layers={layers}."},
        {"vllm_pp_over_layers", "Pipeline parallel size ({pp}) is larger than the number of hidden layers ({layers})."},
        {"vllm_max_model_len_over",
         "User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len ({key}={derived} or "
         "model_max_length=None in model's config.json). To allow overriding this maximum, set the env var "
         "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the "
         "model uses relative position encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the "
         "model uses absolute position encoding, positions exceeding derived_max_model_len will cause a CUDA array "
         "out-of-bounds error."},
        {"vllm_max_model_len_over_legacy",
         "User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len ({key}={derived} or "
         "model_max_length=None in model's config.json). This may lead to incorrect model outputs or CUDA errors. To "
         "allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"},
        {"vllm_tp_heads",
         "Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})."},
        {"vllm_tp_kv_heads",
         "Total number of key/value heads ({heads}) cannot be split or replicated evenly across tensor parallel size "
         "({tp})."},
        {"vllm_tp_layer_heads",
         "AssertionError in the model's attention: a layer's {heads} query heads (num_attention_heads_per_layer) are "
         "not divisible by tensor parallel size ({tp})"},
        {"vllm_tp_linear_heads",
         "Number of linear value heads ({heads}) must be divisible by tensor parallel size ({tp})."},
        {"vllm_tp_mamba_heads", "Number of mamba heads ({heads}) must be divisible by tensor parallel size ({tp})."},
        {"vllm_arch_dropped",
         "vLLM {release} no longer serves {arch} and stops as it reads the model's config; it names {until} as the "
         "last "
         "release that did. Choose vLLM {until} or earlier"},
        {"vllm_trust_remote_code",
         "The repository ships its own code (auto_map in config.json), and model type {type} is not one every "
         "transformers version vLLM accepts reads without it: the command has --trust-remote-code, which lets vLLM "
         "load the repository's config and tokenizer classes, and runs that Python on your machine"},
        {"vllm_arch_dropped_backend",
         "vLLM {release} no longer has its own implementation of {arch} (it names {until} as the last release with "
         "one): it "
         "tries its Transformers backend, which kvbudget does not size, and stops if that cannot take the model. "
         "These numbers are for vLLM's own implementation, as in {until}"},
        {"vllm_tp_vision_heads",
         "AssertionError: {heads} is not divisible by {tp} (vLLM splits the vision encoder's {heads} attention heads "
         "over tensor parallel size {tp})"},
        {"vllm_tp_vision_mlp",
         "AssertionError: {width} is not divisible by {tp} (vLLM splits the vision encoder's MLP of {width} over "
         "tensor parallel size {tp})"},
        {"vllm_tp_vision_mlp_merged",
         "AssertionError (vLLM splits the vision encoder's gated MLP of {width} over tensor parallel size {tp}, which "
         "does not divide it)"},
        {"vllm_hybrid_off_mixed",
         "Hybrid KV cache manager is disabled but failed to convert the KV cache specs to one unified type."},
        {"vllm_page_not_divisible",
         "The page size of the layer is not divisible by the maximum page size. Cannot unify by adjusting block_size."},
        // vLLM layout notes (vllm.cpp)
        {"vllm_no_max_len", "config.json has no maximum length key: vLLM assumes the model's maximum length is 2048"},
        {"vllm_chunked_as_full",
         "chunked local attention layers are cached as full attention: vLLM disables the hybrid KV cache manager for "
         "them unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1"},
        {"vllm_dsv4",
         "DeepSeek-V4 (fp8_ds_mla, 256-token blocks): every layer caches its last sliding_window tokens (584 B each, "
         "64-token pages), compressing layers one latent per 4 or 128 tokens plus fp32 compressor states, ratio-4 "
         "layers indexer keys (132 B); pages padded to 576 B and grouped in layer tuples"},
        {"vllm_kv_declared",
         "vLLM caches KV as {dtype} under --kv-cache-dtype auto: the checkpoint's ModelOpt quantization declares its "
         "KV cache as {value}"},
        {"vllm_kv_declared_unmapped",
         "the checkpoint declares its KV cache as {value}, which this vLLM release does not map: it warns \"Unknown "
         "kv_cache_quant_algo\" and keeps --kv-cache-dtype auto"},
        {"vllm_kv_declared_scheme",
         "vLLM caches KV as fp8 under --kv-cache-dtype auto: the checkpoint's compressed-tensors quantization has a "
         "kv_cache_scheme ({value})"},
        {"vllm_kv_scheme_over_flag",
         "this vLLM release caches KV as fp8 whatever --kv-cache-dtype says ({asked} asked): the checkpoint's "
         "compressed-tensors quantization has a kv_cache_scheme ({value}); from 0.22.0 the flag wins"},
        {"hf_quant_config_read",
         "quantization from hf_quant_config.json ({method}): config.json has no quantization_config, and vLLM reads "
         "this file then"},
        {"vllm_dsv4_fp8_default",
         "DeepSeek-V4 runs only with an fp8 KV cache in vLLM (its attention asserts it): sized as fp8_ds_mla, and the "
         "command passes --kv-cache-dtype fp8"},
        {"vllm_dsv4_release",
         "this vLLM release cannot serve DeepSeek-V4: its DeepseekV4ForCausalLM came with vLLM 0.20.0"},
        {"vllm_dsv4_fp8_only_v20", "AssertionError: DeepseekV4 only supports fp8 kv-cache format for now, got {dtype}"},
        {"vllm_dsv4_fp8_only_v23",
         "AssertionError: DeepseekV4 FlashMLA fp8 layout only supports fp8 kv-cache, got {dtype}"},
        {"vllm_dsv4_fp8_only", "AssertionError: DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got {dtype}"},
        {"vllm_dsv4_block_size",
         "--block-size {block}: vLLM's DeepSeek-V4 FlashMLA kernels take 256-token blocks only; kvbudget does not size "
         "another block size"},
        {"vllm_dsv4_layout",
         "this DeepSeek-V4 layer mix does not fit vLLM's layer-tuple KV layout (its kv_cache_utils asserts); kvbudget "
         "does not size it"},
        {"vllm_dsv4_pp",
         "DeepSeek-V4 with pipeline parallelism is not modelled: kvbudget does not know how vLLM projects its layer "
         "tuples onto stages"},
        {"llamacpp_dsv4",
         "{model}: llama.cpp caches DeepSeek-V4 in a cache of its own (llama_kv_cache_dsv4: window, compressed and "
         "indexer caches), which kvbudget does not model yet"},
        {"transformers_dsv4",
         "{model}: transformers has no DeepSeek-V4 cache kvbudget can size (no DynamicCache layout for its window and "
         "compressed caches)"},
        {"vllm_msa",
         "MiniMax-M3 sparse attention (MSA): {block}-token blocks (vLLM needs --block-size 128: its MSA kernels take "
         "no other page, and at the default 16 it stops with \"No common block size for 16\"); an indexer key cache "
         "({bytes} B/token, bf16 whatever --kv-cache-dtype says) on {layers} of {total} layers beside K and V"},
        {"vllm_msa_release",
         "this vLLM release cannot serve MiniMax-M3: its MiniMaxM3SparseForCausalLM came with vLLM 0.24.0"},
        {"vllm_msa_block_size",
         "No common block size for {block}. (MiniMax-M3's sparse attention kernels take 128-token blocks "
         "only: pass --block-size 128)"},
        {"llamacpp_msa_build",
         "{model}: this llama.cpp build cannot load MiniMax-M3: the minimax-m3 architecture and its llama_kv_cache_msa "
         "came with b10144"},
        {"transformers_minimax_m3",
         "{model}: transformers has no MiniMax-M3 model (no minimax_m3 in the library; the checkpoint runs only "
         "through its own remote code), so there is no cache kvbudget can size"},
        {"vllm_ds_sparse",
         "sparse MLA (index_topk): 64-token pages, an indexer key cache ({bytes} B/token) on {layers} of {total} "
         "layers "
         "alongside the latent"},
        {"vllm_ds_sparse_fp8",
         "sparse MLA (index_topk): 64-token pages, an indexer key cache ({bytes} B/token) on {layers} of {total} "
         "layers "
         "alongside the latent, fp8_ds_mla latent layout (656 B/token)"},
        {"vllm_attention_free", "attention-free model: no KV cache (vLLM keeps num_blocks=1 for the null block)"},
        // vLLM's KV-memory refusal in kvbudget's words (vllm_capacity.cpp; vLLM's own text stays in error_text)
        {"vllm_kv_pool_negative",
         "vLLM refuses to start: the weights, activations and overhead leave no memory for the KV cache ({short} "
         "short per GPU); free memory (a higher --gpu-memory-utilization, more GPUs, a smaller weights format)"},
        {"vllm_kv_pool_negative_far",
         "vLLM refuses to start: the weights, activations and overhead leave no memory for the KV cache ({short} "
         "short per GPU, more than the {headroom} a --gpu-memory-utilization of 1.0 would add); it needs more GPUs or "
         "a smaller weights format"},
        {"vllm_no_kv_memory",
         "vLLM refuses to start: {available} is left for the KV cache, not even one block; free memory (a higher "
         "--gpu-memory-utilization, more GPUs, a smaller weights format)"},
        {"vllm_kv_too_small",
         "vLLM refuses to start: one {max_model_len}-token request needs {needed} of KV cache but {available} is "
         "available; set --max-model-len to at most {estimated_max_model_len}, or free memory for the KV cache (a "
         "higher --gpu-memory-utilization, more GPUs, a smaller weights format)"},
        {"vllm_kv_too_small_none",
         "vLLM refuses to start: one {max_model_len}-token request needs {needed} of KV cache but {available} is "
         "available, not enough for a single token; free memory for the KV cache (a higher "
         "--gpu-memory-utilization, more GPUs, a smaller weights format)"},
        // llama.cpp (llamacpp*.cpp)
        {"llama_bad_log_format",
         "--log-format must be current, rs-seq, 2025, unified-streams, unified-streams-aligned or legacy, got "
         "'{value}'"},
        {"llama_np_range", "-np must be between 1 and 4096, got {value}"},
        {"llama_ub_range", "-ub must be between 1 and 1048576, got {value}"},
        {"llama_pad_range", "context padding must be 1..4096"},
        {"llama_ctx_negative", "-c must not be negative, got {value}"},
        {"llama_no_train_ctx", "model {model} has no max_position_embeddings; pass -c"},
        {"llama_ctx_32bit", "-c {value} does not fit llama.cpp's 32-bit n_ctx"},
        {"llama_ctx_below_np", "n_ctx_seq == 0: -c {ctx} is smaller than -np {np}"},
        {"llama_k_row_block",
         "layer {layer} of {model}: K row of {width} values is not a multiple of the {type} block ({block})"},
        {"llama_v_row_block",
         "layer {layer} of {model}: V row of {width} values is not a multiple of the {type} block ({block})"},
        {"llama_train_ctx", "-c 0: using the model's training context {n}"},
        {"llama_ctx_rounded", "llama_context: n_ctx is not divisible by n_seq_max - rounding down to {n}"},
        {"llama_build_newer",
         "llama.cpp {build} is newer than the newest build kvbudget has read ({newest}): it is sized with {newest}'s "
         "rules"},
        {"llama_ctx_over_train",
         "llama_context: n_ctx_seq ({n_ctx_seq}) > n_ctx_train ({n_ctx_train}) -- possible training context overflow"},
        {"llama_all_swa",
         "every attention layer slides: llama.cpp's architecture for this model keeps the full context (no separate "
         "SWA cache)"},
        {"llama_no_cache", "model has no layer with a KV cache or recurrent state"},

        // --- transformers cache (src/engines/transformers_cache.cpp) ---
        {"unknown_cache_dtype", "unknown dtype '{value}' for the transformers cache of {model}"},
        {"negative_tokens", "tokens and batch must not be negative"},
        {"transformers_cache_overflow", "transformers cache bytes overflow int64"},

        // --- budget (src/budget/) ---
        {"gpu_reported", "GPU total is what PyTorch reports on a {gpu} ({reported}, marketed {marketed})"},
        {"unified_memory",
         "unified memory: Metal lets the GPU wire {wired} of the {ram} RAM by default ({pct}); sudo sysctl "
         "iogpu.wired_limit_mb=N raises it"},
        {"mac_wired_set", "iogpu.wired_limit_mb={mb}: the GPU may wire {wired} of the {ram} RAM"},
        {"mac_wired_raise",
         "sudo sysctl iogpu.wired_limit_mb={mb} lets the GPU wire the {need} this needs, leaving macOS {left} of "
         "{ram} (until reboot)"},
        {"mac_ram_short",
         "this needs {need} of GPU memory: too much for a Mac with {ram} RAM even with a raised iogpu.wired_limit_mb"},
        {"wired_limit_not_mac", "--wired-limit-mb applies to Apple-silicon Macs only; ignored"},
        {"no_apple_vllm", "vLLM has no Apple GPU backend; --engine llamacpp sizes what runs on {gpu}"},
        {"unused_gpus", "{n} GPU(s) unused by one engine (run more replicas with --data-parallel-size)"},
        {"vllm_gguf", "vLLM's GGUF support is experimental; llama.cpp is the usual engine for {format}"},
        {"pre_quantized", "{format} weights need a pre-quantized checkpoint: point vllm serve at one"},
        {"vllm_quant_unsupported",
         "vLLM cannot load this checkpoint's quantization ({form}): its weights are sized as stored, but vllm serve "
         "stops at start-up"},
        {"transformers_trust_remote_code",
         "transformers has no model type {type}: the snippet passes trust_remote_code=True, which runs the "
         "repository's own Python (auto_map in config.json). Its cache is sized here as transformers' DynamicCache "
         "would hold it"},
        {"transformers_pre_quantized", "transformers: {format} weights need a pre-quantized checkpoint"},
        {"sdpa", "transformers: SDPA attention assumed (eager attention adds batch x heads x tokens^2 scores)"},
        {"mmproj", "llama.cpp: the vision tower lives in a separate --mmproj file, not counted"},
        {"gguf_file_weights", "llama.cpp: weights are the GGUF file's own tensors, {bytes} ({params} parameters)"},
        {"gguf_default", "llama.cpp: weights default to a Q4_K_M GGUF (pass --weights to choose)"},
        {"gguf_default_mxfp4",
         "llama.cpp: weights default to the MXFP4 GGUF of this MXFP4 checkpoint: experts in MXFP4 as shipped, "
         "the rest Q8_0 (pass --weights to choose; every GGUF type keeps the experts in MXFP4)"},
        {"vllm_null_block",
         "vLLM's \"GPU KV cache size: {printed} tokens\" counts the one {block}-token block it keeps in reserve (the "
         "null block): one request can hold at most {usable} tokens, the longest context shown here"},
        {"vllm_fp32_router",
         "vLLM: weights per GPU include this model's MoE router (gate) weights in float32, as its model class creates "
         "them whatever the checkpoint's dtype ({bytes} more than at the checkpoint's width), which vLLM counts in "
         "\"Model loading took\""},
        {"vllm_fp32_router_bias",
         "vLLM: weights per GPU include this model's MoE router score correction bias in float32 ({bytes} more than "
         "at the checkpoint's width); the gate itself keeps the checkpoint's width on this GPU, whose router kernel "
         "reads it so, and is float32 on GPUs without one"},
        {"vllm_fp32_score_bias",
         "vLLM: weights per GPU include this model's MoE router score correction bias in float32, as its model class "
         "creates it whatever the checkpoint's dtype ({bytes} more than at the checkpoint's width), which vLLM counts "
         "in \"Model loading took\"; the gate keeps the checkpoint's width"},
        {"vllm_rope_cache",
         "vLLM: weights per GPU include the RoPE cos/sin caches the model builds at load ({bytes}: positions x rotary "
         "dimension for each distinct RoPE, in the model dtype unless the model forces one), which vLLM counts in "
         "\"Model loading took\""},
        {"vllm_cudagraphs_uncounted",
         "vLLM before 0.20.0 sizes the KV cache before it captures its CUDA graphs, so their memory (about {bytes}) "
         "comes on top of gpu_memory_utilization's share (0.18 and 0.19 count it first with "
         "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1; --cudagraph-memory counts it here)"},
        {"vllm_cudagraphs_uncounted_rocm",
         "vLLM before 0.26.0 on an AMD GPU (ROCm) sizes the KV cache before it captures its CUDA graphs (it profiles "
         "them first on NVIDIA GPUs only), so their memory (about {bytes}) comes on top of gpu_memory_utilization's "
         "share (--cudagraph-memory counts it here)"},
        {"vllm_version_newer",
         "vLLM {version} is newer than the newest release kvbudget has read ({newest}): its numbers follow "
         "{newest}'s rules"},
        {"rope_scaling_syntax",
         "RoPE scaling '{value}' is not TYPE:FACTOR[:ORIGINAL] with TYPE yarn, linear or dynamic (e.g. yarn:4:32768)"},
        {"rope_scaling_factor", "RoPE scaling factor '{value}' is not a number above 1 and at most 1024"},
        {"llamacpp_rope_dynamic", "llama.cpp has no dynamic (NTK) RoPE scaling; use yarn or linear"},
        {"over_model_max_vllm",
         "{context} tokens is past the model's limit of {max}: vLLM refuses to start. Memory alone would hold "
         "{physical} tokens per sequence"},
#ifndef KVB_CALCULATOR_MESSAGES
        // What a simulation found (sim/conclusions.cpp)
        {"sim_most_served",
         "{policy} served the most: {finished} of {requests} requests finished, {throughput} tokens/s, {running} "
         "requests running on average"},
        {"sim_served_alike",
         "{policies} served alike: each finished {finished} of {requests} requests, at {throughput} tokens/s (within "
         "1% of each other)"},
        {"sim_served_none_no_room",
         "{policy} served none of the {requests} requests: under its reservation every request needs more than the "
         "{slots} token slots the KV cache holds, so each was refused"},
        {"sim_served_none",
         "{policy} served none of the {requests} requests: {no_room} needed more than the {slots} token slots the KV "
         "cache holds under its reservation, {too_long} had prompts as long as max-model-len or longer"},
        {"sim_policy_refused",
         "{policy} refused {refused} of the {requests} requests: under its reservation each needs more than the "
         "{slots} token slots the KV cache holds"},
        {"sim_policy_waste",
         "{policy}: {waste} of the KV memory in use held no token ({reserved} reserved ahead, {internal} internal "
         "and {external} external fragmentation)"},
        {"sim_why",
         "why: {best} wastes {best_waste} of its memory against {worst_waste} for {worst}, so it keeps {best_running} "
         "requests running at once against {worst_running}"},
        {"sim_overload",
         "overloaded: requests arrive at {offered}/s, faster than the GPU serves them with {policy}: the last request "
         "arrived behind {waiting} waiting requests, and the last quarter of the requests waited {late} on average "
         "for their first token against {early} for the first quarter. The queue grows as long as requests arrive: "
         "lower the rate or add memory; the policies' latencies compare queues, not allocators"},
        {"sim_trace_unsorted",
         "{file}: {count} of {requests} requests arrive earlier than a request listed before them; the simulator "
         "sorted the trace by arrival time"},
#endif
        {"budget_overflow",
         "{model}: these settings need more than 8 EiB on one GPU, beyond what 64-bit byte counts hold"},
        {"nothing_fits", "no context length fits: free memory (more GPUs, a smaller weights format, lower overheads)"},
        {"bad_engine", "--engine must be vllm, llamacpp or transformers, got '{value}'"},
        {"unknown_gpu", "unknown GPU '{gpu}' (known: {known})"},
        {"transformers_gguf",
         "transformers loads safetensors checkpoints: GGUF formats ({format}) are for --engine llamacpp"},
        {"llamacpp_not_gguf",
         "llama.cpp loads GGUF files: --weights must be one of Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q4_0, IQ4_XS, mxfp4, bf16, "
         "fp16 (got '{format}')"},
        {"no_context_limit", "model {model} has no max_position_embeddings; pass --max-model-len"},
        {"max_num_seqs_below_seqs",
         "--max-num-seqs {max_num_seqs} lets vLLM run only {max_num_seqs} of the {seqs} requests at once"},
        {"layers_split",
         "the layers, their weights and their KV cache are spread evenly over the {n} GPUs; each GPU also holds its "
         "own compute buffer and runtime"},
        {"bad_hf_ref", "--hf must be ORG/REPO or ORG/REPO:QUANT, got '{value}'"},
        {"nofit_ram",
         "llama.cpp would need {need} of system RAM for what stays on the CPU (weights {weights}, KV {kv}) but has "
         "{have}"},
        {"ngl_fits",
         "-ngl {ngl} fits: the output layer and the last {blocks} of {n} layers on the GPU, {ram} of weights and KV in "
         "system RAM (slower)"},
        {"llamacpp_fit_context",
         "with no -c, llama.cpp's automatic fit (--fit on, the default) shrinks the context to {ctx} tokens per "
         "sequence so that {margin} of the GPU's {free} free stay free; {flags} asks for it explicitly"},
        {"llamacpp_fit_layers",
         "with no -ngl, llama.cpp's automatic fit keeps {ngl} of {n} layers (the output layer counts as one) "
         "on the GPU at {ctx} tokens per sequence, leaving {margin} free; {flags} asks for it explicitly"},
        {"llamacpp_fit_failed",
         "this needs {need} of the GPU's {free} free and -ngl is set, so llama.cpp's automatic fit gives up "
         "(n_gpu_layers already set by user) and loads as asked; leave out -ngl to let it fit with {margin} free"},
        {"llamacpp_fit_multi",
         "with {n} GPUs, more than the 16 devices llama.cpp splits a model over, kvbudget does not predict the "
         "layers its automatic fit gives each device; -c and -ngl (and -ts) fix them"},
        {"llamacpp_fit_moe",
         "llama.cpp's automatic fit takes {ctx} tokens per sequence and moves this MoE model's expert tensors to "
         "system RAM layer by layer: kvbudget does not predict that split from a config (a GGUF file names its "
         "tensors)"},
        {"llamacpp_fit_devices",
         "with no -ngl, llama.cpp's automatic fit fills the GPUs from the last (which holds the output layer) "
         "and keeps {ngl} of {n} layers on them, {ts} per GPU, at {ctx} tokens per sequence, leaving {margin} "
         "free on each; {flags} asks for it explicitly"},
        {"llamacpp_fit_moe_layers",
         "with no -ngl, llama.cpp's automatic fit keeps {ngl} of {n} layers (the output layer counts as one) "
         "on the GPU at {ctx} tokens per sequence, {part} of them with their expert tensors in system RAM, "
         "leaving {margin} free; {flags} asks for it explicitly"},
        {"gpu_memory_list_count", "--gpu-memory lists {n} sizes but there are {count} GPUs: give one size per GPU"},
        {"gpus_uneven",
         "GPUs of {each}: llama.cpp's automatic fit and its default split use each one's memory; the rest of this "
         "budget assumes alike GPUs and counts the smallest, {min}, for each"},
        {"llamacpp_fit_moe_devices",
         "with no -ngl, llama.cpp's automatic fit keeps {ngl} of {n} layers on the GPUs, {ts} per GPU, at {ctx} tokens "
         "per sequence, {part} of them with expert tensors (or part of their FFN) in system RAM or on the next GPU, "
         "leaving {margin} free on each; {flags} asks for it explicitly"},
        {"llamacpp_fit_estimated",
         "the expert tensors llama.cpp's automatic fit moves are estimated from the config ({experts} experts per "
         "layer at the format's bytes per weight), not read from a GGUF file; the file's own tensors may differ a "
         "little"},
        {"bad_ram_bandwidth", "--ram-bandwidth must be between 0 and 100,000 GB/s, got {value} bytes/s"},
        {"nofit_llamacpp",
         "llama.cpp would need {need} (weights {weights}, KV {kv}, compute {compute}, runtime {runtime}) but has "
         "{have}"},
        {"nofit_transformers",
         "transformers would need {need} (weights {weights}, cache {cache} + {transient} while it grows, prefill "
         "{prefill}, runtime {runtime}) but has {have}"},

        // --- simulator (src/sim/) ---

        // --- simulator setup (src/sim/setup.cpp) ---
        {"negative_swap_space", "swap space must not be negative"},
        {"no_paging",
         "{model} has no context-proportional KV cache (only sliding-window or recurrent state): paging does not "
         "apply"},
#ifndef KVB_CALCULATOR_MESSAGES
        {"sim_unknown_gpu", "unknown GPU '{gpu}'"},
#endif
        {"no_max_model_len", "{model} has no max_position_embeddings: give the max model length"},
        {"gpu_or_memory_needed", "a GPU or its memory size is needed"},
        {"no_kv_memory",
         "no memory is left for the KV cache on {gpu} at utilization {utilization} (weights {weights})"},
        {"no_kv_memory_size",
         "no memory is left for the KV cache on a GPU of {memory} at utilization {utilization} (weights {weights})"},
        {"vllm_block_size_choice", "{flag} must be one of vLLM's block sizes {choices}, got {value}"},
        {"vllm_batched_below_seqs",
         "vLLM refuses to start: max_num_batched_tokens ({tokens}) must be greater than or equal to max_num_seqs "
         "({seqs})"},
        {"unknown_workload", "unknown workload '{value}'"},

#ifndef KVB_CALCULATOR_MESSAGES
        // --- gguf: GGUF header reader and metadata -> ModelSpec (src/model/gguf*.cpp) ---
        {"gguf_not_gguf", "{file} is not a GGUF file (it starts with '{magic}', not 'GGUF')"},
        {"gguf_v1", "{file} is a GGUF version 1 file, which llama.cpp no longer reads: convert it again"},
        {"gguf_version", "{file} has GGUF version {version}; kvbudget reads versions 2 and 3"},
        {"gguf_big_endian",
         "{file} has GGUF version {version}: a big-endian file (llama.cpp reads little-endian GGUF only)"},
        {"gguf_truncated",
         "{file} is truncated: it ends at byte {size} inside {what}, the header needs at least {need} bytes"},
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
        {"gguf_tensor_block",
         "{file}: tensor {tensor} has rows of {ne0} values, not a multiple of the {type} block ({block})"},
        {"gguf_tensor_offset", "{file}: tensor {tensor} starts at data offset {offset}, expected {expected}"},
        {"gguf_data_past_end", "{file}: tensor data runs to byte {end} but the file has {size} bytes"},
        {"gguf_no_architecture", "{file}: general.architecture is missing: not a llama.cpp model file"},
        {"gguf_missing_key", "{file}: {key} is missing"},
        {"gguf_bad_key", "{file}: {key} must be {expected}, got {got}"},
        {"gguf_array_length", "{file}: {key} has {n} entries but {arch}.block_count is {layers}"},
        {"gguf_no_tensors", "{file} has no tensor infos: a vocabulary-only GGUF holds no model"},
        {"gguf_split_mismatch", "{file}: shard {shard} says split.count = {count}, the first shard says {expected}"},
        {"gguf_split_missing", "{file}: the model is split in {count} files; shard {shard} is missing"},
        {"gguf_split_tensors",
         "{file}: the shards hold {have} tensors, the first shard says split.tensors.count = {expected}"},
        {"gguf_nextn",
         "{arch}.nextn_predict_layers = {n}: the multi-token-prediction layers get no KV cache, and llama.cpp loads "
         "their weights only for --spec-type draft-mtp"},
#endif
        {"gguf_nextn_unloaded",
         "llama.cpp skips the file's multi-token-prediction layers without --spec-type draft-mtp (\"model has unused "
         "tensor ... -- ignoring\"): {bytes} of the file are not loaded"},
#ifndef KVB_CALCULATOR_MESSAGES
        {"gguf_legacy_mla",
         "{file} was converted without the split MLA tensors (attn_k_b / attn_v_b): llama.cpp caches full K and V per "
         "head ({heads} heads x {k} + {v}), not the {latent}-wide latent"},
        {"gguf_read", "read from the GGUF header: {tensors} tensors, {bytes} of weights"},
#endif
        // --- simulator inputs (src/sim/session.cpp SimInputs) ---
        {"sim_bad_policy", "{flag} must be paged, max, pow2, oracle or all, got '{value}'"},
        {"sim_bad_preemption", "{flag} must be v0, recompute or swap, got '{value}'"},
        {"sim_bad_sample_lengths", "{flag} must be independent or same, got '{value}'"},
        {"sim_bad_workload", "{flag} must be sharegpt, alpaca, azure-conv, azure-code or a .csv file, got '{value}'"},
        {"sim_trace_needed", "workload {workload} needs the trace's CSV text"},
        {"sim_bad_rate", "{flag} must be a positive number of requests per second, got '{value}'"},
        {"sim_bad_fraction", "{flag} must be a number above 0 and at most 1, got {value}"},
        {"sim_fraction_needs_prefix", "{flag} needs {needs}"},
        {"sim_no_progress", "the simulation made no progress"},

#ifndef KVB_CALCULATOR_MESSAGES
        // --- simulator settings (src/sim/simulator.cpp): what the core's own API refuses ---
        {"sim_internal", "the simulator found an inconsistency ({what}): please report it"},
        {"sim_kv_bytes_per_token", "KV bytes per token must be at least 1"},
        {"sim_kv_capacity", "KV cache capacity must be at least 1 byte"},
        {"sim_n_and_beam", "use either parallel sampling (n) or beam search, not both"},
        {"sim_seqs_exceed", "a request's {seqs} sequences exceed max-num-seqs {max_num_seqs}"},
        {"sim_beam_switches", "beam switches must be a number >= 0"},
        {"sim_latency_model", "latency model values must be finite and non-negative (efficiencies in (0, 1])"},
        {"sim_zero_step", "the latency model gives zero-length steps: set a GPU bandwidth, FLOPs or a step overhead"},
        {"sim_snapshot_settings", "snapshot settings out of range"},
        {"sim_block_bytes_overflow", "block size x KV bytes per token overflows"},
        {"sim_too_many_blocks",
         "{policy}: the KV cache would have {blocks} blocks; the simulator handles at most {max} (use a larger block "
         "size)"},
        {"sim_pool_too_small",
         "{policy}: the KV cache holds {blocks} usable blocks of {block_size} tokens, fewer than the {need} one "
         "sequence of max model length {max_model_len} needs (the null block is not usable)"},
        {"sim_capacity_too_large", "{policy}: the KV cache holds more than {max} token slots, too many to simulate"},
        {"sim_buddy_too_small",
         "{policy}: the KV cache holds {slots} token slots; the buddy allocator cannot place one {need}-token "
         "reservation"},
        {"sim_prefix_caching_paged", "prefix caching applies to the paged policy only, not {policy}"},
        {"sim_request_arrival", "request {request}: arrival time must be a finite number >= 0"},
        {"sim_request_order", "request {request}: arrival times must not go back"},
        {"sim_request_prompt", "request {request}: prompt must have at least 1 token"},
        {"sim_request_output", "request {request}: output must have at least 1 token"},
        {"sim_request_prefix", "request {request}: shared prefix longer than the prompt"},

        // --- workloads and traces (src/sim/workload.cpp) ---
        {"sim_trace_has_none", "the workload uses a trace but the trace has no requests"},
        {"sim_requests_negative", "number of requests must not be negative"},
        {"sim_requests_none", "number of requests must be at least 1"},
        {"sim_requests_too_many", "at most {max} requests can be simulated"},
        {"sim_trace_too_short", "asked for {requests} requests but the trace has only {rows}"},
        {"sim_rate_not_positive", "arrival rate must be a positive number of requests per second"},
        {"sim_fixed_lengths", "fixed lengths need at least 1 prompt and 1 output token"},
        {"sim_uniform_lengths",
         "uniform lengths need a minimum of at least 1 and a maximum no smaller than it, for prompt and output"},
        {"sim_prefix_out_of_range", "shared prefix length out of range (0 to {max} tokens)"},
        {"sim_prefix_fraction", "shared-prefix fraction must be between 0 and 1"},
        {"sim_trace_empty", "{file} is empty (expected a CSV header and one request per line)"},
        {"sim_trace_bad_header",
         "{file}: unrecognized header \"{header}\" (expected TIMESTAMP,ContextTokens,GeneratedTokens or "
         "arrived_at,num_prefill_tokens,num_decode_tokens)"},
        {"sim_trace_no_requests", "{file} has a header but no requests"},
        {"sim_trace_fields", "line {line} of {file}: expected {expected} fields, found {found}"},
        {"sim_trace_bad_timestamp",
         "line {line} of {file}: {column} \"{value}\" is not a timestamp like 2023-11-16 18:15:46.6805900"},
        {"sim_trace_bad_seconds",
         "line {line} of {file}: {column} \"{value}\" is not a non-negative number of seconds"},
        {"sim_trace_time_too_large", "line {line} of {file}: {column} \"{value}\" is more than {max} seconds"},
        {"sim_trace_bad_count",
         "line {line} of {file}: {column} \"{value}\" is not a token count (an integer from 1 to {max})"},
        {"sim_trace_empty_prompt",
         "line {line} of {file}: {column} must be at least 1 (an engine refuses an empty prompt)"},
        {"sim_trace_no_output",
         "line {line} of {file}: {column} must be at least 1 (a request generates at least one token)"},
        {"sim_trace_line_too_long", "line {line} of {file}: longer than {max} bytes: not a trace line"},
        {"sim_trace_unreadable", "cannot read {file} past line {line}"},
        {"sim_trace_too_many", "line {line} of {file}: more than {max} requests"},
        {"sim_trace_too_many_unsorted",
         "line {line} of {file}: more than {max} requests in a trace that is not in time order (sorted by arrival, a "
         "trace is read as the run goes, up to {streamed} requests)"},
        {"sim_trace_changed", "{file} changed while it was read ({found} requests, {requests} when scanned)"},
        {"sim_trace_ended", "{file} ended at line {line} before its {requests} requests: it changed since it was read"},
        {"sim_trace_changed_line",
         "line {line} of {file} no longer reads as it did when the trace was scanned: the file changed since it was "
         "read"},
#endif

        // --- input checks (every inputs struct's validate()) ---
        {"input_wrong_type", "{field} must be a {want}, got {value}"},
        {"input_unknown_field", "unknown input '{field}'"},
        {"inputs_not_object", "the inputs must be a JSON object"},
        {"input_out_of_range", "{flag} must be a whole number from {min} to {max}, got {value}"},
        {"bad_utilization", "gpu_memory_utilization must be in (0, 1], got {value}"},
        {"no_gpu", "no GPU given: pass --gpu NAME or --gpu-memory SIZE"},
        {"parallel_exceeds_gpus",
         "tensor_parallel_size x pipeline_parallel_size = {needed} exceeds --gpu-count {gpus}"},

        // --- hostile input (issue 14: counts, config values and files that are not what they claim) ---
        {"vllm_refuses_settings", "vLLM refuses these settings; its ValueError follows"},
        {"params_implausible",
         "{model}: the given parameter count {given} is more than {factor}x away from the {count} its config "
         "describes; give the total parameter count (70B is 70000000000)"},
        {"params_hub_implausible",
         "the Hub's parameter count {given} for {model} is more than {factor}x away from the {count} its config "
         "describes: set aside, the config's count is used"},
        {"config_number_too_large",
         "{model}: config.json holds the number {value} (near byte {byte}), beyond what a double can hold"},
        {"count_bad_grouping",
         "{flag}: '{value}' is not a count: a separator (, or _) goes only between groups of three digits, as in "
         "32,768"},
        {"count_too_large", "{flag} = {value} is too large (more than 18 digits)"},
        {"config_is_directory", "{path} is a directory: give the config.json file inside it"},
        {"config_not_regular_file", "{path} is not a regular file (a device or a socket): give a config.json file"},
        {"config_too_big", "{path} is larger than {limit}, the most kvbudget reads: a config.json is a few kilobytes"},
        {"vision_tower_too_large",
         "{model}: vision_config describes more than {max} parameters, beyond any real vision tower"},
        {"state_too_large",
         "{model}: the recurrent state of one sequence would exceed {max} elements, beyond any real model"},

        {"engine_version_bad",
         "{value} is not a {engine} version: give a release such as 0.20.1 (vLLM) or a build such as b6699 "
         "(llama.cpp)"},
        // --- issue 12, vLLM side: engine versions in budget and check, drafter weights ---
        {"engine_version_transformers",
         "transformers has no version-dependent format in kvbudget: leave the engine version ({value}) empty"},
#ifndef KVB_CALCULATOR_MESSAGES
        {"check_pp_all_layers",
         "vLLM 0.14 and 0.15 checked one request's memory as if every pipeline stage held all {layers} layers "
         "(vllm-project/vllm#32105, #34076; fixed by PR #33698): the log's not-enough-memory figures count them "
         "all"},
#endif
        {"vllm_drafter_weights_mtp",
         "{method}: the model's MTP module(s) add {params} parameters ({bytes}) on the last pipeline stage; vLLM "
         "shares the token embedding and lm_head with them"},
        {"vllm_drafter_weights_draft_config",
         "{method}: the draft head adds {params} parameters ({bytes}) on the last pipeline stage: its layers and "
         "fc, its embedding and lm_head taken as the target's, which vLLM shares when the head has none or the same"},
        {"vllm_drafter_weights_target_layer",
         "{method}: the draft head, counted as one decoder layer of the model and its fc (no --draft-config), adds "
         "{params} parameters ({bytes}) on the last pipeline stage"},
        {"vllm_drafter_weights_draft_model",
         "{method}: the draft model adds its {params} parameters ({bytes}) on the last pipeline stage"},
#ifndef KVB_CALCULATOR_MESSAGES
        {"check_version_from_log",
         "the log prints its own version, {printed}: it is used, not the --engine-version given ({given})"},
#endif
        // --- vLLM speculative decoding (src/engines/vllm.cpp) ---
        {"vllm_spec_config_bad",
         "--speculative-config must be a JSON object with a \"method\" (eagle, eagle3, mtp, draft_model, ngram, ...) "
         "or a draft \"model\", and \"num_speculative_tokens\"; got {value}"},
        {"vllm_spec_needs_draft",
         "the draft model {model} adds all its layers to the KV cache pool: give its config.json with --draft-config"},
        {"vllm_spec_method_unknown",
         "speculative method {method} is not known to kvbudget (eagle, eagle3, mtp and the *_mtp methods, "
         "draft_model, ngram, suffix, medusa, mlp_speculator)"},
        {"vllm_drafter_layers",
         "speculative decoding ({method}): {layers} drafter attention layer(s) take pages from the same KV cache pool"},
#ifndef KVB_CALCULATOR_MESSAGES
        // --- check: an engine's log against the prediction (src/check/) ---
        {"check_empty",
         "the log is empty: paste the start-up log of vLLM or llama.cpp (from the launch command to the first "
         "request)"},
        {"check_too_large",
         "the paste is {size}, more than the {limit} kvbudget reads: a start-up log is a few hundred kilobytes, paste "
         "the part up to the KV cache lines"},
        {"check_binary", "the paste holds binary data, not log text: copy the text of the engine's start-up log"},
        {"check_markup_only",
         "the paste is markup (HTML) with no engine line in its {lines} lines: copy the log's text, not the web page "
         "around it"},
        {"check_not_engine_log",
         "none of the {lines} lines is a vLLM or llama.cpp start-up line: kvbudget reads the logs of those two "
         "engines"},
        {"check_truncated",
         "the {engine} log ({lines} lines) ends before its KV cache lines (last line: \"{last}\"): paste the log up to "
         "\"GPU KV cache size\" or \"llama_kv_cache: size\""},
        {"check_markup_ignored", "the paste holds markup (HTML): it was read as plain text and nothing in it was run"},
        {"check_no_config", "no config for {model}: give --config CONFIG (config.json or .gguf) to compare this line"},
        {"check_no_model",
         "the log does not name its model: give --config CONFIG (config.json or .gguf) to compare this line"},
        {"check_no_hparams", "the log's print_info lines do not describe the model's layers: give --config"},
        {"check_recurrent_needs_config",
         "{arch} keeps recurrent state whose shape print_info does not print: give --config with the model's "
         "config.json or .gguf"},
        {"check_config_from_log", "config taken from the log's print_info lines ({arch}, {layers} layers)"},
        {"check_swa_pattern_unknown",
         "{arch} has a sliding window but kvbudget does not know which layers slide: every layer counted as full "
         "attention; give --config"},
        {"check_n_ctx_from_line", "n_ctx is not in the log: taken as {n_ctx} from the size line"},
        {"check_drafter_counted",
         "speculative decoding ({method}): the drafter's {layers} attention layer(s) are counted in the same KV pool"},
        {"check_wording", "the numbers agree; the wording is another build's"},
        {"check_memory_inferred",
         "the log does not say how much KV memory there was: taken as what this line implies ({blocks} blocks)"},
        {"check_log_format", "agrees in the {format} log format: the log is from another vLLM version than assumed"},
        {"check_block_size", "agrees with a block size of {block} tokens (the attention backend's, or --block-size)"},
        {"check_kv_dtype", "agrees with the KV cache in {dtype}"},
        {"check_mamba_mode", "agrees with mamba cache mode {mode}"},
        {"check_batched_tokens",
         "agrees with max_num_batched_tokens {tokens} and async scheduling {async} (the sliding-window reserve)"},
        {"check_drafter_layers",
         "agrees when a speculative drafter's {layers} attention layer(s) share the KV pool (EAGLE, EAGLE-3, MTP)"},
        {"check_tp", "agrees with tensor parallel size {tp}"},
        {"check_other_memory",
         "agrees with {gib} GiB of KV memory ({blocks} blocks) instead of the {printed} GiB assumed: the engine had a "
         "different amount of memory"},
        {"check_padding", "agrees with the context padded to {pad} cells (older builds without flash attention)"},
        {"check_unified", "agrees with kv_unified = {unified}"},
        {"check_swa_full", "agrees with a full-size SWA cache (--swa-full)"},
        {"check_ubatch", "agrees with n_ubatch {ubatch} (it sizes the SWA cache)"},
        {"check_mla_v", "agrees when an older build also caches a V row for MLA"},
        {"check_n_ctx", "agrees with n_ctx {n_ctx}"},
        {"check_no_known_cause", "no known cause explains the difference"},
        {"check_not_predicted", "kvbudget predicts no such line for these settings"},
        {"check_engine_refused", "kvbudget cannot size these settings: {reason}"},
        // --- check: out-of-memory errors, explained from their own numbers ---
        {"check_torch_oom",
         "PyTorch asked for {tried} on GPU {gpu} ({total}) with {free} free; of the rest, PyTorch's tensors held "
         "{pytorch}, its cache {cached} more (reserved but unallocated), and {outside} was outside PyTorch (CUDA "
         "context, NCCL, CUDA graphs, other processes)"},
        {"check_oom_larger_than_gpu",
         "the one allocation ({tried}) is larger than the whole GPU ({total}): no memory setting makes it fit; the "
         "work that asks for it (batch, sequence length, image size) must shrink"},
        {"check_oom_free_enough",
         "the GPU reported {free} free, not less than the {tried} asked: the free memory was in pieces smaller than "
         "the allocation, or another process took it at that moment"},
        {"check_oom_fragmentation",
         "PyTorch's cache held {cached} reserved but unallocated, more than the {short} missing: "
         "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True lets the allocation use it (fragmentation)"},
        {"check_oom_outside",
         "{short} was missing and {outside} of the GPU was outside PyTorch (other processes, or this process's CUDA "
         "context, NCCL buffers and CUDA graphs): freeing that much makes the allocation fit"},
        {"check_oom_short",
         "{short} more than the GPU had free was needed and no idle memory on it holds that much: this process must "
         "keep at least {short} less (vLLM: a lower --gpu-memory-utilization or --max-model-len; transformers: a "
         "smaller batch or sequence)"},
        {"check_llama_oom_weights",
         "llama.cpp could not allocate {size} on {device} for the model's weights: fewer layers on the GPU (-ngl) or "
         "a smaller quantization makes them fit"},
        {"check_llama_oom_compute",
         "llama.cpp could not allocate {size} on {device} for its compute buffer: a smaller -ub / -b or a shorter -c "
         "shrinks it"},
        {"check_llama_oom_kv",
         "llama.cpp could not allocate {size} on {device} for the KV cache: a shorter -c, fewer slots (-np) or a "
         "quantized cache (-ctk q8_0 -ctv q8_0) shrinks it"},
        {"check_llama_oom_unknown", "llama.cpp could not allocate {size} on {device} (cudaMalloc: out of memory)"},
        {"check_oom_device_free",
         "llama.cpp found {free} free on {device} when it started: the allocation is {short} more than that"},
        {"lab_too_large", "the paste is larger than {limit}: a lab table is one line per run"},
        {"lab_unknown_measure",
         "\"{measure}\" is not a measure kvbudget knows: rss, footprint, nvidia-smi, memory_allocated, "
         "max_memory_allocated, memory_reserved or max_memory_reserved"},
        {"lab_no_value", "line {line}: a context with no measured size after it: write \"4096 5.31 GiB\""},
        {"lab_bad_size",
         "line {line}: \"{value}\" is not a size: write a number with its unit (5.31 GiB, 5300 MB, 5.2G)"},
        {"lab_no_unit", "line {line}: {value} has no unit: write GiB, MiB, GB, MB or G (5.31 GiB, 5300 MB, 5.2G)"},
        {"lab_bad_line",
         "line {line}: \"{text}\" is not a run: write the context and the measured peak (\"4096 5.31 GiB\")"},
        {"lab_no_context",
         "line {line}: the memory of a run whose context is not given: paste the command line (with -c N) before "
         "/usr/bin/time's output"},
        {"lab_bad_context", "line {line}: \"{value}\" is not a context length: a whole number of tokens (4096, 32k)"},
        {"lab_mixed_measures",
         "one table takes one measure, and this one holds both {first} and {second}: they count different memory, so "
         "measure every run the same way or make two tables"},
        {"lab_no_measure",
         "the paste does not say what was measured: name it (a line \"measure: rss\", or rss, nvidia-smi, "
         "max_memory_reserved ... after each size)"},
        {"lab_two_baselines", "line {line}: a second -n 0 baseline: give one"},
        {"lab_same_context",
         "context {context} is measured twice (lines {first} and {second}): keep one run per context"},
        {"lab_empty",
         "the paste holds no runs: write one line per run, the context and the measured peak (\"4096 5.31 GiB\")"},
        {"lab_too_few", "only one run (context {context}): a slope needs runs at two contexts or more"},
        {"lab_vllm_preallocates",
         "vLLM reserves its KV pool up front (gpu_memory_utilization), so its memory does not follow the context: "
         "measure llama.cpp or transformers runs"},
        {"lab_unknown_engine", "engine \"{engine}\": the lab compares llama.cpp or transformers runs"},
        {"lab_not_increasing",
         "memory did not grow from context {from} to {to} ({change}): llama.cpp maps the weight file (mmap, always on "
         "a Mac), and resident set size counts only the weight pages touched, so it can leave weights out and differ "
         "from run to run; cross-check with another measure (peak memory footprint, nvidia-smi), never mixed in one "
         "table"},
        {"lab_slope_not_positive",
         "the fitted memory per token is not positive: the runs do not show the KV cache growing with the context, so "
         "no deviation is given (see the note on mmap)"},
        {"lab_intercept_below_weights",
         "the fixed part ({intercept}) is smaller than the weight file ({weights}): the measure leaves weight pages "
         "out (mmap), so it is not weights plus runtime"},
        {"check_oom_short_vllm",
         "{short} more than the GPU had free was needed: vLLM was given {util} of the GPU (gpu_memory_utilization = "
         "{fraction}); --gpu-memory-utilization {lower} leaves {short} more for the rest, or a lower --max-model-len "
         "needs less"},
#endif
        // vLLM's own words (TritonAttentionImpl / TritonMLAImpl.__init__) when no backend takes an fp8 KV cache on
        // the GPU (engines/vllm_startup.cpp vllm_fp8_kv_refusal).
        // validate_fp8_block_shape (fp8_utils.py): a dense linear in fp8 blocks split off the grid
        // (model/weights.cpp vllm_fp8_block_refusal).
        {"vllm_fp8_block_n",
         "Weight output_partition_size = {size} is not divisible by weight quantization block_n = {block}."},
        {"vllm_fp8_block_k",
         "Weight input_size_per_partition = {size} is not divisible by weight quantization block_k = {block}."},
        {"vllm_fp8_block_fix",
         "vLLM loads this checkpoint's fp8 layers at --tensor-parallel-size {tp}, where each GPU's share is whole "
         "fp8 blocks"},
        // VllmConfig._get_quantization_config: the checkpoint's quantization method against the GPU
        // (engines/vllm_startup.cpp vllm_quant_gpu_refusal).
        {"vllm_quant_gpu",
         "vLLM serves the quantization method {method} from compute capability {needed} on, and {gpu} has "
         "{capability}: "
         "it stops as it reads the checkpoint's quantization config, with \"The quantization method {method} is not "
         "supported for the current GPU. Minimum capability: {min}. Current capability: {current}.\" A newer GPU, a "
         "checkpoint in another format, or llama.cpp with a GGUF of this model runs it"},
        // CompressedTensorsConfig.get_scheme: a compressed-tensors layer's scheme against the GPU
        // (engines/vllm_startup.cpp vllm_ct_scheme_refusal).
        {"vllm_ct_scheme_gpu",
         "vLLM runs this checkpoint's {weights} layers with {scheme}, which needs compute capability {need"
         "ed}, and {gpu} has {capability}: it stops as it builds the model (at {layer}) with \"('Quantizati"
         "on scheme is not supported for ', 'the current GPU. Min capability: {min}. ', 'Current capabilit"
         "y: {current}.')\". A newer GPU, a checkpoint in another format, or llama.cpp with a GGUF of this m"
         "odel runs it"},
        {"vllm_ct_scheme_gpu_newer",
         "vLLM runs this checkpoint's {weights} layers with {scheme}, which needs compute capability {need"
         "ed}, and {gpu} has {capability}: it stops as it builds the model (at {layer}) with \"('Quantizati"
         "on scheme is not supported for ', 'the current GPU. Min capability: {min}. ', 'Current capabilit"
         "y: {current}.')\". vLLM {release} and later run it on {gpu}, as do a newer GPU and llama.cpp with "
         "a GGUF of this model"},
        {"vllm_ct_fp8_block_w8a16",
         "vLLM 0.11 to 0.15 runs this checkpoint's fp8 block layers on {gpu} (compute capability {capabili"
         "ty}) with CompressedTensorsW8A16Fp8, which takes only channel and tensor scales (W8A8, which tak"
         "es blocks, needs fp8 activations and compute capability 8.9): it stops as it builds the model (a"
         "t {layer}) with a ValueError, \"Unsupported weight strategy …\". vLLM 0.16.0 and later run it ther"
         "e"},
        // compressed-tensors fp8 blocks before vLLM 0.11.0 (engines/vllm_startup.cpp vllm_ct_block_refusal).
        {"vllm_ct_fp8_block_unread",
         "vLLM before 0.10.2 cannot read this checkpoint's fp8 block weights: the compressed-tensors release it "
         "requires (before 0.11) takes a block_structure as a string, so the checkpoint's [{rows}, {cols}] fails its "
         "validation as vLLM reads the quantization config, before it builds the model. vLLM 0.11.0 and later read fp8 "
         "blocks"},
        {"vllm_ct_fp8_block_no_scheme",
         "vLLM 0.10.2 has no compressed-tensors scheme for fp8 block weights: it stops as it builds the model (at "
         "{layer}) with NotImplementedError, \"No compressed-tensors compatible scheme was found.\" vLLM 0.11.0 and "
         "later read fp8 blocks"},
        // AWQLinearMethod.create_weights (awq.py; auto_awq.py from 0.24): an AWQ layer whose per-rank input cuts a
        // quantization group (model/weights.cpp vllm_awq_group_refusal).
        {"vllm_awq_group",
         "The input size is not aligned with the quantized weight shape. This can be caused by too large tensor "
         "parallel size."},
        {"vllm_awq_group_split",
         "at --tensor-parallel-size {tp} each GPU's share of {layer}'s input is {size} values, not a whole number of "
         "the checkpoint's {group}-value AWQ groups: vLLM's Marlin kernel cannot take it, and the AWQ kernel it falls "
         "back to stops"},
        // compressed_tensors_wNa16.py create_weights: a WNA16 layer whose per-rank input cuts a group
        // (model/weights.cpp vllm_wna16_group_refusal).
        {"vllm_ct_wna16_group",
         "vLLM stops as it builds this compressed-tensors checkpoint's {layer} at --tensor-parallel-size {"
         "tp}: each GPU would hold {size} of its inputs, not a whole number of {group}-value groups, which"
         " its WNA16 layers need whichever kernel takes them (an assertion until 0.24, a ValueError from 0"
         ".25.0, or before either the kernel choice's \"Failed to find a kernel that can implement the WNA1"
         "6 linear layer\")"},
        {"vllm_awq_group_fix",
         "vLLM loads this AWQ checkpoint at --tensor-parallel-size {tp}, where each GPU's share of every layer is "
         "whole groups"},
        {"vllm_ct_wna16_group_fix",
         "vLLM loads this checkpoint at --tensor-parallel-size {tp}, where each GPU's share of every layer"
         " is whole quantization groups"},
        {"vllm_fp8_moe_block_n",
         "The output_size of gate's and up's weight = {size} is not divisible by weight quantization block_n = "
         "{block}."},
        {"vllm_fp8_moe_block_k",
         "The input_size of down's weight = {size} is not divisible by weight quantization block_k = {block}."},
        {"vllm_fp8_moe_block_fix",
         "vLLM loads these fp8 experts at --tensor-parallel-size {tp}, or on all {gpus} GPUs with "
         "--enable-expert-parallel, which keeps experts whole: {experts} of the {total} on the fullest GPU"},
        {"vllm_fp8_moe_block_tp", "vLLM loads these fp8 experts at --tensor-parallel-size {tp}"},
        {"vllm_fp8_moe_block_ep",
         "vLLM loads these fp8 experts on {gpus} GPUs with --enable-expert-parallel, which keeps experts whole: "
         "{experts} of the {total} on the fullest GPU"},
        {"vllm_ep",
         "--enable-expert-parallel: each MoE layer's {total} routed experts are placed whole, {experts} on the fullest "
         "of the {gpus} GPUs (vLLM's linear placement); attention, dense layers, shared experts and the embeddings "
         "stay split {gpus} ways"},
        {"vllm_ep_dense",
         "{model} has no routed experts: --enable-expert-parallel changes nothing, and the command "
         "leaves it out"},
        {"vllm_ep_one_gpu",
         "--enable-expert-parallel needs a tensor-parallel size above 1: on one GPU it changes nothing, and the "
         "command leaves it out"},
        {"vllm_ep_release",
         "vLLM {version} has no --enable-expert-parallel (it came in 0.8.0): vllm serve: error: unrecognized "
         "arguments: --enable-expert-parallel"},
        {"expert_parallel_not_vllm",
         "--enable-expert-parallel is vLLM's: {engine} places whole layers on each GPU and has no expert parallelism"},
        {"vllm_bf16_gpu",
         "{gpu} (compute capability {capability}) has no bfloat16, and vLLM checks the model's dtype before it loads "
         "anything: with bf16 weights (--dtype bfloat16) it stops at start-up. Serve fp16 weights (--dtype half), or "
         "leave the dtype to vLLM (auto), which picks float16 there."},
        // Not vLLM's words: it has no check, CUDA's error is what a user sees (engines/vllm_startup.cpp
        // vllm_gpu_refusal).
        {"vllm_gpu_not_built",
         "vLLM's wheels carry kernels for compute capability 7.5 and above from 0.20.0 (vllm#39878): on {gpu} (compute "
         "capability {capability}) its first kernel fails with \"CUDA error: no kernel image is available for "
         "execution "
         "on the device\". vLLM 0.19.1 is the last release that runs there (engine version 0.19.1 sizes it), or use "
         "llama.cpp"},
        {"vllm_fp8_kv_triton",
         "FP8 KV cache is not supported by the {backend} backend on {gpu} (compute capability {capability}); native "
         "FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype {dtype}."},
        {"vllm_nvfp4_kv_mla",
         "nvfp4 KV cache is not supported with MLA (Multi-head Latent Attention) backends. Please use a different "
         "--kv-cache-dtype (e.g., 'fp8' or 'auto') for MLA models such as DeepSeek."},
        {"vllm_nvfp4_kv_no_backend",
         "vLLM {version} takes an NVFP4 KV cache ({dtype}), but none of its attention backends lists it, so it "
         "stops at start-up (\"No valid attention backend found for cuda\"); FlashInfer serves an NVFP4 KV cache "
         "from 0.21.0, on compute capability 10.x GPUs (B200, B300). Re-run with --kv-cache-dtype fp8 or bfloat16"},
        {"vllm_nvfp4_kv_gpu",
         "An NVFP4 KV cache ({dtype}) runs only on FlashInfer's trtllm-gen kernels, which need compute capability "
         "10.x (B200, B300); {gpu} has compute capability {capability}, so vLLM stops at start-up (from 0.25.0 "
         "\"No valid attention backend found for cuda\", before that once FlashInfer's kernels first run). Re-run "
         "with --kv-cache-dtype fp8 or bfloat16."},
        {"vllm_nvfp4_kv_gpu_amd",
         "An NVFP4 KV cache ({dtype}) runs only on FlashInfer's trtllm-gen kernels, on NVIDIA GPUs of compute "
         "capability 10.x (B200, B300); no ROCm attention backend takes it, so vLLM stops at start-up on {gpu} "
         "(\"No valid attention backend found for rocm\"). Re-run with --kv-cache-dtype fp8 or bfloat16."},
        {"vllm_nvfp4_kv_head_size",
         "FlashInfer, the only attention backend that takes an NVFP4 KV cache ({dtype}), has kernels for head "
         "sizes {sizes}, not {head}, so vLLM stops at start-up (\"No valid attention backend found for cuda\"). "
         "Re-run with --kv-cache-dtype fp8 or bfloat16."},
        {"vllm_nvfp4_out_buffer",
         "vLLM: weights per GPU include the fp8 output buffer FlashInfer keeps in every attention layer with an "
         "NVFP4 KV cache ({bytes}: {tokens} batched tokens × query heads × head size, one byte each), which vLLM "
         "counts in \"Model loading took\""},
        // What a cheaper KV cache would change when the answer is no (report/answer.cpp).
        {"advice_vllm_release", "vLLM {version} serves it, and it fits: up to {max} tokens per sequence"},
        {"advice_vllm_ep",
         "with --enable-expert-parallel (whole experts per GPU) vLLM starts, and it fits: up to {max} tokens per "
         "sequence"},
        {"advice_vllm_tp_pp",
         "with --tensor-parallel-size {tp} --pipeline-parallel-size {pp} (the same GPUs, each holding whole fp8 "
         "blocks) vLLM starts, and it fits: up to {max} tokens per sequence"},
        {"advice_vllm_tp_pp_awq",
         "with --tensor-parallel-size {tp} --pipeline-parallel-size {pp} (the same GPUs, each holding whole AWQ "
         "groups) vLLM starts, and it fits: up to {max} tokens per sequence"},
        {"advice_vllm_tp_pp_wna16",
         "with --tensor-parallel-size {tp} --pipeline-parallel-size {pp} (the same GPUs, each holding whol"
         "e quantization groups) vLLM starts, and it fits: up to {max} tokens per sequence"},
        {"advice_vllm_fp8_kv", "with an fp8 KV cache (--kv-cache-dtype fp8) it fits: up to {max} tokens per sequence"},
        {"advice_llamacpp_q8_kv",
         "with a q8_0 KV cache (-ctk q8_0 -ctv q8_0), about half the bytes per token, it all fits on the GPU: up to "
         "{max} tokens per sequence"},
        // --- issue 12, llama.cpp side (speculative drafts, --fit offload, out-of-memory advice) ---
        {"llamacpp_slot_capped",
         "llama-server gives a slot at most the model's training context: the KV cache holds {cells} tokens per "
         "sequence, but a request can use only {cap}. It says so at start-up: {line}"},
        {"llamacpp_slot_cap_yarn",
         "YaRN does not lift that cap on {build}: only from b10754 (ggml-org/llama.cpp#28030) does llama.cpp raise "
         "the training context to --yarn-orig-ctx x --rope-scale ({max} tokens)"},
        {"llamacpp_fit_offload",
         "not all on the GPU, but with no -ngl llama.cpp's automatic fit starts it with {ngl} of {n} layers (the "
         "output layer counts as one) on the GPU, {used} of {have} usable, and {ram} of weights and KV in system RAM; "
         "{flags} asks for it explicitly"},
        {"llamacpp_fit_offload_moe",
         "not all on the GPU, but with no -ngl llama.cpp's automatic fit starts it with {ngl} of {n} layers (the "
         "output layer counts as one) on the GPU, {part} of them with their expert tensors in system RAM: {used} of "
         "{have} usable on the GPU, {ram} of weights and KV in system RAM; {flags} asks for it explicitly"},
        {"llama_rs_seq_range", "n_rs_seq {value} is out of range (0 to 1024 rollback snapshots per sequence)"},
        {"llama_rs_seq_old_build",
         "recurrent rollback snapshots (n_rs_seq {value}) exist only from build b9180 (ggml-org/llama.cpp#22673), "
         "whose recurrent line prints rs_seq; this build or log format has none"},
        {"llama_spec_type_bad",
         "--spec-type {value} is not one of llama.cpp's: draft-simple, draft-eagle3, draft-mtp, ngram-simple, "
         "ngram-map-k, ngram-map-k4v, ngram-mod, ngram-cache"},
        {"llama_spec_no_mtp",
         "{model} carries no multi-token-prediction block (nextn_predict_layers): --spec-type draft-mtp needs a GGUF "
         "or config that has one"},
        {"llama_spec_mtp_dropped",
         "{model} ({type}): llama.cpp's converter drops its multi-token-prediction layers, so its GGUF has no "
         "nextn_predict_layers and llama-server cannot run --spec-type draft-mtp on it"},
        {"llama_spec_mtp_unknown",
         "{model} ({type}): kvbudget does not know whether llama.cpp's converter keeps its multi-token-prediction "
         "layers (it does for Qwen3.5, Qwen3-Next, DeepSeek-V3.2, GLM-4.5 / 4.6, GLM-4.7-Flash and GLM-5): read its "
         "GGUF, whose "
         "nextn_predict_layers says"},
        {"llama_spec_mtp_none",
         "{model}: llama.cpp has --spec-type draft-mtp from build b{first} (ggml-org/llama.cpp#22673); build {build} "
         "has no multi-token-prediction drafting"},
        {"llama_spec_mtp_build",
         "{model}: llama.cpp runs --spec-type draft-mtp on {family} from build b{first} ({pr}); build {build} has no "
         "multi-token-prediction graph for it"},
        {"llama_draft_max_range", "--spec-draft-n-max {value} is out of range (0 to 1024)"},
        {"llama_spec_needs_draft",
         "--spec-type {type} drafts with a separate model: give its config with -md (--model-draft)"},
        {"llamacpp_draft_kv",
         "the {type} draft context caches {layers} layers of its own: {bytes} in {contexts} context(s), counted with "
         "the KV cache"},
        {"llamacpp_draft_weights_counted",
         "the draft model's weights are counted: {bytes}, {gpu} of them on the GPU(s) (-ngld: every layer, split as "
         "the target's) and {cpu} of token embeddings in system RAM"},
        {"llamacpp_rs_seq",
         "the draft keeps {n} rollback snapshots per sequence of the recurrent state: {bytes} of R and S, 1 + {n} "
         "times what one state takes"},
#ifndef KVB_CALCULATOR_MESSAGES
        {"check_draft_mtp",
         "the draft context caches the model's {layers} multi-token-prediction layer(s) (--spec-type draft-mtp), "
         "predicted as such"},
        {"check_draft_context",
         "a speculative draft model's own context ({model}): its cache follows the draft's config, not this one"},
        {"check_llama_oom_no_free",
         "the log does not print {device}'s free memory: give it to kvbudget budget CONFIG --engine llamacpp "
         "--gpu-memory FREE --max-model-len {ctx} to get the -ngl and -c that fit"},
        {"check_llama_oom_nothing_fits",
         "{free} free on {device} does not even hold the compute buffer ({compute}): no -ngl or -c fits; a smaller -ub "
         "shrinks the buffer, or use another GPU"},
        {"check_llama_oom_fit_ngl",
         "with {free} free on {device}, about -ngl {ngl} of the {slots} layers fits ({per_layer} of weights and KV per "
         "layer)"},
        {"check_llama_oom_fit_ngl_weights",
         "with {free} free on {device}, the weights of about -ngl {ngl} of the {slots} layers fit ({per_layer} per "
         "layer); the KV cache and compute buffer still to come need fewer"},
        {"check_llama_oom_fit_ctx",
         "with {free} free on {device}, every layer fits at about -c {ctx} ({per_token} of KV per token)"},
        {"check_llama_oom_fit_both",
         "with {free} free on {device}: about -ngl {ngl} of the {slots} layers fits at this context ({per_layer} of "
         "weights and KV per layer), or every layer at about -c {ctx} ({per_token} of KV per token)"},
        {"check_llama_oom_few_numbers",
         "the paste does not say how many layers were offloaded or how large the context was: give {device}'s {free} "
         "to kvbudget budget CONFIG --engine llamacpp --gpu-memory {free} --max-model-len {ctx} for the -ngl and -c "
         "that fit"},
#endif
        // --- end issue 12 llama.cpp ---
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
