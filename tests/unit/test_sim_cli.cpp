// kvbudget simulate: output contract (--json field names, fractions summing to 1),
// exit statuses and messages.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "fixtures.h"

namespace {

using Run = kvb::test::CliRun;
Run run_cli(const std::string& args, bool with_stderr = true) {
    return kvb::test::run_cli("simulate " + args, with_stderr);
}

std::string opt() {
    return std::string(KVB_FIXTURES) + "/configs/facebook--opt-1.3b.json";
}

}  // namespace

TEST_CASE("simulate --json: one object with a stable entry per policy") {
    const Run r = run_cli(opt() + " --kv-cache-memory 4GiB --policy all --requests 300 --seed 7 --json", false);
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["policies"].size() == 4);
    const char* names[] = {"paged", "max", "pow2", "oracle"};
    for (size_t i = 0; i < 4; ++i) {
        const auto& p = j["policies"][i];
        CHECK(p["policy"] == names[i]);
        for (const char* k : {"token_states_fraction",
                              "reserved_fraction",
                              "internal_fragmentation_fraction",
                              "external_fragmentation_fraction",
                              "cached_fraction",
                              "free_fraction",
                              "mean_running",
                              "max_running",
                              "preemptions",
                              "finished",
                              "throughput_tokens_per_s",
                              "ttft_p50_s",
                              "tpot_p50_s",
                              "e2e_p99_s",
                              "sharing_saved_fraction",
                              "token_states_of_used_fraction",
                              "reserved_of_used_fraction",
                              "internal_fragmentation_of_used_fraction",
                              "external_fragmentation_of_used_fraction",
                              "null_block_fraction",
                              "normalized_latency_s"})
            CHECK_MESSAGE(p.contains(k), k);
        const double sum = p["token_states_fraction"].get<double>() + p["reserved_fraction"].get<double>() +
                           p["internal_fragmentation_fraction"].get<double>() +
                           p["external_fragmentation_fraction"].get<double>() + p["cached_fraction"].get<double>() +
                           p["free_fraction"].get<double>() + p["null_block_fraction"].get<double>();
        CHECK(std::fabs(sum - 1.0) < 1e-7);  // printed with 9 significant digits
        CHECK(p["finished"] == 300);
    }
    CHECK(j["kv_bytes_per_token"] == 196608);             // OPT-1.3B: 2 x 2048 x 24 layers x 2 bytes
    CHECK(j["policies"][0]["capacity_tokens"] == 21840);  // 1365 blocks of 16 (4 GiB / 3 MiB)
    CHECK(j["policies"][1]["capacity_tokens"] == 21845);
    // Same seed, same numbers.
    CHECK(run_cli(opt() + " --kv-cache-memory 4GiB --policy all --requests 300 --seed 7 --json", false).out == r.out);
}

TEST_CASE("simulate: the Fig. 2 table side by side") {
    const Run r = run_cli(opt() + " --kv-cache-memory 4GiB --policy all --requests 200");
    REQUIRE(r.status == 0);
    CHECK(r.out.find("facebook/opt-1.3b: 192.00 KiB KV per token, KV cache 4.00 GiB (21,845 token slots)\n") == 0);
    CHECK(r.out.find("workload: sharegpt, 200 requests (all at t=0), seed 0\n") != std::string::npos);
    CHECK(r.out.find("\npolicy ") != std::string::npos);
    for (const char* row : {"token states ", "reserved ", "internal fragmentation ", "external fragmentation ",
                            "cached (prefix) ", "free ", "preemptions ", "throughput (tokens/s) "})
        CHECK_MESSAGE(r.out.find(std::string("\n") + row) != std::string::npos, row);
    // Under the table, the conclusions the page shows above it, each the JSON's, in English.
    const Run j = run_cli(opt() + " --kv-cache-memory 4GiB --policy all --requests 200 --json");
    REQUIRE(j.status == 0);
    const auto conclusions = nlohmann::json::parse(j.out)["conclusions"];
    REQUIRE(conclusions.size() >= 5);
    for (const auto& c : conclusions) {
        const std::string line = "\n" + c["text"].get<std::string>() + "\n";
        CHECK_MESSAGE(r.out.find(line) != std::string::npos, line);
    }
}

