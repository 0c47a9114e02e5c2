// kvbudget budget CONFIG (--gpu NAME | --gpu-memory SIZE) [...]: the whole memory budget.
// Exit 0 with a verdict (fits or not), 1 when the input is refused, 2 on usage errors.
#include <cstdio>
#include <sstream>

#include "args.h"
#include "budget/budget.h"
#include "commands.h"
#include "base/units.h"

namespace kvb::cli {

namespace {

const char* kHelp =
    "usage: kvbudget budget CONFIG (--gpu NAME | --gpu-memory SIZE) [options]\n"
    "\n"
    "Where the GPU memory goes when an engine serves this model, and what fits.\n"
    "  --gpu NAME                     catalog GPU (rtx-4090, a100-80gb, h100, mi300x, m4-max-128gb, ...)\n"
    "  --gpu-memory SIZE              memory per GPU as the engine sees it (overrides the catalog size)\n"
    "  --gpu-count N                  GPUs (default 1)\n"
    "  --gpu-memory-utilization F     fraction of TOTAL memory vLLM may use (default 0.9; llama.cpp 1.0)\n"
    "  --engine vllm|llamacpp|transformers  default vllm\n"
    "  --weights FORMAT               auto|bf16|fp16|fp32|fp8|int8|awq|gptq|gptq-int8|mxfp4|\n"
    "                                 Q8_0|Q6_K|Q5_K_M|Q4_K_M|Q4_0|IQ4_XS (default auto = config)\n"
    "  --params N                     exact parameter count (e.g. the Hub's safetensors total)\n"
    "  --max-model-len N              context per sequence (default: the model's limit)\n"
    "  --max-num-seqs N               vLLM --max-num-seqs / llama.cpp -np / transformers batch size\n"
    "  --kv-cache-dtype T             vLLM: auto|bfloat16|float16|fp8|fp8_e4m3|fp8_e5m2; llama.cpp: f16|q8_0|q4_0|...\n"
    "  -ctk T, -ctv T                 llama.cpp: K and V cache types separately (-ctk is --kv-cache-dtype)\n"
    "  --tensor-parallel-size N, -tp  default: --gpu-count / pipeline size\n"
    "  --pipeline-parallel-size N, -pp\n"
    "  --max-num-batched-tokens N     vLLM (default 2048, or 8192 on >= 70 GiB GPUs other than A100)\n"
    "  --block-size N                 vLLM block size\n"
    "  --activation-memory SIZE       override the activation-peak estimate (llama.cpp: compute buffer)\n"
    "  --overhead-memory SIZE         override the non-torch / runtime overhead estimate\n"
    "  --cudagraph-memory SIZE        override the CUDA graph estimate; --enforce-eager sets it to 0\n"
    "  -ub N                          llama.cpp ubatch (default 512)\n"
    "  --json                         machine-readable output\n"
    "Exit status: 0 with a verdict (fits or not), 1 input refused, 2 usage error.\n"
    "Model and constants: docs/budget-model.md.\n";

std::string gib(int64_t b) { return format_bytes(b); }

std::string num(double v, const char* f) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

void print_json(const BudgetResult& r, std::ostream& out) {
    auto b = [](bool v) { return v ? "true" : "false"; };
    std::ostringstream o;
    o << "{\n";
    o << "  \"model\": " << json_string(r.model) << ",\n";
    o << "  \"engine\": \"" << to_string(r.engine) << "\",\n";
    o << "  \"gpu\": {\"id\": " << json_string(r.gpu_id) << ", \"name\": " << json_string(r.gpu_name)
      << ", \"total_bytes\": " << r.gpu_total_bytes << ", \"count\": " << r.gpu_count << "},\n";
    o << "  \"tensor_parallel_size\": " << r.tp << ",\n";
    o << "  \"pipeline_parallel_size\": " << r.pp << ",\n";
    o << "  \"gpu_memory_utilization\": " << num(r.gpu_memory_utilization, "%g") << ",\n";
    o << "  \"requested_bytes\": " << r.requested_bytes << ",\n";
    const WeightBytes& w = r.weights;
    o << "  \"weights\": {\"format\": " << json_string(w.format.name) << ", \"params\": " << w.params
      << ", \"bytes\": " << w.bytes << ", \"per_gpu_bytes\": " << r.weights_per_gpu_bytes
      << ", \"active_bytes\": " << w.active_bytes << ", \"vision_bytes\": " << w.vision_bytes
      << ", \"bits_per_weight\": " << num(w.bits_per_weight, "%.4f") << "},\n";
    o << "  \"activation_bytes\": " << r.activation_bytes << ",\n";
    o << "  \"activation_estimated\": " << b(r.activation_estimated) << ",\n";
    o << "  \"overhead_bytes\": " << r.overhead_bytes << ",\n";
    o << "  \"overhead_estimated\": " << b(r.overhead_estimated) << ",\n";
    o << "  \"cudagraph_bytes\": " << r.cudagraph_bytes << ",\n";
    o << "  \"cudagraph_estimated\": " << b(r.cudagraph_estimated) << ",\n";
    o << "  \"kv_pool_bytes\": " << r.kv_pool_bytes << ",\n";
    o << "  \"kv_cache_dtype\": " << json_string(r.kv_cache_dtype) << ",\n";
    o << "  \"kv_cache_dtype_v\": " << json_string(r.kv_cache_dtype_v) << ",\n";
    o << "  \"max_model_len\": " << r.max_model_len << ",\n";
    o << "  \"model_max_len\": " << r.model_max_len << ",\n";
    o << "  \"max_num_seqs\": " << r.max_num_seqs << ",\n";
    o << "  \"max_num_batched_tokens\": " << r.max_num_batched_tokens << ",\n";
    o << "  \"fits\": " << b(r.fits) << ",\n";
    o << "  \"all_seqs_fit\": " << b(r.all_seqs_fit) << ",\n";
    o << "  \"max_context\": " << r.max_context << ",\n";
    o << "  \"max_context_seqs\": " << r.context_seqs << ",\n";
    o << "  \"max_context_capped\": " << b(r.max_context_capped) << ",\n";
    o << "  \"max_concurrency\": " << r.max_concurrency << ",\n";
    const std::vector<std::string>& lines = budget_log_lines(r);
    if (r.engine == BudgetEngine::Transformers) {
        o << "  \"transformers\": {\"cache_bytes\": " << r.cache_bytes << ", \"cache_transient_bytes\": " << r.cache_transient_bytes
          << ", \"total_bytes\": " << r.llama_total_bytes << "},\n";
    } else if (r.engine == BudgetEngine::Vllm) {
        o << "  \"vllm\": {\"num_blocks\": " << r.capacity.num_blocks << ", \"tokens\": " << r.capacity.tokens
          << ", \"max_concurrency\": " << num(r.vllm_concurrency, "%.4f")
          << ", \"estimated_max_model_len\": " << r.capacity.estimated_max_model_len << "},\n";
    } else {
        o << "  \"llamacpp\": {\"kv_bytes\": " << r.llama.total_bytes << ", \"compute_buffer_bytes\": " << r.compute_buffer_bytes
          << ", \"total_bytes\": " << r.llama_total_bytes << "},\n";
    }
    o << "  \"log_lines\": [";
    for (size_t i = 0; i < lines.size(); ++i) o << (i ? ", " : "") << json_string(lines[i]);
    o << "],\n";
    o << "  \"decode\": {\"context\": " << r.decode.context << ", \"weight_bytes_per_token\": " << r.decode.weight_bytes_per_token
      << ", \"kv_bytes_per_token\": " << r.decode.kv_bytes_per_token << ", \"tokens_per_s_single\": "
      << num(r.decode.tokens_per_s_single, "%.2f") << ", \"batch\": " << r.decode.batch
      << ", \"tokens_per_s_batch\": " << num(r.decode.tokens_per_s_batch, "%.2f") << "},\n";
    o << "  \"command\": " << json_string(budget_command(r)) << ",\n";
    o << "  \"error\": " << (r.error_text.empty() ? "null" : json_string(r.error_text)) << ",\n";
    o << "  \"notes\": [";
    for (size_t i = 0; i < r.notes.size(); ++i) o << (i ? ", " : "") << json_string(r.notes[i]);
    o << "]\n}\n";
    out << o.str();
}

void print_human(const BudgetResult& r, std::ostream& out) {
    const bool vllm = r.engine == BudgetEngine::Vllm;
    auto est = [](bool e) { return e ? " (estimate)" : " (given)"; };
    const bool hf = r.engine == BudgetEngine::Transformers;
    out << r.model << " on " << r.gpu_count << " x " << r.gpu_name << " (" << gib(r.gpu_total_bytes) << "), "
        << (vllm ? "vLLM" : hf ? "transformers" : "llama.cpp");
    if (vllm) out << ", TP " << r.tp << (r.pp > 1 ? ", PP " + std::to_string(r.pp) : "");
    out << "\n";
    if (vllm) {
        out << "  requested per GPU     " << gib(r.requested_bytes) << " (" << gib(r.gpu_total_bytes) << " x "
            << num(r.gpu_memory_utilization, "%g") << ")\n";
        out << "  weights per GPU       " << gib(r.weights_per_gpu_bytes) << " (" << r.weights.format.name << ", "
            << with_commas(r.weights.params) << " params, " << gib(r.weights.bytes) << " in all)\n";
        out << "  activation peak       " << gib(r.activation_bytes) << est(r.activation_estimated) << ", "
            << with_commas(r.max_num_batched_tokens) << " batched tokens\n";
        out << "  non-torch overhead    " << gib(r.overhead_bytes) << est(r.overhead_estimated) << "\n";
        out << "  CUDA graphs           " << gib(r.cudagraph_bytes) << (r.cudagraph_bytes ? est(r.cudagraph_estimated) : "") << "\n";
        out << "  KV cache pool         " << (r.kv_pool_bytes > 0 ? gib(r.kv_pool_bytes) : "none (" + gib(-r.kv_pool_bytes) + " short)")
            << " per GPU, " << r.kv_cache_dtype << "\n";
        for (const std::string& l : r.capacity.log_lines) out << "  vLLM: " << l << "\n";
    } else if (hf) {
        out << "  available             " << gib(r.requested_bytes) << "\n";
        out << "  weights               " << gib(r.weights.bytes + r.weights.vision_bytes) << " (" << r.weights.format.name << ", "
            << with_commas(r.weights.params) << " params)\n";
        out << "  DynamicCache          " << gib(r.cache_bytes) << " (" << r.kv_cache_dtype << ", " << with_commas(r.max_model_len)
            << " tokens x " << r.max_num_seqs << " seqs) + " << gib(r.cache_transient_bytes) << " while it grows\n";
        out << "  prefill activations   " << gib(r.activation_bytes) << est(r.activation_estimated) << "\n";
        out << "  runtime overhead      " << gib(r.overhead_bytes) << est(r.overhead_estimated) << "\n";
        out << "  total                 " << gib(r.llama_total_bytes) << "\n";
    } else {
        out << "  available             " << gib(r.requested_bytes) << "\n";
        out << "  weights               " << gib(r.weights.bytes) << " (" << r.weights.format.name << ", "
            << with_commas(r.weights.params) << " params)\n";
        out << "  KV cache              " << gib(r.llama.total_bytes) << " (" << r.kv_cache_dtype << ", "
            << with_commas(r.max_model_len) << " tokens x " << r.max_num_seqs << " seqs)\n";
        out << "  compute buffer        " << gib(r.compute_buffer_bytes) << est(r.activation_estimated) << "\n";
        out << "  runtime overhead      " << gib(r.overhead_bytes) << est(r.overhead_estimated) << "\n";
        out << "  total                 " << gib(r.llama_total_bytes) << "\n";
        for (const std::string& l : r.llama.log_lines) out << "  llama.cpp: " << l << "\n";
    }
    if (r.fits) {
        out << "verdict: FITS (max-model-len " << with_commas(r.max_model_len) << ")\n";
    } else {
        out << "verdict: DOES NOT FIT (max-model-len " << with_commas(r.max_model_len) << ")\n";
        if (!r.error_text.empty()) out << "  " << (vllm ? "vLLM: " : "") << r.error_text << "\n";
    }
    out << "  longest context for " << r.context_seqs << (r.context_seqs == 1 ? " sequence: " : " sequences: ")
        << with_commas(r.max_context) << " tokens" << (r.max_context_capped ? " (the model's limit)" : "") << "\n";
    out << "  sequences of " << with_commas(r.max_model_len) << " tokens held at once: " << with_commas(r.max_concurrency) << "\n";
    if (r.decode.tokens_per_s_single > 0) {
        out << "  decode bound at " << with_commas(r.decode.context) << " tokens: " << num(r.decode.tokens_per_s_single, "%.1f")
            << " tokens/s for one sequence";
        if (r.decode.batch > 1)
            out << ", " << num(r.decode.tokens_per_s_batch, "%.1f") << " tokens/s aggregate at " << r.decode.batch << " sequences";
        out << "\n";
    }
    out << (hf ? "python: " : "command: ") << budget_command(r) << "\n";
    for (const std::string& n : r.notes) out << "note: " << n << "\n";
}

}  // namespace

int cmd_budget(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    ArgSpec spec;
    spec.with_value = {"--gpu", "--gpu-memory", "--gpu-count", "--gpu-memory-utilization", "--weights", "--params",
                       "--max-model-len", "--max-num-seqs", "--kv-cache-dtype", "--tensor-parallel-size", "-tp",
                       "--pipeline-parallel-size", "-pp", "--engine", "--max-num-batched-tokens", "--block-size",
                       "--activation-memory", "--overhead-memory", "--cudagraph-memory", "-ub", "-ctk", "-ctv"};
    spec.switches = {"--enforce-eager"};
    int rc = kOk;
    auto a = parse_command("budget", argv, spec, kHelp, out, err, rc);
    if (!a) return rc;
    if (!a->has("--gpu") && !a->has("--gpu-memory")) {
        err << "kvbudget: error: budget needs --gpu NAME or --gpu-memory SIZE\n";
        return kUsage;
    }
    BudgetInputs in;
    auto engine = parse_budget_engine(a->get("--engine", "vllm"));
    if (!engine) {
        err << "kvbudget: error: " << engine.error().message << "\n";
        return kRefused;
    }
    in.engine = engine.value();
    in.gpu = a->get("--gpu");
    auto gmem = get_size(*a, "--gpu-memory", 0, err);
    auto count = get_count(*a, "--gpu-count", 1, err);
    auto util = get_fraction(*a, "--gpu-memory-utilization", 0.0, err);
    auto params = get_count(*a, "--params", 0, err);
    auto mml = get_count(*a, "--max-model-len", 0, err);
    auto seqs = get_count(*a, "--max-num-seqs", 0, err);
    auto tp = get_count(*a, a->has("-tp") ? "-tp" : "--tensor-parallel-size", 0, err);
    auto pp = get_count(*a, a->has("-pp") ? "-pp" : "--pipeline-parallel-size", 1, err);
    auto mnbt = get_count(*a, "--max-num-batched-tokens", 0, err);
    auto block = get_count(*a, "--block-size", 0, err);
    auto act = get_size(*a, "--activation-memory", -1, err);
    auto ovh = get_size(*a, "--overhead-memory", -1, err);
    auto cg = get_size(*a, "--cudagraph-memory", -1, err);
    auto ub = get_count(*a, "-ub", 512, err);
    if (!gmem || !count || !util || !params || !mml || !seqs || !tp || !pp || !mnbt || !block || !act || !ovh || !cg || !ub)
        return kRefused;
    if (a->has("--gpu-memory") && *gmem <= 0) {
        err << "kvbudget: error: --gpu-memory must be a positive size\n";
        return kRefused;
    }
    if (*count < 1) {
        err << "kvbudget: error: --gpu-count must be at least 1\n";
        return kRefused;
    }
    if (*pp < 1) {
        err << "kvbudget: error: --pipeline-parallel-size must be at least 1\n";
        return kRefused;
    }
    in.gpu_memory_bytes = *gmem;
    in.gpu_count = *count;
    in.gpu_memory_utilization = *util;
    in.weights = a->get("--weights", "auto");
    in.params = *params;
    in.max_model_len = *mml;
    in.max_num_seqs = *seqs;
    in.kv_cache_dtype = a->get("--kv-cache-dtype", a->get("-ctk"));
    in.kv_cache_dtype_v = a->get("-ctv");
    if (in.engine != BudgetEngine::LlamaCpp && (a->has("-ctk") || a->has("-ctv"))) {
        err << "kvbudget: error: -ctk / -ctv are llama.cpp's; use --kv-cache-dtype for " << to_string(in.engine) << "\n";
        return kUsage;
    }
    in.tensor_parallel_size = *tp;
    in.pipeline_parallel_size = *pp;
    in.max_num_batched_tokens = *mnbt;
    in.block_size = *block;
    in.activation_bytes = *act;
    in.overhead_bytes = *ovh;
    in.cudagraph_bytes = *cg;
    in.enforce_eager = a->has("--enforce-eager");
    in.n_ubatch = *ub;

    auto m = load_model(a->positional[0], err);
    if (!m) return kRefused;
    auto r = compute_budget(*m, in);
    if (!r) {
        err << "kvbudget: error: " << r.error().message << "\n";
        return kRefused;
    }
    if (a->has("--json")) print_json(r.value(), out);
    else print_human(r.value(), out);
    return kOk;
}

}  // namespace kvb::cli
