#include "report/sim_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "report/json_common.h"

namespace kvb {

using nlohmann::json;
using namespace report_json;

namespace {

void add_run_info(json& j, const SimRunInfo& r) {
    j["model"] = r.model;
    j["workload"] = r.workload;
    j["requests"] = r.requests;
    j["arrivals"] = r.arrivals;
    j["rate"] = r.rate;
    j["seed"] = r.seed;
    j["shared_prefix"] = r.shared_prefix;
    j["shared_fraction"] = r.shared_fraction;
    j["kv_cache_bytes"] = r.kv_cache_bytes;
    j["kv_bytes_per_token"] = r.kv_bytes_per_token;
    j["kv_cache_dtype"] = r.kv_cache_dtype;
    j["from_gpu"] = r.from_gpu;
    j["gpu_name"] = r.gpu_name;
    j["gpu_memory_utilization"] = r.gpu_memory_utilization;
    j["weights_bytes"] = r.weights_bytes;
    j["runtime_bytes"] = r.runtime_bytes;
    j["time_model_gpu"] = r.time_model_gpu;
    j["block_size"] = r.block_size;
    j["max_model_len"] = r.max_model_len;
    j["max_num_seqs"] = r.max_num_seqs;
    j["max_num_batched_tokens"] = r.max_num_batched_tokens;
    j["n"] = r.n;
    j["beam"] = r.beam;
    j["independent_sample_lengths"] = r.independent_sample_lengths;
    j["preemption"] = r.preemption;
    j["swap_space_bytes"] = r.swap_space_bytes;
    j["prefix_caching"] = r.prefix_caching;
    j["windowed_or_state_left_out"] = r.windowed_or_state_left_out;
    j["policy_names"] = r.policy_names;
    j["notes"] = notes_json(r.notes);
}

json summary_json(const sim::Summary& s) {
    return {
        {"policy", s.policy},
        {"requests", s.requests},
        {"finished", s.finished},
        {"refused", s.refused},
        {"refused_no_room", s.refused_no_room},
        {"truncated", s.truncated},
        {"preemptions", s.preemptions},
        {"swapped_out", s.swapped_out},
        {"swap_fallbacks", s.swap_fallbacks},
        {"recomputed_tokens", s.recomputed_tokens},
        {"steps", s.steps},
        {"makespan_s", s.makespan_s},
        {"capacity_tokens", s.capacity_tokens},
        {"num_blocks", s.num_blocks},
        {"token_states_fraction", s.memory.token_states},
        {"reserved_fraction", s.memory.reserved},
        {"internal_fragmentation_fraction", s.memory.internal_fragmentation},
        {"external_fragmentation_fraction", s.memory.external_fragmentation},
        {"cached_fraction", s.memory.cached},
        {"free_fraction", s.memory.free},
        {"null_block_fraction", s.memory.null_block},
        {"token_states_of_used_fraction", s.token_states_of_used},
        {"reserved_of_used_fraction", s.of_used.reserved},
        {"internal_fragmentation_of_used_fraction", s.of_used.internal_fragmentation},
        {"external_fragmentation_of_used_fraction", s.of_used.external_fragmentation},
        {"mean_running", s.mean_running},
        {"max_running", s.max_running},
        {"mean_waiting", s.mean_waiting},
        {"max_waiting", s.max_waiting},
        {"sharing_saved_fraction", s.sharing_saved},
        {"max_blocks_saved", s.max_blocks_saved},
        {"cow_copies", s.cow_copies},
        {"prefix_hit_tokens", s.prefix_hit_tokens},
        {"prefix_query_tokens", s.prefix_query_tokens},
        {"prompt_tokens", s.prompt_tokens},
        {"generated_tokens", s.generated_tokens},
        {"throughput_tokens_per_s", s.throughput_tokens_per_s},
        {"requests_per_s", s.requests_per_s},
        {"ttft_mean_s", s.ttft_mean_s},
        {"ttft_p50_s", s.ttft_p50_s},
        {"ttft_p90_s", s.ttft_p90_s},
        {"ttft_p99_s", s.ttft_p99_s},
        {"tpot_mean_s", s.tpot_mean_s},
        {"tpot_p50_s", s.tpot_p50_s},
        {"tpot_p90_s", s.tpot_p90_s},
        {"tpot_p99_s", s.tpot_p99_s},
        {"e2e_mean_s", s.e2e_mean_s},
        {"e2e_p50_s", s.e2e_p50_s},
        {"e2e_p90_s", s.e2e_p90_s},
        {"e2e_p99_s", s.e2e_p99_s},
        {"normalized_latency_s", s.normalized_latency_s},
        {"early_finished", s.early_finished},
        {"late_finished", s.late_finished},
        {"early_arrival_mean_s", s.early_arrival_mean_s},
        {"late_arrival_mean_s", s.late_arrival_mean_s},
        {"early_ttft_mean_s", s.early_ttft_mean_s},
        {"late_ttft_mean_s", s.late_ttft_mean_s},
        {"waiting_at_last_arrival", s.waiting_at_last_arrival},
    };
}

json report_json_value(const SimReport& r) {
    json j = json::object();
    add_run_info(j, r.run);
    j["done"] = r.done;
    json ps = json::array();
    for (const sim::Summary& s : r.policies) ps.push_back(summary_json(s));
    j["policies"] = std::move(ps);
    j["conclusions"] = notes_json(r.conclusions);
    return j;
}

// Series and block maps are the bulk of a result (tens of thousands of numbers per
// policy): written straight into the text, not through a DOM, which cost ten times
// the simulation's own time in the browser. Doubles in the shortest form that reads
// back exactly, as nlohmann writes the summary's.
class Writer {
public:
    std::string out;
    void raw(const char* s) { out += s; }
    void key(const char* k) {
        comma();
        out += '"';
        out += k;  // keys are literals here
        out += "\":";
        fresh_ = true;
    }
    void open(char c) {
        comma();
        out += c;
        fresh_ = true;
    }
    void close(char c) {
        out += c;
        fresh_ = false;
    }
    void num(int64_t v) {
        comma();
        char b[24];
        out.append(b, std::to_chars(b, b + sizeof b, v).ptr);
    }
    void num(double v) {
        comma();
        if (!std::isfinite(v)) {
            out += "null";
            return;
        }
        char b[64];
        char* end = nlohmann::detail::to_chars(b, b + sizeof b, v);
        out.append(b, end);
    }

private:
    void comma() {
        if (!fresh_) out.push_back(',');
        fresh_ = false;
    }
    bool fresh_ = true;
};

// Columns, not rows: what uPlot takes, and a third of the JSON. Names are TimePoint's
// members, the memory split's parts flattened.
void write_series(Writer& w, const std::vector<sim::TimePoint>& ts) {
    auto col = [&](const char* name, auto get) {
        w.key(name);
        w.open('[');
        for (const auto& p : ts) w.num(get(p));
        w.close(']');
    };
    using P = sim::TimePoint;
    w.open('{');
    col("time_s", [](const P& p) { return p.time_s; });
    col("duration_s", [](const P& p) { return p.duration_s; });
    col("token_states", [](const P& p) { return p.memory.token_states; });
    col("reserved", [](const P& p) { return p.memory.reserved; });
    col("internal_fragmentation", [](const P& p) { return p.memory.internal_fragmentation; });
    col("external_fragmentation", [](const P& p) { return p.memory.external_fragmentation; });
    col("cached", [](const P& p) { return p.memory.cached; });
    col("free", [](const P& p) { return p.memory.free; });
    col("null_block", [](const P& p) { return p.memory.null_block; });
    col("running", [](const P& p) { return p.running; });
    col("waiting", [](const P& p) { return p.waiting; });
    col("sharing_saved", [](const P& p) { return p.sharing_saved; });
    col("preemptions", [](const P& p) { return p.preemptions; });
    col("finished", [](const P& p) { return p.finished; });
    w.close('}');
}

// Block maps are large (one entry per block, tens of thousands on a big GPU), so
// owners are run-length coded ([owner, run, owner, run, ...]); blocks held by more
// than one sequence and partly filled blocks are listed apart. Contiguous policies
// list their regions as [request, seq, offset, allocated, reserved, length, stored].
// The JSON lists them through these; the packed form (sim_snapshots_packed) writes
// owners as a table and an index per block, which tests/node/sim.test.mjs reads back
// as these runs.
template <class F>
void each_owner_run(const sim::BlockSnapshot& sn, F&& f) {
    size_t i = 0;
    while (i < sn.owner.size()) {
        size_t k = i + 1;
        while (k < sn.owner.size() && sn.owner[k] == sn.owner[i]) ++k;
        f(sn.owner[i], static_cast<int32_t>(k - i));
        i = k;
    }
}
template <class F>
void each_shared(const sim::BlockSnapshot& sn, F&& f) {
    for (size_t b = 0; b < sn.refcount.size(); ++b)
        if (sn.refcount[b] > 1) f(static_cast<int32_t>(b), sn.refcount[b]);
}
template <class F>
void each_partial(const sim::BlockSnapshot& sn, F&& f) {
    for (size_t b = 0; b < sn.fill.size(); ++b)
        if (sn.fill[b] > 0 && sn.fill[b] < sn.block_size && sn.owner[b] != -1) f(static_cast<int32_t>(b), sn.fill[b]);
}
template <class F>
void each_region_value(const sim::Region& g, F&& f) {
    for (int64_t v : {static_cast<int64_t>(g.request), static_cast<int64_t>(g.seq), g.offset, g.allocated, g.reserved,
                      g.length, g.stored})
        f(v);
}

void write_snapshot(Writer& w, const sim::BlockSnapshot& sn) {
    auto pair = [&](int32_t a, int32_t b) {
        w.num(static_cast<int64_t>(a));
        w.num(static_cast<int64_t>(b));
    };
    w.open('{');
    w.key("step");
    w.num(sn.step);
    w.key("time_s");
    w.num(sn.time_s);
    w.key("block_size");
    w.num(static_cast<int64_t>(sn.block_size));
    w.key("capacity_tokens");
    w.num(sn.capacity_tokens);
    w.key("num_blocks");
    w.num(static_cast<int64_t>(sn.owner.size()));
    if (!sn.owner.empty()) {
        w.key("owner");
        w.open('[');
        each_owner_run(sn, pair);
        w.close(']');
        w.key("shared");
        w.open('[');
        each_shared(sn, pair);
        w.close(']');
        w.key("partial");
        w.open('[');
        each_partial(sn, pair);
        w.close(']');
    } else {
        w.key("regions");
        w.open('[');
        for (const auto& g : sn.regions) {
            w.open('[');
            each_region_value(g, [&](int64_t v) { w.num(v); });
            w.close(']');
        }
        w.close(']');
    }
    w.close('}');
}

}  // namespace

std::string to_json_text(const SimRunInfo& r) {
    json j = json::object();
    add_run_info(j, r);
    return dump(j);
}

std::string to_json_text(const SimReport& r) {
    return dump(report_json_value(r));
}

std::string to_json_text(const SimProgress& p) {
    return dump({{"done", p.done},
                 {"progress", p.progress},
                 {"policy_index", p.policy_index},
                 {"policy", p.policy},
                 {"policy_progress", p.policy_progress},
                 {"steps", p.steps},
                 {"time_s", p.time_s}});
}

std::string sim_result_json_text(const SimSession& s, bool series, bool snapshots) {
    // The summary is spliced in as text so it is byte for byte to_json_text(SimReport).
    Writer w;
    w.raw("{\"summary\":");
    w.raw(to_json_text(s.report()).c_str());
    w.raw(",");  // the next key follows a written value
    if (series) {
        w.key("series");
        w.open('[');
        for (const sim::Simulator& sim : s.simulators()) write_series(w, sim.series());
        w.close(']');
    }
    if (snapshots) {
        w.key("snapshots");
        w.open('[');
        for (const sim::Simulator& sim : s.simulators()) {
            w.open('[');
            for (const auto& sn : sim.snapshots()) write_snapshot(w, sn);
            w.close(']');
        }
        w.close(']');
    }
    if (w.out.back() == ',') w.out.pop_back();
    w.out += '}';
    return std::move(w.out);
}

SimPackedSnapshots sim_snapshots_packed(const SimSession& s) {
    SimPackedSnapshots p;
    const auto& sims = s.simulators();
    size_t headers = 1 + sims.size(), blocks = 0;
    for (const sim::Simulator& sim : sims) {
        headers += kSnapshotHeader * sim.snapshots().size();
        for (const sim::BlockSnapshot& sn : sim.snapshots()) blocks += sn.owner.size();
    }
    p.f64.reserve(headers);
    p.f64.push_back(static_cast<double>(sims.size()));
    for (const sim::Simulator& sim : sims) p.f64.push_back(static_cast<double>(sim.snapshots().size()));
    // Headers first, all at known places; the regions follow them in the same array.
    size_t at = p.f64.size();
    p.f64.resize(headers);
    p.u16.resize(blocks);
    auto span = [&](size_t& field, size_t begin, size_t end) {
        p.f64[field++] = static_cast<double>(begin);
        p.f64[field++] = static_cast<double>(end - begin);
    };
    // A map's owners in one pass over its blocks: each block's position in the map's
    // table of owners (a few hundred requests at most in flight) rather than runs of
    // owners, as a request's blocks lie scattered over the pool (on the Azure trace a
    // run averages 1.5 blocks, so the runs were nearly two numbers a block).
    // slot[o + 3]: owner o's position in the current map's table, -1 when not in it.
    std::vector<int32_t> slot, table, shared, partial;
    size_t u = 0;
    for (const sim::Simulator& sim : sims)
        for (const sim::BlockSnapshot& sn : sim.snapshots()) {
            size_t h = at;
            at += kSnapshotHeader;
            const size_t n = sn.owner.size();
            p.f64[h++] = static_cast<double>(sn.step);
            p.f64[h++] = sn.time_s;
            p.f64[h++] = sn.block_size;
            p.f64[h++] = static_cast<double>(sn.capacity_tokens);
            p.f64[h++] = static_cast<double>(n);
            table.clear();
            shared.clear();
            partial.clear();
            const int32_t* owner = sn.owner.data();
            const int32_t* ref = sn.refcount.data();
            const int32_t* fill = sn.fill.data();
            uint16_t* index = p.u16.data() + u;
            bool wide = false;  // more owners than a Uint16 can index: owners listed per block
            for (size_t b = 0; b < n; ++b) {
                const int32_t o = owner[b];
                const size_t key = static_cast<size_t>(static_cast<int64_t>(o) + 3);
                if (key >= slot.size()) slot.resize(std::max(key + 1, slot.size() * 2), -1);
                int32_t& k = slot[key];
                if (k < 0) {
                    k = static_cast<int32_t>(table.size());
                    table.push_back(o);
                }
                if (k > kMaxOwnerIndex) wide = true;
                index[b] = static_cast<uint16_t>(k);
                if (ref[b] > 1) {
                    shared.push_back(static_cast<int32_t>(b));
                    shared.push_back(ref[b]);
                }
                if (fill[b] > 0 && fill[b] < sn.block_size && o != -1) {
                    partial.push_back(static_cast<int32_t>(b));
                    partial.push_back(fill[b]);
                }
            }
            for (int32_t o : table) slot[static_cast<size_t>(static_cast<int64_t>(o) + 3)] = -1;
            const size_t t0 = p.i32.size();
            if (wide) {
                p.i32.insert(p.i32.end(), owner, owner + n);
                p.f64[h++] = static_cast<double>(t0);
                p.f64[h++] = static_cast<double>(n);
                p.f64[h++] = -1;
            } else {
                p.i32.insert(p.i32.end(), table.begin(), table.end());
                p.f64[h++] = static_cast<double>(t0);
                p.f64[h++] = static_cast<double>(table.size());
                p.f64[h++] = static_cast<double>(u);
            }
            u += n;
            const size_t s0 = p.i32.size();
            p.i32.insert(p.i32.end(), shared.begin(), shared.end());
            span(h, s0, p.i32.size());
            const size_t q0 = p.i32.size();
            p.i32.insert(p.i32.end(), partial.begin(), partial.end());
            span(h, q0, p.i32.size());
            const size_t r0 = p.f64.size();
            for (const auto& g : sn.regions)
                each_region_value(g, [&](int64_t v) { p.f64.push_back(static_cast<double>(v)); });
            span(h, r0, p.f64.size());
        }
    return p;
}

Result<SimInputs> sim_inputs_from_json(const std::string& text, sim::TraceSource trace_source) {
    json j = parse_json_dom(text);
    if (j.is_discarded() || !j.is_object()) return make_error("not_json", note("inputs_not_object"));
    SimInputs in;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        const json& v = it.value();
        auto count = [&](int64_t& out) { return read_count(k, v, out); };
        auto opt_count = [&](std::optional<int64_t>& out) -> std::optional<Error> {
            if (v.is_null()) {
                out.reset();
                return std::nullopt;
            }
            int64_t x = 0;
            if (auto e = count(x)) return e;
            out = x;
            return std::nullopt;
        };
        auto number = [&](double& out) { return read_number(k, v, out); };
        auto opt_number = [&](std::optional<double>& out) -> std::optional<Error> {
            if (v.is_null()) {
                out.reset();
                return std::nullopt;
            }
            double x = 0;
            if (auto e = number(x)) return e;
            out = x;
            return std::nullopt;
        };
        auto text_field = [&](std::string& out) { return read_text(k, v, out); };
        std::optional<Error> e;
        if (k == "policies") {
            if (v.is_string()) {
                in.policies = {v.get<std::string>()};
            } else if (v.is_array()) {
                in.policies.clear();
                for (const json& p : v) {
                    if (!p.is_string()) return field_error(k, "list of policy names", v);
                    in.policies.push_back(p.get<std::string>());
                }
            } else {
                e = field_error(k, "policy name or list of policy names", v);
            }
        } else if (k == "kv_cache_memory")
            e = opt_count(in.kv_cache_memory);
        else if (k == "gpu")
            e = text_field(in.gpu);
        else if (k == "gpu_memory_bytes")
            e = count(in.gpu_memory_bytes);
        else if (k == "gpu_memory_utilization")
            e = number(in.gpu_memory_utilization);
        else if (k == "kv_cache_dtype")
            e = text_field(in.kv_cache_dtype);
        else if (k == "weights")
            e = text_field(in.weights);
        else if (k == "params")
            e = count(in.params);
        else if (k == "block_size")
            e = count(in.block_size);
        else if (k == "max_model_len")
            e = opt_count(in.max_model_len);
        else if (k == "max_num_seqs")
            e = opt_count(in.max_num_seqs);
        else if (k == "max_num_batched_tokens")
            e = opt_count(in.max_num_batched_tokens);
        else if (k == "preemption")
            e = text_field(in.preemption);
        else if (k == "swap_space_bytes")
            e = count(in.swap_space_bytes);
        else if (k == "sample_lengths")
            e = text_field(in.sample_lengths);
        else if (k == "n")
            e = count(in.n);
        else if (k == "beam")
            e = count(in.beam);
        else if (k == "prefix_caching")
            e = read_flag(k, v, in.prefix_caching);
        else if (k == "workload")
            e = text_field(in.workload);
        else if (k == "trace")
            e = text_field(in.trace);
        else if (k == "trace_name")
            e = text_field(in.trace_name);
        else if (k == "requests")
            e = opt_count(in.requests);
        else if (k == "rate")
            e = opt_number(in.rate);
        else if (k == "seed")
            e = count(in.seed);
        else if (k == "shared_prefix")
            e = opt_count(in.shared_prefix);
        else if (k == "shared_fraction")
            e = opt_number(in.shared_fraction);
        else if (k == "snapshots")
            e = count(in.snapshots);
        else if (k == "series_points")
            e = count(in.series_points);
        else
            return make_error("bad_value", note("input_unknown_field", {{"field", k}}));
        if (e) return *e;
    }
    in.trace_source = std::move(trace_source);
    if (auto ok = validate(in); !ok) return ok.error();
    return in;
}

Result<SimResultOptions> sim_result_options_from_json(const std::string& text) {
    json j = parse_json_dom(text.empty() ? "{}" : text);
    if (j.is_discarded() || !j.is_object()) return make_error("not_json", note("inputs_not_object"));
    SimResultOptions o;
    for (auto it = j.begin(); it != j.end(); ++it) {
        bool* target = it.key() == "series" ? &o.series : it.key() == "snapshots" ? &o.snapshots : nullptr;
        if (!target) return make_error("bad_value", note("input_unknown_field", {{"field", it.key()}}));
        if (auto e = read_flag(it.key(), it.value(), *target)) return *e;
    }
    return o;
}

}  // namespace kvb