TEST_CASE("simulate: GPU catalog, traces and sharing options") {
    Run r = run_cli(opt() + " --gpu a100-40gb --requests 100");
    REQUIRE(r.status == 0);
    // vLLM's own default, the newest release's 0.92 (vllm/config/cache.py from v0.20.0).
    CHECK(r.out.find("= NVIDIA A100 40GB (SXM4) x 0.92 - weights") != std::string::npos);
    r = run_cli(opt() + " --gpu a100-40gb --requests 100 --gpu-memory-utilization 0.9");
    CHECK(r.out.find("= NVIDIA A100 40GB (SXM4) x 0.90 - weights") != std::string::npos);
    r = run_cli(opt() + " --kv-cache-memory 8GiB --workload azure-code --requests 300 --json", false);
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    const auto& p = j["policies"][0];
    CHECK(p["finished"].get<int>() + p["refused"].get<int>() == 300);
    CHECK(p["refused"].get<int>() > 0);  // code prompts average 2,048 tokens, OPT's whole context
    r = run_cli(opt() + " --kv-cache-memory 8GiB --requests 200 --n 4 --rate 2 --json", false);
    REQUIRE(r.status == 0);
    CHECK(nlohmann::json::parse(r.out)["policies"][0]["sharing_saved_fraction"].get<double>() > 0.1);
    r = run_cli(opt() +
                    " --kv-cache-memory 8GiB --requests 200 --workload alpaca --shared-prefix 341 "
                    "--prefix-caching --json",
                false);
    REQUIRE(r.status == 0);
    CHECK(nlohmann::json::parse(r.out)["policies"][0]["prefix_hit_tokens"].get<int>() >= 199 * 336);
}

TEST_CASE("simulate: preemption modes, swap space and sample lengths") {
    // Defaults: vLLM v0 preemption (swap groups, recompute single sequences), 4 GiB of
    // swap space, samples with their own lengths.
    Run r = run_cli(opt() + " --kv-cache-memory 1GiB --requests 200 --n 4 --json", false);
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["preemption"] == "v0");
    CHECK(j["swap_space_bytes"] == int64_t{4} << 30);
    CHECK(j["independent_sample_lengths"] == true);
    const auto& v0 = j["policies"][0];
    CHECK(v0["preemptions"].get<int>() > 0);
    CHECK(v0["swapped_out"].get<int>() > 0);
    CHECK(v0.contains("swap_fallbacks"));
    // vLLM v1: recompute only.
    r = run_cli(opt() + " --kv-cache-memory 1GiB --requests 200 --n 4 --preemption recompute --json", false);
    REQUIRE(r.status == 0);
    j = nlohmann::json::parse(r.out);
    CHECK(j["preemption"] == "recompute");
    CHECK(j["policies"][0]["swapped_out"] == 0);
    CHECK(j["policies"][0]["recomputed_tokens"].get<int64_t>() > 0);
    // A plain number is GiB, as vLLM's --swap-space; sizes with a unit work too.
    r = run_cli(opt() + " --kv-cache-memory 1GiB --requests 20 --swap-space 2 --json", false);
    CHECK(nlohmann::json::parse(r.out)["swap_space_bytes"] == int64_t{2} << 30);
    r = run_cli(opt() + " --kv-cache-memory 1GiB --requests 20 --swap-space 512MiB --json", false);
    CHECK(nlohmann::json::parse(r.out)["swap_space_bytes"] == int64_t{512} << 20);
    // Same lengths: every sample generates the request's output.
    r = run_cli(opt() + " --kv-cache-memory 4GiB --requests 50 --json", false);
    const int64_t single = nlohmann::json::parse(r.out)["policies"][0]["generated_tokens"].get<int64_t>();
    r = run_cli(opt() + " --kv-cache-memory 4GiB --requests 50 --n 3 --sample-lengths same --json", false);
    CHECK(nlohmann::json::parse(r.out)["policies"][0]["generated_tokens"].get<int64_t>() == 3 * single);
    r = run_cli(opt() + " --kv-cache-memory 4GiB --requests 50 --n 3 --json", false);
    CHECK(nlohmann::json::parse(r.out)["policies"][0]["generated_tokens"].get<int64_t>() != 3 * single);
    r = run_cli(opt() + " --kv-cache-memory 4GiB --sample-lengths random");
    CHECK(r.status == 2);
    CHECK(r.out == "kvbudget: error: --sample-lengths must be independent or same, got 'random'\n");
    r = run_cli(opt() + " --kv-cache-memory 4GiB --preemption never");
    CHECK(r.out == "kvbudget: error: --preemption must be v0, recompute or swap, got 'never'\n");
}

