// Budget: total x utilization - weights - activation - overhead - CUDA graphs -> KV pool
// -> vLLM blocks; llama.cpp weights + KV + compute; the CLI's verdicts and refusals.
// Cases with explicit overrides are checked by hand in the comments; the estimates
// themselves are models (docs/budget-model.md) and are only checked for shape.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>

#include "base/units.h"
#include "budget/budget.h"
#include "fixtures.h"
#include "model/config_reader.h"
#include "model/weights.h"
#include "report/answer.h"
#include "sim/setup.h"

using kvb::GiB;
using kvb::MiB;
using kvb::test::fixture;

namespace {

kvb::BudgetResult budget(const std::string& id, const kvb::BudgetInputs& in) {
    auto r = kvb::compute_budget(fixture(id), in);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

kvb::Error refused(const std::string& id, const kvb::BudgetInputs& in) {
    auto r = kvb::compute_budget(fixture(id), in);
    REQUIRE_FALSE(r.ok());
    return r.error();
}

std::string cfg(const std::string& file) {
    return kvb::test::config_path(file);
}
using kvb::test::run_cli;

}  // namespace

TEST_CASE("vLLM budget with explicit overheads, checked by hand") {
    kvb::BudgetInputs in;
    in.gpu_memory_bytes = 24 * GiB;
    in.activation_bytes = 1 * GiB;
    in.overhead_bytes = 512 * MiB;
    in.cudagraph_bytes = 0;
    in.context = 32768;
    auto r = budget("meta-llama/Llama-3.1-8B", in);
    // The newest vLLM's gpu_memory_utilization, 0.92 (vllm/config/cache.py from v0.20.0, PR #38284):
    // 24 GiB x 0.92 = 23,708,219,473.92 -> 23,708,219,473
    CHECK(r.gpu_memory_utilization == 0.92);
    CHECK(r.requested_bytes == 23708219473LL);
    // 8,030,261,248 bf16 params + the rotary cos/sin cache 131,072 x 128 x 2 bytes
    // (vLLM prints "Model loading took 14.9888 GB" for this model: vllm-project/vllm#10517).
    CHECK(r.weights_per_gpu_bytes == 16060522496LL + 33554432LL);
    char gib[32];
    std::snprintf(gib, sizeof gib, "%.4f", double(r.weights_per_gpu_bytes) / double(GiB));
    CHECK(std::string(gib) == "14.9888");
    // The page shows the checkpoint (weights.bytes) beside the weights per GPU; the note says why they differ.
    CHECK(r.weights.bytes == 16060522496LL);
    auto rope =
        std::find_if(r.notes.begin(), r.notes.end(), [](const kvb::Message& n) { return n.code == "vllm_rope_cache"; });
    REQUIRE(rope != r.notes.end());
    CHECK(
        kvb::render_english(*rope) ==
        "vLLM: weights per GPU include the RoPE cos/sin caches the model builds at load (32.00 MiB: positions x rotary "
        "dimension for each distinct RoPE, in the model dtype unless the model forces one), which vLLM counts in "
        "\"Model "
        "loading took\"");
    CHECK(r.kv_pool_bytes == 23708219473LL - 16094076928LL - GiB - 512 * MiB);
    // 16 tokens x 32 layers x 8 heads x 128 x 2 (K,V) x 2 bytes = 2 MiB per block: 6,003,529,809 // 2 MiB
    CHECK(r.capacity.num_blocks == 2862);
    CHECK(r.capacity.tokens == 45792);  // int(2862 / 2048 * 32768)
    REQUIRE(r.capacity.log_lines.size() == 1);
    CHECK(r.capacity.log_lines[0] ==
          "GPU KV cache size: 45,792 tokens, Maximum concurrency for 32,768 tokens per request: 1.40x");
    CHECK(r.fits);
    CHECK(r.max_context == 2861 * 16);  // the null block is not usable
    CHECK(r.max_concurrency == 1);
    CHECK(r.max_num_seqs == 256);  // vLLM's serve default below 70 GiB
    CHECK(r.max_num_batched_tokens == 2048);
    // Only what the answer needs: every other flag is vLLM's own default.
    CHECK(r.command == "vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768");
}

TEST_CASE("vLLM budget reproduces a real start-up with the log's own overheads") {
    // vllm-project/vllm#10517 (vLLM V0, RTX 3090, Llama-3.1-8B-Instruct, --max-model-len 20000):
    // "total_gpu_memory=23.58GiB ... peak_torch_memory=17.06GiB ... non_torch_memory=0.35GiB
    //  kv_cache_size=3.81GiB gpu_memory_utilization=0.90" and "# GPU blocks: 1952".
    // Activation = peak torch - weights = 17.06 GiB - 14.9888 GiB; V0 had no CUDA-graph term.
    kvb::BudgetInputs in;
    in.gpu = "rtx-3090";
    in.activation_bytes = int64_t((17.06 - 14.9888) * double(GiB));
    in.overhead_bytes = int64_t(0.35 * double(GiB));
    in.cudagraph_bytes = 0;
    in.gpu_memory_utilization = 0.9;  // the log's, that release's default
    in.context = 20000;
    auto r = budget("meta-llama/Llama-3.1-8B-Instruct", in);
    CHECK(r.gpu_total_bytes == 24146 * MiB);
    CHECK(kvb::vllm_format_gib(r.kv_pool_bytes) == "3.81");
    // The log's inputs are rounded to 0.01 GiB (about +-5 blocks); vLLM had 1952.
    CHECK(r.capacity.num_blocks >= 1947);
    CHECK(r.capacity.num_blocks <= 1957);
}

TEST_CASE("vLLM budget: tensor and pipeline parallel") {
    kvb::BudgetInputs in;
    in.gpu = "a100-80gb";
    in.gpu_count = 4;
    in.activation_bytes = 2 * GiB;
    in.overhead_bytes = 1 * GiB;
    in.cudagraph_bytes = 0;
    in.context = 131072;
    auto r = budget("meta-llama/Llama-3.1-70B", in);
    CHECK(r.tp == 4);
    CHECK(r.gpu_total_bytes == 81152 * MiB);    // PyTorch's 79.25 GiB on an A100 80GB
    CHECK(r.requested_bytes == 78286516387LL);  // x 0.92
    CHECK(r.weights_per_gpu_bytes == 35312386048LL);
    // 2 KV heads per GPU: 80 layers x 16 x 2 x 2 x 128 x 2 bytes = 1,310,720 bytes per block
    CHECK(r.kv_pool_bytes == 39752904867LL);  // requested - weights - 2 GiB - 1 GiB
    CHECK(r.capacity.num_blocks == 39752904867LL / 1310720);
    CHECK(r.capacity.tokens == 485264);  // 30,329 blocks x 16
    CHECK(r.max_concurrency == 3);
    CHECK(r.max_num_seqs == 256);  // A100 keeps the small defaults even at 80 GB
    CHECK(r.max_num_batched_tokens == 2048);

    in.tensor_parallel_size = 2;
    in.pipeline_parallel_size = 2;
    auto p = budget("meta-llama/Llama-3.1-70B", in);
    CHECK(p.tp == 2);
    CHECK(p.pp == 2);
    CHECK(p.weights.stage_bytes.size() == 2);
    CHECK(p.command.find("--tensor-parallel-size 2 --pipeline-parallel-size 2") != std::string::npos);
}

TEST_CASE("vLLM budget: VLLM_PP_LAYER_PARTITION moves whole layers' weights between stages") {
    kvb::BudgetInputs in;
    in.gpu = "a100-80gb";
    in.gpu_count = 2;
    in.pipeline_parallel_size = 2;
    in.context = 32768;
    auto even = budget("meta-llama/Llama-3.1-8B", in);
    in.pp_layer_partition = "15,17";
    auto uneven = budget("meta-llama/Llama-3.1-8B", in);
    REQUIRE(uneven.weights.stage_bytes.size() == 2);
    // One decoder layer of Llama-3.1-8B: 218,112,000 bf16 parameters.
    CHECK(even.weights.stage_bytes[0] - uneven.weights.stage_bytes[0] == 436224000);
    CHECK(uneven.weights.stage_bytes[1] - even.weights.stage_bytes[1] == 436224000);
    CHECK(uneven.capacity.layout.stage_layers == std::vector<int64_t>{15, 17});
    CHECK(uneven.command.rfind("VLLM_PP_LAYER_PARTITION=15,17 vllm serve ", 0) == 0);
    in.pp_layer_partition = "16,15";
    CHECK(refused("meta-llama/Llama-3.1-8B", in).message == "sum(partitions)=31 does not match num_hidden_layers=32.");
}

// Each stage's workers profile their own memory (gpu_worker.determine_available_memory) and vLLM keeps the
// fewest blocks over workers (kv_cache_utils.get_kv_cache_configs), shrinking every worker's KV to that count.
TEST_CASE("vLLM budget with pipeline parallelism: one pool per stage, the fewest blocks, per-stage memory") {
    kvb::BudgetInputs in;
    in.gpu = "a100-80gb";
    in.gpu_count = 2;
    in.pipeline_parallel_size = 2;
    in.pp_layer_partition = "15,17";
    in.activation_bytes = 2 * GiB;
    in.overhead_bytes = 1 * GiB;
    in.cudagraph_bytes = 0;
    in.context = 32768;
    auto r = budget("meta-llama/Llama-3.1-8B", in);
    CHECK(r.requested_bytes == 78286516387LL);  // 79.25 GiB x 0.92
    REQUIRE(r.stages.size() == 2);
    // Stage 0: 15 layers (218,112,000 bf16 parameters each) + the embeddings 1,050,673,152 + rotary 33,554,432;
    // stage 1: 17 layers + lm_head and final norm 1,050,681,344 + rotary.
    CHECK(r.stages[0].layers == 15);
    CHECK(r.stages[1].layers == 17);
    CHECK(r.stages[0].weights_bytes == 7627587584LL);
    CHECK(r.stages[1].weights_bytes == 8500043776LL);
    CHECK(r.weights_per_gpu_bytes == 8500043776LL);
    // requested - weights - 2 GiB - 1 GiB on each stage.
    CHECK(r.stages[0].kv_available_bytes == 67437703331LL);
    CHECK(r.stages[1].kv_available_bytes == 66565247139LL);
    CHECK(r.kv_pool_bytes == 66565247139LL);
    // 67,437,703,331 // (15 x 65,536) = 68,601; 66,565,247,139 // (17 x 65,536) = 59,747: vLLM keeps 59,747.
    CHECK(r.stages[0].num_blocks == 68601);
    CHECK(r.stages[1].num_blocks == 59747);
    CHECK(r.capacity.num_blocks == 59747);
    CHECK_FALSE(r.stages[0].limiting);
    CHECK(r.stages[1].limiting);
    CHECK(r.stages[0].kv_bytes == 59747LL * 15 * 65536);  // 58,733,690,880: stage 0 shrinks to the fewest
    CHECK(r.stages[1].kv_bytes == 59747LL * 17 * 65536);  // 66,564,849,664
    CHECK(r.stages[0].used_bytes == 69582503936LL);
    CHECK(r.stages[1].used_bytes == 78286118912LL);  // within the 78,286,516,387 requested
    CHECK(r.capacity.log_lines.back() ==
          "GPU KV cache size: 955,952 tokens, Maximum concurrency for 32,768 tokens per request: 29.17x");
    // The bar is the stage whose GPU holds the most for the asked context: stage 1.
    CHECK(r.per_gpu.weights_bytes == 8500043776LL);
    CHECK(r.per_gpu.kv_bytes == 17LL * 2048 * 65536);

    auto cli = run_cli("budget " + cfg("meta-llama--Llama-3.1-8B") +
                       " --gpu a100-80gb --gpu-count 2 -pp 2 --pp-layer-partition 15,17 --activation-memory 2GiB"
                       " --overhead-memory 1GiB --cudagraph-memory 0 --max-model-len 32768");
    CHECK(cli.status == 0);
    CHECK(cli.out.find("  stage 0 (15 layers)  weights 7.10 GiB, activation 2.00 GiB, overhead 1.00 GiB, KV 54.70 GiB "
                       "of 62.81 GiB (room for 68,601 blocks), used 64.80 GiB\n") != std::string::npos);
    CHECK(cli.out.find("  stage 1 (17 layers)  weights 7.92 GiB, activation 2.00 GiB, overhead 1.00 GiB, KV 61.99 GiB "
                       "of 61.99 GiB (room for 59,747 blocks, the fewest), used 72.91 GiB\n") != std::string::npos);

    // Estimated activations: only the last stage runs the sampler over min(max_num_seqs, batched tokens) = 256
    // rows of the 128,256-token vocabulary (2 + 16 bytes each).
    in.activation_bytes = -1;
    in.pp_layer_partition = "";
    r = budget("meta-llama/Llama-3.1-8B", in);
    CHECK(r.stages[1].activation_bytes - r.stages[0].activation_bytes == 256LL * 128256 * 18);
    CHECK(r.activation_bytes == r.stages[1].activation_bytes);
}

TEST_CASE("vLLM budget with a speculative drafter: its layer joins the pool (vllm_with_drafter)") {
    kvb::BudgetInputs in;
    in.gpu_memory_bytes = 24 * GiB;
    in.activation_bytes = 1 * GiB;
    in.overhead_bytes = 512 * MiB;
    in.cudagraph_bytes = 0;
    in.context = 32768;
    in.speculative_config =
        R"({"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3})";
    auto r = budget("meta-llama/Llama-3.1-8B", in);
    // Without a draft config the EAGLE head is one decoder layer of the model (218,112,000 parameters) and
    // its fc (2 x 4,096 x 4,096): 251,666,432 bf16 parameters, 503,332,864 B, taken from the 6,003,529,809-byte
    // pool the model alone leaves at 0.92; a block is now 33 layers x 65,536 B.
    CHECK(r.drafter_params == 251666432);
    CHECK(r.drafter_weight_bytes == 503332864);
    CHECK(r.kv_pool_bytes == 6003529809LL - 503332864);
    CHECK(r.capacity.num_blocks == (6003529809LL - 503332864) / 2162688);
    CHECK(r.capacity.num_blocks == 2543);
    bool layers = false, weights = false;
    for (const auto& n : r.notes) {
        layers = layers || n.code == "vllm_drafter_layers";
        weights = weights || (n.code == "vllm_drafter_weights_target_layer" && n.param("params") == "251,666,432");
    }
    CHECK(layers);
    CHECK(weights);
    CHECK(
        r.command.find(
            R"( --speculative-config '{"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}')") !=
        std::string::npos);
    in.speculative_config =
        R"({"method": "draft_model", "model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 4})";
    CHECK(refused("meta-llama/Llama-3.1-8B", in).detail.code == "vllm_spec_needs_draft");
    in.speculative_config = "{not json";
    CHECK_FALSE(kvb::compute_budget(fixture("meta-llama/Llama-3.1-8B"), in).ok());

    auto cli = run_cli("budget " + cfg("meta-llama--Llama-3.1-8B") +
                       " --gpu-memory 24GiB --activation-memory 1GiB --overhead-memory 512MiB --cudagraph-memory 0"
                       " --max-model-len 32768 --speculative-config '{\"method\": \"eagle\", \"model\": "
                       "\"yuhuili/EAGLE-LLaMA3.1-Instruct-8B\", \"num_speculative_tokens\": 3}'"
                       " --json");
    CHECK(cli.status == 0);
    CHECK(cli.out.find("\"num_blocks\":2543") != std::string::npos);
    CHECK(cli.out.find("\"drafter_weight_bytes\":503332864") != std::string::npos);
}

