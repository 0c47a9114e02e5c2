// The only file that knows Emscripten. Every entry point takes and returns
// strings: JSON in, JSON out, always an object {"ok":true,"value":...} or
// {"ok":false,"code":...,"message":...}. Nothing throws across the boundary:
// without that rule a C++ exception would reach JS as a bare pointer number.
// The JS wrapper (kvbudget.js) turns the error objects into JS errors in one place.
//
// The page never computes memory itself: compute() returns every number the
// page shows, from the same core functions the CLI and the native tests use.
#include <emscripten/bind.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <new>
#include <optional>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dtype.h"
#include "kv.h"
#include "model.h"
#include "result.h"
#include "units.h"
#include "report.h"
#if KVB_HAVE_GPUS
#include "gpus.h"
#endif
#if KVB_HAVE_WEIGHTS
#include "weights.h"
#endif
#if KVB_HAVE_BUDGET
#include "budget.h"
#endif
#if KVB_HAVE_TRANSFORMERS_CACHE
#include "transformers_cache.h"
#endif

using nlohmann::json;

namespace {

std::string ok(json value) {
    json out = {{"ok", true}, {"value", std::move(value)}};
    return out.dump();
}

std::string fail(const std::string& code, const std::string& message) {
    json out = {{"ok", false}, {"code", code}, {"message", message}};
    return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string fail(const kvb::Error& e) { return fail(e.code, e.message); }

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

// Parsed models live here between calls so a control change does not re-parse
// the config (a recompute must stay well under a millisecond).
std::map<int, kvb::ModelSpec>& models() {
    static std::map<int, kvb::ModelSpec> m;
    return m;
}
int next_handle = 1;

json layer_json(const kvb::Layer& l) {
    json j = {{"kind", kvb::to_string(l.kind)}};
    switch (l.kind) {
        case kvb::LayerKind::Full:
        case kvb::LayerKind::Sliding:
        case kvb::LayerKind::Chunked:
            j["kvHeads"] = l.kv_heads;
            j["kHeadDim"] = l.k_head_dim;
            j["vHeadDim"] = l.v_head_dim;
            if (l.kind != kvb::LayerKind::Full) j["window"] = l.window;
            break;
        case kvb::LayerKind::Mla:
            j["kvLoraRank"] = l.kv_lora_rank;
            j["qkRopeHeadDim"] = l.qk_rope_head_dim;
            j["kvHeads"] = l.kv_heads;
            j["kHeadDim"] = l.k_head_dim;
            j["vHeadDim"] = l.v_head_dim;
            break;
        case kvb::LayerKind::Linear:
        case kvb::LayerKind::Mamba:
            j["convKernel"] = l.state.conv_kernel;
            j["dInner"] = l.state.d_inner;
            j["nGroups"] = l.state.n_groups;
            j["dState"] = l.state.d_state;
            j["heads"] = l.state.heads;
            j["convElems"] = l.state.conv_elems();
            j["ssmElems"] = l.state.ssm_elems();
            break;
        case kvb::LayerKind::None:
            break;
    }
    return j;
}

// Groups of identical layers (the core's layer_groups) as the formula panel reads them.
json layer_groups_json(const kvb::ModelSpec& m, const kvb::KvDtypes& d, bool with_bytes) {
    json groups = json::array();
    for (const auto& g : kvb::layer_groups(m, d)) {
        json j = layer_json(g.layer);
        j["layers"] = g.layers;
        j["firstLayer"] = static_cast<int64_t>(g.first_layer);
        if (with_bytes) {
            j["bytesPerTokenPerLayer"] = g.bytes_per_token_per_layer;
            j["bytesPerToken"] = g.bytes_per_token;
            j["stateBytesPerLayer"] = g.state_bytes_per_layer;
            j["stateBytes"] = g.state_bytes;
        }
        groups.push_back(std::move(j));
    }
    return groups;
}

json kv_type_json(const kvb::KvType& t) {
    return {{"name", t.name}, {"blockValues", t.block_values}, {"blockBytes", t.block_bytes}};
}

json model_json(const kvb::ModelSpec& m) {
    json j = {
        {"name", m.name},
        {"modelType", m.model_type},
        {"architecture", m.architecture},
        {"family", m.family},
        {"generic", m.generic},
        {"multimodal", m.multimodal},
        {"dtype", m.dtype},
        {"maxPositionEmbeddings", m.max_position_embeddings},
        {"numLayers", static_cast<int64_t>(m.layers.size())},
        {"notes", m.notes},
        {"quantization", {{"method", m.quant.method}, {"bits", m.quant.bits}, {"groupSize", m.quant.group_size}}},
        {"hiddenSize", m.dims.hidden_size},
        {"numAttentionHeads", m.dims.num_attention_heads},
        {"vocabSize", m.dims.vocab_size},
        {"numExperts", m.dims.num_experts},
        {"expertsPerToken", m.dims.experts_per_token},
    };
    json counts = json::object();
    for (auto k : {kvb::LayerKind::Full, kvb::LayerKind::Sliding, kvb::LayerKind::Chunked, kvb::LayerKind::Mla,
                   kvb::LayerKind::Linear, kvb::LayerKind::Mamba, kvb::LayerKind::None}) {
        if (m.count(k)) counts[kvb::to_string(k)] = m.count(k);
    }
    j["layerCounts"] = counts;
    return j;
}

const kvb::ModelSpec* find_model(int handle) {
    auto it = models().find(handle);
    return it == models().end() ? nullptr : &it->second;
}

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

constexpr int64_t kMaxTokens = int64_t{1} << 40;

void write_ladder(Out& o, const kvb::ModelSpec& m, int64_t context, int64_t seqs) {
    o.arr();
    for (const auto& r : kvb::optimization_ladder(m, context, seqs)) {
        o.obj().kv("step", r.step).kv("detail", r.detail).key("bytesPerToken");
        if (r.bytes_per_token) o.v(*r.bytes_per_token); else o.null();
        o.kv("kvBytes", r.kv_bytes).kv("saving", r.saving).end_obj();
    }
    o.end_arr();
}

#if KVB_HAVE_BUDGET
struct BudgetView {
    kvb::BudgetResult b;
    int64_t kv_need = 0;
    int64_t overhead = 0;
    int64_t total = 0;
    double bandwidth = 0;
    int64_t capacity_all = 0;
};

kvb::Result<BudgetView> budget_view(const kvb::ModelSpec& m, const Input& r, const std::string& engine,
                                    const std::string& kv, const std::string& ctk, int64_t context, int64_t seqs) {
    kvb::BudgetInputs in;
    auto e = kvb::parse_budget_engine(engine);
    if (!e) return e.error();
    in.engine = e.value();
    in.gpu = r.str("gpu", "rtx-4090");
    if (in.gpu.empty()) in.gpu_memory_bytes = r.count("gpuMemoryBytes", 24 * kvb::GiB, 1, int64_t{1} << 50);
    in.gpu_count = r.count("gpuCount", 1, 1, 1024);
    in.gpu_memory_utilization = r.fraction("gpuMemoryUtilization", 0.0);
    in.weights = r.str("weightsFormat", "auto");
    in.params = r.count("hubParameters", 0, 0, int64_t{1} << 50);
    in.max_model_len = context;
    in.max_num_seqs = seqs;
    in.kv_cache_dtype = engine == "llamacpp" ? ctk : kv;
    in.tensor_parallel_size = r.count("tensorParallel", 0, 0, 1024);
    if (!r.err->code.empty()) return *r.err;
    auto res = kvb::compute_budget(m, in);
    if (!res) return res.error();
    BudgetView v;
    v.b = std::move(res.value());
    const kvb::BudgetResult& b = v.b;

    if (b.engine == kvb::BudgetEngine::Vllm) {
        int64_t per_request = b.capacity.request_bytes;
        if (per_request == 0) {
            // No KV pool (the weights alone overflow): size the request from vLLM's layout anyway,
            // so the bar still shows what the KV cache would need.
            kvb::VllmOptions o;
            o.kv_cache_dtype = b.kv_cache_dtype.empty() ? "auto" : b.kv_cache_dtype;
            o.tensor_parallel_size = b.tp;
            o.pipeline_parallel_size = b.pp;
            o.max_model_len = b.max_model_len;
            o.max_num_batched_tokens = b.max_num_batched_tokens;
            if (auto layout = kvb::vllm_layout(m, o)) per_request = kvb::vllm_request_bytes(layout.value(), b.max_model_len);
        }
        if (kvb::mul_overflows(per_request, seqs, &v.kv_need)) v.kv_need = INT64_MAX;
    } else {
        v.kv_need = b.llama.total_bytes;
    }
    v.overhead = b.overhead_bytes + b.cudagraph_bytes;
    if (kvb::add_overflows(b.weights_per_gpu_bytes, v.kv_need, &v.total) || kvb::add_overflows(v.total, b.activation_bytes, &v.total) ||
        kvb::add_overflows(v.total, v.overhead, &v.total)) {
        v.total = INT64_MAX;
    }
#if KVB_HAVE_GPUS
    if (const kvb::Gpu* g = b.gpu_id.empty() ? nullptr : kvb::find_gpu(b.gpu_id)) v.bandwidth = g->bandwidth_bytes_per_s;
#endif
    if (kvb::mul_overflows(b.gpu_total_bytes, b.gpu_count, &v.capacity_all)) v.capacity_all = 0;
    return v;
}

void write_budget(Out& o, const BudgetView& v) {
    const kvb::BudgetResult& b = v.b;
    const bool vllm = b.engine == kvb::BudgetEngine::Vllm;
    o.key("budget").obj()
        .kv("engine", kvb::to_string(b.engine)).kv("gpuId", b.gpu_id).kv("gpuName", b.gpu_name)
        .kv("gpuCount", b.gpu_count).kv("tp", b.tp).kv("pp", b.pp)
        .kv("gpuMemoryUtilization", b.gpu_memory_utilization)
        .kv("capacityBytes", b.gpu_total_bytes).kv("usableBytes", b.requested_bytes)
        .kv("weightsBytes", b.weights.bytes).kv("weightsPerGpuBytes", b.weights_per_gpu_bytes)
        .kv("weightsFormat", b.weights.format.name).kv("params", b.weights.params)
        .kv("kvBytes", v.kv_need).kv("kvPoolBytes", b.kv_pool_bytes)
        .kv("activationsBytes", b.activation_bytes).kv("overheadBytes", v.overhead)
        .kv("totalBytes", v.total).kv("freeBytes", v.total == INT64_MAX ? INT64_MIN : b.gpu_total_bytes - v.total)
        .kv("fits", b.fits).kv("allSeqsFit", b.all_seqs_fit)
        .kv("maxContext", b.max_context).kv("maxContextCapped", b.max_context_capped)
        .kv("maxConcurrency", b.max_concurrency).kv("vllmConcurrency", b.vllm_concurrency)
        .kv("maxModelLen", b.max_model_len).kv("maxNumSeqs", b.max_num_seqs).kv("kvCacheDtype", b.kv_cache_dtype)
        .end_obj();
    o.key("engineView").obj()
        .strings("logLines", vllm ? b.capacity.log_lines : b.llama.log_lines)
        .kv("command", vllm ? b.vllm_command : b.llama_command)
        .kv("error", b.error_text)
        .strings("notes", b.notes)
        .end_obj();
    o.key("decode").obj()
        .kv("context", b.decode.context).kv("weightBytesPerToken", b.decode.weight_bytes_per_token)
        .kv("kvBytesPerToken", b.decode.kv_bytes_per_token).kv("tokensPerSecondSingle", b.decode.tokens_per_s_single)
        .kv("batch", b.decode.batch).kv("tokensPerSecondBatch", b.decode.tokens_per_s_batch)
        .kv("bandwidthBytesPerS", v.bandwidth)
        .end_obj();
}
#endif

std::string compute(int handle, const std::string& input_text) {
    const kvb::ModelSpec* mp = find_model(handle);
    if (!mp) return fail("bad_handle", "no model loaded under handle " + std::to_string(handle));
    json in = json::parse(input_text, nullptr, false);
    if (in.is_discarded() || !in.is_object()) return fail("not_json", "compute input must be a JSON object");
    kvb::Error err;
    Input r{in, &err};
    const std::string engine = r.str("engine", "vllm");
    const int64_t context = r.count("context", 32768, 1, kMaxTokens);
    const int64_t seqs = r.count("seqs", 1, 1, int64_t{1} << 20);
    const std::string kv = r.str("kvDtype", "auto");
    const std::string ctk = r.str("cacheTypeK", "f16");
    const std::string ctv = r.str("cacheTypeV", "f16");
    if (!err.code.empty()) return fail(err);
    if (engine != "vllm" && engine != "llamacpp" && engine != "transformers") {
        return fail("bad_value", "engine must be vllm, llamacpp or transformers, got \"" + engine + "\"");
    }

    // The model as this engine caches it (transformers: MLA decompressed, window-1
    // sliding layers; llama.cpp: -ctk / -ctv and f32 state), as `kvbudget kv` uses it.
    auto ek = kvb::engine_kv(*mp, engine, kv, ctk, ctv);
    if (!ek) return fail(ek.error());
    const kvb::EngineKv& e = ek.value();
    const kvb::ModelSpec& m = e.view;
    const kvb::KvDtypes& d = e.dtypes;

    const kvb::IdealKv ideal = kvb::ideal_kv(m, d);
    auto total = kvb::kv_bytes_at(m, d, context, seqs);
    if (!total) return fail(total.error());
    auto per_seq = kvb::kv_bytes_at(m, d, context, 1);
    if (!per_seq) return fail(per_seq.error());

    // The engine budget first: its refusal changes what else is written.
    std::vector<std::string> notes;
    std::optional<kvb::Error> budget_error;
#if KVB_HAVE_BUDGET
    std::optional<BudgetView> bv;
    // Budgets exist for the serving engines; llama.cpp's budget takes one type for K and V.
    if (engine == "transformers") {
        notes.push_back("The memory budget (activations, overhead, what fits) is modelled for vLLM and llama.cpp; "
                        "for transformers this page shows its KV cache only.");
    } else if (engine == "llamacpp" && ctk != ctv) {
        notes.push_back("The llama.cpp budget needs the same -ctk and -ctv type; the KV numbers above use K " + ctk +
                        " and V " + ctv + ".");
    } else {
        auto got = budget_view(*mp, r, engine, kv, ctk, context, seqs);
        if (got) {
            bv = std::move(got.value());
        } else {
            // Bad control values are errors; the engine's refusal (context past the model's
            // limit, a count the weights model cannot make) is shown beside the KV numbers.
            if (!err.code.empty()) return fail(err);
            budget_error = got.error();
        }
    }
    const int64_t weights_bytes = bv ? bv->b.weights.bytes : 0;
#else
    const int64_t weights_bytes = 0;
#endif

    Out o;
    o.obj();
    o.key("model").obj().kv("name", m.name).kv("maxPositionEmbeddings", m.max_position_embeddings).end_obj();
    o.kv("engine", engine);
    o.key("kvTypes").obj().key("k").raw(kv_type_json(d.k)).key("v").raw(kv_type_json(d.v))
        .kv("convStateBytes", d.conv_state_bytes).kv("ssmStateBytes", d.ssm_state_bytes).end_obj();
    o.key("kv").obj()
        .kv("bytesPerToken", ideal.bytes_per_token).kv("windowedBytesPerToken", ideal.windowed_bytes_per_token)
        .kv("stateBytesPerSeq", ideal.state_bytes_per_seq).kv("bytesPerSeq", per_seq.value())
        .kv("bytesTotal", total.value()).kv("context", context).kv("seqs", seqs);
    o.key("kinds").arr();
    for (const auto& k : ideal.kinds) {
        o.obj().kv("kind", kvb::to_string(k.kind)).kv("layers", k.layers).kv("bytesPerToken", k.bytes_per_token)
            .kv("window", k.window).kv("stateBytes", k.state_bytes).end_obj();
    }
    o.end_arr().end_obj();
    o.key("formula").raw(layer_groups_json(m, d, true));

    // The seed article's table: 1K .. 128K up to the model's own maximum, and that maximum.
    o.key("contextTable").arr();
    for (const auto& row : kvb::context_table(e, seqs)) {
        o.obj().kv("context", row.context).kv("isModelMax", row.is_model_max).kv("beyondModelMax", false)
            .kv("bytesPerSeq", row.bytes_per_seq).kv("bytesTotal", row.bytes_total);
        if (weights_bytes > 0) o.kv("vsWeights", static_cast<double>(row.bytes_total) / static_cast<double>(weights_bytes));
        o.end_obj();
    }
    o.end_arr();

    // MHA / GQA / MQA: the same model with every attention layer re-headed.
    o.key("comparison").arr();
    for (const auto& hv : kvb::head_variants(e, context, seqs)) {
        o.obj().kv("variant", hv.variant).kv("kvHeads", hv.kv_heads).kv("bytesPerToken", hv.bytes_per_token).key("bytesTotal");
        if (hv.bytes_total) o.v(*hv.bytes_total); else o.null();
        o.end_obj();
    }
    o.end_arr();

    // KV versus context for the chart, up to past the model maximum.
    const int64_t top = std::max<int64_t>({context, m.max_position_embeddings, 4096});
    std::vector<int64_t> xs, ys;
    for (const auto& pt : kvb::kv_curve(e, seqs, top)) {
        xs.push_back(pt.context);
        ys.push_back(pt.bytes);
    }
    o.key("chart").obj();
    o.key("contexts").arr();
    for (int64_t x : xs) o.v(x);
    o.end_arr().key("kvBytes").arr();
    for (int64_t y : ys) o.v(y);
    o.end_arr();
#if KVB_HAVE_BUDGET
    o.kv("weightsBytes", weights_bytes).kv("capacityBytes", bv ? bv->capacity_all : int64_t{0})
        .kv("crossoverContext", bv ? kvb::crossover_context(m, d, weights_bytes, seqs) : int64_t{0});
#else
    o.kv("weightsBytes", int64_t{0}).kv("capacityBytes", int64_t{0}).kv("crossoverContext", int64_t{0});
#endif
    o.end_obj();

    o.key("ladder");
    write_ladder(o, *mp, context, seqs);
#if KVB_HAVE_BUDGET
    if (bv) {
        write_budget(o, *bv);
    } else {
        o.key("budget").null().key("engineView").null().key("decode").null();
    }
#else
    o.key("budget").null().key("engineView").null().key("decode").null();
#endif
    o.key("budgetError");
    if (budget_error) {
        o.obj().kv("code", budget_error->code).kv("message", budget_error->message).end_obj();
    } else {
        o.null();
    }
    o.strings("notes", notes);
    o.end_obj();
    return "{\"ok\":true,\"value\":" + o.take() + "}";
}

std::string parse_config(const std::string& text, const std::string& name) {
    auto r = kvb::parse_config(text, name);
    if (!r) return fail(r.error());
    const int handle = next_handle++;
    json spec = model_json(r.value());
    spec["layerGroups"] = layer_groups_json(r.value(), kvb::KvDtypes{}, false);
    models().emplace(handle, std::move(r.value()));
    return ok({{"handle", handle}, {"spec", spec}});
}

std::string release_model(int handle) {
    return models().erase(handle) ? ok(true) : fail("bad_handle", "no model loaded under handle " + std::to_string(handle));
}

std::string kv_type_names(const std::string& engine) {
    if (engine == "llamacpp") return ok(kvb::llamacpp_kv_type_names());
    if (engine == "vllm" || engine == "transformers") return ok(kvb::vllm_kv_type_names());
    return fail("bad_value", "engine must be vllm, llamacpp or transformers, got \"" + engine + "\"");
}

std::string parse_size(const std::string& text) {
    auto r = kvb::parse_size(text);
    return r ? ok(r.value()) : fail(r.error());
}

std::string format_bytes(double bytes) {
    if (!(bytes >= -9.2e18 && bytes <= 9.2e18)) return fail("bad_value", "bytes out of range");
    return ok(kvb::format_bytes(static_cast<int64_t>(bytes)));
}

// Lists the page builds its selects from: GPUs and weight formats as the core knows them.
std::string catalog() {
    json gpus = json::array();
#if KVB_HAVE_GPUS
    for (const auto& g : kvb::gpu_catalog()) {
        gpus.push_back({{"id", g.id}, {"name", g.name}, {"vendor", g.vendor}, {"memoryBytes", g.memory_bytes},
                        {"totalBytes", g.total_bytes()}, {"bandwidthBytesPerS", g.bandwidth_bytes_per_s},
                        {"unifiedMemory", g.unified_memory}});
    }
#endif
    json formats = json::array();
#if KVB_HAVE_WEIGHTS
    for (const auto& n : kvb::weight_format_names()) formats.push_back({{"id", n}, {"label", n}});
#endif
    return ok({{"gpus", gpus}, {"weightFormats", formats}});
}

}  // namespace

EMSCRIPTEN_BINDINGS(kvbudget) {
    emscripten::function("parseConfig", +[](std::string text, std::string name) {
        return guarded([&] { return parse_config(text, name); });
    });
    emscripten::function("releaseModel", +[](int handle) { return guarded([&] { return release_model(handle); }); });
    emscripten::function("compute", +[](int handle, std::string input) {
        return guarded([&] { return compute(handle, input); });
    });
    emscripten::function("kvTypeNames", +[](std::string engine) { return guarded([&] { return kv_type_names(engine); }); });
    emscripten::function("parseSize", +[](std::string text) { return guarded([&] { return parse_size(text); }); });
    emscripten::function("catalog", +[]() { return guarded([&] { return catalog(); }); });
    emscripten::function("formatBytes", +[](double b) { return guarded([&] { return format_bytes(b); }); });
}
