// Peak memory of the paging simulator against the workload's size (issue 14, item
// 10): a ShareGPT workload at a steady 5 requests/s (so the requests in flight
// stay about the same however long the run) drawn as the run goes, against the
// same requests materialized first; and a trace file (arrived_at CSV) of the same
// size, scanned and then read as the run goes. Each case runs in its own process so its peak RSS
// (getrusage ru_maxrss) is its own. Prints numbers; asserts nothing.
//   bench_sim_memory            10k, 100k, 1M requests
//   bench_sim_memory 10000000   also 10M (the documented maximum; minutes)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "sim/simulator.h"

using namespace kvb::sim;

namespace {

SimConfig config() {
    SimConfig c;  // Qwen3-0.6B-like: 112 KiB of KV per token, 4 GiB of KV, A100-class time model
    c.policy = Policy::Paged;
    c.kv_bytes_per_token = 114688;
    c.kv_capacity_bytes = int64_t{4} << 30;
    c.max_model_len = 4096;
    c.series_points = 200;
    c.latency.weights_bytes = 1.2e9;
    c.latency.active_params = 0.6e9;
    c.latency.attn_flops_per_pair = 4.0 * 2048 * 28;
    c.latency.bandwidth_bytes_per_s = 2e12;
    c.latency.flops_per_s = 312e12;
    return c;
}

WorkloadSpec sharegpt(int64_t n) {
    WorkloadSpec w;
    w.lengths = Lengths::ShareGpt;
    w.arrival = Arrival::Poisson;
    w.rate = 5;
    w.requests = n;
    return w;
}

// One case, in this (child) process; returns the number of finished requests.
int64_t run_case(int which, int64_t n) {
    const SimConfig c = config();
    if (which == 0) {  // streamed
        auto st = RequestStream::create(sharegpt(n));
        Simulator sim(c, st.value());
        while (!sim.done()) sim.run(1 << 20);
        return sim.summary().finished;
    }
    if (which == 1) {  // materialized first
        auto reqs = make_workload(sharegpt(n));
        Simulator sim(c, reqs.value());
        while (!sim.done()) sim.run(1 << 20);
        return sim.summary().finished;
    }
    // A trace: a CSV file (written a line at a time), scanned, then read as the run goes,
    // as `kvbudget simulate --workload FILE.csv` does.
    const std::string path = "/tmp/kvb_bench_trace_" + std::to_string(getpid()) + ".csv";
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        std::fputs("arrived_at,num_prefill_tokens,num_decode_tokens\n", f);
        auto st = RequestStream::create(sharegpt(n));
        Request q;
        while (st->size() > 0 && st.value().next(&q))
            std::fprintf(f, "%.6f,%d,%d\n", q.arrival_s, q.prompt_tokens, q.output_tokens);
        std::fclose(f);
    }
    auto file = std::make_shared<std::ifstream>(path, std::ios::binary);
    TraceSource src = [file](int64_t at, char* buf, int64_t k) -> int64_t {
        file->clear();
        file->seekg(at);
        file->read(buf, k);
        return static_cast<int64_t>(file->gcount());
    };
    WorkloadSpec w;
    w.arrival = Arrival::Trace;
    w.lengths = Lengths::Trace;
    w.trace_file = scan_trace(src, "trace.csv").value();
    Simulator sim(c, RequestStream::create(w).value());
    while (!sim.done()) sim.run(1 << 20);
    std::remove(path.c_str());
    return sim.summary().finished;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<int64_t> sizes = {10'000, 100'000, 1'000'000};
    if (argc > 1) sizes.push_back(std::atoll(argv[1]));
    const char* names[] = {"ShareGPT, streamed", "ShareGPT, materialized first", "CSV trace file, streamed"};
    std::printf("paging simulator, paged, 5 req/s; peak RSS per run (own process)\n");
    std::printf("%-30s %12s %12s %10s %10s\n", "workload", "requests", "peak RSS", "wall", "finished");
    for (int which = 0; which < 3; ++which)
        for (int64_t n : sizes) {
            const auto t0 = std::chrono::steady_clock::now();
            int fds[2];
            if (pipe(fds) != 0) return 1;
            const pid_t pid = fork();
            if (pid == 0) {
                close(fds[0]);
                const long long fin = run_case(which, n);
                if (write(fds[1], &fin, sizeof fin) != sizeof fin) _exit(1);
                _exit(0);
            }
            close(fds[1]);
            long long fin = -1;
            if (read(fds[0], &fin, sizeof fin) != sizeof fin) fin = -1;
            close(fds[0]);
            int status = 0;
            struct rusage ru {};
            wait4(pid, &status, 0, &ru);
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::printf("%-30s %12lld %9.1f MB %8.1f s %10lld\n", names[which], static_cast<long long>(n),
                        static_cast<double>(ru.ru_maxrss) / 1024.0, wall, fin);
            std::fflush(stdout);
        }
    return 0;
}
