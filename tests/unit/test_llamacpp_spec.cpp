// llama.cpp speculative decoding: the target's recurrent rollback snapshots (n_rs_seq), the
// draft context's own KV cache (a draft model, or the model's MTP layers), and the budget
// that counts both (llamacpp_draft.cpp, budget_llamacpp.cpp).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "budget/budget.h"
#include "engines/llamacpp.h"
#include "fixtures.h"
#include "model/weights.h"

using namespace kvb;
using kvb::test::fixture;
using kvb::test::full;
using kvb::test::gdn;

namespace {

constexpr int64_t MiB = 1024 * 1024;

LlamaLayout lay(const ModelSpec& m, const LlamaOptions& o) {
    auto r = llamacpp_layout(m, o);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

// Qwen3.6-35B-A3B as its MTP GGUF holds it (the geometry of S1 in engine-logs.md): 40 layers,
// full attention every 4th (2 KV heads x 256), gated delta net 16 / 32 heads x 128, kernel 4,
// and the MTP layer the GGUF counts in block_count (no cache in the target context).
ModelSpec qwen36_mtp() {
    ModelSpec m;
    m.name = "Qwen3.6-35B-A3B (hand-built)";
    m.model_type = "qwen3_5_moe_text";  // a family whose converter keeps the MTP block
    m.dtype = "bfloat16";
    m.ssm_dtype = "float32";
    m.max_position_embeddings = 262144;
    m.dims.num_attention_heads = 16;
    m.dims.hidden_size = 2048;  // the budget's estimates need the model's widths
    m.dims.vocab_size = 248320;
    m.dims.intermediate_size = 512;
    for (int i = 0; i < 40; ++i) m.layers.push_back(i % 4 == 3 ? full(2, 256) : gdn(16, 32, 128));
    Layer mtp;
    mtp.kind = LayerKind::None;
    m.layers.push_back(mtp);
    m.notes.push_back(note("mtp", {{"field", "num_nextn_predict_layers"}, {"n", "1"}}));
    return m;
}

BudgetResult budget(const ModelSpec& m, const BudgetInputs& in, const ModelSpec* draft = nullptr) {
    auto r = compute_budget(m, in, draft);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

}  // namespace

TEST_CASE("n_rs_seq: every sequence keeps 1 + n_rs_seq rows of recurrent state (PR #23269's line)") {
    LlamaOptions o;
    o.n_ctx = 65536;
    o.n_rs_seq = 2;
    o.log_format = LlamaLogFormat::RsSeq;
    const LlamaLayout L = lay(qwen36_mtp(), o);
    CHECK(L.recurrent.n_rs_seq == 2);
    CHECK(L.recurrent.r_bytes == 30 * 98304 * 3);
    CHECK(L.recurrent.s_bytes == 30 * 2097152LL * 3);
    REQUIRE(L.log_lines.size() == 2);
    CHECK(L.log_lines[0] ==
          "llama_kv_cache: size = 1280.00 MiB ( 65536 cells,  10 layers,  1/1 seqs), K (f16):  640.00 MiB, V (f16):  "
          "640.00 MiB");
    CHECK(L.log_lines[1] ==
          "llama_memory_recurrent: size =  188.44 MiB (     1 cells,  41 layers,  1 seqs  2 rs_seq), R (f32):    8.44 "
          "MiB, S (f32):  180.00 MiB");
    o.n_rs_seq = 0;
    CHECK(lay(qwen36_mtp(), o).log_lines[1] ==
          "llama_memory_recurrent: size =   62.81 MiB (     1 cells,  41 layers,  1 seqs  0 rs_seq), R (f32):    2.81 "
          "MiB, S (f32):   60.00 MiB");
}

TEST_CASE("n_rs_seq: refused out of range and in builds without rollback snapshots") {
    LlamaOptions o;
    o.n_ctx = 4096;
    o.n_rs_seq = 1025;
    auto r = llamacpp_layout(qwen36_mtp(), o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "n_rs_seq 1025 is out of range (0 to 1024 rollback snapshots per sequence)");
    o.n_rs_seq = 3;
    o.log_format = LlamaLogFormat::Y2025;
    r = llamacpp_layout(qwen36_mtp(), o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message ==
          "recurrent rollback snapshots (n_rs_seq 3) exist only from build b9180 (ggml-org/llama.cpp#22673), whose "
          "recurrent line prints rs_seq; this build or log format has none");
    // A model without recurrent state has nothing to snapshot: any build runs it (DeepSeek-V3.2 with draft-mtp).
    CHECK(llamacpp_layout(fixture("deepseek-ai/DeepSeek-V3.2"), o).ok());
}

TEST_CASE("--spec-type names and need_n_rs_seq") {
    CHECK(parse_llama_spec_type("draft-mtp").value() == LlamaSpecType::DraftMtp);
    CHECK(parse_llama_spec_type("ngram-mod").value() == LlamaSpecType::Ngram);
    CHECK(parse_llama_spec_type("").value() == LlamaSpecType::None);
    auto bad = parse_llama_spec_type("eagle");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message ==
          "--spec-type eagle is not one of llama.cpp's: draft-simple, draft-eagle3, draft-mtp, ngram-simple, "
          "ngram-map-k, ngram-map-k4v, ngram-mod, ngram-cache");
    LlamaDraftOptions d;
    d.n_max = 5;
    d.type = LlamaSpecType::DraftMtp;
    CHECK(llamacpp_n_rs_seq(d) == 5);
    d.type = LlamaSpecType::DraftEagle3;
    CHECK(llamacpp_n_rs_seq(d) == 5);
    d.type = LlamaSpecType::DraftSimple;  // a draft model rolls back by checkpoints, not snapshots
    CHECK(llamacpp_n_rs_seq(d) == 0);
}

TEST_CASE("an MTP draft context caches only the nextn layers, as the target's last full-attention layer") {
    // DeepSeek-V3.2 (deepseek.py's DeepseekV32Model keeps its MTP layer): num_nextn_predict_layers 1,
    // an MLA layer: K 512 + 64 wide, no V.
    const ModelSpec v3 = fixture("deepseek-ai/DeepSeek-V3.2");
    auto mtp = llamacpp_mtp_model(v3);
    REQUIRE(mtp.ok());
    REQUIRE(mtp->layers.size() == 1);
    CHECK(mtp->layers[0].kind == LayerKind::Mla);
    LlamaOptions o;
    o.n_ctx = 4096;
    const LlamaLayout target = lay(v3, o);
    LlamaDraftOptions d;
    d.type = LlamaSpecType::DraftMtp;
    auto dr = llamacpp_draft(mtp.value(), target, o, d);
    REQUIRE(dr.ok());
    CHECK(dr->contexts == 1);
    CHECK(dr->total_bytes == 4096 * 576 * 2);
    REQUIRE(dr->layout.log_lines.size() == 1);
    CHECK(dr->layout.log_lines[0] ==
          "llama_kv_cache: size =    4.50 MiB (  4096 cells,   1 layers,  1/1 seqs), K (f16):    4.50 MiB, V (f16):    "
          "0.00 MiB");
    auto none = llamacpp_mtp_model(fixture("Qwen/Qwen3-8B"));
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message ==
          "Qwen/Qwen3-8B carries no multi-token-prediction block (nextn_predict_layers): --spec-type draft-mtp needs a "
          "GGUF or config that has one");
}

