// kvbudget vllm: the lines vLLM v1 prints at start-up for a given KV cache memory,
// or vLLM's own ValueError when one max_model_len request does not fit.
#include <iostream>
#include <optional>

#include "args.h"
#include "base/units.h"
#include "budget/gpus.h"
#include "commands.h"
#include "engines/vllm.h"
#include "report/engine_json.h"

namespace kvb::cli {

namespace {

const char* kHelp = R"(Usage: kvbudget vllm CONFIG --kv-cache-memory SIZE [--max-model-len N] [options] [--json]

Prints what vLLM v1 logs once it has SIZE bytes of KV cache per GPU (what
--kv-cache-memory sets, or what "Available KV cache memory: X GiB" reports):
  GPU KV cache size: N tokens, Maximum concurrency for M tokens per request: X.XXx
or vLLM's ValueError when one request of --max-model-len tokens does not fit
(exit status 1). Output lines are vLLM's own, so you can diff them against a log.

  --kv-cache-memory SIZE         KV cache bytes per GPU (8GiB, 24GB, 512MiB, or bytes)
  --max-model-len N              tokens per request (default: max_position_embeddings)
  --kv-cache-dtype T             auto bfloat16 float16 fp8 fp8_e4m3 fp8_e5m2 nvfp4 (default auto; as the release takes
                                 them: bfloat16 from 0.11, float16 from 0.18, nvfp4 from 0.20)
  --block-size N                 tokens per block (default 16; hybrid mamba models grow it)
  --mla-block-size N             MLA block size when --block-size is not given (16; 64 FlashMLA, 128 CUTLASS MLA)
  --gpu ID                       the GPU (h100, b200, rtx-5090 ...): an MLA model gets the block size of the
                                 MLA backend vLLM picks for it (--engine-version before 0.18: the forced sizes)
  --kernel-block-alignment N     backend's smallest kernel block, hybrid models round to it (16; CPU 128)
  --tensor-parallel-size N       KV heads split across N GPUs (replicated when N > KV heads)
  --pipeline-parallel-size N     layers split across N stages (num_blocks = min over stages)
  --pp-layer-partition L,L,...   VLLM_PP_LAYER_PARTITION: layers per stage ("15,17"); default: even, the
                                 remainder on the stages before the last (vLLM's get_pp_indices)
  --max-num-batched-tokens N     scheduler token budget; sizes sliding/chunked layers (default 8192, as
                                 `vllm serve` on >= 70 GiB GPUs; `vllm serve` below 70 GiB uses 2048)
  --[no-]async-scheduling        two batches in flight: sliding/chunked layers reserve 2 x the budget
                                 (default: on with --log-format current, off for the older formats)
  --[no-]enable-prefix-caching   prefix caching (default: the release's; hybrid models have it from 0.28.0):
                                 it sets the default --mamba-cache-mode
  --mamba-cache-mode M           none, align or all (default: with prefix caching, align from 0.28.0; before,
                                 all for the classes declaring mamba prefix caching (Nemotron-H, Jamba,
                                 Falcon-H1, Granite 4 hybrids) and align for the rest; none without it)
  --mamba-cache-dtype T          conv state dtype (default auto = model dtype)
  --mamba-ssm-cache-dtype T      ssm state dtype (default auto = config mamba_ssm_dtype or conv dtype)
  --num-speculative-tokens N     extra state slots for speculative decoding
  --speculative-config JSON      vLLM's own flag, e.g. '{"method": "eagle3", "model": "...", "num_speculative_tokens": 3}':
                                 the drafter's attention layers take pages from the same pool (EAGLE / EAGLE-3: one
                                 layer of the model's geometry; MTP: num_nextn_predict_layers; draft_model: all of
                                 the draft's layers); its num_speculative_tokens as --num-speculative-tokens
  --draft-config CONFIG          the drafter's config.json (EAGLE head or draft model): its own layers and geometry
  --disable-hybrid-kv-cache-manager   cache sliding-window layers as full attention
  --log-format F                 current (v0.26+: N = int(X*M), sliding layers reserve the batches in
                                 flight; one line), split (v0.20.1-v0.25: two lines, N = int(X*M)),
                                 legacy (up to v0.20.0: two lines, N = blocks // groups * block size),
                                 v0 (the V0 engine: "# GPU blocks" and its own error)
  --engine-version V             the vLLM release or build the lines are for (0.20.1, 0.24.0, vllm=0.15.2,
                                 0.26.1rc1.dev457+g...): sets --log-format (up to 0.20.0 legacy, 0.20.1-0.25
                                 split, 0.26 on current; two lines up to 0.27), the error wordings,
                                 before 0.18 the forced MLA block sizes and, before 0.28, no prefix
                                 caching for hybrid models (mamba cache mode none)
  --swap-space SIZE              v0 only: CPU swap space for the "# CPU blocks" count (default 4GiB)
)";

}  // namespace

int cmd_vllm(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    int rc = kOk;
    auto a = parse_command("vllm", argv,
                           ArgSpec{{"--kv-cache-memory",
                                    "--max-model-len",
                                    "--kv-cache-dtype",
                                    "--block-size",
                                    "--mla-block-size",
                                    "--tensor-parallel-size",
                                    "-tp",
                                    "--pipeline-parallel-size",
                                    "-pp",
                                    "--max-num-batched-tokens",
                                    "--mamba-cache-mode",
                                    "--mamba-cache-dtype",
                                    "--mamba-ssm-cache-dtype",
                                    "--num-speculative-tokens",
                                    "--log-format",
                                    "--swap-space",
                                    "--kernel-block-alignment",
                                    "--engine-version",
                                    "--speculative-config",
                                    "--draft-config",
                                    "--gpu",
                                    "--pp-layer-partition"},
                                   {"--disable-hybrid-kv-cache-manager", "--async-scheduling", "--no-async-scheduling",
                                    "--enable-prefix-caching", "--no-enable-prefix-caching"}},
                           kHelp, out, err, rc);
    if (!a) return rc;
    if (!a->has("--kv-cache-memory")) {
        err << "kvbudget: error: vllm needs --kv-cache-memory SIZE (KV cache bytes per GPU)\n";
        return kUsage;
    }
    // One reading of the version gives the format, the error wordings and the MLA block sizes.
    auto rel = vllm_release(a->get("--engine-version", ""));
    if (!rel) {
        err << "kvbudget: error: " << rel.error().message << "\n";
        return kUsage;
    }
    auto fmt = a->has("--log-format") ? parse_vllm_log_format(a->get("--log-format")) : Result(rel->log_format);
    if (!fmt) {
        err << "kvbudget: error: " << fmt.error().message << "\n";
        return kUsage;
    }
    auto mode = parse_mamba_cache_mode(a->get("--mamba-cache-mode", "default"));
    if (!mode) {
        err << "kvbudget: error: " << mode.error().message << "\n";
        return kUsage;
    }
    auto loaded = load_model(a->positional[0], err);
    if (!loaded) return kRefused;
    std::optional<VllmSpeculative> spec_cfg;
    if (a->has("--speculative-config")) {
        auto sc = parse_vllm_speculative(a->get("--speculative-config"));
        if (!sc) {
            err << "kvbudget: error: " << sc.error().message << "\n";
            return kUsage;
        }
        std::optional<ModelSpec> draft;
        if (a->has("--draft-config")) {
            draft = load_model(a->get("--draft-config"), err);
            if (!draft) return kRefused;
        }
        auto with = vllm_with_drafter(*loaded, *sc, draft ? &*draft : nullptr);
        if (!with) {
            err << "kvbudget: error: " << with.error().message << "\n";
            return kRefused;
        }
        loaded = std::move(with.value());
        spec_cfg = *sc;
    } else if (a->has("--draft-config")) {
        err << "kvbudget: error: --draft-config needs --speculative-config (which method drafts)\n";
        return kUsage;
    }

    auto mem = get_size(*a, "--kv-cache-memory", 0, err);
    auto mml = get_context(*a, "--max-model-len", 0, err);
    auto bs = get_count(*a, "--block-size", 0, err);
    auto mbs = get_count(*a, "--mla-block-size", 0, err);
    auto tp = get_count(*a, a->has("-tp") ? "-tp" : "--tensor-parallel-size", 1, err);
    auto pp = get_count(*a, a->has("-pp") ? "-pp" : "--pipeline-parallel-size", 1, err);
    auto mnbt = get_count(*a, "--max-num-batched-tokens", 0, err);
    auto spec = get_count(*a, "--num-speculative-tokens", 0, err);
    auto swap = get_size(*a, "--swap-space", int64_t(4) << 30, err);
    auto kba = get_count(*a, "--kernel-block-alignment", 0, err);
    if (!mem || !mml || !bs || !mbs || !tp || !pp || !mnbt || !spec || !swap || !kba) return kRefused;
    if (a->has("--block-size") && *bs == 0) {
        err << "kvbudget: error: --block-size must be at least 1\n";
        return kRefused;
    }

    VllmOptions o;
    o.kv_cache_dtype = a->get("--kv-cache-dtype", "auto");
    o.block_size = *bs;
    o.mla_block_size = *mbs;
    o.tensor_parallel_size = *tp;
    o.pipeline_parallel_size = *pp;
    o.pp_layer_partition = a->get("--pp-layer-partition", "");
    o.max_model_len = *mml;
    o.max_num_batched_tokens = *mnbt;
    o.mamba_cache_mode = *mode;
    o.mamba_cache_dtype = a->get("--mamba-cache-dtype", "auto");
    o.mamba_ssm_cache_dtype = a->get("--mamba-ssm-cache-dtype", "auto");
    o.num_speculative_tokens = *spec;
    if (spec_cfg && !a->has("--num-speculative-tokens")) o.num_speculative_tokens = spec_cfg->num_speculative_tokens;
    o.disable_hybrid_kv_cache_manager = a->has("--disable-hybrid-kv-cache-manager");
    if (a->has("--async-scheduling")) o.async_scheduling = 1;
    if (a->has("--no-async-scheduling")) o.async_scheduling = 0;
    o.log_format = *fmt;
    o.swap_space_bytes = *swap;
    o.kernel_block_alignment = *kba;
    if (a->has("--gpu")) {
        const Gpu* g = find_gpu(a->get("--gpu"));
        if (!g) {
            err << "kvbudget: error: unknown GPU '" << a->get("--gpu") << "' (kvbudget gpus lists them)\n";
            return kRefused;
        }
        o.gpu_compute_capability = g->compute_capability;
    }
    if (a->has("--enable-prefix-caching")) o.enable_prefix_caching = 1;
    if (a->has("--no-enable-prefix-caching")) o.enable_prefix_caching = 0;
    // The release's rules; --log-format alone gives its format's line shape (current: one line), and the error
    // wordings follow the log format unless a release was named.
    const VllmOptions unset;
    apply_vllm_release(*rel, o);
    if (a->has("--log-format")) o.one_line_capacity = unset.one_line_capacity;
    if (!a->has("--engine-version")) o.error_wording = unset.error_wording;

    auto r = vllm_capacity(*loaded, o, *mem);
    if (!r) {
        // One kvbudget line first (what scripts and the other commands lead with), then vLLM's own text.
        if (r.error().code == "vllm_refused")
            err << "kvbudget: error: " << render_english(note("vllm_refuses_settings")) << "\n"
                << (r.error().message.rfind("AssertionError: ", 0) == 0 ? "" : "ValueError: ") << r.error().message
                << "\n";
        else
            err << "kvbudget: error: " << r.error().message << "\n";
        return kRefused;
    }
    const VllmCapacity& c = r.value();
    const VllmLayout& L = c.layout;

    if (a->has("--json")) {
        out << to_json_text(*loaded, c) << "\n";
        return c.fits ? kOk : kRefused;
    }

    for (const auto& line : c.log_lines) out << line << "\n";
    for (const auto& n : loaded->notes) err << "note: " << render_english(n) << "\n";
    for (const Message& n : L.notes) err << "note: " << render_english(n) << "\n";
    if (!c.fits) {
        const Message lead = c.refusal.code.empty() ? note("vllm_refuses_settings") : c.refusal;
        err << "kvbudget: error: " << render_english(lead) << "\n";
        err << "ValueError: " << c.error_text << "\n";
        return kRefused;
    }
    return kOk;
}

}  // namespace kvb::cli