// vLLM builds the drafter on the last pipeline stage only ("we put the entire draft model on the last PP
// rank", vllm/v1/worker/gpu_model_runner.py): the split is the target's 32 layers, the head's KV layer and
// its weights join stage 1.
TEST_CASE("vLLM budget with a drafter and pipeline parallelism: only the target's layers are split") {
    kvb::BudgetInputs in;
    in.gpu = "a100-80gb";
    in.gpu_count = 2;
    in.pipeline_parallel_size = 2;
    in.context = 32768;
    auto plain = budget("meta-llama/Llama-3.1-8B", in);
    in.speculative_config = R"({"method": "eagle", "num_speculative_tokens": 3})";
    auto r = budget("meta-llama/Llama-3.1-8B", in);
    CHECK(r.capacity.layout.stage_layers == std::vector<int64_t>{16, 16});
    CHECK(r.capacity.layout.stage_bytes_per_block == std::vector<int64_t>{16 * 65536, 17 * 65536});
    CHECK(r.weights.stage_bytes[0] == plain.weights.stage_bytes[0]);
    CHECK(r.weights.stage_bytes[1] - plain.weights.stage_bytes[1] == 503332864);
    CHECK(r.weights.bytes - plain.weights.bytes == 503332864);
    in.pp_layer_partition = "15,17";
    r = budget("meta-llama/Llama-3.1-8B", in);
    CHECK(r.capacity.layout.stage_layers == std::vector<int64_t>{15, 17});
    CHECK(r.capacity.layout.stage_bytes_per_block == std::vector<int64_t>{15 * 65536, 18 * 65536});
    CHECK(r.command.rfind("VLLM_PP_LAYER_PARTITION=15,17 vllm serve ", 0) == 0);
}

TEST_CASE("vLLM budget that does not fit carries vLLM's own error and its estimate") {
    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    auto r = budget("Qwen/Qwen3-8B", in);
    CHECK(r.context == 40960);
    CHECK_FALSE(r.fits);
    CHECK(r.engine_error.rfind(
              "To serve at least one request with the model's max seq len (40960), (5.62 GiB KV cache is needed", 0) ==
          0);
    // vLLM's own estimate (in its error text) counts the null block BlockPool keeps back;
    // the advice, the command and the longest context name what a request can really get.
    CHECK(r.capacity.estimated_max_model_len == 31024);
    CHECK(r.engine_error.find("the estimated maximum model length is 31024.") != std::string::npos);
    CHECK(r.max_context == 31008);
    CHECK(r.command == "vllm serve Qwen/Qwen3-8B --max-model-len 31008");
    CHECK(r.verdict_reason.code == "vllm_kv_too_small");
    CHECK(kvb::render_english(r.verdict_reason) ==
          "vLLM refuses to start: one 40,960-token request needs 5.63 GiB of KV cache but " +
              kvb::format_bytes(r.kv_pool_bytes) +
              " is available; set --max-model-len to at most 31,008, or free memory for the KV cache (a higher "
              "--gpu-memory-utilization, more GPUs, a smaller weights format)");
    // The estimates are in place and positive.
    CHECK(r.activation_estimated);
    CHECK(r.activation_bytes > 0);
    CHECK(r.overhead_bytes == 512 * MiB);
    CHECK(kvb::vllm_cudagraph_capture_sizes(256, 2048) == 51);  // 1, 2, 4, 8..248, 256..512
    CHECK(r.cudagraph_bytes == 51 * 36 * 512 * 1024);
    CHECK(r.max_context + 16 == r.capacity.estimated_max_model_len);

    in.enforce_eager = true;
    auto e = budget("Qwen/Qwen3-8B", in);
    CHECK(e.cudagraph_bytes == 0);
    CHECK(e.kv_pool_bytes == r.kv_pool_bytes + r.cudagraph_bytes);
    CHECK(e.command.find("--enforce-eager") != std::string::npos);
}

TEST_CASE("CUDA graph capture sizes follow vLLM's defaults") {
    CHECK(kvb::vllm_cudagraph_capture_sizes(1, 8192) == 2);      // max 2: [1, 2]
    CHECK(kvb::vllm_cudagraph_capture_sizes(2, 8192) == 3);      // [1, 2, 4]
    CHECK(kvb::vllm_cudagraph_capture_sizes(16, 8192) == 7);     // [1, 2, 4, 8, 16, 24, 32]
    CHECK(kvb::vllm_cudagraph_capture_sizes(1024, 8192) == 51);  // capped at 512
    // Capped by max_num_batched_tokens: ..248, 256, 272, 288, and 300 itself (0.20.1 on, PR #40734: "ensure
    // max_num_tokens is captured if within max capture size"); 0.20.0 stops at 288.
    CHECK(kvb::vllm_cudagraph_capture_sizes(1024, 300) == 38);
    CHECK(kvb::vllm_cudagraph_capture_sizes(1024, 300, 512, false) == 37);
    CHECK(kvb::vllm_cudagraph_capture_sizes(1024, 288) == 37);  // on the grid already
    CHECK(kvb::vllm_cudagraph_capture_sizes(4, 6) == 4);        // [1, 2, 4, 6]
    CHECK(kvb::vllm_cudagraph_capture_sizes(1, 3) == 2);        // the cap is 2: 3 is beyond it
    // Compute capability 10.x from 0.28.0 (PR #49390): a ceiling of 1,024, reached at 512 sequences.
    CHECK(kvb::vllm_cudagraph_capture_sizes(512, 16384, 1024) == 83);
    CHECK(kvb::vllm_cudagraph_capture_sizes(256, 16384, 1024) == 51);
}

TEST_CASE("no memory left for the KV cache") {
    kvb::BudgetInputs in;
    in.gpu_memory_bytes = 16 * GiB;
    auto r = budget("meta-llama/Llama-3.1-8B", in);
    CHECK_FALSE(r.fits);
    CHECK(r.kv_pool_bytes < 0);
    CHECK(r.max_context == 0);
    CHECK(r.max_concurrency == 0);
    CHECK(r.engine_error.rfind("No available memory for the cache blocks.", 0) == 0);
    // 2.31 GiB short, more than the 1.28 GiB a utilization of 1.0 would add (16 GiB x 0.08): that remedy is left out.
    CHECK(r.verdict_reason.code == "vllm_kv_pool_negative_far");
    CHECK(r.verdict_reason.param("short") == kvb::format_bytes(-r.kv_pool_bytes));
    CHECK(r.verdict_reason.param("headroom") == "1.28 GiB");
    // No context fits: the command stays as asked (vLLM's own "no memory" refusal is what it meets).
    CHECK(r.command == "vllm serve meta-llama/Llama-3.1-8B --max-model-len 131072");
    // Within reach of a higher utilization, it is offered.
    kvb::BudgetInputs near = in;
    near.gpu_memory_bytes = 17 * GiB + GiB / 2;
    auto n = budget("meta-llama/Llama-3.1-8B", near);
    CHECK_FALSE(n.fits);
    CHECK(n.verdict_reason.code == "vllm_kv_pool_negative");
    // fp8 weights halve the linear layers and make room.
    in.weights = "fp8";
    auto f = budget("meta-llama/Llama-3.1-8B", in);
    CHECK(f.kv_pool_bytes > 0);
    CHECK(f.command.find("--quantization fp8") != std::string::npos);
}

// vLLM's dtype "auto" casts a float32 checkpoint (GPT-2's config names no dtype: float32), and a
// dtype the GPU lacks, to the GPU's first supported type: bfloat16 from compute capability 8.0,
// float16 on a T4 (7.5), float32 there for a model type vLLM refuses in float16. The KV cache's
// auto follows; another float format than auto's is asked for with --dtype.
TEST_CASE("vLLM serves a checkpoint in the dtype its dtype auto picks for the GPU") {
    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    auto r = budget("openai-community/gpt2-large", in);
    CHECK(r.weights.format.name == "bf16");
    CHECK(r.weights.params == 774030080);
    CHECK(r.weights.bytes == 774030080LL * 2);
    CHECK(r.weights.format.from.code == "vllm_auto_cast");
    CHECK(r.weights.format.from.param("dtype") == "bfloat16");
    // GPT-2 learns its positions: vLLM builds no RoPE cache for it, so the GPU holds the checkpoint.
    CHECK(r.weights_per_gpu_bytes == 774030080LL * 2);
    in.gpu = "t4";
    auto t4 = budget("openai-community/gpt2-large", in);
    CHECK(t4.weights.format.name == "fp16");
    CHECK(t4.weights.bytes == 774030080LL * 2);
    CHECK(t4.weights.format.from.param("dtype") == "float16");
    CHECK(t4.kv_cache_dtype == "float16");
    CHECK(t4.command == "vllm serve openai-community/gpt2-large --max-model-len 1024");
    // The profile run is in float16 too: 2,048 tokens x 2 B x (2 x 1,280 hidden + 3 x 5,120 MLP
    // width) + the sampler's 256 rows x 50,257 logits x (2 + 16 B of float32 copies).
    CHECK(t4.activation_bytes == 2048LL * 2 * 17920 + 256LL * 50257 * 18);
    in.weights = "fp32";
    auto f32 = budget("openai-community/gpt2-large", in);
    CHECK(f32.weights.bytes == 774030080LL * 4);
    CHECK(f32.kv_cache_dtype == "float32");
    CHECK(f32.command == "vllm serve openai-community/gpt2-large --max-model-len 1024 --dtype float32");
    CHECK(f32.activation_bytes == 2048LL * 4 * 17920 + 256LL * 50257 * 20);
    // A bfloat16 checkpoint on a T4: float16, the same bytes; no --dtype needed.
    in.weights = "";
    auto q = budget("Qwen/Qwen3-8B", in);
    CHECK(q.weights.format.name == "fp16");
    CHECK(q.weights.format.from.param("checkpoint") == "bfloat16");
    CHECK(q.command.find("--dtype") == std::string::npos);
    // transformers loads what it is told; the command it is given says float32.
    in.weights = "";
    in.engine = kvb::BudgetEngine::Transformers;
    CHECK(budget("openai-community/gpt2-large", in).weights.bytes == 774030080LL * 4);
    // gemma3_text in float32 on a T4: vLLM refuses float16 for it, so float32 stays.
    std::string text = kvb::test::fixture_text("google/gemma-3-1b-it");
    const auto at = text.find("\"bfloat16\"");
    REQUIRE(at != std::string::npos);
    text.replace(at, 10, "\"float32\"");
    auto g = kvb::parse_config(text, "google/gemma-3-1b-it");
    REQUIRE(g.ok());
    in.engine = kvb::BudgetEngine::Vllm;
    auto gt4 = kvb::compute_budget(g.value(), in);
    REQUIRE(gt4.ok());
    CHECK(gt4.value().weights.format.name == "fp32");
    CHECK(gt4.value().kv_cache_dtype == "float32");
    // Only auto can be float32: no vLLM release takes --kv-cache-dtype float32 (CacheDType has no such literal).
    in.kv_cache_dtype = "float32";
    CHECK(kvb::compute_budget(g.value(), in).error().detail.code == "unknown_vllm_kv_dtype");
    in.kv_cache_dtype = "";
    in.gpu = "a100-80gb";
    auto ga100 = kvb::compute_budget(g.value(), in);
    REQUIRE(ga100.ok());
    CHECK(ga100.value().weights.format.name == "bf16");
    // What a decode step reads is the pool's cache: float32 on the T4, twice the A100's bfloat16.
    CHECK(gt4.value().decode.kv_bytes_per_token == 2 * ga100.value().decode.kv_bytes_per_token);
    // The simulator's pages hold what the budget's KV cache holds: float32 there, twice the bytes.
    kvb::SimSetupInputs si;
    si.gpu = "t4";
    auto st4 = kvb::sim_setup(g.value(), si);
    REQUIRE(st4.ok());
    si.gpu = "a100-80gb";
    auto sa100 = kvb::sim_setup(g.value(), si);
    REQUIRE(sa100.ok());
    CHECK(st4.value().kv_dtype == "float32");
    CHECK(sa100.value().kv_dtype == "bfloat16");
    CHECK(st4.value().config.kv_bytes_per_token == 2 * sa100.value().config.kv_bytes_per_token);
    // And the answer's KV per token is the pool's.
    in.gpu = "t4";
    auto at4 = kvb::compute_answer(g.value(), in);
    in.gpu = "a100-80gb";
    auto aa100 = kvb::compute_answer(g.value(), in);
    REQUIRE(at4.ok());
    REQUIRE(aa100.ok());
    CHECK(at4.value().metrics.kv_bytes_per_token == 8192);
    CHECK(aa100.value().metrics.kv_bytes_per_token == 4096);
    // Its RoPE caches are built in the served dtype too: two (gemma3.py gives the sliding layers default RoPE at
    // rope_local_base_freq, a key of its own in get_rope's _ROPE_DICT), each 32,768 positions x 256 x 4 bytes on the
    // T4.
    const auto rope_note = [](const kvb::BudgetResult& b) {
        for (const auto& n : b.notes)
            if (n.code == "vllm_rope_cache") return n.param("bytes");
        return std::string();
    };
    CHECK(rope_note(*at4.value().budget) == "64.00 MiB");
    CHECK(rope_note(*aa100.value().budget) == "32.00 MiB");
}

// vLLM's GLM-4.5 (models/glm4_moe.py, PR #22203, first in 0.10.1) creates each MoE layer's gate as
// nn.Linear(dtype=torch.float32) and its e_score_correction_bias in float32, whatever the checkpoint's bf16:
// "Model loading took" counts them at 4 bytes a parameter. GLM-4.5-Air: 45 MoE layers (the first is dense) of a
// 128 x 4,096 gate and 128 biases, 2 bytes more each, on every tensor-parallel rank (the gate is not split).
TEST_CASE("vLLM: GLM-4.5's MoE router in float32 from 0.10.1, on every rank") {
    kvb::BudgetInputs in;
    in.gpu = "h100";
    in.gpu_count = 4;
    const auto weights = [&](const std::string& version) {
        in.engine_version = version;
        auto b = kvb::compute_budget(fixture("zai-org/GLM-4.5-Air"), in);
        REQUIRE(b.ok());
        std::string router;
        for (const auto& n : b.value().notes)
            if (n.code == "vllm_fp32_router") router = n.param("bytes");
        return std::make_pair(b.value().weights_per_gpu_bytes, router);
    };
    const auto before = weights("0.10.0");
    const auto after = weights("0.10.1");
    CHECK(before.second.empty());
    CHECK(after.first - before.first == 45LL * (128 * 4096 + 128) * 2);
    CHECK(after.second == "45.01 MiB");
    CHECK(weights("").first == after.first);
    // llama.cpp keeps ffn_gate_inp in F32 in every GGUF already; transformers loads the gate in the model dtype.
    in.engine = kvb::BudgetEngine::Transformers;
    in.engine_version = "";
    auto hf = kvb::compute_budget(fixture("zai-org/GLM-4.5-Air"), in);
    REQUIRE(hf.ok());
    for (const auto& n : hf.value().notes) CHECK(n.code != "vllm_fp32_router");
}