TEST_CASE(
    "a draft model's context: the target's n_ctx and sequences (one shared context), or one per slot before #22787") {
    const ModelSpec target = fixture("Qwen/Qwen3-8B");
    const ModelSpec draft = fixture("Qwen/Qwen3-0.6B");  // 28 layers, 8 KV heads x 128
    LlamaOptions o;
    o.n_ctx = 32768;
    o.n_seq_max = 4;
    const LlamaLayout t = lay(target, o);
    CHECK(t.n_ctx_seq == 8192);
    LlamaDraftOptions d;
    d.type = LlamaSpecType::DraftSimple;
    auto shared = llamacpp_draft(draft, t, o, d);
    REQUIRE(shared.ok());
    CHECK(shared->contexts == 1);
    CHECK(shared->total_bytes == 28LL * 32768 * 4096);  // 3584 MiB
    CHECK(shared->layout.log_lines[0] ==
          "llama_kv_cache: size = 3584.00 MiB (  8192 cells,  28 layers,  4/4 seqs), K (f16): 1792.00 MiB, V (f16): "
          "1792.00 MiB");
    d.per_slot = true;
    auto slots = llamacpp_draft(draft, t, o, d);
    REQUIRE(slots.ok());
    CHECK(slots->contexts == 4);
    CHECK(slots->layout.n_ctx == 8192);
    CHECK(slots->total_bytes == 4 * 28LL * 8192 * 4096);
    d.n_ctx = 4096;  // -cd
    CHECK(llamacpp_draft(draft, t, o, d)->total_bytes == 4 * 28LL * 4096 * 4096);
    d.per_slot = false;
    d.n_ctx = 0;
    d.type_k = d.type_v = "q8_0";  // -ctkd / -ctvd
    CHECK(llamacpp_draft(draft, t, o, d)->total_bytes == 28LL * 32768 * 2 * 1088);
}

TEST_CASE("budget: the draft's KV joins the target's, MTP keeps rollback snapshots") {
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 24LL * 1000 * 1000 * 1000;
    in.weights = "Q4_K_M";
    in.context = 65536;
    in.spec_type = "draft-mtp";
    in.spec_draft_n_max = 2;
    const BudgetResult r = budget(qwen36_mtp(), in);
    CHECK(r.llama.recurrent.n_rs_seq == 2);
    CHECK(r.llama_draft.contexts == 1);
    CHECK(r.llama_draft.total_bytes == 128 * MiB);  // 1 layer x 65,536 cells x 2,048 B
    CHECK(r.llama.total_bytes == 1280 * MiB + 30 * (98304 + 2097152LL) * 3 + 128 * MiB);
    REQUIRE(r.log_lines.size() == 3);
    CHECK(r.log_lines[2] ==
          "llama_kv_cache: size =  128.00 MiB ( 65536 cells,   1 layers,  1/1 seqs), K (f16):   64.00 MiB, V (f16):   "
          "64.00 MiB");
    bool kv_note = false, rs_note = false;
    for (const Message& n : r.notes) {
        if (n.code == "llamacpp_draft_kv") {
            kv_note = true;
            CHECK(n.param("bytes") == "128.00 MiB");
            CHECK(n.param("layers") == "1");
        }
        if (n.code == "llamacpp_rs_seq") {
            rs_note = true;
            CHECK(n.param("bytes") == "188.44 MiB");
        }
    }
    CHECK(kv_note);
    CHECK(rs_note);

    // A draft model needs its config.
    in.spec_type = "draft-simple";
    auto refused = compute_budget(qwen36_mtp(), in, nullptr);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message ==
          "--spec-type draft-simple drafts with a separate model: give its config with -md (--model-draft)");
    // ngram drafting caches nothing and keeps no snapshots.
    in.spec_type = "ngram-mod";
    const BudgetResult ng = budget(qwen36_mtp(), in);
    CHECK(ng.llama_draft.contexts == 0);
    CHECK(ng.llama.recurrent.n_rs_seq == 0);
}

TEST_CASE("budget CLI: -md and --spec-draft-n-max, llama.cpp's own flags") {
    const std::string cfg = kvb::test::config_path("Qwen--Qwen3-8B");
    const std::string dft = kvb::test::config_path("Qwen--Qwen3-0.6B");
    auto r = kvb::test::run_cli("budget " + cfg +
                                " --engine llamacpp --gpu-memory 24GB --weights Q4_K_M --max-model-len 8192 -md " +
                                dft + " --json");
    CHECK(r.status == 0);
    CHECK(r.out.find("\"draft\":{\"bytes\":939524096,\"contexts\":1,") != std::string::npos);  // 28 x 8192 x 4096
    CHECK(r.out.find("\"spec_type\":\"draft-simple\"") != std::string::npos);
    auto v = kvb::test::run_cli("budget " + cfg + " --gpu-memory 24GB --spec-type draft-mtp");
    CHECK(v.status == 2);
    CHECK(v.out.find("--spec-type, -md, --spec-draft-n-max, -ctkd and -ctvd are llama.cpp's") != std::string::npos);
}

