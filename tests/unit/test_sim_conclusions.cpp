// What a finished simulation says it found (sim/conclusions.cpp), on the runs an audit
// found it wrong for: an overload is a queue that grows while requests arrive, not a run
// whose last answers outlast the arrivals; policies within 1% served alike; the "why"
// comes only with a difference it explains. Runs as `kvbudget simulate` makes them.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fixtures.h"
#include "report/sim_json.h"
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

// A policy that finished nothing: every request refused, no figure measured.
sim::Summary served_none(const char* policy, int64_t no_room, int64_t too_long) {
    sim::Summary s;
    s.policy = policy;
    s.requests = s.refused = no_room + too_long;
    s.refused_no_room = no_room;
    s.capacity_tokens = 31034;
    s.throughput_tokens_per_s = s.mean_running = s.token_states_of_used = sim::kNotMeasured;
    s.of_used = {sim::kNotMeasured, sim::kNotMeasured, sim::kNotMeasured, sim::kNotMeasured, 0, 0, 0};
    return s;
}

}  // namespace

TEST_CASE("a policy that served nothing is never ranked, measures nothing and says why") {
    // `kvbudget simulate Qwen3-8B --gpu rtx-4090 --max-model-len 8192 --policy all --n 4
    // --requests 100`: Max reserves max-model-len for each of a request's 4 samples,
    // 4 x 8,192 = 32,768 slots, more than the pool's 31,034, so it refuses all 100. It
    // read "max: 0.0% of the KV memory in use held no token" and TTFT 0.00 s.
    SimInputs in;
    in.gpu = "rtx-4090";
    in.max_model_len = 8192;
    in.n = 4;
    in.requests = 100;
    in.policies = {"all"};
    auto s = SimSession::create(fixture("Qwen/Qwen3-8B"), in);
    REQUIRE_MESSAGE(s, (s ? "" : s.error().message));
    REQUIRE(s.value().run_to_end());
    const SimReport r = s.value().report();
    REQUIRE(r.policies.size() == 4);
    const sim::Summary& max = r.policies[1];
    CHECK(max.policy == "max");
    CHECK(max.finished == 0);
    CHECK(max.refused == 100);
    CHECK(max.refused_no_room == 100);
    CHECK(max.capacity_tokens == 31034);
    for (double v : {max.ttft_p50_s, max.ttft_p99_s, max.tpot_p50_s, max.e2e_p50_s, max.normalized_latency_s,
                     max.throughput_tokens_per_s, max.requests_per_s, max.mean_running, max.token_states_of_used,
                     max.of_used.reserved, max.memory.free, max.makespan_s})
        CHECK_FALSE(sim::measured(v));
    CHECK(sim::measured(r.policies[0].ttft_p50_s));
    // The JSON says null, never 0.
    const auto j = nlohmann::json::parse(to_json_text(r))["policies"][1];
    for (const char* k : {"ttft_p50_s", "tpot_p50_s", "normalized_latency_s", "throughput_tokens_per_s",
                          "token_states_of_used_fraction", "reserved_of_used_fraction", "mean_running"})
        CHECK_MESSAGE(j[k].is_null(), k);
    CHECK(j["refused_no_room"] == 100);
    CHECK(j["finished"] == 0);
    const auto& c = r.conclusions;
    REQUIRE(codes(c) == std::vector<std::string>{"sim_most_served", "sim_policy_waste", "sim_served_none_no_room",
                                                 "sim_policy_waste", "sim_policy_waste", "sim_why"});
    CHECK(c[0].param("policy") == "paged");
    CHECK(render_english(c[2]) ==
          "max served none of the 100 requests: under its reservation every request needs more than the 31,034 "
          "token slots the KV cache holds, so each was refused");
    CHECK(c[5].param("worst") == "pow2");

    // Listed first, a policy that served nothing is still not the best; alone, no one is.
    auto d = sim_conclusions({served_none("max", 100, 0), summary("paged", 1000, 0.02, 30)}, 0);
    CHECK(codes(d) == std::vector<std::string>{"sim_most_served", "sim_served_none_no_room", "sim_policy_waste"});
    CHECK(d[0].param("policy") == "paged");
    d = sim_conclusions({served_none("max", 60, 40)}, 0);
    REQUIRE(codes(d) == std::vector<std::string>{"sim_served_none"});
    CHECK(render_english(d[0]) ==
          "max served none of the 100 requests: 60 needed more than the 31,034 token slots the KV cache holds under "
          "its reservation, 40 had prompts as long as max-model-len or longer");
    // One that served some and refused others for want of room says so beside its waste.
    sim::Summary some = summary("max", 500, 0.8, 8);
    some.finished = 990;
    some.refused = some.refused_no_room = 10;
    some.capacity_tokens = 31034;
    d = sim_conclusions({summary("paged", 1000, 0.02, 30), some}, 0);
    REQUIRE(codes(d) == std::vector<std::string>{"sim_most_served", "sim_policy_waste", "sim_policy_refused",
                                                 "sim_policy_waste", "sim_why"});
    CHECK(render_english(d[2]) ==
          "max refused 10 of the 1,000 requests: under its reservation each needs more than the 31,034 token slots "
          "the KV cache holds");
}

TEST_CASE("policies served alike each have their own throughput in the sentence") {
    // `kvbudget simulate Qwen3-8B --gpu rtx-4090 --max-model-len 8192 --workload azure-conv`,
    // paged and oracle: 297.10 and 298.57 tokens/s. It said "each ... at 298.6 tokens/s".
    SimInputs in;
    in.gpu = "rtx-4090";
    in.max_model_len = 8192;
    in.workload = "azure-conv";
    in.trace = azure("conv");
    in.policies = {"paged", "oracle"};
    auto s = SimSession::create(fixture("Qwen/Qwen3-8B"), in);
    REQUIRE_MESSAGE(s, (s ? "" : s.error().message));
    REQUIRE(s.value().run_to_end());
    const SimReport r = s.value().report();
    CHECK(r.policies[0].throughput_tokens_per_s == doctest::Approx(297.10).epsilon(0.0001));
    CHECK(r.policies[1].throughput_tokens_per_s == doctest::Approx(298.57).epsilon(0.0001));
    REQUIRE_FALSE(r.conclusions.empty());
    CHECK(render_english(r.conclusions[0]) ==
          "paged and oracle served alike: each finished 19,365 of 19,366 requests, at 297.1–298.6 tokens/s "
          "(within 1% of each other)");
}

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
          "paged, max, pow2 and oracle served alike: each finished 8,819 of 8,819 requests, at 71.0–71.4 tokens/s "
          "(within 1% of each other)");
    // Paged and Oracle alone: the why said "keeps 5.1 requests running at once against 5.1".
    in.policies = {"paged", "oracle"};
    c = conclusions_of(in);
    CHECK(codes(c) == std::vector<std::string>{"sim_served_alike", "sim_policy_waste", "sim_policy_waste"});
    CHECK(render_english(c[0]) ==
          "paged and oracle served alike: each finished 8,819 of 8,819 requests, at 71.4 tokens/s (within 1% of each "
          "other)");
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
          "paged and oracle served alike: each finished 1,000 of 1,000 requests, at 995.0–1000.0 tokens/s (within 1% "
          "of each other)");
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
