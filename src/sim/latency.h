// Per-iteration latency: a step reads the weights and the batch's KV once over
// memory bandwidth and does the batch's FLOPs on the compute units; whichever
// takes longer bounds the step (a roofline), plus a fixed per-step overhead.
// The defaults are documented guesses, overridable; they make simulated seconds
// comparable across policies, not a prediction to the millisecond.
#pragma once
#include <cstdint>

namespace kvb::sim {

struct LatencyModel {
    double weights_bytes = 0;       // read once per step (per GPU share for TP: pass the per-GPU numbers)
    double active_params = 0;       // 2 FLOPs per active parameter per token
    // FLOPs per (new token x context token) pair for attention: QK^T and PV are
    // 2 * 2 * heads * head_dim per layer, summed over layers (4 * sum(q_heads * head_dim)).
    double attn_flops_per_pair = 0;
    double bandwidth_bytes_per_s = 0;  // 0: no memory term
    double flops_per_s = 0;            // 0: no compute term
    // Decode kernels reach roughly 70-85% of peak HBM bandwidth in vLLM.
    double bandwidth_efficiency = 0.8;
    // Large prefill GEMMs reach roughly half to two thirds of peak dense FLOPs.
    double compute_efficiency = 0.6;
    // Scheduling, sampling, detokenisation and launch per step (a few ms in vLLM v1).
    double step_overhead_s = 0.003;
    // Swap traffic over PCIe 4.0 x16 (~25 GB/s achievable of 32 GB/s).
    double swap_bytes_per_s = 25e9;
};

inline double step_seconds(const LatencyModel& m, double new_tokens, double kv_bytes_read, double attn_pairs,
                           double swap_bytes) {
    double mem = 0, comp = 0;
    if (m.bandwidth_bytes_per_s > 0) mem = (m.weights_bytes + kv_bytes_read) / (m.bandwidth_bytes_per_s * m.bandwidth_efficiency);
    if (m.flops_per_s > 0)
        comp = (2.0 * m.active_params * new_tokens + m.attn_flops_per_pair * attn_pairs) / (m.flops_per_s * m.compute_efficiency);
    double t = m.step_overhead_s + (mem > comp ? mem : comp);
    if (swap_bytes > 0 && m.swap_bytes_per_s > 0) t += swap_bytes / m.swap_bytes_per_s;
    return t;
}

}  // namespace kvb::sim
