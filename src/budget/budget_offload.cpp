// llama.cpp partial offload (-ngl N), placed the way llama_model_base::load_tensors places
// it in current builds: the output layer is slot n_layer of n_layer + 1, and
// i_gpu_start = max(n_layer + 1 - N, 0), so -ngl N puts the output layer and the last
// N - 1 repeating layers on the GPU (-ngl n_layer leaves block 0 on the CPU; only
// n_layer + 1, or the usual 99, is full offload). The input layer (token_embd) always
// stays on the CPU ("very little benefit to offloading the input layer"). The KV cache of
// a layer lives on that layer's device unless --no-kv-offload (llama_kv_cache:
// offload ? model.dev_layer(il) : cpu), in every context: an MTP draft context's cache of
// the nextn layers (the last of block_count, dev_layer assigned over all n_layer) sits
// with those layers' weights, on the device of the target's last layers. Builds before 2026 counted from n_layer - N
// and moved the output layer only at N > n_layer.
#include <algorithm>

#include "base/arith.h"
#include "budget/budget_steps.h"
#include "model/weights.h"

namespace kvb::budget_steps {

namespace {
// The nextn layers llama.cpp does not load: the last nextn_layers of block_count, unless drafting with them.
bool skipped_nextn(const ModelSpec& m, size_t i, bool mtp_draft) {
    const int64_t n = m.gguf ? m.gguf->nextn_layers : 0;
    return !mtp_draft && n > 0 && i < m.layers.size() && int64_t(i) >= int64_t(m.layers.size()) - n;
}
}  // namespace

int64_t llamacpp_unloaded_nextn_bytes(const ModelSpec& m, bool mtp_draft) {
    int64_t bytes = 0;
    if (!m.gguf) return 0;
    for (size_t i = 0; i < m.gguf->block_bytes.size(); ++i)
        if (skipped_nextn(m, i, mtp_draft)) bytes = sat_add(bytes, m.gguf->block_bytes[i]);
    return bytes;
}

Result<LayerWeights> llamacpp_layer_weights(const ModelSpec& m, const WeightBytes& w, bool mtp_draft) {
    LayerWeights lw;
    const size_t n_layer = m.layers.size();
    lw.layers.assign(n_layer, 0);
    if (m.gguf && w.format.name == "gguf") {
        // The file's own tensors, exactly, less the nextn layers llama.cpp skips.
        const GgufWeights& g = *m.gguf;
        for (size_t i = 0; i < g.block_bytes.size(); ++i) {
            if (skipped_nextn(m, i, mtp_draft)) continue;
            if (i < n_layer)
                lw.layers[i] = g.block_bytes[i];
            else
                lw.input = sat_add(lw.input, g.block_bytes[i]);  // no such layer in llama.cpp's n_layer
        }
        lw.input = sat_add(lw.input, g.input_bytes);
        lw.output = g.output_bytes;
        lw.ffn = g.block_ffn;
        lw.ffn.resize(n_layer);
        for (size_t i = 0; i < n_layer; ++i)
            if (skipped_nextn(m, i, mtp_draft)) lw.ffn[i] = {};
        if (g.tied_output) lw.output = sat_add(lw.output, g.token_embd_bytes);
        return lw;
    }
    // A config: each tensor group's bytes in the format (weight_bytes' per-tensor types), or
    // without them the format's bytes shared out by parameters. The split estimates a GGUF's
    // tensors (a backend's padding aside); the total stays exact.
    auto pc = count_params(m);
    if (!pc) return pc.error();
    lw.estimated = true;
    const double total = double(std::max<int64_t>(1, pc->total));
    const double per_param = double(w.bytes) / total;
    const bool exact = w.tensor_bytes.size() == pc->tensors.size();
    auto bytes_of = [&](size_t i) {
        return exact ? w.tensor_bytes[i] : static_cast<int64_t>(double(pc->tensors[i].params()) * per_param);
    };
    // The output layer is what follows the blocks (output and output_norm, as a GGUF's "output*"
    // tensors), with a copy of the token embeddings when they are tied.
    int64_t placed = 0, embd = 0, tail = 0;
    for (size_t i = 0; i < pc->tensors.size(); ++i) {
        const TensorGroup& t = pc->tensors[i];
        if (t.role == TensorRole::TokenEmbedding) embd = sat_add(embd, bytes_of(i));
        if (t.layer == -2) tail = sat_add(tail, bytes_of(i));
        if (t.layer < 0 || static_cast<size_t>(t.layer) >= n_layer) continue;
        const int64_t b = bytes_of(i);
        lw.layers[static_cast<size_t>(t.layer)] = sat_add(lw.layers[static_cast<size_t>(t.layer)], b);
        placed = sat_add(placed, b);
    }
    lw.output = pc->output > 0 ? tail : sat_add(tail, embd);
    // What is neither a layer nor the output (embeddings, learned positions) is the input layer.
    lw.input = std::max<int64_t>(0, w.bytes - placed - tail);
    // A MoE's FFN tensors by the parts --fit's patterns match, from the config's expert
    // counts and FFN sizes at their bytes as above (the GGUF's tensor names are what
    // llama.cpp matches; a config only lets us estimate their bytes).
    if (m.dims.num_experts > 0) {
        lw.ffn.assign(n_layer, GgufWeights::BlockFfn{});
        for (size_t i = 0; i < pc->tensors.size(); ++i) {
            const TensorGroup& t = pc->tensors[i];
            if (t.layer < 0 || static_cast<size_t>(t.layer) >= n_layer) continue;
            const int64_t b = bytes_of(i);
            GgufWeights::BlockFfn& f = lw.ffn[static_cast<size_t>(t.layer)];
            const bool expert =
                t.role == TensorRole::ExpertGate || t.role == TensorRole::ExpertUp || t.role == TensorRole::ExpertDown;
            const bool dense =
                t.role == TensorRole::FfnGate || t.role == TensorRole::FfnUp || t.role == TensorRole::FfnDown;
            if (expert) f.exps = sat_add(f.exps, b);
            if (expert || dense || t.role == TensorRole::Router) f.ffn = sat_add(f.ffn, b);  // ffn_gate_inp too
            if ((expert || dense) && t.role != TensorRole::ExpertUp && t.role != TensorRole::FfnUp)
                f.no_up = sat_add(f.no_up, b);
            if (t.role == TensorRole::Router) f.no_up = sat_add(f.no_up, b);
            if (t.role == TensorRole::ExpertDown || t.role == TensorRole::FfnDown) f.down = sat_add(f.down, b);
        }
    }
    return lw;
}

RangeUse llamacpp_range(const ModelSpec& m, const LayerWeights& lw, int64_t first, const MoeSplit& s,
                        FunctionRef<int64_t(int64_t)> kv_suffix) {
    RangeUse u;
    const auto n_layer = static_cast<int64_t>(m.layers.size());
    const int64_t end = std::min(first + s.n_layer, n_layer + 1);
    const int64_t first_part = end - s.n_part;
    for (int64_t i = std::max<int64_t>(first, 0); i < end; ++i) {
        if (i == n_layer) {
            u.weights = sat_add(u.weights, lw.output);
            continue;
        }
        u.weights = sat_add(u.weights, lw.layers[static_cast<size_t>(i)]);
        if (i < first_part || lw.ffn.empty()) continue;
        // set_ngl_tensor_split_tbo: the first partial slot loses its `overflow` fraction, the
        // later ones their routed experts.
        const GgufWeights::BlockFfn& f = lw.ffn[static_cast<size_t>(i)];
        int64_t moved = f.exps;
        if (i == first_part) {
            if (s.overflow == FitFraction::Attn) moved = f.ffn;
            if (s.overflow == FitFraction::Up) moved = f.no_up;
            if (s.overflow == FitFraction::Gate) moved = f.down;
            u.spill = moved;
        }
        u.weights = sat_sub(u.weights, moved);
    }
    const int64_t lo = std::clamp<int64_t>(first, 0, n_layer), hi = std::clamp<int64_t>(end, 0, n_layer);
    if (hi > lo) u.kv = sat_sub(kv_suffix(lo), kv_suffix(hi));
    return u;
}

Result<Placement> llamacpp_place(const ModelSpec& m, const LayerWeights& lw, const LlamaOptions& o, int64_t ngl,
                                 bool kv_offload, int64_t kv_total, const MoeSplit* moe, const KvFrom& draft_kv_from) {
    Placement p;
    const auto n_layer = static_cast<int64_t>(m.layers.size());
    p.n_gpu_layers = std::clamp<int64_t>(ngl, 0, n_layer + 1);
    const int64_t first_gpu = n_layer + 1 - p.n_gpu_layers;  // slot n_layer is the output layer
    p.output_on_gpu = p.n_gpu_layers >= 1;
    for (int64_t i = 0; i < n_layer; ++i) {
        const int64_t b = lw.layers[static_cast<size_t>(i)];
        const int64_t e = lw.ffn.empty() ? 0 : lw.ffn[static_cast<size_t>(i)].exps;
        p.expert_weights = sat_add(p.expert_weights, e);
        if (i >= first_gpu) {
            p.gpu_weights = sat_add(p.gpu_weights, b);
        } else {
            p.cpu_weights = sat_add(p.cpu_weights, b);
            p.cpu_expert_weights = sat_add(p.cpu_expert_weights, e);
        }
    }
    if (moe && !lw.ffn.empty()) {
        // set_ngl_tensor_split_tbo (common/fit.cpp): the partial slots are the last n_part of the
        // GPU's; slot n_layer (the output layer) matches no pattern.
        const int64_t first_part = first_gpu + std::max<int64_t>(0, p.n_gpu_layers - moe->n_part);
        for (int64_t i = std::max(first_gpu, first_part); i < n_layer; ++i) {
            const GgufWeights::BlockFfn& f = lw.ffn[static_cast<size_t>(i)];
            int64_t moved = f.exps;
            if (i == first_part) {
                if (moe->overflow == FitFraction::Attn) moved = f.ffn;
                if (moe->overflow == FitFraction::Up) moved = f.no_up;
                if (moe->overflow == FitFraction::Gate) moved = f.down;
            }
            p.gpu_weights = sat_sub(p.gpu_weights, moved);
            p.cpu_weights = sat_add(p.cpu_weights, moved);
            // A partial layer's FFN share holds its routed experts first (the shared ones are a few percent).
            p.cpu_expert_weights = sat_add(p.cpu_expert_weights, std::min(moved, f.exps));
        }
    }
    p.cpu_weights = sat_add(p.cpu_weights, lw.input);
    if (p.output_on_gpu)
        p.gpu_weights = sat_add(p.gpu_weights, lw.output);
    else
        p.cpu_weights = sat_add(p.cpu_weights, lw.output);
    // The offloaded layers' cache: the same layout over those layers alone (every byte of
    // llama.cpp's cache is per layer: cells x that layer's K and V rows, or its state).
    int64_t gpu_kv = 0;
    const bool cached = std::any_of(m.layers.begin() + std::min(first_gpu, n_layer), m.layers.end(),
                                    [](const Layer& l) { return l.kind != LayerKind::None; });
    if (kv_offload && first_gpu == 0) {
        gpu_kv = kv_total;
    } else if (kv_offload) {
        if (cached) {  // MTP / no-op layers alone hold no cells of the target's cache
            ModelSpec sub = m;
            sub.layers.assign(m.layers.begin() + first_gpu, m.layers.end());
            auto l = llamacpp_layout(sub, o);
            if (!l) return l.error();
            gpu_kv = l->total_bytes;
        }
        // An MTP draft context caches the nextn layers, the model's last: on the GPU with them.
        if (draft_kv_from) {
            auto d = draft_kv_from(first_gpu);
            if (!d) return d.error();
            gpu_kv = sat_add(gpu_kv, d.value());
        }
    }
    p.gpu_kv = gpu_kv;
    p.cpu_kv = std::max<int64_t>(0, kv_total - gpu_kv);
    return p;
}

}  // namespace kvb::budget_steps
