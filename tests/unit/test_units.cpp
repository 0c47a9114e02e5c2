#include <doctest/doctest.h>

#include "base/units.h"

using namespace kvb;

TEST_CASE("sizes with units") {
    CHECK(parse_size("8GiB").value() == 8 * GiB);
    CHECK(parse_size("24GB").value() == 24'000'000'000);
    CHECK(parse_size("512MiB").value() == 512 * MiB);
    CHECK(parse_size("1.5 GiB").value() == 3 * GiB / 2);
    CHECK(parse_size("123456").value() == 123456);
    CHECK(parse_size("6.51GiB").value() == 6'990'059'274);  // floor of 6.51 x 2^30
    CHECK(parse_size("12x").error().message == "invalid size '12x' (use bytes or a unit: 512MiB, 24GB, 8GiB)");
    CHECK(parse_size("-1GiB").error().code == "bad_size");
    CHECK(parse_size("").error().code == "bad_size");
    CHECK(parse_size("1.5").error().code == "bad_size");  // fractional bytes
    CHECK(parse_size("99999999999TiB").error().message == "size '99999999999TiB' is too large");
}

TEST_CASE("sizes are exact, whatever long double the platform has") {
    // The x87 80-bit product gave 4,199,999,999 for 4.2GB and WebAssembly's 128-bit one
    // 16,379,999,999,999 for 16.38TB: both faces now read the decimal exactly.
    CHECK(parse_size("4.2GB").value() == 4'200'000'000);
    CHECK(parse_size("8.23MB").value() == 8'230'000);
    CHECK(parse_size("16.38TB").value() == 16'380'000'000'000);
    CHECK(parse_size("0.1KiB").value() == 102);  // floor of 102.4
    CHECK(parse_size("9000000000000000000").value() == 9'000'000'000'000'000'000);
    CHECK(parse_size("9000000000000000001").error().code == "bad_size");
    CHECK(parse_size("9000000000.0000000001GB").error().message == "size '9000000000.0000000001GB' is too large");
    CHECK(parse_size("12345678901234567890").error().code == "bad_size");
}

TEST_CASE("human sizes round half away from zero") {
    CHECK(format_bytes(512) == "512 B");
    CHECK(format_bytes(147456) == "144.00 KiB");
    CHECK(format_bytes(1'207'959'552) == "1.13 GiB");
    CHECK(format_bytes(16 * GiB) == "16.00 GiB");
    CHECK(format_bytes(-1'207'959'552) == "-1.13 GiB");
    CHECK(format_bytes(1535) == "1.50 KiB");  // 1.4990 KiB
    CHECK(format_bytes(INT64_MAX) == "8.00 EiB");
    CHECK(format_bytes(INT64_MIN) == "-8.00 EiB");
    CHECK(format_bytes(1024 * 1024 - 1) == "1024.00 KiB");  // 1023.999 KiB rounds up, in KiB
}

TEST_CASE("thousands separators as Python prints them") {
    CHECK(with_commas(0) == "0");
    CHECK(with_commas(42656) == "42,656");
    CHECK(with_commas(-1234567) == "-1,234,567");
    CHECK(with_commas(INT64_MIN) == "-9,223,372,036,854,775,808");
}

TEST_CASE("counts") {
    CHECK(parse_count("32768", "--context").value() == 32768);
    CHECK(parse_count("32,768", "--context").value() == 32768);
    CHECK(parse_count("-1", "--context").error().message == "--context must be a non-negative integer, got '-1'");
    CHECK(parse_count("1e3", "--context").error().code == "bad_value");
    CHECK(parse_count("9999999999999999999", "--seqs").error().code == "bad_value");
}

TEST_CASE("context lengths as people write them") {
    // "128K context" is 131,072 tokens in model cards and engines (Llama 3.1, Qwen3 YaRN).
    CHECK(parse_context("131072", "--max-model-len").value() == 131072);
    CHECK(parse_context("32,768", "--max-model-len").value() == 32768);
    CHECK(parse_context("128k", "--max-model-len").value() == 131072);
    CHECK(parse_context("128K", "--max-model-len").value() == 131072);
    CHECK(parse_context(" 32 K ", "--max-model-len").value() == 32768);
    CHECK(parse_context("1M", "--max-model-len").value() == 1048576);
    CHECK(parse_context("1m", "--max-model-len").value() == 1048576);
    CHECK(parse_context("1,024K", "--max-model-len").value() == 1048576);
    CHECK(parse_context("1.5K", "--max-model-len").error().message ==
          "--max-model-len: '1.5K' is not a context length; write tokens as 32768, 32,768, 32K (= 32,768) or 1M "
          "(= 1,048,576)");
    CHECK(parse_context("K", "-c").error().code == "bad_value");
    CHECK(parse_context("128KB", "-c").error().code == "bad_value");
    CHECK(parse_context("-4K", "-c").error().code == "bad_value");
    CHECK(parse_context("32,76K", "-c").error().detail.code == "count_bad_grouping");
    CHECK(parse_context("9999999999999999K", "-c").error().detail.code == "count_too_large");
}
