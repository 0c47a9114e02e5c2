// Speculative decoding in llama-server: the draft context's own KV cache and the target's
// recurrent rollback snapshots. Read in ggml-org/llama.cpp at 001d906a (common/speculative.cpp
// common_speculative_init_result and common_base_params_to_speculative, common/common.h
// need_n_rs_seq, src/llama-memory-recurrent.cpp) and in the PRs that changed them:
//   - #10455 (Nov 2024) put draft models into llama-server: one draft context per slot, of -cd
//     cells (0: the slot's share of -c; later builds llama_n_ctx_seq of the target), one
//     sequence, its KV forced to f16 and later -ctkd / -ctvd. #17017 (Nov 2025) keeps a server
//     with a draft model at one slot by default, "a separate draft llama_context for each slot".
//   - #22787 (May 2026) "a single unified draft llama_context for all sequences": n_ctx =
//     llama_n_ctx(ctx_tgt), n_seq_max and kv_unified as the target's, n_rs_seq = 0.
//   - #22673 (MTP): the draft-mtp context runs on the target's own model and caches only its
//     nextn layers (the per-context layer filter; #24125 added it for step35, #28626 reports
//     deepseek2 / glm4moe / cohere2moe builds, around b10820, caching every layer).
//   - need_n_rs_seq(): a target drafted by MTP / EAGLE-3 (and DFlash) keeps --spec-draft-n-max
//     snapshot rows per sequence of its recurrent state (rows = mem_size x (1 + n_rs_seq)); a
//     real log (ggml-org/llama.cpp PR #23269): "(1 cells, 41 layers, 1 seqs  2 rs_seq)".
//   - A config's MTP block reaches llama-server only if the converter writes it into the GGUF
//     (llamacpp_config_mtp below).
#include <algorithm>

#include "base/arith.h"
#include "base/text.h"
#include "engines/engine_version.h"
#include "engines/llamacpp.h"
#include "engines/vllm.h"