TEST_CASE("llamacpp CLI: the draft context's lines follow the target's; a model without MTP is refused first") {
    const std::string v3 = kvb::test::config_path("deepseek-ai--DeepSeek-V3.2");
    auto r = kvb::test::run_cli("llamacpp " + v3 + " -c 4096 --spec-type draft-mtp", false);
    CHECK(r.status == 0);
    // The target's DSA cache (main + indexer keys, llama_kv_cache_dsa), then the MTP context's plain one.
    CHECK(r.out ==
          "llama_kv_cache_dsa: creating main KV cache, size = 4096 cells\n"
          "llama_kv_cache: size =  274.50 MiB (  4096 cells,  61 layers,  1/1 seqs), K (f16):  274.50 MiB, V (f16):    "
          "0.00 MiB\n"
          "llama_kv_cache_dsa: creating indexer KV cache, size = 4096 cells\n"
          "llama_kv_cache: size =   61.00 MiB (  4096 cells,  61 layers,  1/1 seqs), K (f16):   61.00 MiB, V (f16):    "
          "0.00 MiB\n"
          "llama_kv_cache: size =    4.50 MiB (  4096 cells,   1 layers,  1/1 seqs), K (f16):    4.50 MiB, V (f16):    "
          "0.00 MiB\n");
    // Builds before ggml-org/llama.cpp#22787: one draft context per slot, each the slot's 8,192 cells.
    auto s = kvb::test::run_cli("llamacpp " + kvb::test::config_path("Qwen--Qwen3-8B") + " -c 32768 -np 4 -md " +
                                    kvb::test::config_path("Qwen--Qwen3-0.6B") + " --draft-per-slot",
                                false);
    CHECK(s.status == 0);
    size_t n = 0;
    for (size_t p = s.out.find(" 896.00 MiB (  8192 cells,  28 layers,  1/1 seqs)"); p != std::string::npos;
         p = s.out.find(" 896.00 MiB (  8192 cells,  28 layers,  1/1 seqs)", p + 1))
        ++n;
    CHECK(n == 4);
    auto plain =
        kvb::test::run_cli("llamacpp " + kvb::test::config_path("Qwen--Qwen3-8B") + " -c 4096 --spec-type draft-mtp");
    CHECK(plain.status == 1);
    CHECK(plain.out ==
          "kvbudget: error: Qwen/Qwen3-8B carries no multi-token-prediction block "
          "(nextn_predict_layers): --spec-type draft-mtp needs a GGUF or config that has one\n");
}

// A config's MTP block reaches llama-server only if llama.cpp's converter writes it into the GGUF:
// deepseek.py's DeepseekV2Model (DeepseekV2/V3ForCausalLM) has skip_mtp = True and drops every layer past
// num_hidden_layers; qwen.py's Qwen3NextModel drops mtp.*; _Qwen35MtpMixin keeps Qwen3.5's.
TEST_CASE("draft-mtp from a config: refused when llama.cpp's converter drops the MTP layers") {
    const std::string dropped =
        "deepseek-ai/DeepSeek-V3 (deepseek_v3): llama.cpp's converter drops its multi-token-prediction layers, so "
        "its GGUF has no nextn_predict_layers and llama-server cannot run --spec-type draft-mtp on it";
    const ModelSpec v3 = fixture("deepseek-ai/DeepSeek-V3");
    auto mtp = llamacpp_mtp_model(v3);
    REQUIRE_FALSE(mtp.ok());
    CHECK(mtp.error().code == "unsupported");
    CHECK(mtp.error().detail.code == "llama_spec_mtp_dropped");
    CHECK(mtp.error().message == dropped);
    // No MTP layer is appended to the target either: 61 layers, as its GGUF holds them.
    CHECK(llamacpp_target(v3, LlamaSpecType::DraftMtp).layers.size() == 61);
    // vLLM runs DeepSeek's MTP from the checkpoint itself: its drafter still has the one layer.
    CHECK(vllm_nextn_layers(v3) == 1);

    // budget: refused, not 11.6 B parameters of MTP weights that no GGUF carries.
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 8 * 80LL * 1024 * 1024 * 1024;
    in.weights = "Q4_K_M";
    in.context = 4096;
    in.spec_type = "draft-mtp";
    auto b = compute_budget(v3, in);
    REQUIRE_FALSE(b.ok());
    CHECK(b.error().message == dropped);
    auto r1 = llamacpp_mtp_model(fixture("deepseek-ai/DeepSeek-R1"));
    REQUIRE_FALSE(r1.ok());
    CHECK(r1.error().detail.code == "llama_spec_mtp_dropped");
    CHECK(r1.error().detail.param("type") == "deepseek_v3");

    auto cli = kvb::test::run_cli("llamacpp " + kvb::test::config_path("deepseek-ai--DeepSeek-V3") +
                                  " -c 4096 --spec-type draft-mtp");
    CHECK(cli.status == 1);
    CHECK(cli.out == "kvbudget: error: " + dropped + "\n");

    // Qwen3-Next's converter keeps its block since b10238 (#25589): a config that names the count is taken at
    // its word, as vLLM takes it.
    std::string next_text = kvb::test::fixture_text("Qwen/Qwen3-Next-80B-A3B-Thinking");
    next_text.insert(next_text.find('{') + 1, "\"mtp_num_hidden_layers\": 1,");
    auto next = parse_config(next_text, "Qwen/Qwen3-Next-80B-A3B-Thinking");
    REQUIRE(next.ok());
    CHECK(vllm_nextn_layers(next.value()) == 1);
    auto nm = llamacpp_mtp_model(next.value());
    REQUIRE(nm.ok());
    CHECK(nm->layers.size() == 1);

    // A model_type whose conversion kvbudget has not read: refused, pointing at the GGUF.
    std::string other = kvb::test::fixture_text("deepseek-ai/DeepSeek-V3");
    other.replace(other.find("\"deepseek_v3\""), 13, "\"mla_future\"");
    auto om = parse_config(other, "example/MLA-Future");
    REQUIRE(om.ok());
    auto unknown = llamacpp_mtp_model(om.value());
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().message ==
          "example/MLA-Future (mla_future): kvbudget does not know whether llama.cpp's converter keeps its "
          "multi-token-prediction layers (it does for Qwen3.5, Qwen3-Next, DeepSeek-V3.2, GLM-4.5 / 4.6, GLM-4.7-Flash "
          "and GLM-5): read its GGUF, whose nextn_predict_layers says");

    // Families whose converter keeps the block: Qwen3.5 (64 + 1 layers) and DeepSeek-V3.2 (61 + 1).
    const ModelSpec q35 = fixture("Qwen/Qwen3.5-27B");
    CHECK(llamacpp_config_mtp(q35).ok());
    CHECK(llamacpp_target(q35, LlamaSpecType::DraftMtp).layers.size() == 65);
    REQUIRE(llamacpp_mtp_model(q35).ok());
    const ModelSpec v32 = fixture("deepseek-ai/DeepSeek-V3.2");
    CHECK(llamacpp_target(v32, LlamaSpecType::DraftMtp).layers.size() == 62);
    // A model without any MTP block keeps its own refusal.
    CHECK(llamacpp_config_mtp(fixture("Qwen/Qwen3-8B")).ok());
}

