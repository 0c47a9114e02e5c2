// Weights: parameter count from a ModelSpec (or an exact count given by the caller,
// e.g. the Hub's safetensors total) and the bytes those parameters take in a storage
// format (bf16, fp8, int8, AWQ/GPTQ int4 with group scales, GGUF block types and
// llama.cpp's _M mixes, MXFP4). Counts are built tensor by tensor so that quantized
// formats can apply their per-tensor rules (which tensors stay unquantized, group
// scales along the input dimension, llama.cpp's per-layer type choices).
// docs/budget-model.md explains every rule.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/arith.h"
#include "base/function_ref.h"
#include "base/result.h"
#include "model/model.h"

namespace kvb {

// What a tensor is, in the terms quantizers decide by.
enum class TensorRole {
    TokenEmbedding,     // input embedding (vocab x hidden)
    PositionEmbedding,  // learned absolute positions (GPT-2, OPT)
    Output,             // lm_head (absent when tied)
    AttnQ,
    AttnK,
    AttnV,
    AttnQkv,
    AttnOut,  // attention projections (AttnQkv: fused, e.g. Falcon)
    MlaQa,
    MlaQb,
    MlaKva,
    MlaKvb,  // MLA low-rank projections (q_a, q_b, kv_a_with_mqa, kv_b)
    FfnGate,
    FfnUp,
    FfnDown,  // dense MLP and shared experts
    ExpertGate,
    ExpertUp,
    ExpertDown,  // routed experts (count = number of experts)
    Router,      // MoE gate (never quantized)
    StateIn,
    StateOut,           // linear-attention / Mamba in and out projections
    StateConv,          // depthwise conv1d weight (never quantized)
    NextnProj,          // an MTP block's eh_proj (embedding and hidden state, 2h in, h out)
    PerLayerEmbedding,  // Gemma 3n / 4 per-layer embeddings (vocab x layers x width): looked up, never multiplied
    Vector,             // norms, biases, A_log, dt_bias, sinks: 1-D, kept in high precision
};
const char* to_string(TensorRole r);

struct TensorGroup {
    TensorRole role = TensorRole::Vector;
    int layer = -1;              // decoder layer index; -1 outside the blocks
    int64_t rows = 0;            // output features (1 for Vector)
    int64_t cols = 0;            // input features (the dimension group scales run along)
    int64_t count = 1;           // identical copies (routed experts)
    int64_t active = 1;          // copies a token uses (experts_per_token; = count otherwise)
    bool tp_replicated = false;  // vLLM keeps a full copy on every tensor-parallel rank
    bool shared = false;         // a MoE layer's shared expert (mlp.shared_experts)
    bool indexer = false;        // MiniMax-M3's MSA indexer projections (self_attn.index_q_proj / index_k_proj)
    bool router_vector = false;  // a MoE router's bias or score correction bias (a Vector, one entry an expert)
    int64_t params() const { return rows * cols * count; }
};

struct ParamCount {
    int64_t total = 0;      // text model (decoder + embeddings + lm_head; tied counted once)
    int64_t active = 0;     // per token: non-expert params + experts_per_token routed experts
    int64_t embedding = 0;  // input embedding (+ learned positions)
    int64_t output = 0;     // lm_head; 0 when tied
    int64_t attention = 0;  // attention / MLA projections (+ their biases and q/k norms)
    int64_t mlp = 0;        // dense MLP and shared experts
    int64_t experts = 0;    // routed experts, all of them
    int64_t router = 0;
    int64_t state = 0;        // linear-attention / Mamba mixers
    int64_t norms = 0;        // layer norms (+ their biases)
    int64_t vision = 0;       // vision tower (dims.vision_params), not in total
    bool from_config = true;  // false: total came from the caller, breakdown is the config's
    std::vector<TensorGroup> tensors;
    std::vector<Message> notes;  // state_uncounted
};

// Parameter count of the text model from its geometry (params.cpp). Errors name the field that is missing.
Result<ParamCount> count_params(const ModelSpec& m);

// Checkpoint: a pre-quantized checkpoint sized layer by layer from its quantization_config
// (`WeightFormat::plan`): compressed-tensors, ModelOpt, bitsandbytes, HQQ, fbgemm_fp8.
enum class WeightKind { Float, Fp8, Int8, IntGroup, Gguf, Mxfp4, Checkpoint };

struct WeightFormat {
    std::string name;  // canonical: "bf16", "fp16", "fp32", "fp8", "int8", "awq", "gptq",
                       // "gptq-int8", "mxfp4", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "IQ4_XS"
    WeightKind kind = WeightKind::Float;
    int float_bytes = 2;     // bytes of the tensors that stay unquantized (model dtype or bf16)
    int bits = 16;           // IntGroup bits
    int group_size = 0;      // IntGroup group size; <= 0: one group per row
    bool zero_point = true;  // IntGroup: zeros stored (packed at `bits`)
    bool g_idx = false;      // GPTQ act-order index (int32 per input column)
    int64_t fp8_block = 0;   // Fp8: scale block edge (128 for DeepSeek's 128x128), 0 = per tensor
    bool gguf = false;       // served by llama.cpp
    Message from;  // how "auto" chose: auto_dtype, auto_quant / auto_quant_bits / auto_quant_bits_group (method, bits,
                   // group), quant_not_modelled; no code for a named format
    // A GGUF of an MXFP4 checkpoint: its routed experts stay MXFP4, whatever the GGUF type.
    bool mxfp4_experts = false;
    // "auto" on a pre-quantized checkpoint: each layer's format, from its quantization_config
    // (which layers are ignored, per-layer schemes); null for a format chosen by name.
    std::shared_ptr<const QuantPlan> plan;
};

// "auto" | bf16 | fp16 | fp32 | fp8 | int8 | awq | gptq | gptq-int8 | int4 (= awq) | mxfp4 |
// q8_0 | q6_k | q5_k_m | q4_k_m | q4_0 | iq4_xs (case-insensitive).
// auto = the config's quantization_config when present, else the model dtype.
// `gguf_file`: the format as a GGUF file llama.cpp loads: mxfp4 (or mxfp4_moe) is llama-quantize's
// MXFP4_MOE, bf16 / fp16 / fp32 what convert_hf_to_gguf writes with that --outtype. A GGUF of an
// MXFP4 checkpoint (quant_method mxfp4) keeps its routed experts in MXFP4 whatever the type.
Result<WeightFormat> weight_format(const std::string& name, const ModelSpec& m, bool gguf_file = false);
const std::vector<std::string>& weight_format_names();

struct WeightBytes {
    WeightFormat format;
    int64_t params = 0;        // counted (or given) text params
    int64_t bytes = 0;         // text model weights in this format
    int64_t active_bytes = 0;  // bytes read per token (experts_per_token routed experts)
    int64_t vision_bytes = 0;  // vision tower, kept in float_bytes
    int64_t quantized_params = 0;
    int64_t unquantized_params = 0;
    // Per tensor-parallel rank (vLLM sharding: projections and experts split, norms, router,
    // MLA down-projections replicated, KV projections replicated when tp > kv heads,
    // vocab padded to 64 per rank), for the first and the last pipeline stage and the
    // heaviest stage. Includes the vision tower on stage 0.
    int64_t per_gpu_bytes = 0;         // max over all (tp, pp) ranks
    std::vector<int64_t> stage_bytes;  // per pipeline stage, one tp rank
    double bits_per_weight = 0;        // bytes * 8 / params
    std::vector<Message> notes;        // params_ignored, params_differ, the count's notes, `from`
    // Bytes of each of count_params' tensor groups (all copies), in its order: a GGUF's types
    // differ by tensor (gpt-oss's MXFP4 experts take half the bytes per weight of its Q8_0 embedding).
    std::vector<int64_t> tensor_bytes;

