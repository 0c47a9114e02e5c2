// Latency percentiles in bounded memory (issue 14, item 10): exact while every sample
// is kept, within 0.2 % once folded into bins, and the same bits on every platform.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/quantiles.h"
#include "sim/rng.h"

using kvb::sim::Quantiles;

namespace {

double exact(std::vector<double> v, double p) {
    auto k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
    k = std::clamp<size_t>(k, 1, v.size());
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k - 1), v.end());
    return v[k - 1];
}

}  // namespace

TEST_CASE("up to 65,536 samples the percentiles are the exact nearest-rank ones") {
    Quantiles q;
    CHECK(q.at(0.5) == 0);
    CHECK(q.mean() == 0);
    for (double x : {0.3, 0.1, 0.2, 0.4}) q.add(x);
    CHECK(q.at(0.5) == 0.2);
    CHECK(q.at(0.99) == 0.4);
    CHECK(q.at(0.0) == 0.1);
    CHECK(q.mean() == (0.3 + 0.1 + 0.2 + 0.4) / 4);
}

TEST_CASE("several percentiles at once are the ones asked one by one, ties and all") {
    // Few distinct values, so ranks fall inside runs of equal samples; ranks equal to
    // each other (0.5 and 0.5) and the ends (0 and 1).
    kvb::sim::Rng r(11, 1);
    for (int n : {1, 2, 7, 1000, 65'536, 70'000}) {
        Quantiles q;
        std::vector<double> all;
        for (int i = 0; i < n; ++i) {
            const double x = static_cast<double>(static_cast<int>(r.uniform() * 50)) / 8;
            all.push_back(x);
            q.add(x);
        }
        const double ps[] = {0.0, 0.25, 0.5, 0.5, 0.9, 0.99, 1.0};
        double got[7];
        q.at(ps, got, 7);
        CAPTURE(n);
        for (int i = 0; i < 7; ++i) {
            CAPTURE(ps[i]);
            // Folded (n > 65,536): the one-by-one answer, which the test below bounds.
            CHECK(got[i] == (n > Quantiles::kExactSamples ? q.at(ps[i]) : exact(all, ps[i])));
        }
        CHECK(q.at(0.5) == got[2]);  // a later at() sorts what the selection left
    }
}

TEST_CASE("past 65,536 samples they are within 0.2 % of the exact ones, and the mean stays exact") {
    // A lognormal spread over three decades, as latencies are, plus exact zeros.
    kvb::sim::Rng r(7, 1);
    std::vector<double> all;
    Quantiles q;
    double sum = 0;
    for (int i = 0; i < 400'000; ++i) {
        const double x = i % 1000 == 0 ? 0.0 : std::exp(-2.0 + 1.5 * r.normal());
        all.push_back(x);
        sum += x;
        q.add(x);
    }
    CHECK(q.count() == 400'000);
    CHECK(q.mean() == sum / 400'000);
    for (double p : {0.0001, 0.01, 0.5, 0.9, 0.99, 0.999, 1.0}) {
        const double e = exact(all, p);
        CAPTURE(p);
        CHECK(std::abs(q.at(p) - e) <= 0.002 * e);
    }
    CHECK(q.at(1.0) == *std::max_element(all.begin(), all.end()));
}