// Qwen3.5's config names its MTP block mtp_num_hidden_layers (vLLM's qwen3_5_mtp reads it; llama.cpp's
// converter adds it to block_count and writes nextn_predict_layers): it is the model's MTP, as
// DeepSeek's num_nextn_predict_layers is.
TEST_CASE("Qwen3.5-27B: mtp_num_hidden_layers is its MTP block (llama.cpp draft-mtp, vLLM mtp)") {
    const ModelSpec m = fixture("Qwen/Qwen3.5-27B");
    bool noted = false;
    for (const Message& n : m.notes)
        if (n.code == "mtp") {
            noted = true;
            CHECK(n.param("field") == "mtp_num_hidden_layers");
            CHECK(n.param("n") == "1");
            CHECK(render_english(n) ==
                  "mtp_num_hidden_layers = 1: the multi-token-prediction layer is not counted (engines only cache it "
                  "with speculative decoding)");
        }
    CHECK(noted);
    CHECK(vllm_nextn_layers(m) == 1);

    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 80LL * 1024 * 1024 * 1024;
    in.weights = "Q4_K_M";
    in.context = 65536;
    in.spec_type = "draft-mtp";
    const BudgetResult r = budget(m, in);
    // The MTP layer has a full-attention layer's geometry: 4 KV heads x 256, f16 K and V: 4,096 B per cell.
    CHECK(r.llama_draft.contexts == 1);
    CHECK(r.llama_draft.total_bytes == 256 * MiB);
    CHECK(r.llama.recurrent.n_rs_seq == 3);  // --spec-draft-n-max's default
    // draft-mtp needs a GGUF with the MTP block, which the converter counts in block_count: the recurrent
    // line prints 64 + 1 layers (as PR #23269's 40 + 1); 48 gated-delta-net layers x (1 + 3) rows.
    REQUIRE(r.llama.log_lines.size() == 2);
    CHECK(r.llama.log_lines[1] ==
          "llama_memory_recurrent: size =  598.50 MiB (     1 cells,  65 layers,  1 seqs  3 rs_seq), R (f32):   22.50 "
          "MiB, S (f32):  576.00 MiB, P (f32):    0.00 MiB");
    CHECK(r.offload.n_slots == 66);
    REQUIRE_FALSE(r.llama_draft.layout.log_lines.empty());
    CHECK(r.llama_draft.layout.log_lines[0] ==
          "llama_kv_cache: size =  256.00 MiB ( 65536 cells,   1 layers,  1/1 seqs), K (f16):  128.00 MiB, V (f16):  "
          "128.00 MiB");

    // The same block's weights, loaded with the target's (load_block_mtp in llama.cpp's qwen35 loader): a gated
    // full-attention layer (q 5,120 x 12,288, k and v 5,120 x 1,024, o 6,144 x 5,120, q/k norms 256 each), its two
    // norms, the MLP (3 x 5,120 x 17,408), eh_proj 10,240 x 5,120 and enorm, hnorm, shared_head_norm:
    // 424,673,280 matrix and 26,112 vector elements. At Q8_0 (34 B per 32) with F32 vectors: 451,319,808 B.
    in.weights = "Q8_0";
    in.spec_type = "";
    const BudgetResult plain = budget(m, in);
    in.spec_type = "draft-mtp";
    const BudgetResult q8 = budget(m, in);
    CHECK(q8.weights.params - plain.weights.params == 424699392);
    CHECK(q8.weights.bytes - plain.weights.bytes == 451319808);
    CHECK(plain.offload.n_slots == 65);
    CHECK(q8.offload.n_slots == 66);
    // Every layer on the GPU, the MTP layer too: from a config each layer's bytes are its tensors' at their GGUF
    // types (offload.estimated: the loader's own padding aside), so the GPU's share grows by the block's bytes.
    CHECK(q8.offload.estimated);
    CHECK(q8.per_gpu.weights_bytes - plain.per_gpu.weights_bytes == 451319808);

    // kvbudget llamacpp says what budget says: 64 + 1 layers in the recurrent line, then the draft's one layer.
    auto cli = kvb::test::run_cli("llamacpp " + kvb::test::config_path("Qwen--Qwen3.5-27B") +
                                  " -c 65536 --spec-type draft-mtp");
    CHECK(cli.status == 0);
    CHECK(cli.out.find(r.llama.log_lines[1] + "\n") != std::string::npos);
    CHECK(cli.out.find(r.llama_draft.layout.log_lines[0] + "\n") != std::string::npos);
    CHECK(cli.out.find(" 65 layers,  1 seqs  3 rs_seq") != std::string::npos);

    // vLLM's MTP drafter: one layer of the target's full-attention geometry joins the pool.
    in = BudgetInputs{};
    in.gpu = "h100";
    in.context = 32768;
    in.speculative_config = R"({"method": "qwen3_5_mtp", "num_speculative_tokens": 1})";
    const BudgetResult v = budget(m, in);
    CHECK(v.drafter_params == 424699392);  // the block llama.cpp loads, counted the same way
    bool layers_note = false;
    for (const Message& n : v.notes)
        if (n.code == "vllm_drafter_layers") {
            layers_note = true;
            CHECK(n.param("layers") == "1");
        }
    CHECK(layers_note);
}

