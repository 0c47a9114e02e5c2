// The KV report: every table the page and `kvbudget kv` show for one model under one
// engine's cache rules. Built here, once, so the CLI, the WASM page and the native
// tests all read the same numbers.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kv/kv.h"
#include "model/model.h"

namespace kvb {

// A model as one engine caches it: the layer view (transformers: MLA decompressed,
// sliding layers keeping window-1 tokens, conv state of conv_kernel columns) and the
// element types (vLLM / transformers dtype names, or llama.cpp's -ctk / -ctv with f32
// recurrent state). ideal_kv / kv_bytes_at on `view` with `dtypes` give that engine's bytes.
struct EngineKv {
    std::string engine;  // vllm | llamacpp | transformers
    ModelSpec view;
    KvDtypes dtypes;
};

// kv: vLLM --kv-cache-dtype (or a transformers dtype); ctk / ctv: llama.cpp cache types. vLLM: the spellings
// `vllm_version` takes ("" = the newest; vllm_kv_cache_dtype), and its auto is `served_dtype` when one is given
// (the dtype the budget serves the model in: float32 for Gemma 3 on a T4), else the checkpoint's.
Result<EngineKv> engine_kv(const ModelSpec& m, const std::string& engine, const std::string& kv = "auto",
                           const std::string& ctk = "f16", const std::string& ctv = "f16",
                           const std::string& vllm_version = "", const std::string& served_dtype = "");

bool same_geometry(const Layer& a, const Layer& b);

// Layers with identical geometry, in order of first appearance: the formula panel's
// "2 x 36 layers x 8 KV heads x 128 x 2 B".
struct LayerGroup {
    Layer layer;
    size_t first_layer = 0;
    int64_t layers = 0;
    int64_t bytes_per_token_per_layer = 0;
    int64_t bytes_per_token = 0;
    int64_t state_bytes_per_layer = 0;
    int64_t state_bytes = 0;
};
std::vector<LayerGroup> layer_groups(const ModelSpec& m, const KvDtypes& d);

// The seed article's table: 1K, 4K, 8K, 32K, 128K and the model's own maximum.
struct ContextRow {
    int64_t context = 0;
    bool is_model_max = false;
    int64_t bytes_per_seq = 0;
    int64_t bytes_total = 0;  // x seqs
};
// Rows at 1K, 4K, 8K, 32K, 128K, the model's limit (`model_max`, 0 = max_position_embeddings)
// and the chosen context, up to the larger of the two: past the limit when the user asks for it.
std::vector<ContextRow> context_table(const EngineKv& e, int64_t seqs, int64_t model_max = 0, int64_t chosen = 0);

// The same model with every attention layer re-headed: MHA, as published, MQA.
struct HeadVariant {
    std::string variant;  // MHA | actual | MQA
    int64_t kv_heads = 0;
    int64_t bytes_per_token = 0;  // per token inside every window (all attention layers)
    std::optional<int64_t> bytes_total;
};
std::vector<HeadVariant> head_variants(const EngineKv& e, int64_t context, int64_t seqs);

// What each common step does to this model's KV at context x seqs, against the model as `engine` caches it by default
// (vLLM's auto in `served_dtype` when given, llama.cpp's f16, transformers'); MLA as a reference row.
struct LadderRow {
    std::string step;  // mha | model | fp8 | q8_0 | q4_0 | contiguous | mla
    std::string detail;
    std::optional<int64_t> bytes_per_token;
    int64_t kv_bytes = 0;
    double saving = 0;  // 1 - kv_bytes / the model's own (negative: costs more)
};
std::vector<LadderRow> optimization_ladder(const ModelSpec& m, const std::string& engine, int64_t context, int64_t seqs,
                                           const std::string& served_dtype = "");

// KV versus context on log-spaced points (x1 and x1.5 per octave from 256) up to 2 x top.
struct CurvePoint {
    int64_t context = 0;
    int64_t bytes = 0;
};
std::vector<CurvePoint> kv_curve(const EngineKv& e, int64_t seqs, int64_t top);

}  // namespace kvb
