// vLLM's KV-cache groups (kv_cache_utils.get_kv_cache_groups): layers with one spec
// share a group; one spec type with different sizes becomes UniformTypeKVCacheSpecs;
// otherwise page sizes are unified (unify_kv_cache_spec_page_size) and same-spec layers
// are split into groups of one size, padded. Then what a block id costs per pipeline stage.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>

#include "base/arith.h"
#include "engines/vllm_steps.h"

namespace kvb::vllm_steps {
namespace {

// Which KVCacheSpec class a layer ends up as; the order of fields is what
// dataclass equality compares in vLLM.
std::tuple<const std::string&, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t> spec_key(
    const VllmLayerSpec& s) {
    // FullAttentionSpec.merge accepts layers that differ only in the sliding window / chunk they
    // remember (what --disable-hybrid-kv-cache-manager produces), so those compare equal here.
    const int64_t window = s.spec_type == "FullAttentionSpec" ? 0 : s.window;
    return {s.spec_type, s.block_size,      s.num_kv_heads,
            s.head_size, s.head_size_v,     s.dtype_bytes,
            window,      s.page_size_bytes, s.state_conv_bytes + (s.state_ssm_bytes << 1)};
}

bool same_spec(const VllmLayerSpec& a, const VllmLayerSpec& b) {
    return spec_key(a) == spec_key(b);
}
using OwnedKey = std::tuple<std::string, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

bool is_full_type(const VllmLayerSpec& s) {
    // MLAAttentionSpec subclasses FullAttentionSpec, so isinstance() groups them.
    return s.spec_type == "FullAttentionSpec" || s.spec_type == "MLAAttentionSpec";
}

bool all_same(const std::vector<VllmLayerSpec>& specs) {
    for (const auto& s : specs)
        if (!same_spec(s, specs[0])) return false;
    return true;
}

// One spec type (full / MLA counted as one) and one block size: UniformTypeKVCacheSpecs.
bool uniform_type(const std::vector<VllmLayerSpec>& specs) {
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
}

VllmGroup group_like(const VllmLayerSpec& s) {
    VllmGroup g;
    g.spec_type = s.spec_type;
    g.kind = s.kind;
    g.block_size = s.block_size;
    g.page_size_bytes = s.page_size_bytes;
    g.window = s.window;
    return g;
}

void one_group(VllmLayout& L) {
    VllmGroup g = group_like(L.layers[0]);
    for (const auto& s : L.layers) g.layers.push_back(s.layer);
    L.page_size_bytes = g.page_size_bytes;
    L.group_size = static_cast<int64_t>(g.layers.size());
    L.groups.push_back(std::move(g));
}

// UniformTypeKVCacheSpecs: one group, per-layer page sizes summed per block.
void uniform_type_group(VllmLayout& L) {
    L.uniform_type = true;
    VllmGroup g = group_like(L.layers[0]);
    g.spec_type = "UniformTypeKVCacheSpecs";
    g.page_size_bytes = 0;
    for (const auto& s : L.layers) {
        g.layers.push_back(s.layer);
        // Saturating: vllm_layout refuses a sum of pages past int64 once grouping is done.
        g.page_size_bytes = sat_add(g.page_size_bytes, s.page_size_bytes);
    }
    L.group_size = static_cast<int64_t>(g.layers.size());
    L.groups.push_back(std::move(g));
}

// unify_kv_cache_spec_page_size: grow the block of smaller pages to the largest page.
Result<bool> unify_page_sizes(const Plan& p, VllmLayout& L) {
    int64_t max_page = 0;
    for (const auto& s : L.layers) max_page = std::max(max_page, s.page_size_bytes);
    for (auto& s : L.layers) {
        if (s.page_size_bytes == max_page) continue;
        if (max_page % s.page_size_bytes != 0) return refuse(note("vllm_page_not_divisible"));
        const int64_t ratio = max_page / s.page_size_bytes;
        // A state spec's block stands for max_model_len tokens (up to 2^40) and its page may be
        // a few bytes: the grown block can pass int64.
        if (mul_overflows(s.block_size, ratio, &s.block_size) ||
            mul_overflows(s.real_page_size_bytes, ratio, &s.real_page_size_bytes))
            return overflow(p.model);
        s.page_size_bytes = max_page;
    }
    L.page_size_bytes = max_page;
    return true;
}

// Identical specs in order of first appearance, split into groups of one size with
// "Add N padding layers" warnings where a set does not divide evenly.
void padded_groups(VllmLayout& L) {
    const std::vector<VllmLayerSpec>& specs = L.layers;
    std::vector<std::vector<int64_t>> same;  // indices into specs
    // Spec -> its set, so that many distinct specs (a per-layer head list) stay near-linear.
    std::map<OwnedKey, size_t> where;
    for (int64_t i = 0; i < static_cast<int64_t>(specs.size()); ++i) {
        const auto k = spec_key(specs[i]);
        OwnedKey key{std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), std::get<4>(k),
                     std::get<5>(k), std::get<6>(k), std::get<7>(k), std::get<8>(k)};
        auto [it, fresh] = where.emplace(std::move(key), same.size());
        if (fresh)
            same.push_back({i});
        else
            same[it->second].push_back(i);
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
            VllmGroup g = group_like(specs[v[0]]);
            for (int64_t k = i; k < n; k += ng) g.layers.push_back(specs[v[k]].layer);
            L.groups.push_back(std::move(g));
        }
    }
}