// GLM-4.5 / 4.5-Air / 4.6 (glm4_moe) carry num_nextn_predict_layers = 1: llama.cpp's converter keeps the block
// (conversion/glm.py Glm4MoeModel: block_count = num_hidden_layers + num_nextn_predict_layers, always), vLLM runs
// it as its Glm4MoeMTP drafter (method "mtp" / "glm4_moe_mtp"). Runs without drafting do not change.
TEST_CASE("GLM-4.5-Air: num_nextn_predict_layers is its MTP block (llama.cpp draft-mtp, vLLM mtp)") {
    const ModelSpec m = fixture("zai-org/GLM-4.5-Air");
    REQUIRE(m.layers.size() == 46);
    bool noted = false;
    for (const Message& n : m.notes)
        if (n.code == "mtp") {
            noted = true;
            CHECK(render_english(n) ==
                  "num_nextn_predict_layers = 1: the multi-token-prediction layer is not counted (engines only cache "
                  "it with speculative decoding)");
        }
    CHECK(noted);
    CHECK(vllm_nextn_layers(m) == 1);
    CHECK(llamacpp_config_mtp(m).ok());
    CHECK(llamacpp_target(m, LlamaSpecType::DraftMtp).layers.size() == 47);

    // Reading the field changes nothing without drafting: the same config without it gives the same numbers.
    std::string text = kvb::test::fixture_text("zai-org/GLM-4.5-Air");
    const std::string field = "\"num_nextn_predict_layers\": 1,";
    text.erase(text.find(field), field.size());
    auto bare = parse_config(text, "zai-org/GLM-4.5-Air");
    REQUIRE(bare.ok());
    CHECK(vllm_nextn_layers(bare.value()) == 1);  // vLLM's default when the config says nothing
    auto pm = count_params(m), pb = count_params(bare.value());
    REQUIRE(pm.ok());
    REQUIRE(pb.ok());
    CHECK(pm->total == pb->total);
    // 46 layers with attention_bias's q/k/v biases (14,336 each): 106,852,251,264 without the MTP block.
    CHECK(pm->total == 106852251264);
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 80LL * 1024 * 1024 * 1024;
    in.weights = "Q8_0";
    in.context = 65536;
    const BudgetResult plain = budget(m, in), plain_bare = budget(bare.value(), in);
    CHECK(plain.weights.bytes == plain_bare.weights.bytes);
    CHECK(plain.llama.kv_bytes == plain_bare.llama.kv_bytes);
    CHECK(plain.llama.kv_bytes == int64_t(46) * 4096 * 65536);  // 8 KV heads x 128, f16 K and V: 4,096 B per cell
    CHECK(plain.offload.n_slots == 47);
    BudgetInputs vin;
    vin.gpu = "h100";
    vin.gpu_count = 4;  // TP 4: 220 GB of bf16 weights over four 80 GB GPUs
    vin.context = 32768;
    const BudgetResult v_plain = budget(m, vin), v_bare = budget(bare.value(), vin);
    CHECK(v_plain.capacity.num_blocks > 0);
    CHECK(v_plain.capacity.num_blocks == v_bare.capacity.num_blocks);
    CHECK(v_plain.drafter_params == 0);

    // llama.cpp draft-mtp: the draft context caches the one nextn layer (4,096 B per cell, 256 MiB at 65,536).
    in.spec_type = "draft-mtp";
    const BudgetResult q8 = budget(m, in);
    CHECK(q8.llama_draft.contexts == 1);
    CHECK(q8.llama_draft.total_bytes == 256 * MiB);
    REQUIRE_FALSE(q8.llama_draft.layout.log_lines.empty());
    CHECK(q8.llama_draft.layout.log_lines[0] ==
          "llama_kv_cache: size =  256.00 MiB ( 65536 cells,   1 layers,  1/1 seqs), K (f16):  128.00 MiB, V (f16):  "
          "128.00 MiB");
    CHECK(q8.llama.kv_bytes == plain.llama.kv_bytes);  // the target caches its 46 layers only
    // The block's weights as llama.cpp's glm4moe loader reads blk.46, counted as kvbudget counts the other 46:
    // q 4,096 x 12,288, k and v 4,096 x 1,024, o 12,288 x 4,096, two norms, an MoE FFN (router 128 x 4,096 and
    // its bias, 128 experts x 3 x 4,096 x 1,408, one shared expert), eh_proj 8,192 x 4,096 and enorm, hnorm,
    // shared_head_norm: 2,375,024,640 matrix and 20,608 vector elements, plus the q/k/v biases of attention_bias
    // (12,288 + 1,024 + 1,024 = 14,336, as in every layer). At Q8_0 (34 B per 32), the router F32 as llama-quantize
    // keeps it, F32 vectors: 2,525,143,552 B.
    CHECK(q8.weights.params - plain.weights.params == 2375059584);
    CHECK(q8.weights.bytes - plain.weights.bytes == 2525143552);
    CHECK(q8.offload.n_slots == 48);

    // vLLM's Glm4MoeMTP: one layer of the target's geometry joins the pool; its weights are the same block.
    for (const char* method : {"mtp", "glm4_moe_mtp"}) {
        CAPTURE(method);
        vin.speculative_config = std::string(R"({"method": ")") + method + R"(", "num_speculative_tokens": 1})";
        const BudgetResult v = budget(m, vin);
        CHECK(v.drafter_params == 2375059584);
        bool layers_note = false;
        for (const Message& n : v.notes)
            if (n.code == "vllm_drafter_layers") {
                layers_note = true;
                CHECK(n.param("layers") == "1");
            }
        CHECK(layers_note);
    }
}

// llama-server loads a -md draft model beside the target: -ngld (default: every layer) over -devd (default: the
// target's devices, split by layer), its token embeddings in system RAM like every model's input layer.
TEST_CASE("budget: a draft model's own weights are counted, on the GPU as llama-server places them") {
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 24LL * 1024 * 1024 * 1024;
    in.weights = "Q4_K_M";
    in.context = 8192;
    const ModelSpec target = fixture("Qwen/Qwen3-8B");
    const ModelSpec draft = fixture("Qwen/Qwen3-0.6B");
    const BudgetResult plain = budget(target, in);
    const BudgetResult alone = budget(draft, in);  // the draft served by itself: the same file, the same placement
    in.spec_type = "draft-simple";
    const BudgetResult r = budget(target, in, &draft);
    // Qwen3-0.6B at Q4_K_M: 390,753,280 bytes in the file; on the GPU its 28 layers and the output layer (tied:
    // a copy of the token embeddings, with output_norm), as many bytes, as when it is served alone.
    CHECK(alone.weights.bytes == 390753280);
    CHECK(alone.per_gpu.weights_bytes == 390753280);
    CHECK(r.weights.bytes - plain.weights.bytes == 390753280);
    CHECK(r.per_gpu.weights_bytes - plain.per_gpu.weights_bytes == 390753280);
    // Its KV (28 layers x 8,192 cells x 4,096 B = 896 MiB) was already counted.
    CHECK(r.per_gpu.kv_bytes - plain.per_gpu.kv_bytes == 896 * MiB);
    bool noted = false;
    for (const Message& n : r.notes)
        if (n.code == "llamacpp_draft_weights_counted") {
            noted = true;
            CHECK(n.param("bytes") == "372.65 MiB");
            CHECK(n.param("gpu") == "372.65 MiB");
        }
    CHECK(noted);
    // Two GPUs: the draft's layers are split as the target's.
    in.gpu_count = 2;
    in.spec_type = "";
    const BudgetResult plain2 = budget(target, in);
    in.spec_type = "draft-simple";
    const BudgetResult two = budget(target, in, &draft);
    const int64_t gpu_target = plain.per_gpu.weights_bytes;  // the target's GPU weights, one GPU
    CHECK(plain2.per_gpu.weights_bytes == (gpu_target + 1) / 2);
    CHECK(two.per_gpu.weights_bytes == (gpu_target + 390753280 + 1) / 2);
}

// Several GPUs under --fit: llama-server loads the -md draft with the target's tensor_split (the per-device slot
// counts --fit chose, or each device's free memory) and -ngld (every slot); the draft context's KV lives with its
// layers. Qwen3-8B on 2 x 8 GiB keeps its 37 slots split 19 / 18; the draft's 29 slots (28 layers and the output
// layer) split in that proportion: slot j on device 0 while j / 29 < 19 / 37, so layers 0-14 there, layers 15-27
// and the output layer on device 1. Its KV: 32 MiB per layer (8,192 cells x 4,096 B).
TEST_CASE("budget: two GPUs under --fit hold the draft model's slots and KV as the target's split places them") {
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 8LL * 1024 * 1024 * 1024;
    in.gpu_count = 2;
    in.weights = "Q4_K_M";
    in.context = 8192;
    const ModelSpec target = fixture("Qwen/Qwen3-8B");
    const ModelSpec draft = fixture("Qwen/Qwen3-0.6B");
    const BudgetResult plain = budget(target, in);
    in.spec_type = "draft-simple";
    const BudgetResult two = budget(target, in, &draft);
    REQUIRE(plain.fit.device_used.size() == 2);
    REQUIRE(two.fit.device_used.size() == 2);
    CHECK(two.fit.outcome == "unchanged");
    CHECK(plain.fit.device_layers == std::vector<int64_t>{19, 18});
    CHECK(two.fit.device_layers == std::vector<int64_t>{19, 18});
    const int64_t w0 = 140418048, w1 = 250335232;  // layers 0-14; layers 15-27 and the output layer
    CHECK(w0 + w1 == 390753280);                   // all of the draft's GPU weights, as on one GPU
    CHECK(two.fit.device_used[0] - plain.fit.device_used[0] == w0 + 15 * 32 * MiB);
    CHECK(two.fit.device_used[1] - plain.fit.device_used[1] == w1 + 13 * 32 * MiB);

    // 2 x 4 GiB: --fit offloads. While it searches, the draft is measured as made before fitting (no tensor_split:
    // even halves, 15 / 14 slots); it settles on 11 / 8 target slots (29 without the draft), and llama-server then
    // loads the draft in that proportion (slots 0-16 on GPU 0, 17-28 on GPU 1).
    in.gpu_memory_bytes = 4LL * 1024 * 1024 * 1024;
    const BudgetResult small = budget(target, in, &draft);
    CHECK(small.fit.outcome == "layers");
    CHECK(small.fit.device_layers == std::vector<int64_t>{11, 8});
    CHECK(small.fit.flags == "-c 8192 -ngl 19 -ts 11,8");
    CHECK(small.fit.device_used == std::vector<int64_t>{2591180800, 2604162048});
    CHECK(small.per_gpu.total_bytes == 3212873728);  // GPU 0 as loaded: 11 target slots, 17 draft slots
}

// llama.cpp's MTP (nextn) layers are the model's last of block_count, and llama_model::load_tensors assigns
// dev_layer over all n_layer of them; llama_kv_cache puts each layer's cells on model.dev_layer(il). So the
// draft-mtp context's cache sits on the device of the target's last layers, with the nextn layer's weights.
// Qwen3.5-27B with draft-mtp: 65 layers (64 + the nextn layer) and the output layer, 66 slots.
TEST_CASE("budget: two GPUs under --fit keep the MTP draft's KV with the nextn layer, on the last device") {
    const ModelSpec m = fixture("Qwen/Qwen3.5-27B");
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 24LL * 1024 * 1024 * 1024;
    in.gpu_count = 2;
    in.weights = "Q4_K_M";
    in.context = 65536;
    in.spec_type = "draft-mtp";
    const BudgetResult f16 = budget(m, in);
    // The same run with the draft context's cache in q4_0 (-ctkd / -ctvd): 256 MiB -> 72 MiB (18 B per 32).
    in.spec_draft_type_k = in.spec_draft_type_v = "q4_0";
    const BudgetResult q4 = budget(m, in);
    CHECK(f16.llama_draft.total_bytes == 256 * MiB);
    CHECK(q4.llama_draft.total_bytes == 72 * MiB);
    REQUIRE(f16.fit.device_used.size() == 2);
    REQUIRE(q4.fit.device_used.size() == 2);
    CHECK(f16.fit.outcome == "unchanged");
    CHECK(f16.fit.device_layers == q4.fit.device_layers);
    CHECK(f16.fit.device_layers == std::vector<int64_t>{33, 33});  // slots 0-32; layers 33-64 and the output
    // Device 0 holds no nextn layer: the same bytes whatever the draft's cache type.
    CHECK(f16.fit.device_used[0] == q4.fit.device_used[0]);
    // Device 1 holds layers 33..64 (the nextn layer last) and the output layer, and the draft's whole cache.
    CHECK(f16.fit.device_used[1] - q4.fit.device_used[1] == 184 * MiB);
    // (kvbudget had put the 256 MiB with layer 0: 10,995,477,754 and 11,272,482,171 bytes.)
    CHECK(f16.fit.device_used == std::vector<int64_t>{10608783232, 11725811840});
}

// One GPU, -ngl N: the output layer first, then the last repeating layers; the nextn layer is the last of
// them, so -ngl 2 puts the output and the nextn layer on the GPU, and the MTP context's cache with it.
TEST_CASE("budget -ngl: the MTP draft's KV is on the GPU once the nextn layer is") {
    const ModelSpec m = fixture("Qwen/Qwen3.5-27B");
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 24LL * 1024 * 1024 * 1024;
    in.weights = "Q4_K_M";
    in.context = 65536;
    in.spec_type = "draft-mtp";
    in.n_gpu_layers = 1;  // the output layer alone
    const BudgetResult one = budget(m, in);
    CHECK(one.offload.gpu_kv_bytes == 0);
    CHECK(one.offload.cpu_kv_bytes == one.llama.total_bytes);
    in.n_gpu_layers = 2;  // and the nextn layer: no cell of the target's cache, the draft's 256 MiB
    const BudgetResult two = budget(m, in);
    CHECK(two.offload.gpu_kv_bytes == 256 * MiB);
    CHECK(two.offload.cpu_kv_bytes == two.llama.total_bytes - 256 * MiB);
}

// `kvbudget llamacpp --json` carries the draft context as the budget's answer does (one JSON form).
TEST_CASE("llamacpp --json: the draft context's n_ctx, layers and bytes") {
    auto r = kvb::test::run_cli(
        "llamacpp " + kvb::test::config_path("Qwen--Qwen3.5-27B") + " -c 65536 --spec-type draft-mtp --json", false);
    CHECK(r.status == 0);
    const auto j = nlohmann::json::parse(r.out);
    const auto& d = j.at("draft");
    CHECK(d.at("spec_type") == "draft-mtp");
    CHECK(d.at("contexts") == 1);
    CHECK(d.at("layers") == 1);
    CHECK(d.at("n_ctx") == 65536);
    CHECK(d.at("n_seq_max") == 1);
    CHECK(d.at("bytes") == 256 * MiB);
    REQUIRE(d.at("log_lines").size() == 1);
    CHECK(d.at("log_lines")[0] ==
          "llama_kv_cache: size =  256.00 MiB ( 65536 cells,   1 layers,  1/1 seqs), K (f16):  128.00 MiB, V (f16):  "
          "128.00 MiB");
    // A draft model: its 28 layers, per slot with --draft-per-slot (4 contexts of 8,192 cells).
    auto s = kvb::test::run_cli("llamacpp " + kvb::test::config_path("Qwen--Qwen3-8B") + " -c 32768 -np 4 -md " +
                                    kvb::test::config_path("Qwen--Qwen3-0.6B") + " --draft-per-slot --json",
                                false);
    CHECK(s.status == 0);
    const auto sd = nlohmann::json::parse(s.out).at("draft");
    CHECK(sd.at("spec_type") == "draft-simple");
    CHECK(sd.at("contexts") == 4);
    CHECK(sd.at("layers") == 28);
    CHECK(sd.at("n_ctx") == 8192);
    CHECK(sd.at("bytes") == 4 * 896 * MiB);
    // No draft: spec_type none, no contexts.
    auto n = kvb::test::run_cli("llamacpp " + kvb::test::config_path("Qwen--Qwen3-8B") + " -c 4096 --json", false);
    const auto nd = nlohmann::json::parse(n.out).at("draft");
    CHECK(nd.at("spec_type") == "none");
    CHECK(nd.at("contexts") == 0);
    CHECK(nd.at("layers") == 0);
    CHECK(nd.at("bytes") == 0);
}

// DeepSeek-V3.2's GGUF has kept its MTP block since ggml-org/llama.cpp#23346, but llama.cpp built a graph for it
// (llama_model_deepseek32's MTP) only with #26457, merged as b10237: older builds are refused with --engine-version.
TEST_CASE("draft-mtp on DeepSeek-V3.2 needs llama.cpp b10237 (#26457)") {
    const ModelSpec v32 = fixture("deepseek-ai/DeepSeek-V3.2");
    const std::string refused =
        "deepseek-ai/DeepSeek-V3.2: llama.cpp runs --spec-type draft-mtp on DeepSeek-V3.2 from build b10237 "
        "(ggml-org/llama.cpp#26457); build b10236 has no multi-token-prediction graph for it";
    auto old_build = llamacpp_mtp_build_ok(v32, "b10236");
    REQUIRE_FALSE(old_build.ok());
    CHECK(old_build.error().code == "unsupported");
    CHECK(old_build.error().detail.code == "llama_spec_mtp_build");
    CHECK(old_build.error().message == refused);
    CHECK(llamacpp_mtp_build_ok(v32, "b10237").ok());
    CHECK(llamacpp_mtp_build_ok(v32, "").ok());
    CHECK(llamacpp_mtp_build_ok(fixture("Qwen/Qwen3.5-27B"), "b10236").ok());  // not pinned: let through
    // No model drafts with MTP before #22673 (b9180), which brought --spec-type draft-mtp itself.
    auto none = llamacpp_mtp_build_ok(fixture("Qwen/Qwen3.5-27B"), "b9179");
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().detail.code == "llama_spec_mtp_none");
    CHECK(none.error().message ==
          "Qwen/Qwen3.5-27B: llama.cpp has --spec-type draft-mtp from build b9180 (ggml-org/llama.cpp#22673); build "
          "b9179 has no multi-token-prediction drafting");
    CHECK(llamacpp_mtp_build_ok(fixture("Qwen/Qwen3.5-27B"), "b9180").ok());

    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 8 * 80LL * 1024 * 1024 * 1024;
    in.weights = "Q4_K_M";
    in.context = 4096;
    in.spec_type = "draft-mtp";
    in.engine_version = "b10236";
    auto b = compute_budget(v32, in);
    REQUIRE_FALSE(b.ok());
    CHECK(b.error().message == refused);
    in.engine_version = "b10237";
    CHECK(compute_budget(v32, in).ok());

    const std::string cfg = kvb::test::config_path("deepseek-ai--DeepSeek-V3.2");
    auto cli = kvb::test::run_cli("llamacpp " + cfg + " -c 4096 --spec-type draft-mtp --engine-version b10236");
    CHECK(cli.status == 1);
    CHECK(cli.out == "kvbudget: error: " + refused + "\n");
    CHECK(kvb::test::run_cli("llamacpp " + cfg + " -c 4096 --spec-type draft-mtp --engine-version b10237", false)
              .status == 0);
}

