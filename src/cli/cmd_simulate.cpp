// kvbudget simulate: replay a workload through paged (vLLM) and contiguous
// (Orca Max / Pow2 / Oracle) KV allocation and print where the memory went,
// side by side like Fig. 2 of the PagedAttention paper.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "args.h"
#include "budget/budget.h"
#include "commands.h"
#include "model/dtype.h"
#include "budget/gpus.h"
#include "kv/kv.h"
#include "sim/simulator.h"
#include "sim/setup.h"
#include "base/units.h"
#include "model/weights.h"

namespace kvb::cli {

namespace {

const char* kHelp = R"(Usage: kvbudget simulate CONFIG (--kv-cache-memory SIZE | --gpu NAME [--gpu-memory-utilization F]) [options] [--json]

Replays a workload through an iteration-level scheduler (vLLM v1 style: chunked
prefill, max-num-seqs, FCFS preemption of the newest running request) and one KV
allocator, and reports the time-weighted split of the KV memory into token
states, reservation, internal and external fragmentation, cached and free.

  --kv-cache-memory SIZE        KV cache bytes (8GiB, 24GB, 512MiB or bytes)
  --gpu NAME                    GPU from the catalog: the KV pool is what vLLM would get (as
                                kvbudget budget computes it: total x utilization - weights -
                                activations - non-torch - CUDA graphs); also sets the time model
                                (with --kv-cache-memory: time model only; default time model a100-80gb)
  --gpu-memory-utilization F    fraction of the GPU vLLM may use (default 0.9)
  --policy P                    paged | max | pow2 | oracle | all (default paged)
  --block-size N                tokens per block, paged (default 16)
  --workload W                  sharegpt | alpaca | azure-conv | azure-code | FILE.csv (default sharegpt)
                                FILE.csv: TIMESTAMP,ContextTokens,GeneratedTokens or
                                arrived_at,num_prefill_tokens,num_decode_tokens
  --rate R                      Poisson arrivals at R requests/s (default: presets all at t=0,
                                traces at their own timestamps)
  --requests N                  number of requests (default: 1000 for presets, the whole trace)
  --seed N                      workload seed (default 0)
  --n N                         parallel samples per request (share the prompt's blocks)
  --beam N                      beam width (beams share prompt and common history)
  --shared-prefix TOKENS        common system prompt prepended to requests ...
  --shared-fraction F           ... with this probability (default 1)
  --prefix-caching              paged: reuse cached full blocks (hash chain, LRU)
  --max-num-seqs N              default: vLLM's for the GPU with --gpu, else 256
  --max-num-batched-tokens N    default: vLLM's for the GPU with --gpu, else 8192
  --max-model-len N             default: the model's max_position_embeddings; longer requests
                                have their output truncated (prompts that do not fit are refused)
  --preemption M                v0 | recompute | swap (default v0). v0: vLLM v0, the paper's system:
                                groups of several sequences (--n, --beam) are swapped to CPU
                                memory, single sequences recomputed, 1% of the blocks kept free at
                                admission; recompute: vLLM v1 (recompute only, no watermark);
                                swap: swap everything while the swap space lasts
  --swap-space SIZE             CPU swap space (default 4 = 4 GiB, a plain number is GiB as in
                                vLLM; or 8GiB, 512MiB)
  --sample-lengths M            independent | same (default independent): with --n, each sample
                                draws its own output length from the workload's; same: every
                                sample has the request's length (the paper's benchmarks, ignore_eos)
  --json                        {"policies": [{"policy": ..., "token_states_fraction": ..., ...}]}

Fig. 2 of the PagedAttention paper is the "of used" split (--json *_of_used_fraction);
its normalized latency (mean end-to-end latency per output token) is
normalized_latency_s. docs/paging.md lists the commands that reproduce the paper.
)";

std::string pct(double f) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f%%", 100.0 * f);
    return b;
}
std::string fixed(double v, int prec) {
    char b[48];
    std::snprintf(b, sizeof b, "%.*f", prec, v);
    return b;
}
std::string num(double v) {
    if (!std::isfinite(v)) return "null";
    char b[48];
    std::snprintf(b, sizeof b, "%.9g", v);
    return b;
}

