#include "report/json.h"

#include <nlohmann/json.hpp>

#include "budget/gpus.h"
#include "model/dtype.h"
#include "model/rope.h"
#include "model/weights.h"
#include "report/json_common.h"
#include "sim/session.h"

namespace kvb {

using nlohmann::json;
using namespace report_json;

namespace {

template <class T>
json opt(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

bool same_layer(const Layer& a, const Layer& b) {
    return a.kind == b.kind && a.kv_heads == b.kv_heads && a.k_head_dim == b.k_head_dim &&
           a.v_head_dim == b.v_head_dim && a.window == b.window && a.kv_lora_rank == b.kv_lora_rank &&
           a.qk_rope_head_dim == b.qk_rope_head_dim && a.state.conv_kernel == b.state.conv_kernel &&
           a.state.d_inner == b.state.d_inner && a.state.n_groups == b.state.n_groups &&
           a.state.d_state == b.state.d_state && a.state.heads == b.state.heads &&
           a.state.conv_elems() == b.state.conv_elems() && a.state.ssm_elems() == b.state.ssm_elems();
}

json layer_json(const Layer& l) {
    json j = {{"kind", to_string(l.kind)}};
    switch (l.kind) {
        case LayerKind::Full:
        case LayerKind::Sliding:
        case LayerKind::Chunked:
            j["kv_heads"] = l.kv_heads;
            j["k_head_dim"] = l.k_head_dim;
            j["v_head_dim"] = l.v_head_dim;
            if (l.kind != LayerKind::Full) j["window"] = l.window;
            break;
        case LayerKind::Mla:
            j["kv_lora_rank"] = l.kv_lora_rank;
            j["qk_rope_head_dim"] = l.qk_rope_head_dim;
            j["kv_heads"] = l.kv_heads;
            j["k_head_dim"] = l.k_head_dim;
            j["v_head_dim"] = l.v_head_dim;
            break;
        case LayerKind::Linear:
        case LayerKind::Mamba:
            j["conv_kernel"] = l.state.conv_kernel;
            j["d_inner"] = l.state.d_inner;
            j["n_groups"] = l.state.n_groups;
            j["d_state"] = l.state.d_state;
            j["heads"] = l.state.heads;
            j["conv_elems"] = l.state.conv_elems();
            j["ssm_elems"] = l.state.ssm_elems();
            break;
        case LayerKind::None: break;
    }
    return j;
}

json group_json(const LayerGroup& g) {
    json j = layer_json(g.layer);
    j["layers"] = g.layers;
    j["first_layer"] = static_cast<int64_t>(g.first_layer);
    j["bytes_per_token_per_layer"] = g.bytes_per_token_per_layer;
    j["bytes_per_token"] = g.bytes_per_token;
    j["state_bytes_per_layer"] = g.state_bytes_per_layer;
    j["state_bytes"] = g.state_bytes;
    return j;
}

// Exactly what llama.cpp's loader counts in the file: tensor bytes, elements, types.
json gguf_json(const GgufWeights& g) {
    json types = json::object();
    for (const auto& [type, n] : g.type_counts) types[type] = n;
    return {{"tensor_bytes", g.tensor_bytes}, {"params", g.params},
            {"tensors", g.n_tensors},         {"shards", g.shards},
            {"file_type", g.file_type},       {"nextn_layers", g.nextn_layers},
            {"split_mla", g.split_mla},       {"type_counts", types}};
}

// A RoPE scaling with the lengths it gives: `text` is the spelling --rope-scaling and the
// page's `rope` parameter take.
json rope_json(const RopeScaling& r) {
    return {{"type", r.type},
            {"factor", r.factor},
            {"original_max_position_embeddings", r.original_max_position_embeddings},
            {"source", r.source},
            {"max_len", r.max_len},
            {"text", r.factor > 0 ? rope_scaling_text(r) : std::string()}};
}

json model_json(const ModelSpec& m) {
    json counts = json::object();
    for (LayerKind k : {LayerKind::Full, LayerKind::Sliding, LayerKind::Chunked, LayerKind::Mla, LayerKind::Linear,
                        LayerKind::Mamba, LayerKind::None})
        if (m.count(k)) counts[to_string(k)] = m.count(k);
    // One object per layer, and consecutive equal layers share the first one's
    // (a 10,000-layer config builds a handful, not 10,000).
    json layers = json::array();
    layers.get_ref<json::array_t&>().reserve(m.layers.size());
    const Layer* prev = nullptr;
    for (const Layer& l : m.layers) {
        if (prev && same_layer(*prev, l))
            layers.push_back(layers.back());
        else
            layers.push_back(layer_json(l));
        prev = &l;
    }
    json groups = json::array();
    for (const LayerGroup& g : layer_groups(m, KvDtypes{})) {
        json j = layer_json(g.layer);
        j["layers"] = g.layers;
        j["first_layer"] = static_cast<int64_t>(g.first_layer);
        groups.push_back(std::move(j));
    }
    json out = {
        {"name", m.name},
        {"model_type", m.model_type},
        {"architecture", m.architecture},
        {"family", m.family},
        {"generic", m.generic},
        {"multimodal", m.multimodal},
        {"dtype", m.dtype},
        {"ssm_dtype", m.ssm_dtype},
        {"max_position_embeddings", m.max_position_embeddings},
        {"original_max_position_embeddings", m.original_max_position_embeddings},
        {"rope_scaling", m.rope_scaling ? rope_json(*m.rope_scaling) : json(nullptr)},
        {"num_layers", static_cast<int64_t>(m.layers.size())},
        {"layer_counts", counts},
        {"hidden_size", m.dims.hidden_size},
        {"num_attention_heads", m.dims.num_attention_heads},
        {"vocab_size", m.dims.vocab_size},
        {"num_experts", m.dims.num_experts},
        {"experts_per_token", m.dims.experts_per_token},
        {"quantization", {{"method", m.quant.method}, {"bits", m.quant.bits}, {"group_size", m.quant.group_size}}},
        {"source", m.source},
        {"gguf", m.gguf ? gguf_json(*m.gguf) : json(nullptr)},
        {"notes", notes_json(m.notes)},
    };
    // Moved in, not listed above: an initializer list copies every element it holds.
    out["layer_groups"] = std::move(groups);
    out["layers"] = std::move(layers);
    return out;
}

json kv_type_json(const KvType& t) {
    return {{"name", t.name}, {"block_values", t.block_values}, {"block_bytes", t.block_bytes}};
}

json kv_report_json(const KvReport& r) {
    json kinds = json::array();
    for (const KindSummary& k : r.ideal.kinds)
        kinds.push_back({{"kind", to_string(k.kind)},
                         {"layers", k.layers},
                         {"bytes_per_token", k.bytes_per_token},
                         {"window", k.window},
                         {"state_bytes", k.state_bytes}});
    json formula = json::array();
    for (const LayerGroup& g : r.formula) formula.push_back(group_json(g));
    json table = json::array();
    for (const ContextReportRow& c : r.context_table)
        table.push_back({{"context", c.row.context},
                         {"is_model_max", c.row.is_model_max},
                         {"bytes_per_seq", c.row.bytes_per_seq},
                         {"bytes_total", c.row.bytes_total},
                         {"vs_weights", c.vs_weights}});
    json variants = json::array();
    for (const HeadVariant& h : r.head_variants)
        variants.push_back({{"variant", h.variant},
                            {"kv_heads", h.kv_heads},
                            {"bytes_per_token", h.bytes_per_token},
                            {"bytes_total", opt(h.bytes_total)}});
    json ladder = json::array();
    for (const LadderRow& l : r.ladder)
        ladder.push_back({{"step", l.step},
                          {"detail", l.detail},
                          {"bytes_per_token", opt(l.bytes_per_token)},
                          {"kv_bytes", l.kv_bytes},
                          {"saving", l.saving}});
    json xs = json::array(), ys = json::array();
    for (const CurvePoint& p : r.curve) {
        xs.push_back(p.context);
        ys.push_back(p.bytes);
    }
    return {
        {"model", r.model},
        {"engine", r.engine},
        {"k_type", kv_type_json(r.dtypes.k)},
        {"v_type", kv_type_json(r.dtypes.v)},
        {"conv_state_bytes", r.dtypes.conv_state_bytes},
        {"ssm_state_bytes", r.dtypes.ssm_state_bytes},
        {"context", r.context},
        {"seqs", r.seqs},
        {"bytes_per_token", r.ideal.bytes_per_token},
        {"windowed_bytes_per_token", r.ideal.windowed_bytes_per_token},
        {"state_bytes_per_seq", r.ideal.state_bytes_per_seq},
        {"bytes_per_seq", r.bytes_per_seq},
        {"bytes_total", r.bytes_total},
        {"kinds", kinds},
        {"formula", formula},
        {"context_table", table},
        {"head_variants", variants},
        {"ladder", ladder},
        {"curve", {{"contexts", xs}, {"bytes", ys}}},
        {"weights_bytes", r.weights_bytes},
        {"crossover_context", r.crossover_context},
        {"notes", notes_json(r.notes)},
    };
}

json inputs_json(const BudgetInputs& in) {
    return {
        {"engine", to_string(in.engine)},
        {"gpu", in.gpu},
        {"gpu_memory_bytes", in.gpu_memory_bytes},
        {"gpu_count", in.gpu_count},
        {"gpu_memory_each", in.gpu_memory_each},
        {"gpu_memory_utilization", in.gpu_memory_utilization},
        {"weights", in.weights},
        {"params", in.params},
        {"params_from_hub", in.params_from_hub},
        {"context", in.context},
        {"seqs", in.seqs},
        {"max_num_seqs", in.max_num_seqs},
        {"kv_cache_dtype", in.kv_cache_dtype},
        {"kv_cache_dtype_v", in.kv_cache_dtype_v},
        {"rope_scaling", in.rope_scaling},
        {"tensor_parallel_size", in.tensor_parallel_size},
        {"pipeline_parallel_size", in.pipeline_parallel_size},
        {"pp_layer_partition", in.pp_layer_partition},
        {"speculative_config", in.speculative_config},
        {"spec_type", in.spec_type},
        {"spec_draft_n_max", in.spec_draft_n_max},
        {"spec_draft_type_k", in.spec_draft_type_k},
        {"spec_draft_type_v", in.spec_draft_type_v},
        {"max_num_batched_tokens", in.max_num_batched_tokens},
        {"block_size", in.block_size},
        {"enforce_eager", in.enforce_eager},
        {"activation_bytes", in.activation_bytes},
        {"overhead_bytes", in.overhead_bytes},
        {"cudagraph_bytes", in.cudagraph_bytes},
        {"n_ubatch", in.n_ubatch},
        {"n_gpu_layers", in.n_gpu_layers},
        {"ram_bytes", in.ram_bytes},
        {"no_kv_offload", in.no_kv_offload},
        {"wired_limit_mb", in.wired_limit_mb},
        {"hf_ref", in.hf_ref},
        {"fit_target_mb", in.fit_target_mb},
        {"fit_ctx", in.fit_ctx},
        {"ram_bandwidth_bytes_per_s", in.ram_bandwidth_bytes_per_s},
    };
}

// llama.cpp's --fit choice (LlamaFit), the same form for the asked and the default flags.
json fit_json(const LlamaFit& f) {
    return {{"outcome", f.outcome},
            {"free_bytes", f.free_bytes},
            {"target_bytes", f.target_bytes},
            {"projected_bytes", f.projected_bytes},
            {"n_ctx", f.n_ctx},
            {"context", f.context},
            {"n_gpu_layers", f.n_gpu_layers},
            {"overflow_layers", f.overflow_layers},
            {"device_layers", f.device_layers},
            {"device_overflow_layers", f.device_overflow},
            {"device_free_bytes", f.device_free},
            {"device_used_bytes", f.device_used},
            {"used_bytes", f.used_bytes},
            {"flags", f.flags},
            {"log_lines", f.log_lines}};
}

json budget_json(const BudgetResult& r) {
    const WeightBytes& w = r.weights;
    const PerGpu& g = r.per_gpu;
    json j = {
        {"engine", to_string(r.engine)},
        {"gpu",
         {{"id", r.gpu_id},
          {"name", r.gpu_name},
          {"total_bytes", r.gpu_total_bytes},
          {"count", r.gpu_count},
          {"mac_ram_bytes", r.mac_ram_bytes}}},
        {"tensor_parallel_size", r.tp},
        {"pipeline_parallel_size", r.pp},
        {"gpu_memory_utilization", r.gpu_memory_utilization},
        {"requested_bytes", r.requested_bytes},
        {"weights",
         {{"format", w.format.name},
          {"params", w.params},
          {"bytes", w.bytes},
          {"per_gpu_bytes", r.weights_per_gpu_bytes},
          {"active_bytes", w.active_bytes},
          {"vision_bytes", w.vision_bytes},
          {"bits_per_weight", w.bits_per_weight}}},
        {"activation_bytes", r.activation_bytes},
        {"activation_estimated", r.activation_estimated},
        {"overhead_bytes", r.overhead_bytes},
        {"overhead_estimated", r.overhead_estimated},
        {"cudagraph_bytes", r.cudagraph_bytes},
        {"cudagraph_estimated", r.cudagraph_estimated},
        {"kv_pool_bytes", r.kv_pool_bytes},
        {"kv_cache_dtype", r.kv_cache_dtype},
        {"kv_cache_dtype_v", r.kv_cache_dtype_v},
        {"context", r.context},
        {"model_max_len", r.model_max_len},
        {"native_max_len", r.native_max_len},
        {"n_ctx_train", r.n_ctx_train},
        {"over_model_max", r.over_model_max},
        {"rope_scaling", r.rope_scaling ? rope_json(*r.rope_scaling) : json(nullptr)},
        {"seqs", r.seqs},
        {"max_num_seqs", r.max_num_seqs},
        {"max_num_seqs_default", r.max_num_seqs_default},
        {"max_num_batched_tokens", r.max_num_batched_tokens},
        {"per_gpu",
         {{"capacity_bytes", g.capacity_bytes},
          {"usable_bytes", g.usable_bytes},
          {"weights_bytes", g.weights_bytes},
          {"kv_bytes", g.kv_bytes},
          {"activation_bytes", g.activation_bytes},
          {"overhead_bytes", g.overhead_bytes},
          {"total_bytes", g.total_bytes},
          {"free_bytes", g.free_bytes},
          {"over_usable_bytes", g.over_usable_bytes}}},
        {"fits", r.fits},
        {"all_seqs_fit", r.all_seqs_fit},
        {"fits_offload", r.fits_offload},
        {"max_context", r.max_context},
        {"max_context_capped", r.max_context_capped},
        {"max_context_physical", r.max_context_physical},
        {"max_concurrency", r.max_concurrency},
        {"log_lines", r.log_lines},
        {"command", r.command},
        {"engine_error", r.engine_error},
        {"verdict_reason", r.verdict_reason.code.empty() ? json(nullptr) : message_json(r.verdict_reason)},
        {"decode",
         {{"context", r.decode.context},
          {"weight_bytes_per_token", r.decode.weight_bytes_per_token},
          {"kv_bytes_per_token", r.decode.kv_bytes_per_token},
          {"bandwidth_bytes_per_s", r.decode.bandwidth_bytes_per_s},
          {"tokens_per_s_single", r.decode.tokens_per_s_single},
          {"batch", r.decode.batch},
          {"tokens_per_s_batch", r.decode.tokens_per_s_batch},
          {"cpu_weight_bytes_per_token", r.decode.cpu_weight_bytes_per_token},
          {"cpu_kv_bytes_per_token", r.decode.cpu_kv_bytes_per_token},
          {"ram_bandwidth_bytes_per_s", r.decode.ram_bandwidth_bytes_per_s},
          {"ram_bandwidth_assumed", r.decode.ram_bandwidth_assumed}}},
        {"notes", notes_json(r.notes)},
    };
    if (r.engine == BudgetEngine::Vllm)
        j["vllm"] = {{"num_blocks", r.capacity.num_blocks},
                     {"block_size", r.capacity.layout.attn_block_size},
                     {"mla_backend", r.capacity.layout.mla_backend},
                     {"tokens", r.capacity.tokens},
                     {"max_concurrency", r.vllm_concurrency},
                     {"request_bytes", r.capacity.request_bytes},
                     {"estimated_max_model_len", r.capacity.estimated_max_model_len}};
    else if (r.engine == BudgetEngine::LlamaCpp) {
        const LlamaOffload& o = r.offload;
        const LlamaDraft& d = r.llama_draft;
        j["llamacpp"] = {{"kv_bytes", r.llama.total_bytes},
                         {"n_ctx", r.llama.n_ctx},
                         {"n_seq_max", r.llama.n_seq_max},
                         {"n_rs_seq", r.llama.recurrent.n_rs_seq},
                         {"draft",
                          {{"spec_type", to_string(d.type)},
                           {"contexts", d.contexts},
                           {"n_ctx", d.contexts > 0 ? d.layout.n_ctx : 0},
                           {"n_seq_max", d.contexts > 0 ? d.layout.n_seq_max : 0},
                           {"bytes", d.total_bytes},
                           {"log_lines", d.layout.log_lines}}},
                         {"offload",
                          {{"active", o.active},
                           {"n_layer", o.n_layer},
                           {"n_slots", o.n_slots},
                           {"n_gpu_layers", o.n_gpu_layers},
                           {"gpu_repeating_layers", o.gpu_repeating_layers},
                           {"output_on_gpu", o.output_on_gpu},
                           {"kv_offload", o.kv_offload},
                           {"estimated", o.estimated},
                           {"gpu_weights_bytes", o.gpu_weights_bytes},
                           {"cpu_weights_bytes", o.cpu_weights_bytes},
                           {"cpu_read_weights_bytes", o.cpu_read_weights_bytes},
                           {"gpu_kv_bytes", o.gpu_kv_bytes},
                           {"cpu_kv_bytes", o.cpu_kv_bytes},
                           {"ram_bytes", o.ram_bytes},
                           {"ram_need_bytes", o.ram_need_bytes},
                           {"ram_fits", o.ram_fits},
                           {"max_gpu_layers", o.max_gpu_layers}}},
                         {"fit", fit_json(r.fit)},
                         {"fit_default", fit_json(r.fit_default)}};
    } else
        j["transformers"] = {{"cache_bytes", r.cache_bytes}, {"cache_transient_bytes", r.cache_transient_bytes}};
    return j;
}

json answer_json(const Answer& a) {
    const AnswerMetrics& m = a.metrics;
    return {
        {"inputs", inputs_json(a.inputs)},
        {"metrics",
         {{"kv-bytes-per-token", m.kv_bytes_per_token},
          {"kv-bytes-total", m.kv_bytes_total},
          {"weights-bytes", opt(m.weights_bytes)},
          {"total-bytes", opt(m.total_bytes)},
          {"max-context", opt(m.max_context)},
          {"max-context-physical", opt(m.max_context_physical)},
          {"max-concurrency", opt(m.max_concurrency)}}},
        {"budget", a.budget ? budget_json(*a.budget) : json(nullptr)},
        {"refusal", a.refusal ? error_json(*a.refusal) : json(nullptr)},
        {"chart_capacity_bytes", a.chart_capacity_bytes},
        {"rope_offer", a.rope_offer ? rope_json(*a.rope_offer) : json(nullptr)},
        {"kv", kv_report_json(a.kv)},
    };
}

}  // namespace

std::string to_json_text(const ModelSpec& m) {
    return dump(model_json(m));
}
std::string to_json_text(const KvReport& r) {
    return dump(kv_report_json(r));
}
std::string to_json_text(const Answer& a) {
    return dump(answer_json(a));
}
std::string to_json_text(const Error& e) {
    return dump(error_json(e));
}
std::string to_json_text(const Message& m) {
    return dump(message_json(m));
}

std::string catalog_json_text() {
    json limits = json::object();
    for (const InputLimit& l : budget_input_limits())
        limits[l.name] = {{"min", l.min}, {"max", l.max}, {"flag", l.flag}};
    json gpus = json::array();
    for (const Gpu& g : gpu_catalog())
        gpus.push_back({{"id", g.id},
                        {"name", g.name},
                        {"vendor", g.vendor},
                        {"memory_bytes", g.memory_bytes},
                        // The maker's "24 GB" (GDDR/HBM come in binary densities: 24 GB = 24 GiB of DRAM).
                        {"marketed_gb", g.memory_bytes / (int64_t(1) << 30)},
                        {"total_bytes", g.total_bytes()},
                        {"bandwidth_bytes_per_s", g.bandwidth_bytes_per_s},
                        {"unified_memory", g.unified_memory}});
    json formats = json::array();
    for (const std::string& n : weight_format_names()) formats.push_back(n);
    json messages = json::array();
    for (const MessageTemplate& t : message_templates()) messages.push_back({{"code", t.code}, {"english", t.english}});
    json sim_limits = json::object();
    for (const SimInputLimit& l : sim_input_limits())
        sim_limits[l.name] = {{"min", l.min}, {"max", l.max}, {"flag", l.flag}};
    return dump({
        {"limits", limits},
        {"sim_limits", sim_limits},
        {"kv_types",
         {{"vllm", vllm_kv_type_names()},
          {"transformers", vllm_kv_type_names()},
          {"llamacpp", llamacpp_kv_type_names()}}},
        {"gpus", gpus},
        {"weight_formats", formats},
        {"messages", messages},
    });
}

Result<BudgetInputs> budget_inputs_from_json(const std::string& text) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error("not_json", note("inputs_not_object"));
    BudgetInputs in;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        const json& v = it.value();
        auto count = [&](int64_t& out) { return read_count(k, v, out); };
        auto text_field = [&](std::string& out) { return read_text(k, v, out); };
        std::optional<Error> e;
        if (k == "engine") {
            std::string s;
            e = text_field(s);
            if (!e) {
                auto eng = parse_budget_engine(s);
                if (!eng) return eng.error();
                in.engine = eng.value();
            }
        } else if (k == "gpu")
            e = text_field(in.gpu);
        else if (k == "weights")
            e = text_field(in.weights);
        else if (k == "kv_cache_dtype")
            e = text_field(in.kv_cache_dtype);
        else if (k == "kv_cache_dtype_v")
            e = text_field(in.kv_cache_dtype_v);
        else if (k == "rope_scaling")
            e = text_field(in.rope_scaling);
        else if (k == "pp_layer_partition")
            e = text_field(in.pp_layer_partition);
        else if (k == "speculative_config")
            e = text_field(in.speculative_config);
        else if (k == "spec_type")
            e = text_field(in.spec_type);
        else if (k == "spec_draft_type_k")
            e = text_field(in.spec_draft_type_k);
        else if (k == "spec_draft_type_v")
            e = text_field(in.spec_draft_type_v);
        else if (k == "spec_draft_n_max")
            e = count(in.spec_draft_n_max);
        else if (k == "gpu_memory_bytes")
            e = count(in.gpu_memory_bytes);
        else if (k == "gpu_count")
            e = count(in.gpu_count);
        else if (k == "gpu_memory_each") {
            // At most 4096 GPUs (gpu_count's bound); validate() checks each size.
            if (!v.is_array() || v.size() > 4096) return field_error(k, "list of sizes", v);
            in.gpu_memory_each.assign(v.size(), 0);
            for (size_t i = 0; i < v.size() && !e; ++i) e = read_count(k, v[i], in.gpu_memory_each[i]);
        } else if (k == "params")
            e = count(in.params);
        else if (k == "context")
            e = count(in.context);
        else if (k == "seqs")
            e = count(in.seqs);
        else if (k == "max_num_seqs")
            e = count(in.max_num_seqs);
        else if (k == "tensor_parallel_size")
            e = count(in.tensor_parallel_size);
        else if (k == "pipeline_parallel_size")
            e = count(in.pipeline_parallel_size);
        else if (k == "max_num_batched_tokens")
            e = count(in.max_num_batched_tokens);
        else if (k == "block_size")
            e = count(in.block_size);
        else if (k == "activation_bytes")
            e = count(in.activation_bytes);
        else if (k == "overhead_bytes")
            e = count(in.overhead_bytes);
        else if (k == "cudagraph_bytes")
            e = count(in.cudagraph_bytes);
        else if (k == "n_ubatch")
            e = count(in.n_ubatch);
        else if (k == "n_gpu_layers")
            e = count(in.n_gpu_layers);
        else if (k == "ram_bytes")
            e = count(in.ram_bytes);
        else if (k == "wired_limit_mb")
            e = count(in.wired_limit_mb);
        else if (k == "fit_target_mb")
            e = count(in.fit_target_mb);
        else if (k == "fit_ctx")
            e = count(in.fit_ctx);
        else if (k == "ram_bandwidth_bytes_per_s")
            e = read_number(k, v, in.ram_bandwidth_bytes_per_s);
        else if (k == "no_kv_offload")
            e = read_flag(k, v, in.no_kv_offload);
        else if (k == "hf_ref")
            e = text_field(in.hf_ref);
        else if (k == "gpu_memory_utilization")
            e = read_number(k, v, in.gpu_memory_utilization);
        else if (k == "enforce_eager")
            e = read_flag(k, v, in.enforce_eager);
        else if (k == "params_from_hub")  // params is the Hub's total: set aside if implausible
            e = read_flag(k, v, in.params_from_hub);
        else {
            return make_error("bad_value", note("input_unknown_field", {{"field", k}}));
        }
        if (e) return *e;
    }
    if (auto ok = validate(in); !ok) return ok.error();
    return in;
}

}  // namespace kvb
