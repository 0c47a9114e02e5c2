#include "sim/rng.h"

#include <cmath>

namespace kvb::sim {

int64_t Rng::uniform_int(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    const uint64_t range = static_cast<uint64_t>(hi - lo) + 1;  // 0 means the full 2^64 range
    if (range == 0) return static_cast<int64_t>(next());
    // 128-bit multiply done in 64-bit halves so it also compiles for wasm32 without __int128.
    for (;;) {
        const uint64_t x = next();
        const uint64_t xl = x & 0xFFFFFFFFull, xh = x >> 32;
        const uint64_t rl = range & 0xFFFFFFFFull, rh = range >> 32;
        const uint64_t ll = xl * rl, lh = xl * rh, hl = xh * rl, hh = xh * rh;
        const uint64_t mid = (ll >> 32) + (lh & 0xFFFFFFFFull) + (hl & 0xFFFFFFFFull);
        const uint64_t high = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
        const uint64_t low = (mid << 32) | (ll & 0xFFFFFFFFull);
        // Reject the biased low zone: low < (2^64 - range) % range.
        const uint64_t threshold = (0 - range) % range;
        if (low >= threshold) return lo + static_cast<int64_t>(high);
    }
}

double Rng::exponential(double rate) {
    // 1 - U is in (0, 1], so the log is finite.
    return -det_log(1.0 - uniform()) / rate;
}

double Rng::normal() {
    if (have_spare_) {
        have_spare_ = false;
        return spare_;
    }
    for (;;) {
        const double u = 2.0 * uniform() - 1.0;
        const double v = 2.0 * uniform() - 1.0;
        const double s = u * u + v * v;
        if (s <= 0.0 || s >= 1.0) continue;
        const double f = std::sqrt(-2.0 * det_log(s) / s);  // sqrt is exactly rounded (IEEE)
        spare_ = v * f;
        have_spare_ = true;
        return u * f;
    }
}

double det_log(double x) {
    if (!(x > 0.0)) return -INFINITY;
    if (x == INFINITY) return INFINITY;
    // x = m * 2^e with m in [sqrt(1/2), sqrt(2)); frexp and ldexp are exact.
    int e = 0;
    double m = std::frexp(x, &e);  // m in [0.5, 1)
    if (m < 0.70710678118654752440) {
        m *= 2.0;
        e -= 1;
    }
    // log(m) = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.1716: the odd series to s^23
    // leaves a relative error below 1e-17.
    const double s = (m - 1.0) / (m + 1.0);
    const double s2 = s * s;
    double p = 1.0 / 23;
    for (int k = 21; k >= 1; k -= 2) p = p * s2 + 1.0 / k;
    const double ln2_hi = 6.93147180369123816490e-01;  // fdlibm's split of ln 2
    const double ln2_lo = 1.90821492927058770002e-10;
    return e * ln2_hi + (2.0 * s * p + e * ln2_lo);
}

double det_exp(double x) {
    if (x > 709.0) return INFINITY;
    if (x < -745.0) return 0.0;
    // x = k ln2 + r, |r| <= ln2/2; Taylor to r^17 is below 1e-17 relative.
    const double ln2_hi = 6.93147180369123816490e-01;
    const double ln2_lo = 1.90821492927058770002e-10;
    const double kf = std::floor(x * 1.44269504088896338700 + 0.5);  // floor is exact
    const double r = (x - kf * ln2_hi) - kf * ln2_lo;
    double p = 1.0;
    for (int i = 17; i >= 1; --i) p = 1.0 + p * r / i;
    return std::ldexp(p, static_cast<int>(kf));
}

}  // namespace kvb::sim
