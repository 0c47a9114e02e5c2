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
// ATTN fraction (get_overflow_pattern). A MoE from a config runs the same steps on expert
// bytes estimated from its sizes. Several devices, each with its own free memory: per-device
// targets, the context reduced over their sum less (nd + 1) / 2 layers' weights (/ 6 for a
// MoE), each device from the last filled by the same false position, and a MoE's step 4
// device by device from the first, a device's first partial layer overflowing into the next
// device; -ts and -ot carry the split (fit_devices).
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

// -ot overrides that reproduce a split (set_ngl_tensor_split_tbo and get_overflow_pattern in
// common/fit.cpp): device 0 holds the lowest slots, each device its full slots first; the
// first partial layer of a device loses its `overflow` fraction (to system RAM, or to the
// next device when `next` says so: its buffer type, CUDA<id + 1>), the later ones their
// routed experts. Slot n_layer is the output layer, which no pattern matches.
std::string moe_overrides(const std::vector<MoeSplit>& sp, const std::vector<char>& next, int64_t n_layer) {
    int64_t ngl = 0;
    for (const MoeSplit& d : sp) ngl += d.n_layer;
    int64_t il0 = n_layer + 1 - ngl;
    std::string out, rest;
    for (size_t id = 0; id < sp.size(); ++id) {
        il0 += sp[id].n_layer - sp[id].n_part;
        const bool to_next = id < next.size() && next[id];
        for (int64_t il = il0; il < il0 + sp[id].n_part && il < n_layer; ++il) {
            if (il == il0 && (sp[id].overflow != FitFraction::Moe || to_next)) {
                const FitFraction fr = sp[id].overflow;
                const char* frac = fr == FitFraction::Attn   ? "ffn_(gate|up|gate_up|down).*"
                                   : fr == FitFraction::Up   ? "ffn_(gate|gate_up|down).*"
                                   : fr == FitFraction::Gate ? "ffn_down.*"
                                                             : "ffn_(up|down|gate_up|gate)_(ch|)exps";
                out += " -ot \"blk\\." + std::to_string(il) + "\\." + frac + "=" +
                       (to_next ? "CUDA" + std::to_string(id + 1) : std::string("CPU")) + "\"";
                continue;
            }
            rest += (rest.empty() ? "" : "|") + std::to_string(il);
        }
        il0 += sp[id].n_part;
    }
    if (!rest.empty()) out += " -ot \"blk\\.(" + rest + ")\\.ffn_(up|down|gate_up|gate)_(ch|)exps=CPU\"";
    return out;
}