namespace {
// Runs `cmd` through the shell with stderr folded in; returns exit status and output.
Run shell(const std::string& cmd) {
    Run r;
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}
}  // namespace

// The azure-* presets without KVBUDGET_TRACES: a copy of the binary in a folder of
// its own, run from /, finds the source tree it was configured from; laid out as
// an install (bin/ beside share/kvbudget/traces) it takes the installed traces first.
TEST_CASE("simulate: azure presets found relative to the executable and the install, no variable needed") {
    char tmpl[] = "/tmp/kvb_traces_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    const std::string dir = tmpl;
    REQUIRE(shell("mkdir -p " + dir + "/bin && cp " + std::string(KVB_CLI_PATH) + " " + dir + "/bin/kvbudget").status ==
            0);
    const std::string run = "cd / && env -u KVBUDGET_TRACES " + dir + "/bin/kvbudget simulate " + opt() +
                            " --kv-cache-memory 8GiB --workload azure-code --json";
    Run r = shell(run + " --requests 300");
    REQUIRE_MESSAGE(r.status == 0, r.out);
    CHECK(nlohmann::json::parse(r.out)["requests"] == 300);
    REQUIRE(shell("mkdir -p " + dir +
                  "/share/kvbudget/traces && printf 'arrived_at,num_prefill_tokens,num_decode_tokens\\n"
                  "0,10,5\\n1,20,5\\n2,30,5\\n' > " +
                  dir + "/share/kvbudget/traces/azure-llm-2023-code.csv")
                .status == 0);
    r = shell(run);
    REQUIRE_MESSAGE(r.status == 0, r.out);
    CHECK(nlohmann::json::parse(r.out)["requests"] == 3);  // the installed copy, not the source tree's 8,819
    shell("rm -rf " + dir);
}

