// The saturating arithmetic every stage shares (src/base/arith.h): an absurd size reads as
// "does not fit", and a saturated value negates without undefined behaviour (the fuzzer found
// llama.cpp's --fit log negating a deficit saturated at INT64_MIN; the input is in fuzz/corpus).
#include <doctest/doctest.h>

#include <cstdint>

#include "base/arith.h"

using namespace kvb;

TEST_CASE("saturating sums, differences and products stop at the int64 ends") {
    CHECK(sat_add(INT64_MAX, 1) == INT64_MAX);
    CHECK(sat_add(INT64_MIN, -1) == INT64_MIN);
    CHECK(sat_sub(INT64_MIN, 1) == INT64_MIN);
    CHECK(sat_sub(0, INT64_MIN) == INT64_MAX);
    CHECK(sat_mul(INT64_MAX / 2 + 1, 2) == INT64_MAX);
    CHECK(sat_mul(INT64_MAX / 2 + 1, -2) == INT64_MIN);
    CHECK(sat_mul(-3, 7) == -21);
}

TEST_CASE("a saturated deficit negates to the largest surplus") {
    CHECK(sat_neg(INT64_MIN) == INT64_MAX);
    CHECK(sat_neg(INT64_MAX) == -INT64_MAX);
    CHECK(sat_neg(-5) == 5);
    CHECK(sat_neg(0) == 0);
}