namespace kvb {

Result<LlamaSpecType> parse_llama_spec_type(const std::string& s) {
    if (s.empty() || s == "none") return LlamaSpecType::None;
    if (s == "draft-simple" || s == "draft") return LlamaSpecType::DraftSimple;
    if (s == "draft-eagle3" || s == "eagle3") return LlamaSpecType::DraftEagle3;
    if (s == "draft-mtp" || s == "draft-mtp-adaptive" || s == "mtp") return LlamaSpecType::DraftMtp;
    if (s.rfind("ngram-", 0) == 0 &&
        (s == "ngram-simple" || s == "ngram-map-k" || s == "ngram-map-k4v" || s == "ngram-mod" || s == "ngram-cache"))
        return LlamaSpecType::Ngram;
    return make_error("bad_value", note("llama_spec_type_bad", {{"value", s}}));
}

const char* to_string(LlamaSpecType t) {
    switch (t) {
        case LlamaSpecType::DraftSimple: return "draft-simple";
        case LlamaSpecType::DraftEagle3: return "draft-eagle3";
        case LlamaSpecType::DraftMtp: return "draft-mtp";
        case LlamaSpecType::Ngram: return "ngram";
        default: return "none";
    }
}

int64_t llamacpp_n_rs_seq(const LlamaDraftOptions& d) {
    const bool snapshots = d.type == LlamaSpecType::DraftMtp || d.type == LlamaSpecType::DraftEagle3;
    return snapshots ? std::max<int64_t>(0, d.n_max) : 0;
}

namespace {

bool declares_mtp(const ModelSpec& m) {
    return std::any_of(m.notes.begin(), m.notes.end(), [](const Message& n) { return n.code == "mtp"; });
}

// Qwen3-Next's config names no MTP layer count, but its checkpoints carry one block (mtp.layers.0,
// mtp.fc, mtp.norm, ...): llama.cpp's converter counts the mtp.layers.N tensors (conversion/qwen.py
// _QwenMtpMixin, "Qwen-3-Next doesn't include mtp_num_hidden_layers in config", #25589), as vLLM's
// Qwen3NextMultiTokenPredictor defaults num_nextn_predict_layers to 1.
bool qwen3_next_config(const ModelSpec& m) {
    return !m.gguf && lower(m.model_type) == "qwen3_next";
}

// The MTP layers a config's checkpoint holds (0: none).
int64_t config_mtp_layers(const ModelSpec& m) {
    if (declares_mtp(m)) return vllm_nextn_layers(m);
    return qwen3_next_config(m) ? 1 : 0;
}

// The MTP block is one more attention layer shaped like the model's last one.
const Layer* mtp_geometry(const ModelSpec& m) {
    const Layer* geometry = nullptr;
    for (const Layer& l : m.layers)
        if (l.kind == LayerKind::Full || l.kind == LayerKind::Mla) geometry = &l;
    return geometry;
}

}  // namespace

// llama.cpp's converter keeps a config's MTP block only for some model families (read in
// ggml-org/llama.cpp conversion/): qwen.py's _QwenMtpMixin (Qwen3_5 / Qwen3_5Moe, and Qwen3-Next
// since b10238, #25589; unless --no-mtp) and deepseek.py's DeepseekV32Model (skip_mtp = False, PR
// #23346) add it to block_count and write nextn_predict_layers, as glm.py does for Glm4Moe (GLM-4.5 /
// 4.6), Glm4MoeLite and GlmMoeDsa (unless --no-mtp). Builds before b10238 dropped Qwen3-Next's mtp.*
// (Qwen3NextModel.filter_tensors) and had no graph for it: llamacpp_mtp_build_ok refuses those.
// DeepseekV2Model (DeepseekV2/V3ForCausalLM, so Kimi K2 too, and KimiK25ForConditionalGeneration:
// Kimi K2.5, whose text_config is DeepSeek-V3's and declares no MTP layers anyway) has skip_mtp =
// True and drops every layer past num_hidden_layers. Other types: unknown.
Result<bool> llamacpp_config_mtp(const ModelSpec& m) {
    if (m.gguf || config_mtp_layers(m) == 0) return true;  // a GGUF's own nextn_predict_layers decides
    const std::string t = lower(m.model_type);
    for (const char* kept : {"qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "qwen3_next", "deepseek_v32",
                             "glm4_moe", "glm4_moe_lite", "glm_moe_dsa"})
        if (t == kept) return true;
    for (const char* dropped : {"deepseek_v2", "deepseek_v3", "kimi_k2", "kimi_k25"})
        if (t == dropped)
            return make_error("unsupported", note("llama_spec_mtp_dropped", {{"model", m.name}, {"type", t}}));
    return make_error("unsupported",
                      note("llama_spec_mtp_unknown", {{"model", m.name}, {"type", t.empty() ? "?" : t}}));
}

Result<ModelSpec> llamacpp_mtp_model(const ModelSpec& target) {
    if (auto kept = llamacpp_config_mtp(target); !kept) return kept.error();
    int64_t n = target.gguf ? target.gguf->nextn_layers : 0;
    if (n <= 0 && !target.gguf) n = config_mtp_layers(target);
    if (n <= 0) return make_error("unsupported", note("llama_spec_no_mtp", {{"model", target.name}}));
    const Layer* geometry = mtp_geometry(target);
    if (!geometry) return make_error("unsupported", note("llama_spec_no_mtp", {{"model", target.name}}));
    ModelSpec m = target;
    m.name = target.name + " (MTP)";
    m.layers.assign(static_cast<size_t>(n), *geometry);
    // The MTP context caches its layers in a plain llama_kv_cache: no indexer keys.
    for (Layer& l : m.layers) l.index_head_dim = 0;
    m.sparse_mla = false;
    m.gguf.reset();
    return m;
}

Result<bool> llamacpp_mtp_build_ok(const ModelSpec& m, const std::string& version) {
    if (version.empty()) return true;
    auto ev = parse_engine_version(version, "llamacpp");
    if (!ev) return ev.error();
    // b10237 is ggml-org/llama.cpp#26457 "llama : MTP support for DeepSeek V3.2" (merged 2026-08-02,
    // commit 2b63e061): the converter kept V3.2's MTP block before (#23346), but no graph ran it.
    // draft-mtp itself (common_speculative's MTP type, LLAMA_CONTEXT_TYPE_MTP) arrived with #22673,
    // merged as b9180 (commit 25558268, 2026-05-16).
    constexpr int64_t kMtp = 9180;
    if (ev->build < kMtp)
        return make_error("unsupported", note("llama_spec_mtp_none", {{"model", m.name},
                                                                      {"first", std::to_string(kMtp)},
                                                                      {"build", "b" + std::to_string(ev->build)}}));
    // b10238 is #25589 "model: MTP support for Qwen3-Next" (commit 4ed2b13f, 2026-08-03): the
    // converter's _QwenMtpMixin keeps the block and llm_build_qwen3next runs it; before, the
    // converter dropped mtp.* and no graph ran it.
    const std::string t = lower(m.model_type);
    const std::string arch = m.gguf ? m.gguf->arch : "";
    struct Pinned {
        bool is;
        const char* family;
        int64_t first;
        const char* pr;
    };
    for (const Pinned& p :
         {Pinned{t == "deepseek_v32" || t == "deepseek32" || arch == "deepseek32", "DeepSeek-V3.2", 10237,
                 "ggml-org/llama.cpp#26457"},
          Pinned{t == "qwen3_next" || arch == "qwen3next", "Qwen3-Next", 10238, "ggml-org/llama.cpp#25589"}})
        if (p.is && ev->build < p.first)
            return make_error("unsupported",
                              note("llama_spec_mtp_build", {{"model", m.name},
                                                            {"family", p.family},
                                                            {"first", std::to_string(p.first)},
                                                            {"pr", p.pr},
                                                            {"build", "b" + std::to_string(ev->build)}}));
    return true;
}

Result<std::optional<ModelSpec>> llamacpp_draft_model(const ModelSpec& target, LlamaSpecType type, const ModelSpec* md,
                                                      const std::string& engine_version) {
    if (type == LlamaSpecType::DraftMtp) {
        auto mm = llamacpp_mtp_model(target);
        if (!mm) return mm.error();
        if (auto ok = llamacpp_mtp_build_ok(target, engine_version); !ok) return ok.error();
        return std::optional<ModelSpec>(std::move(mm.value()));
    }
    if (type == LlamaSpecType::DraftSimple || type == LlamaSpecType::DraftEagle3) {
        if (!md) return make_error("bad_value", note("llama_spec_needs_draft", {{"type", to_string(type)}}));
        return std::optional<ModelSpec>(*md);
    }
    return std::optional<ModelSpec>();
}

ModelSpec llamacpp_target(const ModelSpec& m, LlamaSpecType spec) {
    if (spec != LlamaSpecType::DraftMtp || m.gguf) return m;
    const Layer* geometry = mtp_geometry(m);
    // llamacpp_mtp_model refuses these: no block, or one the converter does not write into the GGUF.
    const int64_t n = config_mtp_layers(m);
    if (n == 0 || !geometry || !llamacpp_config_mtp(m)) return m;
    Layer nextn = *geometry;
    nextn.kind = LayerKind::None;
    nextn.window = 0;
    nextn.nextn = true;
    ModelSpec out = m;
    out.layers.insert(out.layers.end(), static_cast<size_t>(n), nextn);
    return out;
}

Result<LlamaDraft> llamacpp_draft(const ModelSpec& draft, const LlamaLayout& target, const LlamaOptions& target_options,
                                  const LlamaDraftOptions& d) {
    LlamaDraft out;
    out.type = d.type;
    if (d.type == LlamaSpecType::None || d.type == LlamaSpecType::Ngram) return out;
    if (d.n_max < 0 || d.n_max > 1024)
        return make_error("bad_value", note("llama_draft_max_range", {{"value", std::to_string(d.n_max)}}));
    if (d.n_ctx < 0) return make_error("bad_value", note("llama_ctx_negative", {{"value", std::to_string(d.n_ctx)}}));
    LlamaOptions o = target_options;
    o.type_k = d.type_k;
    o.type_v = d.type_v;
    o.n_rs_seq = 0;  // "the draft context is built with n_rs_seq = 0"
    o.swa_full = false;
    if (d.per_slot) {
        o.n_seq_max = 1;
        o.kv_unified = false;
        o.n_ctx = d.n_ctx > 0 ? d.n_ctx : target.n_ctx_seq;
        out.contexts = target.n_seq_max;
    } else {
        o.n_seq_max = target.n_seq_max;
        o.kv_unified = target.unified;
        o.n_ctx = target.n_ctx;
        out.contexts = 1;
    }
    auto lay = llamacpp_layout(draft, o);
    if (!lay) return lay.error();
    out.layout = std::move(lay.value());
    out.layers = static_cast<int64_t>(draft.layers.size());
    if (mul_overflows(out.layout.total_bytes, out.contexts, &out.total_bytes))
        return make_error("overflow", note("engine_kv_overflow", {{"model", draft.name}}));
    return out;
}

}  // namespace kvb