TEST_CASE("simulate: usage errors exit 2, refused input exits 1") {
    Run r = run_cli(opt());
    CHECK(r.status == 2);
    CHECK(r.out == "kvbudget: error: simulate needs --kv-cache-memory SIZE or --gpu NAME\n");
    r = run_cli(opt() + " --kv-cache-memory 4GiB --policy best");
    CHECK(r.status == 2);
    CHECK(r.out == "kvbudget: error: --policy must be paged, max, pow2, oracle or all, got 'best'\n");
    r = run_cli(opt() + " --kv-cache-memory 4GiB --workload nonsense");
    CHECK(r.status == 2);
    r = run_cli(opt() + " --kv-cache-memory 4GiB --preemption never");
    CHECK(r.status == 2);
    r = run_cli(opt() + " --kv-cache-memory 4GiB --shared-fraction 0.5");
    CHECK(r.status == 2);
    CHECK(r.out == "kvbudget: error: --shared-fraction needs --shared-prefix\n");
    r = run_cli(opt() + " --kv-cache-memory 4GiB --frobnicate");
    CHECK(r.status == 2);

    r = run_cli(opt() + " --kv-cache-memory 4GiB --n 0");
    CHECK(r.status == 1);
    CHECK(r.out == "kvbudget: error: --n must be a whole number from 1 to 1,024, got 0\n");
    r = run_cli(opt() + " --kv-cache-memory 4GiB --rate -3");
    CHECK(r.status == 1);
    CHECK(r.out == "kvbudget: error: --rate must be a positive number of requests per second, got '-3'\n");
    r = run_cli(opt() + " --kv-cache-memory 4GiB --n 2 --beam 2");
    CHECK(r.status == 1);
    CHECK(r.out == "kvbudget: error: use either parallel sampling (n) or beam search, not both\n");
    r = run_cli(opt() + " --kv-cache-memory 20MiB");
    CHECK(r.status == 1);
    CHECK(r.out ==
          "kvbudget: error: paged: the KV cache holds 5 usable blocks of 16 tokens, fewer than the 128 one sequence "
          "of max model length 2,048 needs (the null block is not usable)\n");
    r = run_cli(opt() + " --gpu tpu-v9");
    CHECK(r.status == 1);
    r = run_cli(opt() + " --kv-cache-memory 4GiB --workload /nonexistent/trace.csv");
    CHECK(r.status == 1);
    CHECK(r.out == "kvbudget: error: cannot read /nonexistent/trace.csv\n");
    {
        std::ofstream f("/tmp/kvb_sim_bad_trace.csv");
        f << "arrived_at,num_prefill_tokens,num_decode_tokens\n0,10,5\n1,ten,5\n";
    }
    r = run_cli(opt() + " --kv-cache-memory 4GiB --workload /tmp/kvb_sim_bad_trace.csv");
    CHECK(r.status == 1);
    CHECK(r.out ==
          "kvbudget: error: line 3 of kvb_sim_bad_trace.csv: num_prefill_tokens \"ten\" is not a token count (an "
          "integer from 1 to 10,000,000)\n");
    std::remove("/tmp/kvb_sim_bad_trace.csv");
    {
        std::ofstream f("/tmp/kvb_sim_unsorted.csv");
        f << "arrived_at,num_prefill_tokens,num_decode_tokens\n3,10,5\n1,10,5\n2,10,5\n";
    }
    r = run_cli(opt() + " --kv-cache-memory 4GiB --workload /tmp/kvb_sim_unsorted.csv");
    CHECK(r.status == 0);
    CHECK(r.out.find("\nnote: kvb_sim_unsorted.csv: 2 of 3 requests arrive earlier than a request listed before "
                     "them; the simulator sorted the trace by arrival time\n") != std::string::npos);
    std::remove("/tmp/kvb_sim_unsorted.csv");
}

TEST_CASE("simulate: a trace file is read in pieces; what cannot be a trace file says why") {
    const std::string dir = "/tmp/kvb_sim_cli_dir.csv";
    ::mkdir(dir.c_str(), 0700);
    Run r = run_cli(opt() + " --kv-cache-memory 4GiB --workload " + dir);
    CHECK(r.status == 1);
    CHECK(r.out == "kvbudget: error: " + dir + " is a directory: give a trace CSV file\n");
    ::rmdir(dir.c_str());
    // A trace larger than one 64 KiB read, with a line no trace has at its end.
    const std::string path = "/tmp/kvb_sim_cli_long.csv";
    {
        std::ofstream f(path);
        f << "arrived_at,num_prefill_tokens,num_decode_tokens\n";
        for (int i = 0; i < 5000; ++i) f << i * 0.25 << ",100,20\n";
        f << std::string(70'000, '7') << "\n";
    }
    r = run_cli(opt() + " --kv-cache-memory 4GiB --workload " + path);
    CHECK(r.status == 1);
    CHECK(r.out == "kvbudget: error: line 5002 of kvb_sim_cli_long.csv: longer than 65,536 bytes: not a trace line\n");
    {
        std::ofstream f(path);
        f << "arrived_at,num_prefill_tokens,num_decode_tokens\n";
        for (int i = 0; i < 5000; ++i) f << i * 0.25 << ",100,20\n";
    }
    r = run_cli(opt() + " --kv-cache-memory 4GiB --workload " + path + " --json", false);
    std::remove(path.c_str());
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["policies"][0]["finished"] == 5000);
    CHECK(j["requests"] == 5000);
}
