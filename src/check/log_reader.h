// Reads an engine's start-up log as text (a whole log with timestamps and process
// prefixes, or a fragment pasted from an issue) into what the engine said about
// itself: its settings and the engine lines kvbudget can recompute. No I/O, no
// config: src/check/check.h compares the lines with the engines' prediction.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace kvb {

enum class LogEngine { Vllm, Llamacpp };
const char* to_string(LogEngine e);

// Which engine line a LogLine is; each has its own fields in `nums` / `texts`.
enum class LogLineKind {
    VllmTokens,       // "GPU KV cache size: N tokens" (nums: tokens; combined: + mml, concurrency)
    VllmConcurrency,  // "Maximum concurrency for M tokens per request: X.XXx" (nums: mml, concurrency)
    VllmGpuBlocks,    // V0 "# GPU blocks: N, # CPU blocks: C" (nums: gpu_blocks, cpu_blocks)
    VllmNotEnough,    // "To serve at least one request ..." (nums: mml, needed_gib, available_gib, estimate)
    VllmV0TooLong,    // V0 "The model's max seq len (M) is larger than ... (N)" (nums: mml, tokens)
    VllmNoMemory,     // "No available memory for the cache blocks."
    VllmSetBlock,     // "Setting attention block size to N tokens ..." (nums: block)
    VllmPadMamba,     // "Padding mamba page size by X% ..." (nums: percent)
    VllmPadLayers,    // "Add N padding layers, may waste at most X% KV cache memory" (nums: layers, percent)
    // PyTorch's "CUDA out of memory. Tried to allocate X ..." in either wording (texts: wording new|old;
    // nums in bytes: tried, total, free, [process, allocated, cached] new, [allocated, reserved] old; gpu)
    TorchOom,
    LlamaKvSize,         // "<prefix>: size = ... MiB (cells, layers, seqs), K (t): ..., V (t): ..."
    LlamaIswaCreate,     // "<prefix>: creating non-SWA|SWA KV cache, size = N cells"
    LlamaRecurrentSize,  // "llama_memory_recurrent: size = ..."
    // ggml's "allocating X MiB on device N: cudaMalloc failed: out of memory" with the line after it
    // naming the buffer (nums: mib, device, [bytes]; texts: what = weights|compute|kv)
    LlamaCudaOom
};

struct LogLine {
    int64_t number = 0;  // 1-based line in the paste
    LogLineKind kind = LogLineKind::VllmTokens;
    std::string text;  // the engine's message, from its first word (timestamps and prefixes cut)
    std::vector<std::pair<std::string, double>> nums;
    std::vector<std::pair<std::string, std::string>> texts;  // e.g. {"type_k", "q8_0"}, {"prefix", ...}
    // The last "Available KV cache memory" (vLLM) before this line, as printed ("6.51"); "" when none.
    std::string available_gib;
    int run = 0;  // which start-up in a paste holding several (0, 1, ...)
    double num(const std::string& k, double def = -1) const;
    bool is_oom() const { return kind == LogLineKind::TorchOom || kind == LogLineKind::LlamaCudaOom; }
    std::string str(const std::string& k) const;
};

struct LogFacts {
    LogEngine engine = LogEngine::Vllm;
    std::string version;  // "0.10.1", "b6699"; "" when the log does not say
    std::string model;    // model id or path as the log names it
    // What the engine said about its settings, in the log's own words (value as printed),
    // keyed by kvbudget's names: max_model_len, tensor_parallel_size, kv_cache_dtype, n_ctx, ...
    std::vector<std::pair<std::string, std::string>> settings;
    // llama.cpp print_info hyper-parameters (name -> value as printed), for a config from the log.
    std::vector<std::pair<std::string, std::string>> hparams;
    std::vector<LogLine> lines;
    int64_t line_count = 0;
    bool markup = false;  // HTML markup was found (read as text, nothing executed)
    std::string setting(const std::string& k) const;
    std::string hparam(const std::string& k) const;
};

// The most a paste may hold: a start-up log is a few hundred kilobytes at most.
constexpr int64_t kMaxLogBytes = int64_t(8) << 20;

// Refuses with a coded message: check_empty, check_too_large, check_binary, check_markup_only,
// check_not_engine_log, check_truncated.
Result<LogFacts> read_engine_log(const std::string& text);

}  // namespace kvb
