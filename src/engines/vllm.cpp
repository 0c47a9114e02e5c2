// vLLM v1 KV-cache layout: per-layer specs (kv_cache_interface.py), the
// hybrid attention+mamba block-size adjustment (platforms/interface.py,
// formerly models/config.py HybridAttentionMambaModelConfig) and the grouping
// of kv_cache_utils.get_kv_cache_groups, including pipeline-parallel projection.
#include "engines/vllm.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "base/arith.h"
#include "model/dtype.h"
#include "kv/kv.h"
#include "base/units.h"

namespace kvb {

const char* to_string(MambaCacheMode m) {
    switch (m) {
        case MambaCacheMode::Default: return "default";
        case MambaCacheMode::None: return "none";
        case MambaCacheMode::Align: return "align";
        case MambaCacheMode::All: return "all";
    }
    return "?";
}

Result<MambaCacheMode> parse_mamba_cache_mode(const std::string& s) {
    if (s == "" || s == "default") return MambaCacheMode::Default;
    if (s == "none") return MambaCacheMode::None;
    if (s == "align") return MambaCacheMode::Align;
    if (s == "all") return MambaCacheMode::All;
    return make_error("bad_value", "--mamba-cache-mode must be none, align or all, got '" + s + "'");
}

Result<VllmLogFormat> parse_vllm_log_format(const std::string& s) {
    if (s == "" || s == "current") return VllmLogFormat::Current;
    if (s == "split") return VllmLogFormat::Split;
    if (s == "legacy") return VllmLogFormat::Legacy;
    if (s == "v0") return VllmLogFormat::V0;
    return make_error("bad_value", "--log-format must be current, split, legacy or v0, got '" + s + "'");
}

namespace {


// Which KVCacheSpec class a layer ends up as; the order of fields is what
// dataclass equality compares in vLLM.
std::tuple<std::string, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>
spec_key(const VllmLayerSpec& s) {
    // FullAttentionSpec.merge accepts layers that differ only in the sliding window / chunk they
    // remember (what --disable-hybrid-kv-cache-manager produces), so those compare equal here.
    const int64_t window = s.spec_type == "FullAttentionSpec" ? 0 : s.window;
    return {s.spec_type, s.block_size, s.num_kv_heads, s.head_size, s.head_size_v,
            s.dtype_bytes, window, s.page_size_bytes, s.state_conv_bytes + (s.state_ssm_bytes << 1)};
}

bool same_spec(const VllmLayerSpec& a, const VllmLayerSpec& b) { return spec_key(a) == spec_key(b); }

bool is_full_type(const VllmLayerSpec& s) {
    // MLAAttentionSpec subclasses FullAttentionSpec, so isinstance() groups them.
    return s.spec_type == "FullAttentionSpec" || s.spec_type == "MLAAttentionSpec";
}

}  // namespace

int64_t vllm_spec_max_memory(const VllmLayerSpec& s, int64_t tokens, const VllmLayout& l) {
    const int64_t mnbt = l.max_in_flight_tokens > 0 ? l.max_in_flight_tokens : l.max_num_batched_tokens;
    const MambaCacheMode mode = l.mamba_cache_mode;
    const int64_t num_spec = l.num_speculative_tokens;
    const int64_t page = s.page_size_bytes;
    if (s.spec_type == "SlidingWindowSpec") {
        const int64_t n = std::min(s.window - 1 + mnbt, tokens);
        return sat_mul(cdiv(n, s.block_size) + 1, page);
    }
    if (s.spec_type == "ChunkedLocalAttentionSpec") {
        const int64_t n = std::min(s.window + mnbt, tokens);
        return sat_mul(cdiv(n, s.block_size), page);
    }
    if (s.spec_type == "MambaSpec") {
        if (mode == MambaCacheMode::All) return sat_mul(cdiv(tokens, s.block_size), page);
        if (mode == MambaCacheMode::Align) return page * (2 + num_spec);
        return page * (1 + num_spec);
    }
    return sat_mul(cdiv(tokens, s.block_size), page);
}

namespace {

struct AttnGeom {
    int64_t heads = 0, head_size = 0, head_size_v = 0;
};

Error refuse(const std::string& msg) { return make_error("vllm_refused", msg); }

// vLLM's ParallelConfig / ModelConfig checks for tensor parallelism.
Result<bool> check_tp(const ModelSpec& m, int64_t tp) {
    const int64_t heads = m.dims.num_attention_heads;
    if (heads > 0 && heads % tp != 0) {
        return refuse("Total number of attention heads (" + std::to_string(heads) +
                      ") must be divisible by tensor parallel size (" + std::to_string(tp) + ").");
    }
    for (const Layer& l : m.layers) {
        if (l.kind == LayerKind::Full || l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked) {
            // QKVParallelLinear: KV heads are either split evenly or replicated evenly.
            const int64_t h = l.kv_heads;
            if (h <= 0) continue;
            if ((tp >= h && tp % h != 0) || (tp < h && h % tp != 0)) {
                return refuse("Total number of key/value heads (" + std::to_string(h) +
                              ") cannot be split or replicated evenly across tensor parallel size (" +
                              std::to_string(tp) + ").");
            }
        }
        if (l.kind == LayerKind::Linear || l.kind == LayerKind::Mamba) {
            const StateGeometry& g = l.state;
            if (g.heads > 0 && g.heads % tp != 0) {
                return refuse("Number of " + std::string(l.kind == LayerKind::Linear ? "linear value" : "mamba") +
                              " heads (" + std::to_string(g.heads) + ") must be divisible by tensor parallel size (" +
                              std::to_string(tp) + ").");
            }
        }
    }
    return true;
}

// vllm/model_executor/models/utils.py get_pp_indices: the remainder goes to the
// stages just before the last one.
std::vector<int> pp_ranks(int64_t n_layers, int64_t pp) {
    std::vector<int64_t> parts(pp, n_layers / pp);
    const int64_t rem = n_layers % pp;
    for (int64_t i = 2; i < rem + 2; ++i) parts[pp - i] += 1;
    std::vector<int> rank(n_layers, 0);
    int64_t idx = 0;
    for (int64_t r = 0; r < pp; ++r)
        for (int64_t k = 0; k < parts[r]; ++k) rank[idx++] = static_cast<int>(r);
    return rank;
}

// Mamba / gated-delta-net state per GPU, as mamba_utils.*_state_shape build it.
void state_bytes_per_gpu(const Layer& l, int64_t tp, int64_t num_spec, int conv_b, int ssm_b, int64_t* conv,
                         int64_t* ssm) {
    const StateGeometry& g = l.state;
    int64_t groups = g.n_groups;
    // Mamba-2 replicates a group that cannot be split (extra_groups_for_head_shards).
    if (l.kind == LayerKind::Mamba && groups > 0 && groups % tp != 0) groups = tp;
    const int64_t conv_dim = g.d_inner + 2 * groups * g.d_state;
    const int64_t taps = g.conv_kernel > 0 ? g.conv_kernel - 1 + num_spec : 0;
    *conv = taps * (conv_dim / tp) * conv_b;
    *ssm = (g.d_inner / tp) * g.d_state * ssm_b;
}

}  // namespace

Result<VllmLayout> vllm_layout(const ModelSpec& m, const VllmOptions& o) {
    VllmLayout L;
    if (o.tensor_parallel_size < 1 || o.tensor_parallel_size > 4096)
        return make_error("bad_value", "--tensor-parallel-size must be between 1 and 4096, got " +
                                           std::to_string(o.tensor_parallel_size));
    if (o.pipeline_parallel_size < 1 || o.pipeline_parallel_size > 4096)
        return make_error("bad_value", "--pipeline-parallel-size must be between 1 and 4096, got " +
                                           std::to_string(o.pipeline_parallel_size));
    if (o.block_size < 0 || o.block_size > (1 << 20))
        return make_error("bad_value", "--block-size must be a positive number of tokens, got " +
                                           std::to_string(o.block_size));
    if (o.mla_block_size < 0 || o.mla_block_size > (1 << 20))
        return make_error("bad_value", "MLA block size must be positive, got " + std::to_string(o.mla_block_size));
    if (o.max_model_len < 0 || o.max_num_batched_tokens < 0)
        return make_error("bad_value", "--max-model-len and --max-num-batched-tokens must not be negative");
    if (o.kernel_block_alignment < 0 || o.kernel_block_alignment > 4096)
        return make_error("bad_value", "kernel block alignment must be between 1 and 4096 tokens");
    if (o.num_speculative_tokens < 0 || o.num_speculative_tokens > 64)
        return make_error("bad_value", "num_speculative_tokens must be between 0 and 64");
    if (m.layers.empty()) return make_error("bad_value", "model " + m.name + " has no layers");
    const int64_t n_layers = static_cast<int64_t>(m.layers.size());
    if (o.pipeline_parallel_size > n_layers)
        return refuse("Pipeline parallel size (" + std::to_string(o.pipeline_parallel_size) +
                      ") is larger than the number of hidden layers (" + std::to_string(n_layers) + ").");

    const int64_t tp = o.tensor_parallel_size, pp = o.pipeline_parallel_size;
    L.tp = tp;
    L.pp = pp;
    L.num_speculative_tokens = o.num_speculative_tokens;
    L.log_format = o.log_format;

    auto kvt = vllm_kv_type(o.kv_cache_dtype, m.dtype);
    if (!kvt) return kvt.error();
    L.kv_cache_dtype = kvt->name;
    const int64_t dt = kvt->bytes(1);
    if (dt <= 0) return make_error("bad_value", "unknown KV cache element size for '" + o.kv_cache_dtype + "'");

    // max_model_len: vLLM refuses more than the model's own limit (config/model.py). Without any
    // length key in config.json it assumes 2048.
    const bool has_len_key = m.max_position_embeddings > 0;
    const int64_t model_max = has_len_key ? m.max_position_embeddings : 2048;
    const std::string len_key = has_len_key ? "max_position_embeddings" : "None";
    if (!has_len_key)
        L.notes.push_back("config.json has no maximum length key: vLLM assumes the model's maximum length is 2048");
    int64_t mml = o.max_model_len > 0 ? o.max_model_len : model_max;
    if (mml > model_max) {
        std::string derived = std::to_string(model_max);
        if (o.log_format == VllmLogFormat::Current || o.log_format == VllmLogFormat::Split) {
            derived += ".0";
            return refuse("User-specified max_model_len (" + std::to_string(mml) +
                          ") is greater than the derived max_model_len (" + len_key + "=" + derived +
                          " or model_max_length=None in model's config.json). To allow overriding this maximum, "
                          "set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be "
                          "used with extreme caution. If the model uses relative position encoding (RoPE), "
                          "positions exceeding derived_max_model_len lead to nan. If the model uses absolute "
                          "position encoding, positions exceeding derived_max_model_len will cause a CUDA array "
                          "out-of-bounds error.");
        }
        return refuse("User-specified max_model_len (" + std::to_string(mml) +
                      ") is greater than the derived max_model_len (" + len_key + "=" + derived +
                      " or model_max_length=None in model's config.json). This may lead to incorrect model "
                      "outputs or CUDA errors. To allow overriding this maximum, set the env var "
                      "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1");
    }
    if (mml > (int64_t(1) << 40)) return make_error("bad_value", "--max-model-len is absurdly large");
    L.max_model_len = mml;
    // get_batch_defaults: `vllm serve` uses 8192 on >= 70 GiB GPUs (2048 below), the LLM class 8192
    // below 70 GiB (16384 above); 8192 is the value both share. The budget passes the GPU's own default.
    L.max_num_batched_tokens = o.max_num_batched_tokens > 0 ? o.max_num_batched_tokens : 8192;
    // VllmConfig.max_concurrent_batches (V1 model runner): 2 with async scheduling and no PP, else
    // pp_size. Releases before max_in_flight_tokens (the older log formats) reserved one batch.
    int64_t batches = 1;
    if (o.async_scheduling >= 0 || o.log_format == VllmLogFormat::Current) {
        const bool async = o.async_scheduling != 0;
        batches = async ? (pp <= 1 ? 2 : pp) : pp;
    }
    L.max_in_flight_tokens = batches * L.max_num_batched_tokens;

    auto tpok = check_tp(m, tp);
    if (!tpok) return tpok.error();

    // Dtypes of recurrent state: mamba_cache_dtype / mamba_ssm_cache_dtype ("auto" follows the model).
    KvDtypes sd = uniform_kv_dtypes(m, *kvt);
    int conv_b = sd.conv_state_bytes, ssm_b = sd.ssm_state_bytes;
    if (o.mamba_cache_dtype != "auto" && !o.mamba_cache_dtype.empty()) {
        conv_b = dtype_size(o.mamba_cache_dtype);
        if (conv_b <= 0) return make_error("bad_value", "unknown --mamba-cache-dtype '" + o.mamba_cache_dtype + "'");
        ssm_b = conv_b;
    }
    if (o.mamba_ssm_cache_dtype != "auto" && !o.mamba_ssm_cache_dtype.empty()) {
        ssm_b = dtype_size(o.mamba_ssm_cache_dtype);
        if (ssm_b <= 0)
            return make_error("bad_value", "unknown --mamba-ssm-cache-dtype '" + o.mamba_ssm_cache_dtype + "'");
    }

    const bool has_state = m.has_state();
    bool has_attn = false;
    for (const Layer& l : m.layers)
        if (l.kind == LayerKind::Full || l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked ||
            l.kind == LayerKind::Mla)
            has_attn = true;

    bool has_gdn = false;  // gated delta net (conv + recurrent state), not MiniMax's conv-less lightning attention
    for (const Layer& l : m.layers)
        if (l.kind == LayerKind::Linear && l.state.conv_kernel > 0) has_gdn = true;
    MambaCacheMode mode = o.mamba_cache_mode;
    // Models declaring SupportsMambaPrefixCaching (Mamba-2 hybrids such as Nemotron-H) get "all".
    const bool mamba2_prefix = m.model_type == "nemotron_h";
    if (mode == MambaCacheMode::Default) {
        // MambaModelConfig.verify_and_update_config with prefix caching on (the default in current
        // releases): "all" when the model supports mamba prefix caching, else "align". Older
        // releases ran hybrids without prefix caching ("none"); Qwen3.5 / Qwen3-Next logs of
        // v0.24+ show "align".
        if (has_gdn && has_attn)
            mode = MambaCacheMode::Align;
        else if (mamba2_prefix && has_attn && o.log_format == VllmLogFormat::Current)
            mode = MambaCacheMode::All;
        else
            mode = MambaCacheMode::None;
    }
    L.mamba_cache_mode = has_state ? mode : MambaCacheMode::None;

    const int64_t num_spec = o.num_speculative_tokens;
    const bool is_mla = m.has(LayerKind::Mla);
    const int64_t user_block = o.block_size;
    // DeepSeek-V3.2 (sparse MLA): FlashMLA-sparse pages are 64 tokens, an fp8 cache is the packed
    // "fp8_ds_mla" layout of 656 B/token, and every layer also caches its indexer keys
    // (DeepseekV32IndexerCache: 128 fp8 values + one fp32 scale = 132 B/token).
    const bool ds_sparse = is_mla && m.model_type == "deepseek_v32";
    const bool fp8_ds_mla = ds_sparse && kvt->name.rfind("fp8", 0) == 0;
    int64_t attn_block = user_block > 0 ? user_block
                                        : (is_mla && o.mla_block_size > 0 ? o.mla_block_size : (ds_sparse ? 64 : 16));

    // Chunked local attention (Llama 4): vLLM disables the hybrid manager by default
    // (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE unset), so chunked layers are full.
    const bool chunked_as_full = m.has(LayerKind::Chunked) && !o.chunked_local_hybrid;
    if (chunked_as_full)
        L.notes.push_back("chunked local attention layers are cached as full attention: vLLM disables the hybrid "
                          "KV cache manager for them unless VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1");
    const bool disable_hybrid =
        o.disable_hybrid_kv_cache_manager || chunked_as_full || o.log_format == VllmLogFormat::V0;

    // Hybrid attention + state: grow the attention block until its page holds one state.
    int64_t mamba_block = mml;
    int64_t mamba_page_padded = 0;
    if (has_state && has_attn) {
        int64_t attn_1tok = 0;
        for (const Layer& l : m.layers) {
            if (l.kind == LayerKind::Mla) {
                attn_1tok = (l.kv_lora_rank + l.qk_rope_head_dim) * dt;
                break;
            }
            if (l.kind == LayerKind::Full || l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked) {
                const int64_t h = std::max<int64_t>(1, l.kv_heads / tp);
                attn_1tok = 2 * h * l.k_head_dim * dt;
                break;
            }
        }
        int64_t mamba_page = 0;
        for (const Layer& l : m.layers) {
            if (l.kind != LayerKind::Linear && l.kind != LayerKind::Mamba) continue;
            int64_t c = 0, s = 0;
            state_bytes_per_gpu(l, tp, num_spec, conv_b, ssm_b, &c, &s);
            mamba_page = std::max(mamba_page, c + s);
        }
        if (attn_1tok > 0 && mamba_page > 0) {
            const int64_t align = std::max<int64_t>(o.kernel_block_alignment > 0 ? o.kernel_block_alignment : 16,
                                                    attn_block);
            int64_t need;
            if (mode == MambaCacheMode::All) {
                // Align to the SSD kernel chunk: config chunk_size (Nemotron-H 128, Mamba-2's default 256;
                // 64 assumed for gated delta net, whose configs carry none).
                const int64_t chunk = m.has(LayerKind::Mamba) ? (m.model_type == "nemotron_h" ? 128 : 256) : 64;
                int64_t a = chunk, b = align;
                while (b) { int64_t t = a % b; a = b; b = t; }
                const int64_t lcm = chunk / a * align;
                need = lcm * cdiv(cdiv(mamba_page, attn_1tok), lcm);
            } else {
                need = align * cdiv(mamba_page, align * attn_1tok);
            }
            if (attn_block < need) {
                attn_block = need;
                L.vllm_lines.push_back("Setting attention block size to " + std::to_string(need) +
                                  " tokens to ensure that attention page size is >= mamba page size.");
            }
            const int64_t attn_page = attn_block * attn_1tok;
            if (attn_page > mamba_page) {
                mamba_page_padded = attn_page;
                char buf[200];
                std::snprintf(buf, sizeof buf,
                              "Padding mamba page size by %.2f%% to ensure that mamba page size and attention "
                              "page size are exactly equal.",
                              100.0 * double(attn_page - mamba_page) / double(mamba_page));
                L.vllm_lines.push_back(buf);
            }
        }
        mamba_block = (mode == MambaCacheMode::None) ? mml : attn_block;
    } else if (has_state) {
        mamba_block = (mode == MambaCacheMode::None) ? mml : attn_block;
    }
    L.attn_block_size = attn_block;

    // Per-layer specs.
    const std::vector<int> rank = pp_ranks(n_layers, pp);
    for (int64_t i = 0; i < n_layers; ++i) {
        const Layer& l = m.layers[i];
        VllmLayerSpec s;
        s.layer = i;
        s.kind = l.kind;
        s.pp_rank = rank[i];
        s.dtype_bytes = dt;
        switch (l.kind) {
            case LayerKind::Full:
            case LayerKind::Sliding:
            case LayerKind::Chunked: {
                s.block_size = attn_block;
                s.num_kv_heads = std::max<int64_t>(1, l.kv_heads / tp);
                s.head_size = l.k_head_dim;
                s.head_size_v = l.v_head_dim > 0 ? l.v_head_dim : l.k_head_dim;
                s.window = l.window;
                if (l.kind == LayerKind::Full || (disable_hybrid && l.kind != LayerKind::Full)) {
                    s.spec_type = "FullAttentionSpec";
                    s.real_page_size_bytes = s.block_size * s.num_kv_heads * (s.head_size + s.head_size_v) * dt;
                    if (l.kind == LayerKind::Full) s.window = 0;
                } else {
                    s.spec_type = l.kind == LayerKind::Sliding ? "SlidingWindowSpec" : "ChunkedLocalAttentionSpec";
                    s.real_page_size_bytes = 2 * s.block_size * s.num_kv_heads * s.head_size * dt;
                }
                break;
            }
            case LayerKind::Mla:
                s.spec_type = "MLAAttentionSpec";
                s.block_size = attn_block;
                s.num_kv_heads = 1;  // one latent "head", never split by TP
                s.head_size = l.kv_lora_rank + l.qk_rope_head_dim;
                s.head_size_v = s.head_size;
                s.real_page_size_bytes = s.block_size * (fp8_ds_mla ? 656 : s.head_size * dt);
                if (fp8_ds_mla) s.dtype_bytes = 1;
                break;
            case LayerKind::Linear:
            case LayerKind::Mamba: {
                s.spec_type = "MambaSpec";
                s.block_size = mamba_block;
                state_bytes_per_gpu(l, tp, num_spec, conv_b, ssm_b, &s.state_conv_bytes, &s.state_ssm_bytes);
                s.real_page_size_bytes = s.state_conv_bytes + s.state_ssm_bytes;
                if (mamba_page_padded > 0 && mamba_page_padded < s.real_page_size_bytes)
                    return make_error("unsupported", "state layers of " + m.name + " differ in size; vLLM pads all "
                                                     "to one page");
                break;
            }
            case LayerKind::None:
                continue;
        }
        s.page_size_bytes = s.real_page_size_bytes;
        if (s.spec_type == "MambaSpec" && mamba_page_padded > 0) s.page_size_bytes = mamba_page_padded;
        if (s.page_size_bytes <= 0)
            return make_error("bad_value", "layer " + std::to_string(i) + " of " + m.name + " has an empty KV page");
        L.layers.push_back(s);
        if (ds_sparse && l.kind == LayerKind::Mla) {
            VllmLayerSpec ix = s;
            ix.layer = n_layers + i;  // an extra cache of layer i
            ix.head_size = ix.head_size_v = 132;
            ix.dtype_bytes = 1;
            ix.real_page_size_bytes = ix.page_size_bytes = ix.block_size * 132;
            L.layers.push_back(ix);
        }
    }
    if (ds_sparse)
        L.notes.push_back("DeepSeek-V3.2: 64-token pages, indexer key cache (132 B/token/layer) alongside the latent" +
                          std::string(fp8_ds_mla ? ", fp8_ds_mla latent layout (656 B/token)" : ""));
    if (L.layers.empty()) {
        L.notes.push_back("attention-free model: no KV cache (vLLM keeps num_blocks=1 for the null block)");
        return L;
    }

    // --disable-hybrid-kv-cache-manager with mamba layers cannot be unified.
    std::vector<VllmLayerSpec>& specs = L.layers;
    auto all_same = [&]() {
        for (const auto& s : specs)
            if (!same_spec(s, specs[0])) return false;
        return true;
    };
    auto uniform_type = [&]() {
        for (const auto& s : specs)
            if (s.block_size != specs[0].block_size) return false;
        const VllmLayerSpec& a = specs[0];
        for (const auto& s : specs) {
            if (is_full_type(a)) {
                if (!is_full_type(s)) return false;
            } else if (s.spec_type != a.spec_type || s.window != a.window) {
                return false;
            }
        }
        return true;
    };
    if (disable_hybrid && !all_same() && !uniform_type()) {
        if (has_state)
            return refuse("Hybrid KV cache manager is disabled but failed to convert the KV cache specs to one "
                          "unified type.");
    }

    const bool uniform_spec = all_same();
    if (uniform_spec) {
        VllmGroup g;
        g.spec_type = specs[0].spec_type;
        g.kind = specs[0].kind;
        g.block_size = specs[0].block_size;
        g.page_size_bytes = specs[0].page_size_bytes;
        g.window = specs[0].window;
        for (const auto& s : specs) g.layers.push_back(s.layer);
        L.groups.push_back(g);
        L.page_size_bytes = g.page_size_bytes;
        L.group_size = static_cast<int64_t>(g.layers.size());
    } else if (uniform_type()) {
        // UniformTypeKVCacheSpecs: one group, per-layer page sizes summed per block.
        L.uniform_type = true;
        VllmGroup g;
        g.spec_type = "UniformTypeKVCacheSpecs";
        g.kind = specs[0].kind;
        g.block_size = specs[0].block_size;
        g.window = specs[0].window;
        for (const auto& s : specs) {
            g.layers.push_back(s.layer);
            g.page_size_bytes += s.page_size_bytes;
        }
        L.groups.push_back(g);
        L.group_size = static_cast<int64_t>(g.layers.size());
    } else {
        // unify_kv_cache_spec_page_size: grow the block of smaller pages.
        int64_t max_page = 0;
        for (const auto& s : specs) max_page = std::max(max_page, s.page_size_bytes);
        for (auto& s : specs) {
            if (s.page_size_bytes == max_page) continue;
            if (max_page % s.page_size_bytes != 0)
                return refuse("The page size of the layer is not divisible by the maximum page size. Cannot unify "
                              "by adjusting block_size.");
            const int64_t ratio = max_page / s.page_size_bytes;
            s.block_size *= ratio;
            s.real_page_size_bytes *= ratio;
            s.page_size_bytes = max_page;
        }
        L.page_size_bytes = max_page;
        // Group identical specs in order of first appearance.
        std::vector<std::vector<int64_t>> same;  // indices into specs
        for (int64_t i = 0; i < static_cast<int64_t>(specs.size()); ++i) {
            bool placed = false;
            for (auto& v : same)
                if (same_spec(specs[v[0]], specs[i])) {
                    v.push_back(i);
                    placed = true;
                    break;
                }
            if (!placed) same.push_back({i});
        }
        int64_t mn = INT64_MAX, mx = 0;
        for (auto& v : same) {
            mn = std::min<int64_t>(mn, v.size());
            mx = std::max<int64_t>(mx, v.size());
        }
        int64_t gs = mn;
        if (double(mx) < double(mn) * 1.5) gs = mx;
        L.group_size = gs;
        for (auto& v : same) {
            const int64_t n = static_cast<int64_t>(v.size());
            const int64_t pad = gs - n % gs;
            if (pad != gs) {
                char buf[160];
                std::snprintf(buf, sizeof buf, "Add %d padding layers, may waste at most %.2f%% KV cache memory",
                              static_cast<int>(pad), double(pad) / double(n) * 100.0);
                L.warnings.push_back(buf);
                L.padding_layers += pad;
            }
            const int64_t ng = cdiv(n, gs);
            for (int64_t i = 0; i < ng; ++i) {
                VllmGroup g;
                const VllmLayerSpec& s0 = specs[v[0]];
                g.spec_type = s0.spec_type;
                g.kind = s0.kind;
                g.block_size = s0.block_size;
                g.page_size_bytes = s0.page_size_bytes;
                g.window = s0.window;
                for (int64_t k = i; k < n; k += ng) g.layers.push_back(specs[v[k]].layer);
                L.groups.push_back(g);
            }
        }
    }

    L.min_block_size = INT64_MAX;
    for (const auto& g : L.groups) L.min_block_size = std::min(L.min_block_size, g.block_size);

    // Per pipeline stage: what one block id costs there.
    for (int64_t r = 0; r < pp; ++r) {
        int64_t bytes = 0;
        if (L.uniform_type) {
            for (const auto& s : specs)
                if (s.pp_rank == r) bytes += s.page_size_bytes;
        } else {
            int64_t gs = 0;
            for (const auto& g : L.groups) {
                int64_t n = 0;
                for (int64_t li : g.layers)
                    if (rank[li >= n_layers ? li - n_layers : li] == r) ++n;
                gs = std::max(gs, n);
            }
            bytes = gs * L.page_size_bytes;
        }
        L.stage_bytes_per_block.push_back(bytes);
        L.bytes_per_block = std::max(L.bytes_per_block, bytes);
    }
    return L;
}

}  // namespace kvb
