// ModelSpec: a Hugging Face config.json normalized into per-layer geometry.
// Every formula downstream sums over `layers`; nothing assumes all layers look alike.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace kvb {

enum class LayerKind {
    Full,     // global attention: cache grows with the context
    Sliding,  // sliding-window attention: cache stops growing at `window`
    Chunked,  // chunked local attention (Llama 4): attends within `window`-token chunks
    Mla,      // multi-head latent attention: one compressed latent per token
    Linear,   // linear attention / gated delta net: fixed-size recurrent state
    Mamba,    // Mamba / Mamba-2 SSM: fixed-size conv + ssm state
    None,     // no self-attention cache (no-op attention, cross-attention layers)
};

const char* to_string(LayerKind k);
// Attention that caches K and V per head (global, sliding or chunked): not MLA's latent, not a recurrent state.
inline bool head_attention(LayerKind k) {
    return k == LayerKind::Full || k == LayerKind::Sliding || k == LayerKind::Chunked;
}

// Recurrent state geometry, expressed the way llama.cpp and vLLM both size it:
// conv state = (conv_kernel - 1) x conv_dim, ssm state = ssm_elems.
struct StateGeometry {
    int64_t conv_kernel = 0;
    int64_t d_inner = 0;   // value side width (Hv*Dv for gated delta net, nheads*head_dim for Mamba-2)
    int64_t n_groups = 0;  // key groups (Hk for gated delta net, n_groups for Mamba-2, 0 for Mamba-1)
    int64_t d_state = 0;   // Dk for gated delta net, ssm_state_size for Mamba
    int64_t heads = 0;     // value heads / mamba heads (the tensor-parallel split axis)
    // vLLM widens the conv state by num_speculative_tokens columns for gated delta net and Mamba-2
    // (gated_delta_net_state_shape, mamba2_state_shape); Kimi's KDA takes num_spec but keeps
    // conv_kernel - 1 columns (kda_state_shape in mamba_utils.py).
    bool conv_spec_taps = true;
    int64_t conv_dim() const { return d_inner + 2 * n_groups * d_state; }
    // Lightning attention (MiniMax) has no conv kernel: no conv state, not a negative one.
    int64_t conv_elems() const { return conv_kernel > 0 ? (conv_kernel - 1) * conv_dim() : 0; }
    int64_t ssm_elems() const { return d_state * d_inner; }
};

struct Layer {
    LayerKind kind = LayerKind::Full;
    // Full / Sliding / Chunked (and the decompressed view of Mla used by transformers)
    int64_t kv_heads = 0;
    int64_t k_head_dim = 0;
    int64_t v_head_dim = 0;
    int64_t window = 0;  // Sliding: window tokens; Chunked: chunk tokens
    // Query heads of this layer when they differ from num_attention_heads (Step-3.7's sliding layers: 96 of 64);
    // 0: the model's. Weights only: the cache follows kv_heads.
    int64_t q_heads = 0;
    // Mla: the cached latent is kv_lora_rank + qk_rope_head_dim wide
    int64_t kv_lora_rank = 0;
    int64_t qk_rope_head_dim = 0;
    // Sparse MLA (ModelSpec::sparse_mla): the width of this layer's indexer keys, 0 when the layer runs no
    // indexer of its own (GLM-5.2's IndexShare layers reuse an earlier layer's top-k). A MiniMax-M3 Full layer
    // with an MSA indexer (ModelSpec::msa_block_size): its one key head's width (sparse_index_dim).
    int64_t index_head_dim = 0;
    // DeepSeek-V4 (an Mla layer whose latent is kv_lora_rank + qk_rope_head_dim = head_dim wide): every
    // layer keeps the latents of its last `window` tokens, and a layer with compress_ratio r > 1 also one
    // compressed latent per r tokens of the whole context (compress_ratios in config.json; 0 or 1: none).
    // Ratio-4 layers' lightning indexer caches an indexer_head_dim key per compressed token too.
    int64_t compress_ratio = 0;
    int64_t indexer_head_dim = 0;
    // Linear / Mamba
    StateGeometry state;
    // llama.cpp's MTP block appended to a config's layers (llamacpp_target): kind None, as it holds no
    // cache in the target's context, yet its weights are counted: an attention layer of the geometry
    // above (MLA when kv_lora_rank > 0), its norms and MLP, eh_proj and the enorm, hnorm and
    // shared_head_norm vectors (load_block_mtp in llama.cpp's qwen35 loader).
    bool nextn = false;
    // Gemma 3n / 4's last num_kv_shared_layers: kind None (they read an earlier layer's cache), the
    // geometry above kept because their q/k/v projections are in the checkpoint and every engine loads them.
    bool kv_shared = false;
    // Llama 3.2 Vision's cross-attention layers: kind None (their cache holds the image's tokens, not the context),
    // the geometry above kept for their q / k / v / o, q_norm and k_norm, and two tanh gates
    // (MllamaTextCrossAttention).
    bool cross_attention = false;
};

