#include "budget/budget.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <optional>

#include "base/arith.h"
#include "base/text.h"
#include "base/units.h"
#include "budget/budget_steps.h"
#include "engines/engine_version.h"
#include "engines/llamacpp.h"
#include "model/dtype.h"
#include "model/rope.h"

namespace kvb {

using namespace budget_steps;

Result<BudgetEngine> parse_budget_engine(const std::string& s) {
    if (s == "vllm") return BudgetEngine::Vllm;
    if (s == "llamacpp" || s == "llama.cpp" || s == "llama-cpp") return BudgetEngine::LlamaCpp;
    if (s == "transformers" || s == "hf") return BudgetEngine::Transformers;
    return make_error("bad_value", note("bad_engine", {{"value", s}}));
}

const char* to_string(BudgetEngine e) {
    switch (e) {
        case BudgetEngine::Vllm: return "vllm";
        case BudgetEngine::LlamaCpp: return "llamacpp";
        case BudgetEngine::Transformers: return "transformers";
    }
    return "?";
}

namespace budget_steps {

std::string fraction_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

void fill_per_gpu(BudgetResult& r, int64_t kv_bytes) {
    fill_per_gpu(r, kv_bytes, r.weights_per_gpu_bytes, r.activation_bytes, r.overhead_bytes + r.cudagraph_bytes);
}

void fill_per_gpu(BudgetResult& r, int64_t kv_bytes, int64_t weights, int64_t activation, int64_t overhead) {
    PerGpu& p = r.per_gpu;
    p.capacity_bytes = r.gpu_total_bytes;
    p.usable_bytes = r.requested_bytes;
    p.weights_bytes = weights;
    p.kv_bytes = kv_bytes;
    p.activation_bytes = activation;
    p.overhead_bytes = overhead;
    p.total_bytes = sat_add(sat_add(p.weights_bytes, p.kv_bytes), sat_add(p.activation_bytes, p.overhead_bytes));
    p.free_bytes = p.total_bytes == INT64_MAX ? INT64_MIN : p.capacity_bytes - p.total_bytes;
    const int64_t limit = p.usable_bytes > 0 ? p.usable_bytes : p.capacity_bytes;
    p.over_usable_bytes = p.total_bytes > limit ? sat_sub(p.total_bytes, limit) : 0;
}

}  // namespace budget_steps

// Far above any real deployment, and low enough that every byte sum stays below 2^63.
const std::vector<InputLimit>& budget_input_limits() {
    constexpr int64_t kPiB = int64_t{1} << 50;
    constexpr int64_t kI31 = (int64_t{1} << 31) - 1;
    static const std::vector<InputLimit> t = {
        {"context", "--max-model-len", 0, int64_t{1} << 30},
        {"seqs", "--seqs", 1, int64_t{1} << 20},
        {"gpu_count", "--gpu-count", 1, 4096},
        {"gpu_memory_bytes", "--gpu-memory", 0, kPiB},
        {"params", "--params", 0, kPiB},
        {"max_num_seqs", "--max-num-seqs", 0, kI31},
        {"tensor_parallel_size", "--tensor-parallel-size", 0, 4096},
        {"pipeline_parallel_size", "--pipeline-parallel-size", 1, 4096},
        {"max_num_batched_tokens", "--max-num-batched-tokens", 0, kI31},
        {"block_size", "--block-size", 0, 4096},
        {"activation_bytes", "--activation-memory", -1, kPiB},
        {"overhead_bytes", "--overhead-memory", -1, kPiB},
        {"cudagraph_bytes", "--cudagraph-memory", -1, kPiB},
        {"n_ubatch", "-ub", 1, kI31},
        {"n_gpu_layers", "--ngl", -1, kI31},
        {"ram_bytes", "--ram", 0, kPiB},
        {"wired_limit_mb", "--wired-limit-mb", 0, kI31},
        {"fit_target_mb", "--fit-target", 0, kI31},
        {"fit_ctx", "--fit-ctx", 1, int64_t{1} << 30},
        {"spec_draft_n_max", "--spec-draft-n-max", 0, 1024},
    };
    return t;
}

namespace {

int64_t field_value(const BudgetInputs& in, const std::string& name) {
    if (name == "context") return in.context;
    if (name == "seqs") return in.seqs;
    if (name == "spec_draft_n_max") return in.spec_draft_n_max;
    if (name == "gpu_count") return in.gpu_count;
    if (name == "gpu_memory_bytes") return in.gpu_memory_bytes;
    if (name == "params") return in.params;
    if (name == "max_num_seqs") return in.max_num_seqs;
    if (name == "tensor_parallel_size") return in.tensor_parallel_size;
    if (name == "pipeline_parallel_size") return in.pipeline_parallel_size;
    if (name == "max_num_batched_tokens") return in.max_num_batched_tokens;
    if (name == "block_size") return in.block_size;
    if (name == "activation_bytes") return in.activation_bytes;
    if (name == "overhead_bytes") return in.overhead_bytes;
    if (name == "cudagraph_bytes") return in.cudagraph_bytes;
    if (name == "n_ubatch") return in.n_ubatch;
    if (name == "n_gpu_layers") return in.n_gpu_layers;
    if (name == "ram_bytes") return in.ram_bytes;
    if (name == "wired_limit_mb") return in.wired_limit_mb;
    if (name == "fit_target_mb") return in.fit_target_mb;
    if (name == "fit_ctx") return in.fit_ctx;
    return 0;
}

}  // namespace

Result<bool> validate(const BudgetInputs& in) {
    for (const InputLimit& l : budget_input_limits()) {
        const int64_t v = field_value(in, l.name);
        if (v < l.min || v > l.max)
            return make_error("bad_value", note("input_out_of_range", {{"field", l.name},
                                                                       {"flag", l.flag},
                                                                       {"min", with_commas(l.min)},
                                                                       {"max", with_commas(l.max)},
                                                                       {"value", with_commas(v)}}));
    }
    if (!(in.gpu_memory_utilization == 0 || (in.gpu_memory_utilization > 0.0 && in.gpu_memory_utilization <= 1.0)))
        return make_error("bad_value", note("bad_utilization", {{"value", fraction_text(in.gpu_memory_utilization)}}));
    if (in.gpu.empty() && in.gpu_memory_bytes <= 0 && in.gpu_memory_each.empty())
        return make_error("bad_value", note("no_gpu"));
    if (!in.gpu_memory_each.empty()) {
        if (static_cast<int64_t>(in.gpu_memory_each.size()) != in.gpu_count)
            return make_error("bad_value",
                              note("gpu_memory_list_count", {{"n", std::to_string(in.gpu_memory_each.size())},
                                                             {"count", std::to_string(in.gpu_count)}}));
        for (int64_t b : in.gpu_memory_each)
            if (b <= 0 || b > (int64_t{1} << 50))
                return make_error("bad_value", note("input_out_of_range", {{"field", "gpu_memory_each"},
                                                                           {"flag", "--gpu-memory"},
                                                                           {"min", "1"},
                                                                           {"max", with_commas(int64_t{1} << 50)},
                                                                           {"value", with_commas(b)}}));
    }
    // Up to 100 TB/s: past any memory system built; NaN fails both comparisons.
    if (!(in.ram_bandwidth_bytes_per_s >= 0 && in.ram_bandwidth_bytes_per_s <= 1e14))
        return make_error("bad_value",
                          note("bad_ram_bandwidth", {{"value", py_float_text(in.ram_bandwidth_bytes_per_s)}}));
    if (!in.hf_ref.empty()) {
        // org/repo[:QUANT] as llama-server -hf takes it; it ends up in a shell command line.
        bool ok = in.hf_ref.size() <= 200 && std::count(in.hf_ref.begin(), in.hf_ref.end(), '/') == 1 &&
                  std::count(in.hf_ref.begin(), in.hf_ref.end(), ':') <= 1 && in.hf_ref.front() != '/' &&
                  in.hf_ref.front() != '-';
        for (char ch : in.hf_ref)
            ok = ok && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '/' || ch == ':' || ch == '-' ||
                        ch == '_' || ch == '.');
        if (!ok) return make_error("bad_value", note("bad_hf_ref", {{"value", in.hf_ref}}));
    }
    if (!in.engine_version.empty()) {
        if (in.engine == BudgetEngine::Transformers)
            return make_error("bad_value", note("engine_version_transformers", {{"value", in.engine_version}}));
        auto ev = parse_engine_version(in.engine_version, in.engine == BudgetEngine::Vllm ? "vllm" : "llamacpp");
        if (!ev) return ev.error();
    }
    // llama.cpp splits no expert within (-sm layer places whole layers) and transformers' device_map neither: the
    // flag is vLLM's alone.
    if (in.expert_parallel && in.engine != BudgetEngine::Vllm)
        return make_error("bad_value",
                          note("expert_parallel_not_vllm",
                               {{"engine", in.engine == BudgetEngine::LlamaCpp ? "llama.cpp" : "transformers"}}));
    if (in.engine == BudgetEngine::Vllm) {
        const int64_t pp = in.pipeline_parallel_size;
        const int64_t tp =
            in.tensor_parallel_size > 0 ? in.tensor_parallel_size : std::max<int64_t>(1, in.gpu_count / pp);
        if (tp * pp > in.gpu_count)
            return make_error("bad_value", note("parallel_exceeds_gpus", {{"tp", std::to_string(tp)},
                                                                          {"pp", std::to_string(pp)},
                                                                          {"needed", std::to_string(tp * pp)},
                                                                          {"gpus", std::to_string(in.gpu_count)}}));
    }
    return true;
}

