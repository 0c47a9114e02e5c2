// From KV memory to what vLLM logs: num_blocks (min over workers), the
// "GPU KV cache size" / "Maximum concurrency" line(s), and the ValueError
// vLLM raises when one max_model_len request does not fit
// (kv_cache_utils.get_kv_cache_configs / _check_enough_kv_cache_memory).
#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "base/arith.h"
#include "base/units.h"
#include "engines/vllm.h"

namespace kvb {
namespace {

// Layer id -> its spec, built once: a linear search per group layer made the capacity
// code O(layers^2) (100,000 Gemma 3 layers took 20 s).
std::unordered_map<int64_t, const VllmLayerSpec*> spec_index(const VllmLayout& l) {
    std::unordered_map<int64_t, const VllmLayerSpec*> ix;
    ix.reserve(l.layers.size());
    for (const auto& s : l.layers) ix.emplace(s.layer, &s);
    return ix;
}

// What one pipeline stage's request cost depends on apart from the token count.
struct StageView {
    int64_t gs = 0;                             // largest group's layer count on the stage
    std::vector<const VllmLayerSpec*> firsts;   // each group's first spec
    std::vector<const VllmLayerSpec*> uniform;  // UniformTypeKVCacheSpecs: the stage's specs
};

StageView stage_view(const VllmLayout& l, int rank) {
    StageView v;
    if (l.uniform_type) {
        for (const auto& s : l.layers)
            if (s.pp_rank == rank) v.uniform.push_back(&s);
        return v;
    }
    const auto ix = spec_index(l);
    for (const auto& g : l.groups) {
        int64_t n = 0;
        for (int64_t li : g.layers) {
            auto it = ix.find(li);
            if (it != ix.end() && it->second->pp_rank == rank) ++n;
        }
        v.gs = std::max(v.gs, n);
        v.firsts.push_back(ix.at(g.layers.front()));
    }
    return v;
}

// _max_memory_usage_bytes_from_groups projected onto one pipeline stage.
int64_t stage_request_bytes(const VllmLayout& l, const StageView& v, int64_t tokens) {
    if (l.groups.empty()) return 0;
    if (l.uniform_type) {
        int64_t sum = 0;
        for (const VllmLayerSpec* s : v.uniform) sum = sat_add(sum, vllm_spec_max_memory(*s, tokens, l));
        return sum;
    }
    int64_t blocks = 0;
    for (const VllmLayerSpec* s0 : v.firsts)
        blocks = sat_add(blocks, cdiv(vllm_spec_max_memory(*s0, tokens, l), l.page_size_bytes));
    return sat_mul(sat_mul(v.gs, l.page_size_bytes), blocks);
}

int64_t stage_request_bytes(const VllmLayout& l, int rank, int64_t tokens) {
    if (l.groups.empty()) return 0;
    return stage_request_bytes(l, stage_view(l, rank), tokens);
}

bool stage_has_kv(const VllmLayout& l, int rank) {
    for (const auto& s : l.layers)
        if (s.pp_rank == rank) return true;
    return false;
}

// vllm.utils.mem_utils.format_gib: round(b / 2**30, 2), printed by str(): "6.51", "1.0", "4.5".
std::string py_round2(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", x);
    std::string s = buf;
    while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
    return s;
}

}  // namespace

std::string vllm_format_gib(int64_t bytes) {
    return py_round2(double(bytes) / double(GiB));
}

int64_t vllm_request_bytes(const VllmLayout& l, int64_t tokens) {
    int64_t mx = 0;
    for (int r = 0; r < l.pp; ++r) mx = std::max(mx, stage_request_bytes(l, r, tokens));
    return mx;
}

int64_t vllm_request_blocks(const VllmLayout& l, int64_t tokens) {
    // The scheduler's view: one spec per group (UniformTypeKVCacheSpecs collapses to its
    // first layer), blocks = sum over groups of cdiv(max_memory_usage_bytes, page_size_bytes).
    int64_t blocks = 0;
    const auto ix = spec_index(l);
    for (const auto& g : l.groups) {
        const VllmLayerSpec* s0 = ix.at(g.layers.front());
        blocks = sat_add(blocks, cdiv(vllm_spec_max_memory(*s0, tokens, l), s0->page_size_bytes));
    }
    return blocks;
}

namespace {

int64_t estimate_stage(const VllmLayout& L, int r, int64_t avail) {
    const StageView v = stage_view(L, r);
    if (stage_request_bytes(L, v, 1) > avail) return 0;
    int64_t lo = 1, hi = L.max_model_len, est = 1;
    while (lo <= hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (stage_request_bytes(L, v, mid) <= avail) {
            est = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return est;
}

}  // namespace

int64_t vllm_estimate_max_model_len(const VllmLayout& l, int64_t avail) {
    if (l.groups.empty()) return l.max_model_len;
    if (avail <= 0) return 0;
    int64_t best = l.max_model_len;
    for (int r = 0; r < l.pp; ++r)
        if (stage_has_kv(l, r)) best = std::min(best, estimate_stage(l, r, avail));
    return best;
}

int64_t vllm_num_blocks(const VllmLayout& l, int64_t avail) {
    if (l.groups.empty()) return 1;
    if (avail <= 0) return 0;
    int64_t nb = INT64_MAX;
    for (int64_t per : l.stage_bytes_per_block)
        if (per > 0) nb = std::min(nb, avail / per);
    return nb == INT64_MAX ? 0 : nb;
}

namespace {

// kvbudget's lead for vLLM's refusal: what is short and what to change.
Message no_memory(int64_t avail) {
    if (avail <= 0) return note("vllm_kv_pool_negative", {{"short", format_bytes(-avail)}});
    return note("vllm_no_kv_memory", {{"available", format_bytes(avail)}});
}

Message too_small(int64_t mml, int64_t need, int64_t avail, int64_t est) {
    MessageParams params = {
        {"max_model_len", with_commas(mml)}, {"needed", format_bytes(need)}, {"available", format_bytes(avail)}};
    if (est <= 0) return note("vllm_kv_too_small_none", std::move(params));
    params.emplace_back("estimated_max_model_len", with_commas(est));
    return note("vllm_kv_too_small", std::move(params));
}

// The V0 engine (CacheEngine.get_cache_block_size / raise_if_cache_size_invalid): one block of
// block_size tokens across every attention layer of the stage, no groups, no sliding windows.
VllmCapacity v0_capacity(VllmCapacity c, int64_t avail, int64_t swap) {
    const VllmLayout& L = c.layout;
    int64_t per_block = 0;
    for (int r = 0; r < L.pp; ++r) {
        int64_t b = 0;
        for (const auto& s : L.layers)
            if (s.pp_rank == r && s.spec_type != "MambaSpec") b += s.real_page_size_bytes;
        per_block = std::max(per_block, b);
    }
    const int64_t block = L.attn_block_size, mml = L.max_model_len;
    c.num_blocks = per_block > 0 && avail > 0 ? avail / per_block : 0;
    c.cpu_blocks = per_block > 0 ? swap / per_block : 0;
    c.usable_blocks = c.num_blocks;
    c.tokens = c.legacy_tokens = sat_mul(c.num_blocks, block);
    c.blocks_per_request = cdiv(mml, block);
    c.request_bytes = sat_mul(c.blocks_per_request, per_block);
    c.max_concurrency = double(c.num_blocks) * double(block) / double(mml);
    if (c.num_blocks <= 0) {
        c.error_text =
            "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
            "initializing the engine.";
        c.refusal = no_memory(avail);
        return c;
    }
    char conc[64];
    std::snprintf(conc, sizeof conc, "%.2fx", c.max_concurrency);
    c.log_lines.push_back("# GPU blocks: " + std::to_string(c.num_blocks) +
                          ", # CPU blocks: " + std::to_string(c.cpu_blocks));
    c.log_lines.push_back("Maximum concurrency for " + std::to_string(mml) + " tokens per request: " + conc);
    c.fits = c.tokens >= mml;
    if (!c.fits) {
        c.estimated_max_model_len = c.tokens;
        c.error_text = "The model's max seq len (" + std::to_string(mml) +
                       ") is larger than the maximum number of tokens that can be stored in KV cache (" +
                       std::to_string(c.tokens) +
                       "). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
                       "the engine.";
        c.refusal = too_small(mml, c.request_bytes, avail, c.estimated_max_model_len);
    }
    return c;
}

}  // namespace

Result<VllmCapacity> vllm_capacity(const ModelSpec& m, const VllmOptions& o, int64_t avail) {
    auto lay = vllm_layout(m, o);
    if (!lay) return lay.error();
    VllmCapacity c;
    c.layout = std::move(lay.value());
    if (c.layout.log_format == VllmLogFormat::V0) {
        c.available_bytes = avail;
        return v0_capacity(std::move(c), avail, o.swap_space_bytes);
    }
    const VllmLayout& L = c.layout;
    c.available_bytes = avail;
    const bool current = L.log_format != VllmLogFormat::Legacy;  // Split shares the current error texts
    const int64_t mml = L.max_model_len;

    for (const auto& s : L.vllm_lines) c.log_lines.push_back(s);
    for (const auto& s : L.warnings) c.log_lines.push_back(s);
    if (L.groups.empty()) {
        // Attention-free: BlockPool still needs its null block; vLLM prints no capacity line.
        c.num_blocks = 1;
        c.fits = true;
        return c;
    }

    if (avail <= 0) {
        c.error_text =
            current
                ? "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                  "initializing the engine (this flag also controls CPU memory reservation on the CPU backend, "
                  "despite its name). See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more "
                  "details."
                : "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                  "initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for "
                  "more details.";
        c.refusal = no_memory(avail);
        return c;
    }

    c.request_bytes = vllm_request_bytes(L, mml);
    for (int r = 0; r < L.pp; ++r) {
        if (!stage_has_kv(L, r)) continue;
        const int64_t need = stage_request_bytes(L, r, mml);
        if (need <= avail) continue;
        // estimate_max_model_len: binary search over [1, max_model_len] on the failing stage.
        const int64_t est = estimate_stage(L, r, avail);
        c.estimated_max_model_len = est;
        const std::string est_msg = est > 0 ? "Based on the available memory, the estimated maximum model length is " +
                                                  std::to_string(est) + ". "
                                            : "";
        c.error_text = std::string("To serve at least one request with the ") + (current ? "model's" : "models's") +
                       " max seq len (" + std::to_string(mml) + "), (" + vllm_format_gib(need) +
                       " GiB KV cache is needed, which is larger than the available KV cache memory (" +
                       vllm_format_gib(avail) + " GiB). " + est_msg + "Try increasing `gpu_memory_utilization`" +
                       (current ? " (which also controls CPU memory on the CPU backend)" : "") +
                       " or decreasing `max_model_len` when initializing the engine. See "
                       "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.";
        c.request_bytes = need;
        c.refusal = too_small(mml, need, avail, est);
        return c;
    }

    const int64_t nb = vllm_num_blocks(L, avail);
    c.num_blocks = nb;
    c.usable_blocks = nb > 0 ? nb - 1 : 0;
    c.blocks_per_request = vllm_request_blocks(L, mml);
    c.fits = true;
    c.max_concurrency = c.blocks_per_request > 0 ? double(nb) / double(c.blocks_per_request) : 0.0;
    // Current: int(max_concurrency * max_model_len), in Python float arithmetic.
    // Python's int() of a float never wraps; a C++ cast of one at or above 2^63 is undefined
    // (it printed -9,223,372,036,854,775,808 tokens): saturate instead.
    const double cur = c.max_concurrency * double(mml);
    const int64_t cur_tokens = cur >= 9.223372036854775807e18 ? INT64_MAX : static_cast<int64_t>(cur);
    c.legacy_tokens = sat_mul(nb / static_cast<int64_t>(L.groups.size()), L.min_block_size);
    c.tokens = current ? cur_tokens : c.legacy_tokens;
    const bool one_line = L.log_format == VllmLogFormat::Current;

    char conc[64];
    std::snprintf(conc, sizeof conc, "%.2fx", c.max_concurrency);
    if (one_line) {
        c.log_lines.push_back("GPU KV cache size: " + with_commas(c.tokens) + " tokens, Maximum concurrency for " +
                              with_commas(mml) + " tokens per request: " + conc);
    } else {
        c.log_lines.push_back("GPU KV cache size: " + with_commas(c.tokens) + " tokens");
        c.log_lines.push_back("Maximum concurrency for " + with_commas(mml) + " tokens per request: " + conc);
    }
    return c;
}

}  // namespace kvb