// Qwen3-Next's config names no MTP layer count, but its checkpoint holds one block; llama.cpp's converter keeps it
// (counting mtp.layers.N) and llm_build_qwen3next runs it from #25589, merged as b10238 (4ed2b13f, 2026-08-03).
// Before, the converter dropped mtp.* and no graph ran it. From b10238 it is sized as the other MTP families: the
// nextn layer joins the target (49 layers: -ngl, the recurrent line and the weights count it, no cache), the draft
// context caches it (one layer of the last full-attention geometry), and the target keeps n_max rollback rows.
TEST_CASE("draft-mtp on Qwen3-Next follows the build: refused before b10238 (#25589), sized from it") {
    const ModelSpec next = fixture("Qwen/Qwen3-Next-80B-A3B-Thinking");
    const std::string refused =
        "Qwen/Qwen3-Next-80B-A3B-Thinking: llama.cpp runs --spec-type draft-mtp on Qwen3-Next from build b10238 "
        "(ggml-org/llama.cpp#25589); build b10237 has no multi-token-prediction graph for it";
    auto old_build = llamacpp_mtp_build_ok(next, "b10237");
    REQUIRE_FALSE(old_build.ok());
    CHECK(old_build.error().detail.code == "llama_spec_mtp_build");
    CHECK(old_build.error().message == refused);
    CHECK(llamacpp_mtp_build_ok(next, "b10238").ok());
    CHECK(llamacpp_config_mtp(next).ok());
    auto mtp = llamacpp_mtp_model(next);
    REQUIRE(mtp.ok());
    REQUIRE(mtp->layers.size() == 1);
    CHECK(mtp->layers[0].kind == LayerKind::Full);
    CHECK(mtp->layers[0].kv_heads == 2);
    CHECK(mtp->layers[0].k_head_dim == 256);
    const ModelSpec target = llamacpp_target(next, LlamaSpecType::DraftMtp);
    CHECK(target.layers.size() == 49);
    CHECK(target.layers[48].nextn);
    CHECK(llamacpp_target(next, LlamaSpecType::Ngram).layers.size() == 48);

    // 12 attention layers x 4,096 cells x 2,048 B = 96 MiB; 36 GDN layers x (1 + 3) rows: R 13.50, S 288.00 MiB;
    // the MTP context: 1 layer x 4,096 x 2,048 B = 8 MiB.
    const std::string cfg = kvb::test::config_path("Qwen--Qwen3-Next-80B-A3B-Thinking");
    const std::string kv =
        "llama_kv_cache: size =   96.00 MiB (  4096 cells,  12 layers,  1/1 seqs), K (f16):   48.00 MiB, V (f16):   "
        "48.00 MiB\n";
    const std::string rec =
        "llama_memory_recurrent: size =  301.50 MiB (     1 cells,  49 layers,  1 seqs  3 rs_seq), R (f32):   13.50 "
        "MiB, S (f32):  288.00 MiB";
    const std::string draft =
        "llama_kv_cache: size =    8.00 MiB (  4096 cells,   1 layers,  1/1 seqs), K (f16):    4.00 MiB, V (f16):    "
        "4.00 MiB\n";
    auto cli = kvb::test::run_cli("llamacpp " + cfg + " -c 4096 --spec-type draft-mtp", false);
    CHECK(cli.status == 0);
    CHECK(cli.out == kv + rec + ", P (f32):    0.00 MiB\n" + draft);
    cli = kvb::test::run_cli("llamacpp " + cfg + " -c 4096 --spec-type draft-mtp --engine-version b10238", false);
    CHECK(cli.status == 0);
    CHECK(cli.out == kv + rec + "\n" + draft);
    cli = kvb::test::run_cli("llamacpp " + cfg + " -c 4096 --spec-type draft-mtp --engine-version b10237");
    CHECK(cli.status == 1);
    CHECK(cli.out == "kvbudget: error: " + refused + "\n");

    // budget: the MTP block's weights (an attention layer of the model's geometry, its MoE, eh_proj and three
    // norms) are loaded with the target's, its KV beside the target's.
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 2 * 80LL * 1024 * 1024 * 1024;
    in.weights = "Q4_K_M";
    in.context = 4096;
    auto plain = compute_budget(next, in);
    REQUIRE(plain.ok());
    in.spec_type = "draft-mtp";
    in.engine_version = "b10237";
    auto b = compute_budget(next, in);
    REQUIRE_FALSE(b.ok());
    CHECK(b.error().message == refused);
    in.engine_version = "b10238";
    b = compute_budget(next, in);
    REQUIRE_MESSAGE(b.ok(), (b.ok() ? "" : b.error().message));
    // attention 27,263,488 (gated q 2,048 x 8,192, k and v 2,048 x 512, o 4,096 x 2,048, q/k norms), 512 experts
    // 1,610,612,736 + router 1,048,576 + shared expert 3,145,728 and its gate 2,048, two norms 4,096, eh_proj
    // 8,388,608, enorm / hnorm / shared_head_norm 6,144.
    CHECK(b->weights.params - plain->weights.params == 1650471424);
    CHECK(b->llama_draft.layers == 1);
    CHECK(b->llama_draft.total_bytes == 8 * MiB);
    CHECK(b->llama.recurrent.n_rs_seq == 3);
    CHECK(b->llama.recurrent.r_bytes + b->llama.recurrent.s_bytes == 4 * (36 * 98304 + 36 * 2097152LL));
}