namespace {

// The GPU: a catalog entry, or a memory size (with the catalog entry's name when both are given).
Result<const Gpu*> resolve_hardware(const BudgetInputs& in, BudgetResult& r) {
    const Gpu* gpu = nullptr;
    if (!in.gpu.empty()) {
        gpu = find_gpu(in.gpu);
        if (!gpu) {
            std::string ids;
            for (const Gpu& g : gpu_catalog()) ids += (ids.empty() ? "" : ", ") + g.id;
            return make_error("unknown_gpu", note("unknown_gpu", {{"gpu", in.gpu}, {"known", ids}}));
        }
    }
    const bool mac = gpu && gpu->vendor == "apple";
    if (mac) {
        // A Mac's size is its RAM, given or from the catalog; the GPU gets what Metal lets it wire.
        int64_t ram = in.gpu_memory_bytes > 0 ? in.gpu_memory_bytes : gpu->memory_bytes;
        // Apple's "24GB" of RAM is 24 GiB: a size typed in decimal GB means the binary one.
        if (ram % 1000000000 == 0 && ram <= 1000000000000) ram = ram / 1000000000 * GiB;
        r.gpu_total_bytes = apple_wired_bytes(ram, in.wired_limit_mb);
        r.gpu_id = gpu->id;
        r.gpu_name = in.gpu_memory_bytes > 0 ? gpu->name + " (RAM " + format_bytes(ram) + ")" : gpu->name;
        r.mac_ram_bytes = ram;
        if (in.wired_limit_mb > 0)
            r.notes.push_back(note("mac_wired_set", {{"mb", std::to_string(in.wired_limit_mb)},
                                                     {"wired", format_bytes(r.gpu_total_bytes)},
                                                     {"ram", format_bytes(ram)}}));
        else
            r.notes.push_back(note("unified_memory", {{"pct", ram <= 32 * GiB ? "2/3" : "3/4"},
                                                      {"wired", format_bytes(r.gpu_total_bytes)},
                                                      {"ram", format_bytes(ram)}}));
    } else if (!in.gpu_memory_each.empty()) {
        r.gpu_total_bytes = *std::min_element(in.gpu_memory_each.begin(), in.gpu_memory_each.end());
        r.gpu_name = gpu ? gpu->name + " (memory overridden)" : "custom";
        if (gpu) r.gpu_id = gpu->id;
        std::string each;
        for (int64_t b : in.gpu_memory_each) each += (each.empty() ? "" : ", ") + format_bytes(b);
        r.notes.push_back(note("gpus_uneven", {{"each", each}, {"min", format_bytes(r.gpu_total_bytes)}}));
    } else if (in.gpu_memory_bytes > 0) {
        r.gpu_total_bytes = in.gpu_memory_bytes;
        r.gpu_name = gpu ? gpu->name + " (memory overridden)" : "custom";
        if (gpu) r.gpu_id = gpu->id;
    } else {
        r.gpu_total_bytes = gpu->total_bytes();
        r.gpu_id = gpu->id;
        r.gpu_name = gpu->name;
        if (gpu->reported_bytes > 0)
            r.notes.push_back(note("gpu_reported", {{"gpu", gpu->name},
                                                    {"reported", format_bytes(gpu->reported_bytes)},
                                                    {"marketed", std::to_string(gpu->memory_bytes / GiB) + " GB"}}));
    }
    if (in.wired_limit_mb > 0 && !mac) r.notes.push_back(note("wired_limit_not_mac"));
    if (in.engine == BudgetEngine::Vllm && gpu && gpu->vendor == "apple")
        r.notes.push_back(note("no_apple_vllm", {{"gpu", gpu->name}}));
    r.gpu_count = in.gpu_count;
    return gpu;
}

// vLLM shards by tensor and pipeline parallelism; llama.cpp (-sm layer) and transformers
// (device_map="auto") spread whole layers, so for them tp = pp = 1 and each GPU holds a share.
// Expert parallelism (vLLM's FusedMoEParallelConfig.make): with one data-parallel rank the EP group is the TP group,
// and it is used only when that has more than one rank; a model without routed experts builds no FusedMoE.
Result<ExpertParallel> resolve_parallelism(const ModelSpec& m, const BudgetInputs& in, const VllmRelease* rel,
                                           BudgetResult& r) {
    ExpertParallel ep;
    if (in.engine != BudgetEngine::Vllm) return ep;
    r.pp = in.pipeline_parallel_size;
    r.tp = in.tensor_parallel_size > 0 ? in.tensor_parallel_size : std::max<int64_t>(1, in.gpu_count / r.pp);
    if (r.tp * r.pp < in.gpu_count)
        r.notes.push_back(note("unused_gpus", {{"n", std::to_string(in.gpu_count - r.tp * r.pp)}}));
    if (!in.expert_parallel) return ep;
    if (rel && !rel->expert_parallel)
        return make_error("bad_value", note("vllm_ep_release", {{"version", rel->version}}));
    if (m.dims.num_experts <= 0) {
        r.notes.push_back(note("vllm_ep_dense", {{"model", m.name}}));
        return ep;
    }
    if (r.tp <= 1) {
        r.notes.push_back(note("vllm_ep_one_gpu"));
        return ep;
    }
    ep.size = r.tp;
    ep.remainder_last = rel && rel->ep_remainder_last;
    r.ep = ep.size;
    r.ep_local_experts = ep_local_experts(m.dims.num_experts, ep);
    return ep;
}

// The weights format each engine loads: llama.cpp a GGUF (Q4_K_M unless chosen; for an MXFP4
// checkpoint its MXFP4 GGUF), transformers a safetensors checkpoint, vLLM either.
Result<WeightFormat> resolve_weights(const ModelSpec& m, const BudgetInputs& in, const Gpu* gpu,
                                     LlamaSpecType llama_spec, const ExpertParallel& ep, BudgetResult& r) {
    const bool vllm = in.engine == BudgetEngine::Vllm, hf = in.engine == BudgetEngine::Transformers;
    std::string wname = in.weights.empty() ? "auto" : in.weights;
    // vLLM's dtype auto serves an unquantized checkpoint in the GPU's dtype, not always its own.
    const std::string served =
        vllm && lower(wname) == "auto" && m.quant.method.empty() ? budget_steps::vllm_auto_dtype(m, gpu) : "";
    const bool cast = !served.empty() && served != budget_steps::checkpoint_dtype(m);
    if (cast) wname = served;  // weight_format reads torch's dtype names too
    // A GGUF file is its own weights: llama.cpp loads exactly its tensors.
    const bool gguf_file = m.gguf && !vllm && !hf && lower(wname) == "auto";
    if (!vllm && !hf && lower(wname) == "auto") {
        // An MXFP4 checkpoint's GGUF is its MXFP4 one (ggml-org/gpt-oss-20b-GGUF's
        // gpt-oss-20b-mxfp4.gguf, which llama.cpp's gpt-oss guide runs): any other type changes
        // only the tenth of the weights outside the experts.
        const bool mxfp4 = lower(m.quant.method) == "mxfp4";
        wname = mxfp4 ? "mxfp4" : "Q4_K_M";
        if (!gguf_file) r.notes.push_back(note(mxfp4 ? "gguf_default_mxfp4" : "gguf_default"));
    }
    auto parsed = weight_format(wname, m, !vllm && !hf);
    if (!parsed) return parsed.error();
    WeightFormat fmt = parsed.value();
    if (cast) fmt.from = note("vllm_auto_cast", {{"dtype", served}, {"checkpoint", budget_steps::checkpoint_dtype(m)}});
    if (hf && fmt.gguf) return make_error("bad_value", note("transformers_gguf", {{"format", fmt.name}}));
    if (!vllm && !hf && !fmt.gguf && fmt.kind != WeightKind::Float)
        return make_error("bad_value", note("llamacpp_not_gguf", {{"format", wname}}));
    if (vllm && fmt.gguf) r.notes.push_back(note("vllm_gguf", {{"format", fmt.name}}));
    std::vector<int64_t> stage_layers;
    if (vllm && !in.pp_layer_partition.empty()) {
        auto parts = vllm_pp_parts(static_cast<int64_t>(m.layers.size()), r.pp, in.pp_layer_partition);
        if (!parts) return parts.error();
        stage_layers = std::move(parts.value());
    }
    auto wb = weight_bytes(m, fmt, in.params, r.tp, r.pp, in.params_from_hub, stage_layers, ep);
    if (!wb) return wb.error();
    r.weights = std::move(wb.value());
    // llama.cpp loads the text model's GGUF alone: the vision tower is a separate --mmproj file
    // the command does not pass (note mmproj), so none of it is in memory.
    if (!vllm && !hf) r.weights.vision_bytes = 0;
    if (gguf_file) {
        // Active bytes keep the counted share (routed experts are read per token, not all of them).
        const double active = r.weights.bytes > 0 ? double(r.weights.active_bytes) / double(r.weights.bytes) : 1.0;
        const int64_t unloaded = budget_steps::llamacpp_unloaded_nextn_bytes(m, llama_spec == LlamaSpecType::DraftMtp);
        const int64_t loaded = m.gguf->tensor_bytes - unloaded;
        r.weights.bytes = r.weights.per_gpu_bytes = loaded;
        r.weights.stage_bytes = {loaded};
        r.weights.params = m.gguf->params;
        r.weights.active_bytes = static_cast<int64_t>(double(loaded) * active);
        r.weights.bits_per_weight =
            m.gguf->params > 0 ? double(m.gguf->tensor_bytes) * 8.0 / double(m.gguf->params) : 0;
        r.weights.format.name = "gguf";
        r.weights.notes.clear();
        r.notes.push_back(note("gguf_file_weights", {{"bytes", format_bytes(m.gguf->tensor_bytes)},
                                                     {"params", with_commas(m.gguf->params)}}));
        if (unloaded > 0) r.notes.push_back(note("gguf_nextn_unloaded", {{"bytes", format_bytes(unloaded)}}));
    }
    for (const auto& n : r.weights.notes) r.notes.push_back(n);
    return fmt;
}

// Not fitting under macOS's default wired limit: the iogpu.wired_limit_mb that would hold
// this answer, while leaving macOS at least kMacKeepBytes of the RAM.
constexpr int64_t kMacKeepBytes = 4 * GiB;
void mac_wired_advice(BudgetResult& r) {
    const int64_t need = r.per_gpu.total_bytes;
    const int64_t mb = cdiv(need, MiB);
    if (need <= r.mac_ram_bytes - kMacKeepBytes)
        r.notes.push_back(note("mac_wired_raise", {{"mb", std::to_string(mb)},
                                                   {"need", format_bytes(need)},
                                                   {"left", format_bytes(r.mac_ram_bytes - mb * MiB)},
                                                   {"ram", format_bytes(r.mac_ram_bytes)}}));
    else
        r.notes.push_back(
            note("mac_ram_short", {{"need", format_bytes(need)}, {"ram", format_bytes(r.mac_ram_bytes)}}));
}

// Every generated token reads the active weights once per step (shared by the batch)
// and each sequence's own KV cache. llama.cpp with layers on the CPU reads those layers'
// weights and KV from system RAM, one after the other with the GPU's:
// time = GPU bytes / GPU bandwidth + CPU bytes / RAM bandwidth (the CPU's compute assumed
// to keep up with its memory, as it does for decode on current desktop CPUs).
void decode_bound(const Gpu* gpu, const BudgetInputs& in, BudgetResult& r) {
    DecodeBound& d = r.decode;
    d.bandwidth_bytes_per_s = gpu ? gpu->bandwidth_bytes_per_s : 0.0;
    d.context = r.context;
    d.weight_bytes_per_token =
        r.engine == BudgetEngine::Vllm ? cdiv(r.weights.active_bytes, r.tp) : r.weights.active_bytes;
    d.batch =
        std::max<int64_t>(1, std::min(r.max_concurrency, r.engine == BudgetEngine::Vllm ? r.max_num_seqs : r.seqs));
    const std::optional<ReadSplit>& split = r.read_split;
    if (split && (split->cpu_read_weights > 0 || split->cpu_kv > 0)) {
        // The active bytes (MoE: the routed share) as the placement splits what a step reads (every layer and
        // the output layer; the input layer's table is one row). The routed experts are read at the share the
        // weights' own active count implies and everything else whole, so experts --fit moved to system RAM cost
        // the RAM only their routed share.
        const double read = double(split->gpu_weights) + double(split->cpu_read_weights);
        const double active = std::min(read, double(r.weights.active_bytes));
        const double experts = std::min(double(split->experts), read);
        const double dense = read - experts;
        const double expert_share = experts > 0 ? std::clamp((active - dense) / experts, 0.0, 1.0) : 0.0;
        const double cpu_experts = std::min(double(split->cpu_experts), double(split->cpu_read_weights));
        const double cpu_active = experts > 0 && active > dense
                                      ? double(split->cpu_read_weights) - cpu_experts * (1.0 - expert_share)
                                      : double(split->cpu_read_weights) * (read > 0 ? active / read : 1.0);
        d.cpu_weight_bytes_per_token = static_cast<int64_t>(cpu_active);
        d.weight_bytes_per_token = static_cast<int64_t>(std::max(0.0, active - cpu_active));
        const int64_t kv_all = split->gpu_kv + split->cpu_kv;
        if (kv_all > 0) {
            d.cpu_kv_bytes_per_token =
                static_cast<int64_t>(double(d.kv_bytes_per_token) * double(split->cpu_kv) / double(kv_all));
            d.kv_bytes_per_token -= d.cpu_kv_bytes_per_token;
        }
        const bool unified = gpu && gpu->unified_memory;
        d.ram_bandwidth_bytes_per_s = in.ram_bandwidth_bytes_per_s > 0 ? in.ram_bandwidth_bytes_per_s
                                      : unified                        ? gpu->bandwidth_bytes_per_s
                                                                       : kDefaultRamBandwidth;
        d.ram_bandwidth_assumed = in.ram_bandwidth_bytes_per_s <= 0 && !unified;
    }
    if (d.bandwidth_bytes_per_s > 0) {
        const double bw = d.bandwidth_bytes_per_s, ram = d.ram_bandwidth_bytes_per_s;
        const double w = double(d.weight_bytes_per_token), kv = double(d.kv_bytes_per_token);
        const double cw = double(d.cpu_weight_bytes_per_token), ckv = double(d.cpu_kv_bytes_per_token);
        if (ram > 0) {
            auto step_s = [&](double batch) { return (w + batch * kv) / bw + (cw + batch * ckv) / ram; };
            d.tokens_per_s_single = 1.0 / step_s(1.0);
            d.tokens_per_s_batch = double(d.batch) / step_s(double(d.batch));
        } else {
            d.tokens_per_s_single = bw / (w + kv);
            d.tokens_per_s_batch = double(d.batch) * bw / (w + double(d.batch) * kv);
        }
    }
}

}  // namespace

