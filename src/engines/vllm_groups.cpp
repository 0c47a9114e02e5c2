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

}  // namespace

Result<bool> group_layers(const Plan& p, VllmLayout& L) {
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
