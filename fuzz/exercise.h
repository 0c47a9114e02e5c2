// What the fuzz targets do with one input, shared with the CTest corpus replay so
// the regression test runs exactly what the fuzzer ran. Each returns false when an
// invariant is broken (a crash or sanitizer report fails on its own).
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include "budget/budget.h"
#include "engines/llamacpp.h"
#include "engines/transformers_cache.h"
#include "engines/vllm.h"
#include "kv/kv.h"
#include "model/config_reader.h"
#include "model/gguf.h"
#include "model/gguf_spec.h"
#include "model/model.h"
#include "report/answer.h"
#include "report/json.h"

namespace kvb::fuzz {

// The text model's object (text_config when nested), as parse_config picks it.
inline nlohmann::json* text_object(nlohmann::json& j) {
    for (const char* nested : {"text_config", "llm_config", "language_config"})
        if (j.contains(nested) && j[nested].is_object() && !j[nested].empty()) return &j[nested];
    return &j;
}

inline bool same_layer(const Layer& a, const Layer& b) {
    return a.kind == b.kind && a.kv_heads == b.kv_heads && a.k_head_dim == b.k_head_dim &&
           a.v_head_dim == b.v_head_dim && a.window == b.window && a.kv_lora_rank == b.kv_lora_rank &&
           a.qk_rope_head_dim == b.qk_rope_head_dim && a.state.conv_kernel == b.state.conv_kernel &&
           a.state.d_inner == b.state.d_inner && a.state.n_groups == b.state.n_groups &&
           a.state.d_state == b.state.d_state && a.state.heads == b.state.heads;
}

// Issue 14.1: a num_key_value_heads list of one value must be exactly the scalar.
inline bool same_as_listed_kv_heads(const std::string& text, const ModelSpec& m) {
    auto parsed = parse_json_text(text, "fuzz");
    if (!parsed || !parsed.value().is_object()) return true;
    nlohmann::json j = parsed.value();
    nlohmann::json* t = text_object(j);
    if (!t->contains("num_key_value_heads") || !(*t)["num_key_value_heads"].is_number_integer()) return true;
    if (!t->contains("num_hidden_layers") || !(*t)["num_hidden_layers"].is_number_integer()) return true;
    const int64_t n = (*t)["num_hidden_layers"].get<int64_t>();
    if (n < 1 || n > 4096) return true;
    (*t)["num_key_value_heads"] =
        nlohmann::json(std::vector<int64_t>(static_cast<size_t>(n), (*t)["num_key_value_heads"].get<int64_t>()));
    auto listed = parse_config(j.dump(), "fuzz");
    if (!listed || listed->layers.size() != m.layers.size()) return false;
    for (size_t i = 0; i < m.layers.size(); ++i)
        if (!same_layer(listed->layers[i], m.layers[i])) return false;
    return true;
}

// Issue 14.5: "num_key_value_heads is not set" only when no KV-head field holds a value.
inline bool nan_is_not_unset(const std::string& text, const ModelSpec& m) {
    bool claimed = false;
    for (const Message& n : m.notes) claimed = claimed || n.code == "mha_assumed";
    if (!claimed) return true;
    auto parsed = parse_json_text(text, "fuzz");
    if (!parsed || !parsed.value().is_object()) return true;
    nlohmann::json j = parsed.value();
    const nlohmann::json* t = text_object(j);
    for (const char* k : {"num_key_value_heads", "n_head_kv", "num_kv_heads", "kv_n_heads"})
        if (t->contains(k) && !(*t)[k].is_null()) return false;
    return true;
}

// Parser + ideal KV: refusals carry a code and a message; sizes are never negative.
inline bool exercise_config(const std::string& text) {
    auto m = parse_config(text, "fuzz");
    if (!m) return !m.error().code.empty() && m.error().message.rfind("fuzz: ", 0) == 0;
    if (m->layers.empty()) return false;
    for (const char* t : {"auto", "fp8"}) {
        auto kt = vllm_kv_type(t, m->dtype);
        if (!kt) return false;
        KvDtypes d = uniform_kv_dtypes(m.value(), kt.value());
        IdealKv kv = ideal_kv(m.value(), d);
        if (kv.bytes_per_token < 0 || kv.state_bytes_per_seq < 0) return false;
        for (int64_t ctx : {int64_t(0), int64_t(1), int64_t(4096), int64_t(1) << 20}) {
            auto b = kv_bytes_at(m.value(), d, ctx, 10000);
            if (b && b.value() < 0) return false;
        }
        if (ideal_kv(with_kv_heads(m.value(), 0), d).bytes_per_token < 0) return false;
    }
    return same_as_listed_kv_heads(text, m.value()) && nan_is_not_unset(text, m.value());
}

// Issue 14.4: the same engines at the edges of what the CLI and the page accept (vLLM's
// unbounded --max-num-batched-tokens, 2^20-token blocks, 4096 llama.cpp slots, the budget's
// input limits), so a product of config values and option values that passes 2^63 aborts
// under UBSan instead of hiding behind the small options above. Every answer that comes
// back stays below the saturation value a wrapped sum would hide behind.
inline bool exercise_option_limits(const ModelSpec& m, uint64_t h) {
    h ^= h >> 31;
    h *= 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    const int64_t big_tokens[] = {0, 8192, (int64_t(1) << 31) - 1, 999'999'999'999'999'999};
    const int64_t blocks[] = {0, 1, 1 << 20, (1 << 20) - 1};
    const int64_t avails[] = {int64_t(1) << 30, int64_t(1) << 50, int64_t(9'000'000'000'000'000'000)};
    const VllmLogFormat formats[] = {VllmLogFormat::Current, VllmLogFormat::Split, VllmLogFormat::Legacy,
                                     VllmLogFormat::V0};
    const MambaCacheMode modes[] = {MambaCacheMode::Default, MambaCacheMode::None, MambaCacheMode::Align,
                                    MambaCacheMode::All};
    VllmOptions vo;
    vo.kv_cache_dtype = (h & 1) ? "float32" : "auto";
    vo.max_num_batched_tokens = big_tokens[(h >> 1) % 4];
    vo.block_size = blocks[(h >> 3) % 4];
    vo.kernel_block_alignment = (h >> 5) & 1 ? 4095 : 0;
    vo.num_speculative_tokens = (h >> 6) & 1 ? 64 : 0;
    vo.log_format = formats[(h >> 7) % 4];
    vo.mamba_cache_mode = modes[(h >> 9) % 4];
    vo.pipeline_parallel_size = (h >> 11) & 1 ? std::min<int64_t>(4096, static_cast<int64_t>(m.layers.size())) : 1;
    vo.max_model_len = (h >> 12) & 1 ? m.max_position_embeddings : 0;
    if (auto cap = vllm_capacity(m, vo, avails[(h >> 13) % 3])) {
        if (cap->num_blocks < 0 || std::isnan(cap->max_concurrency) || cap->max_concurrency < 0) return false;
        if (cap->tokens < 0 || cap->legacy_tokens < 0 || cap->request_bytes < 0) return false;
    }

    LlamaOptions lo;
    const int64_t ctxs[] = {0, int64_t(1) << 31, (int64_t(1) << 32) - 256, 4096};
    lo.n_ctx = ctxs[(h >> 15) % 4];
    lo.n_seq_max = (h >> 17) & 1 ? 4096 : 1;
    lo.n_ubatch = (h >> 18) & 1 ? 1 << 20 : 512;
    lo.kv_unified = (h >> 19) & 1;
    lo.type_k = lo.type_v = (h >> 20) & 1 ? "f32" : "f16";
    lo.swa_full = (h >> 21) & 1;
    if (auto ll = llamacpp_layout(m, lo)) {
        if (ll->recurrent.r_bytes < 0 || ll->recurrent.s_bytes < 0 || ll->kv_bytes < 0 || ll->total_bytes < 0)
            return false;
    }

    for (int64_t ctx : {int64_t(1) << 40, int64_t(999'999'999'999'999'999)}) {
        if (auto t = transformers_cache_bytes(m, ctx, int64_t(1) << 20); t && t.value() < 0) return false;
        if (auto kt = vllm_kv_type("auto", m.dtype)) {
            if (auto b = kv_bytes_at(m, uniform_kv_dtypes(m, kt.value()), ctx, ctx); b && b.value() < 0) return false;
        }
    }

    BudgetInputs in;
    in.gpu = "b200";
    in.gpu_count = (h >> 22) & 1 ? 4096 : 1;
    in.context = (h >> 23) & 1 ? int64_t(1) << 30 : 0;
    in.seqs = (h >> 24) & 1 ? int64_t(1) << 20 : 1;
    in.max_num_seqs = (h >> 25) & 1 ? (int64_t(1) << 31) - 1 : 0;
    in.max_num_batched_tokens = (h >> 26) & 1 ? (int64_t(1) << 31) - 1 : 0;
    in.n_ubatch = (h >> 27) & 1 ? (int64_t(1) << 31) - 1 : 512;
    in.block_size = (h >> 28) & 1 ? 4095 : 0;
    in.pipeline_parallel_size = (h >> 29) & 1 ? std::min<int64_t>(64, static_cast<int64_t>(m.layers.size())) : 1;
    in.engine = (h >> 30) % 3 == 0   ? BudgetEngine::Vllm
                : (h >> 30) % 3 == 1 ? BudgetEngine::LlamaCpp
                                     : BudgetEngine::Transformers;
    if (auto a = compute_answer(m, in)) {
        if (!a->budget) return true;
        const BudgetResult& b = *a->budget;
        if (b.per_gpu.total_bytes < 0 || b.per_gpu.total_bytes == INT64_MAX) return false;
        if (b.activation_bytes < 0 || b.activation_bytes == INT64_MAX || b.decode.kv_bytes_per_token < 0) return false;
        (void)to_json_text(a.value());
    }
    return true;
}

// Engines and budget, with options drawn from a hash of the input.
inline bool exercise_engines(const std::string& text) {
    auto m = parse_config(text, "fuzz");
    if (!m) return true;
    uint64_t h = 1469598103934665603ULL;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
    const char* vtypes[] = {"auto", "fp8", "float32", "bfloat16"};
    const char* ltypes[] = {"f16", "q8_0", "q4_0", "f32", "iq4_nl"};
    const int64_t ctxs[] = {1, 255, 4096, 32768, 1 << 20};

    VllmOptions vo;
    vo.kv_cache_dtype = vtypes[h % 4];
    vo.tensor_parallel_size = 1 + static_cast<int64_t>((h >> 8) % 16);
    vo.pipeline_parallel_size = 1 + static_cast<int64_t>((h >> 12) % 4);
    vo.max_model_len = ctxs[(h >> 16) % 5];
    vo.block_size = (h >> 20) % 3 == 0 ? 0 : int64_t(16) << ((h >> 22) % 3);
    if (auto cap = vllm_capacity(m.value(), vo, static_cast<int64_t>((h >> 24) % 64 + 1) << 28)) {
        if (cap->num_blocks < 0 || std::isnan(cap->max_concurrency) || cap->max_concurrency < 0) return false;
        if (cap->tokens < 0 || cap->legacy_tokens < 0 || cap->request_bytes < 0) return false;  // 14.4
    }

    LlamaOptions lo;
    lo.n_ctx = ctxs[(h >> 30) % 5];
    lo.n_seq_max = 1 + static_cast<int64_t>((h >> 33) % 8);
    lo.kv_unified = (h >> 36) & 1;
    lo.type_k = ltypes[(h >> 37) % 5];
    lo.type_v = ltypes[(h >> 40) % 5];
    lo.swa_full = (h >> 43) & 1;
    if (auto ll = llamacpp_layout(m.value(), lo)) {
        // 14.3 / 14.4: no negative or wrapped cache, and never 0 cells for a context asked for.
        if (ll->recurrent.r_bytes < 0 || ll->recurrent.s_bytes < 0 || ll->kv_bytes < 0 || ll->total_bytes < 0)
            return false;
        if (ll->n_ctx <= 0 || ll->n_ctx > int64_t(UINT32_MAX)) return false;
    }

    if (auto t = transformers_cache_bytes(m.value(), ctxs[(h >> 44) % 5], 1 + static_cast<int64_t>((h >> 47) % 4))) {
        if (t.value() < 0) return false;
    }

    BudgetInputs in;
    in.gpu = (h >> 50) & 1 ? "rtx-4090" : "h100";
    in.gpu_count = 1 + static_cast<int64_t>((h >> 51) % 8);
    in.context = ctxs[(h >> 54) % 5];
    in.seqs = 1 + static_cast<int64_t>((h >> 59) % 4);
    // 14.2: a given parameter count, plausible or not, never gives negative weights.
    const int64_t param_choices[] = {0, 0, 1, 70, 7'000'000'000};
    in.params = param_choices[(h >> 60) % 5];
    in.engine = (h >> 57) & 1   ? BudgetEngine::Vllm
                : (h >> 58) & 1 ? BudgetEngine::LlamaCpp
                                : BudgetEngine::Transformers;
    // The whole answer, as the page and `kvbudget budget --json` give it: every number finite and consistent.
    if (auto a = compute_answer(m.value(), in)) {
        if (a->metrics.kv_bytes_total < 0 || a->metrics.kv_bytes_per_token < 0) return false;
        if (a->budget && a->budget->per_gpu.total_bytes < 0) return false;
        if (a->budget && (a->budget->weights.bytes < 0 || a->budget->weights.active_bytes < 0)) return false;
        (void)to_json_text(a.value());
    }
    return exercise_option_limits(m.value(), h);
}

// GGUF reader: a prefix either parses, asks for more than it has (never less, never
// past 512 MiB), or is refused with a code and a coded message; the whole input as a
// file gives the same verdict or a refusal. Headers that parse go through the
// metadata -> ModelSpec step and llama.cpp's layout; sizes are never negative.
inline bool exercise_gguf(const uint8_t* data, size_t size) {
    // A refusal has a category, a known message code and every parameter its template names.
    auto refusal_ok = [](const GgufParse& p) {
        if (p.error.code.empty() || p.error.message.empty()) return false;
        const char* tpl = nullptr;
        for (const MessageTemplate& t : message_templates())
            if (p.error.detail.code == t.code) tpl = t.english;
        if (!tpl) return false;
        for (const char* c = tpl; *c; ++c) {
            if (*c != '{') continue;
            const char* e = c + 1;
            while (*e && *e != '}') ++e;
            const std::string name(c + 1, e);
            bool found = false;
            for (const auto& kv : p.error.detail.params) found |= kv.first == name;
            if (!found) return false;
            c = *e ? e : e - 1;
        }
        return p.error.message == render_english(p.error.detail);
    };
    GgufParse prefix = parse_gguf(data, size, "fuzz.gguf");
    if (prefix.status == GgufParse::Status::NeedMore) {
        if (prefix.need_total <= size || prefix.need_total > (uint64_t(512) << 20)) return false;
    } else if (prefix.status == GgufParse::Status::Error) {
        if (!refusal_ok(prefix)) return false;
    }
    GgufParse whole = parse_gguf(data, size, "fuzz.gguf", static_cast<int64_t>(size));
    if (whole.status == GgufParse::Status::NeedMore) return false;  // the file size is known
    if (whole.status == GgufParse::Status::Error && !refusal_ok(whole)) return false;
    // A header that parses as a prefix is refused as a whole file only for its missing data.
    if (prefix.ok() && !whole.ok() && whole.error.detail.code != "gguf_data_past_end") return false;
    if (!prefix.ok()) return whole.status == GgufParse::Status::Error;
    const GgufHeader& h = prefix.header;
    if (h.tensor_bytes < 0 || h.tensor_elements < 0 || h.data_offset < h.header_bytes || h.header_bytes > size)
        return false;
    auto m = spec_from_gguf(h, "fuzz");
    if (!m) return !m.error().code.empty() && !m.error().message.empty();
    if (m->layers.empty() || !m->gguf || m->gguf->tensor_bytes != h.tensor_bytes) return false;
    if (auto kt = vllm_kv_type("auto", m->dtype)) {
        if (ideal_kv(m.value(), uniform_kv_dtypes(m.value(), kt.value())).bytes_per_token < 0) return false;
    }
    LlamaOptions lo;
    lo.n_ctx = 4096;
    lo.n_seq_max = 1 + static_cast<int64_t>(size % 4);
    if (auto l = llamacpp_layout(m.value(), lo)) {
        if (l->total_bytes < 0 || l->kv_bytes < 0) return false;
    }
    (void)llamacpp_file_size(h.tensor_bytes, h.tensor_elements);
    (void)llamacpp_model_params(h.tensor_elements);
    return true;
}

}  // namespace kvb::fuzz
