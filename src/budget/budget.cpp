#include "budget/budget.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "base/text.h"
#include "base/arith.h"
#include "model/dtype.h"
#include "kv/kv.h"
#include "engines/transformers_cache.h"
#include "base/units.h"

namespace kvb {

Result<BudgetEngine> parse_budget_engine(const std::string& s) {
    if (s == "vllm") return BudgetEngine::Vllm;
    if (s == "llamacpp" || s == "llama.cpp" || s == "llama-cpp") return BudgetEngine::LlamaCpp;
    if (s == "transformers" || s == "hf") return BudgetEngine::Transformers;
    return make_error("bad_value", "--engine must be vllm, llamacpp or transformers, got '" + s + "'");
}

const char* to_string(BudgetEngine e) {
    switch (e) {
        case BudgetEngine::Vllm: return "vllm";
        case BudgetEngine::LlamaCpp: return "llamacpp";
        case BudgetEngine::Transformers: return "transformers";
    }
    return "?";
}

namespace {

// Largest x in [lo, hi] with pred(x) true, given pred(lo) is true and pred is monotone
// (true then false): every "longest context" / "most sequences" search.
template <class Pred>
int64_t largest_true(int64_t lo, int64_t hi, Pred pred) {
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (pred(mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int model_dtype_bytes(const ModelSpec& m) {
    int b = dtype_size(m.dtype);
    return b == 2 || b == 4 ? b : 2;
}

int64_t max_kv_heads(const ModelSpec& m) {
    int64_t k = 0;
    for (const Layer& l : m.layers) k = std::max(k, l.kv_heads);
    return k;
}

std::string fmt_fraction(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// "Qwen/Qwen3-8B" + Q4_K_M -> "Qwen3-8B-Q4_K_M.gguf" (the usual naming of GGUF uploads).
std::string gguf_file(const ModelSpec& m, const std::string& fmt) {
    std::string base = m.name;
    if (auto s = base.find_last_of('/'); s != std::string::npos) base = base.substr(s + 1);
    if (base.empty()) base = "model";
    std::string f = fmt == "bf16" ? "BF16" : fmt == "fp16" ? "F16" : fmt == "fp32" ? "F32" : fmt;
    return base + "-" + f + ".gguf";
}

}  // namespace

int64_t vllm_default_max_num_batched_tokens(int64_t gpu_total_bytes, bool is_a100) {
    return gpu_total_bytes >= 70 * GiB && !is_a100 ? 8192 : 2048;
}

int64_t vllm_default_max_num_seqs(int64_t gpu_total_bytes, bool is_a100) {
    return gpu_total_bytes >= 70 * GiB && !is_a100 ? 1024 : 256;
}

namespace {

// One forward pass over `tokens` tokens on one tensor-parallel rank: the residual and
// hidden streams plus the widest per-token intermediate of any layer.
int64_t forward_bytes(const ModelSpec& m, int64_t tokens, int64_t tp) {
    const WeightDims& d = m.dims;
    if (tp < 1) tp = 1;
    const int64_t dt = model_dtype_bytes(m);
    const int64_t h = d.hidden_size;
    int64_t dense_i = d.intermediate_size;
    for (int64_t w : d.layer_intermediate) dense_i = std::max(dense_i, w);
    const int64_t moe_i = d.moe_intermediate_size > 0 ? d.moe_intermediate_size : d.intermediate_size;
    const int64_t k = d.experts_per_token > 0 ? d.experts_per_token : 1;
    const int64_t heads = d.num_attention_heads;
    const int64_t kvh = max_kv_heads(m);
    const int64_t hd = d.q_head_dim;
    int64_t widest = 0;
    if (dense_i > 0) widest = std::max(widest, 3 * dense_i / tp);  // gate_up output (2I) + activation output (I)
    if (d.num_experts > 0) {
        // fused_moe keeps three caches per token: [topk, 2N], [topk, N], [topk, hidden]
        int64_t shared = d.shared_intermediate_size > 0 ? d.shared_intermediate_size : d.shared_experts * moe_i;
        widest = std::max(widest, k * (3 * moe_i / tp + h) + 3 * shared / tp);
    }
    if (m.has(LayerKind::Mla)) {
        widest = std::max(widest, heads * (hd + d.qk_nope_head_dim + 2 * d.v_head_dim) / tp);
    } else if (heads > 0) {
        widest = std::max(widest, ((heads + 2 * kvh) * hd + heads * hd) / tp);  // qkv output + attention output
    }
    return tokens * dt * (2 * h + widest);
}

}  // namespace

int64_t estimate_vllm_activation_bytes(const ModelSpec& m, int64_t tokens, int64_t seqs, int64_t tp) {
    // Sampler of the dummy run: logits of every request row over the full vocabulary
    // (gathered on every rank), then about four fp32 copies (logits, probabilities,
    // the exponential noise of random sampling, logprobs).
    const int64_t sampler = seqs * m.dims.vocab_size * (model_dtype_bytes(m) + 16);
    return forward_bytes(m, tokens, tp) + sampler;
}

int64_t estimate_transformers_activation_bytes(const ModelSpec& m, int64_t batch, int64_t tokens) {
    // generate() keeps only the last position's logits, upcast to fp32, then softmax.
    return forward_bytes(m, batch * tokens, 1) + batch * m.dims.vocab_size * (model_dtype_bytes(m) + 8);
}

int64_t estimate_vllm_overhead_bytes(int64_t tp, int64_t pp) { return tp * pp > 1 ? 1 * GiB : 512 * MiB; }

int64_t vllm_cudagraph_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens) {
    // CompilationConfig: max = min(max_num_seqs * 2, 512), at most max_num_batched_tokens;
    // sizes [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16).
    int64_t max = std::min<int64_t>(max_num_seqs * 2, 512);
    if (max_num_batched_tokens > 0) max = std::min(max, max_num_batched_tokens);
    int64_t n = 0;
    for (int64_t s : {1, 2, 4})
        if (s <= max) ++n;
    if (max >= 8) n += (std::min<int64_t>(max, 255) - 8) / 8 + 1;
    if (max >= 256) n += (max - 256) / 16 + 1;
    return n;
}

int64_t estimate_vllm_cudagraph_bytes(const ModelSpec& m, int64_t pp, int64_t max_num_seqs, int64_t max_num_batched_tokens) {
    const int64_t layers = static_cast<int64_t>(m.layers.size());
    if (pp < 1) pp = 1;
    // Half a MiB per captured size per decoder layer: fits vLLM's own numbers for a
    // 64-layer model with 51 sizes (1.59 GiB) and with 3 sizes (0.09 GiB actual, 0.13 estimated).
    return vllm_cudagraph_capture_sizes(max_num_seqs, max_num_batched_tokens) * cdiv(layers, pp) * 512 * KiB;
}

int64_t vllm_rotary_cache_bytes(const ModelSpec& m) {
    int64_t rot = 0;
    for (const Layer& l : m.layers) {
        if (l.kind == LayerKind::Mla) { rot = l.qk_rope_head_dim; break; }
        if (l.kind == LayerKind::Full || l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked) {
            rot = l.k_head_dim;
            break;
        }
    }
    if (rot <= 0 || m.max_position_embeddings <= 0) return 0;
    return m.max_position_embeddings * rot * model_dtype_bytes(m);
}

int64_t estimate_llamacpp_compute_bytes(const ModelSpec& m, int64_t n_ubatch) {
    const WeightDims& d = m.dims;
    int64_t dense_i = d.intermediate_size;
    for (int64_t w : d.layer_intermediate) dense_i = std::max(dense_i, w);
    const int64_t moe_i = d.moe_intermediate_size > 0 ? d.moe_intermediate_size : dense_i;
    const int64_t k = d.experts_per_token > 0 ? d.experts_per_token : 1;
    int64_t widest = std::max(d.vocab_size, 2 * dense_i);
    if (d.num_experts > 0) widest = std::max(widest, 2 * k * moe_i);
    // ggml's graph allocator reuses buffers: the peak is the widest f32 tensor of one
    // ubatch (logits or the MLP intermediate) plus a few hidden-size tensors.
    return n_ubatch * 4 * (widest + 2 * d.hidden_size);
}

Result<BudgetResult> compute_budget(const ModelSpec& m, const BudgetInputs& in) {
    BudgetResult r;
    r.engine = in.engine;
    r.model = m.name;
    const bool vllm = in.engine == BudgetEngine::Vllm;
    const bool hf = in.engine == BudgetEngine::Transformers;

    // Hardware
    if (in.gpu_memory_bytes < 0)
        return make_error("bad_value", "GPU memory must be a positive size, got " + std::to_string(in.gpu_memory_bytes) + " bytes");
    if (in.gpu_count < 1 || in.gpu_count > 4096)
        return make_error("bad_value", "--gpu-count must be between 1 and 4096, got " + std::to_string(in.gpu_count));
    const Gpu* gpu = nullptr;
    if (!in.gpu.empty()) {
        gpu = find_gpu(in.gpu);
        if (!gpu) {
            std::string ids;
            for (const Gpu& g : gpu_catalog()) ids += (ids.empty() ? "" : ", ") + g.id;
            return make_error("unknown_gpu", "unknown GPU '" + in.gpu + "' (known: " + ids + ")");
        }
    }
    if (in.gpu_memory_bytes > 0) {
        r.gpu_total_bytes = in.gpu_memory_bytes;
        r.gpu_name = gpu ? gpu->name + " (memory overridden)" : "custom";
        if (gpu) r.gpu_id = gpu->id;
    } else if (gpu) {
        r.gpu_total_bytes = gpu->total_bytes();
        r.gpu_id = gpu->id;
        r.gpu_name = gpu->name;
        if (gpu->reported_bytes > 0)
            r.notes.push_back("GPU total is what PyTorch reports on a " + gpu->name + " (" + format_bytes(gpu->reported_bytes) +
                              ", marketed " + format_bytes(gpu->memory_bytes) + ")");
        if (gpu->unified_memory && gpu->gpu_usable_fraction < 1.0)
            r.notes.push_back("unified memory: the GPU may use about " + fmt_fraction(gpu->gpu_usable_fraction * 100) +
                              "% of RAM by default (raise with sysctl iogpu.wired_limit_mb)");
    } else {
        return make_error("bad_value", "no GPU given: pass --gpu NAME or --gpu-memory SIZE");
    }
    if (r.gpu_total_bytes <= 0) return make_error("bad_value", "GPU memory must be a positive size");
    if (vllm && gpu && gpu->vendor == "apple")
        r.notes.push_back("vLLM has no Apple GPU backend; --engine llamacpp sizes what runs on " + gpu->name);
    r.gpu_count = in.gpu_count;

    double util = in.gpu_memory_utilization;
    if (util == 0) util = vllm ? 0.9 : 1.0;
    if (!(util > 0.0 && util <= 1.0))
        return make_error("bad_value", "gpu_memory_utilization must be in (0, 1], got " + fmt_fraction(in.gpu_memory_utilization));
    r.gpu_memory_utilization = util;
    for (int64_t v : {in.activation_bytes, in.overhead_bytes, in.cudagraph_bytes})
        if (v < -1) return make_error("bad_value", "memory overrides must not be negative, got " + std::to_string(v) + " bytes");
    if (in.max_model_len < 0 || in.max_num_seqs < 0 || in.max_num_batched_tokens < 0 || in.params < 0 ||
        in.block_size < 0 || in.n_ubatch < 0)
        return make_error("bad_value", "counts must not be negative");
    // Bounds far above any real deployment keep every byte sum below 2^63.
    constexpr int64_t kMaxBytes = int64_t(1) << 50;  // 1 PiB per GPU
    for (int64_t v : {in.gpu_memory_bytes, in.activation_bytes, in.overhead_bytes, in.cudagraph_bytes})
        if (v > kMaxBytes) return make_error("bad_value", "memory sizes above 1 PiB per GPU are not plausible, got " + std::to_string(v) + " bytes");
    if (in.params > (int64_t(1) << 50))
        return make_error("bad_value", "--params " + std::to_string(in.params) + " is not a plausible parameter count");
    if (in.max_num_seqs > (int64_t(1) << 31) || in.max_num_batched_tokens > (int64_t(1) << 31) || in.n_ubatch > (int64_t(1) << 31))
        return make_error("bad_value", "--max-num-seqs, --max-num-batched-tokens and -ub must be at most 2^31");
    r.model_max_len = m.max_position_embeddings;

    // Parallelism
    int64_t pp = in.pipeline_parallel_size < 1 ? 1 : in.pipeline_parallel_size;
    int64_t tp = in.tensor_parallel_size > 0 ? in.tensor_parallel_size : std::max<int64_t>(1, in.gpu_count / pp);
    if (!vllm) tp = pp = 1;  // llama.cpp (-sm layer) and transformers (device_map="auto") split layers across devices
    if (vllm && tp * pp > in.gpu_count)
        return make_error("bad_value", "tensor_parallel_size x pipeline_parallel_size = " + std::to_string(tp * pp) +
                                           " exceeds --gpu-count " + std::to_string(in.gpu_count));
    if (vllm && tp * pp < in.gpu_count)
        r.notes.push_back(std::to_string(in.gpu_count - tp * pp) + " GPU(s) unused by one engine (run more replicas with --data-parallel-size)");
    r.tp = tp;
    r.pp = pp;

    // Weights
    std::string wname = in.weights.empty() ? "auto" : in.weights;
    if (!vllm && !hf && lower(wname) == "auto") {
        wname = "Q4_K_M";
        r.notes.push_back("llama.cpp: weights default to a Q4_K_M GGUF (pass --weights to choose)");
    }
    auto fmt = weight_format(wname, m);
    if (!fmt) return fmt.error();
    if (hf && fmt->gguf)
        return make_error("bad_value", "transformers loads safetensors checkpoints: GGUF formats (" + fmt->name + ") are for --engine llamacpp");
    if (!vllm && !hf && !fmt->gguf && fmt->kind != WeightKind::Float)
        return make_error("bad_value", "llama.cpp loads GGUF files: --weights must be one of Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q4_0, IQ4_XS, bf16, fp16 (got '" + wname + "')");
    if (vllm && fmt->gguf) r.notes.push_back("vLLM's GGUF support is experimental; llama.cpp is the usual engine for " + fmt->name);
    auto wb = weight_bytes(m, fmt.value(), in.params, tp, pp);
    if (!wb) return wb.error();
    r.weights = std::move(wb.value());
    for (const Message& n : r.weights.notes) r.notes.push_back(render_english(n));

    const std::string model_dtype = m.dtype.empty() ? "bfloat16" : m.dtype;
    int64_t kv_per_token_gpu = 0;  // for the decode bound

    if (vllm) {
        const bool a100 = gpu && gpu->id.rfind("a100", 0) == 0;
        r.max_num_batched_tokens = in.max_num_batched_tokens > 0 ? in.max_num_batched_tokens
                                                                 : vllm_default_max_num_batched_tokens(r.gpu_total_bytes, a100);
        r.max_num_seqs = in.max_num_seqs > 0 ? in.max_num_seqs : vllm_default_max_num_seqs(r.gpu_total_bytes, a100);
        r.requested_bytes = static_cast<int64_t>(std::floor(double(r.gpu_total_bytes) * util));
        const int64_t rotary = vllm_rotary_cache_bytes(m);
        r.activation_estimated = in.activation_bytes < 0;
        r.overhead_estimated = in.overhead_bytes < 0;
        r.cudagraph_estimated = in.cudagraph_bytes < 0 && !in.enforce_eager;
        r.activation_bytes = in.activation_bytes >= 0
                                 ? in.activation_bytes
                                 : estimate_vllm_activation_bytes(m, r.max_num_batched_tokens,
                                                                  std::min(r.max_num_seqs, r.max_num_batched_tokens), tp);
        r.overhead_bytes = in.overhead_bytes >= 0 ? in.overhead_bytes : estimate_vllm_overhead_bytes(tp, pp);
        r.cudagraph_bytes = in.enforce_eager                ? 0
                            : in.cudagraph_bytes >= 0       ? in.cudagraph_bytes
                                                            : estimate_vllm_cudagraph_bytes(m, pp, r.max_num_seqs, r.max_num_batched_tokens);
        // Every (tp, pp) rank computes its own pool; vLLM takes the fewest blocks over
        // ranks. Ranks of one stage are alike, so the pool is the smallest stage pool.
        int64_t pool = INT64_MAX, heaviest = 0;
        for (int64_t s : r.weights.stage_bytes) {
            const int64_t w = s + rotary;
            heaviest = std::max(heaviest, w);
            pool = std::min(pool, r.requested_bytes - w - r.activation_bytes - r.overhead_bytes - r.cudagraph_bytes);
        }
        r.weights_per_gpu_bytes = heaviest;
        r.kv_pool_bytes = pool;

        VllmOptions o;
        o.kv_cache_dtype = in.kv_cache_dtype.empty() ? "auto" : in.kv_cache_dtype;
        o.tensor_parallel_size = tp;
        o.pipeline_parallel_size = pp;
        o.max_model_len = in.max_model_len;
        o.max_num_batched_tokens = r.max_num_batched_tokens;
        o.block_size = in.block_size;
        auto cap = vllm_capacity(m, o, pool);
        if (!cap) return cap.error();
        r.capacity = std::move(cap.value());
        const VllmLayout& L = r.capacity.layout;
        r.max_model_len = L.max_model_len;
        r.kv_cache_dtype = L.kv_cache_dtype;
        r.fits = r.capacity.fits && pool > 0;
        r.error_text = r.capacity.error_text;
        r.vllm_concurrency = r.capacity.max_concurrency;

        // Blocks the pool holds, whether or not one full request fits.
        int64_t nb = 0;
        if (pool > 0 && !L.groups.empty()) {
            nb = INT64_MAX;
            for (int64_t per : L.stage_bytes_per_block)
                if (per > 0) nb = std::min(nb, pool / per);
            if (nb == INT64_MAX) nb = 0;
        }
        const int64_t usable = nb > 0 ? nb - 1 : 0;  // one block is the null block
        r.context_seqs = in.max_num_seqs > 0 ? in.max_num_seqs : 1;
        const int64_t limit = m.max_position_embeddings > 0 ? m.max_position_embeddings : (int64_t(1) << 24);
        auto fits_ctx = [&](int64_t len) {
            const int64_t b = vllm_request_blocks(L, len);
            return b > 0 && b <= usable / r.context_seqs;
        };
        if (L.groups.empty()) {
            r.max_context = limit;
            r.max_context_capped = true;
        } else if (usable > 0 && fits_ctx(1)) {
            if (fits_ctx(limit)) {
                r.max_context = limit;
                r.max_context_capped = true;
            } else {
                r.max_context = largest_true(1, limit, [&](int64_t x) { return fits_ctx(x); });
            }
        }
        const int64_t per_req = L.groups.empty() ? 0 : vllm_request_blocks(L, r.max_model_len);
        r.max_concurrency = per_req > 0 ? usable / per_req : 0;
        r.all_seqs_fit = per_req > 0 && r.max_num_seqs <= r.max_concurrency;

        // Command line
        int64_t mml_cmd = r.fits ? r.max_model_len : (r.capacity.estimated_max_model_len > 0 ? r.capacity.estimated_max_model_len : 0);
        std::string cmd = "vllm serve " + m.name;
        if (mml_cmd > 0) cmd += " --max-model-len " + std::to_string(mml_cmd);
        cmd += " --gpu-memory-utilization " + fmt_fraction(util);
        cmd += " --max-num-seqs " + std::to_string(r.max_num_seqs);
        cmd += " --kv-cache-dtype " + o.kv_cache_dtype;
        cmd += " --tensor-parallel-size " + std::to_string(tp);
        if (pp > 1) cmd += " --pipeline-parallel-size " + std::to_string(pp);
        if (in.max_num_batched_tokens > 0) cmd += " --max-num-batched-tokens " + std::to_string(in.max_num_batched_tokens);
        if (in.enforce_eager) cmd += " --enforce-eager";
        const std::string qm = lower(m.quant.method);
        if (fmt->kind == WeightKind::Fp8 && qm != "fp8" && qm != "fbgemm_fp8") cmd += " --quantization fp8";
        if ((fmt->kind == WeightKind::IntGroup || fmt->kind == WeightKind::Int8) && qm.empty())
            r.notes.push_back(fmt->name + " weights need a pre-quantized checkpoint: point vllm serve at one");
        r.vllm_command = cmd;
        if (!r.fits && mml_cmd <= 0)
            r.notes.push_back("no context length fits: free memory (more GPUs, a smaller weights format, lower overheads)");

        auto kt = vllm_kv_type(o.kv_cache_dtype, model_dtype);
        if (kt) {
            auto kvb = kv_bytes_at(m, uniform_kv_dtypes(m, kt.value()), std::max<int64_t>(1, r.max_model_len), 1);
            if (kvb) kv_per_token_gpu = kvb.value() / tp;
        }
    } else if (hf) {
        // transformers generate(): weights + DynamicCache + prefill activations + runtime, no paging.
        const int64_t total = r.gpu_total_bytes * in.gpu_count;
        r.requested_bytes = static_cast<int64_t>(std::floor(double(total) * util));
        r.max_num_seqs = in.max_num_seqs > 0 ? in.max_num_seqs : 1;
        if (m.max_position_embeddings <= 0 && in.max_model_len <= 0)
            return make_error("missing_field", "model " + m.name + " has no max_position_embeddings; pass --max-model-len");
        const int64_t limit = m.max_position_embeddings > 0 ? m.max_position_embeddings : in.max_model_len;
        const int64_t ctx = in.max_model_len > 0 ? in.max_model_len : limit;
        r.max_model_len = ctx;
        r.kv_cache_dtype = model_dtype;
        r.cudagraph_estimated = false;
        r.overhead_estimated = in.overhead_bytes < 0;
        r.activation_estimated = in.activation_bytes < 0;
        r.overhead_bytes = (in.overhead_bytes >= 0 ? in.overhead_bytes : 512 * MiB) * in.gpu_count;
        r.weights_per_gpu_bytes = cdiv(r.weights.bytes + r.weights.vision_bytes, in.gpu_count);
        auto tc = transformers_cache(m);
        if (!tc) return tc.error();
        const int64_t cached_layers = std::max<int64_t>(1, tc->full_layers + tc->windowed_layers + tc->state_layers);
        auto act_at = [&](int64_t batch, int64_t len) {
            return in.activation_bytes >= 0 ? in.activation_bytes : estimate_transformers_activation_bytes(m, batch, len);
        };
        // Bytes beyond the weights for `batch` sequences of `len` tokens; -1 when not computable.
        auto need = [&](int64_t batch, int64_t len) -> int64_t {
            auto c = transformers_cache_bytes(m, len, batch);
            if (!c) return -1;
            return c.value() + c.value() / cached_layers + act_at(batch, len) + r.overhead_bytes;
        };
        const int64_t room = r.requested_bytes - r.weights.bytes - r.weights.vision_bytes;
        auto c = transformers_cache_bytes(m, ctx, r.max_num_seqs);
        if (!c) return c.error();
        r.cache_bytes = c.value();
        r.cache_transient_bytes = c.value() / cached_layers;
        r.activation_bytes = act_at(r.max_num_seqs, ctx);
        r.kv_pool_bytes = room - r.activation_bytes - r.overhead_bytes;
        r.llama_total_bytes = r.weights.bytes + r.weights.vision_bytes + r.cache_bytes + r.cache_transient_bytes +
                              r.activation_bytes + r.overhead_bytes;
        r.fits = r.llama_total_bytes <= r.requested_bytes;
        r.all_seqs_fit = r.fits;
        if (!r.fits)
            r.error_text = "transformers would need " + format_bytes(r.llama_total_bytes) + " (weights " +
                           format_bytes(r.weights.bytes + r.weights.vision_bytes) + ", cache " + format_bytes(r.cache_bytes) +
                           " + " + format_bytes(r.cache_transient_bytes) + " while it grows, prefill " +
                           format_bytes(r.activation_bytes) + ", runtime " + format_bytes(r.overhead_bytes) + ") but has " +
                           format_bytes(r.requested_bytes);
        auto fits_at = [&](int64_t batch, int64_t len) {
            const int64_t n = need(batch, len);
            return n >= 0 && n <= room;
        };
        r.context_seqs = r.max_num_seqs;
        if (room > 0 && fits_at(r.context_seqs, 1)) {
            if (fits_at(r.context_seqs, limit)) {
                r.max_context = limit;
                r.max_context_capped = true;
            } else {
                r.max_context = largest_true(1, limit, [&](int64_t x) { return fits_at(r.context_seqs, x); });
            }
        }
        if (room > 0 && fits_at(1, ctx)) {
            int64_t hi = 1;
            while (hi < (int64_t(1) << 20) && fits_at(hi * 2, ctx)) hi *= 2;
            hi = std::min<int64_t>(hi * 2, int64_t(1) << 20);
            r.max_concurrency = largest_true(1, hi, [&](int64_t x) { return fits_at(x, ctx); });
        }
        std::string dt = lower(model_dtype) == "float32" ? "float32" : lower(model_dtype) == "float16" ? "float16" : "bfloat16";
        r.transformers_snippet = "AutoModelForCausalLM.from_pretrained(\"" + m.name + "\", torch_dtype=torch." + dt +
                                 ", device_map=\"auto\"); model.generate(**batch_of_" + std::to_string(r.max_num_seqs) +
                                 ", max_length=" + std::to_string(r.fits ? ctx : r.max_context) + ")";
        if (fmt->kind != WeightKind::Float && m.quant.method.empty())
            r.notes.push_back("transformers: " + fmt->name + " weights need a pre-quantized checkpoint");
        r.notes.push_back("transformers: SDPA attention assumed (eager attention adds batch x heads x tokens^2 scores)");
        kv_per_token_gpu = tc->bytes_per_token * ctx + tc->state_bytes;
    } else {
        // llama.cpp: weights + KV cache + compute buffer + runtime overhead, layers spread over the GPUs.
        const int64_t total = r.gpu_total_bytes * in.gpu_count;
        r.requested_bytes = static_cast<int64_t>(std::floor(double(total) * util));
        r.max_num_seqs = in.max_num_seqs > 0 ? in.max_num_seqs : 1;
        const int64_t ubatch = in.n_ubatch > 0 ? in.n_ubatch : 512;
        r.activation_estimated = in.activation_bytes < 0;
        r.overhead_estimated = in.overhead_bytes < 0;
        r.cudagraph_estimated = false;
        r.compute_buffer_bytes = in.activation_bytes >= 0 ? in.activation_bytes : estimate_llamacpp_compute_bytes(m, ubatch);
        r.activation_bytes = r.compute_buffer_bytes;
        r.overhead_bytes = (in.overhead_bytes >= 0 ? in.overhead_bytes : 512 * MiB) * in.gpu_count;
        r.weights_per_gpu_bytes = cdiv(r.weights.bytes, in.gpu_count);
        r.kv_pool_bytes = r.requested_bytes - r.weights.bytes - r.compute_buffer_bytes - r.overhead_bytes;
        r.kv_cache_dtype = in.kv_cache_dtype.empty() ? "f16" : in.kv_cache_dtype;
        r.kv_cache_dtype_v = in.kv_cache_dtype_v.empty() ? r.kv_cache_dtype : in.kv_cache_dtype_v;
        auto kt = llamacpp_kv_type(r.kv_cache_dtype);
        if (!kt) return kt.error();
        auto vt = llamacpp_kv_type(r.kv_cache_dtype_v);
        if (!vt) return vt.error();

        LlamaOptions o;
        o.n_seq_max = r.max_num_seqs;
        o.kv_unified = false;
        o.type_k = r.kv_cache_dtype;
        o.type_v = r.kv_cache_dtype_v;
        o.n_ubatch = ubatch;
        if (m.max_position_embeddings <= 0 && in.max_model_len <= 0)
            return make_error("missing_field", "model " + m.name + " has no max_position_embeddings; pass --max-model-len");
        const int64_t limit = m.max_position_embeddings > 0 ? m.max_position_embeddings : in.max_model_len;
        auto kv_at = [&](int64_t ctx, int64_t seqs) -> Result<LlamaLayout> {
            LlamaOptions p = o;
            p.n_seq_max = seqs;
            p.n_ctx = ctx * seqs;
            return llamacpp_layout(m, p);
        };
        const int64_t ctx = in.max_model_len > 0 ? in.max_model_len : limit;
        r.max_model_len = ctx;
        auto lay = kv_at(ctx, r.max_num_seqs);
        if (!lay) return lay.error();
        r.llama = std::move(lay.value());
        r.llama_total_bytes = r.weights.bytes + r.llama.total_bytes + r.compute_buffer_bytes + r.overhead_bytes;
        r.fits = r.llama_total_bytes <= r.requested_bytes;
        r.all_seqs_fit = r.fits;
        if (!r.fits) {
            r.error_text = "llama.cpp would need " + format_bytes(r.llama_total_bytes) + " (weights " + format_bytes(r.weights.bytes) +
                           ", KV " + format_bytes(r.llama.total_bytes) + ", compute " + format_bytes(r.compute_buffer_bytes) +
                           ", runtime " + format_bytes(r.overhead_bytes) + ") but has " + format_bytes(r.requested_bytes);
        }
        auto kv_fits = [&](int64_t c, int64_t seqs) {
            auto l = kv_at(c, seqs);
            return l && l->total_bytes <= r.kv_pool_bytes;
        };
        r.context_seqs = r.max_num_seqs;
        if (r.kv_pool_bytes > 0 && kv_fits(256, r.context_seqs)) {
            if (kv_fits(limit, r.context_seqs)) {
                r.max_context = limit;
                r.max_context_capped = true;
            } else {
                // llama.cpp pads the context to 256 cells
                r.max_context =
                    largest_true(1, limit / 256, [&](int64_t x) { return kv_fits(x * 256, r.context_seqs); }) * 256;
            }
        }
        if (r.kv_pool_bytes > 0 && kv_fits(ctx, 1)) {
            int64_t hi = 1;
            while (hi < 65536 && kv_fits(ctx, hi * 2)) hi *= 2;
            hi = std::min<int64_t>(hi * 2, 65536);
            r.max_concurrency = largest_true(1, hi, [&](int64_t x) { return kv_fits(ctx, x); });
        }
        std::string cmd = "llama-server -m " + gguf_file(m, fmt->name);
        const int64_t ctx_cmd = r.fits ? ctx : r.max_context;
        cmd += " -c " + std::to_string(std::max<int64_t>(ctx_cmd, 0) * r.max_num_seqs);
        cmd += " -np " + std::to_string(r.max_num_seqs);
        cmd += " -ctk " + r.kv_cache_dtype + " -ctv " + r.kv_cache_dtype_v;
        if (vt->block_values > 1) cmd += " -fa on";  // a quantized V cache needs flash attention
        cmd += " -ngl 99";
        r.llama_command = cmd;
        if (m.multimodal) r.notes.push_back("llama.cpp: the vision tower lives in a separate --mmproj file, not counted");
        KvDtypes kvd = uniform_kv_dtypes(m, kt.value());
        kvd.v = vt.value();
        kvd.conv_state_bytes = kvd.ssm_state_bytes = 4;  // llama.cpp's recurrent state is f32
        auto kvb = kv_bytes_at(m, kvd, std::max<int64_t>(1, ctx), 1);
        if (kvb) kv_per_token_gpu = kvb.value();
    }

    // Decode bound: every generated token reads the active weights once per step (shared
    // by the batch) and each sequence's own KV cache.
    const double bw = gpu ? gpu->bandwidth_bytes_per_s : 0.0;
    r.decode.context = r.max_model_len;
    r.decode.weight_bytes_per_token = vllm ? cdiv(r.weights.active_bytes, tp) : r.weights.active_bytes;
    r.decode.kv_bytes_per_token = kv_per_token_gpu;
    r.decode.batch = std::max<int64_t>(1, std::min(r.max_concurrency, r.max_num_seqs));
    if (bw > 0) {
        const double w = double(r.decode.weight_bytes_per_token), kv = double(r.decode.kv_bytes_per_token);
        r.decode.tokens_per_s_single = bw / (w + kv);
        r.decode.tokens_per_s_batch = double(r.decode.batch) * bw / (w + double(r.decode.batch) * kv);
    }
    return Result<BudgetResult>(std::move(r));
}

const std::vector<std::string>& budget_log_lines(const BudgetResult& r) {
    static const std::vector<std::string> none;
    switch (r.engine) {
        case BudgetEngine::Vllm: return r.capacity.log_lines;
        case BudgetEngine::LlamaCpp: return r.llama.log_lines;
        case BudgetEngine::Transformers: return none;
    }
    return none;
}

const std::string& budget_command(const BudgetResult& r) {
    switch (r.engine) {
        case BudgetEngine::Vllm: return r.vllm_command;
        case BudgetEngine::LlamaCpp: return r.llama_command;
        case BudgetEngine::Transformers: return r.transformers_snippet;
    }
    return r.vllm_command;
}

}  // namespace kvb
