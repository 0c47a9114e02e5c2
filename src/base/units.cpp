#include "base/units.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kvb {

// Sizes and their human form in exact integer arithmetic, no floating point: the page's
// WebAssembly has no hardware long double (its 128-bit one is software, ~15 KB of the
// calculator module with the libc routines it pulled in, issue 13), and exact is what
// both faces agree on by construction (the 80-bit x87 form natively and the 128-bit one in
// WebAssembly gave the same answers for every size a GPU or a model has).
Result<int64_t> parse_size(const std::string& text) {
    size_t i = 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    std::string num = text.substr(start, i - start);
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::string unit = text.substr(i);
    auto bad = [&]() { return make_error("bad_size", note("bad_size", {{"value", text}})); };
    if (num.empty() || num == "." || num.find('.') != num.rfind('.')) return bad();
    std::string u;
    for (char c : unit) u += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // The unit as 2^shift or 10^pow10.
    int shift = -1, pow10 = -1;
    if (u.empty() || u == "b")
        shift = 0;
    else if (u == "k" || u == "kib")
        shift = 10;
    else if (u == "kb")
        pow10 = 3;
    else if (u == "m" || u == "mib")
        shift = 20;
    else if (u == "mb")
        pow10 = 6;
    else if (u == "g" || u == "gib")
        shift = 30;
    else if (u == "gb")
        pow10 = 9;
    else if (u == "t" || u == "tib")
        shift = 40;
    else if (u == "tb")
        pow10 = 12;
    else
        return bad();
    const size_t dot = std::min(num.find('.'), num.size());
    std::string whole = num.substr(0, dot);
    whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size()));
    std::string frac = dot < num.size() ? num.substr(dot + 1) : std::string();
    auto too_large = [&] { return make_error("bad_size", note("size_too_large", {{"value", text}})); };
    if (whole.size() > 19) return too_large();
    // At most 24 fraction digits (the rest cannot move a size of at most 2^63 bytes past a
    // whole byte unless it is one in 10^12): whole x unit + fraction x unit fits in 128 bits.
    bool rest = frac.find_first_not_of('0', 24) != std::string::npos;
    if (frac.size() > 24) frac.resize(24);
    __int128 w = 0, f = 0, scale = 1;
    for (char c : whole) w = w * 10 + (c - '0');
    for (char c : frac) {
        f = f * 10 + (c - '0');
        scale *= 10;
    }
    __int128 unit_mult = 1;
    if (shift >= 0)
        unit_mult = static_cast<__int128>(1) << shift;
    else
        for (int k = 0; k < pow10; ++k) unit_mult *= 10;
    const __int128 fu = f * unit_mult;
    const __int128 v = w * unit_mult + fu / scale;
    rest = rest || fu % scale != 0;
    const __int128 limit = static_cast<__int128>(9000000000000000000LL);
    if (v > limit || (v == limit && rest)) return too_large();
    if (u.empty() || u == "b") {
        if (num.find('.') != std::string::npos) return bad();
    }
    return static_cast<int64_t>(v);
}

std::string format_bytes(int64_t bytes) {
    const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024 && bytes > -1024) return std::to_string(bytes) + " B";
    const unsigned long long mag = bytes < 0 ? 0ULL - static_cast<unsigned long long>(bytes) : bytes;
    int u = 0;
    while (u < 5 && (mag >> (10 * (u + 1))) >= 1024) ++u;
    // Hundredths of the unit, half away from zero, as people (and the seed articles) round:
    // 1.125 GiB -> 1.13 GiB (printf would round the binary value half-to-even: 1.12).
    const int sh = 10 * (u + 1);
    const unsigned __int128 h = static_cast<unsigned __int128>(mag) * 100;
    unsigned long long r = static_cast<unsigned long long>(h >> sh);
    if (((h >> (sh - 1)) & 1) != 0) ++r;
    std::string cents = std::to_string(r % 100);
    if (cents.size() < 2) cents.insert(0, "0");
    return (bytes < 0 ? "-" : "") + std::to_string(r / 100) + "." + cents + " " + units[u];
}

std::string with_commas(int64_t n) {
    unsigned long long mag = n < 0 ? 0ULL - static_cast<unsigned long long>(n) : static_cast<unsigned long long>(n);
    std::string digits = std::to_string(mag);
    std::string out;
    int count = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
        if (count && count % 3 == 0) out += ',';
        out += *it;
        ++count;
    }
    if (n < 0) out += '-';
    return std::string(out.rbegin(), out.rend());
}

Result<int64_t> parse_count(const std::string& text, const std::string& what) {
    auto refuse = [&] { return make_error("bad_value", note("not_a_count", {{"flag", what}, {"value", text}})); };
    if (text.empty()) return refuse();
    for (char c : text)
        if (!std::isdigit(static_cast<unsigned char>(c)) && c != ',' && c != '_') return refuse();
    // 32,768 as vLLM prints it (or 32_768): a separator only between groups of three digits,
    // so ',' is not 0 and 1,2,3 is not 123.
    std::string digits;
    size_t group = 0;
    bool grouped = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == ',' || c == '_') {
            if (group == 0 || (grouped && group != 3) || (!grouped && group > 3) || i + 1 == text.size() ||
                (grouped && c != text[text.find_first_of(",_")]))
                return make_error("bad_value", note("count_bad_grouping", {{"flag", what}, {"value", text}}));
            grouped = true;
            group = 0;
            continue;
        }
        digits += c;
        ++group;
    }
    if (grouped && group != 3)
        return make_error("bad_value", note("count_bad_grouping", {{"flag", what}, {"value", text}}));
    const size_t first = std::min(digits.find_first_not_of('0'), digits.size());
    if (digits.size() - first > 18)
        return make_error("bad_value", note("count_too_large", {{"flag", what}, {"value", text}}));
    int64_t v = 0;
    for (char c : digits) v = v * 10 + (c - '0');
    return v;
}

Result<int64_t> parse_context(const std::string& text, const std::string& what) {
    size_t b = 0, e = text.size();
    while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
    std::string body = text.substr(b, e - b);
    int64_t mult = 1;
    if (!body.empty()) {
        const char last = body.back();
        if (last == 'k' || last == 'K') mult = 1024;
        if (last == 'm' || last == 'M') mult = 1024 * 1024;
        if (mult > 1) {
            body.pop_back();
            while (!body.empty() && body.back() == ' ') body.pop_back();
        }
    }
    auto refuse = [&] { return make_error("bad_value", note("not_a_context", {{"flag", what}, {"value", text}})); };
    if (body.empty()) return refuse();
    for (char c : body)
        if (!std::isdigit(static_cast<unsigned char>(c)) && c != ',' && c != '_') return refuse();
    auto n = parse_count(body, what);
    if (!n) return n.error();
    if (n.value() > INT64_MAX / mult)
        return make_error("bad_value", note("count_too_large", {{"flag", what}, {"value", text}}));
    return n.value() * mult;
}

}  // namespace kvb