// UniformTypeKVCacheSpecs.get_num_layer_tuples: how many layers share the most common page size.
int64_t layer_tuples(const std::vector<int64_t>& pages) {
    std::map<int64_t, int64_t> n;
    int64_t best = 0;
    for (int64_t b : pages) best = std::max(best, ++n[b]);
    return best;
}

// kv_cache_utils._approximate_gcd: the d in [lower, max] that pads the counts least (ties: the larger d).
int64_t approximate_gcd(const std::vector<int64_t>& v, int64_t lower) {
    const int64_t hi = *std::max_element(v.begin(), v.end());
    const int64_t lo = std::max<int64_t>(1, lower);
    if (lo > hi) return lo;
    int64_t best_d = lo, best_pad = -1;
    for (int64_t d = lo; d <= hi; ++d) {
        int64_t pad = 0;
        for (int64_t x : v) pad += (d - x % d) % d;
        if (best_pad < 0 || pad < best_pad || (pad == best_pad && d > best_d)) {
            best_pad = pad;
            best_d = d;
        }
    }
    return best_d;
}

// DeepSeek-V4 (kv_cache_utils.py, 0.20 to 0.27: group_and_unify_kv_cache_specs, then
// _get_kv_cache_groups_uniform_groups): the MLAAttentionSpec layers (compressed latents and indexer keys) form
// the first group; the SlidingWindowMLASpec layers are bucketed by (block_size, sliding_window) - the window
// caches, the ratio-4 compressor states, the ratio-128 ones - each bucket's pages padded up to the nearest
// page size of the first group and split into sub-groups of num_layer_tuples layer tuples, taking
// tuples[i::n] as _get_kv_cache_groups_uniform_page_size does.
Result<bool> dsv4_groups(VllmLayout& L) {
    std::vector<size_t> mla;
    std::vector<std::pair<std::pair<int64_t, int64_t>, std::vector<size_t>>> buckets;
    for (size_t i = 0; i < L.layers.size(); ++i) {
        const VllmLayerSpec& s = L.layers[i];
        if (s.spec_type == "MLAAttentionSpec") {
            mla.push_back(i);
            continue;
        }
        const std::pair<int64_t, int64_t> key{s.block_size, s.window};
        auto it = std::find_if(buckets.begin(), buckets.end(), [&](const auto& b) { return b.first == key; });
        if (it == buckets.end()) {
            buckets.push_back({key, {}});
            it = buckets.end() - 1;
        }
        it->second.push_back(i);
    }
    if (mla.empty()) return make_error("unsupported", note("vllm_dsv4_layout"));
    std::vector<int64_t> mla_pages, sizes;
    for (size_t i : mla) {
        mla_pages.push_back(L.layers[i].page_size_bytes);
        if (std::find(sizes.begin(), sizes.end(), L.layers[i].page_size_bytes) == sizes.end())
            sizes.push_back(L.layers[i].page_size_bytes);
    }
    std::vector<int64_t> tuples = {layer_tuples(mla_pages)};
    for (const auto& b : buckets) {
        std::vector<int64_t> pages;
        for (size_t i : b.second) pages.push_back(L.layers[i].page_size_bytes);
        tuples.push_back(layer_tuples(pages));
    }
    const int64_t n_tuples = approximate_gcd(tuples, tuples[0]);

    auto add_group = [&](const std::vector<size_t>& members) {
        VllmGroup g = group_like(L.layers[members[0]]);
        g.spec_type = "UniformTypeKVCacheSpecs";
        g.page_size_bytes = 0;
        for (size_t i : members) {
            g.layers.push_back(L.layers[i].layer);
            g.page_size_bytes += L.layers[i].page_size_bytes;
        }
        L.groups.push_back(std::move(g));
    };
    add_group(mla);
    for (const auto& b : buckets) {
        // Pad each page to the nearest size of the first group at or above it (set as page_size_padded).
        std::vector<std::pair<int64_t, std::vector<size_t>>> per_size;
        for (size_t i : b.second) {
            VllmLayerSpec& s = L.layers[i];
            int64_t cand = INT64_MAX;
            for (int64_t x : sizes)
                if (x >= s.page_size_bytes) cand = std::min(cand, x);
            if (cand == INT64_MAX) return make_error("unsupported", note("vllm_dsv4_layout"));
            s.page_size_bytes = cand;
            auto it = std::find_if(per_size.begin(), per_size.end(), [&](const auto& e) { return e.first == cand; });
            if (it == per_size.end()) {
                per_size.push_back({cand, {}});
                it = per_size.end() - 1;
            }
            it->second.push_back(i);
        }
        // vLLM asserts that every padded size holds as many layers.
        const size_t per = per_size[0].second.size();
        for (const auto& e : per_size)
            if (e.second.size() != per) return make_error("unsupported", note("vllm_dsv4_layout"));
        const int64_t n_groups = cdiv(static_cast<int64_t>(per), n_tuples);
        for (int64_t g = 0; g < n_groups; ++g) {
            std::vector<size_t> members;
            for (size_t t = static_cast<size_t>(g); t < per; t += static_cast<size_t>(n_groups))
                for (const auto& e : per_size) members.push_back(e.second[t]);
            add_group(members);
        }
    }
    // _get_kv_cache_config_deepseek_v4: num_blocks = available // (sum of the first group's page sizes x the
    // longest page-size bucket of any group).
    std::map<int64_t, int64_t> page_of;
    for (const VllmLayerSpec& s : L.layers) page_of[s.layer] = s.page_size_bytes;
    int64_t longest = 0;
    for (const VllmGroup& g : L.groups) {
        std::vector<int64_t> pages;
        for (int64_t id : g.layers) pages.push_back(page_of[id]);
        longest = std::max(longest, layer_tuples(pages));
    }
    L.dsv4 = true;
    L.num_layer_tuples = longest;
    L.tuple_page_bytes = 0;
    for (int64_t x : sizes) L.tuple_page_bytes += x;
    L.page_size_bytes = 0;
    L.group_size = 0;
    for (const VllmGroup& g : L.groups) L.group_size = std::max<int64_t>(L.group_size, g.layers.size());
    return true;
}

}  // namespace