// The false position of common_params_fit_impl: from a fitting `lo` toward a `hi` over
// the target, stepping by the interpolated share of the headroom, at least one and short of
// `hi`; returns the last fitting split. `count` is what the search moves (slots or full ones).
template <typename Make, typename Count>
MoeSplit false_position(MoeSplit lo, int64_t& mem_lo, MoeSplit hi, int64_t mem_hi, int64_t target,
                        FunctionRef<int64_t(const MoeSplit&)> mem_of, Make make, Count count) {
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

// Several devices (common_params_fit_impl, nd > 1), each with its own free memory: targets per
// device, the context reduced over their sum less a margin for whole layers (a MoE: whole
// tensors, a third of a layer), then slots filled back to front, the last device first (it
// holds the output layer), each device as many as stay within its target by false position;
// a MoE's slots hold only their dense tensors there. With a surplus, a MoE's dense-only
// slots turn into full ones front to back, device 0 first, and each device's first partial
// layer tries to keep part of its FFN (its fraction then goes to the next device). -ts and
// -ot carry the split (set_ngl_tensor_split_tbo).
LlamaFit fit_devices(const FitArgs& a, DevicesUse use, LlamaFit f) {
    auto& out = f.log_lines;
    const int64_t nd = a.n_devices, all_layers = a.n_layer + 1;
    const auto und = static_cast<size_t>(nd);
    std::vector<int64_t> free = a.device_free, total = a.device_total;
    if (free.size() != und) free.assign(und, a.free_bytes);
    if (total.size() != und) total.assign(und, a.total_bytes);
    std::vector<int64_t> targets(und);
    for (size_t i = 0; i < und; ++i) targets[i] = sat_sub(free[i], a.target_bytes);
    f.n_ctx = a.n_ctx_user > 0 ? a.n_ctx_user : a.n_ctx_train;
    const int64_t ngl0 = a.ngl_user >= 0 ? std::min(a.ngl_user, all_layers) : all_layers;
    using Split = std::vector<MoeSplit>;
    std::vector<char> next(und, false);  // overflow_bufts: false = system RAM
    auto mems = [&](int64_t n_ctx, const Split& sp, const std::vector<char>& nx) {
        const std::vector<DeviceMem> d = use(n_ctx, sp, nx);
        std::vector<int64_t> m(und);
        for (size_t i = 0; i < und; ++i) m[i] = i < d.size() ? d[i].total : INT64_MAX;
        return m;
    };
    auto whole = [&](const std::vector<int64_t>& counts, bool experts_out) {
        Split sp(und);
        for (size_t i = 0; i < und; ++i) sp[i] = MoeSplit{counts[i], experts_out ? counts[i] : 0, FitFraction::Moe};
        return sp;
    };
    auto sum = [](const std::vector<int64_t>& v) {
        int64_t t = 0;
        for (int64_t x : v) t = sat_add(t, x);
        return t;
    };
    auto dev_free = [&](size_t i, int64_t used) { return sat_sub(free[i], used); };
    // Step 1: the default split of the asked layers, by free memory.
    const std::vector<int64_t> split0 = llamacpp_free_split(free, ngl0);
    const std::vector<DeviceMem> d0 = use(f.n_ctx, whole(split0, false), next);
    std::vector<int64_t> used0(und);
    int64_t sum_model = 0;
    for (size_t i = 0; i < und; ++i) {
        used0[i] = i < d0.size() ? d0[i].total : INT64_MAX;
        sum_model = sat_add(sum_model, i < d0.size() ? d0[i].model : 0);
    }
    const int64_t sum_used = sum(used0), sum_free = sum(free);
    f.projected_bytes = sum_used;
    f.device_free = free;
    out.push_back(kImpl + std::string("projected memory use with initial parameters [MiB]:"));
    bool short_somewhere = false;
    int64_t sum_projected_free = 0;
    for (size_t i = 0; i < und; ++i) {
        out.push_back(dev_line("%s  - GPU%lld: %6lld total, %6lld used, %6lld free vs. target of %6lld",
                               static_cast<int64_t>(i), total[i] / MiB, used0[i] / MiB, dev_free(i, used0[i]) / MiB,
                               a.target_bytes / MiB));
        short_somewhere = short_somewhere || dev_free(i, used0[i]) < a.target_bytes;
        sum_projected_free = sat_add(sum_projected_free, dev_free(i, used0[i]));
    }
    out.push_back(kImpl + std::string("projected to use ") + mib(sum_used) + " MiB of device memory vs. " +
                  mib(sum_free) + " MiB of free device memory");
    auto finish = [&](const std::string& outcome, const Split& sp, const std::vector<char>& nx,
                      const std::vector<int64_t>& mem) {
        f.outcome = outcome;
        f.context = f.n_ctx / std::max<int64_t>(1, a.seqs);
        f.device_layers.clear();
        f.device_overflow.clear();
        f.n_gpu_layers = f.overflow_layers = 0;
        for (const MoeSplit& d : sp) {
            f.device_layers.push_back(d.n_layer);
            f.device_overflow.push_back(d.n_part);
            f.n_gpu_layers += d.n_layer;
            f.overflow_layers += d.n_part;
        }
        f.device_used = mem;
        f.device_fraction.clear();
        for (const MoeSplit& d : sp) f.device_fraction.push_back(static_cast<int>(d.overflow));
        f.device_next = nx;
        f.used_bytes = sum(mem);
        f.free_bytes = sum_free;  // used and free of all devices together; the margin is per device
        f.flags = "-c " + std::to_string(f.n_ctx) + " -ngl " + std::to_string(f.n_gpu_layers);
        if (outcome == "layers") {
            f.flags += " -ts ";
            for (size_t i = 0; i < und; ++i) f.flags += (i ? "," : "") + std::to_string(sp[i].n_layer);
            f.flags += moe_overrides(sp, nx, a.n_layer);
        }
        return f;
    };
    if (!short_somewhere) {
        out.push_back(kImpl + std::string("targets for free memory can be met on all devices, no changes needed"));
        out.push_back(kOuter + std::string("successfully fit params to free device memory"));
        return finish("unchanged", whole(split0, false), next, used0);
    }
    // Step 2: only when the sum falls short of the summed targets.
    const int64_t global_surplus = sat_sub(sum_projected_free, sat_mul(a.target_bytes, nd));
    if (global_surplus < 0) {
        out.push_back(kImpl + std::string("cannot meet free memory targets on all devices, need to use ") +
                      mib(sat_neg(global_surplus)) + " MiB less in total");
        if (a.n_ctx_user > 0) {
            out.push_back(kImpl + std::string("context size set by user to ") + std::to_string(a.n_ctx_user) +
                          " -> no change");
        } else if (a.n_ctx_train > a.n_ctx_min) {
            // "only whole layers can be assigned to devices" (a MoE: whole tensors, "<= 1/3 of a
            // layer"): (nd + 1) / 2 layers' (/ 6 for a MoE) weights less, a layer's weights being
            // the devices' model bytes over min(-ngl, n_layer).
            const int64_t per_layer =
                sum_model / std::max<int64_t>(1, a.ngl_user >= 0 ? std::min(a.ngl_user, a.n_layer) : a.n_layer);
            const int64_t used_target =
                sat_sub(sat_sub(sum_free, sat_mul(a.target_bytes, nd)), sat_mul(nd + 1, per_layer) / (a.moe ? 6 : 2));
            const int64_t used_min = sum(mems(a.n_ctx_min, whole(split0, false), next));
            const int64_t span = a.n_ctx_train - a.n_ctx_min;
            f.n_ctx = a.n_ctx_min;
            if (used_target > used_min && sum_used > used_min) {
                // At most the whole span: a target past the current use (only from saturated
                // sizes, the fuzzer's) must not step past n_ctx_train or int64.
                const __int128 step =
                    std::min<__int128>(span, __int128(span) * (used_target - used_min) / (sum_used - used_min));
                const int64_t align = sat_mul(256, std::max<int64_t>(1, a.seqs));
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
        return finish("failed", whole(split0, false), next, mems(f.n_ctx, whole(split0, false), next));
    }
    // A MoE: the surplus with every routed expert in system RAM decides step 4.
    int64_t surplus_moe = 0;
    if (a.moe) {
        const std::vector<int64_t> m = mems(f.n_ctx, whole(split0, true), next);
        for (size_t i = 0; i < und; ++i)
            surplus_moe = sat_sub(surplus_moe, sat_add(sat_sub(m[i], free[i]), a.target_bytes));
        out.push_back(kImpl + std::string("with only dense weights in device memory there is ") +
                      (surplus_moe > 0 ? "a total surplus of " + mib(surplus_moe)
                                       : "still a total deficit of " + mib(sat_neg(surplus_moe))) +
                      " MiB");
    }
    // The false position of common_params_fit_impl over one device's count: from a fitting
    // `lo` toward a `hi` over the target, a step of the interpolated share of the headroom, at
    // least one and short of `hi`. `count` is what moves, `make(lo, step)` the next guess.
    auto search = [&](size_t id, Split& lo, std::vector<int64_t>& mem_lo, Split hi, std::vector<int64_t> mem_hi,
                      FunctionRef<int64_t(const Split&)> count, FunctionRef<Split(const Split&, int64_t)> make,
                      FunctionRef<void(const Split&)> on_accept) {
        int64_t delta = count(hi) - count(lo);
        while (delta > 1) {
            const int64_t headroom = mem_hi[id] - mem_lo[id];
            // A negative share wraps to a huge uint32_t there, i.e. the largest step.
            int64_t step = headroom > 0 ? delta * (targets[id] - mem_lo[id]) / headroom : delta - 1;
            if (step < 0) step = delta - 1;
            step = std::min(std::max<int64_t>(step, 1), delta - 1);
            const Split test = make(lo, step);
            const std::vector<int64_t> mt = mems(f.n_ctx, test, next);
            if (mt[id] <= targets[id]) {
                lo = test;
                mem_lo = mt;
                if (on_accept) on_accept(test);
            } else {
                hi = test;
                mem_hi = mt;
            }
            delta = count(hi) - count(lo);
        }
    };
    // Step 3: back to front, one device at a time.
    out.push_back(kImpl + std::string(a.moe ? "filling dense-only layers back-to-front:"
                                            : "filling dense layers back-to-front:"));
    Split ngl(und);
    std::vector<int64_t> mem = mems(f.n_ctx, ngl, next);
    for (int64_t sid = nd - 1; sid >= 0; --sid) {
        const auto id = static_cast<size_t>(sid);
        int64_t unassigned = all_layers;
        for (size_t jd = id + 1; jd < und; ++jd) unassigned -= ngl[jd].n_layer;
        Split high = ngl;
        high[id].n_layer = unassigned;
        if (a.moe) high[id].n_part = id + 1 < und ? unassigned : unassigned - 1;
        if (unassigned > 0) {
            const std::vector<int64_t> mem_high = mems(f.n_ctx, high, next);
            if (mem_high[id] > targets[id]) {
                search(
                    id, ngl, mem, high, mem_high, [id](const Split& sp) { return sp[id].n_layer; },
                    [&](const Split& lo, int64_t step) {
                        Split t = lo;
                        t[id].n_layer += step;
                        // the last device's first slot is the output layer, which stays whole
                        if (a.moe) t[id].n_part += id + 1 == und && t[id].n_part == 0 ? step - 1 : step;
                        return t;
                    },
                    {});
            } else {
                ngl = high;
                mem = mem_high;
            }
        }
        out.push_back(dev_line("%s  - GPU%lld: %2lld layers, %6lld MiB used, %6lld MiB free", sid, ngl[id].n_layer,
                               mem[id] / MiB, dev_free(id, mem[id]) / MiB));
    }
    if (!a.moe || surplus_moe <= 0) {
        out.push_back(kOuter + std::string("successfully fit params to free device memory"));
        return finish("layers", ngl, next, mem);
    }
    // Step 4: dense-only slots back to full ones, front to back, with a device's first partial
    // layer overflowing to the next device (or system RAM after the last).
    size_t dense_start = und;
    for (size_t id = und; id-- > 0;) {
        if (ngl[id].n_layer == 0) break;
        dense_start = id;
    }
    out.push_back(kImpl + std::string("converting dense-only layers to full layers and filling them front-to-back "
                                      "with overflow to next device/system memory:"));
    for (size_t id = 0; dense_start < und && id <= dense_start; ++id) {
        Split high = ngl;
        for (size_t jd = dense_start; jd < und; ++jd) {
            const int64_t move = jd + 1 < und ? high[jd].n_layer : high[jd].n_layer - 1;
            high[id].n_layer += move;
            high[jd].n_layer -= move;
            high[jd].n_part = 0;
        }
        size_t dense_start_high = und - 1;
        const std::vector<int64_t> mem_high = mems(f.n_ctx, high, next);
        if (mem_high[id] > targets[id]) {
            // Each guess converts `step` partial slots, taken from dense_start on, into full
            // slots of this device.
            size_t dense_start_test = dense_start;
            auto convert = [&](const Split& lo, int64_t step) {
                Split t = lo;
                dense_start_test = dense_start;
                int64_t done = 0;
                for (; dense_start_test < und; ++dense_start_test) {
                    const int64_t c = std::min(step - done, t[dense_start_test].n_part);
                    t[dense_start_test].n_layer -= c;
                    t[dense_start_test].n_part -= c;
                    t[id].n_layer += c;
                    done += c;
                    if (t[dense_start_test].n_part > 0) break;
                }
                return t;
            };
            search(
                id, ngl, mem, high, mem_high, [id](const Split& sp) { return sp[id].n_layer - sp[id].n_part; }, convert,
                [&](const Split&) { dense_start = dense_start_test; });
        } else {
            ngl = high;
            mem = mem_high;
            dense_start = dense_start_high;
        }
        // "try to fit at least part of one more layer": the next partial slot moves here with
        // its up (then also gate) projections kept, else with only its attention.
        if (dense_start < und && ngl[dense_start].n_layer > (id + 1 < und ? 0 : 1)) {
            Split test = ngl;
            size_t dense_start_test = dense_start;
            test[dense_start_test].n_layer--;
            test[dense_start_test].n_part--;
            test[id].n_layer++;
            test[id].n_part++;
            if (test[dense_start_test].n_part == 0) dense_start_test++;
            std::vector<char> next_test = next;
            if (id + 1 < und) next_test[id] = true;
            auto fits = [&](const std::vector<int64_t>& mt) {
                return mt[id] < targets[id] && (id + 1 == und || mt[id + 1] < targets[id + 1]);
            };
            auto accept = [&](const std::vector<int64_t>& mt) {
                ngl = test;
                next = next_test;
                mem = mt;
                dense_start = dense_start_test;
            };
            test[id].overflow = FitFraction::Up;
            std::vector<int64_t> mt = mems(f.n_ctx, test, next_test);
            if (fits(mt)) {
                accept(mt);
                test[id].overflow = FitFraction::Gate;
                mt = mems(f.n_ctx, test, next_test);
                if (fits(mt)) accept(mt);
            } else {
                test[id].overflow = FitFraction::Attn;
                mt = mems(f.n_ctx, test, next_test);
                if (fits(mt)) accept(mt);
            }
        }
        out.push_back(dev_line("%s  - GPU%lld: %2lld layers (%2lld overflowing), %6lld MiB used, %6lld MiB free",
                               static_cast<int64_t>(id), ngl[id].n_layer, ngl[id].n_part, mem[id] / MiB,
                               dev_free(id, mem[id]) / MiB));
    }
    for (size_t id = dense_start + 1; id < und; ++id)
        out.push_back(dev_line("%s  - GPU%lld: %2lld layers (%2lld overflowing), %6lld MiB used, %6lld MiB free",
                               static_cast<int64_t>(id), ngl[id].n_layer, ngl[id].n_part, mem[id] / MiB,
                               dev_free(id, mem[id]) / MiB));
    out.push_back(kOuter + std::string("successfully fit params to free device memory"));
    return finish("layers", ngl, next, mem);
}

}  // namespace

namespace {

// llama_model::load_tensors: splits[] = the devices' weights as floats, cumulated and
// normalized; layer slot j goes to the first device whose share exceeds j / ngl
// (std::upper_bound).
std::vector<int64_t> split_by_weight(const std::vector<float>& weight, int64_t ngl) {
    std::vector<int64_t> counts(weight.size(), 0);
    std::vector<float> splits(weight.size());
    float run = 0.0f;
    for (size_t i = 0; i < weight.size(); ++i) splits[i] = (run += weight[i]);
    for (float& sp : splits) sp /= run;
    for (int64_t j = 0; j < ngl; ++j) {
        const float x = float(j) / float(ngl);
        const auto d = std::upper_bound(splits.begin(), splits.end(), x) - splits.begin();
        ++counts[static_cast<size_t>(std::min<std::ptrdiff_t>(d, static_cast<std::ptrdiff_t>(counts.size()) - 1))];
    }
    return counts;
}

}  // namespace

std::vector<int64_t> llamacpp_even_split(int64_t n_devices, int64_t ngl) {
    return split_by_weight(std::vector<float>(static_cast<size_t>(std::max<int64_t>(1, n_devices)), 1.0f), ngl);
}

std::vector<int64_t> llamacpp_free_split(const std::vector<int64_t>& free_bytes, int64_t ngl) {
    // Without -ts, each device's share is its free memory.
    std::vector<float> weight(std::max<size_t>(1, free_bytes.size()), 0.0f);
    float total = 0.0f;
    for (size_t i = 0; i < free_bytes.size(); ++i) total += (weight[i] = float(std::max<int64_t>(0, free_bytes[i])));
    if (total <= 0.0f) return llamacpp_even_split(static_cast<int64_t>(weight.size()), ngl);
    return split_by_weight(weight, ngl);
}

LlamaFit llamacpp_fit(const FitArgs& a, FitUse used, MoeUse used_moe, DevicesUse devices_use) {
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
    if (a.n_devices > 1 && devices_use) return fit_devices(a, devices_use, f);
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
        auto mem_of = [&](const MoeSplit& s) { return used_moe(f.n_ctx, s); };
        // Every layer with only its dense tensors on the device: the surplus decides step 4.
        const int64_t surplus_moe = sat_sub(target, mem_of(MoeSplit{all_layers, all_layers, FitFraction::Moe}));
        out.push_back(kImpl + std::string("with only dense weights in device memory there is ") +
                      (surplus_moe > 0 ? "a total surplus of " + mib(surplus_moe)
                                       : "still a total deficit of " + mib(sat_neg(surplus_moe))) +
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
        f.device_fraction = {static_cast<int>(cur.overflow)};
        f.device_next = {false};
        f.context = f.n_ctx / std::max<int64_t>(1, a.seqs);
        f.used_bytes = mem;
        f.flags = "-c " + std::to_string(f.n_ctx) + " -ngl " + std::to_string(f.n_gpu_layers) +
                  moe_overrides({cur}, {false}, a.n_layer);
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
    f.device_fraction = {static_cast<int>(FitFraction::Moe)};  // whole layers: no fraction moves
    f.device_next = {false};
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
