// strtod for the calculator module only (wasm/CMakeLists.txt): libc's (musl's) reads
// through 128-bit long double arithmetic, which WebAssembly does in software, and its
// scanner, the soft-float routines and fmodl were ~15 KB of the module the page's first
// answer waits for (issue 13). Defining strtod here keeps the linker from taking libc's.
// The same answers: C's strtod, correctly rounded (round half to even) as musl's and
// glibc's are, for every input: leading white space, a sign, decimal and hexadecimal
// forms, inf / infinity / nan / nan(chars), and the end pointer after the longest prefix
// that is a number (tests/unit/test_wasm_strtod.cpp holds it to the C library's, natively;
// tests/node/ compares the module's JSON with the native CLI's). strtof and strtold too,
// below: libc's strtod.o defines all three, so all three must be here.
#include <locale.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool is_space(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
int hex_digit(char c) {
    if (is_digit(c)) return c - '0';
    const char l = static_cast<char>(c | 32);
    return l >= 'a' && l <= 'f' ? l - 'a' + 10 : -1;
}

using u128 = unsigned __int128;

// An IEEE binary format: P significand bits (the hidden one included); a finite value is
// m x 2^k with m < 2^P and kmin <= k <= kmax (k = kmin below the smallest normal).
struct Format {
    int p;
    int64_t kmin, kmax;
};
constexpr Format kFloat{24, -149, 104};
constexpr Format kDouble{53, -1074, 971};
constexpr Format kQuad{113, -16494, 16271};

// The encoding without the sign: exponent field and fraction, or all ones then zero (inf).
u128 encode(const Format& f, u128 m, int64_t k, bool inf) {
    const u128 hidden = u128(1) << (f.p - 1);
    const int64_t emax_field = 2 * (f.kmax + f.p - 1) + 1;  // all ones
    if (inf) return u128(emax_field) << (f.p - 1);
    if (m < hidden) return m;  // subnormal or zero: exponent field 0
    return (u128(k - f.kmin + 1) << (f.p - 1)) | (m - hidden);
}

// m x 2^k (m < 2^127), rounded half to even to the format; `sticky` says nonzero bits below
// m were lost. Sets *range on overflow or underflow to zero.
u128 round_binary(const Format& f, u128 m, int64_t k, bool sticky, bool* range) {
    if (!m) return 0;
    int bits = 0;
    for (u128 t = m; t; t >>= 1) ++bits;
    // Drop bits until m has P bits, or fewer down at kmin.
    int64_t drop = bits - f.p;
    if (k + drop < f.kmin) drop = f.kmin - k;
    if (drop > 0) {
        const u128 q = drop >= 128 ? 0 : m >> drop;
        const u128 rest = drop >= 128 ? m : m & ((u128(1) << drop) - 1);
        const u128 half = drop > 128 ? 0 : u128(1) << (drop - 1);
        bool up = drop <= 128 && (rest > half || (rest == half && (sticky || (q & 1))));
        m = q + (up ? 1 : 0);
        k += drop;
        if (m >> f.p) {
            m >>= 1;
            ++k;
        }
    } else {
        m <<= -drop;
        k += drop;
    }
    if (k > f.kmax) {
        *range = true;
        return encode(f, 0, 0, true);
    }
    if (!m) *range = true;
    return encode(f, m, k, false);
}

