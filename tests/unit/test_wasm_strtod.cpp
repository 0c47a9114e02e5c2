// wasm/strtod.cpp (the calculator module's strtod, strtof and strtold, built only for
// WebAssembly) held to the C library's, natively: the same bits and the same end pointer
// for every input kind C's strtod reads. Its functions are renamed here so that they do not
// replace the C library's in this program.
#include <doctest/doctest.h>
#include <locale.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define strtod kvb_wasm_strtod
#define strtof kvb_wasm_strtof
#define strtod_l kvb_wasm_strtod_l
#define strtof_l kvb_wasm_strtof_l
#include "../../wasm/strtod.cpp"
#undef strtod
#undef strtof
#undef strtod_l
#undef strtof_l

namespace {

// "" when both agree, else what differs.
std::string differs(const std::string& s) {
    const char* c = s.c_str();
    char* e1 = nullptr;
    char* e2 = nullptr;
    const double a = std::strtod(c, &e1);
    const double b = kvb_wasm_strtod(c, &e2);
    uint64_t x = 0, y = 0;
    std::memcpy(&x, &a, sizeof x);
    std::memcpy(&y, &b, sizeof y);
    if (!(x == y || (std::isnan(a) && std::isnan(b))) || e1 != e2) return "strtod '" + s + "'";
    const float fa = std::strtof(c, &e1);
    const float fb = kvb_wasm_strtof(c, &e2);
    uint32_t fx = 0, fy = 0;
    std::memcpy(&fx, &fa, sizeof fx);
    std::memcpy(&fy, &fb, sizeof fy);
    if (!(fx == fy || (std::isnan(fa) && std::isnan(fb))) || e1 != e2) return "strtof '" + s + "'";
    return "";
}

}  // namespace

TEST_CASE("the calculator module's strtod reads as the C library's") {
    const char* fixed[] = {"0",
                           "-0",
                           "1",
                           "1.5",
                           "0.1",
                           "3.14159",
                           "1e308",
                           "1.7976931348623157e308",
                           "1.7976931348623158e308",
                           "1.7976931348623159e308",
                           "2e308",
                           "4.9e-324",
                           "2.4703282292062327e-324",
                           "2.4703282292062328e-324",
                           "1e-400",
                           "2.2250738585072011e-308",
                           "2.2250738585072014e-308",
                           "inf",
                           "-Infinity",
                           "INF",
                           "infinit",
                           "nan",
                           "NaN(123)",
                           "nan(",
                           "nan(abc",
                           "0x",
                           "-0x",
                           "0x1p3",
                           "0x1.8p1",
                           "0X.8",
                           "0x1p-1074",
                           "0x1p-1075",
                           "0x1.0000000000001p-1075",
                           "0x1.fffffffffffff8p0",
                           "0x123456789abcdef0123p0",
                           "  +4.5e",
                           "1e+",
                           "1e-5x",
                           ".",
                           "-.",
                           ".5",
                           "5.",
                           "abc",
                           "",
                           " ",
                           "\t\n7",
                           "9007199254740993",
                           "1e23",
                           "3.4028235e38",
                           "3.4028236e38",
                           "1.4e-45",
                           "7e-46",
                           "1e-9999999999",
                           "1e9999999999",
                           "0.000000000000000000000000000000000000000000000001e-300",
                           "123456789012345678901234567890"};
    for (const char* s : fixed) CHECK(differs(s) == "");
    std::mt19937_64 rng(20261202);
    int failures = 0;
    char buf[1200];
    for (int i = 0; i < 20000 && failures < 5; ++i) {
        const uint64_t bits = rng();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        if (!std::isfinite(d)) continue;
        std::vector<std::string> inputs;
        std::snprintf(buf, sizeof buf, "%.*g", 1 + static_cast<int>(rng() % 40), d);
        inputs.push_back(buf);
        std::snprintf(buf, sizeof buf, "%a", d);
        inputs.push_back(buf);
        inputs.push_back(std::to_string(rng() % 100000) + "." + std::to_string(rng() % 100000) + "e" +
                         std::to_string(static_cast<int>(rng() % 700) - 350));
        // The exact midpoint between d and the next double, and just either side of it.
        const double next = std::nextafter(std::fabs(d), INFINITY);
        if (std::isfinite(next)) {
            std::snprintf(buf, sizeof buf, "%.1100Lf",
                          (static_cast<long double>(std::fabs(d)) + static_cast<long double>(next)) / 2);
            std::string mid = buf;
            mid.erase(mid.find_last_not_of('0') + 1);
            inputs.push_back(mid);
            inputs.push_back(mid + "0001");
            if (mid.back() > '0' && mid.back() <= '9') {
                std::string below = mid;
                below.back() = static_cast<char>(below.back() - 1);
                inputs.push_back(below + "9999");
            }
        }
        for (const std::string& s : inputs) {
            const std::string d_ = differs(s);
            if (!d_.empty()) ++failures;
            CHECK(d_ == "");
        }
    }
}