// JSON numbers round-trip (17 significant digits): scripts and the WASM build's
// equality test (tests/node/sim.test.mjs) read the exact doubles.
std::string jnum(double v) {
    if (!std::isfinite(v)) return "null";
    char b[48];
    std::snprintf(b, sizeof b, "%.17g", v);
    return b;
}

bool read_file(const std::string& path, std::string* out) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    std::stringstream ss;
    ss << f.rdbuf();
    *out = ss.str();
    return true;
}

// The Azure traces ship in data/traces of the repository and install to
// share/kvbudget/traces. Looked up, first found wins: $KVBUDGET_TRACES; beside the
// executable (an installed bin/ -> ../share/kvbudget/traces, moved with its
// prefix; a build folder one or two levels below the repository -> ../data/traces,
// ../../data/traces); the install prefix and the source tree this binary was
// configured from (a build folder anywhere, e.g. cmake -B /tmp/build); ./data/traces.
std::string find_trace(const std::string& file) {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("KVBUDGET_TRACES")) dirs.push_back(env);
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) {
        std::string exe(buf, static_cast<size_t>(n));
        const std::string dir = exe.substr(0, exe.rfind('/'));
        dirs.push_back(dir + "/../share/kvbudget/traces");
        dirs.push_back(dir + "/../data/traces");
        dirs.push_back(dir + "/../../data/traces");
    }
#ifdef KVB_INSTALL_TRACES_DIR
    dirs.push_back(KVB_INSTALL_TRACES_DIR);
#endif
#ifdef KVB_SOURCE_TRACES_DIR
    dirs.push_back(KVB_SOURCE_TRACES_DIR);
#endif
    dirs.push_back("data/traces");
    for (const auto& d : dirs) {
        std::ifstream f(d + "/" + file);
        if (f) return d + "/" + file;
    }
    return "";
}

bool parse_rate(const std::string& s, double* out) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !(v > 0) || !std::isfinite(v)) return false;
    *out = v;
    return true;
}

