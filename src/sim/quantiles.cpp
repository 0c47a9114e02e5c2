#include "sim/quantiles.h"

#include <algorithm>
#include <cmath>

namespace kvb::sim {

namespace {

// Octaves 2^-40 s (~1 ps) to 2^40 s (~35,000 years) cover every latency a step-time
// model gives; outside them a sample counts in the first or last bin.
constexpr int kMinExp = -40, kMaxExp = 40, kSub = 256;
constexpr size_t kBins = static_cast<size_t>(kMaxExp - kMinExp) * kSub;

size_t bin_of(double x) {
    int e = 0;
    const double m = std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1): exact
    if (e <= kMinExp) return 0;
    if (e > kMaxExp) return kBins - 1;
    const auto sub = static_cast<size_t>((m - 0.5) * 2 * kSub);  // exact: a power-of-two scale
    return static_cast<size_t>(e - 1 - kMinExp) * kSub + std::min<size_t>(sub, kSub - 1);
}

double middle_of(size_t bin) {
    const int e = static_cast<int>(bin / kSub) + kMinExp;
    const double sub = static_cast<double>(bin % kSub);
    return std::ldexp(1.0 + (sub + 0.5) / kSub, e);
}

}  // namespace

void Quantiles::reserve(int64_t n) {
    if (bins_.empty() && n > 0) exact_.reserve(static_cast<size_t>(std::min<int64_t>(n, kExactSamples + 1)));
}

void Quantiles::add(double x) {
    sorted_ = false;
    sum_ += x;
    min_ = n_ ? std::min(min_, x) : x;
    max_ = n_ ? std::max(max_, x) : x;
    ++n_;
    if (bins_.empty()) {
        exact_.push_back(x);
        if (static_cast<int64_t>(exact_.size()) > kExactSamples) fold();
        return;
    }
    if (x > 0 && std::ldexp(1.0, kMinExp) <= x)
        ++bins_[bin_of(x)];
    else
        ++zeros_;
}

void Quantiles::fold() {
    bins_.assign(kBins, 0);
    for (double x : exact_) {
        if (x > 0 && std::ldexp(1.0, kMinExp) <= x)
            ++bins_[bin_of(x)];
        else
            ++zeros_;
    }
    std::vector<double>().swap(exact_);
}

int64_t Quantiles::rank(double p) const {
    const auto k = static_cast<int64_t>(std::ceil(p * static_cast<double>(n_)));
    return std::clamp<int64_t>(k, 1, n_);
}

void Quantiles::at(const double* ps, double* out, size_t n) const {
    if (n_ == 0 || sorted_ || !bins_.empty()) {
        for (size_t i = 0; i < n; ++i) out[i] = at(ps[i]);
        return;
    }
    // From the highest rank down: after nth_element the k - 1 samples left of the k-th
    // are the smallest k - 1, so every lower rank is among them.
    auto end = exact_.end();
    for (size_t i = n; i-- > 0;) {
        const int64_t k = rank(ps[i]);
        const auto nth = exact_.begin() + (k - 1);
        if (nth < end) {
            std::nth_element(exact_.begin(), nth, end);
            end = nth;
        }
        out[i] = *nth;
    }
}

double Quantiles::at(double p) const {
    if (n_ == 0) return 0;
    const int64_t k = rank(p);
    if (bins_.empty()) {
        if (!sorted_) {
            std::sort(exact_.begin(), exact_.end());
            sorted_ = true;
        }
        return exact_[static_cast<size_t>(k - 1)];
    }
    if (k == n_) return max_;
    int64_t seen = zeros_;
    if (seen >= k) return min_;
    for (size_t b = 0; b < kBins; ++b) {
        seen += bins_[b];
        if (seen >= k) return std::clamp(middle_of(b), min_, max_);
    }
    return max_;
}

}  // namespace kvb::sim
