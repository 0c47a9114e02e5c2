// Azure LLM inference trace parsing: both published formats, the real files the
// site ships (data/traces), and malformed input.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "base/message.h"
#include "sim/workload.h"

using namespace kvb::sim;

namespace {
std::string read_trace(const std::string& file) {
    std::ifstream in(std::string(KVB_FIXTURES) + "/../../data/traces/" + file, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
std::string err(const std::string& text) {
    auto r = parse_trace_csv(text, "t.csv");
    return r ? "(parsed)" : r.error().message;
}
}  // namespace

TEST_CASE("processed format: arrived_at in seconds") {
    auto r =
        parse_trace_csv("arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,374,44\n4.314579,396,109\n", "t.csv");
    REQUIRE(r);
    REQUIRE(r->size() == 2);
    CHECK(r.value()[0].arrival_s == 0.0);
    CHECK(r.value()[1].arrival_s == 4.314579);
    CHECK(r.value()[1].prompt_tokens == 396);
    CHECK(r.value()[1].output_tokens == 109);
}

TEST_CASE("raw format: timestamps made relative to the first request") {
    auto r = parse_trace_csv(
        "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
        "2023-11-16 18:15:46.6805900,374,44\r\n"
        "2023-11-16 18:15:50.9951690,396,109\r\n"
        "2023-11-17 00:00:00,5,1\r\n",
        "AzureLLMInferenceTrace_conv.csv");
    REQUIRE(r);
    REQUIRE(r->size() == 3);
    CHECK(r.value()[0].arrival_s == 0.0);
    CHECK(r.value()[1].arrival_s == doctest::Approx(4.314579).epsilon(1e-12));
    // Across midnight: 5 h 44 min 13.31941 s.
    CHECK(r.value()[2].arrival_s == doctest::Approx(20653.31941).epsilon(1e-12));
}

TEST_CASE("raw format: time zones, T separator, BOM and unsorted rows") {
    auto r = parse_trace_csv(
        "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2024-05-10T00:00:10+00:00,7,2\n"
        "2024-05-10T02:00:00+02:00,8,3\n"
        "2024-05-10 00:00:05Z,9,4\n",
        "t.csv");
    REQUIRE(r);
    CHECK(r.value()[0].prompt_tokens == 8);  // 02:00+02:00 is 00:00 UTC, the earliest
    CHECK(r.value()[0].arrival_s == 0.0);
    CHECK(r.value()[1].arrival_s == 5.0);
    CHECK(r.value()[2].arrival_s == 10.0);
}

TEST_CASE("the shipped Azure traces parse with their published statistics") {
    auto conv = parse_trace_csv(read_trace("azure-llm-2023-conv.csv"), "azure-llm-2023-conv.csv");
    REQUIRE(conv);
    CHECK(conv->size() == 19366);
    double p = 0, o = 0;
    for (const Request& q : conv.value()) {
        p += q.prompt_tokens;
        o += q.output_tokens;
    }
    CHECK(p / 19366 == doctest::Approx(1155).epsilon(0.001));  // published mean 1155
    CHECK(o / 19366 == doctest::Approx(211).epsilon(0.002));   // published mean 211
    CHECK(conv->back().arrival_s < 3600.0);                    // one hour
    CHECK(conv->back().arrival_s > 3500.0);
    auto code = parse_trace_csv(read_trace("azure-llm-2023-code.csv"), "azure-llm-2023-code.csv");
    REQUIRE(code);
    CHECK(code->size() == 8819);
    p = o = 0;
    for (const Request& q : code.value()) {
        p += q.prompt_tokens;
        o += q.output_tokens;
    }
    CHECK(p / 8819 == doctest::Approx(2048).epsilon(0.001));
    CHECK(o / 8819 == doctest::Approx(28).epsilon(0.01));
}

TEST_CASE("malformed trace CSV is refused with the line and the reason") {
    CHECK(err("") == "t.csv is empty (expected a CSV header and one request per line)");
    CHECK(err("\n\n") == "t.csv is empty (expected a CSV header and one request per line)");
    CHECK(err("time,prompt,output\n1,2,3\n") ==
          "t.csv: unrecognized header \"time,prompt,output\" (expected TIMESTAMP,ContextTokens,GeneratedTokens or "
          "arrived_at,num_prefill_tokens,num_decode_tokens)");
    CHECK(err("arrived_at,num_prefill_tokens,num_decode_tokens\n") == "t.csv has a header but no requests");
    CHECK(err("arrived_at,num_prefill_tokens,num_decode_tokens\n0,1,2\n1,2\n") ==
          "line 3 of t.csv: expected 3 fields, found 2");
    CHECK(err("arrived_at,num_prefill_tokens,num_decode_tokens\n0,1,2,4\n") ==
          "line 2 of t.csv: expected 3 fields, found 4");
    CHECK(err("arrived_at,num_prefill_tokens,num_decode_tokens\nsoon,1,2\n") ==
          "line 2 of t.csv: arrived_at \"soon\" is not a non-negative number of seconds");
    CHECK(err("arrived_at,num_prefill_tokens,num_decode_tokens\n-1,1,2\n") ==
          "line 2 of t.csv: arrived_at \"-1\" is not a non-negative number of seconds");
    CHECK(err("arrived_at,num_prefill_tokens,num_decode_tokens\n1,12a,2\n") ==
          "line 2 of t.csv: num_prefill_tokens \"12a\" is not a token count (an integer from 1 to 10,000,000)");
    CHECK(err("arrived_at,num_prefill_tokens,num_decode_tokens\n1,1.5,2\n") ==
          "line 2 of t.csv: num_prefill_tokens \"1.5\" is not a token count (an integer from 1 to 10,000,000)");
    CHECK(err("arrived_at,num_prefill_tokens,num_decode_tokens\n1,99999999999,2\n") ==
          "line 2 of t.csv: num_prefill_tokens \"99999999999\" is not a token count (an integer from 1 to 10,000,000)");
    CHECK(err("arrived_at,num_prefill_tokens,num_decode_tokens\n1,0,2\n") ==
          "line 2 of t.csv: num_prefill_tokens must be at least 1 (an engine refuses an empty prompt)");
    CHECK(err("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,5,0\n") ==
          "line 2 of t.csv: GeneratedTokens must be at least 1 (a request generates at least one token)");
    CHECK(err("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-02-30 18:15:46,5,1\n") ==
          "line 2 of t.csv: TIMESTAMP \"2023-02-30 18:15:46\" is not a timestamp like 2023-11-16 18:15:46.6805900");
    CHECK(err("TIMESTAMP,ContextTokens,GeneratedTokens\n1700000000,5,1\n") ==
          "line 2 of t.csv: TIMESTAMP \"1700000000\" is not a timestamp like 2023-11-16 18:15:46.6805900");
    // Any four-digit year: the stamps are 128-bit nanoseconds (fuzz_sim once found year 4046 overflowing int64).
    CHECK(kvb::sim::parse_trace_csv("TIMESTAMP,ContextTokens,GeneratedTokens\n4046-11-16 18:15:46.68,5,1\n", "t.csv"));
    // Blank lines are skipped but still counted for line numbers.
    CHECK(err("arrived_at,num_prefill_tokens,num_decode_tokens\n\n0,1,2\n\n3,x,1\n") ==
          "line 5 of t.csv: num_prefill_tokens \"x\" is not a token count (an integer from 1 to 10,000,000)");
}

TEST_CASE("trace refusals are coded messages naming the line and the file") {
    auto r = parse_trace_csv("arrived_at,num_prefill_tokens,num_decode_tokens\n1,12a,2\n", "t.csv");
    REQUIRE_FALSE(r);
    CHECK(r.error().detail.code == "sim_trace_bad_count");
    CHECK(r.error().detail.param("line") == "2");
    CHECK(r.error().detail.param("file") == "t.csv");
    CHECK(r.error().detail.param("column") == "num_prefill_tokens");
    CHECK(r.error().detail.param("value") == "12a");
    CHECK(kvb::render_english(r.error().detail) == r.error().message);
}

TEST_CASE("the largest time a trace may give is 1e300 seconds, 1e300 included") {
    // The bound is decided on the digits: the double made of "1e300" is a little above
    // 1e300, and "1e300" was refused as "too large (at most 1e300 seconds)".
    const std::string head = "arrived_at,num_prefill_tokens,num_decode_tokens\n";
    for (const char* ok : {"1e300", "10e299", "1.000e300", "9.99e299", "0.1e301"}) {
        INFO(ok);
        CHECK(err(head + "0,1,1\n" + ok + ",1,1\n") == "(parsed)");
    }
    CHECK(err(head + "0,1,1\n1.0001e300,1,1\n") ==
          "line 3 of t.csv: arrived_at \"1.0001e300\" is more than 1e300 seconds");
    CHECK(err(head + "2e300,1,1\n") == "line 2 of t.csv: arrived_at \"2e300\" is more than 1e300 seconds");
    CHECK(err(head + "1e301,1,1\n") == "line 2 of t.csv: arrived_at \"1e301\" is more than 1e300 seconds");
}