void print_json(std::ostream& out, const std::string& model, const sim::SimConfig& c, const std::string& workload,
                int64_t nreq, const std::vector<sim::Summary>& rs) {
    out << "{\"model\":" << json_string(model) << ",\"workload\":" << json_string(workload) << ",\"requests\":" << nreq
        << ",\"kv_cache_bytes\":" << c.kv_capacity_bytes << ",\"kv_bytes_per_token\":" << c.kv_bytes_per_token
        << ",\"block_size\":" << c.block_size << ",\"max_model_len\":" << c.max_model_len
        << ",\"max_num_seqs\":" << c.max_num_seqs << ",\"max_num_batched_tokens\":" << c.max_num_batched_tokens
        << ",\"preemption\":" << json_string(sim::preemption_name(c.preemption))
        << ",\"swap_space_bytes\":" << c.swap_space_bytes
        << ",\"independent_sample_lengths\":" << (c.independent_sample_lengths ? "true" : "false")
        << ",\"policies\":[";
    for (size_t i = 0; i < rs.size(); ++i) {
        const sim::Summary& s = rs[i];
        out << (i ? "," : "") << "{\"policy\":" << json_string(s.policy) << ",\"requests\":" << s.requests
            << ",\"finished\":" << s.finished << ",\"refused\":" << s.refused << ",\"truncated\":" << s.truncated
            << ",\"preemptions\":" << s.preemptions << ",\"swapped_out\":" << s.swapped_out
            << ",\"swap_fallbacks\":" << s.swap_fallbacks
            << ",\"recomputed_tokens\":" << s.recomputed_tokens << ",\"steps\":" << s.steps
            << ",\"makespan_s\":" << jnum(s.makespan_s) << ",\"capacity_tokens\":" << s.capacity_tokens
            << ",\"num_blocks\":" << s.num_blocks
            << ",\"token_states_fraction\":" << jnum(s.memory.token_states)
            << ",\"reserved_fraction\":" << jnum(s.memory.reserved)
            << ",\"internal_fragmentation_fraction\":" << jnum(s.memory.internal_fragmentation)
            << ",\"external_fragmentation_fraction\":" << jnum(s.memory.external_fragmentation)
            << ",\"cached_fraction\":" << jnum(s.memory.cached) << ",\"free_fraction\":" << jnum(s.memory.free)
            << ",\"null_block_fraction\":" << jnum(s.memory.null_block)
            << ",\"token_states_of_used_fraction\":" << jnum(s.token_states_of_used)
            << ",\"reserved_of_used_fraction\":" << jnum(s.of_used.reserved)
            << ",\"internal_fragmentation_of_used_fraction\":" << jnum(s.of_used.internal_fragmentation)
            << ",\"external_fragmentation_of_used_fraction\":" << jnum(s.of_used.external_fragmentation)
            << ",\"mean_running\":" << jnum(s.mean_running) << ",\"max_running\":" << s.max_running
            << ",\"mean_waiting\":" << jnum(s.mean_waiting) << ",\"max_waiting\":" << s.max_waiting
            << ",\"sharing_saved_fraction\":" << jnum(s.sharing_saved) << ",\"max_blocks_saved\":" << s.max_blocks_saved
            << ",\"cow_copies\":" << s.cow_copies << ",\"prefix_hit_tokens\":" << s.prefix_hit_tokens
            << ",\"prompt_tokens\":" << s.prompt_tokens << ",\"generated_tokens\":" << s.generated_tokens
            << ",\"throughput_tokens_per_s\":" << jnum(s.throughput_tokens_per_s)
            << ",\"requests_per_s\":" << jnum(s.requests_per_s) << ",\"ttft_mean_s\":" << jnum(s.ttft_mean_s)
            << ",\"ttft_p50_s\":" << jnum(s.ttft_p50_s) << ",\"ttft_p90_s\":" << jnum(s.ttft_p90_s)
            << ",\"ttft_p99_s\":" << jnum(s.ttft_p99_s) << ",\"tpot_mean_s\":" << jnum(s.tpot_mean_s)
            << ",\"tpot_p50_s\":" << jnum(s.tpot_p50_s) << ",\"tpot_p90_s\":" << jnum(s.tpot_p90_s)
            << ",\"tpot_p99_s\":" << jnum(s.tpot_p99_s) << ",\"e2e_mean_s\":" << jnum(s.e2e_mean_s)
            << ",\"e2e_p50_s\":" << jnum(s.e2e_p50_s) << ",\"e2e_p90_s\":" << jnum(s.e2e_p90_s)
            << ",\"e2e_p99_s\":" << jnum(s.e2e_p99_s)
            << ",\"normalized_latency_s\":" << jnum(s.normalized_latency_s) << "}";
    }
    out << "]}\n";
}

void print_table(std::ostream& out, const std::vector<sim::Summary>& rs) {
    std::vector<std::pair<std::string, std::vector<std::string>>> rows;
    auto row = [&](const std::string& name, auto f) {
        std::vector<std::string> cells;
        for (const auto& s : rs) cells.push_back(f(s));
        rows.emplace_back(name, cells);
    };
    using S = sim::Summary;
    row("policy", [](const S& s) { return s.policy; });
    row("token states", [](const S& s) { return pct(s.memory.token_states); });
    row("reserved", [](const S& s) { return pct(s.memory.reserved); });
    row("internal fragmentation", [](const S& s) { return pct(s.memory.internal_fragmentation); });
    row("external fragmentation", [](const S& s) { return pct(s.memory.external_fragmentation); });
    row("cached (prefix)", [](const S& s) { return pct(s.memory.cached); });
    row("free", [](const S& s) { return pct(s.memory.free); });
    row("null block", [](const S& s) { return pct(s.memory.null_block); });
    row("Fig. 2 (of used): token states", [](const S& s) { return pct(s.of_used.token_states); });
    row("  reservation", [](const S& s) { return pct(s.of_used.reserved); });
    row("  internal fragmentation", [](const S& s) { return pct(s.of_used.internal_fragmentation); });
    row("  external fragmentation & others", [](const S& s) { return pct(s.of_used.external_fragmentation); });
    row("finished", [](const S& s) { return with_commas(s.finished); });
    row("refused / truncated", [](const S& s) { return with_commas(s.refused) + " / " + with_commas(s.truncated); });
    row("preemptions", [](const S& s) { return with_commas(s.preemptions); });
    row("swapped out / recomputed tokens",
        [](const S& s) { return with_commas(s.swapped_out) + " / " + with_commas(s.recomputed_tokens); });
    row("running (mean / max)", [](const S& s) { return fixed(s.mean_running, 1) + " / " + std::to_string(s.max_running); });
    row("blocks saved by sharing", [](const S& s) { return pct(s.sharing_saved); });
    row("throughput (tokens/s)", [](const S& s) { return fixed(s.throughput_tokens_per_s, 0); });
    row("TTFT p50 / p99 (s)", [](const S& s) { return fixed(s.ttft_p50_s, 2) + " / " + fixed(s.ttft_p99_s, 2); });
    row("TPOT p50 (ms)", [](const S& s) { return fixed(1000 * s.tpot_p50_s, 1); });
    row("end-to-end p50 (s)", [](const S& s) { return fixed(s.e2e_p50_s, 2); });
    row("normalized latency (s/token)", [](const S& s) { return fixed(s.normalized_latency_s, 3); });
    row("simulated time (s)", [](const S& s) { return fixed(s.makespan_s, 1); });
    size_t w0 = 0;
    std::vector<size_t> w(rs.size(), 0);
    for (const auto& r : rows) {
        w0 = std::max(w0, r.first.size());
        for (size_t i = 0; i < r.second.size(); ++i) w[i] = std::max(w[i], r.second[i].size());
    }
    for (const auto& r : rows) {
        out << r.first << std::string(w0 - r.first.size(), ' ');
        for (size_t i = 0; i < r.second.size(); ++i) out << "  " << std::string(w[i] - r.second[i].size(), ' ') << r.second[i];
        out << "\n";
    }
}

}  // namespace

