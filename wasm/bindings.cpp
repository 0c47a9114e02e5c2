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

#include "model/dtype.h"
#include "kv/kv.h"
#include "model/model.h"
#include "base/result.h"
#include "base/units.h"
#include "kv/tables.h"
#include "budget/gpus.h"
#include "model/weights.h"
#include "budget/budget.h"
#include "engines/transformers_cache.h"

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

struct BudgetView {
    kvb::BudgetResult b;
    int64_t kv_need = 0;
    int64_t overhead = 0;
    int64_t total = 0;
    double bandwidth = 0;
    int64_t capacity_all = 0;
};

kvb::Result<BudgetView> budget_view(const kvb::ModelSpec& m, const Input& r, const std::string& engine,
                                    const std::string& kv, const std::string& ctk, const std::string& ctv,
                                    int64_t context, int64_t seqs) {
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
    if (engine == "llamacpp") in.kv_cache_dtype_v = ctv;
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
    } else if (b.engine == kvb::BudgetEngine::Transformers) {
        // DynamicCache for the batch, plus the copy torch.cat holds while the cache grows.
        if (kvb::add_overflows(b.cache_bytes, b.cache_transient_bytes, &v.kv_need)) v.kv_need = INT64_MAX;
    } else {
        v.kv_need = b.llama.total_bytes;
    }
    v.overhead = b.overhead_bytes + b.cudagraph_bytes;
    if (kvb::add_overflows(b.weights_per_gpu_bytes, v.kv_need, &v.total) || kvb::add_overflows(v.total, b.activation_bytes, &v.total) ||
        kvb::add_overflows(v.total, v.overhead, &v.total)) {
        v.total = INT64_MAX;
    }
    if (const kvb::Gpu* g = b.gpu_id.empty() ? nullptr : kvb::find_gpu(b.gpu_id)) v.bandwidth = g->bandwidth_bytes_per_s;
    if (kvb::mul_overflows(b.gpu_total_bytes, b.gpu_count, &v.capacity_all)) v.capacity_all = 0;
    return v;
}

void write_budget(Out& o, const BudgetView& v) {
    const kvb::BudgetResult& b = v.b;
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
        .strings("logLines", kvb::budget_log_lines(b))
        .kv("command", kvb::budget_command(b))
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
    std::optional<BudgetView> bv;
    {
        auto got = budget_view(*mp, r, engine, kv, ctk, ctv, context, seqs);
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
    o.kv("weightsBytes", weights_bytes).kv("capacityBytes", bv ? bv->capacity_all : int64_t{0})
        .kv("crossoverContext", bv ? kvb::crossover_context(m, d, weights_bytes, seqs) : int64_t{0});
    o.end_obj();

    o.key("ladder");
    write_ladder(o, *mp, context, seqs);
    if (bv) {
        write_budget(o, *bv);
    } else {
        o.key("budget").null().key("engineView").null().key("decode").null();
    }
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
    for (const auto& g : kvb::gpu_catalog()) {
        gpus.push_back({{"id", g.id}, {"name", g.name}, {"vendor", g.vendor}, {"memoryBytes", g.memory_bytes},
                        {"totalBytes", g.total_bytes()}, {"bandwidthBytesPerS", g.bandwidth_bytes_per_s},
                        {"unifiedMemory", g.unified_memory}});
    }
    json formats = json::array();
    for (const auto& n : kvb::weight_format_names()) formats.push_back({{"id", n}, {"label", n}});
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
    const std::string pre = r.str("preemption", "recompute");
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
    if (pre != "recompute" && pre != "swap")
        return fail("bad_value", "preemption must be recompute or swap, got \"" + pre + "\"");
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
    si.swap = pre == "swap";
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
        .kv("recomputed_tokens", s.recomputed_tokens).kv("steps", s.steps).kv("makespan_s", s.makespan_s)
        .kv("capacity_tokens", s.capacity_tokens).kv("num_blocks", s.num_blocks)
        .kv("token_states_fraction", s.memory.token_states).kv("reserved_fraction", s.memory.reserved)
        .kv("internal_fragmentation_fraction", s.memory.internal_fragmentation)
        .kv("external_fragmentation_fraction", s.memory.external_fragmentation)
        .kv("cached_fraction", s.memory.cached).kv("free_fraction", s.memory.free)
        .kv("token_states_of_used_fraction", s.token_states_of_used)
        .kv("mean_running", s.mean_running).kv("max_running", s.max_running)
        .kv("mean_waiting", s.mean_waiting).kv("max_waiting", s.max_waiting)
        .kv("sharing_saved_fraction", s.sharing_saved).kv("max_blocks_saved", s.max_blocks_saved)
        .kv("cow_copies", s.cow_copies).kv("prefix_hit_tokens", s.prefix_hit_tokens)
        .kv("prompt_tokens", s.prompt_tokens).kv("generated_tokens", s.generated_tokens)
        .kv("throughput_tokens_per_s", s.throughput_tokens_per_s).kv("requests_per_s", s.requests_per_s)
        .kv("ttft_mean_s", s.ttft_mean_s).kv("ttft_p50_s", s.ttft_p50_s).kv("ttft_p90_s", s.ttft_p90_s)
        .kv("ttft_p99_s", s.ttft_p99_s).kv("tpot_mean_s", s.tpot_mean_s).kv("tpot_p50_s", s.tpot_p50_s)
        .kv("tpot_p90_s", s.tpot_p90_s).kv("tpot_p99_s", s.tpot_p99_s).kv("e2e_mean_s", s.e2e_mean_s)
        .kv("e2e_p50_s", s.e2e_p50_s).kv("e2e_p90_s", s.e2e_p90_s).kv("e2e_p99_s", s.e2e_p99_s).end_obj();
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
