// The simulator's one session and one JSON (issue 8): SimInputs check themselves in
// coded messages, the JSON reader refuses unknown keys and wrong types by name, a run
// in chunks is the run in one go, and `kvbudget simulate --json` is to_json_text of the
// session's report for the same settings.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fixtures.h"
#include "report/sim_json.h"
#include "sim/session.h"

using namespace kvb;
using kvb::test::fixture;

namespace {

Error refusal(const std::string& text) {
    auto r = sim_inputs_from_json(text);
    REQUIRE_FALSE(r.ok());
    return r.error();
}

}  // namespace

TEST_CASE("SimInputs from JSON: member names, refusals by name with the CLI's terms") {
    auto in = sim_inputs_from_json(
        R"({"policies":"all","kv_cache_memory":1073741824,"block_size":32,"n":2,"requests":40,"rate":null,"seed":3})");
    REQUIRE(in.ok());
    CHECK(in->policies == std::vector<std::string>{"all"});
    CHECK(*in->kv_cache_memory == 1073741824);
    CHECK(in->block_size == 32);
    CHECK(!in->rate);

    Error e = refusal(R"({"blockSize":16})");
    CHECK(e.detail.code == "input_unknown_field");
    CHECK(e.message == "unknown input 'blockSize'");
    e = refusal(R"({"n":"4"})");
    CHECK(e.detail.code == "input_wrong_type");
    CHECK(e.message == "n must be a whole number, got \"4\"");
    e = refusal(R"({"block_size":0})");
    CHECK(e.detail.code == "input_out_of_range");
    CHECK(e.message == "--block-size must be a whole number from 1 to 4,096, got 0");
    e = refusal(R"({"policies":["paged","best"]})");
    CHECK(e.message == "--policy must be paged, max, pow2, oracle or all, got 'best'");
    e = refusal(R"({"shared_fraction":0.5})");
    CHECK(e.message == "--shared-fraction needs --shared-prefix");
    e = refusal(R"({"rate":0})");
    CHECK(e.message == "--rate must be a positive number of requests per second, got '0'");
    e = refusal(R"({"workload":"azure-conv"})");
    CHECK(e.message == "workload azure-conv needs the trace's CSV text");
    e = refusal(R"({"gpu_memory_utilization":1.5})");
    CHECK(e.detail.code == "bad_utilization");
    CHECK(refusal("[1]").code == "not_json");
}

TEST_CASE("a session run in chunks gives the report of one run; result JSON embeds it verbatim") {
    const ModelSpec m = fixture("facebook/opt-1.3b");
    SimInputs in;
    in.policies = {"paged", "pow2"};
    in.kv_cache_memory = int64_t{1} << 30;
    in.requests = 60;
    in.seed = 2;
    in.snapshots = 20;
    auto a = SimSession::create(m, in);
    auto b = SimSession::create(m, in);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->run_info().policy_names == std::vector<std::string>{"paged", "pow2"});
    CHECK(a->run_info().kv_bytes_per_token == 196608);  // OPT-1.3B: 2 x 2048 x 24 layers x 2 bytes
    double last = 0;
    while (!a.value().done()) {
        auto p = a.value().run(7);
        REQUIRE(p.ok());
        CHECK(p->progress >= last);
        last = p->progress;
    }
    CHECK(last == 1.0);
    REQUIRE(b.value().run_to_end().ok());
    const std::string report = to_json_text(a->report());
    CHECK(report == to_json_text(b->report()));
    CHECK(sim_result_json_text(a.value(), false, false) == "{\"summary\":" + report + "}");
    auto full = nlohmann::json::parse(sim_result_json_text(a.value(), true, true));
    CHECK(full["series"].size() == 2);
    CHECK(full["snapshots"].size() == 2);
    CHECK(full["snapshots"][0][0]["owner"][0] == -3);  // block 0 is the null block
    CHECK(full["summary"]["policies"][1]["policy"] == "pow2");
}

TEST_CASE("kvbudget simulate --json is the session's report for the same SimInputs") {
    const ModelSpec m = fixture("facebook/opt-1.3b");
    SimInputs in;
    in.policies = {"all"};
    in.kv_cache_memory = int64_t{2} << 30;
    in.requests = 120;
    in.seed = 9;
    in.beam = 2;
    in.block_size = 32;
    auto s = SimSession::create(m, in);
    REQUIRE(s.ok());
    REQUIRE(s.value().run_to_end().ok());
    auto r = kvb::test::run_cli(
        "simulate " + kvb::test::config_path("facebook--opt-1.3b") +
            " --kv-cache-memory 2GiB --policy all --requests 120 --seed 9 --beam 2 --block-size 32 --json",
        false);
    REQUIRE(r.status == 0);
    // The CLI names the model from the file it read; everything else is the same text.
    auto cli = nlohmann::json::parse(r.out);
    auto core = nlohmann::json::parse(to_json_text(s->report()));
    cli.erase("model");
    core.erase("model");
    CHECK(cli.dump() == core.dump());
}
