#include "base/units.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kvb {

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
    long double mult = 0;
    if (u.empty() || u == "b")
        mult = 1;
    else if (u == "k" || u == "kib")
        mult = 1024.0L;
    else if (u == "kb")
        mult = 1e3L;
    else if (u == "m" || u == "mib")
        mult = 1024.0L * 1024;
    else if (u == "mb")
        mult = 1e6L;
    else if (u == "g" || u == "gib")
        mult = 1024.0L * 1024 * 1024;
    else if (u == "gb")
        mult = 1e9L;
    else if (u == "t" || u == "tib")
        mult = 1024.0L * 1024 * 1024 * 1024;
    else if (u == "tb")
        mult = 1e12L;
    else
        return bad();
    long double v = std::strtold(num.c_str(), nullptr) * mult;
    if (!std::isfinite(static_cast<double>(v)) || v > 9.0e18L) {
        return make_error("bad_size", note("size_too_large", {{"value", text}}));
    }
    if (u.empty() || u == "b") {
        if (num.find('.') != std::string::npos) return bad();
    }
    return static_cast<int64_t>(std::floor(v));
}

std::string format_bytes(int64_t bytes) {
    const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024 && bytes > -1024) return std::to_string(bytes) + " B";
    long double v = static_cast<long double>(bytes);
    int u = -1;
    while ((v >= 1024 || v <= -1024) && u < 5) {
        v /= 1024;
        ++u;
    }
    // Half away from zero, as people (and the seed articles) round: 1.125 GiB -> 1.13 GiB.
    // printf would round the binary value half-to-even and print 1.12.
    long double r = std::round(v * 100) / 100;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2Lf %s", r, units[u]);
    return buf;
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