// GLM-4.5V (Glm4vMoeForConditionalGeneration): vLLM builds its text model as Glm4MoeForCausalLM (glm4_1v.py, v0.10.1
// .. v0.27.1), so the text_config's glm4v_moe_text takes GLM-4.5's rules: q / k / v biases (attention_bias), the
// score correction bias, the router in float32; its vision tower is counted as glm4_1v.py builds it. The config is the
// one a public model report prints for the zai-org/GLM-4.5V checkpoint as transformers 5.7 loads it (not the Hub file's
// own text), with the report's tensor list: 107,710,933,120 parameters, of which the vision tower's shapes there add up
// to 858,681,856.
TEST_CASE("vLLM: GLM-4.5V's text model is GLM-4.5's: its biases, and its router in float32 from 0.10.1") {
    const char* config = R"json({
  "architectures": ["Glm4vMoeForConditionalGeneration"],
  "dtype": "bfloat16",
  "image_end_token_id": 151340,
  "image_start_token_id": 151339,
  "image_token_id": 151363,
  "model_type": "glm4v_moe",
  "text_config": {
    "attention_bias": true, "attention_dropout": 0.0, "bos_token_id": null, "dtype": "bfloat16",
    "eos_token_id": [151329, 151336, 151338], "first_k_dense_replace": 1, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 4096, "image_end_token_id": 151340, "image_start_token_id": 151339, "image_token_id": 151363,
    "initializer_range": 0.02, "intermediate_size": 10944, "max_position_embeddings": 65536,
    "model_type": "glm4v_moe_text", "moe_intermediate_size": 1408, "n_group": 1, "n_routed_experts": 128,
    "n_shared_experts": 1, "norm_topk_prob": true, "num_attention_heads": 96, "num_experts_per_tok": 8,
    "num_hidden_layers": 46, "num_key_value_heads": 8, "pad_token_id": 151329, "partial_rotary_factor": 0.5,
    "rms_norm_eps": 1e-05,
    "rope_parameters": {"mrope_section": [8, 12, 12], "partial_rotary_factor": 0.5, "rope_theta": 10000.0, "rope_type": "default"},
    "routed_scaling_factor": 1.0, "router_aux_loss_coef": 0.0001, "tie_word_embeddings": false, "topk_group": 1,
    "use_cache": true, "use_qk_norm": false, "vocab_size": 151552
  },
  "tie_word_embeddings": false,
  "transformers_version": "5.7.0",
  "video_end_token_id": 151342,
  "video_start_token_id": 151341,
  "video_token_id": 151364,
  "vision_config": {
    "attention_bias": false, "attention_dropout": 0.0, "depth": 24, "hidden_act": "silu", "hidden_size": 1536,
    "image_size": 336, "in_channels": 3, "initializer_range": 0.02, "intermediate_size": 10944,
    "model_type": "glm4v_moe_vision", "num_heads": 12, "out_hidden_size": 4096, "patch_size": 14,
    "rms_norm_eps": 1e-05, "spatial_merge_size": 2, "temporal_patch_size": 2
  }
})json";
    auto m = kvb::parse_config(config, "zai-org/GLM-4.5V");
    REQUIRE(m.ok());
    for (const auto& n : m->notes) CHECK(n.code != "generic");
    auto p = kvb::count_params(*m);
    REQUIRE(p.ok());
    CHECK(p->total == 107710933120 - 858681856);
    // Its vision tower as vLLM builds it (glm4_1v.py), tensor for tensor the report's.
    CHECK(p->vision == 858681856);
    kvb::BudgetInputs in;
    in.gpu = "h100";
    in.gpu_count = 4;
    auto router = [&](const std::string& version) {
        in.engine_version = version;
        auto b = kvb::compute_budget(*m, in);
        REQUIRE(b.ok());
        for (const auto& n : b->notes)
            if (n.code == "vllm_fp32_router") return n.param("bytes");
        return std::string();
    };
    CHECK(router("0.10.0").empty());
    CHECK(router("0.10.1") == kvb::format_bytes(45LL * (128 * 4096 + 128) * 2));
    // Its vision encoder's 12 heads split over the TP ranks: at TP 8 vLLM stops as it builds them (vllm#24004).
    in.engine_version = "";
    in.gpu_count = 8;
    auto tp8 = kvb::compute_budget(*m, in);
    REQUIRE_FALSE(tp8.ok());
    CHECK(tp8.error().detail.code == "vllm_tp_vision_heads");
    CHECK(tp8.error().message ==
          "AssertionError: 12 is not divisible by 8 (vLLM splits the vision encoder's 12 attention heads over tensor "
          "parallel size 8)");
}