struct QuantPlan;
struct QuantScheme;
// The KV cache a checkpoint's quantization_config declares, as vLLM reads it (read_declared_kv, model/quant.h);
// vLLM serves it under --kv-cache-dtype auto from some release on (vllm_kv_choice).
struct DeclaredKv {
    std::string source;   // "modelopt" (kv_cache_quant_algo / kv_cache_scheme), "compressed-tensors"
                          // (kv_cache_scheme), "" = none declared
    std::string dtype;    // "fp8", "nvfp4", "" = a value vLLM does not map (it warns and keeps auto)
    std::string written;  // the value as the config writes it, as the notes quote it
};
struct Quantization {
    std::string method;  // "", "awq", "gptq", "fp8", "mxfp4", "bitsandbytes", "compressed-tensors", ...
    int bits = 0;        // the config's bits, else its main scheme's (compressed-tensors num_bits)
    int group_size = 0;
    // Every layer's stored format as the engines read quantization_config (model/quant.h); null
    // when the method is not one kvbudget sizes.
    std::shared_ptr<const QuantPlan> plan;
    DeclaredKv kv;
    // The quantization came from hf_quant_config.json beside a config.json that has none (ModelOpt 0.29 and
    // before), which vLLM reads then (transformers_utils/config.py).
    bool from_hf_quant_config = false;
};

// What the weights module needs to count parameters. Filled by the parser from
// whichever naming variant the config uses.
struct WeightDims {
    int64_t hidden_size = 0;
    int64_t num_attention_heads = 0;
    int64_t q_head_dim = 0;  // per query head (qk_nope + qk_rope for MLA)
    int64_t vocab_size = 0;
    int64_t embedding_extra_rows = 0;  // rows embed_tokens has beyond vocab_size (Mllama's vocab_size + 8)
    int64_t intermediate_size = 0;     // dense MLP width
    bool gated_mlp = true;             // SwiGLU-style 3 matrices vs 2 (GPT-2, OPT, Falcon, MPT, Bloom)
    bool tie_word_embeddings = false;
    bool attention_bias = false;  // the config's attention_bias; which projections carry it is the family's rule
    // MiniMax-M2's use_routing_bias: its MoE block holds an e_score_correction_bias (MiniMaxM2MoE; default false).
    bool routing_bias = false;
    // A g_proj gating the attention's output: 0 none; 1 one gate a query head (hidden -> the layer's query heads:
    // Step-3.5 / 3.7's use_head_wise_attn_gate, Laguna's gating true / "per-head"); 2 one a channel (hidden -> query
    // heads x head_dim: Laguna's "per-element").
    int attn_gate = 0;
    // MoE
    int64_t num_experts = 0;
    int64_t experts_per_token = 0;
    int64_t moe_intermediate_size = 0;
    int64_t shared_experts = 0;            // count of shared experts (each moe_intermediate_size wide)
    int64_t shared_intermediate_size = 0;  // or one shared expert of this width
    int64_t first_dense_layers = 0;        // DeepSeek first_k_dense_replace
    int64_t moe_latent_size = 0;           // Nemotron-H latent MoE: routed experts work in this width (0 = hidden)
    int64_t moe_layer_freq = 1;
    // MLA projections
    int64_t q_lora_rank = 0;
    int64_t qk_nope_head_dim = 0;
    int64_t v_head_dim = 0;
    // per-layer dense MLP widths when they differ (Nemotron-NAS); empty = uniform
    std::vector<int64_t> layer_intermediate;
    // per-layer MLP kind when the config says it layer by layer (Nemotron-H pattern,
    // mlp_only_layers, first_k_dense_replace...): 0 none, 1 dense, 2 MoE. Empty = every
    // layer dense (num_experts == 0) or MoE.
    std::vector<int8_t> layer_mlp;
    int64_t dense_intermediate_size = 0;  // width of dense layers in MoE models when it differs (Llama 4)
    std::string mlp_activation;           // hidden_act as written (relu2 MLPs are not gated)
    // Gemma 4: per-layer embeddings (PLE, vocab x layers x width, plus their projection from the hidden
    // state) and full-attention layers whose keys are their values (no v_proj).
    int64_t per_layer_input_size = 0;
    int64_t per_layer_input_vocab = 0;
    bool full_k_eq_v = false;
    // One attention-sink logit per query head on the sliding-window layers only (MiMo-V2-Flash's
    // add_swa_attention_sink_bias; gpt-oss's sinks on every layer are its family's rule).
    bool sliding_sinks = false;
    // DeepSeek-V4 (vLLM models/deepseek_v4): grouped low-rank output (wo_a per o_groups, wo_b), the hyper-connection
    // streams (hc_mult), the lightning indexer's heads, and the first num_hash_layers MoE layers routing by a
    // token -> experts table (tid2eid) instead of a score bias. 0 elsewhere.
    int64_t o_lora_rank = 0;
    int64_t o_groups = 0;
    int64_t hc_mult = 0;
    int64_t index_heads = 0;
    int64_t hash_layers = 0;
    // Routed experts stored as MXFP4 (17 B / 32 weights) inside an fp8 checkpoint: DeepSeek-V4's expert_dtype fp4,
    // which vLLM's DeepseekV4FP8Config sends through its MXFP4 MoE method.
    bool fp4_experts = false;
    // Vision tower, counted separately
    int64_t vision_params = 0;
    int64_t vision_replicated = 0;  // of those, what vLLM keeps whole on every TP rank (0: not known, split it all)
    int64_t vision_rope_dim = 0;    // the encoder's own RoPE cache columns (vllm_vision_rotary_cache_bytes); 0 none
    int64_t vision_heads = 0;       // its attention heads (vision_config num_heads / num_attention_heads); 0 unknown
    // The MLP width vLLM splits over the TP ranks, where a reader knows the tower (0 unknown); merged: gate and up in
    // one MergedColumnParallelLinear (Qwen2.5-VL), whose divisibility check is a bare assert.
    int64_t vision_mlp = 0;
    bool vision_mlp_merged = false;
    int64_t max_position_embeddings = 0;
};