    // The text model and the vision tower: the whole checkpoint the engine loads.
    int64_t all_bytes() const { return sat_add(bytes, vision_bytes); }
};

// vLLM's expert parallelism (`--enable-expert-parallel`): the routed experts are not split within but placed whole,
// `size` ranks sharing each MoE layer's experts (the EP group, TP x DP: with one data-parallel rank the TP size).
// FusedMoE's determine_expert_map, "linear" placement (the default): from 0.10.1 (PR #21497) the first E % size ranks
// hold one expert more than E / size; before, the last rank held E / size + E % size.
struct ExpertParallel {
    int64_t size = 1;  // 1 = none: experts are split by tensor parallelism like any projection
    bool remainder_last = false;
};
// The experts the fullest rank holds of `experts` (all of them at size 1).
int64_t ep_local_experts(int64_t experts, const ExpertParallel& ep);

// Bytes of the weights in `format`. `given_params` > 0 replaces the counted total (the
// difference is stored at the format's main rate), except for pre-quantized checkpoints
// (config has quantization_config), whose safetensors element counts are packed words,
// not parameters: then it is ignored with a note. tp/pp: vLLM's split (1 = none).
// A given count more than kParamsPlausibleFactor times away from the config's own count is
// refused (params_implausible), or, when `given_is_advisory` (the Hub's safetensors total,
// not the user's word), set aside with a note (params_hub_implausible).
constexpr int64_t kParamsPlausibleFactor = 2;
// `stage_layers`: decoder layers per stage when the split is not get_pp_indices' default (vLLM's
// VLLM_PP_LAYER_PARTITION, already checked to sum to the layers); empty = the default split.
Result<WeightBytes> weight_bytes(const ModelSpec& m, const WeightFormat& format, int64_t given_params = 0,
                                 int64_t tp = 1, int64_t pp = 1, bool given_is_advisory = false,
                                 const std::vector<int64_t>& stage_layers = {}, const ExpertParallel& ep = {});

// vLLM's start-up check of a checkpoint stored in fp8 blocks ([block_n, block_k], weight_block_size) against the
// tensor-parallel split, layer by layer in the order vLLM builds them (decoder layer by layer: token mixer, shared
// experts, routed experts):
// - dense linears (validate_fp8_block_shape, fp8_utils.py; Fp8LinearMethod and the compressed-tensors fp8 schemes):
//   a row-parallel layer's per-rank input (o_proj, down_proj, out_proj) must be a multiple of block_k, each per-rank
//   output part of a column-parallel or merged layer (q_b_proj, kv_b_proj, qkv_proj's q / k / v, gate_up_proj's
//   halves, in_proj_qkvz / in_proj_ba) of block_n. `off_grid_merged_allowed` (vLLM 0.14.0 on, fp8's own config
//   only): a merged layer with a part off the grid is let through unchecked. Replicated layers and layers the
//   checkpoint keeps unquantized are not checked.
// - routed experts (Fp8MoEMethod / compressed_tensors_moe_w8a8_fp8.py create_weights, v0.7.0 to v0.27.1): each
//   rank's share of the intermediate size must be a multiple of block_n, and of block_k at TP > 1.
//   Under expert parallelism (`expert_parallel`) FusedMoE's own TP is 1: a rank's share is the whole intermediate
//   size, and block_k still follows the model's TP (get_tensor_model_parallel_world_size()).
// The first ValueError vLLM stops with, in its words (experts: it came from the routed experts), or nothing.
struct VllmBlockRefusal {
    Message message;
    bool experts = false;
};
std::optional<VllmBlockRefusal> vllm_fp8_block_refusal(const ModelSpec& m, const WeightFormat& format, int64_t tp,
                                                       bool off_grid_merged_allowed = true,
                                                       bool expert_parallel = false);

// vLLM's refusal of an AWQ checkpoint whose tensor-parallel split cuts a quantization group (auto_awq.py; awq.py and
// awq_marlin.py before 0.24): a row-parallel layer (o_proj, down_proj, out_proj) whose per-rank input is not a whole
// number of groups. AWQ-Marlin takes no such layer (check_marlin_supports_layer: padding fixes thread tiles, never a
// group straddling two ranks) and falls back to the AWQ kernel for it, whose create_weights raises; on a GPU without
// Marlin (below compute capability 7.5, 8.0 before 0.14; ROCm) the AWQ kernel takes every layer and raises the same.
// That fallback is vLLM's from 0.7.3 (PR #13119, VllmRelease::awq_layer_fallback); before, AWQ-Marlin refused in its
// own words, not modelled. Routed experts are left out: AWQ's MoE fallback (MoeWNA16) narrows its group until it
// divides. GPTQ is left out too: its kernel choice (choose_mp_linear_kernel) has kernels that check the whole input,
// not the rank's (Exllama, for float16), and then it starts. The ValueError word for word, and which layer and sizes.
struct VllmGroupRefusal {
    Message message;          // the verdict's reason
    Message detail;           // which layer, its share and the group, beside vLLM's words (empty: `message` says it)
    bool vllm_words = false;  // `message` is what vLLM prints
    const char* fix = "";     // the code of the note naming the TP that loads
};
std::optional<VllmGroupRefusal> vllm_awq_group_refusal(const ModelSpec& m, const WeightFormat& format, int64_t tp);

// The same split for compressed-tensors WNA16 (4- or 8-bit integer weights alone, grouped, no act order), whose
// create_weights asserts that each rank holds whole groups (compressed_tensors_wNa16.py, v0.7.3 .. v0.24; from 0.25.0
// verify_group_size_divides_partition's ValueError) after its kernel choice, which fails first on some GPUs and
// releases. Either way vLLM stops whatever the kernel; its words depend on which, so none are claimed.
// `zero_points_read`: the release reads asymmetric WNA16 (0.8.5 on).
std::optional<VllmGroupRefusal> vllm_wna16_group_refusal(const ModelSpec& m, const WeightFormat& format, int64_t tp,
                                                         bool zero_points_read);

// The first column- or row-parallel linear of the decoder vLLM builds (in build order, at TP 1) whose checkpoint scheme
// `pick` takes, with its module name as vLLM names it ("layers.0.self_attn.qkv_proj", "layers.0.mlp.gate_up_proj" for
// the merged layers; the model's prefix left out): where a check vLLM makes per linear layer, as it builds the model,
// first stops. Nothing without a plan or such a layer.
struct PlannedLinear {
    const QuantScheme* scheme = nullptr;
    std::string layer;
};
std::optional<PlannedLinear> first_planned_linear(const ModelSpec& m, const WeightFormat& format,
                                                  FunctionRef<bool(const QuantScheme&)> pick);

// vLLM's get_pp_indices: [start, end) decoder layers of pipeline stage `rank`.
std::pair<int64_t, int64_t> pp_layer_range(int64_t num_layers, int64_t rank, int64_t pp);

}  // namespace kvb