// vLLM's Nemotron-H MoE (models/nemotron_h.py): the gate as ReplicatedLinear(params_dtype=float32) from its first MoE
// support (0.11.1), and from 0.17.0 as GateLinear(force_fp32_compute=True), which keeps the checkpoint's bf16 where a
// specialized router kernel runs (CUDA compute capability 9.0 or 10.x) and float32 elsewhere; the score correction bias
// is float32 throughout. Nemotron-3-Nano-30B-A3B: 23 MoE layers of a 128 x 2,688 gate and 128 biases.
TEST_CASE("vLLM: Nemotron-H's MoE router in float32 by GPU and release") {
    const auto model = fixture("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
    const auto run = [&](const std::string& gpu, const std::string& version) {
        kvb::BudgetInputs in;
        in.gpu = gpu;
        in.context = 8192;
        in.engine_version = version;
        auto b = kvb::compute_budget(model, in);
        REQUIRE(b.ok());
        std::pair<std::string, std::string> note;
        for (const auto& n : b.value().notes)
            if (n.code == "vllm_fp32_router" || n.code == "vllm_fp32_router_bias") note = {n.code, n.param("bytes")};
        return std::make_pair(b.value().weights_per_gpu_bytes, note);
    };
    const int64_t gate = 23LL * 128 * 2688 * 2, bias = 23LL * 128 * 2;
    const auto h100_016 = run("h100", "0.16.0");
    const auto h100 = run("h100", "0.17.0");
    CHECK(h100_016.first - h100.first == gate);
    CHECK(h100_016.second == std::make_pair(std::string("vllm_fp32_router"), kvb::format_bytes(gate + bias)));
    CHECK(h100.second == std::make_pair(std::string("vllm_fp32_router_bias"), std::string("5.75 KiB")));
    CHECK(run("h100", "").first == h100.first);
    CHECK(run("b200", "").second.first == "vllm_fp32_router_bias");
    // Ada, Ampere and consumer Blackwell (12.0) have no such kernel: float32 in every release.
    for (const char* gpu : {"rtx-4090", "a100-80gb", "rtx-5090"}) {
        CAPTURE(gpu);
        const auto now = run(gpu, "");
        CHECK(now.first == h100_016.first);
        CHECK(now.second == std::make_pair(std::string("vllm_fp32_router"), std::string("15.10 MiB")));
    }
}

// vLLM's deepseek_v2.py creates a noaux_tc router's e_score_correction_bias in float32 (PR #23640, first in 0.10.2)
// and keeps the gate in the model dtype; its classes serve DeepSeek-V3 / V3.2, Kimi K2 and GLM-5. One bias of 256
// (Kimi K2: 384) a MoE layer, 2 bytes more each than at bf16's width, on every rank.
TEST_CASE("vLLM: DeepSeek-V3's score correction bias in float32 from 0.10.2, its gate at the checkpoint's width") {
    const auto run = [](const std::string& id, const std::string& version) {
        kvb::BudgetInputs in;
        in.gpu = "h200";
        in.gpu_count = 8;
        in.context = 32768;
        in.engine_version = version;
        auto b = kvb::compute_budget(fixture(id), in);
        REQUIRE(b.ok());
        std::pair<std::string, std::string> note;
        for (const auto& n : b.value().notes)
            if (n.code.rfind("vllm_fp32_", 0) == 0) note = {n.code, n.param("bytes")};
        return std::make_pair(b.value().weights_per_gpu_bytes, note);
    };
    const auto before = run("deepseek-ai/DeepSeek-V3", "0.10.1");
    const auto after = run("deepseek-ai/DeepSeek-V3", "0.10.2");
    CHECK(before.second.first.empty());
    CHECK(after.first - before.first == 58LL * 256 * 2);
    CHECK(after.second == std::make_pair(std::string("vllm_fp32_score_bias"), std::string("29.00 KiB")));
    CHECK(run("deepseek-ai/DeepSeek-V3", "").first == after.first);
    CHECK(run("deepseek-ai/DeepSeek-V3.2", "").second.second == "29.00 KiB");
    CHECK(run("moonshotai/Kimi-K2-Instruct", "").second ==
          std::make_pair(std::string("vllm_fp32_score_bias"), kvb::format_bytes(60LL * 384 * 2)));
    CHECK(run("zai-org/GLM-5", "").second.second == kvb::format_bytes(75LL * 256 * 2));
}

// vLLM's Falcon (models/falcon.py) builds a rotary embedding unless the config says alibi, over
// getattr(config, "max_position_embeddings", 8192) positions: falcon-7b's RefinedWeb config (vLLM's
// RWConfig) has none, so 8,192 x 64 x 2 B; a model_type falcon config falls back on FalconConfig's 2,048.
TEST_CASE("vLLM's Falcon: a RoPE cache unless alibi, over the positions its config class gives") {
    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    const auto rope_bytes = [&](const std::string& text) {
        auto m = kvb::parse_config(text, "tiiuae/falcon-7b");
        REQUIRE(m.ok());
        auto b = kvb::compute_budget(m.value(), in);
        REQUIRE(b.ok());
        const int64_t extra = b.value().weights_per_gpu_bytes - b.value().weights.per_gpu_bytes;
        for (const auto& n : b.value().notes)
            if (n.code == "vllm_rope_cache") CHECK(n.param("bytes") == kvb::format_bytes(extra));
        return extra;
    };
    const std::string rw = kvb::test::fixture_text("tiiuae/falcon-7b");
    CHECK(rope_bytes(rw) == 8192 * 64 * 2);
    std::string alibi = rw;
    alibi.replace(alibi.find("\"alibi\": false"), 14, "\"alibi\": true");
    CHECK(rope_bytes(alibi) == 0);
    std::string falcon = rw;
    falcon.replace(falcon.find("\"RefinedWebModel\""), 17, "\"falcon\"");
    CHECK(rope_bytes(falcon) == 2048 * 64 * 2);
    auto m = kvb::parse_config(falcon, "tiiuae/falcon-7b");
    REQUIRE(m.ok());
    CHECK(m.value().max_position_embeddings == 2048);
    CHECK(std::any_of(m.value().notes.begin(), m.value().notes.end(), [](const kvb::Message& n) {
        return n.code == "transformers_default" && n.param("field") == "max_position_embeddings";
    }));
}

// Gemma 3 4B: 3,880,263,168 text params and a vision tower of 419,816,304 (weights.cpp counts both), bfloat16.
TEST_CASE("the answer's weights are what the engine loads: the vision tower for vLLM and transformers, not llama.cpp") {
    kvb::BudgetInputs in;
    in.gpu = "rtx-3060";
    const auto& m = fixture("google/gemma-3-4b-it");
    for (auto engine : {kvb::BudgetEngine::Vllm, kvb::BudgetEngine::Transformers}) {
        in.engine = engine;
        auto a = kvb::compute_answer(m, in);
        REQUIRE(a.ok());
        CHECK(a.value().budget->weights.vision_bytes == 419816304LL * 2);
        CHECK(a.value().metrics.weights_bytes == (3880263168LL + 419816304LL) * 2);
        // "vs. weights" and where KV overtakes them compare against the same bytes.
        CHECK(a.value().kv.weights_bytes == a.value().metrics.weights_bytes);
    }
    in.engine = kvb::BudgetEngine::LlamaCpp;
    auto a = kvb::compute_answer(m, in);
    REQUIRE(a.ok());
    CHECK(a.value().budget->weights.vision_bytes == 0);
    CHECK(a.value().metrics.weights_bytes == a.value().budget->weights.bytes);
    CHECK(a.value().budget->command.find("--mmproj") == std::string::npos);
}

// "KV cache for 4 sequences of 131,072 tokens" is what the engine lays out, as its bar and start-up lines say,
// not the formula's 11,223,957,504 B (131,072 x 5 full layers + 1,024 x 29 sliding, x 4): llama.cpp's two
// llama_kv_cache lines, 10240.00 + 696.00 MiB (SWA cells 1536 = pad(1024 + 512, 256)); vLLM's blocks per request
// (its sliding groups keep window + a batch of tokens, and a padding layer); transformers' cache.
TEST_CASE("the answer's KV for N sequences is the engine's own layout") {
    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    in.context = 131072;
    in.seqs = 4;
    const auto& m = fixture("google/gemma-3-4b-it");
    auto kv_total = [&](kvb::BudgetEngine e) {
        in.engine = e;
        auto a = kvb::compute_answer(m, in);
        REQUIRE(a.ok());
        // The formula stays the chart's (transformers' view: its cache's own bytes).
        CHECK(a->kv.bytes_total == (e == kvb::BudgetEngine::Transformers ? 11223482368LL : 11223957504LL));
        return a->metrics.kv_bytes_total;
    };
    CHECK(kv_total(kvb::BudgetEngine::LlamaCpp) == (10240LL + 696LL) << 20);
    CHECK(kv_total(kvb::BudgetEngine::Vllm) == 13261864960LL);
    CHECK(kv_total(kvb::BudgetEngine::Transformers) == 11223482368LL);
    // llama.cpp pads the context to 256 cells: -c 30000 holds 30,208 (3776.00 MiB).
    in.engine = kvb::BudgetEngine::LlamaCpp;
    in.context = 30000;
    in.seqs = 1;
    auto l = kvb::compute_answer(fixture("meta-llama/Llama-3.1-8B"), in);
    REQUIRE(l.ok());
    CHECK(l->metrics.kv_bytes_total == 3776LL << 20);
}

// vLLM makes fp8 at load time (--quantization fp8) but not AWQ / GPTQ: the command for a float
// checkpoint names the method, so vLLM stops at start-up (no quantization config) instead of
// loading the float weights the page did not count; a pre-quantized checkpoint needs no flag.
TEST_CASE("vLLM with AWQ / GPTQ weights of a float checkpoint: the command never loads the float weights") {
    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    in.context = 16384;
    in.weights = "awq";
    CHECK(budget("Qwen/Qwen3-30B-A3B", in).command ==
          "vllm serve Qwen/Qwen3-30B-A3B --max-model-len 16384 --quantization awq");
    in.weights = "gptq";
    CHECK(budget("Qwen/Qwen3-30B-A3B", in).command ==
          "vllm serve Qwen/Qwen3-30B-A3B --max-model-len 16384 --quantization gptq");
    in.weights = "";
    CHECK(budget("Qwen/Qwen2-VL-2B-Instruct-AWQ", in).command ==
          "vllm serve Qwen/Qwen2-VL-2B-Instruct-AWQ --max-model-len 16384");
}

// The answer's advice: an 8-bit KV cache that turns a no (or a start with part in system RAM) into
// all on the GPU, from the same budget run with it; nothing when the answer is already yes.
TEST_CASE("the answer names the 8-bit KV cache that would make it fit") {
    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    in.context = 32768;
    const auto& q = fixture("Qwen/Qwen3-8B");
    auto a = kvb::compute_answer(q, in);
    REQUIRE(a.ok());
    CHECK_FALSE(a->budget->fits);  // 4.50 GiB of KV against 3.79 GiB free
    REQUIRE(a->advice.has_value());
    CHECK(kvb::render_english(*a->advice) ==
          "with an fp8 KV cache (--kv-cache-dtype fp8) it fits: up to 40,960 tokens per sequence");
    // The settings it was computed with, for a face to set: the asked ones with the fp8 cache, nothing else.
    using Changes = std::map<std::string, std::string>;
    CHECK(kvb::test::advised_changes(*a) == Changes{{"kv_cache_dtype", "\"fp8\""}});
    in.kv_cache_dtype = "fp8";
    CHECK_FALSE(kvb::compute_answer(q, in)->advice.has_value());  // already 8-bit
    in.kv_cache_dtype = "";
    in.context = 16384;
    CHECK_FALSE(kvb::compute_answer(q, in)->advice.has_value());  // fits as asked
    // llama.cpp, 2 x 40,960 tokens on a 16 GB card: f16 starts with layers in system RAM, q8_0 all on the GPU.
    in.engine = kvb::BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4060-ti-16gb";
    in.context = 40960;
    in.seqs = 2;
    auto l = kvb::compute_answer(q, in);
    REQUIRE(l.ok());
    CHECK(l->budget->fits_offload);
    REQUIRE(l->advice.has_value());
    CHECK(l->advice->code == "advice_llamacpp_q8_kv");
    CHECK(l->advice->param("max") == "40,960");
    CHECK(kvb::test::advised_changes(*l) == Changes{{"kv_cache_dtype", "\"q8_0\""}, {"kv_cache_dtype_v", "\"q8_0\""}});
    in.kv_cache_dtype = in.kv_cache_dtype_v = "q8_0";
    auto q8 = kvb::compute_answer(q, in);
    CHECK_FALSE(q8->advice.has_value());
    CHECK(kvb::test::advised_changes(*q8).empty());
}

// The advice and an asked fp8 cache follow the GPU (engines/vllm_startup.cpp vllm_fp8_kv_refusal, read at vLLM
// v0.27.1: platforms/cuda.py _get_backend_priorities; flash_attn.py + fa_utils.py, fp8 only with FA3 on 9.x / FA4 on
// 10.x; flashinfer.py, 8.0 to 12.1 and head sizes 64/128/256/512; triton_attn.py and mla/triton_mla.py, which raise
// below 8.9). Qwen3-8B (head size 128), 40,960 tokens: the number of sequences that fits in bf16 but not all at once.
TEST_CASE("fp8 KV advice and an asked fp8 cache follow what vLLM runs on the GPU") {
    const auto& q = fixture("Qwen/Qwen3-8B");
    kvb::BudgetInputs in;
    in.context = 40960;
    auto advice = [&](const char* gpu, int64_t seqs) {
        in.gpu = gpu;
        in.seqs = seqs;
        auto a = kvb::compute_answer(q, in);
        REQUIRE(a.ok());
        CHECK_FALSE(a->budget->all_seqs_fit);
        return a->advice ? kvb::render_english(*a->advice) : std::string("none");
    };
    const std::string fits = "with an fp8 KV cache (--kv-cache-dtype fp8) it fits: up to 40,960 tokens per sequence";
    CHECK(advice("a100-40gb", 4) == fits);    // 8.0: FLASH_ATTN (FA2) refuses fp8, FLASHINFER takes it
    CHECK(advice("rtx-3090", 1) == fits);     // 8.6: the same
    CHECK(advice("l4", 1) == fits);           // 8.9: FlashInfer, Triton too
    CHECK(advice("h100-sxm", 10) == fits);    // 9.0: FA3
    CHECK(advice("mi300x", 32) == fits);      // ROCm: ROCM_ATTN takes fp8 (e4m3fnuz on gfx942), no capability check
    CHECK(advice("v100-32gb", 3) == "none");  // 7.0: no vLLM kernels at all (next test)
    in.weights = "awq";
    CHECK(advice("t4", 2) == "none");
    // Asked for, it is vLLM's refusal: no KV lines (it stops building the attention layers), the command as asked.
    in.kv_cache_dtype = "fp8";
    auto t4 = kvb::compute_answer(q, in);
    REQUIRE(t4.ok());
    const kvb::BudgetResult& r = *t4->budget;
    CHECK_FALSE(r.fits);
    CHECK(r.engine_error ==
          "FP8 KV cache is not supported by the Triton attention backend on NVIDIA T4 (compute capability 7.5); "
          "native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype float16.");
    CHECK(r.verdict_reason.code == "vllm_fp8_kv_triton");
    CHECK(r.log_lines.empty());
    CHECK(r.command == "vllm serve Qwen/Qwen3-8B --max-model-len 40960 --kv-cache-dtype fp8 --quantization awq");
    // Before 0.24.0 (PR #43914) vLLM did not check: the rule is not applied.
    in.engine_version = "0.23.0";
    CHECK(kvb::compute_answer(q, in)->budget->fits);
    in.engine_version = "";
    in.weights = "";
    in.seqs = 1;
    // On 8.0 to 8.6 FlashInfer is the only fp8 path: gpt-oss's sinks keep it out (below 10.x), so Triton refuses.
    in.gpu = "a100-80gb";
    in.context = 8192;
    auto oss = kvb::compute_budget(fixture("openai/gpt-oss-20b"), in);
    REQUIRE(oss.ok());
    CHECK(oss->engine_error ==
          "FP8 KV cache is not supported by the Triton attention backend on NVIDIA A100 80GB SXM4 (compute capability "
          "8.0); native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype bfloat16.");
    in.gpu = "rtx-4090";  // 8.9: Triton takes it
    CHECK(kvb::compute_budget(fixture("openai/gpt-oss-20b"), in)->fits);
    // MLA below 9.x runs on TRITON_MLA, which refuses the same from 0.26.0 (PR #47060).
    in.gpu = "a100-80gb";
    auto ds = kvb::compute_budget(fixture("deepseek-ai/DeepSeek-V3"), in);
    REQUIRE(ds.ok());
    CHECK(ds->engine_error ==
          "FP8 KV cache is not supported by the Triton MLA backend on NVIDIA A100 80GB SXM4 (compute capability 8.0); "
          "native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype bfloat16.");
    in.engine_version = "0.25.0";
    CHECK(kvb::compute_budget(fixture("deepseek-ai/DeepSeek-V3"), in)->verdict_reason.code != "vllm_fp8_kv_triton");
}

// vLLM from 0.20.0 (PR #39878: CMakeLists.txt's CUDA architecture lists lost 7.0; the install guide says "compute
// capability 7.5 or higher") carries no kernels for a V100: it fails at its first kernel, whatever the memory.
TEST_CASE("vLLM from 0.20.0 does not run on a V100, and 0.19.1 does") {
    const auto& q = fixture("Qwen/Qwen3-8B");
    kvb::BudgetInputs in;
    in.gpu = "v100-32gb";
    in.context = 32768;
    auto a = kvb::compute_answer(q, in);
    REQUIRE(a.ok());
    const kvb::BudgetResult& r = *a->budget;
    CHECK_FALSE(r.fits);
    CHECK(r.startup_refused);
    CHECK(r.verdict_reason.code == "vllm_gpu_not_built");
    // vLLM has no check of its own: what it prints is CUDA's error; the reason is ours.
    CHECK(r.engine_error == "CUDA error: no kernel image is available for execution on the device");
    CHECK(kvb::render_english(r.verdict_reason) ==
          "vLLM's wheels carry kernels for compute capability 7.5 and above from 0.20.0 (vllm#39878): on NVIDIA V100 "
          "SXM2 32GB (compute capability 7.0) its first kernel fails with \"CUDA error: no kernel image is available "
          "for execution on the device\". vLLM 0.19.1 is the last release that runs there (engine version 0.19.1 sizes "
          "it), or use llama.cpp");
    CHECK(r.log_lines.empty());
    CHECK_FALSE(a->advice);
    // Memory is not the cause: the command as asked, and no "no context length fits".
    CHECK(r.command == "vllm serve Qwen/Qwen3-8B --max-model-len 32768");
    for (const kvb::Message& n : r.notes) CHECK(n.code != "nothing_fits");
    // The last release built for 7.0, and the rc of 0.20.0 cut before the change, size it.
    for (const char* v : {"0.19.1", "0.20.0rc1"}) {
        in.engine_version = v;
        auto old = kvb::compute_budget(q, in);
        REQUIRE(old.ok());
        CHECK(old->fits);
        CHECK_FALSE(old->startup_refused);
    }
    in.engine_version = "0.20.0";
    CHECK(kvb::compute_budget(q, in)->startup_refused);
    // 7.5 still has kernels; llama.cpp and transformers are not vLLM.
    in.engine_version = "";
    in.gpu = "t4";
    in.context = 4096;
    CHECK_FALSE(kvb::compute_budget(q, in)->startup_refused);
    in.gpu = "v100-32gb";
    in.engine = kvb::BudgetEngine::LlamaCpp;
    CHECK_FALSE(kvb::compute_budget(q, in)->startup_refused);
}

// VllmConfig._get_quantization_config (config.py before 0.14; the same ValueError v0.7.3 .. v0.27.1): the method vLLM
// settles on for the checkpoint, against the GPU's compute capability, as the config is read, before any worker
// starts. gpt-oss on a T4 is the common case (vllm-project/vllm#22288, #23203): MXFP4 needs 8.0 in every release that
// serves gpt-oss, under the name gpt_oss_mxfp4 from 0.20.0 (PR #39604).
TEST_CASE("vLLM refuses a quantization method the GPU's compute capability is below, as it reads the config") {
    const auto& oss = fixture("openai/gpt-oss-20b");
    kvb::BudgetInputs in;
    in.gpu = "t4";
    in.context = 8192;
    auto a = kvb::compute_answer(oss, in);
    REQUIRE(a.ok());
    const kvb::BudgetResult& r = *a->budget;
    CHECK_FALSE(r.fits);
    CHECK(r.startup_refused);
    CHECK(r.verdict_reason.code == "vllm_quant_gpu");
    CHECK(r.engine_error ==
          "The quantization method gpt_oss_mxfp4 is not supported for the current GPU. Minimum capability: 80. Current "
          "capability: 75.");
    CHECK(kvb::render_english(r.verdict_reason) ==
          "vLLM serves the quantization method gpt_oss_mxfp4 from compute capability 8.0 on, and NVIDIA T4 has 7.5: it "
          "stops as it reads the checkpoint's quantization config, with \"The quantization method gpt_oss_mxfp4 is not "
          "supported for the current GPU. Minimum capability: 80. Current capability: 75.\" A newer GPU, a checkpoint "
          "in another format, or llama.cpp with a GGUF of this model runs it");
    CHECK(r.log_lines.empty());
    in.engine_version = "0.19.1";
    CHECK(kvb::compute_budget(oss, in)->engine_error ==
          "The quantization method mxfp4 is not supported for the current GPU. Minimum capability: 80. Current "
          "capability: 75.");
    // The config is read before any worker starts: on a V100 this comes before its missing kernels (0.20.0 on).
    in.engine_version = "";
    in.gpu = "v100-32gb";
    CHECK(kvb::compute_budget(oss, in)->verdict_reason.code == "vllm_quant_gpu");
    in.gpu = "a100-80gb";
    CHECK_FALSE(kvb::compute_budget(oss, in)->startup_refused);
    in.gpu = "t4";
    in.engine = kvb::BudgetEngine::LlamaCpp;
    CHECK_FALSE(kvb::compute_budget(oss, in)->startup_refused);

    // fp8 on a T4: 8.0 before the Turing Marlin kernels of 0.14.0 (PR #29901), 7.5 from them; --quantization fp8 on a
    // float checkpoint is the same method.
    const auto& q = fixture("Qwen/Qwen3-0.6B");
    kvb::BudgetInputs f8;
    f8.gpu = "t4";
    f8.context = 4096;
    f8.weights = "fp8";
    f8.engine_version = "0.13.0";
    auto old = kvb::compute_budget(q, f8);
    REQUIRE(old.ok());
    CHECK(old->engine_error ==
          "The quantization method fp8 is not supported for the current GPU. Minimum capability: 80. Current "
          "capability: 75.");
    f8.engine_version = "0.14.0rc0";
    CHECK_FALSE(kvb::compute_budget(q, f8)->startup_refused);

    // AWQ needs 7.5: the V100 is below it, named auto_awq from 0.24.0 (PR #42727), awq before.
    const auto& awq = fixture("Qwen/Qwen2-VL-2B-Instruct-AWQ");
    kvb::BudgetInputs aw;
    aw.gpu = "v100-32gb";
    aw.context = 8192;
    CHECK(kvb::compute_budget(awq, aw)->engine_error ==
          "The quantization method auto_awq is not supported for the current GPU. Minimum capability: 75. Current "
          "capability: 70.");
    aw.engine_version = "0.19.1";
    CHECK(kvb::compute_budget(awq, aw)->engine_error ==
          "The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current "
          "capability: 70.");
    // Split off its AWQ groups too (TP 4), it stops here first: the split's notes, whose TP 2 would not start on a
    // V100 either, are not said.
    aw.engine_version = "";
    aw.gpu_count = 4;
    auto four = kvb::compute_budget(awq, aw);
    REQUIRE(four.ok());
    CHECK(four->verdict_reason.code == "vllm_quant_gpu");
    for (const kvb::Message& n : four->notes) CHECK(n.code != "vllm_awq_group_fix");
    aw.gpu_count = 1;
    aw.gpu = "t4";
    CHECK_FALSE(kvb::compute_budget(awq, aw)->startup_refused);
}

// ModelOpt checkpoints (quant_method modelopt, one quant_algo for the whole model, as ModelOpt's exports write it):
// FP8 needs 8.9 until ModelOpt FP8 emulation on 8.0 (PR #50019, 0.27.0), so an A100 took NVIDIA's FP8 checkpoints
// only from 0.27.0; NVFP4 (modelopt_fp4) 8.0 from 0.9.0 and 7.5 from 0.14.0. Before 0.9.0 NVFP4 had another name and
// 10.0, not modelled: nothing is claimed there.
TEST_CASE("vLLM's ModelOpt FP8 and NVFP4 need the compute capability of their release") {
    auto with = [](const char* qc) {
        auto j = kvb::parse_json_dom(kvb::test::fixture_text("Qwen/Qwen3-8B"));
        j["quantization_config"] = kvb::parse_json_dom(qc);
        auto m = kvb::parse_config(j.dump(), "nvidia/Qwen3-8B-ModelOpt");
        REQUIRE(m.ok());
        return m.value();
    };
    const kvb::ModelSpec fp8 = with(R"({"quant_method": "modelopt", "quant_algo": "FP8"})");
    kvb::BudgetInputs in;
    in.gpu = "a100-80gb";
    in.context = 8192;
    in.engine_version = "0.26.0";
    CHECK(kvb::compute_budget(fp8, in)->engine_error ==
          "The quantization method modelopt is not supported for the current GPU. Minimum capability: 89. Current "
          "capability: 80.");
    in.engine_version = "0.27.0";
    CHECK_FALSE(kvb::compute_budget(fp8, in)->startup_refused);
    in.gpu = "t4";
    CHECK(kvb::compute_budget(fp8, in)->verdict_reason.code == "vllm_quant_gpu");

    const kvb::ModelSpec fp4 = with(R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16})");
    in.engine_version = "0.13.0";
    CHECK(kvb::compute_budget(fp4, in)->engine_error ==
          "The quantization method modelopt_fp4 is not supported for the current GPU. Minimum capability: 80. Current "
          "capability: 75.");
    in.engine_version = "0.14.0";
    CHECK(kvb::compute_budget(fp4, in)->verdict_reason.code != "vllm_quant_gpu");
    in.engine_version = "0.8.5";
    CHECK(kvb::compute_budget(fp4, in)->verdict_reason.code != "vllm_quant_gpu");
}

