// llama.cpp's automatic fitting of -c and -ngl to free device memory, as
// common_params_fit_impl (common/fit.cpp; llama_params_fit_impl in src/llama.cpp before the
// 2026 move to common/) runs it when llama-server / llama-cli start with --fit on, the
// default since late 2025:
//   1. Project device use with the asked parameters (no -c: the training context; no -ngl:
//      every layer). If free - used >= the -fitt margin (1024 MiB), change nothing.
//   2. No -c and a training context above -fitc (4096): measure use at -fitc and, if the
//      target free - margin lies above it, interpolate linearly between the two contexts,
//      rounded down to a multiple of 256 ("entire model can be fit by reducing context":
//      one device stops here). Otherwise keep -fitc and go on.
//   3. -ngl given: stop ("n_gpu_layers already set by user", a warning; the load goes on
//      as asked). Else fill layers back to front by false position: the most of the
//      n_layer + 1 slots (the output layer first) whose use stays within the target.
// MoE (read from a GGUF, whose tensor names the patterns need), one device: after step 2
// the surplus with every routed expert in system RAM is measured; step 3 fills "dense-only"
// slots back to front (set_ngl_tensor_split_tbo keeps the lowest GPU slot whole and counts
// the output slot among the partial ones); with a surplus, step 4 turns partial slots back
// into whole ones front to back and gives the first partial layer the UP, then GATE, else
// ATTN fraction (get_overflow_pattern). Several devices, dense: per-device targets, the
// context reduced over their sum less (nd + 1) / 2 layers' weights, then each device from the
// last filled by the same false position; -ts carries the counts. Not predicted: a MoE on
// several devices (partial layers overflow into the next device there).
// Since ggml-org/llama.cpp#27496 the starting context with -np N and no unified cache is
// N x the training context.
// The lines are printed as common/fit.cpp prints them (MiB = bytes / 2^20, truncated).
#include <algorithm>
#include <cstdio>
#include <string>

#include "base/arith.h"
#include "base/units.h"
#include "budget/budget_steps.h"

