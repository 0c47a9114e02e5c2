// The steps of llamacpp_layout, shared by the files that hold them: llamacpp.cpp
// (options, llama_context's n_ctx and streams), llamacpp_kv_cache.cpp (one
// llama_kv_cache and its size line), llamacpp_swa.cpp (the sliding-window split of
// llama_kv_cache_iswa) and llamacpp_recurrent.cpp (llama_memory_recurrent). Not a
// public header.
#pragma once
#include <cstdint>
#include <string>

#include "engines/llamacpp.h"
#include "model/dtype.h"

namespace kvb::llamacpp_steps {

// llama_context's sizes and the cache types, resolved once.
struct Ctx {
    bool legacy = false;           // LlamaLogFormat::Unified: "llama_kv_cache_unified", one stream
    std::string kv_fn, iswa_fn;    // the function names the log lines start with
    bool aligned_streams = false;  // b5913..b6071: "%2u/%2u seqs"
    bool swa_pad_256 = true;       // b6975 on: the SWA cache padded to 256 after the cap
    int64_t nseq = 1;              // n_seq_max
    bool streams = false;          // one stream per sequence
    int64_t n_stream = 1;
    int64_t n_ctx_seq = 0;  // cells per stream of the context-sized cache
    KvType tk, tv;          // -ctk / -ctv
};

// printf into a std::string, and llama.cpp's float MiB (llamacpp.cpp).
std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
float mibf(int64_t bytes);

inline bool is_attention(LayerKind k) {
    return k == LayerKind::Full || k == LayerKind::Sliding || k == LayerKind::Chunked || k == LayerKind::Mla;
}
inline bool is_swa(LayerKind k) {
    return k == LayerKind::Sliding || k == LayerKind::Chunked;
}

// --- llamacpp_kv_cache.cpp ---
// Which layers one llama_kv_cache holds: every attention layer, or one side of the SWA split.
struct CacheLayers {
    bool split = false;  // an iswa cache: only layers whose is_swa() equals `swa`
    bool swa = false;
    int64_t window = 0;  // n_swa of the SWA side
};
// One llama_kv_cache of `cells` cells per stream over the layers `which` selects.
Result<LlamaKvCache> build_kv_cache(const ModelSpec& m, const LlamaOptions& o, const Ctx& c, const std::string& role,
                                    int64_t cells, const CacheLayers& which);
// "llama_kv_cache: size = ..." as the chosen build prints it.
std::string kv_cache_line(const Ctx& c, const LlamaKvCache& kv);

// --- llamacpp_swa.cpp ---
// Which attention layers llama.cpp treats as SWA: only when sliding layers are mixed with global ones.
struct SwaSplit {
    int64_t n_attn = 0, n_swa_layers = 0, n_swa = 0;
    bool iswa = false;
};
SwaSplit swa_split(const ModelSpec& m);
// llama_kv_cache_iswa: the non-SWA cache of n_ctx_seq cells and the SWA cache, with their lines.
Result<bool> add_iswa_caches(const ModelSpec& m, const LlamaOptions& o, const Ctx& c, const SwaSplit& s,
                             LlamaLayout& L);

// --- llamacpp_recurrent.cpp ---
// llama_memory_recurrent: R and S rows in f32 for every sequence, and its size line.
void add_recurrent(const ModelSpec& m, const LlamaOptions& o, const Ctx& c, LlamaLayout& L);

}  // namespace kvb::llamacpp_steps