// compressed-tensors checks each linear layer's scheme against the GPU as vLLM builds the model
// (CompressedTensorsConfig.get_scheme, read at v0.7.3 ... v0.27.1), and raises a RuntimeError whose arguments print as
// a tuple (vllm#14040: 80 / 75 at qkv_proj). The quantization_configs are written by hand in compressed-tensors'
// config_groups form (fp8 channel weights with dynamic fp8 activations, W4A16 groups of 128, W8A8 int8, NVFP4), not
// copied from a checkpoint, on Meta's Llama-3.1-8B-Instruct config.
TEST_CASE("vLLM refuses a compressed-tensors scheme the GPU's compute capability is below, as it builds the model") {
    auto with = [](const std::string& groups, const char* format) {
        auto j = kvb::parse_json_dom(kvb::test::fixture_text("meta-llama/Llama-3.1-8B-Instruct"));
        auto qc = kvb::parse_json_dom(R"({"quant_method": "compressed-tensors", "ignore": ["lm_head"],
            "quantization_status": "compressed"})");
        qc["config_groups"] = kvb::parse_json_dom(groups);
        qc["format"] = format;
        j["quantization_config"] = qc;
        auto m = kvb::parse_config(j.dump(), "test/Llama-3.1-8B-Instruct-CT");
        REQUIRE(m.ok());
        return m.value();
    };
    const kvb::ModelSpec fp8 = with(R"({"group_0": {"targets": ["Linear"],
        "weights": {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": true, "dynamic": false},
        "input_activations": {"num_bits": 8, "type": "float", "strategy": "token", "symmetric": true,
                              "dynamic": true}}})",
                                    "float-quantized");
    kvb::BudgetInputs in;
    in.gpu = "t4";
    in.context = 4096;
    in.engine_version = "0.15.1";
    auto a = kvb::compute_answer(fp8, in);
    REQUIRE(a.ok());
    const kvb::BudgetResult& r = *a->budget;
    CHECK_FALSE(r.fits);
    CHECK(r.startup_refused);
    CHECK(r.log_lines.empty());
    CHECK(r.verdict_reason.code == "vllm_ct_scheme_gpu_newer");
    CHECK(r.engine_error ==
          "('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current capability: "
          "75.')");
    // W8A8 needs 8.9; below it vLLM takes W8A16 for the same weights, which needed 8.0 until PR #33076 (0.16.0).
    CHECK(
        kvb::render_english(r.verdict_reason) ==
        "vLLM runs this checkpoint's fp8 layers with CompressedTensorsW8A16Fp8, which needs compute capability 8.0, "
        "and NVIDIA T4 has 7.5: it stops as it builds the model (at layers.0.self_attn.qkv_proj) with \"('Quantization "
        "scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current capability: 75.')\". vLLM "
        "0.16.0 and later run it on NVIDIA T4, as do a newer GPU and llama.cpp with a GGUF of this model");
    in.engine_version = "0.16.0";
    CHECK_FALSE(kvb::compute_budget(fp8, in)->startup_refused);
    // dtype auto serves float16 on a V100, so this is where 0.19.1 stops there (0.20.0 on: its missing kernels first).
    in.gpu = "v100-32gb";
    in.engine_version = "0.19.1";
    auto v = kvb::compute_budget(fp8, in);
    REQUIRE(v.ok());
    CHECK(v->verdict_reason.code == "vllm_ct_scheme_gpu");
    CHECK(v->engine_error ==
          "('Quantization scheme is not supported for ', 'the current GPU. Min capability: 75. ', 'Current capability: "
          "70.')");
    in.engine_version = "";
    CHECK(kvb::compute_budget(fp8, in)->verdict_reason.code == "vllm_gpu_not_built");
    in.gpu = "a100-80gb";
    in.engine_version = "0.15.1";
    CHECK_FALSE(kvb::compute_budget(fp8, in)->startup_refused);

    // Integer weights alone (WNA16, pack-quantized): 8.0 until PR #29732 (0.12.0); asymmetric ones read from 0.8.5.
    auto w4 = [](const char* symmetric) {
        return std::string(R"({"group_0": {"targets": ["Linear"], "input_activations": null,
            "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "dynamic": false,
                        "actorder": null, "symmetric": )") +
               symmetric + "}}}";
    };
    const kvb::ModelSpec w4a16 = with(w4("true"), "pack-quantized");
    in.gpu = "t4";
    in.engine_version = "0.11.0";
    auto w = kvb::compute_budget(w4a16, in);
    REQUIRE(w.ok());
    CHECK(kvb::render_english(w->verdict_reason) ==
          "vLLM runs this checkpoint's int4 (W4A16) layers with CompressedTensorsWNA16, which needs compute capability "
          "8.0, and NVIDIA T4 has 7.5: it stops as it builds the model (at layers.0.self_attn.qkv_proj) with "
          "\"('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current "
          "capability: 75.')\". vLLM 0.12.0 and later run it on NVIDIA T4, as do a newer GPU and llama.cpp with a GGUF "
          "of this model");
    in.engine_version = "0.12.0";
    CHECK_FALSE(kvb::compute_budget(w4a16, in)->startup_refused);
    const kvb::ModelSpec asym = with(w4("false"), "pack-quantized");
    in.engine_version = "0.8.5";
    CHECK(kvb::compute_budget(asym, in)->verdict_reason.code == "vllm_ct_scheme_gpu_newer");
    in.engine_version = "0.8.4";
    CHECK_FALSE(kvb::compute_budget(asym, in)->startup_refused);
    // Another format is not WNA16 to vLLM: nothing is claimed.
    in.engine_version = "0.11.0";
    CHECK_FALSE(kvb::compute_budget(with(w4("true"), "naive-quantized"), in)->startup_refused);

    // int8 weights and activations (W8A8Int8): 7.5, so only a V100 (before 0.20.0), and no release takes it there.
    const kvb::ModelSpec int8 = with(R"({"group_0": {"targets": ["Linear"],
        "weights": {"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": true, "dynamic": false},
        "input_activations": {"num_bits": 8, "type": "int", "strategy": "token", "symmetric": true,
                              "dynamic": true}}})",
                                     "int-quantized");
    CHECK_FALSE(kvb::compute_budget(int8, in)->startup_refused);
    in.gpu = "v100-32gb";
    in.engine_version = "0.19.1";
    auto i8 = kvb::compute_budget(int8, in);
    REQUIRE(i8.ok());
    CHECK(
        kvb::render_english(i8->verdict_reason) ==
        "vLLM runs this checkpoint's int8 (W8A8) layers with CompressedTensorsW8A8Int8, which needs compute "
        "capability 7.5, and NVIDIA V100 SXM2 32GB has 7.0: it stops as it builds the model (at "
        "layers.0.self_attn.qkv_proj) "
        "with \"('Quantization scheme is not supported for ', 'the current GPU. Min capability: 75. ', 'Current "
        "capability: 70.')\". A newer GPU, a checkpoint in another format, or llama.cpp with a GGUF of this model runs "
        "it");

    // NVFP4: W4A4 needs 10.0, and below it vLLM takes W4A16 (8.0) from PR #19563 (0.9.2); 7.5 from 0.16.0.
    const kvb::ModelSpec nvfp4 = with(R"({"group_0": {"targets": ["Linear"],
        "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "symmetric": true,
                    "dynamic": false},
        "input_activations": {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16,
                              "symmetric": true, "dynamic": "local"}}})",
                                      "nvfp4-pack-quantized");
    in.gpu = "t4";
    in.engine_version = "0.15.1";
    auto n = kvb::compute_budget(nvfp4, in);
    REQUIRE(n.ok());
    CHECK(n->verdict_reason.code == "vllm_ct_scheme_gpu_newer");
    CHECK(n->verdict_reason.params[2].second == "CompressedTensorsW4A16Fp4");
    in.engine_version = "0.16.0";
    CHECK_FALSE(kvb::compute_budget(nvfp4, in)->startup_refused);
    in.engine_version = "0.9.1";
    CHECK_FALSE(kvb::compute_budget(nvfp4, in)->startup_refused);
    in.gpu = "h100-80gb";
    in.engine_version = "0.15.1";
    CHECK_FALSE(kvb::compute_budget(nvfp4, in)->startup_refused);

    // fp8 blocks: read from 0.11.0 (PR #21404). Below 8.9 vLLM takes W8A16, which took no blocks until PR #33280
    // (0.16.0): on an A100 it passes the capability and stops as it creates the weights.
    const kvb::ModelSpec block = with(R"({"group_0": {"targets": ["Linear"],
        "weights": {"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128],
                    "symmetric": true, "dynamic": false},
        "input_activations": {"num_bits": 8, "type": "float", "strategy": "group", "group_size": 128,
                              "symmetric": true, "dynamic": true}}})",
                                      "float-quantized");
    in.gpu = "a100-80gb";
    auto b = kvb::compute_budget(block, in);
    REQUIRE(b.ok());
    CHECK(b->startup_refused);
    CHECK(b->engine_error.empty());
    CHECK(
        kvb::render_english(b->verdict_reason) ==
        "vLLM 0.11 to 0.15 runs this checkpoint's fp8 block layers on NVIDIA A100 80GB SXM4 (compute capability 8.0) "
        "with CompressedTensorsW8A16Fp8, which takes only channel and tensor scales (W8A8, which takes blocks, needs "
        "fp8 activations and compute capability 8.9): it stops as it builds the model (at layers.0.self_attn.qkv_proj) "
        "with a ValueError, \"Unsupported weight strategy …\". vLLM 0.16.0 and later run it there");
    in.engine_version = "0.16.0";
    CHECK_FALSE(kvb::compute_budget(block, in)->startup_refused);
    in.gpu = "h100-80gb";
    CHECK_FALSE(kvb::compute_budget(block, in)->startup_refused);
    // Before 0.11.0 no release reads them, on any GPU. 0.10.2 finds no scheme class for the first block layer it
    // builds; before it, the compressed-tensors release vLLM requires (before 0.11) takes block_structure as a string
    // and fails the checkpoint's list as the config is read, in pydantic's words (none claimed).
    in.engine_version = "0.10.2";
    auto nb = kvb::compute_budget(block, in);
    REQUIRE(nb.ok());
    CHECK(nb->startup_refused);
    CHECK(nb->engine_error == "No compressed-tensors compatible scheme was found.");
    CHECK(kvb::render_english(nb->verdict_reason) ==
          "vLLM 0.10.2 has no compressed-tensors scheme for fp8 block weights: it stops as it builds the model (at "
          "layers.0.self_attn.qkv_proj) with NotImplementedError, \"No compressed-tensors compatible scheme was "
          "found.\" vLLM 0.11.0 and later read fp8 blocks");
    in.engine_version = "0.10.1";
    auto ob = kvb::compute_budget(block, in);
    REQUIRE(ob.ok());
    CHECK(ob->startup_refused);
    CHECK(ob->engine_error.empty());
    CHECK(kvb::render_english(ob->verdict_reason) ==
          "vLLM before 0.10.2 cannot read this checkpoint's fp8 block weights: the compressed-tensors release it "
          "requires (before 0.11) takes a block_structure as a string, so the checkpoint's [128, 128] fails its "
          "validation as vLLM reads the quantization config, before it builds the model. vLLM 0.11.0 and later read "
          "fp8 blocks");
    // No GPU named, only its memory: the same.
    in.engine_version = "0.10.2";
    in.gpu = "";
    in.gpu_memory_bytes = int64_t(80) << 30;
    CHECK(kvb::compute_budget(block, in)->verdict_reason.code == "vllm_ct_fp8_block_no_scheme");
    in.gpu_memory_bytes = 0;
    in.gpu = "h100-80gb";
    in.engine_version = "0.15.1";
    CHECK_FALSE(kvb::compute_budget(block, in)->startup_refused);
    in.gpu = "t4";
    CHECK(kvb::compute_budget(block, in)->verdict_reason.code == "vllm_ct_scheme_gpu_newer");

    // Only routed experts quantized (attention and dense MLPs in ignore): their MoE methods check in their own ways,
    // and nothing is claimed.
    auto j = kvb::parse_json_dom(kvb::test::fixture_text("Qwen/Qwen3-30B-A3B"));
    j["quantization_config"] = kvb::parse_json_dom(R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
        "ignore": ["lm_head", "re:.*self_attn.*", "re:.*mlp.gate$"],
        "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": null,
            "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 32, "symmetric": true,
                        "dynamic": false}}}})");
    auto moe = kvb::parse_config(j.dump(), "Qwen3-30B-A3B-experts-W4A16");
    REQUIRE(moe.ok());
    in.engine_version = "0.11.0";
    in.gpu_count = 4;
    CHECK(kvb::compute_budget(*moe, in)->verdict_reason.code != "vllm_ct_scheme_gpu");
    CHECK(kvb::compute_budget(*moe, in)->verdict_reason.code != "vllm_ct_scheme_gpu_newer");
}