// Little-endian base 2^32 natural numbers, only as large as the conversions need.
struct Big {
    std::vector<uint32_t> w;
    void mul(uint32_t k) {
        uint64_t carry = 0;
        for (auto& x : w) {
            carry += static_cast<uint64_t>(x) * k;
            x = static_cast<uint32_t>(carry);
            carry >>= 32;
        }
        if (carry) w.push_back(static_cast<uint32_t>(carry));
    }
    void add(uint32_t k) {
        uint64_t carry = k;
        for (size_t i = 0; carry && i < w.size(); ++i) {
            carry += w[i];
            w[i] = static_cast<uint32_t>(carry);
            carry >>= 32;
        }
        if (carry) w.push_back(static_cast<uint32_t>(carry));
    }
    void mul_pow5(int64_t n) {
        for (; n >= 13; n -= 13) mul(1220703125u);  // 5^13
        uint32_t k = 1;
        for (; n > 0; --n) k *= 5;
        mul(k);
    }
    void shl(int64_t n) {
        const size_t words = static_cast<size_t>(n / 32);
        const int bits = static_cast<int>(n % 32);
        if (bits) {
            uint32_t carry = 0;
            for (auto& x : w) {
                const uint32_t next = x >> (32 - bits);
                x = (x << bits) | carry;
                carry = next;
            }
            if (carry) w.push_back(carry);
        }
        w.insert(w.begin(), words, 0u);
    }
    void trim() {
        while (!w.empty() && !w.back()) w.pop_back();
    }
    int64_t bit_length() const {
        if (w.empty()) return 0;
        int64_t n = static_cast<int64_t>(w.size() - 1) * 32;
        for (uint32_t t = w.back(); t; t >>= 1) ++n;
        return n;
    }
    // Both trimmed.
    int compare(const Big& o) const {
        if (w.size() != o.w.size()) return w.size() < o.w.size() ? -1 : 1;
        for (size_t i = w.size(); i-- > 0;)
            if (w[i] != o.w[i]) return w[i] < o.w[i] ? -1 : 1;
        return 0;
    }
    // *this -= o, o <= *this.
    void sub(const Big& o) {
        int64_t borrow = 0;
        for (size_t i = 0; i < w.size(); ++i) {
            int64_t d = static_cast<int64_t>(w[i]) - borrow - (i < o.w.size() ? static_cast<int64_t>(o.w[i]) : 0);
            borrow = d < 0;
            w[i] = static_cast<uint32_t>(d + (borrow << 32));
        }
        trim();
    }
};

// Enough significant digits to tell apart any two neighbours' midpoint in the formats
// above (a binary128 subnormal midpoint has ~11,530); a nonzero digit beyond is kept as a
// final 1, which changes no comparison with a midpoint.
constexpr size_t kMaxDigits = 12000;

// digits (no leading zeros) x 10^e10, correctly rounded: the quotient of two exact big
// integers to P + 3 bits and a sticky remainder, then round_binary.
u128 decimal(const Format& f, const std::string& digits, int64_t e10, bool* range) {
    if (digits.empty()) return 0;
    const int64_t n = static_cast<int64_t>(digits.size());
    // Past every format's range: 10^(n + e10 - 1) <= value < 10^(n + e10).
    if (n + e10 > (f.kmax + f.p) * 30103 / 100000 + 2) {
        *range = true;
        return encode(f, 0, 0, true);
    }
    if (n + e10 < f.kmin * 30103 / 100000 - 2) {
        *range = true;
        return 0;
    }
    Big num, den;
    num.w.push_back(0);
    for (char c : digits) {
        num.mul(10);
        num.add(static_cast<uint32_t>(c - '0'));
    }
    den.w.push_back(1);
    // value = num / den x 2^e10
    if (e10 >= 0)
        num.mul_pow5(e10);
    else
        den.mul_pow5(-e10);
    num.trim();
    den.trim();
    // num x 2^s / den has P + 3 bits or so: q below 2^(P + 4).
    const int64_t s = f.p + 3 - (num.bit_length() - den.bit_length());
    if (s > 0)
        num.shl(s);
    else if (s < 0)
        den.shl(-s);
    num.trim();
    den.trim();
    u128 q = 0;
    for (int i = f.p + 4; i >= 0; --i) {
        Big d = den;
        d.shl(i);
        d.trim();
        if (d.compare(num) <= 0) {
            num.sub(d);
            q |= u128(1) << i;
        }
    }
    return round_binary(f, q, e10 - s, !num.w.empty(), range);
}

// The exponent after 'e' or 'p' at s: false (nothing consumed) when no digit follows.
bool read_exponent(const char*& s, int64_t& out) {
    const char* p = s + 1;
    bool neg = false;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    if (!is_digit(*p)) return false;
    int64_t v = 0;
    for (; is_digit(*p); ++p)
        if (v < 100000000) v = v * 10 + (*p - '0');
    out = neg ? -v : v;
    s = p;
    return true;
}

