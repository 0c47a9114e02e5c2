// What a finished simulation says it found (sim/conclusions.cpp), on the runs an audit
// found it wrong for: an overload is a queue that grows while requests arrive, not a run
// whose last answers outlast the arrivals; policies within 1% served alike; the "why"
// comes only with a difference it explains. Runs as `kvbudget simulate` makes them.
#include <doctest/doctest.h>

#include <string>

#include "fixtures.h"
#include "sim/conclusions.h"
#include "sim/session.h"

using namespace kvb;
using kvb::test::fixture;

namespace {

std::vector<Message> conclusions_of(const SimInputs& in) {
    auto s = SimSession::create(fixture("meta-llama/Llama-3.1-8B"), in);
    REQUIRE_MESSAGE(s, (s ? "" : s.error().message));
    REQUIRE(s.value().run_to_end());
    return s.value().report().conclusions;
}

std::vector<std::string> codes(const std::vector<Message>& ms) {
    std::vector<std::string> out;
    for (const Message& m : ms) out.push_back(m.code);
    return out;
}

// `kvbudget simulate Llama-3.1-8B --gpu a100-80gb --max-model-len 16384 ...`
SimInputs llama_a100() {
    SimInputs in;
    in.gpu = "a100-80gb";
    in.max_model_len = 16384;
    return in;
}

std::string azure(const std::string& which) {
    return test::read_file(std::string(KVB_FIXTURES) + "/../../data/traces/azure-llm-2023-" + which + ".csv");
}

sim::Summary summary(const char* policy, double throughput, double waste, double running) {
    sim::Summary s;
    s.policy = policy;
    s.requests = s.finished = 1000;
    s.throughput_tokens_per_s = throughput;
    s.token_states_of_used = 1 - waste;
    s.mean_running = running;
    return s;
}

}  // namespace

TEST_CASE("a run whose queue never formed is not overloaded, however long its last answers") {
    // 300 ShareGPT requests at 5/s: arrivals end at 69 s, the last answer at 94 s. The
    // rule before called it "4.3/s offered, at most 3.2/s finished"; no request ever waited.
    SimInputs in = llama_a100();
    in.requests = 300;
    in.rate = 5;
    auto c = conclusions_of(in);
    CHECK(codes(c) == std::vector<std::string>{"sim_most_served", "sim_policy_waste"});
    CHECK(render_english(c[0]) ==
          "paged served the most: 300 of 300 requests finished, 1079.4 tokens/s, 27.6 requests running on average");

    // Six requests in one second, 2,000 output tokens each: the answers take 32 s, every
    // request starts at once (the rule before: "finishes at most 0.2/s").
    in = llama_a100();
    in.workload = "csv";
    in.trace =
        "arrived_at,num_prefill_tokens,num_decode_tokens\n0,500,2000\n0.2,500,2000\n0.4,500,2000\n0.6,500,2000\n"
        "0.8,500,2000\n1.0,500,2000\n";
    c = conclusions_of(in);
    CHECK(codes(c) == std::vector<std::string>{"sim_most_served", "sim_policy_waste"});
    CHECK(render_english(c[0]) ==
          "paged served the most: 6 of 6 requests finished, 373.4 tokens/s, 5.8 requests running on average");
}

TEST_CASE("arrivals far above what the GPU serves are an overload, with the queue's evidence") {
    // 50 req/s for 300 requests: the first quarter starts in 229 ms on average, the last
    // waits 3.5 s, and 40 requests wait when the last arrives (0.61 s more per second).
    SimInputs in = llama_a100();
    in.requests = 300;
    in.rate = 50;
    auto c = conclusions_of(in);
    REQUIRE(codes(c) == std::vector<std::string>{"sim_most_served", "sim_policy_waste", "sim_overload"});
    CHECK(render_english(c[2]) ==
          "overloaded: requests arrive at 43.3/s, faster than the GPU serves them with paged: the last request arrived "
          "behind 40 waiting requests, and the last quarter of the requests waited 3.5 s on average for their first "
          "token against 229 ms for the first quarter. The queue grows as long as requests arrive: lower the rate or "
          "add memory; the policies' latencies compare queues, not allocators");
}