// What a GGUF header says about the weights, exactly: llama.cpp's loader sums the
// same tensors for its "file size" (ggml_nbytes) and "model params" (elements) lines.
struct GgufWeights {
    int64_t tensor_bytes = 0;  // sum of ggml_nbytes over every tensor of every shard
    int64_t params = 0;        // sum of elements (includes MTP / nextn layers and vision-free text tensors)
    int64_t n_tensors = 0;
    int64_t shards = 1;
    // {ggml type name, tensor count} in ggml type id order, as "llama_model_loader: - type q4_K: 193 tensors"
    std::vector<std::pair<std::string, int64_t>> type_counts;
    int64_t file_type = -1;    // general.file_type (llama_ftype), -1 when absent
    std::string arch;          // general.architecture
    int64_t nextn_layers = 0;  // {arch}.nextn_predict_layers: layers in block_count without a KV cache
    bool split_mla = false;    // deepseek2 with attn_k_b / attn_v_b (MLA cache); false = per-head K/V cache
    // Where llama.cpp's -ngl places each tensor (llama_model::load_tensors): blk.N.* in repeating
    // layer N, output* in the output layer, everything else (token_embd, ...) in the input layer,
    // which always stays on the CPU. Without output.weight the output layer holds its own copy of
    // token_embd (TENSOR_DUPLICATED).
    std::vector<int64_t> block_bytes;  // by blk index
    // The FFN tensors of each block that --fit's tensor patterns move to system RAM
    // (get_overflow_pattern in llama.cpp's common/fit.cpp), by blk index.
    struct BlockFfn {
        int64_t exps = 0;   // ffn_(up|down|gate_up|gate)_(ch|)exps*: the routed experts
        int64_t ffn = 0;    // ffn_(gate|up|gate_up|down)*: every FFN matrix, router and shared experts too
        int64_t no_up = 0;  // ffn_(gate|gate_up|down)*: all but the up projections
        int64_t down = 0;   // ffn_down*
    };
    std::vector<BlockFfn> block_ffn;
    int64_t input_bytes = 0;
    int64_t output_bytes = 0;  // output.weight (when present) + output_norm
    int64_t token_embd_bytes = 0;
    bool tied_output = false;
};

// RoPE scaling as config.json (rope_scaling / rope_parameters), a GGUF header
// ({arch}.rope.scaling.*) or the user states it; see model/rope.h for what engines derive.
struct RopeScaling {
    std::string type;   // rope_type as vLLM normalizes it: yarn, linear, dynamic, longrope, llama3, default, ...
    double factor = 0;  // 0 = not given (rope_type default has none)
    int64_t original_max_position_embeddings = 0;
    std::string source = "config";  // "config", "gguf", "user" or "model_card"
    int64_t max_len = 0;            // the longest context it gives (vLLM's derived length); 0 = not worked out
};