// C's strtod for one format: the encoding of the value read from nptr, its sign apart.
u128 scan(const Format& f, const char* nptr, char** endptr, bool* neg) {
    const char* s = nptr;
    bool range = false;
    while (is_space(*s)) ++s;
    *neg = false;
    if (*s == '+' || *s == '-') *neg = *s++ == '-';
    const char* end = s;
    u128 bits = 0;
    auto word = [&](const char* w) {
        size_t i = 0;
        for (; w[i]; ++i)
            if ((s[i] | 32) != w[i]) return static_cast<size_t>(0);
        return i;
    };
    if (size_t n = word("infinity")) {
        end = s + n;
        bits = encode(f, 0, 0, true);
    } else if ((n = word("inf"))) {
        end = s + n;
        bits = encode(f, 0, 0, true);
    } else if (word("nan")) {
        end = s + 3;
        if (*end == '(') {
            const char* p = end + 1;
            while (is_digit(*p) || ((*p | 32) >= 'a' && (*p | 32) <= 'z') || *p == '_') ++p;
            if (*p == ')') end = p + 1;
        }
        bits = encode(f, 0, 0, true) | (u128(1) << (f.p - 2));  // quiet NaN
    } else if (s[0] == '0' && (s[1] | 32) == 'x') {
        const char* p = s + 2;
        u128 m = 0;
        bool sticky = false, any = false, point = false;
        int64_t e2 = 0;
        for (;; ++p) {
            if (*p == '.' && !point) {
                point = true;
                continue;
            }
            const int d = hex_digit(*p);
            if (d < 0) break;
            any = true;
            if (m >> 120) {
                sticky |= d != 0;
                if (!point) e2 += 4;
            } else {
                m = m * 16 + static_cast<unsigned>(d);
                if (point) e2 -= 4;
            }
        }
        if (!any) {
            end = s + 1;  // "0x" with no digit: the number is the "0"
        } else {
            int64_t pe = 0;
            if ((*p | 32) == 'p' && read_exponent(p, pe)) e2 += pe;
            end = p;
            if (e2 > 100000) e2 = 100000;
            if (e2 < -100000) e2 = -100000;
            bits = round_binary(f, m, e2, sticky, &range);
        }
    } else {
        // Decimal: the significant digits and the exponent.
        std::string digits;
        int64_t e10 = 0;
        bool any = false, point = false, dropped = false;
        const char* p = s;
        for (;; ++p) {
            if (*p == '.' && !point) {
                point = true;
                continue;
            }
            if (!is_digit(*p)) break;
            any = true;
            if (digits.empty() && *p == '0') {
                if (point) --e10;
                continue;
            }
            if (digits.size() < kMaxDigits - 1) {
                digits += *p;
                if (point) --e10;
            } else {
                dropped |= *p != '0';
                if (!point) ++e10;
            }
        }
        if (!any) {
            // No number: nothing read, +0.
            *neg = false;
            if (endptr) *endptr = const_cast<char*>(nptr);
            return 0;
        }
        if (dropped) {
            digits += '1';
            --e10;
        }
        int64_t ex = 0;
        if ((*p | 32) == 'e' && read_exponent(p, ex)) e10 += ex;
        end = p;
        bits = decimal(f, digits, e10, &range);
    }
    if (range) errno = ERANGE;
    if (endptr) *endptr = const_cast<char*>(end);
    return bits;
}

}  // namespace

// strtof and strtold too: libc++'s string.o (std::stof, std::stold), which every
// std::string and std::to_string link, names them, and libc's would bring its strtod back.
extern "C" float strtof(const char* __restrict nptr, char** __restrict endptr) {
    bool neg = false;
    const uint32_t b = static_cast<uint32_t>(scan(kFloat, nptr, endptr, &neg)) | (neg ? 1u << 31 : 0u);
    float v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

extern "C" double strtod(const char* __restrict nptr, char** __restrict endptr) {
    bool neg = false;
    const uint64_t b = static_cast<uint64_t>(scan(kDouble, nptr, endptr, &neg)) | (neg ? uint64_t(1) << 63 : 0);
    double v;
    std::memcpy(&v, &b, sizeof v);
    return v;
}

#if defined(__wasm__)
// WebAssembly's long double is IEEE binary128.
extern "C" long double strtold(const char* __restrict nptr, char** __restrict endptr) {
    bool neg = false;
    const u128 b = scan(kQuad, nptr, endptr, &neg) | (neg ? u128(1) << 127 : 0);
    long double v;
    static_assert(sizeof v == sizeof b, "binary128 long double");
    std::memcpy(&v, &b, sizeof v);
    return v;
}
#endif

// And the _l forms musl gives as aliases (a newer libc++ may name them): the C locale's
// reading in every locale, as musl's.
extern "C" float strtof_l(const char* __restrict nptr, char** __restrict endptr, locale_t) {
    return strtof(nptr, endptr);
}
extern "C" double strtod_l(const char* __restrict nptr, char** __restrict endptr, locale_t) {
    return strtod(nptr, endptr);
}
#if defined(__wasm__)
extern "C" long double strtold_l(const char* __restrict nptr, char** __restrict endptr, locale_t) {
    return strtold(nptr, endptr);
}
#endif
