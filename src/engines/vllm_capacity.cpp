// From KV memory to what vLLM logs: num_blocks (min over workers), the
// "GPU KV cache size" / "Maximum concurrency" line(s), and the ValueError
// vLLM raises when one max_model_len request does not fit
// (kv_cache_utils.get_kv_cache_configs / _check_enough_kv_cache_memory).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "base/arith.h"
#include "base/units.h"
#include "engines/vllm.h"

namespace kvb {
namespace {

// Layer id -> its spec, built once: a linear search per group layer made the capacity
// code O(layers^2) (100,000 Gemma 3 layers took 20 s). Ids are dense (0 .. 2 x layers:
// VllmLayerSpec::layer), so a vector indexed by id; the first spec of an id wins. Not an
// unordered_map: its hash table was ~2.6 KB of the page's calculator module (issue 13).
class SpecIndex {
public:
    explicit SpecIndex(const VllmLayout& l) {
        for (const auto& s : l.layers) {
            if (s.layer < 0) continue;
            const auto id = static_cast<size_t>(s.layer);
            if (id >= by_id_.size()) by_id_.resize(id + 1, nullptr);
            if (!by_id_[id]) by_id_[id] = &s;
        }
    }
    // nullptr: no spec has that id (never for a group's layer: vllm_groups.cpp builds the
    // groups from the layers' ids).
    const VllmLayerSpec* find(int64_t layer) const {
        return layer >= 0 && static_cast<size_t>(layer) < by_id_.size() ? by_id_[static_cast<size_t>(layer)] : nullptr;
    }

private:
    std::vector<const VllmLayerSpec*> by_id_;
};

// What each pipeline stage's request cost depends on apart from the token count, for all
// stages in one pass over the layers: a pass per stage made pipeline parallelism
// O(pp x layers) (4,096 stages of 100,000 layers).
struct Stages {
    std::vector<int64_t> gs;                                 // per stage: largest group's layer count there
    std::vector<char> has_kv;                                // per stage: any cache layer
    std::vector<std::vector<const VllmLayerSpec*>> uniform;  // UniformTypeKVCacheSpecs: each stage's specs
    std::vector<const VllmLayerSpec*> firsts;                // each group's first spec (the same on every stage)
};

Stages stages_of(const VllmLayout& l) {
    Stages v;
    const size_t pp = static_cast<size_t>(std::max<int64_t>(l.pp, 1));
    v.gs.assign(pp, 0);
    v.has_kv.assign(pp, false);
    for (const auto& s : l.layers) v.has_kv[static_cast<size_t>(s.pp_rank)] = true;
    if (l.uniform_type) {
        v.uniform.resize(pp);
        for (const auto& s : l.layers) v.uniform[static_cast<size_t>(s.pp_rank)].push_back(&s);
        return v;
    }
    const SpecIndex ix(l);
    std::vector<int64_t> n(pp, 0);
    std::vector<size_t> touched;
    for (const auto& g : l.groups) {
        touched.clear();
        for (int64_t li : g.layers) {
            const VllmLayerSpec* spec = ix.find(li);
            if (!spec) continue;
            const size_t r = static_cast<size_t>(spec->pp_rank);
            if (n[r]++ == 0) touched.push_back(r);
        }
        for (size_t r : touched) {
            v.gs[r] = std::max(v.gs[r], n[r]);
            n[r] = 0;
        }
        v.firsts.push_back(ix.find(g.layers.front()));
    }
    return v;
}

// Blocks of every group for one request (the same on every stage).
int64_t group_blocks(const VllmLayout& l, const Stages& v, int64_t tokens) {
    int64_t blocks = 0;
    for (const VllmLayerSpec* s0 : v.firsts)
        blocks = sat_add(blocks, cdiv(vllm_spec_max_memory(*s0, tokens, l), l.page_size_bytes));
    return blocks;
}

// _max_memory_usage_bytes_from_groups projected onto one pipeline stage.
int64_t stage_request_bytes(const VllmLayout& l, const Stages& v, size_t rank, int64_t tokens) {
    if (l.groups.empty()) return 0;
    if (l.uniform_type) {
        int64_t sum = 0;
        for (const VllmLayerSpec* s : v.uniform[rank]) sum = sat_add(sum, vllm_spec_max_memory(*s, tokens, l));
        return sum;
    }
    return sat_mul(sat_mul(v.gs[rank], l.page_size_bytes), group_blocks(l, v, tokens));
}

// vllm.utils.mem_utils.format_gib: round(b / 2**30, 2), printed by str(): "6.51", "1.0", "4.5".
std::string py_round2(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", x);
    std::string s = buf;
    while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
    return s;
}

// The stage whose requests cost the most: for groups, the one with the largest group share
// (every stage's cost is its share x the same blocks).
size_t heaviest_group_stage(const Stages& v) {
    size_t best = 0;
    for (size_t r = 0; r < v.gs.size(); ++r)
        if (v.has_kv[r] && (!v.has_kv[best] || v.gs[r] > v.gs[best])) best = r;
    return best;
}

// DeepSeek-V4: the pages each group needs for one request (UniformTypeKVCacheSpecs.max_memory_usage_pages: the
// most any of its layers needs), in group order.
std::vector<int64_t> dsv4_group_pages(const VllmLayout& l, int64_t tokens) {
    const SpecIndex ix(l);
    std::vector<int64_t> out;
    for (const auto& g : l.groups) {
        int64_t mx = 0;
        for (int64_t id : g.layers) {
            const VllmLayerSpec* s = ix.find(id);
            if (s) mx = std::max(mx, cdiv(vllm_spec_max_memory(*s, tokens, l), s->page_size_bytes));
        }
        out.push_back(mx);
    }
    return out;
}

// _max_memory_usage_bytes_from_groups' DeepSeek-V4 branch: every group's pages reserve a whole layer-tuple slot.
int64_t dsv4_request_bytes(const VllmLayout& l, int64_t tokens) {
    int64_t pages = 0;
    for (int64_t p : dsv4_group_pages(l, tokens)) pages = sat_add(pages, p);
    return sat_mul(sat_mul(l.num_layer_tuples, l.tuple_page_bytes), pages);
}

int64_t dsv4_estimate(const VllmLayout& l, int64_t avail) {
    if (dsv4_request_bytes(l, 1) > avail) return 0;
    int64_t lo = 1, hi = l.max_model_len, est = 1;
    while (lo <= hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (dsv4_request_bytes(l, mid) <= avail) {
            est = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return est;
}

}  // namespace

std::string vllm_format_gib(int64_t bytes) {
    return py_round2(double(bytes) / double(GiB));
}

int64_t vllm_request_bytes(const VllmLayout& l, int64_t tokens) {
    if (l.groups.empty()) return 0;
    if (l.dsv4) return dsv4_request_bytes(l, tokens);
    const Stages v = stages_of(l);
    if (!l.uniform_type) return stage_request_bytes(l, v, heaviest_group_stage(v), tokens);
    int64_t mx = 0;
    for (size_t r = 0; r < v.uniform.size(); ++r) mx = std::max(mx, stage_request_bytes(l, v, r, tokens));
    return mx;
}

int64_t vllm_request_blocks(const VllmLayout& l, int64_t tokens) {
    // The scheduler's view: one spec per group (UniformTypeKVCacheSpecs collapses to its
    // first layer), blocks = sum over groups of cdiv(max_memory_usage_bytes, page_size_bytes).
    int64_t blocks = 0;
    if (l.dsv4) {
        for (int64_t p : dsv4_group_pages(l, tokens)) blocks = sat_add(blocks, p);
        return blocks;
    }
    const SpecIndex ix(l);
    for (const auto& g : l.groups) {
        const VllmLayerSpec* s0 = ix.find(g.layers.front());
        blocks = sat_add(blocks, cdiv(vllm_spec_max_memory(*s0, tokens, l), s0->page_size_bytes));
    }
    return blocks;
}

namespace {

int64_t estimate_stage(const VllmLayout& L, const Stages& v, size_t r, int64_t avail) {
    if (stage_request_bytes(L, v, r, 1) > avail) return 0;
    int64_t lo = 1, hi = L.max_model_len, est = 1;
    while (lo <= hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (stage_request_bytes(L, v, r, mid) <= avail) {
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
    if (l.dsv4) return dsv4_estimate(l, avail);
    const Stages v = stages_of(l);
    // Groups: the stage with the largest share has the shortest estimate.
    if (!l.uniform_type) return std::min(l.max_model_len, estimate_stage(l, v, heaviest_group_stage(v), avail));
    int64_t best = l.max_model_len;
    for (size_t r = 0; r < v.uniform.size(); ++r)
        if (v.has_kv[r]) best = std::min(best, estimate_stage(l, v, r, avail));
    return best;
}

int64_t vllm_num_blocks(const VllmLayout& l, int64_t avail) {
    return vllm_num_blocks(l, std::vector<int64_t>{avail});
}

namespace {

// Stage r's KV memory: one entry stands for every stage; a short list repeats its last.
int64_t stage_avail_at(const std::vector<int64_t>& avail, size_t r) {
    if (avail.empty()) return 0;
    return avail[std::min(r, avail.size() - 1)];
}

}  // namespace

std::vector<int64_t> vllm_stage_num_blocks(const VllmLayout& l, const std::vector<int64_t>& stage_avail) {
    std::vector<int64_t> nb;
    for (size_t r = 0; r < l.stage_bytes_per_block.size(); ++r) {
        const int64_t per = l.stage_bytes_per_block[r], a = stage_avail_at(stage_avail, r);
        nb.push_back(per > 0 && a > 0 ? a / per : 0);
    }
    return nb;
}

int64_t vllm_num_blocks(const VllmLayout& l, const std::vector<int64_t>& stage_avail) {
    if (l.groups.empty()) return 1;
    const std::vector<int64_t> each = vllm_stage_num_blocks(l, stage_avail);
    int64_t nb = INT64_MAX;
    for (size_t r = 0; r < each.size(); ++r)
        if (l.stage_bytes_per_block[r] > 0) nb = std::min(nb, each[r]);
    return nb == INT64_MAX ? 0 : nb;
}

std::vector<int64_t> vllm_stage_request_bytes(const VllmLayout& l, int64_t tokens) {
    const size_t pp = static_cast<size_t>(std::max<int64_t>(l.pp, 1));
    std::vector<int64_t> out(pp, 0);
    if (l.groups.empty()) return out;
    if (l.dsv4) {
        out[0] = dsv4_request_bytes(l, tokens);
        return out;
    }
    const Stages v = stages_of(l);
    for (size_t r = 0; r < pp; ++r)
        if (v.has_kv[r]) out[r] = stage_request_bytes(l, v, r, tokens);
    return out;
}

namespace {

// kvbudget's lead for vLLM's refusal: what is short and what to change (a higher --gpu-memory-utilization only where
// raising it to 1.0 could cover the shortfall).
Message no_memory(int64_t avail, int64_t headroom) {
    // avail saturates at INT64_MIN when the parts overflow; its negation must not wrap.
    const int64_t shortfall = avail == INT64_MIN ? INT64_MAX : -avail;
    if (avail <= 0 && headroom >= 0 && shortfall > headroom)
        return note("vllm_kv_pool_negative_far",
                    {{"short", format_bytes(shortfall)}, {"headroom", format_bytes(headroom)}});
    if (avail <= 0) return note("vllm_kv_pool_negative", {{"short", format_bytes(shortfall)}});
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
// block_size tokens across every attention layer of the stage, no groups, no sliding windows;
// each worker counts its own blocks (determine_num_available_blocks) and the engine keeps the fewest.
VllmCapacity v0_capacity(VllmCapacity c, const std::vector<int64_t>& avail, int64_t swap, int64_t headroom) {
    const VllmLayout& L = c.layout;
    // One pass over the layers (the sum of all pages is bounded by vllm_layout).
    std::vector<int64_t> stage(static_cast<size_t>(std::max<int64_t>(L.pp, 1)), 0);
    for (const auto& s : L.layers)
        if (s.spec_type != "MambaSpec") stage[static_cast<size_t>(s.pp_rank)] += s.real_page_size_bytes;
    const int64_t per_block = *std::max_element(stage.begin(), stage.end());
    int64_t nb = INT64_MAX;
    c.stage_num_blocks.assign(stage.size(), 0);
    for (size_t r = 0; r < stage.size(); ++r) {
        const int64_t a = stage_avail_at(avail, r);
        if (stage[r] <= 0) continue;
        c.stage_num_blocks[r] = a > 0 ? a / stage[r] : 0;
        if (c.stage_num_blocks[r] < nb) {
            nb = c.stage_num_blocks[r];
            c.limiting_stage = static_cast<int64_t>(r);
        }
    }
    if (nb == INT64_MAX) nb = 0;
    c.available_bytes = stage_avail_at(avail, static_cast<size_t>(c.limiting_stage));
    const int64_t block = L.attn_block_size, mml = L.max_model_len;
    c.num_blocks = nb;
    for (size_t r = 0; r < stage.size(); ++r) c.stage_kv_bytes.push_back(sat_mul(nb, stage[r]));
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
        c.refusal = no_memory(c.available_bytes, headroom);
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
        c.refusal = too_small(mml, c.request_bytes, c.available_bytes, c.estimated_max_model_len);
    }
    return c;
}

}  // namespace

Result<VllmCapacity> vllm_capacity(const ModelSpec& m, const VllmOptions& o, int64_t avail) {
    return vllm_capacity(m, o, std::vector<int64_t>{avail});
}

Result<VllmCapacity> vllm_capacity(const ModelSpec& m, const VllmOptions& o, const std::vector<int64_t>& stage_avail) {
    auto lay = vllm_layout(m, o);
    if (!lay) return lay.error();
    VllmCapacity c;
    c.layout = std::move(lay.value());
    const size_t n_stages = static_cast<size_t>(std::max<int64_t>(c.layout.pp, 1));
    for (size_t r = 0; r < n_stages; ++r) c.stage_available_bytes.push_back(stage_avail_at(stage_avail, r));
    int64_t avail = c.stage_available_bytes[0];
    c.available_bytes = avail;
    if (c.layout.log_format == VllmLogFormat::V0) {
        const std::vector<int64_t> each = c.stage_available_bytes;
        return v0_capacity(std::move(c), each, o.swap_space_bytes, o.utilization_headroom_bytes);
    }
    const VllmLayout& L = c.layout;
    const VllmErrorWording w = L.error_wording;
    const bool current = w == VllmErrorWording::Current;
    const bool see_docs = w != VllmErrorWording::NoDocs2f && w != VllmErrorWording::NoEstimate2f;
    // GiB as "%.2f" before format_gib, as format_gib's str(round(x, 2)) after.
    auto gib = [&](int64_t b) {
        if (w == VllmErrorWording::SeeDocsGib || w == VllmErrorWording::Current) return vllm_format_gib(b);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f", double(b) / double(GiB));
        return std::string(buf);
    };
    const std::string see = " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.";
    const int64_t mml = L.max_model_len;

    for (const auto& s : L.vllm_lines) c.log_lines.push_back(s);
    for (const auto& s : L.warnings) c.log_lines.push_back(s);
    if (L.groups.empty()) {
        // Attention-free: BlockPool still needs its null block; vLLM prints no capacity line.
        c.num_blocks = 1;
        c.fits = true;
        return c;
    }

    // vLLM's ValueError when a worker has no memory left for its cache.
    auto refuse_memory = [&]() {
        c.error_text = std::string(
                           "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                           "initializing the engine") +
                       (current ? " (this flag also controls CPU memory reservation on the CPU backend, despite its "
                                  "name)."
                                : ".") +
                       (see_docs ? see : "");
        c.refusal = no_memory(avail, o.utilization_headroom_bytes);
        return c;
    };

    // vLLM's ValueError for a request that needs `need` bytes where `avail` holds `est` tokens.
    auto refuse_request = [&](int64_t need, int64_t est) {
        c.estimated_max_model_len = est;
        std::string est_msg = est > 0 ? "Based on the available memory, the estimated maximum model length is " +
                                            std::to_string(est) + ". "
                                      : "";
        // Up to 0.13 the f-string put a space of its own after the estimate (which had none): two
        // spaces when there is no estimate.
        if (est <= 0 && (w == VllmErrorWording::NoDocs2f || w == VllmErrorWording::SeeDocs2f)) est_msg = " ";
        if (w == VllmErrorWording::NoEstimate2f) est_msg.clear();  // up to 0.8.3: never an estimate
        c.error_text = std::string("To serve at least one request with the ") + (current ? "model's" : "models's") +
                       " max seq len (" + std::to_string(mml) + "), (" + gib(need) +
                       " GiB KV cache is needed, which is larger than the available KV cache memory (" + gib(avail) +
                       " GiB). " + est_msg + "Try increasing `gpu_memory_utilization`" +
                       (current ? " (which also controls CPU memory on the CPU backend)" : "") +
                       " or decreasing `max_model_len` when initializing the engine." + (see_docs ? see : "");
        c.request_bytes = need;
        c.refusal = too_small(mml, need, avail, est);
        return c;
    };

    c.request_bytes = vllm_request_bytes(L, mml);
    // 0.14 / 0.15 checked the request on one spec of all the model's layers (VllmRelease).
    std::optional<VllmLayout> whole;
    if (o.pp_check_all_layers && L.pp > 1) {
        VllmOptions one = o;
        one.pipeline_parallel_size = 1;
        one.pp_layer_partition.clear();
        if (auto w1 = vllm_layout(m, one)) whole = std::move(w1.value());
    }
    const Stages stages = stages_of(L);
    const int64_t blocks = L.uniform_type ? 0 : group_blocks(L, stages, mml);  // the same on every stage
    // Every worker checks its own memory against its own layers, in rank order: the first that falls
    // short refuses, with its own figures.
    for (size_t r = 0; r < stages.has_kv.size(); ++r) {
        if (!stages.has_kv[r]) continue;
        avail = c.available_bytes = c.stage_available_bytes[r];
        c.limiting_stage = static_cast<int64_t>(r);
        if (avail <= 0) return refuse_memory();
        if (whole) {
            const int64_t need = vllm_request_bytes(*whole, mml);
            if (need > avail) return refuse_request(need, vllm_estimate_max_model_len(*whole, avail));
        }
        if (L.dsv4) {
            const int64_t need = dsv4_request_bytes(L, mml);
            if (need <= avail) continue;
            return refuse_request(need, dsv4_estimate(L, avail));
        }
        const int64_t need = L.uniform_type ? stage_request_bytes(L, stages, r, mml)
                                            : sat_mul(sat_mul(stages.gs[r], L.page_size_bytes), blocks);
        if (need <= avail) continue;
        // estimate_max_model_len: binary search over [1, max_model_len] on the failing stage.
        return refuse_request(need, estimate_stage(L, stages, r, avail));
    }

    c.stage_num_blocks = vllm_stage_num_blocks(L, c.stage_available_bytes);
    int64_t nb = INT64_MAX;
    for (size_t r = 0; r < c.stage_num_blocks.size(); ++r)
        if (L.stage_bytes_per_block[r] > 0 && c.stage_num_blocks[r] < nb) {
            nb = c.stage_num_blocks[r];
            c.limiting_stage = static_cast<int64_t>(r);
        }
    if (nb == INT64_MAX) nb = 0;
    c.available_bytes = c.stage_available_bytes[static_cast<size_t>(c.limiting_stage)];
    // Each worker's tensors shrink to the fewest blocks ("shrink tensor size proportionally").
    for (int64_t per : L.stage_bytes_per_block) c.stage_kv_bytes.push_back(sat_mul(nb, per));
    c.num_blocks = nb;
    c.usable_blocks = nb > 0 ? nb - 1 : 0;
    c.blocks_per_request = vllm_request_blocks(L, mml);
    c.fits = true;
    c.max_concurrency = c.blocks_per_request > 0 ? double(nb) / double(c.blocks_per_request) : 0.0;
    if (L.dsv4 && !L.concurrency_group_blocks) {
        // Before PR #48317 (0.27.0): cdiv(the groups' bytes for one request, the first group's page bytes),
        // both scaled by the largest group's layer count, which cancels.
        const std::vector<int64_t> pages = dsv4_group_pages(L, mml);
        int64_t bytes = 0;
        for (size_t g = 0; g < pages.size(); ++g)
            bytes = sat_add(bytes, sat_mul(pages[g], L.groups[g].page_size_bytes));
        const int64_t per = cdiv(bytes, L.groups[0].page_size_bytes);
        c.max_concurrency = per > 0 ? double(nb) / double(per) : 0.0;
    }
    // Current: int(max_concurrency * max_model_len), in Python float arithmetic.
    // Python's int() of a float never wraps; a C++ cast of one at or above 2^63 is undefined
    // (it printed -9,223,372,036,854,775,808 tokens): saturate instead.
    const double cur = c.max_concurrency * double(mml);
    const int64_t cur_tokens = cur >= 9.223372036854775807e18 ? INT64_MAX : static_cast<int64_t>(cur);
    c.legacy_tokens = sat_mul(nb / static_cast<int64_t>(L.groups.size()), L.min_block_size);
    // N = int(X * M) from 0.20.1 (Split and Current), num_blocks // groups x block before.
    c.tokens = L.log_format != VllmLogFormat::Legacy ? cur_tokens : c.legacy_tokens;
    const bool one_line = L.one_line_capacity;

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
