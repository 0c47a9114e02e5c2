// Integer arithmetic every stage shares: byte counts are int64 and must never wrap
// silently, and "round up to whole blocks / cells / ranks" has one meaning everywhere.
#pragma once
#include <cstdint>

namespace kvb {

// Overflow-checked: true when the exact result does not fit in int64 (then *out is unspecified).
inline bool mul_overflows(int64_t a, int64_t b, int64_t* out) {
    return __builtin_mul_overflow(a, b, out);
}
inline bool add_overflows(int64_t a, int64_t b, int64_t* out) {
    return __builtin_add_overflow(a, b, out);
}

// Saturating: an absurd size must read as "does not fit", never as a wrapped small number.
inline int64_t sat_mul(int64_t a, int64_t b) {
    int64_t r;
    if (!mul_overflows(a, b, &r)) return r;
    return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}
inline int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    if (!add_overflows(a, b, &r)) return r;
    return a < 0 ? INT64_MIN : INT64_MAX;
}

inline int64_t sat_sub(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_sub_overflow(a, b, &r)) return r;
    return b > 0 ? INT64_MIN : INT64_MAX;
}
// -a, with INT64_MIN (a saturated deficit) read as INT64_MAX: negating it is undefined.
inline int64_t sat_neg(int64_t a) {
    return a == INT64_MIN ? INT64_MAX : -a;
}
// A non-negative 128-bit product or sum clamped to int64: estimates built from config values
// (up to 2^20-wide layers times 2^31 tokens) that only ever compare against memory sizes.
inline int64_t clamp_i64(__int128 v) {
    if (v > static_cast<__int128>(INT64_MAX)) return INT64_MAX;
    if (v < static_cast<__int128>(INT64_MIN)) return INT64_MIN;
    return static_cast<int64_t>(v);
}

// Ceiling division of a count by a positive divisor; 0 for a <= 0 (nothing to hold),
// `a` itself for a divisor < 1 (no split).
inline int64_t cdiv(int64_t a, int64_t b) {
    if (a <= 0) return 0;
    if (b < 1) return a;
    return a / b + (a % b != 0);
}

}  // namespace kvb
