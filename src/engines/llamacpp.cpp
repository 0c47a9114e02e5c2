// llama.cpp KV cache as llama_context / llama_kv_cache(_iswa) / llama_memory_recurrent
// allocate it, step by step: the options llama.cpp accepts, llama_context's padded
// n_ctx and per-sequence streams, then the caches: one llama_kv_cache
// (llamacpp_kv_cache.cpp) or the SWA split (llamacpp_swa.cpp), and the recurrent
// state (llamacpp_recurrent.cpp).
#include "engines/llamacpp.h"

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>

#include "base/arith.h"
#include "engines/engine_version.h"
#include "engines/llamacpp_steps.h"

namespace kvb {

namespace llamacpp_steps {

std::string fmt(const char* f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

float mibf(int64_t bytes) {
    return static_cast<float>(bytes) / (1024.0f * 1024.0f);
}

}  // namespace llamacpp_steps

std::string llamacpp_mib(int64_t bytes) {
    return llamacpp_steps::fmt("%7.2f", llamacpp_steps::mibf(bytes));
}

Result<LlamaLogFormat> parse_llama_log_format(const std::string& s) {
    if (s == "" || s == "current") return LlamaLogFormat::Current;
    if (s == "rs-seq") return LlamaLogFormat::RsSeq;
    if (s == "2025") return LlamaLogFormat::Y2025;
    if (s == "legacy" || s == "unified") return LlamaLogFormat::Unified;
    if (s == "unified-streams") return LlamaLogFormat::UnifiedStreams;
    if (s == "unified-streams-aligned") return LlamaLogFormat::UnifiedStreamsAligned;
    return make_error("bad_value", note("llama_bad_log_format", {{"value", s}}));
}

// Each boundary is the first build (git rev-list --count of the commit on master) that has the
// change, read in ggml-org/llama.cpp's history (docs/engine-kv-spec.md, "llama.cpp by build").
Result<LlamaBuild> llama_build(const std::string& version) {
    LlamaBuild b;
    if (version.empty()) return b;
    auto ev = parse_engine_version(version, "llamacpp");
    if (!ev) return ev.error();
    const int64_t n = b.build = ev->build;
    b.log_format = n >= 10660  ? LlamaLogFormat::Current                // #27742: the P (PLE conv) row
                   : n >= 9180 ? LlamaLogFormat::RsSeq                  // #22673: MTP, n_rs_seq
                   : n >= 6233 ? LlamaLogFormat::Y2025                  // #15467: drop the "unified" prefix
                   : n >= 6072 ? LlamaLogFormat::UnifiedStreams         // #15040: "%2u/%u seqs"
                   : n >= 5913 ? LlamaLogFormat::UnifiedStreamsAligned  // #14363: per-sequence streams
                               : LlamaLogFormat::Unified;
    b.unpadded_ctx = n >= 6868 && n < 6975;  // #16812 removed the padding, #17046 pads to 256
    b.swa_pad_256 = n >= 6975;
    b.mla_v_cache = n < 7832;  // #19067: V-less cache for MLA
    b.rs_seq = n >= 9180;
    b.slot_cap = n >= 6925;                             // #16736
    b.slot_cap_fn = n >= 7492 ? "load_model" : "init";  // #18228 moved it into load_model()
    b.yarn_ctx_train = n >= 10754;                      // #28030: in b10754, not in b10678
    b.dsa_cache = n >= 9411;                            // #23346
    b.glm_dsa_cache = n >= 10119;                       // #25407
    b.glm_dsa_full_only = n >= 10243;                   // #26474
    b.fa_takes_value = n >= 6325;                       // #15434
    b.msa_cache = n >= 10144;                           // #24908: minimax-m3 and llama_kv_cache_msa
    return b;
}

int64_t llamacpp_n_ctx_train(const ModelSpec& m, const RopeScaling* user, const LlamaBuild& b) {
    const int64_t base = m.max_position_embeddings;
    if (!b.yarn_ctx_train || !user || user->type != "yarn" || user->factor <= 0 ||
        user->original_max_position_embeddings <= 0)
        return base;
    // common/arg.cpp: --rope-scale F sets rope_freq_scale = 1.0f / F; the loader reads the GGUF's
    // rope.scaling.factor into rope_freq_scale_train the same way (1.0f without one).
    const float scale = 1.0f / static_cast<float>(user->factor);
    const RopeScaling* own = m.rope_scaling ? &*m.rope_scaling : nullptr;
    const bool own_factor = own && (own->type == "yarn" || own->type == "linear") && own->factor > 0;
    const float scale_train = own_factor ? 1.0f / static_cast<float>(own->factor) : 1.0f;
    if (scale == scale_train) return base;
    const float n = static_cast<float>(static_cast<uint32_t>(user->original_max_position_embeddings)) / scale;
    return n >= 4294967295.0f ? int64_t(UINT32_MAX) : static_cast<int64_t>(static_cast<uint32_t>(n));
}

std::string llamacpp_slot_cap_line(const LlamaBuild& b, int64_t n_ctx_slot, int64_t n_ctx_train) {
    return llamacpp_steps::fmt(
        "srv  %12.*s: the slot context (%d) exceeds the training context of the model (%d) - capping", 12,
        b.slot_cap_fn.c_str(), static_cast<int>(n_ctx_slot), static_cast<int>(n_ctx_train));
}

Result<LlamaLogFormat> llama_log_format_for_version(const std::string& version) {
    auto b = llama_build(version);
    if (!b) return b.error();
    return b->log_format;
}

void apply_llama_build(const LlamaBuild& b, LlamaOptions& o) {
    o.log_format = b.log_format;
    o.swa_pad_256 = b.swa_pad_256;
    if (b.unpadded_ctx) o.n_pad = 1;
    if (b.mla_v_cache) o.mla_v_cache = true;
    o.newer_build = b.build > kLlamaNewestKnownBuild ? b.build : 0;
    o.dsa_cache = b.dsa_cache;
    o.glm_dsa_cache = b.glm_dsa_cache;
    o.glm_dsa_full_only = b.glm_dsa_full_only;
    o.msa_cache = b.msa_cache;
}

namespace {

using namespace llamacpp_steps;
using std::to_string;

int64_t pad(int64_t x, int64_t n) {
    return (x + n - 1) / n * n;
}  // GGML_PAD

Error bad_value(Message m) {
    return make_error("bad_value", std::move(m));
}

// The ranges llama.cpp's arguments accept, and the cache types.
Result<bool> check_options(const ModelSpec& m, const LlamaOptions& o, Ctx& c) {
    auto tk = llamacpp_kv_type(o.type_k);
    if (!tk) return tk.error();
    auto tv = llamacpp_kv_type(o.type_v);
    if (!tv) return tv.error();
    if (o.n_seq_max < 1 || o.n_seq_max > 4096)
        return bad_value(note("llama_np_range", {{"value", to_string(o.n_seq_max)}}));
    if (o.n_ubatch < 1 || o.n_ubatch > (1 << 20))
        return bad_value(note("llama_ub_range", {{"value", to_string(o.n_ubatch)}}));
    if (o.n_pad < 1 || o.n_pad > 4096) return bad_value(note("llama_pad_range"));
    if (o.n_ctx < 0) return bad_value(note("llama_ctx_negative", {{"value", to_string(o.n_ctx)}}));
    if (o.n_rs_seq < 0 || o.n_rs_seq > 1024)
        return bad_value(note("llama_rs_seq_range", {{"value", to_string(o.n_rs_seq)}}));
    // Rollback snapshots came with the recurrent line's "rs_seq" field (2026 builds); a model without
    // recurrent state has no rows to snapshot and no such line, whatever the build.
    const bool recurrent = std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) {
        return !is_attention(l.kind) && l.kind != LayerKind::None;
    });
    if (recurrent && o.n_rs_seq > 0 && o.log_format != LlamaLogFormat::Current && o.log_format != LlamaLogFormat::RsSeq)
        return bad_value(note("llama_rs_seq_old_build", {{"value", to_string(o.n_rs_seq)}}));
    if (m.layers.empty()) return bad_value(note("engine_no_layers", {{"model", m.name}}));
    c.tk = std::move(tk.value());
    c.tv = std::move(tv.value());
    c.legacy = o.log_format == LlamaLogFormat::Unified;
    const bool old_prefix = c.legacy || o.log_format == LlamaLogFormat::UnifiedStreams ||
                            o.log_format == LlamaLogFormat::UnifiedStreamsAligned;
    c.aligned_streams = o.log_format == LlamaLogFormat::UnifiedStreamsAligned;
    // Every build that prints "llama_kv_cache_unified" (up to b6232) predates b6975's SWA rounding.
    c.swa_pad_256 = o.swa_pad_256 && !old_prefix;
    c.kv_fn = old_prefix ? "llama_kv_cache_unified" : "llama_kv_cache";
    c.iswa_fn = old_prefix ? "llama_kv_cache_unified_iswa" : "llama_kv_cache_iswa";
    return true;
}

// llama_context: -c 0 means the training context; n_ctx is padded, and with one stream per
// sequence each stream holds a padded share of it.
Result<bool> resolve_context(const ModelSpec& m, const LlamaOptions& o, Ctx& c, LlamaLayout& L) {
    int64_t n_ctx = o.n_ctx;
    if (n_ctx == 0) {
        n_ctx = m.max_position_embeddings;
        if (n_ctx <= 0) return make_error("missing_field", note("llama_no_train_ctx", {{"model", m.name}}));
        L.notes.push_back(note("llama_train_ctx", {{"n", to_string(n_ctx)}}));
    }
    // llama_context_params::n_ctx is a uint32_t: 2^32 itself wraps to 0 cells.
    constexpr int64_t kMaxCtx = int64_t(UINT32_MAX);
    if (n_ctx > kMaxCtx) return bad_value(note("llama_ctx_32bit", {{"value", to_string(n_ctx)}}));
    L.n_ctx_requested = n_ctx;
    // Not refused and not sized by an older build's rules: what kvbudget read last is the best guess.
    if (o.newer_build > 0)
        L.notes.push_back(note("llama_build_newer", {{"build", "b" + to_string(o.newer_build)},
                                                     {"newest", "b" + to_string(kLlamaNewestKnownBuild)}}));
    const int64_t nseq = o.n_seq_max;
    c.nseq = L.n_seq_max = nseq;
    L.unified = c.legacy || o.kv_unified || nseq == 1;

    n_ctx = pad(n_ctx, o.n_pad);
    if (n_ctx > kMaxCtx) return bad_value(note("llama_ctx_32bit", {{"value", to_string(o.n_ctx ? o.n_ctx : n_ctx)}}));
    int64_t n_ctx_seq = n_ctx;
    // Builds before per-sequence streams (mid 2025) kept one cache of n_ctx cells for all sequences.
    c.streams = !c.legacy && !o.kv_unified && nseq > 1;
    if (c.streams) {
        n_ctx_seq = pad(n_ctx / nseq, o.n_pad);
        if (n_ctx / nseq == 0)
            return bad_value(note("llama_ctx_below_np", {{"ctx", to_string(o.n_ctx)}, {"np", to_string(nseq)}}));
        if (n_ctx != n_ctx_seq * nseq) {
            n_ctx = n_ctx_seq * nseq;
            L.notes.push_back(note("llama_ctx_rounded", {{"n", to_string(n_ctx)}}));
        }
    }
    L.n_ctx = n_ctx;
    c.n_ctx_seq = L.n_ctx_seq = n_ctx_seq;
    c.n_stream = L.n_stream = c.streams ? nseq : 1;
    if (m.max_position_embeddings > 0 && n_ctx_seq > m.max_position_embeddings)
        L.notes.push_back(note("llama_ctx_over_train", {{"n_ctx_seq", to_string(n_ctx_seq)},
                                                        {"n_ctx_train", to_string(m.max_position_embeddings)}}));
    return true;
}

// DeepSeek sparse attention's lightning indexer keys: which layers llama_kv_cache_dsa gives an indexer
// cache (llama_model::create_memory's filter_lid), and their width (hparams.indexer_head_size). A
// model with none: empty.
std::vector<char> dsa_indexer_layers(const ModelSpec& m, const LlamaOptions& o, int64_t& width) {
    width = 0;
    if (!m.sparse_mla) return {};
    std::string t = m.gguf ? m.gguf->arch : m.model_type;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    const bool v32 = t == "deepseek_v32" || t == "deepseek32";
    const bool glm = t == "glm_moe_dsa" || t == "glm-dsa";
    if (!(v32 && o.dsa_cache) && !(glm && o.glm_dsa_cache)) return {};
    for (const Layer& l : m.layers) width = std::max(width, l.index_head_dim);
    if (width <= 0) return {};
    std::vector<char> on(m.layers.size(), 0);
    for (size_t i = 0; i < m.layers.size(); ++i) {
        const Layer& l = m.layers[i];
        // The trunk's layers (nextn layers are kind None); glm-dsa from b10243 only the "full"
        // indexers (index_head_dim 0 marks a layer that reuses an earlier layer's top-k).
        on[i] = l.kind == LayerKind::Mla && (!(glm && o.glm_dsa_full_only) || l.index_head_dim > 0);
    }
    return on;
}

// MiniMax-M3 (llama_kv_cache_msa, src/llama-kv-cache-msa.cpp from b10144): besides the main cache of every layer,
// a second llama_kv_cache over the sparse layers (create_memory's filter_idx: il >= n_layer_dense_lead) whose
// hparams copy has one KV head and a K width of indexer_head_size. The model is not MLA, so that cache keeps a V
// row too, n_embd_head_v (head_dim) wide, which the indexer never reads; both rows in the -ctk / -ctv types.
Result<bool> add_msa_indexer(const ModelSpec& m, const LlamaOptions& o, const Ctx& c, LlamaLayout& L) {
    L.log_lines.push_back(fmt("llama_kv_cache_msa: creating indexer KV cache, size = %u cells", unsigned(c.n_ctx_seq)));
    ModelSpec idx;
    idx.name = m.name;
    for (const Layer& l : m.layers) {
        if (l.kind != LayerKind::Full || l.index_head_dim <= 0) continue;
        Layer k;
        k.kind = LayerKind::Full;
        k.kv_heads = 1;
        k.k_head_dim = l.index_head_dim;
        k.v_head_dim = l.v_head_dim;
        idx.layers.push_back(k);
    }
    auto ix = build_kv_cache(idx, o, c, "indexer", c.n_ctx_seq, CacheLayers{});
    if (!ix) return ix.error();
    L.log_lines.push_back(kv_cache_line(c, *ix));
    L.caches.push_back(*ix);
    L.bytes_per_token += ix->bytes_per_cell;
    return true;
}

// One llama_kv_cache over every attention layer; with DeepSeek sparse attention, llama_kv_cache_dsa:
// that cache (the "main" one) and a second llama_kv_cache of the indexer keys, one K head of
// indexer_head_size per cell in the -ctk type and no V (the model is MLA), each announced first.
Result<bool> add_single_cache(const ModelSpec& m, const LlamaOptions& o, const Ctx& c, LlamaLayout& L) {
    int64_t width = 0;
    const std::vector<char> indexer = dsa_indexer_layers(m, o, width);
    const bool dsa = !indexer.empty();
    const bool msa = m.msa_block_size > 0;
    if (dsa || msa)
        L.log_lines.push_back(fmt(msa ? "llama_kv_cache_msa: creating main KV cache, size = %u cells"
                                      : "llama_kv_cache_dsa: creating main KV cache, size = %u cells",
                                  unsigned(c.n_ctx_seq)));
    auto kv = build_kv_cache(m, o, c, "kv", c.n_ctx_seq, CacheLayers{});
    if (!kv) return kv.error();
    L.log_lines.push_back(kv_cache_line(c, *kv));
    L.caches.push_back(*kv);
    L.bytes_per_token = kv->bytes_per_cell;
    if (msa) return add_msa_indexer(m, o, c, L);
    if (!dsa) return true;
    L.log_lines.push_back(fmt("llama_kv_cache_dsa: creating indexer KV cache, size = %u cells", unsigned(c.n_ctx_seq)));
    ModelSpec lid;
    lid.name = m.name;
    for (size_t i = 0; i < m.layers.size(); ++i) {
        if (!indexer[i]) continue;
        Layer l;
        l.kind = LayerKind::Mla;  // K only: the latent's place holds the indexer key
        l.kv_lora_rank = width;
        lid.layers.push_back(l);
    }
    LlamaOptions lo = o;
    lo.mla_v_cache = false;
    auto ix = build_kv_cache(lid, lo, c, "indexer", c.n_ctx_seq, CacheLayers{});
    if (!ix) return ix.error();
    L.log_lines.push_back(kv_cache_line(c, *ix));
    L.caches.push_back(*ix);
    L.bytes_per_token += ix->bytes_per_cell;
    return true;
}

}  // namespace