Result<BudgetResult> compute_budget(const ModelSpec& model, const BudgetInputs& in, const ModelSpec* draft) {
    if (auto v = validate(in); !v) return v.error();
    // The user's RoPE scaling replaces the config's: every engine step then derives its
    // limit from the scaled model.
    std::optional<ModelSpec> scaled;
    if (!in.rope_scaling.empty()) {
        auto rs = parse_rope_scaling(in.rope_scaling);
        if (!rs) return rs.error();
        if (in.engine == BudgetEngine::LlamaCpp && rs->type == "dynamic")
            return make_error("bad_value", note("llamacpp_rope_dynamic"));
        scaled = with_rope_scaling(model, rs.value());
    }
    const ModelSpec& m = scaled ? *scaled : model;
    BudgetResult r;
    r.engine = in.engine;
    r.model = m.name;
    const ContextLimits lim = context_limits(m);
    r.model_max_len = m.max_position_embeddings > 0 ? lim.max_len : 0;
    r.native_max_len = m.max_position_embeddings;
    r.n_ctx_train = lim.n_ctx_train;
    if (in.engine == BudgetEngine::LlamaCpp) {
        auto b = llama_build(in.engine_version);
        if (!b) return b.error();
        // The GGUF is converted from the config as it is; the user's scaling comes on the command line.
        if (b->slot_cap) r.slot_cap = llamacpp_n_ctx_train(model, scaled ? &*scaled->rope_scaling : nullptr, *b);
    }
    r.rope_scaling = m.rope_scaling;
    r.over_model_max = r.model_max_len > 0 && in.context > r.model_max_len;
    r.seqs = in.seqs;
    auto gpu = resolve_hardware(in, r);
    if (!gpu) return gpu.error();
    // vLLM's default is its release's CacheConfig.gpu_memory_utilization (validate() read the version).
    double util_default = 1.0;
    std::optional<VllmRelease> vllm_rel;
    if (in.engine == BudgetEngine::Vllm) {
        auto rel = vllm_release(in.engine_version);
        if (!rel) return rel.error();
        util_default = rel->gpu_memory_utilization;
        vllm_rel = std::move(rel.value());
    }
    const double util = in.gpu_memory_utilization > 0 ? in.gpu_memory_utilization : util_default;
    r.gpu_memory_utilization = util;
    r.gpu_memory_utilization_default = util_default;
    r.requested_bytes = static_cast<int64_t>(std::floor(double(r.gpu_total_bytes) * util));
    auto ep = resolve_parallelism(m, in, vllm_rel ? &*vllm_rel : nullptr, r);
    if (!ep) return ep.error();
    // llama.cpp's target for its speculative type (a config's MTP block appended for draft-mtp):
    // its weights and layers are what the steps below count.
    std::optional<ModelSpec> llama_target;
    LlamaSpecType llama_spec = LlamaSpecType::None;
    if (in.engine == BudgetEngine::LlamaCpp) {
        auto st = parse_llama_spec_type(in.spec_type);
        if (!st) return st.error();
        llama_spec = st.value();
        if (llama_spec == LlamaSpecType::DraftMtp) llama_target = llamacpp_target(m, llama_spec);
    }
    const ModelSpec& target = llama_target ? *llama_target : m;
    auto fmt = resolve_weights(target, in, gpu.value(), llama_spec, ep.value(), r);
    if (!fmt) return fmt.error();

    const Ctx c{target, in, gpu.value(), fmt.value(), draft, llama_spec};
    Result<bool> step = in.engine == BudgetEngine::Vllm       ? budget_steps::vllm(c, r)
                        : in.engine == BudgetEngine::LlamaCpp ? budget_steps::llamacpp(c, r)
                                                              : budget_steps::transformers(c, r);
    if (!step) return step.error();
    // The steps saturate at INT64_MAX where config values and inputs multiply past 2^63 (a
    // 2^31-token batch through 2^16 heads of 2^16 dims): such an answer would show 8 EiB as
    // if it were measured. Refuse it instead.
    if (r.per_gpu.total_bytes == INT64_MAX || r.activation_bytes == INT64_MAX || r.cudagraph_bytes == INT64_MAX ||
        r.kv_pool_bytes == INT64_MIN || r.decode.kv_bytes_per_token == INT64_MAX)
        return make_error("overflow", note("budget_overflow", {{"model", m.name}}));
    if (r.mac_ram_bytes > 0 && !r.fits) mac_wired_advice(r);
    decode_bound(gpu.value(), in, r);
    r.max_context_stop = !r.max_context_capped                                                            ? "memory"
                         : r.slot_cap > 0 && r.max_context == r.slot_cap && r.slot_cap != r.model_max_len ? "slot"
                         : r.model_max_len > 0 && r.max_context > r.model_max_len                         ? "asked"
                                                                                                          : "model";
    return Result<BudgetResult>(std::move(r));
}

}  // namespace kvb