// CudaPlatform.check_if_supports_dtype (vllm/platforms/cuda.py, called from Worker.init_device; the same ValueError
// from 0.8 to 0.27.1): bfloat16 below compute capability 8.0 stops vLLM before the model loads. dtype auto picks
// float16 there, so only bf16 weights asked for explicitly reach it.
TEST_CASE("vLLM refuses bfloat16 on a GPU below compute capability 8.0") {
    const auto& q = fixture("Qwen/Qwen3-0.6B");
    kvb::BudgetInputs in;
    in.gpu = "t4";
    in.context = 4096;
    in.weights = "bf16";
    auto a = kvb::compute_answer(q, in);
    REQUIRE(a.ok());
    const kvb::BudgetResult& r = *a->budget;
    CHECK_FALSE(r.fits);
    CHECK(r.startup_refused);
    CHECK(r.verdict_reason.code == "vllm_bf16_gpu");
    CHECK(r.engine_error ==
          "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your NVIDIA T4 GPU has compute "
          "capability 7.5. You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: "
          "--dtype=half.");
    CHECK(r.log_lines.empty());
    CHECK(r.command == "vllm serve Qwen/Qwen3-0.6B --max-model-len 4096 --dtype bfloat16");
    // The pool as it would be, in the dtype asked for.
    CHECK(r.kv_cache_dtype == "bfloat16");
    // Before 0.8.0 (PR #13771) the words ran "setting the`dtype`".
    in.engine_version = "0.7.3";
    CHECK(kvb::compute_budget(q, in)->engine_error.find("explicitly setting the`dtype` flag") != std::string::npos);
    in.engine_version = "";
    // dtype auto serves float16 there, and starts.
    in.weights = "";
    auto f = kvb::compute_budget(q, in);
    REQUIRE(f.ok());
    CHECK(f->fits);
    CHECK(f->kv_cache_dtype == "float16");
    // Checked before the wheels' kernels: a V100 under 0.20 fails at the dtype first; 8.0 has bfloat16.
    in.weights = "bf16";
    in.gpu = "v100-32gb";
    CHECK(kvb::compute_budget(q, in)->verdict_reason.code == "vllm_bf16_gpu");
    in.gpu = "a100-40gb";
    CHECK_FALSE(kvb::compute_budget(q, in)->startup_refused);
    // llama.cpp's CUDA build converts bf16 tensors itself.
    in.gpu = "t4";
    in.engine = kvb::BudgetEngine::LlamaCpp;
    CHECK_FALSE(kvb::compute_budget(q, in)->startup_refused);
}

// llama.cpp's quantized V cache needs flash attention; -fa takes a value from b6325 (#15434), a bare -fa before.
TEST_CASE("the llama.cpp command turns flash attention on as the build spells it") {
    kvb::BudgetInputs in;
    in.engine = kvb::BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4090";
    in.context = 8192;
    in.kv_cache_dtype = "q8_0";
    const auto& q = fixture("Qwen/Qwen3-8B");
    CHECK(kvb::compute_budget(q, in)->command ==
          "llama-server -m Qwen3-8B-Q4_K_M.gguf -c 8192 -np 1 -ctk q8_0 -ctv q8_0 -fa on -ngl 99");
    in.engine_version = "b6324";
    CHECK(kvb::compute_budget(q, in)->command ==
          "llama-server -m Qwen3-8B-Q4_K_M.gguf -c 8192 -np 1 -ctk q8_0 -ctv q8_0 -fa -ngl 99");
    in.engine_version = "b6325";
    CHECK(kvb::compute_budget(q, in)->command ==
          "llama-server -m Qwen3-8B-Q4_K_M.gguf -c 8192 -np 1 -ctk q8_0 -ctv q8_0 -fa on -ngl 99");
}

TEST_CASE("more sequences shorten the longest context") {
    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    in.context = 8192;
    in.activation_bytes = GiB;  // the estimates depend on --max-num-seqs; keep the pool equal
    in.cudagraph_bytes = GiB;
    auto one = budget("Qwen/Qwen3-8B", in);
    CHECK_FALSE(one.max_context_capped);
    in.seqs = 8;
    auto eight = budget("Qwen/Qwen3-8B", in);
    CHECK(eight.seqs == 8);
    CHECK(eight.max_num_seqs == 256);  // vLLM's default already runs 8 at once: no flag needed
    CHECK(eight.max_context < one.max_context);
    CHECK(eight.max_context * 8 <= one.max_context + 8 * 16);
}

TEST_CASE("llama.cpp budget: weights + KV + compute buffer + runtime") {
    kvb::BudgetInputs in;
    in.engine = kvb::BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4090";
    in.weights = "Q4_K_M";
    in.context = 8192;
    auto r = budget("meta-llama/Llama-3.1-8B", in);
    CHECK(r.weights.bytes == 4912898048LL);
    CHECK(r.llama.total_bytes == 1073741824LL);  // 8192 cells x 32 layers x 2 x 1024 x 2 bytes
    REQUIRE(r.llama.log_lines.size() == 1);
    CHECK(r.llama.log_lines[0] ==
          "llama_kv_cache: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (f16):  512.00 MiB, V (f16):  "
          "512.00 MiB");
    CHECK(r.activation_bytes == 512 * 4 * (128256 + 2 * 4096));  // the compute buffer
    // The GPU holds the weights without the token embeddings (the input layer stays in system
    // RAM, as llama.cpp's loader places it): 4,912,898,048 - 295,501,824 (token_embd, 128,256 x
    // 4,096 in Q4_K) = 4,617,396,224 B = 4403.49 MiB, the "CUDA0 model buffer size" llama.cpp
    // prints for this file ("CPU_Mapped model buffer size = 281.81 MiB" the embeddings).
    CHECK(r.per_gpu.weights_bytes == 4617396224LL);
    CHECK(r.per_gpu.total_bytes == 4617396224LL + 1073741824LL + 279445504LL + 512 * MiB);
    CHECK(r.fits);
    CHECK(r.max_context == 131072);
    CHECK(r.max_context_capped);
    CHECK(r.command ==
          "llama-server -m Llama-3.1-8B-Q4_K_M.gguf -c 8192 -np 1 -ngl 99");  // f16 K and V: llama.cpp's default

    in.seqs = 4;
    in.kv_cache_dtype = "q8_0";
    auto q = budget("meta-llama/Llama-3.1-8B", in);
    CHECK(q.llama.log_lines[0] ==
          "llama_kv_cache: size = 2176.00 MiB (  8192 cells,  32 layers,  4/4 seqs), K (q8_0): 1088.00 MiB, V (q8_0): "
          "1088.00 MiB");
    CHECK(q.command == "llama-server -m Llama-3.1-8B-Q4_K_M.gguf -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa on -ngl 99");
}

// gpt-oss ships MXFP4 experts, and every GGUF of it keeps them: llama.cpp's default for it is
// ggml-org's gpt-oss-20b-mxfp4.gguf (llama-quantize's MXFP4_MOE), not a Q4_K_M (test_weights.cpp
// has the bytes of each type against the published files).
TEST_CASE("llama.cpp budget of an MXFP4 checkpoint: its MXFP4 GGUF by default, experts MXFP4 in every type") {
    kvb::BudgetInputs in;
    in.engine = kvb::BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4080";  // 16 GB: the whole model and its 131,072-token context on the GPU
    auto r = budget("openai/gpt-oss-20b", in);
    CHECK(r.weights.format.name == "mxfp4");
    CHECK(r.weights.bytes == 12096558336LL);  // llama-bench: 11.27 GiB
    // token_embd (Q8_0, 615,329,280 B) stays in system RAM: llama.cpp's load_tensors prints
    // "CPU_Mapped model buffer size = 586.82 MiB" and "ROCm0 model buffer size = 10949.38 MiB"
    // for ggml-org's file; these 10,949.35 MiB lack the CUDA buffer's row padding (27,904 B).
    CHECK(r.per_gpu.weights_bytes == 12096558336LL - 615329280LL);
    CHECK(r.command == "llama-server -m gpt-oss-20b-mxfp4.gguf -c 131072 -np 1 -ngl 99");
    CHECK(r.fits);
    CHECK_FALSE(r.fits_offload);
    bool said = false;
    for (const kvb::Message& n : r.notes) {
        CHECK(n.code != "gguf_default");
        said = said || n.code == "gguf_default_mxfp4";
    }
    CHECK(said);
    in.weights = "mxfp4";
    CHECK(budget("openai/gpt-oss-20b", in).weights.bytes == 12096558336LL);
    in.weights = "Q4_K_M";
    auto q = budget("openai/gpt-oss-20b", in);
    CHECK(q.weights.bytes == 11611750656LL);  // unsloth's Q4_K_M: 11.6 GB
    CHECK(q.command.rfind("llama-server -m gpt-oss-20b-Q4_K_M.gguf ", 0) == 0);
    in.weights = "bf16";
    CHECK(budget("openai/gpt-oss-20b", in).weights.bytes == 13779630336LL);  // the converter's own file
    // vLLM serves the checkpoint as it ships: MXFP4 experts, bf16 for the rest.
    in.engine = kvb::BudgetEngine::Vllm;
    in.weights = "auto";
    auto v = budget("openai/gpt-oss-20b", in);
    CHECK(v.weights.format.name == "mxfp4");
    CHECK(v.weights.bytes == 10152345600LL + 2 * 1804459584LL);
}

// Nothing fits at any context with every layer on the GPU (-ngl given: --fit leaves it): the
// command keeps the asked -c. llama.cpp reads -c 0 as the model's whole training context
// (40,960 here), a setting the answer never showed.
TEST_CASE("llama.cpp budget: a model that does not fit keeps the asked -c in its command, never -c 0") {
    kvb::BudgetInputs in;
    in.engine = kvb::BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 12LL * 1000 * 1000 * 1000;
    in.weights = "Q4_K_M";
    in.context = 32768;
    in.n_gpu_layers = 49;
    auto r = budget("Qwen/Qwen3-30B-A3B", in);
    CHECK_FALSE(r.fits);
    CHECK_FALSE(r.fits_offload);
    CHECK(r.max_context == 0);
    CHECK(r.command == "llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -c 32768 -np 1 -ngl 49");
}

// Issue 12: with no -ngl, llama-server's --fit (on by default) runs Qwen3-30B-A3B Q4_K_M on a 12 GB
// card with the routed experts of 32 layers (and part of one more) in system RAM. The verdict is
// that placement, not "does not fit": its GPU share at 32,768 tokens, the longest context and the
// most sequences it holds, and the flags that ask for it.
TEST_CASE("llama.cpp budget: --fit's offload is the verdict when not all fits on the GPU") {
    kvb::BudgetInputs in;
    in.engine = kvb::BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 12LL * 1000 * 1000 * 1000;
    in.weights = "Q4_K_M";
    in.context = 32768;
    auto r = budget("Qwen/Qwen3-30B-A3B", in);
    CHECK(r.fits);
    CHECK(r.all_seqs_fit);
    CHECK(r.fits_offload);
    CHECK(r.fit.outcome == "layers");
    CHECK(r.fit.n_gpu_layers == 49);
    CHECK(r.fit.overflow_layers == 33);
    CHECK(r.per_gpu.weights_bytes == 6837680128);  // dense tensors + the experts of 16 layers and part of one
    CHECK(r.per_gpu.kv_bytes == 3221225472);       // every layer's KV stays on the GPU
    CHECK(r.per_gpu.total_bytes == 10915330048);
    CHECK(r.max_context == 40960);  // the model's limit; memory alone would hold 43,776 with this split
    CHECK(r.max_context_capped);
    CHECK(r.max_context_physical == 43776);
    CHECK(r.max_concurrency == 1);
    CHECK(r.verdict_reason.code == "llamacpp_fit_offload_moe");
    CHECK(r.verdict_reason.param("part") == "32");
    CHECK(r.verdict_reason.param("used") == "10.17 GiB");
    CHECK(r.verdict_reason.param("have") == "11.18 GiB");
    CHECK(r.verdict_reason.param("ram") == "10.91 GiB");
    CHECK(
        r.command ==
        "llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -c 32768 -np 1 -ngl 49 -ot "
        "\"blk\\.16\\.ffn_(gate|gate_up|down).*=CPU\" -ot "
        "\"blk\\.(17|18|19|20|21|22|23|24|25|26|27|28|29|30|31|32|33|34|35|36|37|38|39|40|41|42|43|44|45|46|47)\\.ffn_"
        "(up|down|gate_up|gate)_(ch|)exps=CPU\"");
    // With the RAM given and too small for what stays on the CPU, it does not fit, and says why.
    in.ram_bytes = 8LL << 30;
    auto small = budget("Qwen/Qwen3-30B-A3B", in);
    CHECK_FALSE(small.fits);
    CHECK(small.verdict_reason.code == "nofit_ram");
    CHECK(small.verdict_reason.param("need") == "10.91 GiB");
}

TEST_CASE("transformers budget: weights + DynamicCache + prefill + runtime") {
    kvb::BudgetInputs in;
    in.engine = kvb::BudgetEngine::Transformers;
    in.gpu = "rtx-4090";
    in.context = 8192;
    in.seqs = 4;
    auto r = budget("meta-llama/Llama-3.1-8B", in);
    CHECK(r.weights.bytes == 2 * 8030261248LL);
    CHECK(r.cache_bytes == 4LL * 8192 * 131072);           // 4 GiB for 4 x 8,192 tokens
    CHECK(r.cache_transient_bytes == r.cache_bytes / 32);  // one layer's torch.cat copy
    CHECK(r.activation_bytes ==
          kvb::estimate_transformers_activation_bytes(fixture("meta-llama/Llama-3.1-8B"), 4, 8192));
    CHECK(r.per_gpu.total_bytes ==
          r.weights.bytes + r.cache_bytes + r.cache_transient_bytes + r.activation_bytes + 512 * MiB);
    CHECK(r.fits);
    CHECK(r.max_context >= 8192);
    CHECK(r.command.find("from_pretrained(\"meta-llama/Llama-3.1-8B\", dtype=torch.bfloat16") != std::string::npos);
    // MLA models are cached decompressed: DeepSeek-V3 keeps 61 x 128 x (192 + 128) x 2 bytes per token.
    kvb::BudgetInputs d;
    d.engine = kvb::BudgetEngine::Transformers;
    d.gpu = "h200";
    d.gpu_count = 8;
    d.context = 4096;
    auto ds = budget("deepseek-ai/DeepSeek-V3", d);
    CHECK(ds.cache_bytes == 4096LL * 61 * 128 * (192 + 128) * 2);
    kvb::BudgetInputs g = in;
    g.weights = "Q4_K_M";
    CHECK(refused("meta-llama/Llama-3.1-8B", g).message ==
          "transformers loads safetensors checkpoints: GGUF formats (Q4_K_M) are for --engine llamacpp");
}