Result<LlamaLayout> llamacpp_layout(const ModelSpec& m, const LlamaOptions& o) {
    // llama.cpp's DeepSeek-V4 (LLM_ARCH_DEEPSEEK4) has a cache class of its own, llama_kv_cache_dsv4.
    if (std::any_of(m.layers.begin(), m.layers.end(), dsv4_layer))
        return make_error("unsupported", note("llamacpp_dsv4", {{"model", m.name}}));
    if (m.msa_block_size > 0 && !o.msa_cache)
        return make_error("unsupported", note("llamacpp_msa_build", {{"model", m.name}}));
    LlamaLayout L;
    Ctx c;
    if (auto ok = check_options(m, o, c); !ok) return ok.error();
    if (auto ok = resolve_context(m, o, c, L); !ok) return ok.error();

    const SwaSplit swa = swa_split(m);
    if (swa.n_swa_layers > 0 && !swa.iswa) L.notes.push_back(note("llama_all_swa"));
    if (swa.n_attn > 0) {
        auto ok = swa.iswa ? add_iswa_caches(m, o, c, swa, L) : add_single_cache(m, o, c, L);
        if (!ok) return ok.error();
    }
    for (const auto& kv : L.caches)
        if (add_overflows(L.kv_bytes, kv.k_bytes, &L.kv_bytes) || add_overflows(L.kv_bytes, kv.v_bytes, &L.kv_bytes))
            return make_error("overflow", note("engine_kv_overflow", {{"model", m.name}}));

    if (m.has_state()) add_recurrent(m, o, c, L);
    if (add_overflows(L.kv_bytes, L.recurrent.r_bytes, &L.total_bytes) ||
        add_overflows(L.total_bytes, L.recurrent.s_bytes, &L.total_bytes))
        return make_error("overflow", note("engine_kv_overflow", {{"model", m.name}}));
    if (swa.n_attn == 0 && !m.has_state()) L.notes.push_back(note("llama_no_cache"));
    return L;
}

}  // namespace kvb
