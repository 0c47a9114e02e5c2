// Per-iteration latency of one scheduler step on one GPU (or one tensor-parallel
// shard: pass the per-GPU numbers). A step runs its kernels one after the other, so
// the parts add up:
//
//   step = step_overhead + seq_overhead x (share x groups    (CPU: schedule, sample, detokenize)
//                                + (1 - share) x sequences)
//        + max(weights / (bandwidth x bw_eff),               (dense layers: read every weight once,
//              2 x active_params x tokens / (FLOPs x c_eff))  or do the GEMMs, whichever is longer)
//        + KV bytes read / (bandwidth x kv_eff)              (attention over each sequence's context)
//        + attention FLOPs of new tokens / (FLOPs x c_eff)   (prefill: QK^T and PV, quadratic)
//        + swap bytes / PCIe bandwidth
//        + 2 x copied K/V bytes / (bandwidth x bw_eff)            (GPU copies: read and write)
//
// Prefill and decode tokens both cost 2 x active_params FLOPs; a decode step is
// bound by the weight read until the batch is large, a prefill chunk by compute.
// The KV read grows with every sequence's context, the CPU part with the number of
// sequences: together they make a step at batch 130 cost about three times one at
// batch 10, as the paper's batch sizes imply (see the constants below).
//
// Where the constants come from. bandwidth and FLOPs: the GPU catalog (src/gpus.cpp,
// vendor peaks). The rest are defaults, overridable:
//  - bandwidth_efficiency 0.8: large GEMV weight streams reach 75-85% of peak HBM
//    bandwidth (decode of a 13B model on an A100 takes ~20 ms for 26 GB).
//  - compute_efficiency 0.6: large prefill GEMMs reach roughly half to two thirds of
//    peak dense tensor FLOPs.
//  - kv_bandwidth_efficiency and seq_overhead_s are CALIBRATED, not measured: they are
//    the two constants fitted so that the simulator's average batch sizes match the
//    paper's Fig. 13 for vLLM on OPT-13B / A100-40GB (ShareGPT at 2 req/s: 30.42;
//    Alpaca at 30 req/s: 132.44), the two points where the batch is set by the step
//    time rather than by memory. By Little's law those imply ~45 ms per output token
//    at batch 30 and ~76 ms at batch 132, against ~21 ms for the weight read alone.
//    A grid over 0.5-0.8 x 0.28-0.34 ms, scored by the RMS of the two relative
//    errors, picked 0.75 and 0.32 ms, both on the test's seed (1) alone (31.48 and
//    130.1: +3.5% and -1.8%) and on the mean of seeds 1-3 (30.91 and 130.4: +1.6%
//    and -1.6%); Alpaca at 30 req/s sits at the knee, where one seed moves the batch
//    by ~10%. (0.55 and 0.3 ms were fitted while ShareGPT was drawn from lognormal
//    fits of its means; with the paper's length statistics they gave 31.88 and
//    129.9 on seed 1.) The Fig. 13 test in tests/unit/test_sim_published.cpp holds
//    the result. Read physically: a paged-attention kernel at ~three quarters of
//    peak bandwidth, a little under the dense layers' streaming rate (the paper,
//    Sec. 7.1 / Fig. 18a: its kernel is 20-26% slower than FasterTransformer's on
//    the attention itself, and short contexts in small blocks read inefficiently) and
//    ~0.32 ms of CPU work per sequence per step (vLLM v0 prepared inputs, sampled and
//    detokenized in Python per sequence; the vLLM v0.6 release post measured the GPU
//    idle ~60% of the time on CPU overheads). Everything else in Fig. 13 and the
//    sustainable-rate ratios is a prediction (tests/unit/test_sim_published.cpp).
//    These are 2023 vLLM (v0) costs, as the paper measured; vLLM v1 took most of the
//    per-sequence CPU work off the critical path, so for a current deployment
//    seq_overhead_s is pessimistic.
//  - seq_overhead_group_share 0.85: of that per-sequence CPU time, the share spent once
//    per sequence GROUP a step (a request's n parallel samples or beams) rather than
//    once per sequence. Fig. 13's requests are single sequences, so seq_overhead_s
//    was fitted on the sum and cannot tell the two apart; nor can the artifact's code
//    by itself: its per-step Python loops over both (per group: the scheduler's
//    input record, the worker's group entry, the sampler's multinomial or top-k and
//    its host copy; per sequence: block tables, slot mapping, one .item() in the
//    sampler, post_step's append), and an operation count does not give their times.
//    CALIBRATED on what no test asserts: the sustainable rates (normalized latency
//    1 s/token, 600 s, seeds 5-14, as tests/unit/test_sim_published.cpp measures
//    them) of Fig. 14's PARALLEL-sampling panel, Alpaca, n = 2 / 4 / 6, vLLM and Orca
//    (Oracle), against the top rates of the artifact's sweeps for that panel
//    (sosp-ae-39/sosp-ae-astra experiments/fig14-parallel.sh: vLLM 20 / 12 / 9,
//    Orca (Oracle) 14 / 9 / 6 req/s; for basic sampling our rates land 2-3% above
//    the tops of its fig12 sweep). Scored by the RMS of the six log errors:
//    share 0: 0.351 (all six 12-38% low), 0.25: 0.264, 0.5: 0.166, 0.75: 0.076, 0.8: 0.066,
//    0.85: 0.066 (the minimum; vLLM +8 / +7 / +1%, Oracle +7 / -8 / -6%),
//    0.9: ~0.074, 1: 0.114 (vLLM 14-19% high). The same code paths run beam search
//    (only the sampler's per-group call differs: a top-k over width x vocabulary
//    instead of a multinomial), so Fig. 14's beam-search panel, which the tests do
//    assert, is a prediction of this constant, not a fit to it.
//  - step_overhead_s 3 ms: fixed per-step scheduling and launch cost.
//  - swap_bytes_per_s 25 GB/s: PCIe 4.0 x16 achievable (32 GB/s peak).
#pragma once
#include <cstdint>