namespace kvb::budget_steps {

namespace {

const char* const kImpl = "common_params_fit_impl: ";
const char* const kOuter = "common_fit_params: ";

std::string mib(int64_t bytes) {
    return std::to_string(bytes / MiB);
}

// The lines common_params_fit_impl / common_fit_params print at the context step and
// at a user-set -ngl, shared by the one-device and the several-device paths.
std::string ctx_reduced_line(int64_t from, int64_t to, int64_t less_bytes) {
    return kImpl + std::string("context size reduced from ") + std::to_string(from) + " to " + std::to_string(to) +
           " -> need " + mib(less_bytes) + " MiB less memory in total";
}
std::string ctx_unchanged_line(int64_t train, int64_t min) {
    return kImpl + std::string("default model context size is ") + std::to_string(train) +
           " which is <= the min. context size of " + std::to_string(min) + " -> no change";
}
std::string ngl_abort_line(int64_t ngl) {
    return kOuter + std::string("failed to fit params to free device memory: n_gpu_layers already set by user to ") +
           std::to_string(ngl) + ", abort";
}

// -ot overrides that reproduce a split on one device (set_ngl_tensor_split_tbo and
// get_overflow_pattern in common/fit.cpp): the first partial layer loses its `overflow`
// fraction, the later ones their routed experts; slot n_layer is the output layer.
std::string moe_overrides(const MoeSplit& s, int64_t n_layer) {
    const int64_t first = n_layer + 1 - s.n_layer + (s.n_layer - s.n_part);
    std::string out, rest;
    for (int64_t il = first; il < n_layer; ++il) {
        if (il == first && s.overflow != FitFraction::Moe) {
            const char* frac = s.overflow == FitFraction::Attn ? "ffn_(gate|up|gate_up|down).*"
                               : s.overflow == FitFraction::Up ? "ffn_(gate|gate_up|down).*"
                                                               : "ffn_down.*";
            out += " -ot \"blk\\." + std::to_string(il) + "\\." + frac + "=CPU\"";
            continue;
        }
        rest += (rest.empty() ? "" : "|") + std::to_string(il);
    }
    if (!rest.empty()) out += " -ot \"blk\\.(" + rest + ")\\.ffn_(up|down|gate_up|gate)_(ch|)exps=CPU\"";
    return out;
}

// The false position of common_params_fit_impl: from a fitting `lo` toward a `hi` over
// the target, stepping by the interpolated share of the headroom, at least one and short of
// `hi`; returns the last fitting split. `count` is what the search moves (slots or full ones).
template <typename Make, typename Count>
MoeSplit false_position(MoeSplit lo, int64_t& mem_lo, MoeSplit hi, int64_t mem_hi, int64_t target,
                        const std::function<int64_t(const MoeSplit&)>& mem_of, Make make, Count count) {
    int64_t delta = count(hi) - count(lo);
    while (delta > 1) {
        const int64_t headroom = mem_hi - mem_lo;
        // A negative share wraps to a huge uint32_t there, i.e. the largest step.
        int64_t step = headroom > 0 ? delta * (target - mem_lo) / headroom : delta - 1;
        if (step < 0) step = delta - 1;
        step = std::min(std::max<int64_t>(step, 1), delta - 1);
        const MoeSplit test = make(lo, step);
        const int64_t mem = mem_of(test);
        if (mem <= target) {
            lo = test;
            mem_lo = mem;
        } else {
            hi = test;
            mem_hi = mem;
        }
        delta = count(hi) - count(lo);
    }
    return lo;
}

std::string dev_line(const char* fmt, int64_t id, int64_t a1, int64_t a2, int64_t a3, int64_t a4 = 0) {
    char line[200];
    std::snprintf(line, sizeof line, fmt, kImpl, static_cast<long long>(id), static_cast<long long>(a1),
                  static_cast<long long>(a2), static_cast<long long>(a3), static_cast<long long>(a4));
    return line;
}

// Several identical devices, a dense model (common_params_fit_impl, nd > 1): per-device
// targets, the context reduced over their sum less a margin for whole layers, then layers
// filled back to front, the last device first (it holds the output layer), each device as
// many as stay within its target; -ts carries the counts (set_ngl_tensor_split_tbo).
LlamaFit fit_devices(const FitArgs& a, const DeviceUse& use, LlamaFit f) {
    auto& out = f.log_lines;
    const int64_t nd = a.n_devices, all_layers = a.n_layer + 1;
    const int64_t target = sat_sub(a.free_bytes, a.target_bytes);
    f.n_ctx = a.n_ctx_user > 0 ? a.n_ctx_user : a.n_ctx_train;
    const int64_t ngl0 = a.ngl_user >= 0 ? std::min(a.ngl_user, all_layers) : all_layers;
    // Each device's use at a split (slots per device, the last device's at the top).
    auto mems = [&](int64_t n_ctx, const std::vector<int64_t>& counts) {
        std::vector<int64_t> m(static_cast<size_t>(nd));
        int64_t above = 0;
        for (int64_t id = nd - 1; id >= 0; --id) {
            m[static_cast<size_t>(id)] = use(n_ctx, above, counts[static_cast<size_t>(id)]).total;
            above += counts[static_cast<size_t>(id)];
        }
        return m;
    };
    auto sum = [](const std::vector<int64_t>& v) {
        int64_t t = 0;
        for (int64_t x : v) t = sat_add(t, x);
        return t;
    };
    // Step 1: the default split of the asked layers.
    const std::vector<int64_t> split0 = llamacpp_even_split(nd, ngl0);
    const std::vector<int64_t> used0 = mems(f.n_ctx, split0);
    const int64_t sum_used = sum(used0), sum_free = sat_mul(a.free_bytes, nd);
    f.projected_bytes = sum_used;
    out.push_back(kImpl + std::string("projected memory use with initial parameters [MiB]:"));
    bool short_somewhere = false;
    for (int64_t id = 0; id < nd; ++id) {
        const int64_t u = used0[static_cast<size_t>(id)];
        out.push_back(dev_line("%s  - GPU%lld: %6lld total, %6lld used, %6lld free vs. target of %6lld", id,
                               a.total_bytes / MiB, u / MiB, sat_sub(a.free_bytes, u) / MiB, a.target_bytes / MiB));
        short_somewhere = short_somewhere || sat_sub(a.free_bytes, u) < a.target_bytes;
    }
    out.push_back(kImpl + std::string("projected to use ") + mib(sum_used) + " MiB of device memory vs. " +
                  mib(sum_free) + " MiB of free device memory");
    auto finish = [&](const std::string& outcome, const std::vector<int64_t>& counts) {
        f.outcome = outcome;
        f.context = f.n_ctx / std::max<int64_t>(1, a.seqs);
        f.device_layers = counts;
        f.n_gpu_layers = sum(counts);
        f.used_bytes = sum(mems(f.n_ctx, counts));
        f.free_bytes = sum_free;  // used and free of all devices together; the margin is per device
        f.flags = "-c " + std::to_string(f.n_ctx) + " -ngl " + std::to_string(f.n_gpu_layers);
        if (outcome == "layers") {
            f.flags += " -ts ";
            for (size_t i = 0; i < counts.size(); ++i) f.flags += (i ? "," : "") + std::to_string(counts[i]);
        }
        return f;
    };
    if (!short_somewhere) {
        out.push_back(kImpl + std::string("targets for free memory can be met on all devices, no changes needed"));
        out.push_back(kOuter + std::string("successfully fit params to free device memory"));
        return finish("unchanged", split0);
    }
    // Step 2: only when the sum falls short of the summed targets.
    const int64_t global_surplus = sat_sub(sat_sub(sum_free, sum_used), sat_mul(a.target_bytes, nd));
    if (global_surplus < 0) {
        out.push_back(kImpl + std::string("cannot meet free memory targets on all devices, need to use ") +
                      mib(-global_surplus) + " MiB less in total");
        if (a.n_ctx_user > 0) {
            out.push_back(kImpl + std::string("context size set by user to ") + std::to_string(a.n_ctx_user) +
                          " -> no change");
        } else if (a.n_ctx_train > a.n_ctx_min) {
            // "only whole layers can be assigned to devices": (nd + 1) / 2 layers' weights less,
            // a layer's weights being the devices' model bytes over min(-ngl, n_layer).
            int64_t model = 0, above = 0;
            for (int64_t id = nd - 1; id >= 0; --id) {
                model = sat_add(model, use(f.n_ctx, above, split0[static_cast<size_t>(id)]).model);
                above += split0[static_cast<size_t>(id)];
            }
            const int64_t per_layer =
                model / std::max<int64_t>(1, a.ngl_user >= 0 ? std::min(a.ngl_user, a.n_layer) : a.n_layer);
            const int64_t used_target =
                sat_sub(sat_sub(sum_free, sat_mul(a.target_bytes, nd)), (nd + 1) * per_layer / 2);
            const int64_t used_min = sum(mems(a.n_ctx_min, split0));
            const int64_t span = a.n_ctx_train - a.n_ctx_min;
            f.n_ctx = a.n_ctx_min;
            if (used_target > used_min && sum_used > used_min) {
                const __int128 step = __int128(span) * (used_target - used_min) / (sum_used - used_min);
                const int64_t align = 256 * std::max<int64_t>(1, a.seqs);
                f.n_ctx = a.n_ctx_min + static_cast<int64_t>(step);
                f.n_ctx = std::max(f.n_ctx - f.n_ctx % align, a.n_ctx_min);
                const int64_t per_ctx = (sum_used - used_min) / span;
                out.push_back(ctx_reduced_line(a.n_ctx_train, f.n_ctx, sat_mul(a.n_ctx_train - f.n_ctx, per_ctx)));
                out.push_back(kImpl + std::string("entire model should be fit across devices by reducing context"));
            } else {
                out.push_back(ctx_reduced_line(a.n_ctx_train, f.n_ctx, sat_sub(sum_used, used_min)));
            }
        } else {
            out.push_back(ctx_unchanged_line(a.n_ctx_train, a.n_ctx_min));
        }
    }
    if (a.ngl_user >= 0) {
        out.push_back(ngl_abort_line(a.ngl_user));
        return finish("failed", split0);
    }
    // Step 3: back to front, one device at a time, by false position.
    out.push_back(kImpl + std::string("filling dense layers back-to-front:"));
    std::vector<int64_t> counts(static_cast<size_t>(nd), 0);
    std::vector<int64_t> mem = mems(f.n_ctx, counts);
    int64_t above = 0;
    for (int64_t id = nd - 1; id >= 0; --id) {
        const auto i = static_cast<size_t>(id);
        const int64_t unassigned = all_layers - above;
        if (unassigned > 0) {
            const std::function<int64_t(const MoeSplit&)> mem_of = [&](const MoeSplit& sp) {
                return use(f.n_ctx, above, sp.n_layer).total;
            };
            const MoeSplit high{unassigned, 0, FitFraction::Moe};
            const int64_t mem_high = mem_of(high);
            if (mem_high > target) {
                const MoeSplit got = false_position(
                    MoeSplit{counts[i], 0, FitFraction::Moe}, mem[i], high, mem_high, target, mem_of,
                    [](MoeSplit sp, int64_t step) {
                        sp.n_layer += step;
                        return sp;
                    },
                    [](const MoeSplit& sp) { return sp.n_layer; });
                counts[i] = got.n_layer;
            } else {
                counts[i] = unassigned;
                mem[i] = mem_high;
            }
        }
        out.push_back(dev_line("%s  - GPU%lld: %2lld layers, %6lld MiB used, %6lld MiB free", id, counts[i],
                               mem[i] / MiB, sat_sub(a.free_bytes, mem[i]) / MiB));
        above += counts[i];
    }
    out.push_back(kOuter + std::string("successfully fit params to free device memory"));
    return finish("layers", counts);
}

}  // namespace

std::vector<int64_t> llamacpp_even_split(int64_t n_devices, int64_t ngl) {
    // splits[] = cumulative equal shares as floats; slot j goes to the first device whose
    // share exceeds j / ngl (std::upper_bound in llama_model::load_tensors).
    std::vector<int64_t> counts(static_cast<size_t>(std::max<int64_t>(1, n_devices)), 0);
    std::vector<float> splits(counts.size());
    float run = 0.0f;
    for (float& sp : splits) sp = (run += 1.0f);
    for (float& sp : splits) sp /= run;
    for (int64_t j = 0; j < ngl; ++j) {
        const float x = float(j) / float(ngl);
        const auto d = std::upper_bound(splits.begin(), splits.end(), x) - splits.begin();
        ++counts[static_cast<size_t>(std::min<std::ptrdiff_t>(d, static_cast<std::ptrdiff_t>(counts.size()) - 1))];
    }
    return counts;
}

LlamaFit llamacpp_fit(const FitArgs& a, const std::function<int64_t(int64_t, int64_t)>& used, const MoeUse& used_moe,
                      const DeviceUse& device_use) {
    LlamaFit f;
    f.free_bytes = a.free_bytes;
    f.target_bytes = a.target_bytes;
    const int64_t all_layers = a.n_layer + 1;
    f.n_ctx = a.n_ctx_user > 0 ? a.n_ctx_user : a.n_ctx_train;
    f.n_gpu_layers = a.ngl_user >= 0 ? std::min(a.ngl_user, all_layers) : all_layers;
    auto finish = [&](const std::string& outcome) {
        f.outcome = outcome;
        f.context = f.n_ctx / std::max<int64_t>(1, a.seqs);
        f.used_bytes = used(f.n_ctx, f.n_gpu_layers);
        f.flags = "-c " + std::to_string(f.n_ctx) + " -ngl " + std::to_string(f.n_gpu_layers);
        return f;
    };
    auto& out = f.log_lines;
    if (a.n_devices > 1 && device_use && !a.moe) return fit_devices(a, device_use, f);
    if (a.n_devices != 1) {
        // Several GPUs holding even shares (-sm layer): only "nothing to change" is predicted,
        // with the two summary lines (the per-device lines name the backend's devices).
        const int64_t per = used(f.n_ctx, f.n_gpu_layers);
        f.projected_bytes = per;
        if (sat_sub(a.free_bytes, per) < a.target_bytes) return finish("not_predicted");
        out.push_back(kImpl + std::string("projected to use ") + mib(sat_mul(per, a.n_devices)) +
                      " MiB of device memory vs. " + mib(sat_mul(a.free_bytes, a.n_devices)) +
                      " MiB of free device memory");
        out.push_back(kImpl + std::string("targets for free memory can be met on all devices, no changes needed"));
        out.push_back(kOuter + std::string("successfully fit params to free device memory"));
        return finish("unchanged");
    }

    // Step 1: the asked parameters.
    const int64_t used_full = used(f.n_ctx, f.n_gpu_layers);
    f.projected_bytes = used_full;
    out.push_back(kImpl + std::string("projected to use ") + mib(used_full) + " MiB of device memory vs. " +
                  mib(a.free_bytes) + " MiB of free device memory");
    const int64_t projected_free = sat_sub(a.free_bytes, used_full);
    if (projected_free >= a.target_bytes) {
        out.push_back(kImpl + std::string("will leave ") + mib(projected_free) + " >= " + mib(a.target_bytes) +
                      " MiB of free device memory, no changes needed");
        out.push_back(kOuter + std::string("successfully fit params to free device memory"));
        return finish("unchanged");
    }

    // Step 2: a smaller context.
    const int64_t surplus = sat_sub(projected_free, a.target_bytes);
    out.push_back(kImpl + std::string("cannot meet free memory target of ") + mib(a.target_bytes) +
                  " MiB, need to reduce device memory by " + mib(sat_sub(0, surplus)) + " MiB");
    if (a.n_ctx_user > 0) {
        out.push_back(kImpl + std::string("context size set by user to ") + std::to_string(a.n_ctx_user) +
                      " -> no change");
    } else if (a.n_ctx_train > a.n_ctx_min) {
        const int64_t used_target = sat_sub(a.free_bytes, a.target_bytes);
        const int64_t used_min = used(a.n_ctx_min, f.n_gpu_layers);
        const int64_t span = a.n_ctx_train - a.n_ctx_min;
        f.n_ctx = a.n_ctx_min;
        if (used_target > used_min && used_full > used_min) {
            const __int128 step = __int128(span) * (used_target - used_min) / (used_full - used_min);
            f.n_ctx = a.n_ctx_min + static_cast<int64_t>(step);
            // "round down context for CUDA backend, keep it divisible by the number of streams"
            const int64_t align = 256 * std::max<int64_t>(1, a.seqs);
            f.n_ctx = std::max(f.n_ctx - f.n_ctx % align, a.n_ctx_min);
            const int64_t per_ctx = (used_full - used_min) / span;
            out.push_back(ctx_reduced_line(a.n_ctx_train, f.n_ctx, sat_mul(a.n_ctx_train - f.n_ctx, per_ctx)));
            out.push_back(kImpl + std::string("entire model can be fit by reducing context"));
            out.push_back(kOuter + std::string("successfully fit params to free device memory"));
            return finish("context");
        }
        out.push_back(ctx_reduced_line(a.n_ctx_train, f.n_ctx, sat_sub(used_full, used_min)));
    } else {
        out.push_back(ctx_unchanged_line(a.n_ctx_train, a.n_ctx_min));
    }

    // Step 3: fewer layers on the GPU.
    if (a.ngl_user >= 0) {
        out.push_back(ngl_abort_line(a.ngl_user));
        return finish("failed");
    }
    if (a.moe && !used_moe) return finish("not_predicted");
    if (a.moe) {
        // Steps 3 and 4 for a MoE on one device (common_params_fit_impl).
        const int64_t target = sat_sub(a.free_bytes, a.target_bytes);
        const std::function<int64_t(const MoeSplit&)> mem_of = [&](const MoeSplit& s) { return used_moe(f.n_ctx, s); };
        // Every layer with only its dense tensors on the device: the surplus decides step 4.
        const int64_t surplus_moe = sat_sub(target, mem_of(MoeSplit{all_layers, all_layers, FitFraction::Moe}));
        out.push_back(kImpl + std::string("with only dense weights in device memory there is ") +
                      (surplus_moe > 0 ? "a total surplus of " + mib(surplus_moe)
                                       : "still a total deficit of " + mib(-surplus_moe)) +
                      " MiB");
        // Step 3: dense-only layers back to front; the output slot (the first filled) stays whole.
        out.push_back(kImpl + std::string("filling dense-only layers back-to-front:"));
        MoeSplit cur;
        int64_t mem = mem_of(cur);
        const MoeSplit high{all_layers, all_layers - 1, FitFraction::Moe};
        const int64_t mem_high = mem_of(high);
        if (mem_high > target) {
            cur = false_position(
                cur, mem, high, mem_high, target, mem_of,
                [](MoeSplit s, int64_t step) {
                    s.n_layer += step;
                    s.n_part += s.n_part == 0 ? step - 1 : step;
                    return s;
                },
                [](const MoeSplit& s) { return s.n_layer; });
        } else {
            cur = high;
            mem = mem_high;
        }
        char line[200];
        std::snprintf(line, sizeof line, "%s  - GPU0: %2lld layers, %6lld MiB used, %6lld MiB free", kImpl,
                      static_cast<long long>(cur.n_layer), static_cast<long long>(mem / MiB),
                      static_cast<long long>(sat_sub(a.free_bytes, mem) / MiB));
        out.push_back(line);
        if (surplus_moe > 0 && cur.n_layer > 0) {
            // Step 4: partial layers back to full ones front to back, then one more fraction.
            out.push_back(kImpl + std::string("converting dense-only layers to full layers and filling them "
                                              "front-to-back with overflow to next device/system memory:"));
            const MoeSplit full{cur.n_layer, 0, FitFraction::Moe};
            const int64_t mem_full = mem_of(full);
            if (mem_full > target) {
                cur = false_position(
                    cur, mem, full, mem_full, target, mem_of,
                    [](MoeSplit s, int64_t step) {
                        s.n_part -= std::min(step, s.n_part);
                        return s;
                    },
                    [](const MoeSplit& s) { return s.n_layer - s.n_part; });
            } else {
                cur = full;
                mem = mem_full;
            }
            // "try to fit at least part of one more layer": on one device the first partial
            // layer keeps its up (then also its gate) projections, else loses every FFN matrix.
            // Strictly below the target, unlike the searches.
            if (cur.n_layer > 1) {
                MoeSplit test = cur;
                test.overflow = FitFraction::Up;
                int64_t m = mem_of(test);
                if (m < target) {
                    cur = test;
                    mem = m;
                    test.overflow = FitFraction::Gate;
                    m = mem_of(test);
                    if (m < target) {
                        cur = test;
                        mem = m;
                    }
                } else {
                    test.overflow = FitFraction::Attn;
                    m = mem_of(test);
                    if (m < target) {
                        cur = test;
                        mem = m;
                    }
                }
            }
            std::snprintf(line, sizeof line,
                          "%s  - GPU0: %2lld layers (%2lld overflowing), %6lld MiB used, %6lld MiB free", kImpl,
                          static_cast<long long>(cur.n_layer), static_cast<long long>(cur.n_part),
                          static_cast<long long>(mem / MiB), static_cast<long long>(sat_sub(a.free_bytes, mem) / MiB));
            out.push_back(line);
        }
        out.push_back(kOuter + std::string("successfully fit params to free device memory"));
        f.outcome = "layers";
        f.n_gpu_layers = cur.n_layer;
        f.overflow_layers = cur.n_part;
        f.context = f.n_ctx / std::max<int64_t>(1, a.seqs);
        f.used_bytes = mem;
        f.flags =
            "-c " + std::to_string(f.n_ctx) + " -ngl " + std::to_string(f.n_gpu_layers) + moe_overrides(cur, a.n_layer);
        return f;
    }
    const int64_t target = sat_sub(a.free_bytes, a.target_bytes);
    // False position between 0 layers (the low bound, kept even when it does not fit) and
    // all of them ends on the largest count within the target: use grows with each layer.
    int64_t lo = 0, hi = all_layers;
    if (used(f.n_ctx, hi) <= target) lo = hi;
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (used(f.n_ctx, mid) <= target)
            lo = mid;
        else
            hi = mid;
    }
    f.n_gpu_layers = lo;
    out.push_back(kImpl + std::string("filling dense layers back-to-front:"));
    const int64_t u = used(f.n_ctx, lo);
    char line[160];
    std::snprintf(line, sizeof line, "%s  - GPU0: %2lld layers, %6lld MiB used, %6lld MiB free", kImpl,
                  static_cast<long long>(lo), static_cast<long long>(u / MiB),
                  static_cast<long long>(sat_sub(a.free_bytes, u) / MiB));
    out.push_back(line);
    out.push_back(kOuter + std::string("successfully fit params to free device memory"));
    return finish("layers");
}

}  // namespace kvb::budget_steps
