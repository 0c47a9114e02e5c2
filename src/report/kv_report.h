// The KV question ("how much KV cache does this model need?") answered once, for
// `kvbudget kv` and for the page's tables: the model as one engine caches it, its
// per-token and per-sequence bytes, the formula by layer group, the context table,
// MHA / GQA / MQA, the optimization ladder and the KV-versus-context curve.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "kv/kv.h"
#include "kv/tables.h"

namespace kvb {

struct KvReportInputs {
    std::string engine = "vllm";  // whose element types and cache layout: vllm | llamacpp | transformers
    int64_t context = 0;          // tokens per sequence; 0 = the model's limit (4,096 when it has none)
    int64_t seqs = 1;
    std::string kv_dtype = "auto";     // vLLM --kv-cache-dtype / transformers dtype
    std::string engine_version;        // vLLM: the release whose --kv-cache-dtype spellings apply; "" = the newest
    std::string served_dtype;          // vLLM: the dtype auto stands for (the budget's); "" = the checkpoint's
    std::string cache_type_k = "f16";  // llama.cpp -ctk
    std::string cache_type_v = "f16";  // llama.cpp -ctv
    int64_t weights_bytes = 0;         // what the KV is compared with (vs-weights column, crossover); 0 = none
    int64_t model_max = 0;             // the model's limit after RoPE scaling; 0 = max_position_embeddings
};

struct ContextReportRow {
    ContextRow row;
    double vs_weights = 0;  // bytes_total / weights (0 when no weights were given)
};

struct KvReport {
    std::string model;
    std::string engine;
    KvDtypes dtypes;
    int64_t context = 0, seqs = 1;
    IdealKv ideal;
    int64_t bytes_per_seq = 0;  // one sequence at `context`
    int64_t bytes_total = 0;    // `seqs` sequences
    std::vector<LayerGroup> formula;
    std::vector<ContextReportRow> context_table;
    std::vector<HeadVariant> head_variants;
    std::vector<LadderRow> ladder;
    std::vector<CurvePoint> curve;  // up to max(context, the model's limit, 4,096) x 2
    int64_t weights_bytes = 0;
    int64_t crossover_context = 0;  // where KV for `seqs` sequences overtakes the weights; 0 = never
    std::vector<Message> notes;     // the model's
};

Result<KvReport> compute_kv_report(const ModelSpec& m, const KvReportInputs& in);

}  // namespace kvb
