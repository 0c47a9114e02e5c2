// Internal to src/budget: the steps compute_budget runs, one per engine, and the
// helpers they share. Not part of the core's API.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "budget/budget.h"

namespace kvb::budget_steps {

// What every engine step reads: the model, the request, and what the shared steps resolved.
struct Ctx {
    const ModelSpec& m;
    const BudgetInputs& in;
    const Gpu* gpu;  // nullptr for a custom memory size
    const WeightFormat& fmt;
};

Result<bool> vllm(const Ctx& c, BudgetResult& r);
Result<bool> llamacpp(const Ctx& c, BudgetResult& r);
Result<bool> transformers(const Ctx& c, BudgetResult& r);

// Largest x in [lo, hi] with pred(x) true, given pred(lo) is true and pred is monotone
// (true then false): every "longest context" / "most sequences" search.
template <class Pred>
int64_t largest_true(int64_t lo, int64_t hi, Pred pred) {
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (pred(mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

// Doubling then bisection: the most sequences in [1, cap] for which fits(n) holds, given fits(1).
template <class Pred>
int64_t most_that_fit(int64_t cap, Pred fits) {
    int64_t hi = 1;
    while (hi < cap && fits(hi * 2)) hi *= 2;
    return largest_true(1, std::min(hi * 2, cap), fits);
}

// Past the model's limit (a context that fits at `limit`), how far memory alone would go:
// doubling then bisection up to 2^24 tokens, in steps of `step` tokens.
template <class Pred>
int64_t physical_max(int64_t limit, int64_t step, Pred fits) {
    constexpr int64_t kCap = int64_t(1) << 24;
    if (limit >= kCap) return limit;
    int64_t lo = std::max<int64_t>(1, limit / step), hi = lo;
    while (hi * step < kCap && fits(std::min(kCap, hi * 2 * step))) hi *= 2;
    if (hi * step >= kCap) return kCap;
    const int64_t top = std::min(hi * 2, kCap / step);
    return std::max(limit, largest_true(lo, top, [&](int64_t x) { return x == lo || fits(x * step); }) * step);
}

std::string fraction_text(double v);  // 0.9 -> "0.9", as a flag value
// One GPU's parts from what the engine step resolved, with `kv_bytes` the KV that GPU holds
// for the asked context and requests; total and free summed.
void fill_per_gpu(BudgetResult& r, int64_t kv_bytes);

}  // namespace kvb::budget_steps
