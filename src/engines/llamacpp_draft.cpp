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

// The MTP block is one more attention layer shaped like the model's last one.
const Layer* mtp_geometry(const ModelSpec& m) {
    const Layer* geometry = nullptr;
    for (const Layer& l : m.layers)
        if (l.kind == LayerKind::Full || l.kind == LayerKind::Mla) geometry = &l;
    return geometry;
}

}  // namespace

// llama.cpp's converter keeps a config's MTP block only for some model families (read in
// ggml-org/llama.cpp conversion/): qwen.py's _Qwen35MtpMixin (Qwen3_5 / Qwen3_5Moe, unless
// --no-mtp) and deepseek.py's DeepseekV32Model (skip_mtp = False, PR #23346) add it to block_count
// and write nextn_predict_layers, as glm.py does for Glm4Moe (GLM-4.5 / 4.6), Glm4MoeLite and GlmMoeDsa
// (unless --no-mtp).
// DeepseekV2Model (DeepseekV2/V3ForCausalLM, so Kimi K2 too, and KimiK25ForConditionalGeneration:
// Kimi K2.5, whose text_config is DeepSeek-V3's and declares no MTP layers anyway) has skip_mtp =
// True and drops every layer past num_hidden_layers; Qwen3NextModel's filter_tensors drops mtp.*.
// Other types: unknown.
Result<bool> llamacpp_config_mtp(const ModelSpec& m) {
    if (m.gguf || !declares_mtp(m)) return true;  // a GGUF's own nextn_predict_layers decides
    const std::string t = lower(m.model_type);
    for (const char* kept : {"qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text", "deepseek_v32", "glm4_moe",
                             "glm4_moe_lite", "glm_moe_dsa"})
        if (t == kept) return true;
    for (const char* dropped : {"deepseek_v2", "deepseek_v3", "kimi_k2", "kimi_k25", "qwen3_next"})
        if (t == dropped)
            return make_error("unsupported", note("llama_spec_mtp_dropped", {{"model", m.name}, {"type", t}}));
    return make_error("unsupported",
                      note("llama_spec_mtp_unknown", {{"model", m.name}, {"type", t.empty() ? "?" : t}}));
}

Result<ModelSpec> llamacpp_mtp_model(const ModelSpec& target) {
    if (auto kept = llamacpp_config_mtp(target); !kept) return kept.error();
    int64_t n = target.gguf ? target.gguf->nextn_layers : 0;
    if (n <= 0 && declares_mtp(target)) n = vllm_nextn_layers(target);
    if (n <= 0) return make_error("unsupported", note("llama_spec_no_mtp", {{"model", target.name}}));
    const Layer* geometry = mtp_geometry(target);
    if (!geometry) return make_error("unsupported", note("llama_spec_no_mtp", {{"model", target.name}}));
    ModelSpec m = target;
    m.name = target.name + " (MTP)";
    m.layers.assign(static_cast<size_t>(n), *geometry);
    m.gguf.reset();
    return m;
}

Result<bool> llamacpp_mtp_build_ok(const ModelSpec& m, const std::string& version) {
    if (version.empty()) return true;
    auto ev = parse_engine_version(version, "llamacpp");
    if (!ev) return ev.error();
    // b10237 is ggml-org/llama.cpp#26457 "llama : MTP support for DeepSeek V3.2" (merged 2026-08-02,
    // commit 2b63e061): the converter kept V3.2's MTP block before (#23346), but no graph ran it.
    const std::string t = lower(m.model_type);
    const bool ds32 = t == "deepseek_v32" || t == "deepseek32" || (m.gguf && m.gguf->arch == "deepseek32");
    constexpr int64_t kDeepseek32Mtp = 10237;
    if (ds32 && ev->build < kDeepseek32Mtp)
        return make_error("unsupported", note("llama_spec_mtp_build", {{"model", m.name},
                                                                       {"family", "DeepSeek-V3.2"},
                                                                       {"first", std::to_string(kDeepseek32Mtp)},
                                                                       {"pr", "ggml-org/llama.cpp#26457"},
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
    if (!declares_mtp(m) || !geometry || !llamacpp_config_mtp(m)) return m;
    Layer nextn = *geometry;
    nextn.kind = LayerKind::None;
    nextn.window = 0;
    nextn.nextn = true;
    ModelSpec out = m;
    out.layers.insert(out.layers.end(), static_cast<size_t>(vllm_nextn_layers(m)), nextn);
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