namespace kvb::sim {

struct LatencyModel {
    double weights_bytes = 0;  // read once per step
    double active_params = 0;  // 2 FLOPs per active parameter per token
    // FLOPs per (new token x context token) pair for attention: QK^T and PV are
    // 2 * 2 * heads * head_dim per layer, summed over layers (4 * sum(q_heads * head_dim)).
    double attn_flops_per_pair = 0;
    double bandwidth_bytes_per_s = 0;  // 0: no memory terms
    double flops_per_s = 0;            // 0: no compute terms
    double bandwidth_efficiency = 0.8;
    double compute_efficiency = 0.6;
    double kv_bandwidth_efficiency = 0.75;  // calibrated (Fig. 13), see above
    double step_overhead_s = 0.003;
    double seq_overhead_s = 0.00032;  // calibrated (Fig. 13), see above
    // Of seq_overhead_s, the share spent once per sequence group a step rather than
    // once per sequence (a single-sequence request pays all of it either way).
    double seq_overhead_group_share = 0.85;  // calibrated (Fig. 14, parallel sampling), see above
    double swap_bytes_per_s = 25e9;
};

// What one step does.
struct StepWork {
    double tokens = 0;      // new tokens computed (prefill and decode, every sequence)
    double kv_bytes = 0;    // K/V bytes read by attention (each sequence's context)
    double attn_pairs = 0;  // (new token, context token) pairs
    double seqs = 0;        // sequences that computed a token
    double groups = 0;      // sequence groups (requests) that computed a token
    double swap_bytes = 0;  // copied to or from CPU memory
    double copy_bytes = 0;  // K/V copied within the GPU (copy-on-write, Orca beam switches)
};

// A GPU-to-GPU copy reads and writes every byte at the dense layers' streaming rate.
inline double copy_seconds(const LatencyModel& m, const StepWork& w) {
    if (!(w.copy_bytes > 0) || !(m.bandwidth_bytes_per_s > 0)) return 0;
    return 2.0 * w.copy_bytes / (m.bandwidth_bytes_per_s * m.bandwidth_efficiency);
}

inline double step_seconds(const LatencyModel& m, const StepWork& w) {
    double dense_mem = 0, dense_comp = 0, attn = 0;
    if (m.bandwidth_bytes_per_s > 0) {
        dense_mem = m.weights_bytes / (m.bandwidth_bytes_per_s * m.bandwidth_efficiency);
        attn += w.kv_bytes / (m.bandwidth_bytes_per_s * m.kv_bandwidth_efficiency);
    }
    if (m.flops_per_s > 0) {
        const double f = m.flops_per_s * m.compute_efficiency;
        dense_comp = 2.0 * m.active_params * w.tokens / f;
        attn += m.attn_flops_per_pair * w.attn_pairs / f;
    }
    const double cpu =
        m.seq_overhead_s * (m.seq_overhead_group_share * w.groups + (1.0 - m.seq_overhead_group_share) * w.seqs);
    double t = m.step_overhead_s + cpu + (dense_mem > dense_comp ? dense_mem : dense_comp) + attn;
    if (w.swap_bytes > 0 && m.swap_bytes_per_s > 0) t += w.swap_bytes / m.swap_bytes_per_s;
    return t + copy_seconds(m, w);
}

}  // namespace kvb::sim
