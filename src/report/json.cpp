#include "report/json.h"

#include <nlohmann/json.hpp>

#include "budget/gpus.h"
#include "model/dtype.h"
#include "model/rope.h"
#include "model/weights.h"
#include "report/json_common.h"
#include "report/json_writer.h"
#include "sim/session.h"

namespace kvb {

using nlohmann::json;
using namespace report_json;

// The draft context(s) of one answer: n_ctx and n_seq_max of one context, bytes of all of them.
JsonObject report_json::llama_draft_json(const LlamaDraft& d) {
    return JsonObject()
        .set("spec_type", to_string(d.type))
        .set("contexts", d.contexts)
        .set("layers", d.contexts > 0 ? d.layers : 0)
        .set("n_ctx", d.contexts > 0 ? d.layout.n_ctx : 0)
        .set("n_seq_max", d.contexts > 0 ? d.layout.n_seq_max : 0)
        .set("bytes", d.total_bytes)
        .set("log_lines", d.layout.log_lines);
}

namespace {

bool same_layer(const Layer& a, const Layer& b) {
    return a.kind == b.kind && a.kv_heads == b.kv_heads && a.k_head_dim == b.k_head_dim &&
           a.v_head_dim == b.v_head_dim && a.window == b.window && a.kv_lora_rank == b.kv_lora_rank &&
           a.qk_rope_head_dim == b.qk_rope_head_dim && a.state.conv_kernel == b.state.conv_kernel &&
           a.state.d_inner == b.state.d_inner && a.state.n_groups == b.state.n_groups &&
           a.state.d_state == b.state.d_state && a.state.heads == b.state.heads &&
           a.state.conv_elems() == b.state.conv_elems() && a.state.ssm_elems() == b.state.ssm_elems();
}

JsonObject layer_json(const Layer& l) {
    JsonObject j;
    j.set("kind", to_string(l.kind));
    switch (l.kind) {
        case LayerKind::Full:
        case LayerKind::Sliding:
        case LayerKind::Chunked:
            j.set("kv_heads", l.kv_heads);
            j.set("k_head_dim", l.k_head_dim);
            j.set("v_head_dim", l.v_head_dim);
            if (l.kind != LayerKind::Full) j.set("window", l.window);
            break;
        case LayerKind::Mla:
            j.set("kv_lora_rank", l.kv_lora_rank);
            j.set("qk_rope_head_dim", l.qk_rope_head_dim);
            j.set("kv_heads", l.kv_heads);
            j.set("k_head_dim", l.k_head_dim);
            j.set("v_head_dim", l.v_head_dim);
            if (dsv4_layer(l)) {
                j.set("window", l.window);
                j.set("compress_ratio", l.compress_ratio);
                j.set("indexer_head_dim", l.indexer_head_dim);
            }
            break;
        case LayerKind::Linear:
        case LayerKind::Mamba:
            j.set("conv_kernel", l.state.conv_kernel);
            j.set("d_inner", l.state.d_inner);
            j.set("n_groups", l.state.n_groups);
            j.set("d_state", l.state.d_state);
            j.set("heads", l.state.heads);
            j.set("conv_elems", l.state.conv_elems());
            j.set("ssm_elems", l.state.ssm_elems());
            break;
        case LayerKind::None: break;
    }
    return j;
}

std::string group_json(const LayerGroup& g) {
    return layer_json(g.layer)
        .set("layers", g.layers)
        .set("first_layer", static_cast<int64_t>(g.first_layer))
        .set("bytes_per_token_per_layer", g.bytes_per_token_per_layer)
        .set("bytes_per_token", g.bytes_per_token)
        .set("state_bytes_per_layer", g.state_bytes_per_layer)
        .set("state_bytes", g.state_bytes)
        .text();
}

// Exactly what llama.cpp's loader counts in the file: tensor bytes, elements, types.
std::string gguf_json(const GgufWeights& g) {
    JsonObject types;
    for (const auto& [type, n] : g.type_counts) types.set(type.c_str(), n);
    return JsonObject()
        .set("tensor_bytes", g.tensor_bytes)
        .set("params", g.params)
        .set("tensors", g.n_tensors)
        .set("shards", g.shards)
        .set("file_type", g.file_type)
        .set("nextn_layers", g.nextn_layers)
        .set("split_mla", g.split_mla)
        .set("type_counts", types)
        .text();
}

// A RoPE scaling with the lengths it gives: `text` is the spelling --rope-scaling and the
// page's `rope` parameter take.
std::string rope_json(const RopeScaling& r) {
    return JsonObject()
        .set("type", r.type)
        .set("factor", r.factor)
        .set("original_max_position_embeddings", r.original_max_position_embeddings)
        .set("source", r.source)
        .set("max_len", r.max_len)
        .set("text", r.factor > 0 ? rope_scaling_text(r) : std::string())
        .text();
}

template <class T>
std::string rope_or_null(const T& r) {
    return r ? rope_json(*r) : jv(nullptr);
}

std::string model_json(const ModelSpec& m) {
    JsonObject counts;
    for (LayerKind k : {LayerKind::Full, LayerKind::Sliding, LayerKind::Chunked, LayerKind::Mla, LayerKind::Linear,
                        LayerKind::Mamba, LayerKind::None})
        if (m.count(k)) counts.set(to_string(k), m.count(k));
    // One object per layer, and consecutive equal layers share the first one's text
    // (a 10,000-layer config writes a handful, not 10,000).
    JsonArray layers;
    const Layer* prev = nullptr;
    std::string prev_text;
    for (const Layer& l : m.layers) {
        if (!prev || !same_layer(*prev, l)) prev_text = layer_json(l).text();
        layers.add_raw(prev_text);
        prev = &l;
    }
    JsonArray groups;
    for (const LayerGroup& g : layer_groups(m, KvDtypes{}))
        groups.add(layer_json(g.layer).set("layers", g.layers).set("first_layer", static_cast<int64_t>(g.first_layer)));
    return JsonObject()
        .set("name", m.name)
        .set("model_type", m.model_type)
        .set("architecture", m.architecture)
        .set("family", m.family)
        .set("generic", m.generic)
        .set("multimodal", m.multimodal)
        .set("dtype", m.dtype)
        .set("ssm_dtype", m.ssm_dtype)
        .set("max_position_embeddings", m.max_position_embeddings)
        .set("original_max_position_embeddings", m.original_max_position_embeddings)
        .set_raw("rope_scaling", rope_or_null(m.rope_scaling))
        .set("num_layers", static_cast<int64_t>(m.layers.size()))
        .set("layer_counts", counts)
        .set("hidden_size", m.dims.hidden_size)
        .set("num_attention_heads", m.dims.num_attention_heads)
        .set("vocab_size", m.dims.vocab_size)
        .set("num_experts", m.dims.num_experts)
        .set("experts_per_token", m.dims.experts_per_token)
        .set("quantization",
             JsonObject().set("method", m.quant.method).set("bits", m.quant.bits).set("group_size", m.quant.group_size))
        .set("source", m.source)
        .set_raw("gguf", m.gguf ? gguf_json(*m.gguf) : jv(nullptr))
        .set_raw("notes", notes_text(m.notes))
        .set("layer_groups", groups)
        .set("layers", layers)
        .text();
}

JsonObject kv_type_json(const KvType& t) {
    return JsonObject().set("name", t.name).set("block_values", t.block_values).set("block_bytes", t.block_bytes);
}

std::string kv_report_json(const KvReport& r) {
    JsonArray kinds;
    for (const KindSummary& k : r.ideal.kinds)
        kinds.add(JsonObject()
                      .set("kind", to_string(k.kind))
                      .set("layers", k.layers)
                      .set("bytes_per_token", k.bytes_per_token)
                      .set("window", k.window)
                      .set("state_bytes", k.state_bytes));
    JsonArray formula;
    for (const LayerGroup& g : r.formula) formula.add_raw(group_json(g));
    JsonArray table;
    for (const ContextReportRow& c : r.context_table)
        table.add(JsonObject()
                      .set("context", c.row.context)
                      .set("is_model_max", c.row.is_model_max)
                      .set("bytes_per_seq", c.row.bytes_per_seq)
                      .set("bytes_total", c.row.bytes_total)
                      .set("vs_weights", c.vs_weights));
    JsonArray variants;
    for (const HeadVariant& h : r.head_variants)
        variants.add(JsonObject()
                         .set("variant", h.variant)
                         .set("kv_heads", h.kv_heads)
                         .set("bytes_per_token", h.bytes_per_token)
                         .set("bytes_total", h.bytes_total));
    JsonArray ladder;
    for (const LadderRow& l : r.ladder)
        ladder.add(JsonObject()
                       .set("step", l.step)
                       .set("detail", l.detail)
                       .set("bytes_per_token", l.bytes_per_token)
                       .set("kv_bytes", l.kv_bytes)
                       .set("saving", l.saving));
    JsonArray xs, ys;
    for (const CurvePoint& p : r.curve) {
        xs.add(p.context);
        ys.add(p.bytes);
    }
    return JsonObject()
        .set("model", r.model)
        .set("engine", r.engine)
        .set("k_type", kv_type_json(r.dtypes.k))
        .set("v_type", kv_type_json(r.dtypes.v))
        .set("conv_state_bytes", r.dtypes.conv_state_bytes)
        .set("ssm_state_bytes", r.dtypes.ssm_state_bytes)
        .set("context", r.context)
        .set("seqs", r.seqs)
        .set("bytes_per_token", r.ideal.bytes_per_token)
        .set("windowed_bytes_per_token", r.ideal.windowed_bytes_per_token)
        .set("state_bytes_per_seq", r.ideal.state_bytes_per_seq)
        .set("bytes_per_seq", r.bytes_per_seq)
        .set("bytes_total", r.bytes_total)
        .set("kinds", kinds)
        .set("formula", formula)
        .set("context_table", table)
        .set("head_variants", variants)
        .set("ladder", ladder)
        .set("curve", JsonObject().set("contexts", xs).set("bytes", ys))
        .set("weights_bytes", r.weights_bytes)
        .set("crossover_context", r.crossover_context)
        .set_raw("notes", notes_text(r.notes))
        .text();
}

std::string inputs_json(const BudgetInputs& in) {
    return JsonObject()
        .set("engine", to_string(in.engine))
        .set("gpu", in.gpu)
        .set("gpu_memory_bytes", in.gpu_memory_bytes)
        .set("gpu_count", in.gpu_count)
        .set("gpu_memory_each", in.gpu_memory_each)
        .set("gpu_memory_utilization", in.gpu_memory_utilization)
        .set("weights", in.weights)
        .set("params", in.params)
        .set("params_from_hub", in.params_from_hub)
        .set("context", in.context)
        .set("seqs", in.seqs)
        .set("max_num_seqs", in.max_num_seqs)
        .set("kv_cache_dtype", in.kv_cache_dtype)
        .set("kv_cache_dtype_v", in.kv_cache_dtype_v)
        .set("rope_scaling", in.rope_scaling)
        .set("tensor_parallel_size", in.tensor_parallel_size)
        .set("pipeline_parallel_size", in.pipeline_parallel_size)
        .set("expert_parallel", in.expert_parallel)
        .set("pp_layer_partition", in.pp_layer_partition)
        .set("speculative_config", in.speculative_config)
        .set("spec_type", in.spec_type)
        .set("spec_draft_n_max", in.spec_draft_n_max)
        .set("spec_draft_type_k", in.spec_draft_type_k)
        .set("spec_draft_type_v", in.spec_draft_type_v)
        .set("engine_version", in.engine_version)
        .set("max_num_batched_tokens", in.max_num_batched_tokens)
        .set("block_size", in.block_size)
        .set("enforce_eager", in.enforce_eager)
        .set("activation_bytes", in.activation_bytes)
        .set("overhead_bytes", in.overhead_bytes)
        .set("cudagraph_bytes", in.cudagraph_bytes)
        .set("n_ubatch", in.n_ubatch)
        .set("n_gpu_layers", in.n_gpu_layers)
        .set("ram_bytes", in.ram_bytes)
        .set("no_kv_offload", in.no_kv_offload)
        .set("wired_limit_mb", in.wired_limit_mb)
        .set("hf_ref", in.hf_ref)
        .set("fit_target_mb", in.fit_target_mb)
        .set("fit_ctx", in.fit_ctx)
        .set("ram_bandwidth_bytes_per_s", in.ram_bandwidth_bytes_per_s)
        .text();
}

// llama.cpp's --fit choice (LlamaFit), the same form for the asked and the default flags.
JsonObject fit_json(const LlamaFit& f) {
    return JsonObject()
        .set("outcome", f.outcome)
        .set("free_bytes", f.free_bytes)
        .set("target_bytes", f.target_bytes)
        .set("projected_bytes", f.projected_bytes)
        .set("n_ctx", f.n_ctx)
        .set("context", f.context)
        .set("n_gpu_layers", f.n_gpu_layers)
        .set("overflow_layers", f.overflow_layers)
        .set("device_layers", f.device_layers)
        .set("device_overflow_layers", f.device_overflow)
        .set("device_free_bytes", f.device_free)
        .set("device_used_bytes", f.device_used)
        .set("used_bytes", f.used_bytes)
        .set("slots", f.slots)
        .set("kv_unified", f.kv_unified)
        .set("flags", f.flags)
        .set("log_lines", f.log_lines);
}

std::string budget_json(const BudgetResult& r) {
    const WeightBytes& w = r.weights;
    const PerGpu& g = r.per_gpu;
    JsonObject j;
    j.set("engine", to_string(r.engine))
        .set("gpu", JsonObject()
                        .set("id", r.gpu_id)
                        .set("name", r.gpu_name)
                        .set("total_bytes", r.gpu_total_bytes)
                        .set("count", r.gpu_count)
                        .set("mac_ram_bytes", r.mac_ram_bytes))
        .set("tensor_parallel_size", r.tp)
        .set("pipeline_parallel_size", r.pp)
        .set("expert_parallel_size", r.ep)
        .set("ep_local_experts", r.ep_local_experts)
        .set("gpu_memory_utilization", r.gpu_memory_utilization)
        .set("gpu_memory_utilization_default", r.gpu_memory_utilization_default)
        .set("requested_bytes", r.requested_bytes)
        .set("weights", JsonObject()
                            .set("format", w.format.name)
                            .set("params", w.params)
                            .set("bytes", w.bytes)
                            .set("per_gpu_bytes", r.weights_per_gpu_bytes)
                            .set("active_bytes", w.active_bytes)
                            .set("vision_bytes", w.vision_bytes)
                            .set("bits_per_weight", w.bits_per_weight))
        .set("activation_bytes", r.activation_bytes)
        .set("activation_estimated", r.activation_estimated)
        .set("overhead_bytes", r.overhead_bytes)
        .set("overhead_estimated", r.overhead_estimated)
        .set("cudagraph_bytes", r.cudagraph_bytes)
        .set("cudagraph_estimated", r.cudagraph_estimated)
        .set("kv_pool_bytes", r.kv_pool_bytes)
        .set("kv_total_bytes", r.kv_total_bytes)
        .set("kv_cache_dtype", r.kv_cache_dtype)
        .set("kv_cache_dtype_v", r.kv_cache_dtype_v)
        .set("context", r.context)
        .set("model_max_len", r.model_max_len)
        .set("native_max_len", r.native_max_len)
        .set("n_ctx_train", r.n_ctx_train)
        .set("over_model_max", r.over_model_max)
        .set("startup_refused", r.startup_refused)
        .set_raw("rope_scaling", rope_or_null(r.rope_scaling))
        .set("seqs", r.seqs)
        .set("max_num_seqs", r.max_num_seqs)
        .set("max_num_seqs_default", r.max_num_seqs_default)
        .set("max_num_batched_tokens", r.max_num_batched_tokens)
        .set("per_gpu", JsonObject()
                            .set("capacity_bytes", g.capacity_bytes)
                            .set("usable_bytes", g.usable_bytes)
                            .set("weights_bytes", g.weights_bytes)
                            .set("kv_bytes", g.kv_bytes)
                            .set("activation_bytes", g.activation_bytes)
                            .set("overhead_bytes", g.overhead_bytes)
                            .set("total_bytes", g.total_bytes)
                            .set("free_bytes", g.free_bytes)
                            .set("over_usable_bytes", g.over_usable_bytes))
        .set("fits", r.fits)
        .set("all_seqs_fit", r.all_seqs_fit)
        .set("fits_offload", r.fits_offload)
        .set("max_context", r.max_context)
        .set("max_context_capped", r.max_context_capped)
        .set("max_context_stop", r.max_context_stop)
        .set("max_context_physical", r.max_context_physical)
        .set("max_concurrency", r.max_concurrency)
        .set("log_lines", r.log_lines)
        .set("command", r.command)
        .set("engine_error", r.engine_error)
        .set_raw("verdict_reason", r.verdict_reason.code.empty() ? jv(nullptr) : message_text(r.verdict_reason))
        .set("decode", JsonObject()
                           .set("context", r.decode.context)
                           .set("weight_bytes_per_token", r.decode.weight_bytes_per_token)
                           .set("kv_bytes_per_token", r.decode.kv_bytes_per_token)
                           .set("bandwidth_bytes_per_s", r.decode.bandwidth_bytes_per_s)
                           .set("tokens_per_s_single", r.decode.tokens_per_s_single)
                           .set("batch", r.decode.batch)
                           .set("tokens_per_s_batch", r.decode.tokens_per_s_batch)
                           .set("cpu_weight_bytes_per_token", r.decode.cpu_weight_bytes_per_token)
                           .set("cpu_kv_bytes_per_token", r.decode.cpu_kv_bytes_per_token)
                           .set("ram_bandwidth_bytes_per_s", r.decode.ram_bandwidth_bytes_per_s)
                           .set("ram_bandwidth_assumed", r.decode.ram_bandwidth_assumed))
        .set_raw("notes", notes_text(r.notes));
    if (r.engine == BudgetEngine::Vllm) {
        JsonArray stages;
        for (const VllmStage& st : r.stages)
            stages.add(JsonObject()
                           .set("layers", st.layers)
                           .set("weights_bytes", st.weights_bytes)
                           .set("activation_bytes", st.activation_bytes)
                           .set("overhead_bytes", st.overhead_bytes)
                           .set("kv_available_bytes", st.kv_available_bytes)
                           .set("num_blocks", st.num_blocks)
                           .set("kv_bytes", st.kv_bytes)
                           .set("used_bytes", st.used_bytes)
                           .set("limiting", st.limiting));
        j.set("vllm", JsonObject()
                          .set("num_blocks", r.capacity.num_blocks)
                          .set("block_size", r.capacity.layout.attn_block_size)
                          .set("mla_backend", r.capacity.layout.mla_backend)
                          .set("tokens", r.capacity.tokens)
                          .set("max_concurrency", r.vllm_concurrency)
                          .set("request_bytes", r.capacity.request_bytes)
                          .set("estimated_max_model_len", r.capacity.estimated_max_model_len)
                          .set("drafter_params", r.drafter_params)
                          .set("drafter_weight_bytes", r.drafter_weight_bytes)
                          .set("stages", stages));
    } else if (r.engine == BudgetEngine::LlamaCpp) {
        const LlamaOffload& o = r.offload;
        const LlamaDraft& d = r.llama_draft;
        j.set("llamacpp", JsonObject()
                              .set("kv_bytes", r.llama.total_bytes)
                              .set("n_ctx", r.llama.n_ctx)
                              .set("n_seq_max", r.llama.n_seq_max)
                              .set("slot_cap", r.slot_cap)
                              .set("n_ctx_slot", r.n_ctx_slot)
                              .set("slot_capped", r.slot_capped)
                              .set("n_rs_seq", r.llama.recurrent.n_rs_seq)
                              .set("draft", llama_draft_json(d))
                              .set("offload", JsonObject()
                                                  .set("active", o.active)
                                                  .set("n_layer", o.n_layer)
                                                  .set("n_slots", o.n_slots)
                                                  .set("n_gpu_layers", o.n_gpu_layers)
                                                  .set("gpu_repeating_layers", o.gpu_repeating_layers)
                                                  .set("output_on_gpu", o.output_on_gpu)
                                                  .set("kv_offload", o.kv_offload)
                                                  .set("estimated", o.estimated)
                                                  .set("gpu_weights_bytes", o.gpu_weights_bytes)
                                                  .set("cpu_weights_bytes", o.cpu_weights_bytes)
                                                  .set("cpu_read_weights_bytes", o.cpu_read_weights_bytes)
                                                  .set("gpu_kv_bytes", o.gpu_kv_bytes)
                                                  .set("cpu_kv_bytes", o.cpu_kv_bytes)
                                                  .set("ram_bytes", o.ram_bytes)
                                                  .set("ram_need_bytes", o.ram_need_bytes)
                                                  .set("ram_fits", o.ram_fits)
                                                  .set("max_gpu_layers", o.max_gpu_layers))
                              .set("fit", fit_json(r.fit))
                              .set("fit_default", fit_json(r.fit_default)));
    } else
        j.set("transformers",
              JsonObject().set("cache_bytes", r.cache_bytes).set("cache_transient_bytes", r.cache_transient_bytes));
    return j.text();
}

std::string answer_json(const Answer& a) {
    const AnswerMetrics& m = a.metrics;
    return JsonObject()
        .set_raw("inputs", inputs_json(a.inputs))
        .set("metrics", JsonObject()
                            .set("kv-bytes-per-token", m.kv_bytes_per_token)
                            .set("kv-bytes-total", m.kv_bytes_total)
                            .set("weights-bytes", m.weights_bytes)
                            .set("total-bytes", m.total_bytes)
                            .set("max-context", m.max_context)
                            .set("max-context-physical", m.max_context_physical)
                            .set("max-concurrency", m.max_concurrency))
        .set_raw("budget", a.budget ? budget_json(*a.budget) : jv(nullptr))
        .set_raw("refusal", a.refusal ? error_text(*a.refusal) : jv(nullptr))
        .set("chart_capacity_bytes", a.chart_capacity_bytes)
        .set_raw("rope_offer", rope_or_null(a.rope_offer))
        .set_raw("advice", a.advice ? message_text(*a.advice) : jv(nullptr))
        .set_raw("advice_inputs", a.advice_inputs ? inputs_json(*a.advice_inputs) : jv(nullptr))
        .set_raw("kv", kv_report_json(a.kv))
        .text();
}

JsonObject limit_json(int64_t min, int64_t max, const std::string& flag) {
    return JsonObject().set("min", min).set("max", max).set("flag", flag);
}

}  // namespace

std::string to_json_text(const ModelSpec& m) {
    return model_json(m);
}
std::string to_json_text(const KvReport& r) {
    return kv_report_json(r);
}
std::string to_json_text(const Answer& a) {
    return answer_json(a);
}
std::string to_json_text(const Error& e) {
    return error_text(e);
}
std::string to_json_text(const Message& m) {
    return message_text(m);
}

namespace {
// The page's vLLM KV choices: the six sized for every model, and nvfp4, which the answer sizes where vLLM serves it
// (FlashInfer on compute capability 10.x) and refuses, in the engine's terms, where it does not.
std::vector<std::string> vllm_page_kv_types() {
    std::vector<std::string> names = vllm_kv_type_names();
    names.push_back("nvfp4");
    return names;
}
}  // namespace

std::string catalog_json_text() {
    JsonObject limits;
    for (const InputLimit& l : budget_input_limits()) limits.set(l.name, limit_json(l.min, l.max, l.flag));
    JsonArray gpus;
    for (const Gpu& g : gpu_catalog())
        gpus.add(JsonObject()
                     .set("id", g.id)
                     .set("name", g.name)
                     .set("vendor", g.vendor)
                     .set("memory_bytes", g.memory_bytes)
                     // The maker's "24 GB" (GDDR/HBM come in binary densities: 24 GB = 24 GiB of DRAM).
                     .set("marketed_gb", g.memory_bytes / (int64_t(1) << 30))
                     .set("total_bytes", g.total_bytes())
                     .set("bandwidth_bytes_per_s", g.bandwidth_bytes_per_s)
                     .set("unified_memory", g.unified_memory));
    JsonArray messages;
    for (const MessageTemplate& t : message_templates())
        messages.add(JsonObject().set("code", t.code).set("english", t.english));
    JsonObject sim_limits;
    for (const SimInputLimit& l : sim_input_limits()) sim_limits.set(l.name, limit_json(l.min, l.max, l.flag));
    return JsonObject()
        .set("limits", limits)
        .set("sim_limits", sim_limits)
        .set("sim_block_sizes", sim_block_sizes())
        .set("kv_types", JsonObject()
                             .set("vllm", vllm_page_kv_types())
                             .set("transformers", transformers_kv_type_names())
                             .set("llamacpp", llamacpp_kv_type_names()))
        .set("gpus", gpus)
        .set("weight_formats", weight_format_names())
        .set("messages", messages)
        .text();
}

Result<BudgetInputs> budget_inputs_from_json(const std::string& text) {
    json j = parse_json_dom(text);
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
        else if (k == "engine_version")
            e = text_field(in.engine_version);
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
        else if (k == "expert_parallel")
            e = read_flag(k, v, in.expert_parallel);
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
