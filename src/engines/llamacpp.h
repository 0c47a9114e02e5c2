// llama.cpp KV-cache semantics: context padding, per-sequence streams, the
// separate sliding-window cache (llama-kv-cache-iswa.cpp), MLA caching K only,
// always-f32 recurrent state (llama-memory-recurrent.cpp), and the exact
// "llama_kv_cache: size = ..." / "llama_memory_recurrent: size = ..." lines.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/model.h"

namespace kvb {

// Which build's log lines to print. Every boundary is a build of ggml-org/llama.cpp (bNNNN = the
// number of commits on master, `git rev-list --count`), read in its history (docs/engine-kv-spec.md).
enum class LlamaLogFormat {
    Current,                // b10660 on (#27742): recurrent line "... %2u seqs %2u rs_seq), R ..., S ..., P (f32): ..."
    RsSeq,                  // b9180..b10659 (#22673): "... %2u seqs %2u rs_seq), R ..., S ..." (no P)
    Y2025,                  // b6233..b9179 (#15467): "llama_kv_cache:" and recurrent "... %2u seqs), R ..., S ..."
    Unified,                // up to b5912: "llama_kv_cache_unified: ... %2u seqs)", one stream for all sequences
    UnifiedStreams,         // b6072..b6232 (#15040): still "llama_kv_cache_unified:", with per-sequence streams
                            // and "%2u/%u seqs" ("1/1 seqs")
    UnifiedStreamsAligned,  // b5913..b6071 (#14363): per-sequence streams, "%2u/%2u seqs" (" 1/ 1 seqs")
};
// current|rs-seq|2025|unified-streams|unified-streams-aligned|legacy
Result<LlamaLogFormat> parse_llama_log_format(const std::string& s);

// What one llama.cpp build prints and allocates, derived from its build number ("b6699", "6699",
// "6699 (c08002a1)" -> 6699; "" = the newest). Forks count their own commits too, so a
// fork's number can sit past a change its code does not have: a log's own lines win where they show it.
// The newest build whose source the table above was checked against: b10678 (6fe749801, #27880,
// 2026-08-28). A later build is sized with the newest rules, and says so (note llama_build_newer).
constexpr int64_t kLlamaNewestKnownBuild = 10678;

struct LlamaBuild {
    int64_t build = 0;  // 0: the newest
    LlamaLogFormat log_format = LlamaLogFormat::Current;
    // Context padding: up to b6867 n_ctx (and each stream's share) was padded to 256 with flash
    // attention, 32 without (llama_kv_cache::get_padding); b6868..b6974 (#16812) not at all; from
    // b6975 (#17046) always to 256.
    bool unpadded_ctx = false;
    // b6975 on (#17046): the SWA cache is GGML_PAD(min(n_ctx_seq, n_swa x seqs + n_ubatch), 256);
    // before, min(n_ctx_seq, GGML_PAD(n_swa x seqs + n_ubatch, n_pad)).
    bool swa_pad_256 = true;
    // Before b7832 (#19067, V-less cache) MLA models cached a kv_lora_rank-wide V beside K.
    bool mla_v_cache = false;
    // From b9180 (#22673): recurrent rollback snapshots (n_rs_seq) and the "rs_seq" field.
    bool rs_seq = true;
    // From b6925 (#16736, cd5e3b575): llama-server caps each slot's context at the model's training
    // context (server_context: n_ctx_slot = min(llama_n_ctx_seq, n_ctx_train), warning "the slot
    // context (%d) exceeds the training context of the model (%d) - capping"), and with -np left
    // out it runs 4 slots over a unified cache (b6925..b7432: -np 1 without -kvu became that; from
    // b7433, #17997: -np defaults to -1 = auto). Before, one slot and the whole n_ctx_seq.
    bool slot_cap = true;
    // The function the capping warning names: init() up to b7491, load_model() from b7492 (#18228).
    std::string slot_cap_fn = "load_model";
    // ggml-org/llama.cpp#28030 (merged 2026-08-30): under YaRN with a scale other than the GGUF's,
    // llama_init_from_model sets n_ctx_train = n_ctx_orig_yarn / rope_freq_scale, so the slot cap
    // follows --yarn-orig-ctx x --rope-scale. b10754 has it, b10678 not; the builds between are
    // taken as without it (the first one with it is not pinned).
    bool yarn_ctx_train = true;
    // DeepSeek sparse attention's indexer key cache (llama_kv_cache_dsa): DeepSeek-V3.2 (deepseek32)
    // from b9411 (#23346), GLM-5 (glm-dsa) from b10119 (#25407), on every trunk layer; from b10243
    // (#26474) glm-dsa keeps it only on the layers whose indexer is "full".
    bool dsa_cache = true;
    bool glm_dsa_cache = true;
    bool msa_cache = true;  // MiniMax-M3's llama_kv_cache_msa (b10144 on; before, no minimax-m3 at all)
    bool glm_dsa_full_only = true;
    // From b6325 (#15434) -fa takes a value (on|off|auto, default auto); before, a bare -fa turned flash attention
    // on (default off). A quantized V cache needs it: llama_init_from_model refuses one without flash attention, and
    // under auto before b10206 (#25871, which turns auto into on for a quantized V) the probe could leave it off and
    // the context stops with "quantized V cache was requested, but this requires Flash Attention".
    bool fa_takes_value = true;
};
Result<LlamaBuild> llama_build(const std::string& version);
// The log format of a llama.cpp build (llama_build(version).log_format).
Result<LlamaLogFormat> llama_log_format_for_version(const std::string& version);

// llama.cpp's n_ctx_train as the server caps slots with it: the GGUF's context_length (the config's
// max_position_embeddings, as convert_hf_to_gguf.py writes it), or, on a build with #28030 and a
// user's YaRN whose factor differs from the GGUF's own (rope.scaling.factor, written for a config's
// yarn / linear scaling), n_ctx_orig_yarn / rope_freq_scale in llama.cpp's float arithmetic.
// `gguf_model`: the model as converted (its config's rope_scaling); `user`: --rope-scaling (nullptr: none).
int64_t llamacpp_n_ctx_train(const ModelSpec& gguf_model, const RopeScaling* user, const LlamaBuild& b);
// The server's warning when a slot's context exceeds it, as SRV_WRN prints it ("srv  %12.*s: ").
std::string llamacpp_slot_cap_line(const LlamaBuild& b, int64_t n_ctx_slot, int64_t n_ctx_train);

struct LlamaOptions {
    int64_t n_ctx = 0;           // -c; 0 = the model's training context (max_position_embeddings)
    int64_t n_seq_max = 1;       // -np (llama-server's automatic default is 4 slots with a unified cache)
    bool kv_unified = false;     // --kv-unified: one stream shared by all sequences
    std::string type_k = "f16";  // -ctk
    std::string type_v = "f16";  // -ctv
    bool swa_full = false;       // --swa-full: SWA cache as large as the context
    int64_t n_ubatch = 512;      // -ub
    int64_t n_pad = 256;         // context padding (older builds: 32 without flash attention)
    bool mla_v_cache = false;    // older builds also cached a kv_lora_rank-wide V for MLA models
    // Recurrent-state rollback snapshots per sequence (cparams.n_rs_seq): a speculative draft's
    // rejected tokens are undone from them, so each sequence keeps 1 + n_rs_seq rows of R and S.
    // Only builds whose recurrent line prints "rs_seq" have them (LlamaLogFormat Current / RsSeq).
    int64_t n_rs_seq = 0;
    LlamaLogFormat log_format = LlamaLogFormat::Current;
    // A build past kLlamaNewestKnownBuild: its number, for the note that the newest known rules size it.
    int64_t newer_build = 0;
    // The SWA cache's rounding: true from b6975 (pad the capped size to 256), false before (pad to
    // n_pad, then cap). Builds that print "llama_kv_cache_unified" (up to b6232) round the old way
    // whatever this says.
    bool swa_pad_256 = true;
    // The indexer key cache of DeepSeek sparse attention (LlamaBuild::dsa_cache and the GLM rules).
    bool dsa_cache = true;
    bool glm_dsa_cache = true;
    bool msa_cache = true;  // MiniMax-M3 (minimax-m3, llama_kv_cache_msa): b10144 on
    bool glm_dsa_full_only = true;
    // From b6325 (#15434) -fa takes a value (on|off|auto, default auto); before, a bare -fa turned flash attention
    // on (default off). A quantized V cache needs it: llama_init_from_model refuses one without flash attention, and
    // under auto before b10206 (#25871, which turns auto into on for a quantized V) the probe could leave it off and
    // the context stops with "quantized V cache was requested, but this requires Flash Attention".
    bool fa_takes_value = true;
};

// Sets what `b` derives on top of the caller's options: the log format (a --log-format replaces it
// afterwards), the SWA rounding, no context padding in b6868..b6974, the MLA V cache of builds
// before b7832 (an explicit --mla-v stays on), and a build newer than the table (its note).
void apply_llama_build(const LlamaBuild& b, LlamaOptions& o);

// One llama_kv_cache instance (the only one, or the non-SWA / SWA half of an iswa cache).
struct LlamaKvCache {
    std::string role;   // "kv", "non-SWA", "SWA"
    int64_t cells = 0;  // kv_size per stream
    int64_t layers = 0;
    int64_t n_seq_max = 1;
    int64_t n_stream = 1;
    std::string type_k, type_v;
    int64_t k_bytes = 0, v_bytes = 0;  // whole cache, all streams
    int64_t bytes_per_cell = 0;        // K+V of one cell summed over this cache's layers (one stream)
    int64_t window = 0;                // SWA: n_swa
};

struct LlamaRecurrent {
    bool present = false;
    int64_t cells = 0;          // mem_size = max(1, n_seq_max)
    int64_t n_rs_seq = 0;       // rollback snapshots per sequence: rows = cells x (1 + n_rs_seq)
    int64_t layers_logged = 0;  // the line counts every layer of the model
    int64_t state_layers = 0;   // layers that really hold state
    int64_t n_seq_max = 1;
    int64_t r_bytes = 0, s_bytes = 0;  // always f32
};

struct LlamaLayout {
    int64_t n_ctx_requested = 0;
    int64_t n_ctx = 0;      // after padding (and rounding to a multiple of n_seq_max per stream)
    int64_t n_ctx_seq = 0;  // cells per stream of the non-SWA cache
    int64_t n_seq_max = 1;
    int64_t n_stream = 1;
    bool unified = false;
    std::vector<LlamaKvCache> caches;
    LlamaRecurrent recurrent;
    int64_t kv_bytes = 0;                // all KV caches
    int64_t total_bytes = 0;             // KV + recurrent
    int64_t bytes_per_token = 0;         // what one more cell costs in the context-sized cache(s), one stream
    std::vector<std::string> log_lines;  // exactly as llama.cpp prints them (without the timestamp prefix)
    std::vector<Message> notes;          // what kvbudget decided or llama_context warns about
};

Result<LlamaLayout> llamacpp_layout(const ModelSpec& m, const LlamaOptions& o);
// The model's layers as llama.cpp caches them: when every attention layer slides (Mistral-7B-v0.1,
// read as "llama") there is no SWA cache and each layer keeps the whole context, so they are full
// layers here (note llama_all_swa); a mix keeps its windows (the iswa cache).
ModelSpec llamacpp_cached_view(const ModelSpec& m);

// llama.cpp's float formatting of a byte count in MiB: (float)bytes / (1024.0f * 1024.0f) with %7.2f.
std::string llamacpp_mib(int64_t bytes);

// ---- Speculative decoding (llamacpp_draft.cpp) ----
// llama-server's --spec-type (common/speculative.cpp common_speculative_type_from_name_map):
// draft-simple (a draft model, -md), draft-eagle3 (an EAGLE-3 draft model), draft-mtp (the
// model's own multi-token-prediction block), ngram-* (no model, no cache).
enum class LlamaSpecType { None, DraftSimple, DraftEagle3, DraftMtp, Ngram };
Result<LlamaSpecType> parse_llama_spec_type(const std::string& s);
const char* to_string(LlamaSpecType t);

struct LlamaDraftOptions {
    LlamaSpecType type = LlamaSpecType::None;
    int64_t n_max = 3;           // --spec-draft-n-max (common_params_speculative_draft::n_max)
    std::string type_k = "f16";  // -ctkd
    std::string type_v = "f16";  // -ctvd
    // Builds before ggml-org/llama.cpp#22787 (May 2026): one draft context per server slot, each
    // of one sequence and -cd cells (0: the slot's n_ctx_seq), instead of one shared context.
    bool per_slot = false;
    int64_t n_ctx = 0;  // -cd (per_slot builds; later builds size the draft like the target)
};

// need_n_rs_seq() in common/common.h: a target drafted by MTP, EAGLE-3 (or DFlash) keeps n_max
// rollback snapshots per sequence; draft-simple and ngram none.
int64_t llamacpp_n_rs_seq(const LlamaDraftOptions& d);

// The model an MTP draft context caches: the target's nextn layers (GGUF nextn_predict_layers,
// config num_nextn_predict_layers / mtp_num_hidden_layers; Qwen3-Next's config names none but its
// checkpoint holds one block, which the converter counts), each with the geometry of the
// target's last full-attention layer. Refused when the model carries no MTP block, or when it is a
// config whose block llama.cpp's converter drops (llamacpp_config_mtp).
Result<ModelSpec> llamacpp_mtp_model(const ModelSpec& target);

// Whether a config's MTP block survives llama.cpp's converter (convert_hf_to_gguf.py keeps
// it for Qwen3.5 / Qwen3.5-MoE, Qwen3-Next (from b10238), DeepSeek-V3.2, GLM-4.5 / 4.6, GLM-4.7-Flash
// and GLM-5; DeepSeek-V2/V3, Kimi K2 / K2.5 GGUFs have none): true for those, for a GGUF and for a model
// that declares none; otherwise the refusal (llama_spec_mtp_dropped, or llama_spec_mtp_unknown for
// other model_types).
Result<bool> llamacpp_config_mtp(const ModelSpec& m);

// Whether the llama.cpp build `version` (--engine-version: "b10237", "10237"; "" = the newest)
// runs draft-mtp on `m`: DeepSeek-V3.2's MTP graph (llama_model_deepseek32, ggml-org/llama.cpp
// #26457) arrived in b10237 and Qwen3-Next's (converter and graph, #25589) in b10238; an older build
// refuses (llama_spec_mtp_build). Families whose first MTP build is not pinned are let through.
Result<bool> llamacpp_mtp_build_ok(const ModelSpec& m, const std::string& version);

// The draft context's model for speculative type `type`: the target's own MTP block (draft-mtp;
// refused where the converter drops it or before the build that runs it), the -md model `md`
// (draft-simple, draft-eagle3: llama_spec_needs_draft without one), or none (n-gram, no drafting).
// `target` is llamacpp_target's. The budget and `kvbudget llamacpp` both ask here.
Result<std::optional<ModelSpec>> llamacpp_draft_model(const ModelSpec& target, LlamaSpecType type, const ModelSpec* md,
                                                      const std::string& engine_version);

// The target as llama.cpp loads it for `spec`: with draft-mtp, a config's MTP block is appended as
// the GGUF that draft-mtp needs holds it (llama.cpp's converter, conversion/qwen.py _Qwen35MtpMixin,
// adds mtp_num_hidden_layers to block_count): cache-less layers (kind None, Layer::nextn) that
// -ngl and the recurrent line count and whose weights are loaded with the target's. A GGUF already
// carries them; other spec types get the model as it is. Every face (kvbudget llamacpp, budget)
// takes its layer count from here.
ModelSpec llamacpp_target(const ModelSpec& m, LlamaSpecType spec);

struct LlamaDraft {
    LlamaSpecType type = LlamaSpecType::None;
    int64_t contexts = 0;     // draft contexts (per_slot builds: one per slot)
    int64_t layers = 0;       // the draft model's layers (draft-mtp: the nextn layers it caches)
    LlamaLayout layout;       // one draft context
    int64_t total_bytes = 0;  // all draft contexts
};
// The draft context(s) llama-server creates next to the target (common_speculative_init_result:
// n_ctx = the target's n_ctx, n_seq_max and kv_unified as the target's, -ctkd / -ctvd, no
// rollback snapshots). `draft`: the draft model (draft-simple / draft-eagle3) or
// llamacpp_mtp_model(target) (draft-mtp). Ngram types have none (contexts 0).
Result<LlamaDraft> llamacpp_draft(const ModelSpec& draft, const LlamaLayout& target, const LlamaOptions& target_options,
                                  const LlamaDraftOptions& d);

}  // namespace kvb
