#include "report/engine_json.h"

#include "report/json_common.h"

namespace kvb {

using nlohmann::json;
using namespace report_json;

namespace {

json all_notes(const ModelSpec& m, const std::vector<Message>& engine_notes) {
    json a = notes_json(m.notes);
    for (const Message& n : engine_notes) a.push_back(message_json(n));
    return a;
}

}  // namespace

std::string to_json_text(const ModelSpec& m, const VllmCapacity& c) {
    const VllmLayout& L = c.layout;
    json groups = json::array();
    for (const VllmGroup& g : L.groups)
        groups.push_back({{"spec", g.spec_type},
                          {"block_size", g.block_size},
                          {"page_size_bytes", g.page_size_bytes},
                          {"window", g.window},
                          {"layers", g.layers}});
    return dump({
        {"model", m.name},
        {"kv_cache_dtype", L.kv_cache_dtype},
        {"kv_cache_memory", c.available_bytes},
        {"max_model_len", L.max_model_len},
        {"max_num_batched_tokens", L.max_num_batched_tokens},
        {"tensor_parallel_size", L.tp},
        {"pipeline_parallel_size", L.pp},
        {"stage_layers", L.stage_layers},
        {"stage_bytes_per_block", L.stage_bytes_per_block},
        {"block_size", L.attn_block_size},
        {"mla_backend", L.mla_backend},
        {"mamba_cache_mode", to_string(L.mamba_cache_mode)},
        {"page_size_bytes", L.page_size_bytes},
        {"group_size", L.group_size},
        {"bytes_per_block", L.bytes_per_block},
        {"uniform_type", L.uniform_type},
        {"padding_layers", L.padding_layers},
        {"groups", groups},
        {"fits", c.fits},
        {"num_blocks", c.num_blocks},
        {"usable_blocks", c.usable_blocks},
        {"blocks_per_request", c.blocks_per_request},
        {"request_bytes", c.request_bytes},
        {"tokens", c.tokens},
        {"legacy_tokens", c.legacy_tokens},
        {"cpu_blocks", c.cpu_blocks},
        {"max_concurrency", c.max_concurrency},
        {"estimated_max_model_len", c.estimated_max_model_len},
        {"error", c.error_text},
        {"refusal", c.refusal.code.empty() ? json(nullptr) : message_json(c.refusal)},
        {"log_lines", c.log_lines},
        {"notes", all_notes(m, L.notes)},
    });
}

std::string to_json_text(const ModelSpec& m, const LlamaLayout& L, const LlamaDraft& draft) {
    json caches = json::array();
    for (const LlamaKvCache& k : L.caches)
        caches.push_back({{"role", k.role},
                          {"cells", k.cells},
                          {"layers", k.layers},
                          {"n_stream", k.n_stream},
                          {"type_k", k.type_k},
                          {"type_v", k.type_v},
                          {"k_bytes", k.k_bytes},
                          {"v_bytes", k.v_bytes},
                          {"bytes_per_cell", k.bytes_per_cell},
                          {"window", k.window}});
    json recurrent = nullptr;
    if (L.recurrent.present)
        recurrent = {{"cells", L.recurrent.cells},
                     {"layers", L.recurrent.state_layers},
                     {"r_bytes", L.recurrent.r_bytes},
                     {"s_bytes", L.recurrent.s_bytes}};
    return dump({
        {"model", m.name},
        {"n_ctx", L.n_ctx},
        {"n_ctx_seq", L.n_ctx_seq},
        {"n_seq_max", L.n_seq_max},
        {"n_stream", L.n_stream},
        {"kv_unified", L.unified},
        {"caches", caches},
        {"recurrent", recurrent},
        {"kv_bytes", L.kv_bytes},
        {"total_bytes", L.total_bytes},
        {"bytes_per_token", L.bytes_per_token},
        {"draft", parse_json_dom(llama_draft_json(draft).text())},
        {"log_lines", L.log_lines},
        {"notes", all_notes(m, L.notes)},
    });
}

}  // namespace kvb