TEST_CASE("policies within 1% served alike, and no why explains a tie") {
    // The Azure code trace on an H100, block size 64, recompute: every policy finishes
    // all 8,819 requests at 71.39 / 71.04 tokens/s (the arrivals set the pace). The
    // rule before named Max the winner by 0.0013 tokens/s.
    SimInputs in;
    in.gpu = "h100-sxm";
    in.workload = "azure-code";
    in.trace = azure("code");
    in.block_size = 64;
    in.preemption = "recompute";
    in.policies = {"all"};
    auto c = conclusions_of(in);
    CHECK(codes(c) == std::vector<std::string>{"sim_served_alike", "sim_policy_waste", "sim_policy_waste",
                                               "sim_policy_waste", "sim_policy_waste"});
    CHECK(render_english(c[0]) ==
          "paged, max, pow2 and oracle served alike: each finished 8,819 of 8,819 requests at 71.4 tokens/s (to "
          "within 1%)");
    // Paged and Oracle alone: the why said "keeps 5.1 requests running at once against 5.1".
    in.policies = {"paged", "oracle"};
    c = conclusions_of(in);
    CHECK(codes(c) == std::vector<std::string>{"sim_served_alike", "sim_policy_waste", "sim_policy_waste"});
    CHECK(render_english(c[0]) ==
          "paged and oracle served alike: each finished 8,819 of 8,819 requests at 71.4 tokens/s (to within 1%)");
}

TEST_CASE("the why line comes with a difference it explains") {
    // Paged served twice Max's throughput and ran four times its requests: explained.
    auto c = sim_conclusions({summary("paged", 2000, 0.02, 120), summary("max", 1000, 0.8, 30)}, 0);
    REQUIRE(codes(c) == std::vector<std::string>{"sim_most_served", "sim_policy_waste", "sim_policy_waste", "sim_why"});
    CHECK(render_english(c[3]) ==
          "why: paged wastes 2.0% of its memory against 80.0% for max, so it keeps 120.0 requests running at once "
          "against 30.0");
    // 1.1% apart in throughput is a winner; the same requests running at once explain nothing.
    c = sim_conclusions({summary("paged", 1011, 0.02, 30.2), summary("oracle", 1000, 0.3, 30)}, 0);
    CHECK(codes(c) == std::vector<std::string>{"sim_most_served", "sim_policy_waste", "sim_policy_waste"});
    // 0.9% apart is a tie: no winner, no why, whatever the waste.
    c = sim_conclusions({summary("paged", 1009, 0.02, 120), summary("max", 1000, 0.8, 30)}, 0);
    CHECK(codes(c) == std::vector<std::string>{"sim_served_alike", "sim_policy_waste", "sim_policy_waste"});
    // Two tied at the top, a third behind: the why speaks for the leaner of the two
    // against the one that served less.
    c = sim_conclusions(
        {summary("paged", 1000, 0.02, 40), summary("max", 500, 0.8, 8), summary("oracle", 995, 0.3, 39)}, 0);
    REQUIRE(codes(c).size() == 5);
    CHECK(render_english(c[0]) ==
          "paged and oracle served alike: each finished 1,000 of 1,000 requests at 1000.0 tokens/s (to within 1%)");
    CHECK(render_english(c[4]) ==
          "why: paged wastes 2.0% of its memory against 80.0% for max, so it keeps 40.0 requests running at once "
          "against 8.0");
}

TEST_CASE("overload: a wait growing 0.05 s per second of arrivals, requests waiting at the last arrival") {
    sim::Summary s = summary("paged", 1000, 0.02, 100);
    s.early_finished = s.late_finished = 250;
    s.early_arrival_mean_s = 25;
    s.late_arrival_mean_s = 175;  // 150 s apart
    s.early_ttft_mean_s = 0.5;
    s.late_ttft_mean_s = 8.0;  // 7.5 s more: 0.05 s per second
    s.waiting_at_last_arrival = 12;
    auto c = sim_conclusions({s}, 200);
    REQUIRE(codes(c).back() == "sim_overload");
    CHECK(c.back().param("offered") == "5.0");
    CHECK(c.back().param("late") == "8.0 s");
    CHECK(c.back().param("early") == "500 ms");
    s.late_ttft_mean_s = 7.9;  // 0.0493 s per second
    CHECK(codes(sim_conclusions({s}, 200)).back() != "sim_overload");
    s.late_ttft_mean_s = 8.0;
    s.waiting_at_last_arrival = 0;  // the queue had drained
    CHECK(codes(sim_conclusions({s}, 200)).back() != "sim_overload");
    s.waiting_at_last_arrival = 12;
    CHECK(codes(sim_conclusions({s}, 0)).back() != "sim_overload");  // all at once: offline, no rate
    // Every policy must be overloaded; the message speaks for the one whose queue grew least.
    sim::Summary calm = s;
    calm.policy = "oracle";
    calm.late_ttft_mean_s = 1.0;
    CHECK(codes(sim_conclusions({s, calm}, 200)).back() != "sim_overload");
    calm.late_ttft_mean_s = 9.5;  // 0.06 s per second
    c = sim_conclusions({calm, s}, 200);
    REQUIRE(codes(c).back() == "sim_overload");
    CHECK(c.back().param("policy") == "paged");
}