// One of vLLM's RoPE cos/sin caches. get_rope (layers/rotary_embedding/__init__.py) builds one per distinct
// (head_size, rotary_dim, max_position, rope_parameters, dtype) and every layer with that key shares it, so a model
// whose sliding and full layers differ in theta, width or scaling holds several (Gemma 3, Gemma 4, MiMo-V2-Flash).
// Its rows depend on the scaling in effect (engines: vllm_rotary_cache_bytes), so that is worked out per answer.
struct RopeCache {
    int64_t rotary_dim = 0;  // columns: cos and sin halves side by side
    // The layers' scaling is the model's rope_scaling (or the user's in its place); false: `scaling` (none =
    // default RoPE), as for Gemma 3's sliding layers (rope_local_base_freq) or MiMo-V2-Flash's own parameters.
    bool follows_model = true;
    std::optional<RopeScaling> scaling;
    bool mrope = false;   // rope_parameters has mrope_section: MRotaryEmbedding caches 4 x the positions
    int dtype_bytes = 0;  // a dtype the model file forces (gpt_oss.py, DeepSeek-V4: float32); 0 = the served dtype
};

struct ModelSpec {
    std::string name;                // model id or file name, used in messages
    std::string model_type;          // of the text model
    std::string architecture;        // first entry of architectures
    std::string config_type;         // the top-level model_type (a multimodal config's, not its text model's)
    bool auto_map = false;           // the config names the repository's own classes (auto_map)
    std::string family;              // which normalization rule applied: "llama", "deepseek_mla", "gemma3", ...
    bool generic = false;            // unknown model_type, sized from the generic fields
    bool multimodal = false;         // text model was nested under text_config or a vision tower exists
    std::string dtype = "bfloat16";  // model dtype (torch_dtype / dtype)
    // Recurrent-state dtypes as the config states them ("" = follow the model dtype):
    // Qwen3.5 sets mamba_ssm_dtype float32, Nemotron-H mamba_ssm_cache_dtype float32.
    std::string ssm_dtype;
    // The Mamba kernels' chunk (mamba_chunk_size, else chunk_size: vLLM's ModelConfig.get_mamba_chunk_size);
    // 0 = the config says none, and its class's default applies (engines/vllm_hybrid.cpp).
    int64_t mamba_chunk_size = 0;
    int64_t max_position_embeddings = 0;
    std::optional<RopeScaling> rope_scaling;
    int64_t original_max_position_embeddings = 0;  // top-level key (Phi-3 LongRoPE), 0 = absent
    // vLLM's distinct RoPE caches as config.json sets them up; empty (a GGUF header): one of the first
    // attention layer's width that follows the model's scaling.
    std::vector<RopeCache> rope_caches;
    bool alibi = false;  // positions by ALiBi slopes, no rotary embedding (Falcon's "alibi": falcon-rw)
    // DeepSeek sparse attention (vLLM's is_v32: the config has index_topk): DeepSeek-V3.2, GLM-5.
    bool sparse_mla = false;
    // MiniMax-M3's sparse attention (MSA): the sparse_block_size its kernels page by, which vLLM's KV blocks must
    // match (the Full layers with index_head_dim > 0 are the sparse ones); 0 = none.
    int64_t msa_block_size = 0;
    std::vector<Layer> layers;
    // The last `drafter_layers` of `layers` are a speculative drafter's (vllm_with_drafter): vLLM puts
    // the whole drafter on the last pipeline stage, so only the layers before them are split.
    int64_t drafter_layers = 0;
    WeightDims dims;
    Quantization quant;
    std::vector<Message> notes;       // defaults filled, fields ignored, ...
    std::string source = "config";    // "config" (config.json) or "gguf" (a GGUF header)
    std::optional<GgufWeights> gguf;  // set when source == "gguf"

    int64_t count(LayerKind k) const;
    bool has(LayerKind k) const { return count(k) > 0; }
    bool has_state() const { return has(LayerKind::Linear) || has(LayerKind::Mamba); }
};

// A DeepSeek-V4 layer: an Mla layer with a sliding window (Layer::compress_ratio says what else it keeps).
inline bool dsv4_layer(const Layer& l) {
    return l.kind == LayerKind::Mla && l.window > 0;
}

// The recurrent state of all layers of one sequence stays under 2^40 elements, so state bytes
// x cells (llama.cpp's -np up to 4096) x 4 stay inside int64: config and GGUF readers both check it.
Result<bool> check_state_total(const ModelSpec& m);

// Parses config.json text. `name` is used in error messages ("... in Qwen/Qwen3-8B").
// `hf_quant_config`: the text of the checkpoint's hf_quant_config.json when it has one ("" when not); read
// as vLLM does, only when config.json has no quantization_config.
Result<ModelSpec> parse_config(const std::string& text, const std::string& name,
                               const std::string& hf_quant_config = std::string());

}  // namespace kvb