// Kimi K2.5 (KimiK25ForConditionalGeneration, model_type kimi_k25) wraps a DeepSeek-V3 text_config; llama.cpp's
// conversion/deepseek.py registers it on DeepseekV2Model (skip_mtp = True). Its released config declares no MTP
// layers (num_nextn_predict_layers 0); a kimi_k25 config that declared some would still lose them.
TEST_CASE("Kimi K2.5: no MTP layers, and a kimi_k25 config's would be dropped by the converter") {
    auto k25 = [](int nextn) {
        nlohmann::json text = nlohmann::json::parse(kvb::test::fixture_text("moonshotai/Kimi-K2-Instruct"));
        text.erase("model_type");  // the wrapper's model_type is then the model's
        text.erase("architectures");
        text.erase("auto_map");
        text["num_nextn_predict_layers"] = nextn;
        nlohmann::json root = {{"architectures", {"KimiK25ForConditionalGeneration"}},
                               {"model_type", "kimi_k25"},
                               {"text_config", text},
                               {"vision_config", {{"model_type", "moonvit3d"}}}};
        auto r = parse_config(root.dump(), "moonshotai/Kimi-K2.5");
        REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
        return r.value();
    };
    const ModelSpec released = k25(0);
    CHECK(released.model_type == "kimi_k25");
    CHECK(released.layers.size() == 61);
    auto none = llamacpp_mtp_model(released);
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().detail.code == "llama_spec_no_mtp");
    auto dropped = llamacpp_mtp_model(k25(1));
    REQUIRE_FALSE(dropped.ok());
    CHECK(dropped.error().message ==
          "moonshotai/Kimi-K2.5 (kimi_k25): llama.cpp's converter drops its multi-token-prediction layers, so its "
          "GGUF has no nextn_predict_layers and llama-server cannot run --spec-type draft-mtp on it");
    CHECK(llamacpp_target(k25(1), LlamaSpecType::DraftMtp).layers.size() == 61);
}
