#include "sim/setup.h"

#include <cstdio>

#include "base/units.h"
#include "engines/vllm.h"
#include "model/dtype.h"
#include "model/weights.h"

namespace kvb {

Result<SimSetup> sim_setup(const ModelSpec& m, const SimSetupInputs& in) {
    SimSetup s;
    auto kvt = vllm_kv_cache_dtype(in.kv_dtype, m);
    if (!kvt) return kvt.error();
    s.kv_dtype = kvt->name;
    s.ideal = ideal_kv(m, uniform_kv_dtypes(m, kvt.value()));
    if (s.ideal.bytes_per_token <= 0) {
        return make_error("no_paging", note("no_paging", {{"model", m.name}}));
    }
    auto wf = weight_format(in.weights, m);
    if (!wf) return wf.error();
    auto wb = weight_bytes(m, wf.value(), in.params);
    if (!wb) return wb.error();
    auto pc = count_params(m);
    if (!pc) return pc.error();
    // A custom GPU size has no bandwidth of its own: time it as the default A100-80GB.
    s.time_gpu = find_gpu(in.gpu.empty() ? "a100-80gb" : in.gpu);
    if (!s.time_gpu) return make_error("bad_value", note("sim_unknown_gpu", {{"gpu", in.gpu}}));

    sim::SimConfig& c = s.config;
    c.kv_bytes_per_token = s.ideal.bytes_per_token;
    s.weights_bytes = wb->bytes;
    int64_t mml = in.max_model_len > 0 ? in.max_model_len : m.max_position_embeddings;
    if (mml <= 0) return make_error("bad_value", note("no_max_model_len", {{"model", m.name}}));
    int64_t mns = in.max_num_seqs > 0 ? in.max_num_seqs : 256;
    int64_t mnbt = in.max_num_batched_tokens > 0 ? in.max_num_batched_tokens : 8192;
    if (in.kv_cache_memory > 0) {
        c.kv_capacity_bytes = in.kv_cache_memory;
    } else {
        BudgetInputs bi;
        if (in.gpu.empty()) {
            if (in.gpu_memory_bytes <= 0) return make_error("bad_value", note("gpu_or_memory_needed"));
            bi.gpu_memory_bytes = in.gpu_memory_bytes;
        } else {
            bi.gpu = s.time_gpu->id;
        }
        bi.gpu_memory_utilization = in.gpu_memory_utilization;
        bi.weights = in.weights;
        bi.params = in.params;
        if (in.kv_dtype != "auto") bi.kv_cache_dtype = in.kv_dtype;
        bi.context = mml;
        bi.max_num_seqs = in.max_num_seqs;
        bi.max_num_batched_tokens = in.max_num_batched_tokens;
        bi.block_size = in.block_size;
        auto br = compute_budget(m, bi);
        if (!br) return br.error();
        s.budget = br.value();
        s.from_budget = true;
        // KV cache dtype auto is the dtype vLLM serves the model in on this GPU, which the budget
        // resolved (float32 on a T4 for Gemma 3: vllm_auto_dtype in src/budget/budget_vllm.cpp).
        if (in.kv_dtype == "auto" && s.budget.kv_cache_dtype != s.kv_dtype) {
            const KvType served = vllm_auto_kv_type(s.budget.kv_cache_dtype);
            s.kv_dtype = served.name;
            s.ideal = ideal_kv(m, uniform_kv_dtypes(m, served));
            c.kv_bytes_per_token = s.ideal.bytes_per_token;
        }
        if (s.budget.kv_pool_bytes <= 0) {
            char u[16];
            std::snprintf(u, sizeof u, "%.2f", s.budget.gpu_memory_utilization);
            // A size without a catalog GPU is "a GPU of 16.00 GiB", not the budget's name for it.
            if (in.gpu.empty())
                return make_error("no_kv_memory", note("no_kv_memory_size",
                                                       {{"memory", format_bytes(s.budget.gpu_total_bytes)},
                                                        {"utilization", u},
                                                        {"weights", format_bytes(s.budget.weights_per_gpu_bytes)}}));
            return make_error("no_kv_memory",
                              note("no_kv_memory", {{"gpu", s.budget.gpu_name},
                                                    {"utilization", u},
                                                    {"weights", format_bytes(s.budget.weights_per_gpu_bytes)}}));
        }
        c.kv_capacity_bytes = s.budget.kv_pool_bytes;
        s.weights_bytes = s.budget.weights_per_gpu_bytes;
        mns = s.budget.max_num_seqs;
        mnbt = s.budget.max_num_batched_tokens;
    }
    // vLLM's SchedulerConfig (vllm/config/scheduler.py, verify_max_model_len) raises on the
    // resolved values, defaults included, chunked prefill or not: a step must be able to
    // schedule one token for each of max_num_seqs requests. (Its other check there,
    // max_num_batched_tokens below max_model_len, applies only without chunked prefill,
    // which the simulator always does.)
    if (mnbt < mns)
        return make_error("bad_value", note("vllm_batched_below_seqs",
                                            {{"tokens", std::to_string(mnbt)}, {"seqs", std::to_string(mns)}}));
    c.block_size = static_cast<int32_t>(in.block_size);
    c.max_model_len = static_cast<int32_t>(mml);
    c.max_num_seqs = static_cast<int32_t>(mns);
    c.max_num_batched_tokens = static_cast<int32_t>(mnbt);
    c.n = static_cast<int32_t>(in.n);
    c.beam_width = static_cast<int32_t>(in.beam);
    c.preemption = in.preemption;
    if (in.swap_space_bytes < 0) return make_error("bad_value", note("negative_swap_space"));
    c.swap_space_bytes = in.swap_space_bytes;
    c.independent_sample_lengths = in.independent_sample_lengths;
    c.seed = in.seed;
    // Step-time model (src/sim/latency.h): weights and KV read over the GPU's bandwidth,
    // 2 x active parameters FLOPs per token and attention FLOPs over its dense FLOPs.
    c.latency.weights_bytes = static_cast<double>(s.weights_bytes);
    c.latency.active_params = static_cast<double>(pc->active);
    int64_t attn_layers = 0;
    for (const Layer& l : m.layers) {
        if (l.kind == LayerKind::Full || l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked ||
            l.kind == LayerKind::Mla)
            ++attn_layers;
    }
    const int64_t qdim = m.dims.num_attention_heads * (m.dims.q_head_dim > 0 ? m.dims.q_head_dim : 0);
    c.latency.attn_flops_per_pair = 4.0 * static_cast<double>(qdim) * static_cast<double>(attn_layers);
    c.latency.bandwidth_bytes_per_s = s.time_gpu->bandwidth_bytes_per_s;
    c.latency.flops_per_s = s.time_gpu->bf16_flops;
    return s;
}

Result<sim::WorkloadSpec> workload_spec(const WorkloadInputs& in) {
    sim::WorkloadSpec w;
    w.seed = in.seed;
    if (in.preset == "sharegpt" || in.preset == "alpaca") {
        w.lengths = in.preset == "sharegpt" ? sim::Lengths::ShareGpt : sim::Lengths::Alpaca;
        w.requests = in.requests > 0 ? in.requests : 1000;
    } else if (in.preset == "trace") {
        auto tr = sim::scan_trace(in.trace_source ? in.trace_source : sim::text_source(in.trace_text), in.trace_name);
        if (!tr) return tr.error();
        w.trace_file = std::move(tr.value());
        w.lengths = sim::Lengths::Trace;
        w.arrival = sim::Arrival::Trace;
        w.requests = in.requests;
    } else {
        return make_error("bad_value", note("unknown_workload", {{"value", in.preset}}));
    }
    if (in.rate > 0) {
        w.rate = in.rate;
        w.arrival = sim::Arrival::Poisson;
    }
    w.shared_prefix = static_cast<int32_t>(in.shared_prefix);
    w.shared_fraction = in.shared_prefix > 0 ? in.shared_fraction : 0;
    return w;
}

}  // namespace kvb
