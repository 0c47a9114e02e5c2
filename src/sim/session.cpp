#include "sim/session.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/units.h"
#include "sim/conclusions.h"
#include "sim/setup.h"

namespace kvb {

namespace {

constexpr int64_t kPiB = int64_t{1} << 50;
constexpr int64_t kI32 = 2'000'000'000;  // the simulator's counters are int32

std::string number_text(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

std::optional<int64_t> field_value(const SimInputs& in, const std::string& name) {
    if (name == "block_size") return in.block_size;
    if (name == "n") return in.n;
    if (name == "beam") return in.beam;
    if (name == "max_model_len") return in.max_model_len;
    if (name == "max_num_seqs") return in.max_num_seqs;
    if (name == "max_num_batched_tokens") return in.max_num_batched_tokens;
    if (name == "requests") return in.requests;
    if (name == "seed") return in.seed;
    if (name == "shared_prefix") return in.shared_prefix;
    if (name == "kv_cache_memory") return in.kv_cache_memory;
    if (name == "gpu_memory_bytes") return in.gpu_memory_bytes;
    if (name == "params") return in.params;
    if (name == "swap_space_bytes") return in.swap_space_bytes;
    if (name == "snapshots") return in.snapshots;
    if (name == "series_points") return in.series_points;
    return std::nullopt;
}

bool known_policy(const std::string& p) {
    sim::Policy x;
    return p == "all" || sim::parse_policy(p, &x);
}

}  // namespace

const std::vector<SimInputLimit>& sim_input_limits() {
    static const std::vector<SimInputLimit> t = {
        {"block_size", "--block-size", 1, 256},  // and one of sim_block_sizes()
        {"n", "--n", 1, 1024},
        {"beam", "--beam", 1, 1024},
        {"max_model_len", "--max-model-len", 2, 10'000'000},
        {"max_num_seqs", "--max-num-seqs", 1, kI32},
        {"max_num_batched_tokens", "--max-num-batched-tokens", 1, kI32},
        {"requests", "--requests", 1, 10'000'000},
        {"seed", "--seed", 0, int64_t{1} << 53},  // exact in a JS number
        {"shared_prefix", "--shared-prefix", 1, 10'000'000},
        {"kv_cache_memory", "--kv-cache-memory", 1, kPiB},
        {"gpu_memory_bytes", "gpu_memory_bytes", 0, kPiB},
        {"params", "params", 0, kPiB},
        {"swap_space_bytes", "--swap-space", 0, kPiB},
        {"snapshots", "snapshots", 0, 1000},
        {"series_points", "series_points", 2, 100'000},
    };
    return t;
}

// vLLM's --block-size choices: vllm/config/cache.py `BlockSize = Literal[1, 8, 16, 32, 64, 128,
// 256]` (0.10.2 on; 1 to 128 in vllm/config.py before), which argparse enforces ("invalid
// choice"). The newest cache.py drops the list (`block_size: int = Field(gt=0)`) and leaves
// the check to the attention backend (FlashAttention and Triton take multiples of 16), so a
// size such as 48 or 512 that only the newest releases start with is refused here too.
const std::vector<int64_t>& sim_block_sizes() {
    static const std::vector<int64_t> b = {1, 8, 16, 32, 64, 128, 256};
    return b;
}

const std::vector<std::string>& sim_workload_names() {
    static const std::vector<std::string> w = {"sharegpt", "alpaca", "azure-conv", "azure-code", "csv"};
    return w;
}

Result<bool> validate(const SimInputs& in) {
    if (in.policies.empty())
        return make_error("bad_value",
                          note("sim_bad_policy", {{"field", "policies"}, {"flag", "--policy"}, {"value", ""}}));
    for (const std::string& p : in.policies)
        if (!known_policy(p))
            return make_error("bad_value",
                              note("sim_bad_policy", {{"field", "policies"}, {"flag", "--policy"}, {"value", p}}));
    sim::Preemption pre;
    if (!sim::parse_preemption(in.preemption, &pre))
        return make_error(
            "bad_value",
            note("sim_bad_preemption", {{"field", "preemption"}, {"flag", "--preemption"}, {"value", in.preemption}}));
    if (in.sample_lengths != "independent" && in.sample_lengths != "same")
        return make_error("bad_value", note("sim_bad_sample_lengths", {{"field", "sample_lengths"},
                                                                       {"flag", "--sample-lengths"},
                                                                       {"value", in.sample_lengths}}));
    const auto& wl = sim_workload_names();
    if (std::find(wl.begin(), wl.end(), in.workload) == wl.end())
        return make_error("bad_value", note("sim_bad_workload",
                                            {{"field", "workload"}, {"flag", "--workload"}, {"value", in.workload}}));
    if (in.shared_fraction && !in.shared_prefix)
        return make_error("bad_value", note("sim_fraction_needs_prefix", {{"field", "shared_fraction"},
                                                                          {"flag", "--shared-fraction"},
                                                                          {"needs", "--shared-prefix"}}));
    for (const SimInputLimit& l : sim_input_limits()) {
        const std::optional<int64_t> v = field_value(in, l.name);
        if (v && (*v < l.min || *v > l.max))
            return make_error("bad_value", note("input_out_of_range", {{"field", l.name},
                                                                       {"flag", l.flag},
                                                                       {"min", with_commas(l.min)},
                                                                       {"max", with_commas(l.max)},
                                                                       {"value", with_commas(*v)}}));
    }
    const auto& bs = sim_block_sizes();
    if (std::find(bs.begin(), bs.end(), in.block_size) == bs.end()) {
        std::string choices;
        for (size_t i = 0; i < bs.size(); ++i)
            choices += (i == 0 ? "" : i + 1 == bs.size() ? " or " : ", ") + std::to_string(bs[i]);
        return make_error("bad_value", note("vllm_block_size_choice", {{"field", "block_size"},
                                                                       {"flag", "--block-size"},
                                                                       {"choices", choices},
                                                                       {"value", with_commas(in.block_size)}}));
    }
    if (!(in.gpu_memory_utilization == 0 || (in.gpu_memory_utilization > 0.0 && in.gpu_memory_utilization <= 1.0)))
        return make_error("bad_value", note("bad_utilization", {{"value", number_text(in.gpu_memory_utilization)}}));
    if (in.rate && !(*in.rate > 0 && *in.rate < 1e12))
        return make_error("bad_value", note("sim_bad_rate",
                                            {{"field", "rate"}, {"flag", "--rate"}, {"value", number_text(*in.rate)}}));
    if (in.shared_fraction && !(*in.shared_fraction > 0 && *in.shared_fraction <= 1))
        return make_error("bad_value", note("sim_bad_fraction", {{"field", "shared_fraction"},
                                                                 {"flag", "--shared-fraction"},
                                                                 {"value", number_text(*in.shared_fraction)}}));
    if (in.workload != "sharegpt" && in.workload != "alpaca" && in.trace.empty() && !in.trace_source)
        return make_error("bad_value", note("sim_trace_needed", {{"workload", in.workload}}));
    return true;
}

Result<SimSession> SimSession::create(const ModelSpec& m, const SimInputs& in) {
    if (auto ok = validate(in); !ok) return ok.error();
    std::vector<sim::Policy> policies;
    for (const std::string& name : in.policies) {
        std::vector<sim::Policy> add;
        sim::Policy p;
        if (name == "all")
            add = {sim::Policy::Paged, sim::Policy::Max, sim::Policy::Pow2, sim::Policy::Oracle};
        else if (sim::parse_policy(name, &p))
            add = {p};
        for (sim::Policy q : add)
            if (std::find(policies.begin(), policies.end(), q) == policies.end()) policies.push_back(q);
    }
    sim::Preemption preemption;
    sim::parse_preemption(in.preemption, &preemption);

    SimSetupInputs si;
    si.kv_cache_memory = in.kv_cache_memory.value_or(0);
    si.gpu = in.gpu;
    si.gpu_memory_bytes = in.gpu_memory_bytes;
    si.gpu_memory_utilization = in.gpu_memory_utilization;
    si.kv_dtype = in.kv_cache_dtype;
    si.weights = in.weights;
    si.params = in.params;
    si.block_size = in.block_size;
    si.max_model_len = in.max_model_len.value_or(0);
    si.max_num_seqs = in.max_num_seqs.value_or(0);
    si.max_num_batched_tokens = in.max_num_batched_tokens.value_or(0);
    si.n = in.n;
    si.beam = in.beam;
    si.preemption = preemption;
    si.swap_space_bytes = in.swap_space_bytes;
    si.independent_sample_lengths = in.sample_lengths == "independent";
    si.seed = static_cast<uint64_t>(in.seed);
    auto setup = sim_setup(m, si);
    if (!setup) return setup.error();
    sim::SimConfig c = setup->config;
    c.series_points = static_cast<int32_t>(in.series_points);
    // Snapshots every 8 steps to start with; the simulator thins them (doubling the
    // interval) past max_snapshots, so any run length ends with 1/2..1 x max of them.
    c.snapshot_every_steps = in.snapshots > 0 ? 8 : 0;
    c.max_snapshots = static_cast<int32_t>(in.snapshots > 0 ? in.snapshots : 1);

    // Cheap before expensive: every policy's settings are checked (a simulator over
    // no requests) before a trace is parsed or a request drawn.
    for (sim::Policy p : policies) {
        sim::SimConfig pc = c;
        pc.policy = p;
        pc.prefix_caching = in.prefix_caching && p == sim::Policy::Paged;
        sim::Simulator probe(pc, sim::Simulator::CheckOnly{});
        if (!probe.ok()) return probe.error();  // a policy's own refusal names it ({policy})
    }

    WorkloadInputs wi;
    wi.seed = c.seed;
    wi.requests = in.requests.value_or(0);
    wi.rate = in.rate.value_or(0);
    wi.shared_prefix = in.shared_prefix.value_or(0);
    wi.shared_fraction = in.shared_fraction.value_or(1.0);
    if (in.workload == "sharegpt" || in.workload == "alpaca") {
        wi.preset = in.workload;
    } else {
        wi.preset = "trace";
        wi.trace_text = in.trace;
        wi.trace_source = in.trace_source;
        wi.trace_name = !in.trace_name.empty()        ? in.trace_name
                        : in.workload == "azure-conv" ? "azure-llm-2023-conv.csv"
                        : in.workload == "azure-code" ? "azure-llm-2023-code.csv"
                                                      : "trace.csv";
    }
    auto spec = workload_spec(wi);
    if (!spec) return spec.error();
    const sim::WorkloadSpec& w = spec.value();
    // Drawn as the simulation goes (one stream per policy, sharing the trace): memory
    // follows the requests in flight, not the workload.
    auto stream = sim::RequestStream::create(w);
    if (!stream) return stream.error();

    SimSession s;
    for (sim::Policy p : policies) {
        c.policy = p;
        c.prefix_caching = in.prefix_caching && p == sim::Policy::Paged;
        sim::Simulator sim(c, stream.value());
        if (!sim.ok()) return sim.error();
        s.sims_.push_back(std::move(sim));
        s.info_.policy_names.push_back(sim::policy_name(p));
    }

    SimRunInfo& r = s.info_;
    r.model = m.name;
    r.workload = wi.preset == "trace" && in.workload == "csv" ? wi.trace_name : in.workload;
    r.requests = stream->size();
    r.arrivals = w.arrival == sim::Arrival::Batch ? "batch" : w.arrival == sim::Arrival::Poisson ? "poisson" : "trace";
    r.rate = w.arrival == sim::Arrival::Poisson ? w.rate : 0;
    r.seed = in.seed;
    r.shared_prefix = w.shared_prefix;
    r.shared_fraction = w.shared_fraction;
    r.kv_cache_bytes = c.kv_capacity_bytes;
    r.kv_bytes_per_token = c.kv_bytes_per_token;
    r.kv_cache_dtype = setup->kv_dtype;
    r.from_gpu = setup->from_budget;
    r.gpu_name = setup->from_budget ? setup->budget.gpu_name : std::string();
    r.gpu_memory_utilization = setup->from_budget ? setup->budget.gpu_memory_utilization : 0;
    r.weights_bytes = setup->weights_bytes;
    if (setup->from_budget)
        r.runtime_bytes = setup->budget.activation_bytes + setup->budget.overhead_bytes + setup->budget.cudagraph_bytes;
    r.time_model_gpu = setup->time_gpu->name;
    r.block_size = c.block_size;
    r.max_model_len = c.max_model_len;
    r.max_num_seqs = c.max_num_seqs;
    r.max_num_batched_tokens = c.max_num_batched_tokens;
    r.n = c.n;
    r.beam = c.beam_width;
    r.independent_sample_lengths = c.independent_sample_lengths;
    r.preemption = sim::preemption_name(c.preemption);
    r.swap_space_bytes = c.swap_space_bytes;
    r.prefix_caching = in.prefix_caching;
    r.windowed_or_state_left_out = setup->ideal.windowed_bytes_per_token > 0 || setup->ideal.state_bytes_per_seq > 0;
    // Sorted without a word, a trace out of order would run as another workload than the
    // one its author thinks it is (a merge of two logs, a shuffled export).
    if (w.trace_file && w.trace_file->out_of_order > 0)
        r.notes.push_back(note("sim_trace_unsorted", {{"file", w.trace_file->name},
                                                      {"count", with_commas(w.trace_file->out_of_order)},
                                                      {"requests", with_commas(w.trace_file->requests)}}));
    return s;
}

SimProgress SimSession::progress() const {
    SimProgress p;
    const size_t k = sims_.size();
    p.done = done();
    p.policy_index = static_cast<int64_t>(p.done ? k : current_);
    if (p.done) {
        p.progress = 1.0;
        return p;
    }
    const sim::Simulator& cur = sims_[current_];
    p.policy = info_.policy_names[current_];
    p.policy_progress = cur.progress();
    p.progress = (static_cast<double>(current_) + p.policy_progress) / static_cast<double>(k);
    p.steps = cur.steps();
    p.time_s = cur.now_s();
    return p;
}

Result<SimProgress> SimSession::run(int64_t max_steps) {
    int64_t budget = std::max<int64_t>(1, max_steps);
    while (budget > 0 && current_ < sims_.size()) {
        sim::Simulator& sim = sims_[current_];
        const int64_t ran = sim.run(budget);
        if (!sim.ok()) return sim.error();
        if (sim.done()) {
            ++current_;
        } else if (ran == 0) {
            return make_error("internal", note("sim_no_progress"));  // never spin on a stuck run
        }
        budget -= std::max<int64_t>(1, ran);
    }
    return progress();
}

Result<bool> SimSession::run_to_end() {
    while (!done()) {
        auto p = run(int64_t{1} << 20);
        if (!p) return p.error();
    }
    return true;
}

SimReport SimSession::report() const {
    SimReport r;
    r.run = info_;
    r.done = done();
    for (const sim::Simulator& s : sims_) r.policies.push_back(s.summary());
    if (r.done && !sims_.empty()) r.conclusions = sim_conclusions(r.policies, sims_.front().last_arrival_s());
    return r;
}

}  // namespace kvb
