#include "report/kv_report.h"

#include <algorithm>

namespace kvb {

Result<KvReport> compute_kv_report(const ModelSpec& model, const KvReportInputs& in) {
    if (in.engine != "vllm" && in.engine != "llamacpp" && in.engine != "transformers")
        return make_error("bad_value", note("bad_engine", {{"value", in.engine}}));
    if (in.seqs < 1 || in.context < 0)
        return make_error("bad_value",
                          note("input_out_of_range", {{"field", in.seqs < 1 ? "seqs" : "context"},
                                                      {"flag", in.seqs < 1 ? "--seqs" : "--context"},
                                                      {"min", in.seqs < 1 ? "1" : "0"},
                                                      {"max", "1,073,741,824"},
                                                      {"value", std::to_string(in.seqs < 1 ? in.seqs : in.context)}}));
    auto ek = engine_kv(model, in.engine, in.kv_dtype, in.cache_type_k, in.cache_type_v,
                        in.engine == "vllm" ? in.engine_version : "", in.served_dtype);
    if (!ek) return ek.error();
    const EngineKv& e = ek.value();
    const ModelSpec& m = e.view;
    KvReport r;
    r.model = m.name;
    r.engine = in.engine;
    r.dtypes = e.dtypes;
    r.context =
        in.context > 0 ? in.context : (model.max_position_embeddings > 0 ? model.max_position_embeddings : 4096);
    r.seqs = in.seqs;
    r.ideal = ideal_kv(m, r.dtypes);
    auto total = kv_bytes_at(m, r.dtypes, r.context, r.seqs);
    if (!total) return total.error();
    auto per_seq = kv_bytes_at(m, r.dtypes, r.context, 1);
    if (!per_seq) return per_seq.error();
    r.bytes_total = total.value();
    r.bytes_per_seq = per_seq.value();
    r.formula = layer_groups(m, r.dtypes);
    r.weights_bytes = in.weights_bytes;
    for (const ContextRow& row : context_table(e, r.seqs, in.model_max, r.context)) {
        const double vs =
            r.weights_bytes > 0 ? static_cast<double>(row.bytes_total) / static_cast<double>(r.weights_bytes) : 0.0;
        r.context_table.push_back({row, vs});
    }
    r.head_variants = head_variants(e, r.context, r.seqs);
    r.ladder = optimization_ladder(model, in.engine, r.context, r.seqs, in.served_dtype);
    r.curve = kv_curve(e, r.seqs, std::max<int64_t>({r.context, model.max_position_embeddings, in.model_max, 4096}));
    if (r.weights_bytes > 0) r.crossover_context = crossover_context(m, r.dtypes, r.weights_bytes, r.seqs);
    for (const auto& n : model.notes) r.notes.push_back(n);
    return r;
}

}  // namespace kvb