TEST_CASE("decode bound from bandwidth") {
    kvb::BudgetInputs in;
    in.gpu = "h100-sxm";
    in.context = 4096;
    auto r = budget("meta-llama/Llama-3.1-8B", in);
    // Active weights read per token: everything but the input embedding table.
    CHECK(r.decode.weight_bytes_per_token == 16060522496LL - 1050673152LL);
    CHECK(r.decode.kv_bytes_per_token == 4096LL * 131072);
    CHECK(r.decode.tokens_per_s_single ==
          doctest::Approx(3.35e12 / double(16060522496LL - 1050673152LL + 4096LL * 131072)));
    CHECK(r.decode.batch > 1);
    CHECK(r.decode.tokens_per_s_batch > r.decode.tokens_per_s_single);
}

TEST_CASE("bad budget input gets a clear error") {
    kvb::BudgetInputs in;
    CHECK(refused("Qwen/Qwen3-8B", in).message == "no GPU given: pass --gpu NAME or --gpu-memory SIZE");
    in.gpu = "rtx-9999";
    auto e = refused("Qwen/Qwen3-8B", in);
    CHECK(e.code == "unknown_gpu");
    CHECK(e.message.rfind("unknown GPU 'rtx-9999' (known: rtx-3060-12gb, rtx-3080, rtx-3090, ", 0) == 0);
    in.gpu = "rtx-4090";
    in.gpu_memory_utilization = 1.5;
    CHECK(refused("Qwen/Qwen3-8B", in).message == "gpu_memory_utilization must be in (0, 1], got 1.5");
    in.gpu_memory_utilization = -0.2;
    CHECK(refused("Qwen/Qwen3-8B", in).message == "gpu_memory_utilization must be in (0, 1], got -0.2");
    in.gpu_memory_utilization = 0;
    in.gpu_memory_bytes = -1;
    CHECK(refused("Qwen/Qwen3-8B", in).message ==
          "--gpu-memory must be a whole number from 0 to 1,125,899,906,842,624, got -1");
    in.gpu_memory_bytes = 0;
    in.activation_bytes = -5;
    CHECK(refused("Qwen/Qwen3-8B", in).message ==
          "--activation-memory must be a whole number from -1 to 1,125,899,906,842,624, got -5");
    in.activation_bytes = -1;
    in.weights = "q2_k";
    CHECK(refused("Qwen/Qwen3-8B", in).message.rfind("unknown weights format 'q2_k' (expected one of: auto, ", 0) == 0);
    in.weights = "auto";
    in.tensor_parallel_size = 2;
    CHECK(refused("Qwen/Qwen3-8B", in).message ==
          "tensor_parallel_size x pipeline_parallel_size = 2 exceeds --gpu-count 1");
    in.tensor_parallel_size = 0;
    in.engine = kvb::BudgetEngine::LlamaCpp;
    in.weights = "awq";
    CHECK(refused("Qwen/Qwen3-8B", in).message ==
          "llama.cpp loads GGUF files: --weights must be one of Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q4_0, IQ4_XS, mxfp4, bf16, "
          "fp16 (got 'awq')");
    CHECK(kvb::parse_budget_engine("tgi").error().message ==
          "--engine must be vllm, llamacpp or transformers, got 'tgi'");
    in.engine = kvb::BudgetEngine::Vllm;
    in.weights = "auto";
    in.activation_bytes = int64_t(1) << 60;
    CHECK(refused("Qwen/Qwen3-8B", in).message ==
          "--activation-memory must be a whole number from -1 to 1,125,899,906,842,624, got 1,152,921,504,606,846,976");
    in.activation_bytes = -1;
    in.params = int64_t(1) << 60;
    CHECK(refused("Qwen/Qwen3-8B", in).message ==
          "--params must be a whole number from 0 to 1,125,899,906,842,624, got 1,152,921,504,606,846,976");
    in.params = 0;
    in.max_num_batched_tokens = int64_t(1) << 40;
    CHECK(refused("Qwen/Qwen3-8B", in).message ==
          "--max-num-batched-tokens must be a whole number from 0 to 2,147,483,647, got 1,099,511,627,776");
    in.max_num_batched_tokens = 0;
    in.seqs = 0;
    auto z = refused("Qwen/Qwen3-8B", in);
    CHECK(z.message == "--seqs must be a whole number from 1 to 1,048,576, got 0");
    CHECK(z.detail.code == "input_out_of_range");
    CHECK(z.detail.param("field") == "seqs");
}

TEST_CASE("kvbudget budget CLI: output, JSON and exit status") {
    auto ok = run_cli("budget " + cfg("meta-llama--Llama-3.1-8B") + " --gpu rtx-4090 --max-model-len 16384");
    CHECK(ok.status == 0);
    CHECK(ok.out.find("verdict: FITS (16,384 tokens x 1 request)") != std::string::npos);
    CHECK(ok.out.find("command: vllm serve meta-llama/Llama-3.1-8B --max-model-len 16384") != std::string::npos);
    // Contexts as people write them: 16K is 16,384 tokens, as the page's context field reads it.
    auto k = run_cli("budget " + cfg("meta-llama--Llama-3.1-8B") + " --gpu rtx-4090 --max-model-len 16K");
    CHECK(k.out == ok.out);
    auto bad = run_cli("budget " + cfg("meta-llama--Llama-3.1-8B") + " --gpu rtx-4090 --max-model-len 16KB");
    CHECK(bad.status == 1);
    CHECK(bad.out ==
          "kvbudget: error: --max-model-len: '16KB' is not a context length; write tokens as 32768, 32,768, 32K (= "
          "32,768) or 1M (= 1,048,576)\n");

    auto no = run_cli("budget " + cfg("Qwen--Qwen3-8B") + " --gpu rtx-4090");
    CHECK(no.status == 0);  // a verdict, not a refusal
    CHECK(no.out.find("verdict: DOES NOT FIT (40,960 tokens x 1 request)") != std::string::npos);

    auto js = run_cli("budget " + cfg("Qwen--Qwen3-8B") + " --gpu-memory 80GiB --json --gpu-memory-utilization 0.85");
    CHECK(js.status == 0);
    for (const char* key :
         {"\"fits\":true", "\"kv_pool_bytes\":", "\"max_context\":", "\"max_concurrency\":", "\"params\":8190735360",
          "\"gpu_memory_utilization\":0.85",
          "\"command\":\"vllm serve Qwen/Qwen3-8B --max-model-len 40960 --gpu-memory-utilization 0.85\"",
          "\"metrics\":{\"kv-bytes-per-token\":147456,"})
        CHECK_MESSAGE(js.out.find(key) != std::string::npos, key);

    auto bad_gpu = run_cli("budget " + cfg("Qwen--Qwen3-8B") + " --gpu rtx-9999");
    CHECK(bad_gpu.status == 1);
    CHECK(bad_gpu.out.rfind("kvbudget: error: unknown GPU 'rtx-9999' (known: ", 0) == 0);
    auto util0 = run_cli("budget " + cfg("Qwen--Qwen3-8B") + " --gpu rtx-4090 --gpu-memory-utilization 0");
    CHECK(util0.status == 1);
    CHECK(util0.out == "kvbudget: error: --gpu-memory-utilization must be a number in (0, 1], got '0'\n");
    auto neg = run_cli("budget " + cfg("Qwen--Qwen3-8B") + " --gpu-memory -4GiB");
    CHECK(neg.status == 1);
    auto wfmt = run_cli("budget " + cfg("Qwen--Qwen3-8B") + " --gpu h100 --weights int3");
    CHECK(wfmt.status == 1);
    CHECK(wfmt.out.rfind("kvbudget: error: unknown weights format 'int3'", 0) == 0);
    auto nogpu = run_cli("budget " + cfg("Qwen--Qwen3-8B"));
    CHECK(nogpu.status == 2);
    CHECK(nogpu.out == "kvbudget: error: budget needs --gpu NAME or --gpu-memory SIZE\n");
    auto unknown = run_cli("budget " + cfg("Qwen--Qwen3-8B") + " --gpu h100 --frobnicate 3");
    CHECK(unknown.status == 2);
}

TEST_CASE("llama.cpp budget with K and V cache types set apart (-ctk q8_0 -ctv f16)") {
    kvb::BudgetInputs in;
    in.engine = kvb::BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4090";
    in.context = 8192;
    in.kv_cache_dtype = "q8_0";
    in.kv_cache_dtype_v = "f16";
    auto r = kvb::compute_budget(fixture("meta-llama/Llama-3.1-8B"), in);
    REQUIRE(r);
    CHECK(r->kv_cache_dtype == "q8_0");
    CHECK(r->kv_cache_dtype_v == "f16");
    // K: 32 layers x 1024 values x 34/32 B x 8192 cells = 272 MiB; V: 32 x 1024 x 2 x 8192 = 512 MiB.
    REQUIRE(r->llama.log_lines.size() == 1);
    CHECK(r->llama.log_lines[0] ==
          "llama_kv_cache: size =  784.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (q8_0):  272.00 MiB, V (f16):  "
          "512.00 MiB");
    CHECK(r->command.find(" -ctk q8_0 -ngl") != std::string::npos);  // -ctv f16 is the default
    CHECK(r->command.find("-fa on") == std::string::npos);           // only a quantized V needs flash attention
    in.kv_cache_dtype_v = "q5";
    CHECK(kvb::compute_budget(fixture("meta-llama/Llama-3.1-8B"), in).error().message ==
          "unknown llama.cpp cache type 'q5' (choose from f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl)");
    auto cli = run_cli("budget " + cfg("meta-llama--Llama-3.1-8B") + " --gpu h100 -ctv q8_0");
    CHECK(cli.status == 2);
    CHECK(cli.out == "kvbudget: error: -ctk / -ctv are llama.cpp's; use --kv-cache-dtype for vllm\n");
}

TEST_CASE("kvbudget budget reads -ctk / -ctv as llama.cpp does, and --kv-cache-dtype (the page's kv) as both") {
    // llama.cpp common/arg.cpp: -ctk sets cache_type_k, -ctv cache_type_v, each GGML_TYPE_F16 unless
    // given; the page's kv sets both halves and its ctk / ctv win for theirs (web/src/state.js).
    // Llama-3.1-8B, 8192 cells: K or V 512 MiB in f16, 272 MiB in q8_0 (34/32 B a value), 144 MiB in q4_0.
    const std::string base =
        "budget " + cfg("meta-llama--Llama-3.1-8B") + " --engine llamacpp --gpu rtx-4090 --max-model-len 8192 ";
    const auto kv_line = [&](const std::string& flags) {
        auto r = run_cli(base + flags);
        REQUIRE(r.status == 0);
        const auto at = r.out.find("llama_kv_cache: size");
        REQUIRE(at != std::string::npos);
        const auto cmd = r.out.find("command: ");
        REQUIRE(cmd != std::string::npos);
        return r.out.substr(at, r.out.find('\n', at) - at) + " | " + r.out.substr(cmd, r.out.find('\n', cmd) - cmd);
    };
    CHECK(kv_line("-ctk q8_0") ==
          "llama_kv_cache: size =  784.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (q8_0):  272.00 MiB, V (f16):  "
          "512.00 MiB | command: llama-server -m Llama-3.1-8B-Q4_K_M.gguf -c 8192 -np 1 -ctk q8_0 -ngl 99");
    CHECK(kv_line("-ctv q8_0") ==
          "llama_kv_cache: size =  784.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (f16):  512.00 MiB, V (q8_0):  "
          "272.00 MiB | command: llama-server -m Llama-3.1-8B-Q4_K_M.gguf -c 8192 -np 1 -ctv q8_0 -fa on -ngl 99");
    CHECK(kv_line("--kv-cache-dtype q8_0") ==
          "llama_kv_cache: size =  544.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (q8_0):  272.00 MiB, V (q8_0):  "
          "272.00 MiB | command: llama-server -m Llama-3.1-8B-Q4_K_M.gguf -c 8192 -np 1 -ctk q8_0 -ctv q8_0 -fa on "
          "-ngl 99");
    CHECK(kv_line("--kv-cache-dtype q8_0 -ctk q4_0") ==
          "llama_kv_cache: size =  416.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (q4_0):  144.00 MiB, V (q8_0):  "
          "272.00 MiB | command: llama-server -m Llama-3.1-8B-Q4_K_M.gguf -c 8192 -np 1 -ctk q4_0 -ctv q8_0 -fa on "
          "-ngl 99");
    CHECK(kv_line("--kv-cache-dtype q8_0 -ctv f16") ==
          "llama_kv_cache: size =  784.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (q8_0):  272.00 MiB, V (f16):  "
          "512.00 MiB | command: llama-server -m Llama-3.1-8B-Q4_K_M.gguf -c 8192 -np 1 -ctk q8_0 -ngl 99");
}

TEST_CASE("llama.cpp and transformers on several GPUs: each holds its share of the layers, and its own buffers") {
    // Llama-3.1-8B, Q4_K_M, 32K context, one request, on 1 and on 4 RTX 4090s (23.64 GiB each as PyTorch reports).
    kvb::BudgetInputs in;
    in.engine = kvb::BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4090";
    in.context = 32768;
    auto one = budget("meta-llama/Llama-3.1-8B", in);
    CHECK(one.per_gpu.capacity_bytes == 25382879232LL);
    CHECK(one.per_gpu.weights_bytes == 4617396224LL);    // llama.cpp: CUDA0 model buffer size = 4403.49 MiB
    CHECK(one.per_gpu.kv_bytes == 4294967296LL);         // 32,768 cells x 131,072 B
    CHECK(one.per_gpu.activation_bytes == 279445504LL);  // compute buffer: 512 x 4 x (128,256 + 2 x 4,096)
    CHECK(one.per_gpu.overhead_bytes == 536870912LL);
    CHECK(one.per_gpu.total_bytes == 9728679936LL);
    CHECK(one.per_gpu.free_bytes == 25382879232LL - 9728679936LL);
    in.gpu_count = 4;
    auto four = budget("meta-llama/Llama-3.1-8B", in);
    CHECK(four.per_gpu.capacity_bytes == 25382879232LL);  // one GPU's, not four
    CHECK(four.per_gpu.weights_bytes == 1154349056LL);    // a quarter of the layers
    CHECK(four.per_gpu.kv_bytes == 1073741824LL);         // and of their cells
    CHECK(four.per_gpu.activation_bytes == 279445504LL);  // every GPU has its own compute buffer
    CHECK(four.per_gpu.overhead_bytes == 536870912LL);    // and its own runtime: not 4 x 512 MiB on one GPU
    CHECK(four.per_gpu.total_bytes == 3044407296LL);
    CHECK(four.fits);
    CHECK(four.notes.back().code == "layers_split");
    // More GPUs never shorten the longest context.
    CHECK(four.max_context >= one.max_context);

    // transformers device_map="auto": bf16 weights 16,060,522,496 B over 2 GPUs, DynamicCache likewise.
    kvb::BudgetInputs t;
    t.engine = kvb::BudgetEngine::Transformers;
    t.gpu = "rtx-4090";
    t.gpu_count = 2;
    t.context = 8192;
    auto two = budget("meta-llama/Llama-3.1-8B", t);
    CHECK(two.per_gpu.weights_bytes == 8030261248LL);
    CHECK(two.per_gpu.kv_bytes == 8192LL * 131072 / 2 + 8192LL * 131072 / 32);  // half the cache + one layer's copy
    CHECK(two.per_gpu.overhead_bytes == 536870912LL);
    CHECK(two.per_gpu.total_bytes ==
          two.per_gpu.weights_bytes + two.per_gpu.kv_bytes + two.activation_bytes + 536870912LL);
}

