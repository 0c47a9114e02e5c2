// Per-architecture details of the weights that are not KV geometry (biases, norms, gates),
// keyed by the text model's model_type. Shared by count_params (params.cpp) and the GGUF
// type choice of weight_bytes (weights.cpp), which ask it once per call. Not a public header.
#pragma once
#include <cstdint>

#include "model/weights.h"

namespace kvb::weights_detail {

// The HF modeling files are the reference for each flag.
struct Family {
    bool qkv_bias = false;     // q/k/v projections carry a bias
    bool o_bias = false;       // output projection carries a bias
    bool mlp_bias = false;     // MLP (and expert) projections carry biases
    bool ln_bias = false;      // LayerNorm with bias (2 vectors per norm) instead of RMSNorm
    int norms_per_layer = 2;   // input + post-attention
    int qk_norm = 0;           // 0 none, 1 per head, 2 whole projection (OLMo 2/3), 3 the same split over TP ranks
    bool gated_q = false;      // Qwen3-Next / Qwen3.5: q_proj also emits the output gate (2x rows)
    bool sinks = false;        // gpt-oss attention sinks (one per head)
    bool router_bias = false;  // gpt-oss router bias
    bool score_bias = false;   // DeepSeek-V3 style e_score_correction_bias (noaux_tc routing)
    bool shared_gate = false;  // Qwen2-MoE / Qwen3-Next shared_expert_gate (1 x hidden)
    bool fused_qkv = false;    // one qkv tensor (matters for llama.cpp's type choice)
    int64_t pos_rows = 0;      // learned absolute position embeddings
    bool block_kinds = false;  // Nemotron-H: every block is either a mixer or an MLP
    bool falcon = false;       // llama.cpp's LLM_ARCH_FALCON (output tensor type rule)
    bool kda = false;          // Kimi Linear: linear layers are KDA (q/k/v convs, low-rank f and g gates)
    bool gemma4 = false;       // Gemma 4: q per layer at the layer's head_dim, a layer_scalar, PLE, MoE beside the MLP
};

Family family_of(const ModelSpec& m);

// count_params with the family already looked up.
Result<ParamCount> count_params(const ModelSpec& m, const Family& f);

}  // namespace kvb::weights_detail