int cmd_simulate(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    int rc = kOk;
    auto a = parse_command(
        "simulate", argv,
        ArgSpec{{"--kv-cache-memory", "--gpu", "--gpu-memory-utilization", "--policy", "--block-size", "--workload",
                 "--rate", "--requests", "--seed", "--n", "--beam", "--shared-prefix", "--shared-fraction",
                 "--max-num-seqs", "--max-num-batched-tokens", "--max-model-len", "--preemption", "--swap-space",
                 "--sample-lengths"},
                {"--prefix-caching"}},
        kHelp, out, err, rc);
    if (!a) return rc;
    auto usage = [&](const std::string& msg) {
        err << "kvbudget: error: " << msg << "\n";
        return kUsage;
    };
    if (!a->has("--kv-cache-memory") && !a->has("--gpu"))
        return usage("simulate needs --kv-cache-memory SIZE or --gpu NAME");
    if (a->has("--gpu-memory-utilization") && !a->has("--gpu"))
        return usage("--gpu-memory-utilization needs --gpu");
    if (a->has("--gpu-memory-utilization") && a->has("--kv-cache-memory"))
        return usage("--gpu-memory-utilization sizes the KV cache from the GPU; it cannot be combined with --kv-cache-memory");
    if (a->has("--shared-fraction") && !a->has("--shared-prefix")) return usage("--shared-fraction needs --shared-prefix");

    std::vector<sim::Policy> policies;
    const std::string pol = a->get("--policy", "paged");
    if (pol == "all") {
        policies = {sim::Policy::Paged, sim::Policy::Max, sim::Policy::Pow2, sim::Policy::Oracle};
    } else {
        sim::Policy p;
        if (!sim::parse_policy(pol, &p)) return usage("--policy must be paged, max, pow2, oracle or all, got '" + pol + "'");
        policies = {p};
    }
    const std::string pre = a->get("--preemption", "v0");
    sim::Preemption preemption;
    if (!sim::parse_preemption(pre, &preemption))
        return usage("--preemption must be v0, recompute or swap, got '" + pre + "'");
    const std::string slen = a->get("--sample-lengths", "independent");
    if (slen != "independent" && slen != "same")
        return usage("--sample-lengths must be independent or same, got '" + slen + "'");
    int64_t swap_space = int64_t{4} << 30;
    if (a->has("--swap-space")) {
        const std::string v = a->get("--swap-space");
        char* end = nullptr;
        const double gib = std::strtod(v.c_str(), &end);
        if (!v.empty() && end == v.c_str() + v.size()) {  // a plain number: GiB, as vLLM's --swap-space
            if (!(gib >= 0 && gib <= 1e6)) return usage("--swap-space must be between 0 and 1,000,000 GiB, got '" + v + "'");
            swap_space = static_cast<int64_t>(gib * static_cast<double>(int64_t{1} << 30));
        } else {
            auto sz = get_size(*a, "--swap-space", 0, err);
            if (!sz) return kUsage;
            swap_space = *sz;
        }
    }

    auto model = load_model(a->positional[0], err);
    if (!model) return kRefused;

    auto kvmem = get_size(*a, "--kv-cache-memory", 0, err);
    auto util = get_fraction(*a, "--gpu-memory-utilization", 0.9, err);
    auto bs = get_count(*a, "--block-size", 16, err);
    auto nreq = get_count(*a, "--requests", 0, err);
    auto seed = get_count(*a, "--seed", 0, err);
    auto n = get_count(*a, "--n", 1, err);
    auto beam = get_count(*a, "--beam", 1, err);
    auto prefix = get_count(*a, "--shared-prefix", 0, err);
    auto frac = get_fraction(*a, "--shared-fraction", 1.0, err);
    auto mns = get_count(*a, "--max-num-seqs", 256, err);
    auto mnbt = get_count(*a, "--max-num-batched-tokens", 8192, err);
    const bool from_gpu = !a->has("--kv-cache-memory");
    auto mml = get_count(*a, "--max-model-len", model->max_position_embeddings, err);
    if (!kvmem || !util || !bs || !nreq || !seed || !n || !beam || !prefix || !frac || !mns || !mnbt || !mml)
        return kRefused;
    auto refuse = [&](const std::string& msg) {
        err << "kvbudget: error: " << msg << "\n";
        return kRefused;
    };
    const int64_t kI32 = 2'000'000'000;
    if (*bs < 1 || *bs > 4096) return refuse("--block-size must be between 1 and 4096");
    if (*n < 1 || *n > 1024) return refuse("--n must be between 1 and 1024");
    if (*beam < 1 || *beam > 1024) return refuse("--beam must be between 1 and 1024");
    if (*mns < 1 || *mns > kI32) return refuse("--max-num-seqs must be at least 1");
    if (*mnbt < 1 || *mnbt > kI32) return refuse("--max-num-batched-tokens must be at least 1");
    if (*mml == 0) return refuse("the config has no max_position_embeddings: pass --max-model-len");
    if (*mml < 2 || *mml > 10'000'000) return refuse("--max-model-len must be between 2 and 10,000,000");
    if (*prefix > 10'000'000) return refuse("--shared-prefix must be at most 10,000,000 tokens");
    if (a->has("--shared-prefix") && *prefix == 0) return refuse("--shared-prefix must be at least 1 token");
    if (a->has("--requests") && *nreq == 0) return refuse("--requests must be at least 1");
    if (a->has("--kv-cache-memory") && *kvmem <= 0) return refuse("--kv-cache-memory must be more than 0 bytes");

    SimSetupInputs si;
    si.kv_cache_memory = from_gpu ? 0 : *kvmem;
    if (a->has("--gpu")) si.gpu = a->get("--gpu");
    si.gpu_memory_utilization = *util;
    si.block_size = *bs;
    si.max_model_len = *mml;
    if (a->has("--max-num-seqs")) si.max_num_seqs = *mns;
    if (a->has("--max-num-batched-tokens")) si.max_num_batched_tokens = *mnbt;
    si.n = *n;
    si.beam = *beam;
    si.preemption = preemption;
    si.swap_space_bytes = swap_space;
    si.independent_sample_lengths = slen == "independent";
    si.seed = static_cast<uint64_t>(*seed);
    auto setup = sim_setup(*model, si);
    if (!setup) return refuse(setup.error().message);
    sim::SimConfig c = setup->config;
    const IdealKv& ideal = setup->ideal;
    const Gpu* gpu = setup->time_gpu;
    const BudgetResult& budget = setup->budget;
    const int64_t weights_bytes = setup->weights_bytes;

    // Workload.
    WorkloadInputs wi;
    wi.seed = c.seed;
    wi.requests = *nreq;
    wi.shared_prefix = *prefix;
    wi.shared_fraction = *frac;
    const std::string wl = a->get("--workload", "sharegpt");
    std::string workload_desc = wl;
    if (wl == "sharegpt" || wl == "alpaca") {
        wi.preset = wl;
    } else {
        std::string path = wl;
        if (wl == "azure-conv" || wl == "azure-code") {
            path = find_trace(wl == "azure-conv" ? "azure-llm-2023-conv.csv" : "azure-llm-2023-code.csv");
            if (path.empty())
                return refuse("the " + wl + " trace was not found (looked in $KVBUDGET_TRACES, share/kvbudget/traces and "
                              "data/traces beside the binary, the install prefix and the source tree); pass its CSV "
                              "path with --workload FILE.csv");
        } else if (wl.size() < 4 || wl.compare(wl.size() - 4, 4, ".csv") != 0) {
            return usage("--workload must be sharegpt, alpaca, azure-conv, azure-code or a .csv file, got '" + wl + "'");
        }
        if (!read_file(path, &wi.trace_text)) return refuse("cannot read " + path);
        wi.preset = "trace";
        wi.trace_name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
    }
    if (a->has("--rate") && !parse_rate(a->get("--rate"), &wi.rate))
        return refuse("--rate must be a positive number of requests per second, got '" + a->get("--rate") + "'");
    auto spec = workload_spec(wi);
    if (!spec) return refuse(spec.error().message);
    const sim::WorkloadSpec& w = spec.value();
    auto reqs = sim::make_workload(w);
    if (!reqs) return refuse(reqs.error().message);

    std::vector<sim::Summary> results;
    for (sim::Policy p : policies) {
        c.policy = p;
        c.prefix_caching = a->has("--prefix-caching") && p == sim::Policy::Paged;
        auto r = sim::simulate(c, reqs.value());
        if (!r) return refuse(std::string(sim::policy_name(p)) + ": " + r.error().message);
        results.push_back(r->summary);
    }

    if (a->has("--json")) {
        print_json(out, model->name, c, workload_desc, static_cast<int64_t>(reqs->size()), results);
        return kOk;
    }
    const char* arrivals = w.arrival == sim::Arrival::Batch ? "all at t=0"
                           : w.arrival == sim::Arrival::Poisson ? "Poisson"
                                                                 : "trace timestamps";
    out << model->name << ": " << format_bytes(c.kv_bytes_per_token) << " KV per token, KV cache "
        << format_bytes(c.kv_capacity_bytes) << " (" << with_commas(c.kv_capacity_bytes / c.kv_bytes_per_token)
        << " token slots)";
    if (from_gpu)
        out << " = " << gpu->name << " x " << fixed(*util, 2) << " - weights " << format_bytes(weights_bytes)
            << " - activations, runtime, CUDA graphs " << format_bytes(budget.activation_bytes + budget.overhead_bytes + budget.cudagraph_bytes);
    out << "\n";
    out << "workload: " << workload_desc << ", " << with_commas(static_cast<int64_t>(reqs->size())) << " requests ("
        << arrivals;
    if (w.arrival == sim::Arrival::Poisson) out << " at " << num(w.rate) << " req/s";
    out << "), seed " << *seed;
    if (c.n > 1) out << ", n=" << c.n << (c.independent_sample_lengths ? " (own lengths)" : " (same length)");
    if (c.beam_width > 1) out << ", beam " << c.beam_width;
    if (w.shared_prefix > 0) out << ", shared prefix " << w.shared_prefix << " tokens on " << pct(w.shared_fraction);
    out << "\n";
    out << "block size " << c.block_size << ", max-model-len " << with_commas(c.max_model_len) << ", max-num-seqs "
        << c.max_num_seqs << ", max-num-batched-tokens " << c.max_num_batched_tokens << ", preemption " << pre
        << (c.preemption != sim::Preemption::Recompute ? ", swap space " + format_bytes(c.swap_space_bytes) : "")
        << (a->has("--prefix-caching") ? ", prefix caching" : "") << "; time model: " << gpu->name << "\n\n";
    print_table(out, results);
    if (ideal.windowed_bytes_per_token > 0 || ideal.state_bytes_per_seq > 0)
        err << "note: only the context-proportional KV (full and MLA attention layers) is simulated; sliding-window "
               "and recurrent-state layers are left out\n";
    return kOk;
}

}  // namespace kvb::cli
