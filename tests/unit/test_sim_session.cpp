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
    CHECK(e.message == "--block-size must be a whole number from 1 to 256, got 0");
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

// What vLLM refuses to start with, the simulator refuses with vLLM's reason.
TEST_CASE("settings vLLM refuses: its block sizes, max_num_batched_tokens below max_num_seqs") {
    const ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    // --block-size takes vLLM's choices (vllm/config/cache.py BlockSize): not 3, nor 2, 4 or 4,096.
    for (int64_t bs : {3, 2, 4, 48, 512}) {
        SimInputs in;
        in.kv_cache_memory = int64_t{8} << 30;
        in.block_size = bs;
        auto s = SimSession::create(m, in);
        REQUIRE_FALSE(s.ok());
        CHECK(s.error().detail.code == (bs > 256 ? "input_out_of_range" : "vllm_block_size_choice"));
    }
    SimInputs in;
    in.kv_cache_memory = int64_t{8} << 30;
    in.max_model_len = 4096;
    in.block_size = 3;
    CHECK(SimSession::create(m, in).error().message ==
          "--block-size must be one of vLLM's block sizes 1, 8, 16, 32, 64, 128 or 256, got 3");
    in.block_size = 4096;
    CHECK(SimSession::create(m, in).error().message == "--block-size must be a whole number from 1 to 256, got 4,096");
    for (int64_t bs : sim_block_sizes()) {
        in.block_size = bs;
        in.requests = 5;
        CHECK(SimSession::create(m, in).ok());
    }
    // vllm/config/scheduler.py verify_max_model_len: on the resolved values (the default
    // max_num_seqs 256 here), chunked prefill or not.
    in = SimInputs{};
    in.kv_cache_memory = int64_t{8} << 30;
    in.max_model_len = 4096;
    in.max_num_batched_tokens = 10;
    auto s = SimSession::create(m, in);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().detail.code == "vllm_batched_below_seqs");
    CHECK(s.error().message ==
          "vLLM refuses to start: max_num_batched_tokens (10) must be greater than or equal to max_num_seqs (256)");
    in.max_num_seqs = 10;  // equal is what vLLM takes
    in.requests = 5;
    CHECK(SimSession::create(m, in).ok());
    // On a GPU, against the default vLLM picks for it (A100-80GB: 2,048 tokens).
    in = SimInputs{};
    in.gpu = "a100-80gb";
    in.max_model_len = 8192;
    in.max_num_seqs = 4096;
    CHECK(SimSession::create(m, in).error().message ==
          "vLLM refuses to start: max_num_batched_tokens (2048) must be greater than or equal to max_num_seqs (4096)");
}

TEST_CASE("a GPU given by its size is worded by its size when the KV cache gets nothing") {
    SimInputs in;
    in.gpu = "";
    in.gpu_memory_bytes =
        int64_t{16} << 30;  // 0.92 x 16 GiB (vLLM's default) cannot hold 15 GiB of bf16 weights and the activations
    auto s = SimSession::create(fixture("meta-llama/Llama-3.1-8B"), in);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().detail.code == "no_kv_memory_size");
    CHECK(s.error().message ==
          "no memory is left for the KV cache on a GPU of 16.00 GiB at utilization 0.92 (weights 14.99 GiB)");
}

TEST_CASE("a trace out of time order is sorted with a note saying how many rows were out of order") {
    SimInputs in;
    in.kv_cache_memory = int64_t{1} << 30;
    in.workload = "csv";
    in.trace_name = "mine.csv";
    // 5 and 2 are listed after 9; 7 after 9 too. 9 itself is in order (nothing before it is later).
    in.trace = "arrived_at,num_prefill_tokens,num_decode_tokens\n1,10,5\n9,10,5\n5,10,5\n2,10,5\n7,10,5\n10,10,5\n";
    auto s = SimSession::create(fixture("facebook/opt-1.3b"), in);
    REQUIRE(s.ok());
    REQUIRE(s->run_info().notes.size() == 1);
    CHECK(s->run_info().notes[0].code == "sim_trace_unsorted");
    CHECK(render_english(s->run_info().notes[0]) ==
          "mine.csv: 3 of 6 requests arrive earlier than a request listed before them; the simulator sorted the trace "
          "by arrival time");
    auto report = nlohmann::json::parse(to_json_text(s->report()));
    CHECK(report["notes"][0]["code"] == "sim_trace_unsorted");
    in.trace = "arrived_at,num_prefill_tokens,num_decode_tokens\n1,10,5\n1,10,5\n2,10,5\n";  // ties are in order
    CHECK(SimSession::create(fixture("facebook/opt-1.3b"), in)->run_info().notes.empty());
}
