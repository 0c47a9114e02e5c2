// The only file that knows Emscripten: the EMSCRIPTEN_BINDINGS blocks and the
// handles that keep parsed models and simulations between calls. Every entry point
// takes and returns strings, always {"ok":true,"value":...} or {"ok":false,"code",
// "message","detail"}: the values are the core's own JSON (src/report/json.h), the
// same text `kvbudget ... --json` prints. Nothing throws across the boundary (a C++
// exception would reach JS as a bare pointer number); wasm/kvbudget.js turns the error
// objects into JS errors in one place.
#include <emscripten/bind.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/units.h"
#include "model/model.h"
#include "report/answer.h"
#include "report/json.h"

using nlohmann::json;

namespace {

std::string ok_raw(const std::string& value_json) { return "{\"ok\":true,\"value\":" + value_json + "}"; }

std::string ok(json value) { return ok_raw(value.dump()); }

std::string fail(const kvb::Error& e) {
    const std::string err = kvb::to_json_text(e);
    return "{\"ok\":false," + err.substr(1);
}

std::string fail(const std::string& code, const std::string& message) { return fail(kvb::make_error(code, message)); }

// Runs `f` and converts anything thrown into an error value.
template <class F>
std::string guarded(F&& f) {
    try {
        return f();
    } catch (const std::bad_alloc&) {
        return fail("out_of_memory", "kvbudget ran out of memory in the browser");
    } catch (const std::exception& e) {
        return fail("internal", std::string("internal error: ") + e.what());
    } catch (...) {
        return fail("internal", "internal error");
    }
}

// Parsed models live here between calls so a control change does not re-parse the config.
std::map<int, kvb::ModelSpec>& models() {
    static std::map<int, kvb::ModelSpec> m;
    return m;
}
int next_handle = 1;

const kvb::ModelSpec* find_model(int handle) {
    auto it = models().find(handle);
    return it == models().end() ? nullptr : &it->second;
}

std::string parse_config(const std::string& text, const std::string& name) {
    auto r = kvb::parse_config(text, name);
    if (!r) return fail(r.error());
    const int handle = next_handle++;
    const std::string spec = kvb::to_json_text(r.value());
    models().emplace(handle, std::move(r.value()));
    return ok_raw("{\"handle\":" + std::to_string(handle) + ",\"spec\":" + spec + "}");
}

std::string release_model(int handle) {
    return models().erase(handle) ? ok(true) : fail("bad_handle", "no model loaded under handle " + std::to_string(handle));
}

std::string compute(int handle, const std::string& inputs) {
    const kvb::ModelSpec* m = find_model(handle);
    if (!m) return fail("bad_handle", "no model loaded under handle " + std::to_string(handle));
    auto in = kvb::budget_inputs_from_json(inputs);
    if (!in) return fail(in.error());
    auto a = kvb::compute_answer(*m, in.value());
    if (!a) return fail(a.error());
    return ok_raw(kvb::to_json_text(a.value()));
}

std::string parse_size(const std::string& text) {
    auto r = kvb::parse_size(text);
    return r ? ok(r.value()) : fail(r.error());
}

std::string format_bytes(double bytes) {
    if (!(bytes >= -9.2e18 && bytes <= 9.2e18)) return fail("bad_value", "bytes out of range");
    return ok(kvb::format_bytes(static_cast<int64_t>(bytes)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(kvbudget) {
    emscripten::function("parseConfig", +[](std::string text, std::string name) {
        return guarded([&] { return parse_config(text, name); });
    });
    emscripten::function("releaseModel", +[](int handle) { return guarded([&] { return release_model(handle); }); });
    emscripten::function("compute", +[](int handle, std::string inputs) {
        return guarded([&] { return compute(handle, inputs); });
    });
    emscripten::function("parseSize", +[](std::string text) { return guarded([&] { return parse_size(text); }); });
    emscripten::function("catalog", +[]() { return guarded([&] { return ok_raw(kvb::catalog_json_text()); }); });
    emscripten::function("formatBytes", +[](double b) { return guarded([&] { return format_bytes(b); }); });
}

// ======================================================================
// Paging simulator (issue 4): create a simulation from JSON, run it in chunks
// (a Web Worker calls simRun between progress reports and stops calling to
// cancel), read summary / series / block-map snapshots as JSON. The SimConfig
// is built exactly as `kvbudget simulate` builds it (src/cli/cmd_simulate.cpp),
// so the same settings give the same summary; tests/node/sim.test.mjs checks that.
// ======================================================================
#include "sim/simulator.h"
#include "sim/setup.h"

namespace {

namespace ks = kvb::sim;

// A direct JSON writer for compute(): building a DOM and serializing it cost more
// than the computation itself, and a recompute must stay under a millisecond.
class Out {
public:
    Out& obj() { sep(); buf_ += '{'; first_.push_back(true); return *this; }
    Out& arr() { sep(); buf_ += '['; first_.push_back(true); return *this; }
    Out& end_obj() { buf_ += '}'; first_.pop_back(); return *this; }
    Out& end_arr() { buf_ += ']'; first_.pop_back(); return *this; }
    Out& key(const char* k) {
        sep();
        buf_ += '"';
        buf_ += k;  // keys are literals in this file
        buf_ += "\":";
        after_key_ = true;
        return *this;
    }
    Out& v(int64_t n) { sep(); buf_ += std::to_string(n); return *this; }
    Out& v(int n) { return v(static_cast<int64_t>(n)); }
    Out& v(double d) {
        sep();
        if (!(d == d) || d > 1e308 || d < -1e308) {
            buf_ += "null";
        } else {
            char tmp[32];
            std::snprintf(tmp, sizeof tmp, "%.17g", d);
            buf_ += tmp;
        }
        return *this;
    }
    Out& v(bool b) { sep(); buf_ += b ? "true" : "false"; return *this; }
    Out& v(const char* s) { return v(std::string(s)); }
    Out& v(const std::string& s) {
        sep();
        buf_ += json(s).dump(-1, ' ', false, json::error_handler_t::replace);
        return *this;
    }
    Out& null() { sep(); buf_ += "null"; return *this; }
    Out& raw(const json& j) { sep(); buf_ += j.dump(-1, ' ', false, json::error_handler_t::replace); return *this; }
    template <class T>
    Out& kv(const char* k, const T& value) { key(k); return v(value); }
    Out& strings(const char* k, const std::vector<std::string>& xs) {
        key(k).arr();
        for (const auto& x : xs) v(x);
        return end_arr();
    }
    std::string take() { return std::move(buf_); }

private:
    void sep() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (!first_.empty()) {
            if (!first_.back()) buf_ += ',';
            first_.back() = false;
        }
    }
    std::string buf_;
    std::vector<bool> first_;
    bool after_key_ = false;
};

// --- input reading: every field optional with a default, every bad value an error ---

struct Input {
    const json& j;
    kvb::Error* err;
    int64_t count(const char* key, int64_t def, int64_t lo, int64_t hi) const {
        if (!j.contains(key) || j[key].is_null()) return def;
        const json& v = j[key];
        double d = 0;
        if (v.is_number_integer()) {
            d = static_cast<double>(v.get<int64_t>());
        } else if (v.is_number_float()) {
            d = v.get<double>();
        } else {
            *err = kvb::make_error("bad_value", std::string(key) + " must be a number, got " + v.dump());
            return def;
        }
        if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || d != static_cast<double>(static_cast<int64_t>(d))) {
            *err = kvb::make_error("bad_value", std::string(key) + " must be a whole number from " + kvb::with_commas(lo) +
                                                    " to " + kvb::with_commas(hi) + ", got " + v.dump());
            return def;
        }
        return static_cast<int64_t>(d);
    }
    double fraction(const char* key, double def) const {
        if (!j.contains(key) || j[key].is_null()) return def;
        const json& v = j[key];
        if (!v.is_number() || !(v.get<double>() > 0.0 && v.get<double>() <= 1.0)) {
            *err = kvb::make_error("bad_value", std::string(key) + " must be a number above 0 and at most 1, got " + v.dump());
            return def;
        }
        return v.get<double>();
    }
    std::string str(const char* key, const std::string& def) const {
        if (!j.contains(key) || j[key].is_null()) return def;
        if (!j[key].is_string()) {
            *err = kvb::make_error("bad_value", std::string(key) + " must be a string");
            return def;
        }
        return j[key].get<std::string>();
    }
};



struct SimSession {
    std::vector<ks::Request> requests;
    std::vector<ks::Simulator> sims;  // one per policy, run one after another
    size_t current = 0;
    std::vector<std::string> names;  // policy of each simulator
    std::string config_json;  // the resolved settings, echoed by simResult
};

std::map<int, SimSession>& sim_sessions() {
    static std::map<int, SimSession> s;
    return s;
}
int next_sim_handle = 1;

bool sim_bool(const json& j, const char* key, bool def, kvb::Error* err) {
    if (!j.contains(key) || j[key].is_null()) return def;
    if (!j[key].is_boolean()) {
        *err = kvb::make_error("bad_value", std::string(key) + " must be true or false, got " + j[key].dump());
        return def;
    }
    return j[key].get<bool>();
}

std::string sim_create(int handle, const std::string& input_text) {
    const kvb::ModelSpec* mp = find_model(handle);
    if (!mp) return fail("bad_handle", "no model loaded under handle " + std::to_string(handle));
    const kvb::ModelSpec& m = *mp;
    json in = json::parse(input_text, nullptr, false);
    if (in.is_discarded() || !in.is_object()) return fail("not_json", "simCreate input must be a JSON object");
    kvb::Error err;
    Input r{in, &err};
    constexpr int64_t kI32 = 2'000'000'000;

    // Policies: a list of names or "all".
    std::vector<ks::Policy> policies;
    if (!in.contains("policies") || in["policies"].is_null() || in["policies"] == "all") {
        policies = {ks::Policy::Paged, ks::Policy::Max, ks::Policy::Pow2, ks::Policy::Oracle};
    } else if ((in["policies"].is_array() && !in["policies"].empty()) || in["policies"].is_string()) {
        const json list = in["policies"].is_string() ? json::array({in["policies"]}) : in["policies"];
        for (const json& p : list) {
            ks::Policy pol;
            if (!p.is_string() || !ks::parse_policy(p.get<std::string>(), &pol))
                return fail("bad_value", "policies must list paged, max, pow2 or oracle, got " + p.dump());
            if (std::find(policies.begin(), policies.end(), pol) == policies.end()) policies.push_back(pol);
        }
    } else {
        return fail("bad_value", "policies must be \"all\" or a non-empty list of paged, max, pow2, oracle");
    }
    const std::string pre = r.str("preemption", "v0");
    const std::string sample_lengths = r.str("sampleLengths", "independent");
    const int64_t swap_space = r.count("swapSpace", int64_t{4} << 30, 0, int64_t{1} << 50);
    const std::string gpu_id = r.str("gpu", "a100-80gb");
    const bool has_kvmem = in.contains("kvCacheMemory") && !in["kvCacheMemory"].is_null();
    const int64_t kvmem = r.count("kvCacheMemory", 0, 1, int64_t{1} << 50);
    const int64_t gpu_mem = r.count("gpuMemoryBytes", 0, 1, int64_t{1} << 50);
    const double util = r.fraction("gpuMemoryUtilization", 0.9);
    const int64_t bs = r.count("blockSize", 16, 1, 4096);
    const bool has_requests = in.contains("requests") && !in["requests"].is_null();
    const int64_t nreq = r.count("requests", 0, 1, 10'000'000);
    const int64_t seed = r.count("seed", 0, 0, int64_t{1} << 53);
    const int64_t n = r.count("n", 1, 1, 1024);
    const int64_t beam = r.count("beam", 1, 1, 1024);
    const bool has_prefix = in.contains("sharedPrefix") && !in["sharedPrefix"].is_null();
    const int64_t prefix = r.count("sharedPrefix", 0, 1, 10'000'000);
    const double frac = r.fraction("sharedFraction", 1.0);
    const bool has_mns = in.contains("maxNumSeqs") && !in["maxNumSeqs"].is_null();
    int64_t mns = r.count("maxNumSeqs", 256, 1, kI32);
    const bool has_mnbt = in.contains("maxNumBatchedTokens") && !in["maxNumBatchedTokens"].is_null();
    int64_t mnbt = r.count("maxNumBatchedTokens", 8192, 1, kI32);
    const int64_t mml = r.count("maxModelLen", m.max_position_embeddings, 2, 10'000'000);
    const bool prefix_caching = sim_bool(in, "prefixCaching", false, &err);
    const std::string kv = r.str("kvDtype", "auto");
    const std::string weights = r.str("weightsFormat", "auto");
    const int64_t hub_params = r.count("hubParameters", 0, 0, int64_t{1} << 50);
    const std::string workload = r.str("workload", "sharegpt");
    const std::string trace_text = r.str("trace", "");
    double rate = 0;
    if (in.contains("rate") && !in["rate"].is_null()) {
        const json& v = in["rate"];
        if (!v.is_number() || !(v.get<double>() > 0) || !(v.get<double>() < 1e12))
            return fail("bad_value", "rate must be a positive number of requests per second, got " + v.dump());
        rate = v.get<double>();
    }
    const int64_t max_snaps = r.count("snapshots", 60, 0, 1000);
    const int64_t series_points = r.count("seriesPoints", 200, 2, 100000);
    if (!err.code.empty()) return fail(err);
    ks::Preemption preemption;
    if (!ks::parse_preemption(pre, &preemption))
        return fail("bad_value", "preemption must be v0, recompute or swap, got \"" + pre + "\"");
    if (sample_lengths != "independent" && sample_lengths != "same")
        return fail("bad_value", "sampleLengths must be independent or same, got \"" + sample_lengths + "\"");
    if (in.contains("sharedFraction") && !in["sharedFraction"].is_null() && !has_prefix)
        return fail("bad_value", "sharedFraction needs sharedPrefix");
    if (mml == 0) return fail("bad_value", "the config has no max_position_embeddings: pass maxModelLen");

    kvb::SimSetupInputs si;
    si.kv_cache_memory = has_kvmem ? kvmem : 0;
    si.gpu = gpu_id;
    si.gpu_memory_bytes = gpu_mem;
    si.gpu_memory_utilization = util;
    si.kv_dtype = kv;
    si.weights = weights;
    si.params = hub_params;
    si.block_size = bs;
    si.max_model_len = mml;
    si.max_num_seqs = has_mns ? mns : 0;
    si.max_num_batched_tokens = has_mnbt ? mnbt : 0;
    si.n = n;
    si.beam = beam;
    si.preemption = preemption;
    si.swap_space_bytes = swap_space;
    si.independent_sample_lengths = sample_lengths == "independent";
    si.seed = static_cast<uint64_t>(seed);
    auto setup = kvb::sim_setup(m, si);
    if (!setup) return fail(setup.error());
    ks::SimConfig c = setup->config;
    const kvb::IdealKv& ideal = setup->ideal;
    const kvb::Gpu* gpu = setup->time_gpu;
    const kvb::BudgetResult& budget = setup->budget;
    const int64_t weights_bytes = setup->weights_bytes;
    c.series_points = static_cast<int32_t>(series_points);
    // Snapshots every 8 steps to start with; the simulator thins them (doubling the
    // interval) past max_snapshots, so any run length ends with 1/2..1 x max of them.
    c.snapshot_every_steps = max_snaps > 0 ? 8 : 0;
    c.max_snapshots = static_cast<int32_t>(max_snaps > 0 ? max_snaps : 1);

    // Workload, as the CLI draws it.
    kvb::WorkloadInputs wi;
    wi.seed = c.seed;
    wi.requests = has_requests ? nreq : 0;
    wi.rate = rate;
    wi.shared_prefix = has_prefix ? prefix : 0;
    wi.shared_fraction = frac;
    if (workload == "sharegpt" || workload == "alpaca") {
        wi.preset = workload;
    } else if (workload == "azure-conv" || workload == "azure-code" || workload == "csv") {
        if (trace_text.empty()) return fail("bad_value", "workload " + workload + " needs the trace CSV text in trace");
        wi.preset = "trace";
        wi.trace_text = trace_text;
        wi.trace_name = r.str("traceName", workload == "azure-conv"   ? "azure-llm-2023-conv.csv"
                                           : workload == "azure-code" ? "azure-llm-2023-code.csv"
                                                                      : "trace.csv");
    } else {
        return fail("bad_value", "workload must be sharegpt, alpaca, azure-conv, azure-code or csv, got \"" + workload + "\"");
    }
    auto spec = kvb::workload_spec(wi);
    if (!spec) return fail(spec.error());
    const ks::WorkloadSpec& w = spec.value();
    auto reqs = ks::make_workload(w);
    if (!reqs) return fail(reqs.error());

    SimSession s;
    s.requests = std::move(reqs.value());
    for (ks::Policy p : policies) {
        c.policy = p;
        c.prefix_caching = prefix_caching && p == ks::Policy::Paged;
        ks::Simulator sim(c, s.requests);
        if (!sim.ok()) return fail(sim.error().code.empty() ? "bad_value" : sim.error().code,
                                   std::string(ks::policy_name(p)) + ": " + sim.error_message());
        s.sims.push_back(std::move(sim));
        s.names.push_back(ks::policy_name(p));
    }
    Out o;
    o.obj().kv("model", m.name).kv("workload", workload).kv("requests", static_cast<int64_t>(s.requests.size()))
        .kv("kvCacheBytes", c.kv_capacity_bytes).kv("kvBytesPerToken", c.kv_bytes_per_token)
        .kv("kvDtype", setup->kv_dtype)
        .kv("blockSize", static_cast<int64_t>(c.block_size)).kv("maxModelLen", static_cast<int64_t>(c.max_model_len))
        .kv("maxNumSeqs", static_cast<int64_t>(c.max_num_seqs))
        .kv("maxNumBatchedTokens", static_cast<int64_t>(c.max_num_batched_tokens))
        .kv("gpuName", has_kvmem ? std::string() : budget.gpu_name)
        .kv("timeModelGpu", gpu->name)
        .kv("weightsBytes", weights_bytes)
        .kv("arrivals", w.arrival == ks::Arrival::Batch ? "batch" : w.arrival == ks::Arrival::Poisson ? "poisson" : "trace")
        .kv("windowedOrStateLeftOut", ideal.windowed_bytes_per_token > 0 || ideal.state_bytes_per_seq > 0)
        .key("policies").arr();
    for (ks::Policy p : policies) o.v(ks::policy_name(p));
    o.end_arr().end_obj();
    s.config_json = o.take();
    const int id = next_sim_handle++;
    const std::string cfg = s.config_json;
    sim_sessions().emplace(id, std::move(s));
    return "{\"ok\":true,\"value\":{\"sim\":" + std::to_string(id) + ",\"config\":" + cfg + "}}";
}

SimSession* find_sim(int id) {
    auto it = sim_sessions().find(id);
    return it == sim_sessions().end() ? nullptr : &it->second;
}

void write_progress(Out& o, const SimSession& s) {
    const size_t k = s.sims.size();
    const bool done = s.current >= k;
    const ks::Simulator* cur = done ? nullptr : &s.sims[s.current];
    const double frac = done ? 1.0 : (static_cast<double>(s.current) + cur->progress()) / static_cast<double>(k);
    o.obj().kv("done", done).kv("progress", frac).kv("policyIndex", static_cast<int64_t>(done ? k : s.current))
        .kv("policy", done ? std::string() : s.names[s.current]);
    if (cur) o.kv("policyProgress", cur->progress()).kv("steps", cur->steps()).kv("timeS", cur->now_s());
    o.end_obj();
}

// Runs at most max_steps scheduler steps, moving on to the next policy when one finishes.
std::string sim_run(int id, double max_steps_d) {
    SimSession* s = find_sim(id);
    if (!s) return fail("bad_handle", "no simulation under handle " + std::to_string(id));
    if (!(max_steps_d >= 1 && max_steps_d <= 1e12)) return fail("bad_value", "maxSteps must be at least 1");
    int64_t budget = static_cast<int64_t>(max_steps_d);
    while (budget > 0 && s->current < s->sims.size()) {
        ks::Simulator& sim = s->sims[s->current];
        const int64_t ran = sim.run(budget);
        if (!sim.ok()) return fail(sim.error());
        if (sim.done()) {
            ++s->current;
        } else if (ran == 0) {
            return fail("internal", "the simulation made no progress");  // never spin on a stuck run
        }
        budget -= std::max<int64_t>(1, ran);
    }
    Out o;
    write_progress(o, *s);
    return "{\"ok\":true,\"value\":" + o.take() + "}";
}

// The CLI's --json entry, key for key (the node test compares them).
void write_summary(Out& o, const ks::Summary& s) {
    o.obj().kv("policy", s.policy).kv("requests", s.requests).kv("finished", s.finished).kv("refused", s.refused)
        .kv("truncated", s.truncated).kv("preemptions", s.preemptions).kv("swapped_out", s.swapped_out)
        .kv("swap_fallbacks", s.swap_fallbacks)
        .kv("recomputed_tokens", s.recomputed_tokens).kv("steps", s.steps).kv("makespan_s", s.makespan_s)
        .kv("capacity_tokens", s.capacity_tokens).kv("num_blocks", s.num_blocks)
        .kv("token_states_fraction", s.memory.token_states).kv("reserved_fraction", s.memory.reserved)
        .kv("internal_fragmentation_fraction", s.memory.internal_fragmentation)
        .kv("external_fragmentation_fraction", s.memory.external_fragmentation)
        .kv("cached_fraction", s.memory.cached).kv("free_fraction", s.memory.free)
        .kv("null_block_fraction", s.memory.null_block)
        .kv("token_states_of_used_fraction", s.token_states_of_used)
        .kv("reserved_of_used_fraction", s.of_used.reserved)
        .kv("internal_fragmentation_of_used_fraction", s.of_used.internal_fragmentation)
        .kv("external_fragmentation_of_used_fraction", s.of_used.external_fragmentation)
        .kv("mean_running", s.mean_running).kv("max_running", s.max_running)
        .kv("mean_waiting", s.mean_waiting).kv("max_waiting", s.max_waiting)
        .kv("sharing_saved_fraction", s.sharing_saved).kv("max_blocks_saved", s.max_blocks_saved)
        .kv("cow_copies", s.cow_copies).kv("prefix_hit_tokens", s.prefix_hit_tokens)
        .kv("prompt_tokens", s.prompt_tokens).kv("generated_tokens", s.generated_tokens)
        .kv("throughput_tokens_per_s", s.throughput_tokens_per_s).kv("requests_per_s", s.requests_per_s)
        .kv("ttft_mean_s", s.ttft_mean_s).kv("ttft_p50_s", s.ttft_p50_s).kv("ttft_p90_s", s.ttft_p90_s)
        .kv("ttft_p99_s", s.ttft_p99_s).kv("tpot_mean_s", s.tpot_mean_s).kv("tpot_p50_s", s.tpot_p50_s)
        .kv("tpot_p90_s", s.tpot_p90_s).kv("tpot_p99_s", s.tpot_p99_s).kv("e2e_mean_s", s.e2e_mean_s)
        .kv("e2e_p50_s", s.e2e_p50_s).kv("e2e_p90_s", s.e2e_p90_s).kv("e2e_p99_s", s.e2e_p99_s)
        .kv("normalized_latency_s", s.normalized_latency_s).end_obj();
}

// Columns, not rows: what uPlot takes and a third of the JSON.
void write_series(Out& o, const std::vector<ks::TimePoint>& ts) {
    auto col = [&](const char* name, auto get) {
        o.key(name).arr();
        for (const auto& p : ts) o.v(get(p));
        o.end_arr();
    };
    using P = ks::TimePoint;
    o.obj();
    col("time", [](const P& p) { return p.time_s; });
    col("duration", [](const P& p) { return p.duration_s; });
    col("tokenStates", [](const P& p) { return p.memory.token_states; });
    col("reserved", [](const P& p) { return p.memory.reserved; });
    col("internalFragmentation", [](const P& p) { return p.memory.internal_fragmentation; });
    col("externalFragmentation", [](const P& p) { return p.memory.external_fragmentation; });
    col("cached", [](const P& p) { return p.memory.cached; });
    col("free", [](const P& p) { return p.memory.free; });
    col("nullBlock", [](const P& p) { return p.memory.null_block; });
    col("running", [](const P& p) { return p.running; });
    col("waiting", [](const P& p) { return p.waiting; });
    col("sharingSaved", [](const P& p) { return p.sharing_saved; });
    col("preemptions", [](const P& p) { return p.preemptions; });
    col("finished", [](const P& p) { return p.finished; });
    o.end_obj();
}

// Block maps are large (one entry per block, tens of thousands on a big GPU), so
// owners are run-length coded ([owner, run, owner, run, ...]); blocks held by more
// than one sequence and partly filled blocks are listed apart.
void write_snapshot(Out& o, const ks::BlockSnapshot& sn) {
    o.obj().kv("step", sn.step).kv("timeS", sn.time_s).kv("blockSize", static_cast<int64_t>(sn.block_size))
        .kv("capacityTokens", sn.capacity_tokens);
    if (!sn.owner.empty()) {
        o.kv("numBlocks", static_cast<int64_t>(sn.owner.size())).key("owner").arr();
        size_t i = 0;
        while (i < sn.owner.size()) {
            size_t j = i + 1;
            while (j < sn.owner.size() && sn.owner[j] == sn.owner[i]) ++j;
            o.v(static_cast<int64_t>(sn.owner[i])).v(static_cast<int64_t>(j - i));
            i = j;
        }
        o.end_arr().key("shared").arr();
        for (size_t b = 0; b < sn.refcount.size(); ++b)
            if (sn.refcount[b] > 1) o.v(static_cast<int64_t>(b)).v(static_cast<int64_t>(sn.refcount[b]));
        o.end_arr().key("partial").arr();
        for (size_t b = 0; b < sn.fill.size(); ++b)
            if (sn.fill[b] > 0 && sn.fill[b] < sn.block_size && sn.owner[b] != -1)
                o.v(static_cast<int64_t>(b)).v(static_cast<int64_t>(sn.fill[b]));
        o.end_arr();
    } else {
        // [request, seq, offset, allocated, reserved, length, stored] per region.
        o.kv("numBlocks", int64_t{0}).key("regions").arr();
        for (const auto& g : sn.regions) {
            o.arr().v(static_cast<int64_t>(g.request)).v(static_cast<int64_t>(g.seq)).v(g.offset).v(g.allocated)
                .v(g.reserved).v(g.length).v(g.stored).end_arr();
        }
        o.end_arr();
    }
    o.end_obj();
}

std::string sim_result(int id, const std::string& opts_text) {
    SimSession* s = find_sim(id);
    if (!s) return fail("bad_handle", "no simulation under handle " + std::to_string(id));
    json opts = json::parse(opts_text.empty() ? "{}" : opts_text, nullptr, false);
    if (opts.is_discarded() || !opts.is_object()) return fail("not_json", "simResult options must be a JSON object");
    kvb::Error err;
    const bool want_series = sim_bool(opts, "series", true, &err);
    const bool want_snaps = sim_bool(opts, "snapshots", true, &err);
    if (!err.code.empty()) return fail(err);
    Out o;
    o.obj().key("done").v(s->current >= s->sims.size());
    o.key("config");
    o.raw(json::parse(s->config_json));
    o.key("policies").arr();
    for (const ks::Simulator& sim : s->sims) {
        o.obj().key("summary");
        write_summary(o, sim.summary());
        if (want_series) {
            o.key("series");
            write_series(o, sim.series());
        }
        if (want_snaps) {
            o.key("snapshots").arr();
            for (const auto& sn : sim.snapshots()) write_snapshot(o, sn);
            o.end_arr();
        }
        o.end_obj();
    }
    o.end_arr().end_obj();
    return "{\"ok\":true,\"value\":" + o.take() + "}";
}

std::string sim_release(int id) {
    return sim_sessions().erase(id) ? ok(true) : fail("bad_handle", "no simulation under handle " + std::to_string(id));
}

}  // namespace

EMSCRIPTEN_BINDINGS(kvbudget_sim) {
    emscripten::function("simCreate", +[](int handle, std::string input) {
        return guarded([&] { return sim_create(handle, input); });
    });
    emscripten::function("simRun", +[](int id, double max_steps) { return guarded([&] { return sim_run(id, max_steps); }); });
    emscripten::function("simResult", +[](int id, std::string opts) { return guarded([&] { return sim_result(id, opts); }); });
    emscripten::function("simRelease", +[](int id) { return guarded([&] { return sim_release(id); }); });
}
