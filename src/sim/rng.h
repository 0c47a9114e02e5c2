// Deterministic randomness for the simulator. The same seed must give the same
// workload natively and in WebAssembly, so nothing here uses <random>
// distributions (their algorithms differ between standard libraries) or libm
// transcendental functions (glibc and musl may differ in the last bit, and one
// flipped rounding changes a token count). Only IEEE-754 +, -, *, / and sqrt are
// used, which are exactly rounded everywhere, and the code is compiled without
// FMA contraction (ISO C++ mode; wasm has no FMA).
#pragma once
#include <cstdint>

namespace kvb::sim {

inline uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// xoshiro256** (Blackman & Vigna), seeded through splitmix64 as its authors advise.
class Rng {
public:
    explicit Rng(uint64_t seed = 0) {
        uint64_t x = seed;
        for (auto& v : s_) v = splitmix64(x);
    }
    // An independent stream per purpose, so e.g. changing the beam width does not
    // change the sampled lengths.
    Rng(uint64_t seed, uint64_t stream) : Rng(seed ^ (0xA0761D6478BD642Full * (stream + 1))) {}

    uint64_t next() {
        const uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // Uniform integer in [lo, hi] (inclusive); Lemire's multiply-shift with rejection, unbiased.
    int64_t uniform_int(int64_t lo, int64_t hi);
    // Bernoulli(p).
    bool chance(double p) { return uniform() < p; }
    // Exponential with the given rate (mean 1/rate).
    double exponential(double rate);
    // Standard normal (Marsaglia polar method: needs only log and sqrt).
    double normal();

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t s_[4];
    bool have_spare_ = false;
    double spare_ = 0;
};

// Natural log and exp from IEEE basic operations only (see the file comment).
// Accurate to a few ulp over the ranges the simulator uses; x must be > 0 for det_log.
double det_log(double x);
double det_exp(double x);

}  // namespace kvb::sim
