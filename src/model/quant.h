// A checkpoint's quantization_config read as the engines read it: which stored format each
// linear layer has (compressed-tensors config_groups, ModelOpt quant_algo / quantized_layers,
// fp8 weight_block_size, AWQ / GPTQ bits and groups, bitsandbytes, MXFP4), which layers stay
// unquantized (ignore, exclude_modules, modules_to_not_convert, llm_int8_skip_modules), and the
// bytes one matrix takes in its format (values, scales, zero points, global scales).
// docs/budget-model.md section 3 gives each rule and its source.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/model.h"

namespace kvb {

// The bytes one quantized matrix of rows (output) x cols (input) values holds on the GPU once vLLM
// has loaded it (after process_weights_after_loading, on CUDA with the kernel vLLM picks by default):
//   ceil(rows * cols * bits / 8)                           the values
// + scales * scale_bytes                                   scales (per tensor, row, group or block)
// + ceil(scales * zero_bits / 8)                           zero points, packed (asymmetric schemes)
// + tensor_words * 4                                       per-matrix fp32 (global scale, static input
//                                                          scale, bitsandbytes' 16-entry code table)
// + cols * 4 * g_idx_words                                 int32 per input column (act order: g_idx, and
//                                                          Marlin's g_idx_sort_indices beside it)
// all times `copies` (HQQ keeps its loaded tensors beside the Marlin copies it makes).
// That is what vLLM's "Model loading took" counts; the checkpoint's files can differ (GPTQ's qzeros and
// g_idx, bitsandbytes' double-quantized absmax): docs/budget-model.md section 3 lists where.
struct QuantScheme {
    std::string name;          // "fp8", "fp8-block", "fp8-channel", "int8", "w4a16", "w8a16", "nvfp4", "mxfp4",
                               // "mxfp8", "awq", "gptq", "nf4", "fp4", "bnb-int8", "hqq"
    int bits = 8;              // stored bits per value
    int64_t group = 0;         // > 0: values per scale along the input; 0: one scale per output row;
                               // -1: one scale per matrix
    bool flat_groups = false;  // groups run over the flattened matrix (bitsandbytes' blockwise absmax)
    int64_t block_rows = 0;    // > 0: 2-D blocks of block_rows x block_cols (fp8 128 x 128)
    int64_t block_cols = 0;
    int scale_bytes = 4;   // bytes per scale
    int zero_bits = 0;     // packed zero point per scale (0: none kept)
    int tensor_words = 0;  // fp32 words per matrix besides the scales
    int g_idx_words = 0;   // int32 words per input column
    int copies = 1;
    // compressed-tensors: the scheme vLLM's _get_scheme_from_parts picks for it on CUDA, by its class name less
    // "CompressedTensors" ("W8A8Fp8", "W8A16Fp8", "W8A8Int8", "WNA16", "W4A4Fp4", "W4A16Fp4", "W4A16Mxfp4"), which
    // the GPU's compute capability is checked against (engines/vllm.h vllm_ct_scheme_refusal); "" for the rest.
    std::string ct_scheme;
    int64_t bytes(int64_t rows, int64_t cols) const;
    // Bytes per value of a large matrix (rows and cols multiples of every group), as num / den.
    void rate(int64_t* num, int64_t* den) const;
};

enum class QuantMatch {
    CompressedTensors,  // exact name, or "re:" + Python re.match (compressed_tensors/utils.py)
    ModelOpt,           // exact, substring, or fnmatch wildcard (modelopt.py is_layer_excluded)
    Substring,          // the name contains the entry at a dot boundary (awq / gptq / bnb / hqq skip lists)
    Exact,              // the whole name (fp8.py / fbgemm_fp8.py is_layer_skipped without skip_with_substr);
                        // routed experts: an "experts" entry containing the layer's FusedMoE prefix
};

// Patterns sorted by how they can match, so that a plan with thousands of entries (ModelOpt's
// quantized_layers, GLM's modules_to_not_convert) is looked up, not scanned.
struct QuantPatterns {
    std::unordered_map<std::string, int> literal;       // names (or dot-bounded runs of names) -> value
    std::unordered_map<std::string, int> subtree;       // "X.*": X a dot-prefix of the name -> value
    std::vector<std::pair<std::string, int>> wildcard;  // fnmatch
    std::vector<std::pair<std::string, int>> regex;     // "re:" bodies (Python re.match)
    void add(const std::string& normalized, int value);
    bool empty() const { return literal.empty() && subtree.empty() && wildcard.empty() && regex.empty(); }
    // The value of the first kind that matches, or -1. `runs`: a literal may match any dot-bounded
    // run of the name's parts (substring rules); otherwise the whole name or one of its ancestors.
    int find(const std::string& name, bool runs) const;
};

// What a checkpoint's quantization_config says, per layer.
struct QuantPlan {
    std::string method;  // quant_method as written ("compressed-tensors", "modelopt", "fp8", ...)
    std::vector<QuantScheme> schemes;
    int default_scheme = -1;  // the scheme of every linear layer no target names (-1: they stay unquantized)
    QuantPatterns targets;    // per-layer schemes (config_groups targets, ModelOpt quantized_layers)
    QuantPatterns ignore;     // layers kept unquantized
    QuantMatch match = QuantMatch::Substring;
    bool experts_only = false;  // only routed experts are quantized (vLLM's mxfp4 linear falls back)
    bool lm_head = false;       // the lm_head is quantized too (GPTQ lm_head: true)
    std::string not_in_vllm;    // why vLLM cannot load this form ("" = it can)
    std::string algo;           // ModelOpt: the one quant_algo of the whole checkpoint ("FP8", "NVFP4"); "" mixed

    // The scheme the named layer is stored in, or nullptr when it stays in the model dtype. `name` is
    // the normalized module name ("layers.3.self_attn.q_proj", "lm_head"). `explicit_only`: only a
    // target naming the layer counts (the lm_head, which vLLM quantizes only when asked).
    const QuantScheme* scheme_for(const std::string& name, bool explicit_only = false) const;
};

// Reads a quantization_config object. nullptr: the method is not one kvbudget sizes (the caller
// keeps the model dtype and says so).
std::shared_ptr<const QuantPlan> read_quant_plan(const nlohmann::json& quantization_config);
// The KV cache a quantization_config declares (model.h DeclaredKv; docs/budget-model.md section 4):
// `method` is the quant_method vLLM settles on ("modelopt...", "compressed-tensors").
DeclaredKv read_declared_kv(const nlohmann::json& quantization_config, const std::string& method);

// Matching, exposed for tests. Patterns and names are normalized: the leading "model.",
// "language_model.", "model.language_model.", "language_model.model." or "backbone." dropped, and
// the block names other families use mapped to Llama's (attn / attention -> self_attn, ffn /
// block_sparse_moe / feed_forward -> mlp, shared_expert -> shared_experts, a lone "head" -> lm_head).
std::string normalize_quant_pattern(const std::string& pattern);
// Python re.match (anchored at the start) for the subset checkpoints use: literals, ., escapes
// (\. \d \w \s), [classes], (groups | alternation), (?: ), * + ? {m,n}, ^ $.
bool regex_match_prefix(const std::string& regex, const std::string& text);
bool fnmatch(const std::string& pattern, const std::string& text);

}  // namespace kvb