TEST_CASE("concurrent requests are not vLLM's --max-num-seqs") {
    // The operator's case: Llama-3.1-70B on 4 x H100, TP 4, 32K context. Asking for 16 requests at once
    // keeps vLLM's own default --max-num-seqs (1,024 on an 80 GB H100), so the estimates and the answer are
    // those of the command printed, and the command carries no --max-num-seqs.
    kvb::BudgetInputs in;
    in.gpu = "h100-sxm";
    in.gpu_count = 4;
    in.context = 32768;
    auto one = budget("meta-llama/Llama-3.1-70B", in);
    CHECK(one.tp == 4);
    CHECK(one.max_num_seqs == 1024);
    CHECK(one.max_concurrency == 13);
    in.seqs = 16;
    auto sixteen = budget("meta-llama/Llama-3.1-70B", in);
    CHECK(sixteen.max_num_seqs == 1024);
    CHECK(sixteen.max_concurrency == 13);
    CHECK(sixteen.fits);
    CHECK_FALSE(sixteen.all_seqs_fit);
    CHECK(sixteen.command == "vllm serve meta-llama/Llama-3.1-70B --max-model-len 32768 --tensor-parallel-size 4");
    in.kv_cache_dtype = "fp8";
    auto fp8 = budget("meta-llama/Llama-3.1-70B", in);
    CHECK(fp8.max_concurrency == 27);
    CHECK(fp8.all_seqs_fit);
    // More requests than vLLM's default runs at once: the flag becomes part of the answer.
    in.seqs = 2000;
    auto many = budget("meta-llama/Llama-3.1-70B", in);
    CHECK(many.max_num_seqs == 2000);
    CHECK(many.command.find(" --max-num-seqs 2000") != std::string::npos);
    // An explicit --max-num-seqs below the requests is kept, and said.
    in.seqs = 16;
    in.max_num_seqs = 8;
    auto capped = budget("meta-llama/Llama-3.1-70B", in);
    CHECK(capped.max_num_seqs == 8);
    CHECK_FALSE(capped.all_seqs_fit);
    auto below = std::find_if(capped.notes.begin(), capped.notes.end(),
                              [](const kvb::Message& n) { return n.code == "max_num_seqs_below_seqs"; });
    REQUIRE(below != capped.notes.end());
    CHECK(kvb::render_english(*below) == "--max-num-seqs 8 lets vLLM run only 8 of the 16 requests at once");
}

TEST_CASE("vLLM: the longest context and the GPU KV cache size line differ by the null block, and a note says so") {
    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    in.context = 16384;
    auto r = budget("Qwen/Qwen3-8B", in);
    REQUIRE(r.fits);
    CHECK(r.log_lines.back() ==
          "GPU KV cache size: 31,024 tokens, Maximum concurrency for 16,384 tokens per request: 1.89x");
    CHECK(r.max_context == 31008);
    bool found = false;
    for (const auto& n : r.notes)
        if (n.code == "vllm_null_block") {
            found = true;
            CHECK(kvb::render_english(n) ==
                  "vLLM's \"GPU KV cache size: 31,024 tokens\" counts the one 16-token block it keeps in reserve (the "
                  "null block): one request can hold at most 31,008 tokens, the longest context shown here");
        }
    CHECK(found);
    // With several sequences the longest context is per sequence: no such note.
    in.seqs = 2;
    for (const auto& n : budget("Qwen/Qwen3-8B", in).notes) CHECK(n.code != "vllm_null_block");
}

TEST_CASE("the GPU note quotes the maker's GB, not GiB") {
    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    auto r = budget("Qwen/Qwen3-8B", in);
    REQUIRE(r.notes.size() > 0);
    CHECK(r.notes[0].code == "gpu_reported");
    CHECK(kvb::render_english(r.notes[0]) ==
          "GPU total is what PyTorch reports on a NVIDIA GeForce RTX 4090 (23.64 GiB, marketed 24 GB)");
}

// vLLM's registry names the architectures it dropped (_PREVIOUSLY_SUPPORTED_MODELS) and stops with this ValueError as
// it resolves the config's architecture, before the max-model-len check, when its Transformers backend cannot take
// the model either: no transformers class of that name, remote code older than the attention interface.
TEST_CASE("vLLM stops at an architecture its release dropped; one its Transformers backend may take gets a note") {
    kvb::BudgetInputs in;
    in.gpu = "h100";
    in.context = 4096;
    auto run = [&](const char* id, const char* version) {
        in.engine_version = version;
        auto a = kvb::compute_budget(fixture(id), in);
        REQUIRE(a.ok());
        return a.value();
    };
    // Baichuan: removed by PR (4cd1a84c8, v0.23.1rc0-371), first in 0.25.0; the registry says "until v0.23.0".
    for (const char* v : {"", "0.25.0rc1", "0.25.0", "0.23.1rc1.dev371"}) {
        CAPTURE(v);
        const auto b = run("baichuan-inc/Baichuan2-13B-Chat", v);
        CHECK_FALSE(b.fits);
        CHECK(b.startup_refused);
        CHECK(b.log_lines.empty());
        CHECK(b.verdict_reason.code == "vllm_arch_dropped");
        CHECK(b.engine_error ==
              "Model architecture BaichuanForCausalLM was supported in vLLM until v0.23.0, and is not supported "
              "anymore. Please use an older version of vLLM if you want to use this model architecture.");
    }
    CHECK(kvb::render_english(run("baichuan-inc/Baichuan2-13B-Chat", "").verdict_reason) ==
          "vLLM 0.31.0 no longer serves BaichuanForCausalLM and stops as it reads the model's config; it names 0.23.0 "
          "as the last release that did. Choose vLLM 0.23.0 or earlier");
    for (const char* v : {"0.24.0", "0.23.0", "0.23.1rc1.dev370"}) {
        CAPTURE(v);
        const auto b = run("baichuan-inc/Baichuan2-13B-Chat", v);
        CHECK(b.fits);
        CHECK(b.engine_error.empty());
    }
    // MiniMax-M1 and InternLM (v1): removed in 0.24.0. It comes before the context check: 4,096 is within M1's limit,
    // but a context past it would be refused the same way.
    CHECK(run("MiniMaxAI/MiniMax-M1-80k", "0.24.0").verdict_reason.code == "vllm_arch_dropped");
    CHECK(run("internlm/internlm-20b", "0.24.0rc1").verdict_reason.code == "vllm_arch_dropped");
    CHECK(run("internlm/internlm-20b", "0.23.0").verdict_reason.code != "vllm_arch_dropped");
    in.context = 8192;
    CHECK(run("internlm/internlm-20b", "").verdict_reason.code == "vllm_arch_dropped");
    in.context = 4096;
    // Llama 3.2 Vision (MllamaForConditionalGeneration, removed in 0.11.0): transformers has the class, so vLLM tries
    // its Transformers backend first; a note says so, the numbers are vLLM's own implementation's.
    const auto mllama = run("meta-llama/Llama-3.2-11B-Vision-Instruct", "0.11.0");
    CHECK_FALSE(mllama.startup_refused);
    CHECK(std::any_of(mllama.notes.begin(), mllama.notes.end(),
                      [](const kvb::Message& n) { return n.code == "vllm_arch_dropped_backend"; }));
    const auto before = run("meta-llama/Llama-3.2-11B-Vision-Instruct", "0.10.2");
    CHECK(std::none_of(before.notes.begin(), before.notes.end(),
                       [](const kvb::Message& n) { return n.code == "vllm_arch_dropped_backend"; }));
    // vLLM resolves the architecture before it checks the parallel sizes: Baichuan2-13B's 40 heads at TP 16 stop the
    // newest release at the architecture, 0.24.0 at the heads.
    in.gpu_count = 16;
    in.engine_version = "";
    auto tp16 = kvb::compute_budget(fixture("baichuan-inc/Baichuan2-13B-Chat"), in);
    REQUIRE_FALSE(tp16.ok());
    CHECK(tp16.error().detail.code == "vllm_arch_dropped");
    in.engine_version = "0.24.0";
    auto tp16_old = kvb::compute_budget(fixture("baichuan-inc/Baichuan2-13B-Chat"), in);
    REQUIRE_FALSE(tp16_old.ok());
    CHECK(tp16_old.error().detail.code == "vllm_tp_heads");
}

// vLLM reads a repository's own classes (auto_map) only with --trust-remote-code: without it a model_type transformers
// lacks stops it at the config ("Failed to load the model config ..."), and Kimi-K2's or ChatGLM's tokenizer class
// lives in that code even where vLLM registers the config. transformers >= 4.48.2 (vLLM 0.7.3's minimum) reads phi3,
// mpt and the rest of its own types without it.
TEST_CASE("vLLM's command has --trust-remote-code where the repository's own code is needed") {
    kvb::BudgetInputs in;
    in.gpu = "h100";
    in.context = 4096;
    auto run = [&](const char* id) {
        auto a = kvb::compute_budget(fixture(id), in);
        REQUIRE(a.ok());
        std::string type;
        for (const auto& n : a.value().notes)
            if (n.code == "vllm_trust_remote_code") type = n.param("type");
        return std::make_pair(a.value().command, type);
    };
    in.engine_version = "0.23.0";
    CHECK(run("baichuan-inc/Baichuan2-13B-Chat") ==
          std::make_pair(std::string("vllm serve baichuan-inc/Baichuan2-13B-Chat --max-model-len 4096 "
                                     "--trust-remote-code"),
                         std::string("baichuan")));
    in.engine_version = "";
    CHECK(run("nvidia/Llama-3_3-Nemotron-Super-49B-v1").second == "nemotron-nas");
    CHECK(run("moonshotai/Kimi-K2-Instruct").second == "kimi_k2");
    CHECK(run("deepseek-ai/DeepSeek-V3").second == "deepseek_v3");
    CHECK(run("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16").first ==
          "vllm serve nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 --max-model-len 4096 --trust-remote-code");
    // Configs transformers reads itself, whatever their auto_map; and the ones without an auto_map.
    for (const char* id : {"microsoft/Phi-3.5-mini-instruct", "mosaicml/mpt-7b-instruct", "Qwen/Qwen3-8B"}) {
        CAPTURE(id);
        const auto r = run(id);
        CHECK(r.first.find("--trust-remote-code") == std::string::npos);
        CHECK(r.second.empty());
    }
    // A dropped architecture's config needs the flag too: with it vLLM gets as far as the architecture and refuses.
    const auto m1 = kvb::compute_budget(fixture("MiniMaxAI/MiniMax-M1-80k"), in);
    REQUIRE(m1.ok());
    CHECK(m1.value().verdict_reason.code == "vllm_arch_dropped");
    CHECK(m1.value().command.find(" --trust-remote-code") != std::string::npos);
    // transformers needs it only for a model_type it has no class for: then its own class would not be used either.
    in.engine = kvb::BudgetEngine::Transformers;
    const auto baichuan = run("baichuan-inc/Baichuan2-13B-Chat");
    CHECK(baichuan.first ==
          "AutoModelForCausalLM.from_pretrained(\"baichuan-inc/Baichuan2-13B-Chat\", dtype=torch.bfloat16, "
          "device_map=\"auto\", trust_remote_code=True); model.generate(**batch_of_1, max_length=4096)");
    auto tf_note = [&](const char* id) {
        auto a = kvb::compute_budget(fixture(id), in);
        REQUIRE(a.ok());
        for (const auto& n : a.value().notes)
            if (n.code == "transformers_trust_remote_code") return n.param("type");
        return std::string();
    };
    CHECK(tf_note("baichuan-inc/Baichuan2-13B-Chat") == "baichuan");
    CHECK(tf_note("nvidia/Llama-3_3-Nemotron-Super-49B-v1") == "nemotron-nas");
    // deepseek_v3 (transformers 4.5x), phi3: transformers' own class, so no remote code, whatever the auto_map.
    CHECK(tf_note("deepseek-ai/DeepSeek-V3").empty());
    CHECK(tf_note("microsoft/Phi-3.5-mini-instruct").empty());
    CHECK(run("deepseek-ai/DeepSeek-V3").first.find("trust_remote_code") == std::string::npos);
}

// Qwen2.5-VL's vision blocks build their gated MLP (intermediate 3,420) as one MergedColumnParallelLinear, which
// asserts that TP divides both output sizes, with no message: at TP 8 vLLM stops there, after the encoder's 16 heads
// passed. The 7B's config with text heads TP 8 divides (16 and 2, as Qwen2.5-VL-3B's): only the tower stops it.
TEST_CASE("vLLM stops at a vision MLP tensor parallelism does not divide (Qwen2.5-VL at TP 8)") {
    nlohmann::json cfg = nlohmann::json::parse(kvb::test::fixture_text("Qwen/Qwen2.5-VL-7B-Instruct"));
    cfg["num_attention_heads"] = 16;
    cfg["num_key_value_heads"] = 2;
    auto m = kvb::parse_config(cfg.dump(), "Qwen/Qwen2.5-VL-7B-Instruct");
    REQUIRE(m.ok());
    CHECK(m->dims.vision_mlp == 3420);
    kvb::BudgetInputs in;
    in.gpu = "h100";
    in.context = 32768;
    in.gpu_count = 8;
    auto tp8 = kvb::compute_budget(*m, in);
    REQUIRE_FALSE(tp8.ok());
    CHECK(tp8.error().detail.code == "vllm_tp_vision_mlp_merged");
    CHECK(tp8.error().message ==
          "AssertionError (vLLM splits the vision encoder's gated MLP of 3420 over tensor parallel size 8, which does "
          "not divide it)");
    in.gpu_count = 4;
    CHECK(kvb::compute_budget(*m, in).ok());
    // Qwen2-VL's fc1 (embed_dim x mlp_ratio 4 = 5,120) is a ColumnParallelLinear, checked through divide().
    auto q2 = fixture("Qwen/Qwen2-VL-2B-Instruct-AWQ");
    CHECK(q2.dims.vision_mlp == 5120);
    CHECK_FALSE(q2.dims.vision_mlp_merged);
}
