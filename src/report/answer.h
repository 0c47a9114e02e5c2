// The page's question and `kvbudget budget`'s: does this model fit this GPU with this
// engine, and what fits? One Answer, computed once, for both faces: the KV report, the
// engine budget (or the engine's refusal), and the six headline metrics the page marks
// with data-metric (docs/DESIGN.md).
#pragma once
#include <cstdint>
#include <optional>

#include "budget/budget.h"
#include "report/kv_report.h"

namespace kvb {

// The page's headline numbers, keyed in JSON by their data-metric names; empty when
// the engine refused (the KV metrics are always there).
struct AnswerMetrics {
    int64_t kv_bytes_per_token = 0;  // context-proportional part, chosen KV dtype, one sequence, before TP
    int64_t kv_bytes_total = 0;      // context x seqs as the engine lays them out (BudgetResult::kv_total_bytes)
    std::optional<int64_t> weights_bytes;
    std::optional<int64_t> total_bytes;           // per GPU: weights + KV + activations + overhead
    std::optional<int64_t> max_context;           // for `seqs` sequences at once, within the model's limit
    std::optional<int64_t> max_context_physical;  // the same, past the model's limit: what memory holds
    std::optional<int64_t> max_concurrency;
};

struct Answer {
    BudgetInputs inputs;  // as asked
    KvReport kv;
    std::optional<BudgetResult> budget;     // empty when the engine refuses the request
    std::optional<Error> refusal;           // why (vLLM's or the budget's own words)
    int64_t chart_capacity_bytes = 0;       // all GPUs, for the chart's memory line
    std::optional<RopeScaling> rope_offer;  // the RoPE scaling the model card documents, if any
    // When the answer is no (or not all on the GPU) and other settings of the same GPUs would make it
    // yes (an 8-bit KV cache, expert parallelism, fewer TP ranks times pipeline stages): what to pass,
    // from the same budget run with them.
    std::optional<Message> advice;
    // Those settings: the inputs that budget ran with, so a face that offers to take the advice sets
    // exactly what was computed (the page's "Use these settings") instead of knowing each advice.
    std::optional<BudgetInputs> advice_inputs;
    AnswerMetrics metrics;
};

// Error when the inputs themselves are refused (validate()); an engine refusing this
// model at these settings is part of the Answer, beside the KV numbers.
// `draft`: the drafter's config for in.speculative_config (compute_budget), nullptr = none.
Result<Answer> compute_answer(const ModelSpec& m, const BudgetInputs& in, const ModelSpec* draft = nullptr);

}  // namespace kvb