Result<bool> group_layers(const Plan& p, VllmLayout& L) {
    if (p.dsv4) {
        if (p.pp > 1) return make_error("unsupported", note("vllm_dsv4_pp"));
        auto ok = dsv4_groups(L);
        if (!ok) return ok;
        L.min_block_size = INT64_MAX;
        for (const auto& g : L.groups) L.min_block_size = std::min(L.min_block_size, g.block_size);
        return true;
    }
    const bool same = all_same(L.layers);
    const bool one_type = !same && uniform_type(L.layers);
    // --disable-hybrid-kv-cache-manager with mamba layers cannot be unified.
    if (p.disable_hybrid && !same && !one_type && p.has_state) return refuse(note("vllm_hybrid_off_mixed"));
    if (same) {
        one_group(L);
    } else if (one_type) {
        uniform_type_group(L);
    } else {
        auto ok = unify_page_sizes(p, L);
        if (!ok) return ok;
        padded_groups(L);
    }
    L.min_block_size = INT64_MAX;
    for (const auto& g : L.groups) L.min_block_size = std::min(L.min_block_size, g.block_size);
    return true;
}

void stage_costs(const Plan& p, VllmLayout& L) {
    if (L.dsv4) {
        const int64_t b = sat_mul(L.tuple_page_bytes, L.num_layer_tuples);
        L.stage_bytes_per_block.assign(1, b);
        L.bytes_per_block = b;
        return;
    }
    // One pass over the layers for all stages (a pass per stage was O(pp x layers)).
    const size_t pp = static_cast<size_t>(p.pp);
    std::vector<int64_t> bytes(pp, 0);
    if (L.uniform_type) {
        for (const auto& s : L.layers) bytes[static_cast<size_t>(s.pp_rank)] += s.page_size_bytes;
    } else {
        std::vector<int64_t> n(pp, 0), gs(pp, 0);
        std::vector<size_t> touched;
        for (const auto& g : L.groups) {
            touched.clear();
            for (int64_t li : g.layers) {
                const size_t r =
                    static_cast<size_t>(p.rank[static_cast<size_t>(li >= p.n_layers ? li - p.n_layers : li)]);
                if (n[r]++ == 0) touched.push_back(r);
            }
            for (size_t r : touched) {
                gs[r] = std::max(gs[r], n[r]);
                n[r] = 0;
            }
        }
        for (size_t r = 0; r < pp; ++r) bytes[r] = gs[r] * L.page_size_bytes;
    }
    for (int64_t b : bytes) {
        L.stage_bytes_per_block.push_back(b);
        L.bytes_per_block = std::max(L.bytes_per_block, b);
    }
}

}  // namespace kvb::vllm_steps
