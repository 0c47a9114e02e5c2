// kvbudget simulate: replay a workload through paged (vLLM) and contiguous
// (Orca Max / Pow2 / Oracle) KV allocation and print where the memory went,
// side by side like Fig. 2 of the PagedAttention paper.

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include "args.h"
#include "base/units.h"
#include "budget/budget.h"
#include "budget/gpus.h"
#include "commands.h"
#include "kv/kv.h"
#include "model/dtype.h"
#include "model/weights.h"
#include "report/sim_json.h"
#include "sim/session.h"
#include "sim/simulator.h"

namespace kvb::cli {

namespace {

const char* kHelp =
    R"(Usage: kvbudget simulate CONFIG (--kv-cache-memory SIZE | --gpu NAME [--gpu-memory-utilization F]) [options] [--json]

Replays a workload through an iteration-level scheduler (vLLM v1 style: chunked
prefill, max-num-seqs, FCFS preemption of the newest running request) and one KV
allocator, and reports the time-weighted split of the KV memory into token
states, reservation, internal and external fragmentation, cached and free.

  --kv-cache-memory SIZE        KV cache bytes (8GiB, 24GB, 512MiB or bytes)
  --gpu NAME                    GPU from the catalog: the KV pool is what vLLM would get (as
                                kvbudget budget computes it: total x utilization - weights -
                                activations - non-torch - CUDA graphs); also sets the time model
                                (with --kv-cache-memory: time model only; default time model a100-80gb)
  --gpu-memory-utilization F    fraction of the GPU vLLM may use (default vLLM's: 0.92, 0.9 before 0.20)
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

// A figure the run had no sample for (sim::kNotMeasured: a policy that served nothing
// has no latency) reads as not measured, never as a 0 that looks like the best value.
const char* const kNotMeasuredText = "\u2014";

std::string pct(double f) {
    if (!sim::measured(f)) return kNotMeasuredText;
    char b[32];
    std::snprintf(b, sizeof b, "%.1f%%", 100.0 * f);
    return b;
}
std::string fixed(double v, int prec) {
    if (!sim::measured(v)) return kNotMeasuredText;
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

// A trace file read in pieces by offset (the simulator scans it once, then reads it
// again as the run goes), so its size never sets the memory used. Only regular
// files: a device or a pipe could not be read twice.
std::string open_trace(const std::string& path, sim::TraceSource* out) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return "cannot read " + path;
    if (S_ISDIR(st.st_mode)) return path + " is a directory: give a trace CSV file";
    if (!S_ISREG(st.st_mode)) return path + " is not a regular file (a device or a pipe): give a trace CSV file";
    auto f = std::make_shared<std::ifstream>(path, std::ios::binary);
    if (!*f) return "cannot read " + path;
    *out = [f](int64_t at, char* buf, int64_t n) -> int64_t {
        f->clear();
        if (!f->seekg(at)) return -1;
        f->read(buf, n);
        if (f->bad()) return -1;
        return static_cast<int64_t>(f->gcount());
    };
    return "";
}

// The Azure traces ship in data/traces of the repository and install to
// share/kvbudget/traces. Looked up, first found wins: $KVBUDGET_TRACES; beside the
// executable (an installed bin/ -> ../share/kvbudget/traces, moved with its
// prefix; a build folder one or two levels below the repository -> ../data/traces,
// ../../data/traces); the install prefix and the source tree this binary was
// configured from (a build folder anywhere, e.g. cmake -B /tmp/build); ./data/traces.
std::string find_trace(const std::string& file) {
    std::vector<std::string> dirs =
        data_dirs("KVBUDGET_TRACES", "traces", "data/traces", {KVB_INSTALL_TRACES_DIR, KVB_SOURCE_TRACES_DIR});
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
    row("running (mean / max)",
        [](const S& s) { return fixed(s.mean_running, 1) + " / " + std::to_string(s.max_running); });
    row("blocks saved by sharing", [](const S& s) { return pct(s.sharing_saved); });
    row("throughput (tokens/s)", [](const S& s) { return fixed(s.throughput_tokens_per_s, 0); });
    row("TTFT p50 / p99 (s)", [](const S& s) { return fixed(s.ttft_p50_s, 2) + " / " + fixed(s.ttft_p99_s, 2); });
    row("TPOT p50 (ms)", [](const S& s) { return fixed(1000 * s.tpot_p50_s, 1); });
    row("end-to-end p50 (s)", [](const S& s) { return fixed(s.e2e_p50_s, 2); });
    row("normalized latency (s/token)", [](const S& s) { return fixed(s.normalized_latency_s, 3); });
    row("simulated time (s)", [](const S& s) { return fixed(s.makespan_s, 1); });
    // Widths in characters, not bytes: the not-measured dash is three bytes of UTF-8.
    auto width = [](const std::string& t) {
        return static_cast<size_t>(std::count_if(t.begin(), t.end(), [](char c) { return (c & 0xC0) != 0x80; }));
    };
    size_t w0 = 0;
    std::vector<size_t> w(rs.size(), 0);
    for (const auto& r : rows) {
        w0 = std::max(w0, r.first.size());
        for (size_t i = 0; i < r.second.size(); ++i) w[i] = std::max(w[i], width(r.second[i]));
    }
    for (const auto& r : rows) {
        out << r.first << std::string(w0 - r.first.size(), ' ');
        for (size_t i = 0; i < r.second.size(); ++i)
            out << "  " << std::string(w[i] - width(r.second[i]), ' ') << r.second[i];
        out << "\n";
    }
}

}  // namespace

int cmd_simulate(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    int rc = kOk;
    auto a =
        parse_command("simulate", argv,
                      ArgSpec{{"--kv-cache-memory", "--gpu", "--gpu-memory-utilization", "--policy", "--block-size",
                               "--workload", "--rate", "--requests", "--seed", "--n", "--beam", "--shared-prefix",
                               "--shared-fraction", "--max-num-seqs", "--max-num-batched-tokens", "--max-model-len",
                               "--preemption", "--swap-space", "--sample-lengths"},
                              {"--prefix-caching"}},
                      kHelp, out, err, rc);
    if (!a) return rc;
    auto usage = [&](const std::string& msg) {
        err << "kvbudget: error: " << msg << "\n";
        return kUsage;
    };
    if (!a->has("--kv-cache-memory") && !a->has("--gpu"))
        return usage("simulate needs --kv-cache-memory SIZE or --gpu NAME");
    if (a->has("--gpu-memory-utilization") && !a->has("--gpu")) return usage("--gpu-memory-utilization needs --gpu");
    if (a->has("--gpu-memory-utilization") && a->has("--kv-cache-memory"))
        return usage(
            "--gpu-memory-utilization sizes the KV cache from the GPU; it cannot be combined with --kv-cache-memory");
    if (a->has("--shared-fraction") && !a->has("--shared-prefix"))
        return usage("--shared-fraction needs --shared-prefix");

    // The flags fill SimInputs, which check themselves (src/sim/session.cpp) in the
    // same terms as the page's refusals; a bad name is a usage error, as before.
    SimInputs in;
    if (a->has("--policy")) in.policies = {a->get("--policy")};
    in.preemption = a->get("--preemption", "v0");
    in.sample_lengths = a->get("--sample-lengths", "independent");
    if (a->has("--swap-space")) {
        const std::string v = a->get("--swap-space");
        char* end = nullptr;
        const double gib = std::strtod(v.c_str(), &end);
        if (!v.empty() && end == v.c_str() + v.size()) {  // a plain number: GiB, as vLLM's --swap-space
            if (!(gib >= 0 && gib <= 1e6))
                return usage("--swap-space must be between 0 and 1,000,000 GiB, got '" + v + "'");
            in.swap_space_bytes = static_cast<int64_t>(gib * static_cast<double>(int64_t{1} << 30));
        } else {
            auto sz = get_size(*a, "--swap-space", 0, err);
            if (!sz) return kUsage;
            in.swap_space_bytes = *sz;
        }
    }
    const std::string wl = a->get("--workload", "sharegpt");
    std::string trace_path;
    if (wl == "sharegpt" || wl == "alpaca" || wl == "azure-conv" || wl == "azure-code") {
        in.workload = wl;
    } else if (wl.size() >= 4 && wl.compare(wl.size() - 4, 4, ".csv") == 0) {
        in.workload = "csv";
        trace_path = wl;
        in.trace_name = wl.substr(wl.rfind('/') == std::string::npos ? 0 : wl.rfind('/') + 1);
    } else {
        if (wl == "csv")  // the page's name for a dropped file; here only FILE.csv names a trace
            return usage(render_english(note("sim_bad_workload", {{"flag", "--workload"}, {"value", wl}})));
        in.workload = wl;
    }
    {
        SimInputs names = in;  // the names alone (no trace read yet)
        names.trace = "-";
        if (auto ok = validate(names); !ok) return usage(ok.error().message);
    }

    auto model = load_model(a->positional[0], err);
    if (!model) return kRefused;

    auto kvmem = get_size(*a, "--kv-cache-memory", 0, err);
    auto util = get_fraction(*a, "--gpu-memory-utilization", 0.0, err);
    auto bs = get_count(*a, "--block-size", 16, err);
    auto nreq = get_count(*a, "--requests", 0, err);
    auto seed = get_count(*a, "--seed", 0, err);
    auto n = get_count(*a, "--n", 1, err);
    auto beam = get_count(*a, "--beam", 1, err);
    auto prefix = get_count(*a, "--shared-prefix", 0, err);
    auto frac = get_fraction(*a, "--shared-fraction", 1.0, err);
    auto mns = get_count(*a, "--max-num-seqs", 256, err);
    auto mnbt = get_count(*a, "--max-num-batched-tokens", 8192, err);
    auto mml = get_context(*a, "--max-model-len", 0, err);
    if (!kvmem || !util || !bs || !nreq || !seed || !n || !beam || !prefix || !frac || !mns || !mnbt || !mml)
        return kRefused;
    auto refuse = [&](const std::string& msg) {
        err << "kvbudget: error: " << msg << "\n";
        return kRefused;
    };
    if (a->has("--kv-cache-memory")) in.kv_cache_memory = *kvmem;
    if (a->has("--gpu")) in.gpu = a->get("--gpu");
    in.gpu_memory_utilization = *util;
    in.block_size = *bs;
    if (a->has("--max-model-len")) in.max_model_len = *mml;
    if (a->has("--max-num-seqs")) in.max_num_seqs = *mns;
    if (a->has("--max-num-batched-tokens")) in.max_num_batched_tokens = *mnbt;
    in.n = *n;
    in.beam = *beam;
    in.prefix_caching = a->has("--prefix-caching");
    if (a->has("--requests")) in.requests = *nreq;
    in.seed = *seed;
    if (a->has("--shared-prefix")) in.shared_prefix = *prefix;
    if (a->has("--shared-fraction")) in.shared_fraction = *frac;
    if (a->has("--rate")) {
        double r = 0;
        if (!parse_rate(a->get("--rate"), &r)) {
            char* end = nullptr;
            const std::string v = a->get("--rate");
            r = std::strtod(v.c_str(), &end);
            if (v.empty() || end != v.c_str() + v.size())
                return refuse(render_english(note("sim_bad_rate", {{"flag", "--rate"}, {"value", v}})));
        }
        in.rate = r;
    }
    if (in.workload == "azure-conv" || in.workload == "azure-code") {
        trace_path = find_trace(wl == "azure-conv" ? "azure-llm-2023-conv.csv" : "azure-llm-2023-code.csv");
        if (trace_path.empty())
            return refuse("the " + wl +
                          " trace was not found (looked in $KVBUDGET_TRACES, share/kvbudget/traces and "
                          "data/traces beside the binary, the install prefix and the source tree); pass its CSV "
                          "path with --workload FILE.csv");
    }
    if (!trace_path.empty())
        if (const std::string e = open_trace(trace_path, &in.trace_source); !e.empty()) return refuse(e);

    auto session = SimSession::create(*model, in);
    if (!session) return refuse(session.error().message);
    SimSession& s = session.value();
    if (auto done = s.run_to_end(); !done) return refuse(done.error().message);
    const SimReport report = s.report();
    if (a->has("--json")) {
        out << to_json_text(report) << "\n";
        return kOk;
    }
    const SimRunInfo& r = report.run;
    const char* arrivals = r.arrivals == "batch"     ? "all at t=0"
                           : r.arrivals == "poisson" ? "Poisson"
                                                     : "trace timestamps";
    out << r.model << ": " << format_bytes(r.kv_bytes_per_token) << " KV per token, KV cache "
        << format_bytes(r.kv_cache_bytes) << " (" << with_commas(r.kv_cache_bytes / r.kv_bytes_per_token)
        << " token slots)";
    if (r.from_gpu)
        out << " = " << r.time_model_gpu << " x " << fixed(r.gpu_memory_utilization, 2) << " - weights "
            << format_bytes(r.weights_bytes) << " - activations, runtime, CUDA graphs "
            << format_bytes(r.runtime_bytes);
    out << "\n";
    out << "workload: " << (trace_path.empty() || in.workload != "csv" ? r.workload : wl) << ", "
        << with_commas(r.requests) << " requests (" << arrivals;
    if (r.arrivals == "poisson") out << " at " << num(r.rate) << " req/s";
    out << "), seed " << r.seed;
    if (r.n > 1) out << ", n=" << r.n << (r.independent_sample_lengths ? " (own lengths)" : " (same length)");
    if (r.beam > 1) out << ", beam " << r.beam;
    if (r.shared_prefix > 0) out << ", shared prefix " << r.shared_prefix << " tokens on " << pct(r.shared_fraction);
    out << "\n";
    out << "block size " << r.block_size << ", max-model-len " << with_commas(r.max_model_len) << ", max-num-seqs "
        << r.max_num_seqs << ", max-num-batched-tokens " << r.max_num_batched_tokens << ", preemption " << r.preemption
        << (r.preemption != "recompute" ? ", swap space " + format_bytes(r.swap_space_bytes) : "")
        << (r.prefix_caching ? ", prefix caching" : "") << "; time model: " << r.time_model_gpu << "\n\n";
    print_table(out, report.policies);
    // What the page says above its table, so the two faces read the same run alike.
    if (!report.conclusions.empty()) out << "\n";
    for (const Message& c : report.conclusions) out << render_english(c) << "\n";
    for (const Message& note_msg : r.notes) err << "note: " << render_english(note_msg) << "\n";
    if (r.windowed_or_state_left_out)
        err << "note: only the context-proportional KV (full and MLA attention layers) is simulated; sliding-window "
               "and recurrent-state layers are left out\n";
    return kOk;
}

}  // namespace kvb::cli
