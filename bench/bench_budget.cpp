// Native cost of parse + budget per model, for every config fixture.
// Prints microseconds per operation: the median of 9 batches, measured as thread CPU
// time (CLOCK_THREAD_CPUTIME_ID) so that other processes on a shared machine do not
// inflate it. Goal: a budget computation (vLLM engine, default estimates) in at most 50 us.
// Usage: bench_budget [iterations per batch, default 200]
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "budget/budget.h"
#include "model/model.h"

namespace {

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

template <class F>
double median_us(F&& f, int batches, int per_batch) {
    std::vector<double> t;
    for (int b = 0; b < batches; ++b) {
        timespec t0{}, t1{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        for (int i = 0; i < per_batch; ++i) f();
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        const double us = double(t1.tv_sec - t0.tv_sec) * 1e6 + double(t1.tv_nsec - t0.tv_nsec) / 1e3;
        t.push_back(us / per_batch);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

volatile int64_t sink = 0;

}  // namespace

int main(int argc, char** argv) {
    const int per_batch = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
    const std::string dir = std::string(KVB_FIXTURES) + "/configs/";
    std::vector<std::string> files;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            std::string n = e->d_name;
            if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) files.push_back(n);
        }
        closedir(d);
    }
    std::sort(files.begin(), files.end());
    std::printf("%-48s %10s %12s %12s %14s\n", "model", "parse_us", "budget_us", "llamacpp_us", "parse+budget");
    double worst = 0;
    for (const std::string& f : files) {
        const std::string text = read(dir + f);
        auto m = kvb::parse_config(text, f);
        if (!m) {
            std::printf("%-48s parse error: %s\n", f.c_str(), m.error().message.c_str());
            continue;
        }
        kvb::BudgetInputs in;
        in.gpu = "h100";
        in.gpu_count = 8;
        if (m->dims.num_attention_heads % 8 != 0) in.gpu_count = 1;
        in.context = m->max_position_embeddings > 0 ? std::min<int64_t>(m->max_position_embeddings, 32768) : 2048;
        kvb::BudgetInputs lin = in;
        lin.engine = kvb::BudgetEngine::LlamaCpp;
        lin.gpu_count = 1;
        auto probe = kvb::compute_budget(m.value(), in);
        if (!probe && in.gpu_count > 1) {  // heads that TP 8 cannot split: one GPU
            in.gpu_count = 1;
            probe = kvb::compute_budget(m.value(), in);
        }
        if (!probe) {
            std::printf("%-48s budget error: %s\n", f.c_str(), probe.error().message.c_str());
            continue;
        }
        const double parse = median_us([&] { sink = sink + kvb::parse_config(text, f)->layers.size(); }, 9, per_batch);
        const double budget =
            median_us([&] { sink = sink + kvb::compute_budget(m.value(), in)->kv_pool_bytes; }, 9, per_batch);
        const double llama = median_us(
            [&] {
                auto r = kvb::compute_budget(m.value(), lin);
                sink = sink + (r ? r->max_context : 0);
            },
            9, std::max(1, per_batch / 10));
        worst = std::max(worst, budget);
        std::printf("%-48s %10.2f %12.2f %12.2f %14.2f\n", f.substr(0, f.size() - 5).c_str(), parse, budget, llama,
                    parse + budget);
    }
    std::printf("worst vLLM budget computation: %.2f us CPU (goal <= 50 us)\n", worst);
    return 0;
}
