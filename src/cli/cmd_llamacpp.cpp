// kvbudget llamacpp: the llama_kv_cache / llama_memory_recurrent lines llama.cpp
// prints for -c / -np / -ctk / -ctv, including the separate sliding-window cache.
#include <iostream>
#include <optional>

#include "args.h"
#include "base/units.h"
#include "commands.h"
#include "engines/llamacpp.h"
#include "report/engine_json.h"

namespace kvb::cli {

namespace {

const char* kHelp =
    R"(Usage: kvbudget llamacpp CONFIG -c N [-np N] [--kv-unified] [-ctk T] [-ctv T] [--swa-full] [-ub N] [--json]

Prints the KV cache lines llama.cpp logs when it creates the context, e.g.
  llama_kv_cache: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (f16):  512.00 MiB, V (f16):  512.00 MiB
plus its sliding-window cache and recurrent state (llama_memory_recurrent, always f32).

  -c, --ctx-size N      context (padded to 256; 0 = the model's training context)
  -np, --parallel N     sequences (slots); without --kv-unified each gets its own stream
                        of GGML_PAD(n_ctx / N, 256) cells (llama-server's automatic
                        default is 4 slots with a unified cache: pass -np 4 --kv-unified)
  -kvu, --kv-unified    one cache stream shared by all sequences
  -ctk, --cache-type-k T   f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl (default f16)
  -ctv, --cache-type-v T   same choices (quantized V needs flash attention in llama.cpp)
  --swa-full            sliding-window cache as large as the context
  -ub, --ubatch-size N  physical batch (default 512): the SWA cache keeps n_swa + n_ubatch cells
  --mla-v               builds before b7832: also cache the kv_lora_rank-wide V of MLA models
  --no-fa-padding       builds before b6868 without flash attention padded the context to 32
  --log-format F        the lines' wording only: current (b10660 on), rs-seq (b9180-b10659),
                        2025 (b6233-b9179: llama_kv_cache:, no rs_seq), unified-streams
                        (b6072-b6232: llama_kv_cache_unified: "1/1 seqs"), unified-streams-aligned
                        (b5913-b6071: " 1/ 1 seqs"), legacy (up to b5912: "1 seqs", one stream)
  --engine-version B    the llama.cpp build (b5712, b6500, b10700): sets the log format and the
                        sizing rules of its time (context and SWA padding, MLA's V cache, rs_seq)

Speculative decoding (llama-server's flags; the draft context's lines follow the target's):
  --spec-type T         draft-simple | draft-eagle3 (need -md) | draft-mtp (the model's MTP layers) |
                        ngram-simple | ngram-map-k | ngram-map-k4v | ngram-mod | ngram-cache
  -md, --model-draft CONFIG   the draft model (config.json or .gguf); alone it means draft-simple
  --spec-draft-n-max N  tokens drafted (default 3); MTP and EAGLE-3 keep as many recurrent-state
                        rollback snapshots per sequence (n_rs_seq; --log-format current or rs-seq)
  -ctkd T, -ctvd T      the draft context's K and V cache types (default f16)
  --draft-per-slot      builds before ggml-org/llama.cpp#22787 (May 2026): one draft context per slot
  -cd, --ctx-size-draft N   with --draft-per-slot: each draft context's cells (0 = the slot's)
)";

}  // namespace

int cmd_llamacpp(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    int rc = kOk;
    auto a =
        parse_command("llamacpp", argv,
                      ArgSpec{{"-c",
                               "--ctx-size",
                               "-np",
                               "--parallel",
                               "-ctk",
                               "--cache-type-k",
                               "-ctv",
                               "--cache-type-v",
                               "-ub",
                               "--ubatch-size",
                               "--log-format",
                               "--engine-version",
                               "--spec-type",
                               "-md",
                               "--model-draft",
                               "--spec-draft-n-max",
                               "-ctkd",
                               "-ctvd",
                               "-cd",
                               "--ctx-size-draft"},
                              {"--kv-unified", "-kvu", "--swa-full", "--mla-v", "--no-fa-padding", "--draft-per-slot"}},
                      kHelp, out, err, rc);
    if (!a) return rc;
    auto pick = [&](const char* s, const char* l) { return a->has(s) ? std::string(s) : std::string(l); };
    if (!a->has("-c") && !a->has("--ctx-size")) {
        err << "kvbudget: error: llamacpp needs -c N (0 = the model's training context)\n";
        return kUsage;
    }
    // The build decides the line formats and the sizing rules of its time; --log-format only the format.
    auto build = llama_build(a->get("--engine-version", ""));
    if (!build) {
        err << "kvbudget: error: " << build.error().message << "\n";
        return kUsage;
    }
    auto fmt = a->has("--log-format") ? parse_llama_log_format(a->get("--log-format"))
                                      : Result<LlamaLogFormat>(build->log_format);
    if (!fmt) {
        err << "kvbudget: error: " << fmt.error().message << "\n";
        return kUsage;
    }
    auto read = load_model(a->positional[0], err);
    if (!read) return kRefused;
    auto c = get_context(*a, pick("-c", "--ctx-size"), 0, err);
    auto np = get_count(*a, pick("-np", "--parallel"), 1, err);
    auto ub = get_count(*a, pick("-ub", "--ubatch-size"), 512, err);
    auto n_max = get_count(*a, "--spec-draft-n-max", 3, err);
    auto cd = get_count(*a, pick("-cd", "--ctx-size-draft"), 0, err);
    if (!c || !np || !ub || !n_max || !cd) return kRefused;
    LlamaDraftOptions d;
    const bool has_md = a->has("-md") || a->has("--model-draft");
    auto st = parse_llama_spec_type(a->get("--spec-type", has_md ? "draft-simple" : ""));
    if (!st) {
        err << "kvbudget: error: " << st.error().message << "\n";
        return kUsage;
    }
    d.type = st.value();
    // The target as llama.cpp loads it: a config's MTP block counts among its layers with draft-mtp.
    const std::optional<ModelSpec> loaded = llamacpp_target(*read, d.type);
    d.n_max = *n_max;
    d.type_k = a->get("-ctkd", "f16");
    d.type_v = a->get("-ctvd", "f16");
    d.per_slot = a->has("--draft-per-slot");
    d.n_ctx = *cd;

    LlamaOptions o;
    o.n_ctx = *c;
    o.n_seq_max = *np;
    o.kv_unified = a->has("--kv-unified") || a->has("-kvu");
    o.type_k = a->get(pick("-ctk", "--cache-type-k"), "f16");
    o.type_v = a->get(pick("-ctv", "--cache-type-v"), "f16");
    o.swa_full = a->has("--swa-full");
    o.n_ubatch = *ub;
    o.mla_v_cache = a->has("--mla-v");
    o.n_pad = a->has("--no-fa-padding") ? 32 : 256;
    apply_llama_build(*build, o);
    o.log_format = *fmt;
    o.n_rs_seq = llamacpp_n_rs_seq(d);

    // The draft context's own cache: a draft model's, or the model's MTP layers.
    std::optional<ModelSpec> md;
    if (d.type == LlamaSpecType::DraftSimple || d.type == LlamaSpecType::DraftEagle3) {
        if (!has_md) {
            err << "kvbudget: error: --spec-type " << to_string(d.type) << " needs the draft model: -md CONFIG\n";
            return kUsage;
        }
        md = load_model(a->get(a->has("-md") ? "-md" : "--model-draft"), err);
        if (!md) return kRefused;
    }
    auto dm = llamacpp_draft_model(*loaded, d.type, md ? &*md : nullptr, a->get("--engine-version", ""));
    if (!dm) {
        err << "kvbudget: error: " << dm.error().message << "\n";
        return kRefused;
    }
    const std::optional<ModelSpec>& draft = dm.value();
    auto r = llamacpp_layout(*loaded, o);
    if (!r) {
        err << "kvbudget: error: " << r.error().message << "\n";
        return kRefused;
    }
    const LlamaLayout& L = r.value();
    LlamaDraft dr;
    dr.type = d.type;
    if (draft) {
        auto made = llamacpp_draft(*draft, L, o, d);
        if (!made) {
            err << "kvbudget: error: " << made.error().message << "\n";
            return kRefused;
        }
        dr = std::move(made.value());
    }
    if (a->has("--json")) {
        out << to_json_text(*loaded, L, dr) << "\n";
        return kOk;
    }
    for (const auto& line : L.log_lines) out << line << "\n";
    for (int64_t i = 0; i < dr.contexts; ++i)
        for (const auto& line : dr.layout.log_lines) out << line << "\n";
    for (const auto& n : loaded->notes) err << "note: " << render_english(n) << "\n";
    for (const Message& n : L.notes) err << "note: " << render_english(n) << "\n";
    return kOk;
}

}  // namespace kvb::cli
