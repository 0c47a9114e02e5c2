// kvbudget budget CONFIG (--gpu NAME | --gpu-memory SIZE) [...]: the whole memory budget.
// Exit 0 with a verdict (fits or not), 1 when the input is refused, 2 on usage errors.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "args.h"
#include "base/arith.h"
#include "base/units.h"
#include "budget/budget.h"
#include "commands.h"
#include "report/answer.h"
#include "report/json.h"

namespace kvb::cli {

namespace {

const char* kHelp =
    "usage: kvbudget budget CONFIG (--gpu NAME | --gpu-memory SIZE) [options]\n"
    "\n"
    "Where the GPU memory goes when an engine serves this model, and what fits.\n"
    "  --gpu NAME                     catalog GPU (rtx-4090, a100-80gb, h100, mi300x, m4-max-128gb, ...)\n"
    "  --gpu-memory SIZE              memory per GPU as the engine sees it (overrides the catalog size);\n"
    "                                 SIZE,SIZE,...: GPUs that differ, one size each (llama.cpp's --fit\n"
    "                                 and default split use each; the rest takes the smallest)\n"
    "  --gpu-count N                  GPUs (default 1)\n"
    "  --gpu-memory-utilization F     fraction of TOTAL memory vLLM may use (default: the release's, 0.92\n"
    "                                 from 0.20.0, 0.9 before; llama.cpp and transformers 1.0)\n"
    "  --engine vllm|llamacpp|transformers  default vllm\n"
    "  --weights FORMAT               auto|bf16|fp16|fp32|fp8|int8|awq|gptq|gptq-int8|mxfp4|\n"
    "                                 Q8_0|Q6_K|Q5_K_M|Q4_K_M|Q4_0|IQ4_XS (default auto = config);\n"
    "                                 llama.cpp: a GGUF (mxfp4 = MXFP4_MOE; default Q4_K_M, mxfp4 for an\n"
    "                                 MXFP4 checkpoint, whose experts stay MXFP4 in every type)\n"
    "  --params N                     exact parameter count (e.g. the Hub's safetensors total)\n"
    "  --max-model-len N              tokens per request: 32768, 32,768, 32K, 1M (default: the model's limit)\n"
    "  --rope-scaling TYPE:FACTOR[:ORIGINAL]  RoPE scaling to serve with: yarn|linear|dynamic, e.g. yarn:4:32768\n"
    "                                 (Qwen3: 131,072 tokens); ORIGINAL defaults to the config's or the model\n"
    "                                 card's original length. vLLM gets --hf-overrides, llama.cpp --rope-scaling\n"
    "  --seqs N                       requests served at once (llama.cpp -np, transformers batch size; default 1)\n"
    "  --max-num-seqs N               vLLM --max-num-seqs (default: vLLM's for the GPU, raised to --seqs);\n"
    "                                 for llama.cpp and transformers the same as --seqs\n"
    "  --kv-cache-dtype T             vLLM: auto|bfloat16|float16|fp8|fp8_e4m3|fp8_e5m2|nvfp4 (as the release\n"
    "                                 takes them: bfloat16 from 0.11, float16 from 0.18, nvfp4 from 0.21 on\n"
    "                                 compute capability 10.x); llama.cpp: f16|q8_0|q4_0|...\n"
    "  -ctk T, -ctv T                 llama.cpp: the K or the V cache type alone (the other stays f16, or\n"
    "                                 --kv-cache-dtype's, which sets both)\n"
    "  --tensor-parallel-size N, -tp  default: --gpu-count / pipeline size\n"
    "  --pipeline-parallel-size N, -pp\n"
    "  --enable-expert-parallel, -ep  vLLM: each MoE layer's routed experts placed whole over the TP ranks\n"
    "                                 (the fullest holds ceil(experts / TP)) instead of split within, so fp8\n"
    "                                 expert blocks are not cut. llama.cpp and transformers refuse it\n"
    "  --pp-layer-partition L,L,...   vLLM's VLLM_PP_LAYER_PARTITION: layers per stage (\"15,17\")\n"
    "  --speculative-config JSON      vLLM's own flag: the drafter's attention layers share the KV pool\n"
    "  --draft-config CONFIG          the drafter's config.json (EAGLE head or draft model)\n"
    "  --engine-version V             the engine's release: vLLM 0.20.1 (or vllm=0.20.1), llama.cpp b6500;\n"
    "                                 its log lines, error wordings, MLA block sizes, --gpu-memory-utilization\n"
    "                                 default, batch defaults and --kv-cache-dtype spellings (default: the\n"
    "                                 newest, 0.31.0; a later release takes its rules, with a note)\n"
    "  --spec-type T                  llama.cpp: draft-simple|draft-eagle3 (need -md)|draft-mtp (the model's\n"
    "                                 MTP block)|ngram-...: the draft context's own KV cache\n"
    "  -md CONFIG, --model-draft CONFIG  llama.cpp: the draft model (config.json or .gguf)\n"
    "  --spec-draft-n-max N           llama.cpp: tokens drafted (default 3); MTP / EAGLE-3 keep as many\n"
    "                                 recurrent-state rollback snapshots per sequence\n"
    "  -ctkd T, -ctvd T               llama.cpp: the draft context's K and V cache types (default f16)\n"
    "  --max-num-batched-tokens N     vLLM (default 2048, 8192 on >= 70 GiB GPUs other than A100, 16384 on\n"
    "                                 >= 160 GiB from 0.28.0)\n"
    "  --block-size N                 vLLM block size\n"
    "  --activation-memory SIZE       override the activation-peak estimate (llama.cpp: compute buffer)\n"
    "  --overhead-memory SIZE         override the non-torch / runtime overhead estimate\n"
    "  --cudagraph-memory SIZE        override the CUDA graph estimate; --enforce-eager sets it to 0\n"
    "  -ub N                          llama.cpp ubatch (default 512)\n"
    "  --ngl N, -ngl N                llama.cpp -ngl: the output layer and the last N-1 layers on the GPU\n"
    "                                 (default all = layers + 1); the rest in system RAM\n"
    "  --ram SIZE                     llama.cpp: system RAM for the layers left on the CPU (checked when given)\n"
    "  --no-kv-offload, -nkvo         llama.cpp: every layer's KV cache in system RAM\n"
    "  --hf ORG/REPO:QUANT            llama.cpp: the command downloads the file with -hf instead of -m\n"
    "  --wired-limit-mb N             Mac: iogpu.wired_limit_mb in force (default: macOS's 2/3 or 3/4 of RAM)\n"
    "  --fit-target MIB, -fitt MIB    llama.cpp --fit: MiB to keep free on the GPU (default 1024)\n"
    "  --fit-ctx N, -fitc N           llama.cpp --fit: the smallest context it shrinks to (default 4096)\n"
    "  --ram-bandwidth GB/s           system RAM bandwidth for layers left on the CPU (default 89.6,\n"
    "                                 dual-channel DDR5-5600; a Mac's unified memory: the GPU's)\n"
    "  --json                         machine-readable output\n"
    "Exit status: 0 with a verdict (fits or not), 1 input refused, 2 usage error.\n"
    "Model and constants: docs/budget-model.md.\n";

std::string gib(int64_t b) {
    return format_bytes(b);
}

std::string num(double v, const char* f) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

void print_human(const BudgetResult& r, const std::optional<Message>& advice, std::ostream& out) {
    const bool vllm = r.engine == BudgetEngine::Vllm;
    const bool hf = r.engine == BudgetEngine::Transformers;
    const PerGpu& g = r.per_gpu;
    auto est = [](bool e) { return e ? " (estimate)" : " (given)"; };
    out << r.model << " on " << r.gpu_count << " x " << r.gpu_name << " (" << gib(r.gpu_total_bytes) << "), "
        << (vllm ? "vLLM"
            : hf ? "transformers"
                 : "llama.cpp");
    if (vllm)
        out << ", TP " << r.tp << (r.pp > 1 ? ", PP " + std::to_string(r.pp) : "")
            << (r.ep > 1 ? ", EP " + std::to_string(r.ep) : "");
    out << "\n";
    if (vllm) {
        out << "  requested per GPU     " << gib(r.requested_bytes) << " (" << gib(r.gpu_total_bytes) << " x "
            << num(r.gpu_memory_utilization, "%g") << ")\n";
        out << "  weights per GPU       " << gib(r.weights_per_gpu_bytes) << " (" << r.weights.format.name << ", "
            << with_commas(r.weights.params) << " params" << (r.weights.vision_bytes ? " + vision tower" : "") << ", "
            << "checkpoint " << gib(r.weights.all_bytes()) << " in all)\n";
        out << "  activation peak       " << gib(r.activation_bytes) << est(r.activation_estimated) << ", "
            << with_commas(r.max_num_batched_tokens) << " batched tokens\n";
        out << "  non-torch overhead    " << gib(r.overhead_bytes) << est(r.overhead_estimated) << "\n";
        out << "  CUDA graphs           " << gib(r.cudagraph_bytes)
            << (r.cudagraph_bytes ? est(r.cudagraph_estimated) : "") << " (--max-num-seqs " << r.max_num_seqs << ")\n";
        out << "  KV cache pool         "
            << (r.kv_pool_bytes > 0 ? gib(r.kv_pool_bytes) : "none (" + gib(sat_neg(r.kv_pool_bytes)) + " short)")
            << " per GPU" << (r.pp > 1 ? " (the smallest stage's)" : "") << ", " << r.kv_cache_dtype << "\n";
        // Each stage's GPU profiles and cuts its own memory; the engine keeps the fewest blocks.
        if (r.stages.size() > 1)
            for (size_t s = 0; s < r.stages.size(); ++s) {
                const VllmStage& st = r.stages[s];
                out << "  stage " << s << " (" << st.layers << " layers)  weights " << gib(st.weights_bytes)
                    << ", activation " << gib(st.activation_bytes) << ", overhead " << gib(st.overhead_bytes) << ", KV "
                    << gib(st.kv_bytes) << " of " << gib(st.kv_available_bytes) << " (room for "
                    << with_commas(st.num_blocks) << " blocks" << (st.limiting ? ", the fewest" : "") << "), used "
                    << gib(st.used_bytes) << "\n";
            }
        for (const std::string& l : r.log_lines) out << "  vLLM: " << l << "\n";
    } else {
        const std::string per = r.gpu_count > 1 ? " per GPU" : "";
        out << "  available" << (r.gpu_count > 1 ? " per GPU     " : "             ") << gib(r.requested_bytes) << "\n";
        out << "  weights               " << gib(g.weights_bytes) << per << " (" << r.weights.format.name << ", "
            << with_commas(r.weights.params) << " params"
            << (r.gpu_count > 1 ? ", " + gib(r.weights.all_bytes()) + " in all" : "") << ")\n";
        if (hf) {
            out << "  DynamicCache          " << gib(g.kv_bytes) << per << " (" << r.kv_cache_dtype << ", "
                << with_commas(r.context) << " tokens x " << r.seqs << " seqs, incl. " << gib(r.cache_transient_bytes)
                << " while it grows)\n";
            out << "  prefill activations   " << gib(r.activation_bytes) << est(r.activation_estimated) << "\n";
        } else {
            out << "  KV cache              " << gib(g.kv_bytes) << per << " (" << r.kv_cache_dtype << ", "
                << with_commas(r.context) << " tokens x " << r.seqs << " seqs)\n";
            out << "  compute buffer        " << gib(r.activation_bytes) << est(r.activation_estimated) << "\n";
        }
        out << "  runtime overhead      " << gib(r.overhead_bytes) << est(r.overhead_estimated) << "\n";
        out << "  total                 " << gib(g.total_bytes) << per << "\n";
        const LlamaOffload& o = r.offload;
        if (o.active) {
            const int64_t blocks = std::min(std::max<int64_t>(o.n_gpu_layers - 1, 0), o.n_layer);
            out << "  -ngl " << o.n_gpu_layers << "               " << blocks << " of " << o.n_layer
                << " layers on the GPU" << (o.output_on_gpu ? " + the output layer" : "")
                << (o.estimated ? " (split estimated from parameter counts)" : "") << "\n";
            out << "  system RAM            " << gib(o.ram_need_bytes) << " (weights " << gib(o.cpu_weights_bytes)
                << ", KV " << gib(o.cpu_kv_bytes) << ")"
                << (o.ram_bytes > 0 ? " of " + gib(o.ram_bytes) + (o.ram_fits ? "" : ": TOO MUCH") : "") << "\n";
        }
        if (!hf && o.max_gpu_layers >= 0)
            out << "  most layers on GPU    -ngl " << o.max_gpu_layers << " (all: " << o.n_layer + 1 << ")\n";
        for (const std::string& l : r.log_lines) out << "  llama.cpp: " << l << "\n";
        if (!hf) {
            const LlamaFit& f = r.fit;
            out << "  --fit (default on)    ";
            if (f.outcome == "not_predicted")
                out << "not predicted";
            else
                out << f.outcome << ": " << f.flags << " (" << with_commas(f.context) << " tokens x " << r.seqs << ", "
                    << gib(f.used_bytes) << " of " << gib(f.free_bytes) << " free, keeps " << gib(f.target_bytes)
                    << ")";
            out << "\n";
            for (const std::string& l : f.log_lines) out << "  llama.cpp: " << l << "\n";
            const LlamaFit& d = r.fit_default;
            if (d.flags != f.flags && d.outcome != "not_predicted")
                out << "  no -c, no -ngl        " << d.outcome << ": " << d.flags << " (" << with_commas(d.context)
                    << (d.kv_unified ? " tokens shared by " + std::to_string(d.slots) + " slots, "
                                     : " tokens x " + std::to_string(d.slots) + ", ")
                    << gib(d.used_bytes) << " of " << gib(d.free_bytes) << " free)\n";
        }
    }
    out << "verdict: "
        << (r.startup_refused ? "REFUSED AT START-UP"
            : !r.fits         ? "DOES NOT FIT"
            : r.fits_offload  ? "FITS WITH PART IN SYSTEM RAM"
                              : "FITS")
        << " (" << with_commas(r.context) << " tokens x " << r.seqs << (r.seqs == 1 ? " request" : " requests")
        << (r.slot_capped && r.fits ? " in the cache; llama-server gives each at most " + with_commas(r.n_ctx_slot)
                                    : "")
        << ")\n";
    if (r.fits && r.fits_offload && !r.verdict_reason.code.empty())
        out << "  " << render_english(r.verdict_reason) << "\n";
    if (!r.fits) {
        if (!r.verdict_reason.code.empty()) out << "  " << render_english(r.verdict_reason) << "\n";
        // The engine's own words, unless the reason above already is them.
        if (!r.engine_error.empty() && r.engine_error != render_english(r.verdict_reason))
            out << "  vLLM: " << r.engine_error << "\n";
    } else if (!r.all_seqs_fit) {
        out << "  only " << with_commas(r.max_concurrency) << " of the " << with_commas(r.seqs)
            << " requests fit at once\n";
    }
    if (advice) out << "  " << render_english(*advice) << "\n";
    out << "  longest context for " << r.seqs << (r.seqs == 1 ? " sequence: " : " sequences at once: ")
        << with_commas(r.max_context) << " tokens"
        << (r.max_context_stop == "slot" ? " (llama-server's cap per request, the model's training context)"
            : r.max_context_stop == "asked"
                ? " (as asked, past the model's limit of " + with_commas(r.model_max_len) + ")"
            : r.max_context_stop == "model" ? " (the model's limit)"
                                            : "")
        << "\n";
    if (r.max_context_physical > r.max_context)
        out << "  memory alone would hold " << with_commas(r.max_context_physical) << " tokens per sequence (past the "
            << "model's limit of " << with_commas(r.model_max_len) << ")\n";
    out << "  sequences of " << with_commas(r.context) << " tokens held at once: " << with_commas(r.max_concurrency)
        << "\n";
    if (r.decode.tokens_per_s_single > 0) {
        out << "  decode bound at " << with_commas(r.decode.context)
            << " tokens: " << num(r.decode.tokens_per_s_single, "%.1f") << " tokens/s for one sequence";
        if (r.decode.batch > 1)
            out << ", " << num(r.decode.tokens_per_s_batch, "%.1f") << " tokens/s aggregate at " << r.decode.batch
                << " sequences";
        out << "\n";
        if (r.decode.ram_bandwidth_bytes_per_s > 0)
            out << "  of which from system RAM: " << gib(r.decode.cpu_weight_bytes_per_token) << " of weights + "
                << gib(r.decode.cpu_kv_bytes_per_token) << " of KV per token at "
                << num(r.decode.ram_bandwidth_bytes_per_s / 1e9, "%g") << " GB/s"
                << (r.decode.ram_bandwidth_assumed ? " (assumed: --ram-bandwidth)" : "") << "\n";
    }
    out << (hf ? "python: " : "command: ") << r.command << "\n";
    for (const Message& n : r.notes) out << "note: " << render_english(n) << "\n";
}

}  // namespace

int cmd_budget(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    ArgSpec spec;
    spec.with_value = {"--gpu",
                       "--gpu-memory",
                       "--gpu-count",
                       "--gpu-memory-utilization",
                       "--weights",
                       "--params",
                       "--max-model-len",
                       "--max-num-seqs",
                       "--kv-cache-dtype",
                       "--tensor-parallel-size",
                       "-tp",
                       "--pipeline-parallel-size",
                       "-pp",
                       "--pp-layer-partition",
                       "--speculative-config",
                       "--engine-version",
                       "--draft-config",
                       "--spec-type",
                       "-md",
                       "--model-draft",
                       "--spec-draft-n-max",
                       "-ctkd",
                       "-ctvd",
                       "--engine",
                       "--max-num-batched-tokens",
                       "--block-size",
                       "--activation-memory",
                       "--overhead-memory",
                       "--cudagraph-memory",
                       "-ub",
                       "-ctk",
                       "-ctv",
                       "--seqs",
                       "--rope-scaling",
                       "--ngl",
                       "-ngl",
                       "--ram",
                       "--wired-limit-mb",
                       "--fit-target",
                       "-fitt",
                       "--fit-ctx",
                       "-fitc",
                       "--ram-bandwidth",
                       "--hf"};
    spec.switches = {"--enforce-eager", "--no-kv-offload", "-nkvo", "--enable-expert-parallel", "-ep"};
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
    // --gpu-memory 24GB,16GB: GPUs that differ, one size each (their count is the GPU count).
    const std::string gmem_text = a->get("--gpu-memory");
    std::optional<int64_t> gmem = 0;
    if (gmem_text.find(',') != std::string::npos) {
        size_t from = 0;
        while (gmem) {
            const size_t comma = gmem_text.find(',', from);
            auto v = parse_size(gmem_text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
            if (!v || v.value() <= 0) {
                err << "kvbudget: error: --gpu-memory: "
                    << (v ? std::string("each size must be positive") : v.error().message) << "\n";
                gmem.reset();
                break;
            }
            in.gpu_memory_each.push_back(v.value());
            if (comma == std::string::npos) break;
            from = comma + 1;
        }
    } else {
        gmem = get_size(*a, "--gpu-memory", 0, err);
    }
    auto count =
        get_count(*a, "--gpu-count", static_cast<int64_t>(std::max<size_t>(1, in.gpu_memory_each.size())), err);
    auto util = get_fraction(*a, "--gpu-memory-utilization", 0.0, err);
    auto params = get_count(*a, "--params", 0, err);
    auto mml = get_context(*a, "--max-model-len", 0, err);
    auto seqs = get_count(*a, "--seqs", 1, err);
    auto mns = get_count(*a, "--max-num-seqs", 0, err);
    auto tp = get_count(*a, a->has("-tp") ? "-tp" : "--tensor-parallel-size", 0, err);
    auto pp = get_count(*a, a->has("-pp") ? "-pp" : "--pipeline-parallel-size", 1, err);
    auto mnbt = get_count(*a, "--max-num-batched-tokens", 0, err);
    auto block = get_count(*a, "--block-size", 0, err);
    auto act = get_size(*a, "--activation-memory", -1, err);
    auto ovh = get_size(*a, "--overhead-memory", -1, err);
    auto cg = get_size(*a, "--cudagraph-memory", -1, err);
    auto ub = get_count(*a, "-ub", 512, err);
    auto ngl = get_count(*a, a->has("-ngl") ? "-ngl" : "--ngl", -1, err);
    auto draft_max = get_count(*a, "--spec-draft-n-max", 3, err);
    auto ram = get_size(*a, "--ram", 0, err);
    auto wired = get_count(*a, "--wired-limit-mb", 0, err);
    auto fitt = get_count(*a, a->has("-fitt") ? "-fitt" : "--fit-target", 1024, err);
    auto fitc = get_count(*a, a->has("-fitc") ? "-fitc" : "--fit-ctx", 4096, err);
    if (!gmem || !count || !util || !params || !mml || !seqs || !mns || !tp || !pp || !mnbt || !block || !act || !ovh ||
        !cg || !ub || !ngl || !ram || !wired || !fitt || !fitc || !draft_max)
        return kRefused;
    const bool offload_flags = a->has("--ngl") || a->has("-ngl") || a->has("--ram") || a->has("--no-kv-offload") ||
                               a->has("-nkvo") || a->has("--hf") || a->has("--fit-target") || a->has("-fitt") ||
                               a->has("--fit-ctx") || a->has("-fitc") || a->has("--ram-bandwidth");
    if (offload_flags && in.engine != BudgetEngine::LlamaCpp) {
        err << "kvbudget: error: --ngl, --ram, --no-kv-offload, --hf, --fit-target, --fit-ctx and --ram-bandwidth "
               "are llama.cpp's; add --engine llamacpp\n";
        return kUsage;
    }
    if (a->has("--ram-bandwidth")) {
        // GB/s, decimal as memory vendors count it: 89.6 = dual-channel DDR5-5600.
        const std::string v = a->get("--ram-bandwidth");
        char* end = nullptr;
        const double gbs = std::strtod(v.c_str(), &end);
        if (v.empty() || end != v.c_str() + v.size() || !(gbs > 0)) {
            err << "kvbudget: error: --ram-bandwidth must be a positive number of GB/s, got '" << v << "'\n";
            return kRefused;
        }
        in.ram_bandwidth_bytes_per_s = gbs * 1e9;
    }
    if (a->has("--gpu-memory") && in.gpu_memory_each.empty() && *gmem <= 0) {
        err << "kvbudget: error: --gpu-memory must be a positive size\n";
        return kRefused;
    }
    in.gpu_memory_bytes = *gmem;
    in.gpu_count = *count;
    in.gpu_memory_utilization = *util;
    in.weights = a->get("--weights", "auto");
    in.params = *params;
    in.context = *mml;
    in.seqs = *seqs;
    // --max-num-seqs is vLLM's own flag; for llama.cpp (-np) and transformers (batch size)
    // it has always meant the requests served at once.
    if (in.engine == BudgetEngine::Vllm)
        in.max_num_seqs = *mns;
    else if (a->has("--max-num-seqs") && !a->has("--seqs"))
        in.seqs = *mns;
    // llama.cpp's -ctk and -ctv each set one half, the other staying f16 (common/arg.cpp:
    // cache_type_k / cache_type_v, both GGML_TYPE_F16 by default); --kv-cache-dtype, like the
    // page's kv, sets both, and -ctk / -ctv win for theirs. "" = V as K.
    const std::string kv = a->get("--kv-cache-dtype");
    in.kv_cache_dtype = a->get("-ctk", kv);
    in.kv_cache_dtype_v = a->get("-ctv", !a->has("-ctk") ? "" : a->has("--kv-cache-dtype") ? kv : "f16");
    in.rope_scaling = a->get("--rope-scaling");
    if (in.engine != BudgetEngine::LlamaCpp && (a->has("-ctk") || a->has("-ctv"))) {
        err << "kvbudget: error: -ctk / -ctv are llama.cpp's; use --kv-cache-dtype for " << to_string(in.engine)
            << "\n";
        return kUsage;
    }
    in.tensor_parallel_size = *tp;
    in.pipeline_parallel_size = *pp;
    in.pp_layer_partition = a->get("--pp-layer-partition", "");
    in.speculative_config = a->get("--speculative-config", "");
    in.engine_version = a->get("--engine-version", "");
    in.max_num_batched_tokens = *mnbt;
    in.block_size = *block;
    in.activation_bytes = *act;
    in.overhead_bytes = *ovh;
    in.cudagraph_bytes = *cg;
    in.enforce_eager = a->has("--enforce-eager");
    in.expert_parallel = a->has("--enable-expert-parallel") || a->has("-ep");
    in.n_ubatch = *ub;
    in.n_gpu_layers = *ngl;
    in.ram_bytes = *ram;
    in.no_kv_offload = a->has("--no-kv-offload") || a->has("-nkvo");
    in.wired_limit_mb = *wired;
    in.fit_target_mb = *fitt;
    in.fit_ctx = *fitc;
    in.hf_ref = a->get("--hf");
    in.spec_type = a->get("--spec-type");
    in.spec_draft_n_max = *draft_max;
    in.spec_draft_type_k = a->get("-ctkd");
    in.spec_draft_type_v = a->get("-ctvd");
    const bool llama_spec = a->has("--spec-type") || a->has("-md") || a->has("--model-draft") ||
                            a->has("--spec-draft-n-max") || a->has("-ctkd") || a->has("-ctvd");
    if (llama_spec && in.engine != BudgetEngine::LlamaCpp) {
        err << "kvbudget: error: --spec-type, -md, --spec-draft-n-max, -ctkd and -ctvd are llama.cpp's; use "
               "--speculative-config for "
            << to_string(in.engine) << "\n";
        return kUsage;
    }
    // -md alone still gets its draft context (common_speculative_init_result runs whenever a draft
    // model is given; since ggml-org/llama.cpp#23988 it drafts only with --spec-type draft-simple).
    if ((a->has("-md") || a->has("--model-draft")) && in.spec_type.empty()) in.spec_type = "draft-simple";

    auto m = load_model(a->positional[0], err);
    if (!m) return kRefused;
    std::optional<ModelSpec> draft;
    if (a->has("-md") || a->has("--model-draft")) {
        draft = load_model(a->get(a->has("-md") ? "-md" : "--model-draft"), err);
        if (!draft) return kRefused;
    } else if (a->has("--draft-config")) {
        if (in.speculative_config.empty()) {
            err << "kvbudget: error: --draft-config needs --speculative-config (which method drafts)\n";
            return kUsage;
        }
        draft = load_model(a->get("--draft-config"), err);
        if (!draft) return kRefused;
    }
    auto answer = compute_answer(*m, in, draft ? &*draft : nullptr);
    if (!answer) {
        err << "kvbudget: error: " << answer.error().message << "\n";
        return kRefused;
    }
    if (answer->refusal) {
        err << "kvbudget: error: " << answer->refusal->message << "\n";
        return kRefused;
    }
    if (a->has("--json"))
        out << to_json_text(answer.value()) << "\n";
    else
        print_human(*answer->budget, answer->advice, out);
    return kOk;
}

}  // namespace kvb::cli
