// Latency percentiles in bounded memory. Every sample is kept (exact nearest-rank
// percentiles) up to kExactSamples; past that the samples fold into a histogram of
// 256 bins per power of two, so a week-long trace of tens of millions of requests
// needs the same memory as a short one. A folded percentile is the middle of its
// bin: within 0.2 % of the exact one (bins are 1/256 of an octave wide), clamped to
// the smallest and largest sample. Bins come from the double's own exponent and
// mantissa bits, not from log(), so the native CLI and the WASM page agree exactly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvb::sim {

class Quantiles {
public:
    static constexpr int64_t kExactSamples = int64_t{1} << 16;

    void add(double x);  // x >= 0 and finite (a latency in seconds)
    // Room for the samples a run will add (at most kExactSamples + 1 are kept): grown by
    // doubling, the samples were copied a dozen times into memory touched for the
    // first time, each page of it a fault (~17 us on the shared VMs).
    void reserve(int64_t n);
    int64_t count() const { return n_; }
    // Summed in the order added, as a plain loop over the samples would.
    double mean() const { return n_ ? sum_ / static_cast<double>(n_) : 0; }
    // Nearest rank: the smallest value with at least p of the samples at or below it.
    double at(double p) const;
    // at(ps[i]) for ps ascending, into out[i], without sorting: each rank selected among
    // the samples below the one above it, about 3 n comparisons for three percentiles
    // where a sort takes n log n. A run's summary asks for three of each of three
    // latencies once; in the WebAssembly build their sorts were ~3 ms of reading a
    // 19,366-request result (of a ~50 ms run).
    void at(const double* ps, double* out, size_t n) const;

private:
    int64_t rank(double p) const;  // 1..n_, n_ > 0
    void fold();
    // Sorted in place by the first at() after an add() (the order added matters to
    // nothing: sum_ keeps the mean's): a summary asks for three percentiles of each of
    // three latencies, and each used to copy all the samples into fresh memory.
    mutable std::vector<double> exact_;
    mutable bool sorted_ = true;
    std::vector<int64_t> bins_;  // empty until folded
    int64_t n_ = 0, zeros_ = 0;  // zeros_: samples below the smallest bin (folded)
    double sum_ = 0, min_ = 0, max_ = 0;
};

}  // namespace kvb::sim
