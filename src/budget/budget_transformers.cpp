// transformers generate() with the default DynamicCache: weights + cache + prefill
// activations + runtime, no paging. device_map="auto" spreads the layers (and so the
// weights and the cache) over the GPUs; the prefill peak and the runtime are on each.
#include <algorithm>

#include "base/arith.h"
#include "base/text.h"
#include "base/units.h"
#include "budget/budget_steps.h"
#include "engines/remote_code.h"
#include "engines/transformers_cache.h"

namespace kvb::budget_steps {

Result<bool> transformers(const Ctx& c, BudgetResult& r) {
    const ModelSpec& m = c.m;
    const BudgetInputs& in = c.in;
    const int64_t n = in.gpu_count;
    if (m.max_position_embeddings <= 0 && in.context <= 0)
        return make_error("missing_field", note("no_context_limit", {{"model", m.name}}));
    const int64_t limit = m.max_position_embeddings > 0 ? r.model_max_len : in.context;
    r.context = in.context > 0 ? in.context : limit;
    // generate() runs past the model's limit when asked to, so a context asked beyond it is the
    // cap of the longest context instead (over_model_max).
    const int64_t cap = std::max(limit, r.context);
    const std::string model_dtype = m.dtype.empty() ? "bfloat16" : m.dtype;
    r.kv_cache_dtype = model_dtype;
    r.cudagraph_estimated = false;
    r.overhead_estimated = in.overhead_bytes < 0;
    r.activation_estimated = in.activation_bytes < 0;
    r.overhead_bytes = in.overhead_bytes >= 0 ? in.overhead_bytes : kRuntimeOverheadBytes;
    r.weights_per_gpu_bytes = cdiv(r.weights.all_bytes(), n);
    auto tc = transformers_cache(m);
    if (!tc) return tc.error();
    const int64_t cached_layers = std::max<int64_t>(1, tc->full_layers + tc->windowed_layers + tc->state_layers);
    auto act_at = [&](int64_t batch, int64_t len) {
        return in.activation_bytes >= 0 ? in.activation_bytes : estimate_transformers_activation_bytes(m, batch, len);
    };
    // Bytes on one GPU beyond its weights for `batch` sequences of `len` tokens; -1 when not computable.
    auto need = [&](int64_t batch, int64_t len) -> int64_t {
        auto cb = transformers_cache_bytes(m, len, batch);
        if (!cb) return -1;
        return sat_add(sat_add(cdiv(cb.value(), n), cb.value() / cached_layers),
                       sat_add(act_at(batch, len), r.overhead_bytes));
    };
    const int64_t room = sat_sub(r.requested_bytes, r.weights_per_gpu_bytes);
    auto cb = transformers_cache_bytes(m, r.context, r.seqs);
    if (!cb) return cb.error();
    r.cache_bytes = cb.value();
    r.kv_total_bytes = r.cache_bytes;
    r.cache_transient_bytes = cb.value() / cached_layers;
    r.activation_bytes = act_at(r.seqs, r.context);
    r.kv_pool_bytes = sat_sub(room, sat_add(r.activation_bytes, r.overhead_bytes));

    fill_per_gpu(r, sat_add(cdiv(r.cache_bytes, n), r.cache_transient_bytes));
    const PerGpu& g = r.per_gpu;
    r.fits = g.total_bytes <= r.requested_bytes;
    r.all_seqs_fit = r.fits;
    if (!r.fits)
        r.verdict_reason = note("nofit_transformers", {{"need", format_bytes(g.total_bytes)},
                                                       {"weights", format_bytes(g.weights_bytes)},
                                                       {"cache", format_bytes(cdiv(r.cache_bytes, n))},
                                                       {"transient", format_bytes(r.cache_transient_bytes)},
                                                       {"prefill", format_bytes(r.activation_bytes)},
                                                       {"runtime", format_bytes(r.overhead_bytes)},
                                                       {"have", format_bytes(r.requested_bytes)}});
    auto fits_at = [&](int64_t batch, int64_t len) {
        const int64_t b = need(batch, len);
        return b >= 0 && b <= room;
    };
    if (room > 0 && fits_at(r.seqs, 1)) {
        r.max_context_capped = fits_at(r.seqs, cap);
        r.max_context =
            r.max_context_capped ? cap : largest_true(1, cap, [&](int64_t x) { return fits_at(r.seqs, x); });
    }
    r.max_context_physical = r.max_context;
    if (r.max_context_capped)
        r.max_context_physical = physical_max(cap, 1, [&](int64_t x) { return fits_at(r.seqs, x); });
    if (room > 0 && fits_at(1, r.context))
        r.max_concurrency = most_that_fit(int64_t(1) << 20, [&](int64_t x) { return fits_at(x, r.context); });

    const std::string d = lower(model_dtype);
    const std::string dt = d == "float32" ? "float32" : d == "float16" ? "float16" : "bfloat16";
    // dtype=, not torch_dtype=: transformers 4.56 renamed it, and v5 warns on the old name.
    // A model_type transformers lacks loads only through the repository's code, with trust_remote_code=True.
    const bool remote = transformers_needs_remote_code(m);
    if (remote) r.notes.push_back(note("transformers_trust_remote_code", {{"type", m.config_type}}));
    r.command = "AutoModelForCausalLM.from_pretrained(\"" + m.name + "\", dtype=torch." + dt + ", device_map=\"auto\"" +
                (remote ? ", trust_remote_code=True" : "") + "); model.generate(**batch_of_" + std::to_string(r.seqs) +
                ", max_length=" + std::to_string(r.fits ? r.context : r.max_context) + ")";
    if (c.fmt.kind != WeightKind::Float && m.quant.method.empty())
        r.notes.push_back(note("transformers_pre_quantized", {{"format", c.fmt.name}}));
    r.notes.push_back(note("sdpa"));
    if (n > 1) r.notes.push_back(note("layers_split", {{"n", std::to_string(n)}}));
    r.decode.kv_bytes_per_token = sat_add(sat_mul(tc->bytes_per_token, r.context), tc->state_bytes);
    return true;
}

}  // namespace kvb::budget_steps
