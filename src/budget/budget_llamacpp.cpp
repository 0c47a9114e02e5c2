// llama.cpp's budget: weights + KV cache + compute buffer + runtime on every GPU.
// With -sm layer (the default) each GPU holds an even share of the layers, with their
// weights and KV cells, plus its own compute buffer and runtime; the budget is the
// fullest GPU's, against its memory.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "base/arith.h"
#include "base/units.h"
#include "budget/budget_steps.h"
#include "kv/kv.h"
#include "model/dtype.h"
#include "model/rope.h"

namespace kvb::budget_steps {

namespace {

constexpr int64_t kLlamaMaxDevices = 16;  // llama_max_devices() in src/llama.cpp

// "Qwen/Qwen3-8B" + Q4_K_M -> "Qwen3-8B-Q4_K_M.gguf" (the usual naming of GGUF uploads).
std::string gguf_file(const ModelSpec& m, const std::string& fmt) {
    std::string base = m.name;
    if (auto s = base.find_last_of('/'); s != std::string::npos) base = base.substr(s + 1);
    if (base.empty()) base = "model";
    if (m.source == "gguf")
        return base.size() > 5 && base.compare(base.size() - 5, 5, ".gguf") == 0 ? base : base + ".gguf";
    std::string f = fmt == "bf16" ? "BF16" : fmt == "fp16" ? "F16" : fmt == "fp32" ? "F32" : fmt;
    return base + "-" + f + ".gguf";
}

// Flags llama-server needs to allocate what the page shows: -c counts all slots' cells.
// A file from the Hub is named the way llama-server downloads it (-hf org/repo:QUANT).
std::string command(const ModelSpec& m, const WeightFormat& fmt, const BudgetResult& r, bool v_quantized,
                    const std::string& hf_ref, const LlamaBuild& build) {
    // Past what fits: the longest context that does; when none does, the asked one (the
    // answer says it does not fit). Never -c 0: llama.cpp reads that as the model's whole
    // training context, another setting than the page shows.
    const int64_t ctx = r.fits || r.max_context <= 0 ? r.context : r.max_context;
    std::string cmd = "llama-server " + (hf_ref.empty() ? "-m " + gguf_file(m, fmt.name) : "-hf " + hf_ref);
    cmd += " -c " + std::to_string(sat_mul(std::max<int64_t>(ctx, 0), r.seqs));
    cmd += " -np " + std::to_string(r.seqs);
    if (r.kv_cache_dtype != "f16") cmd += " -ctk " + r.kv_cache_dtype;
    if (r.kv_cache_dtype_v != "f16") cmd += " -ctv " + r.kv_cache_dtype_v;
    // A quantized V cache needs flash attention on every backend (CUDA, ROCm, Metal, Vulkan, CPU take q8_0 / q4_0
    // K and V): said, since under -fa auto builds before b10206 could start without it and stop.
    if (v_quantized) cmd += build.fa_takes_value ? " -fa on" : " -fa";
    if (m.rope_scaling && m.rope_scaling->source == "user") {
        const RopeScaling& rs = *m.rope_scaling;
        std::string f = py_float_text(rs.factor);
        if (f.size() > 2 && f.compare(f.size() - 2, 2, ".0") == 0) f.resize(f.size() - 2);
        cmd += " --rope-scaling " + rs.type + " --rope-scale " + f;
        if (rs.type == "yarn") cmd += " --yarn-orig-ctx " + std::to_string(rs.original_max_position_embeddings);
    }
    const LlamaOffload& o = r.offload;
    // --fit's offload: the -ngl (and -ts / -ot) it chose, made explicit (-ngl 99 would stop it).
    if (r.fits_offload) {
        const std::string& fl = r.fit.flags;
        const size_t at = fl.find(" -ngl ");
        cmd += at == std::string::npos ? " " + fl : fl.substr(at);
        return cmd;
    }
    cmd += " -ngl " + std::to_string(o.active ? o.n_gpu_layers : 99);
    if (o.active && !o.kv_offload) cmd += " --no-kv-offload";
    return cmd;
}

// Says what --fit will do when it changes something, and the flags that ask for it.
void fit_notes(BudgetResult& r, int64_t n_layer) {
    const LlamaFit& f = r.fit;
    if (f.outcome == "context")
        r.notes.push_back(note("llamacpp_fit_context", {{"ctx", with_commas(f.context)},
                                                        {"margin", format_bytes(f.target_bytes)},
                                                        {"free", format_bytes(f.free_bytes)},
                                                        {"flags", f.flags}}));
    // Several GPUs with a MoE's slots split: the output slot (no experts) is partial when the
    // last device has partial slots.
    else if (f.outcome == "layers" && f.device_layers.size() > 1 && f.overflow_layers > 0) {
        std::string ts;
        for (size_t i = 0; i < f.device_layers.size(); ++i) ts += (i ? "," : "") + std::to_string(f.device_layers[i]);
        const int64_t part = f.overflow_layers - (f.device_overflow.back() > 0 ? 1 : 0);
        r.notes.push_back(note("llamacpp_fit_moe_devices", {{"ngl", std::to_string(f.n_gpu_layers)},
                                                            {"n", std::to_string(n_layer + 1)},
                                                            {"ts", ts},
                                                            {"ctx", with_commas(f.context)},
                                                            {"part", std::to_string(part)},
                                                            {"margin", format_bytes(f.target_bytes)},
                                                            {"flags", f.flags}}));
    }
    // llama.cpp counts the output slot among the overflowing ones (it has no experts).
    else if (f.outcome == "layers" && f.overflow_layers > 1)
        r.notes.push_back(note("llamacpp_fit_moe_layers", {{"ngl", std::to_string(f.n_gpu_layers)},
                                                           {"n", std::to_string(n_layer + 1)},
                                                           {"ctx", with_commas(f.context)},
                                                           {"part", std::to_string(f.overflow_layers - 1)},
                                                           {"margin", format_bytes(f.target_bytes)},
                                                           {"flags", f.flags}}));
    else if (f.outcome == "layers" && f.device_layers.size() > 1) {
        std::string ts;
        for (size_t i = 0; i < f.device_layers.size(); ++i) ts += (i ? "," : "") + std::to_string(f.device_layers[i]);
        r.notes.push_back(note("llamacpp_fit_devices", {{"ngl", std::to_string(f.n_gpu_layers)},
                                                        {"n", std::to_string(n_layer + 1)},
                                                        {"ts", ts},
                                                        {"ctx", with_commas(f.context)},
                                                        {"margin", format_bytes(f.target_bytes)},
                                                        {"flags", f.flags}}));
    } else if (f.outcome == "layers")
        r.notes.push_back(note("llamacpp_fit_layers", {{"ngl", std::to_string(f.n_gpu_layers)},
                                                       {"n", std::to_string(n_layer + 1)},
                                                       {"ctx", with_commas(f.context)},
                                                       {"margin", format_bytes(f.target_bytes)},
                                                       {"flags", f.flags}}));
    else if (f.outcome == "failed")
        r.notes.push_back(note("llamacpp_fit_failed", {{"need", format_bytes(f.projected_bytes)},
                                                       {"free", format_bytes(f.free_bytes)},
                                                       {"margin", format_bytes(f.target_bytes)}}));
    else if (f.outcome == "not_predicted" && r.gpu_count > 1)
        r.notes.push_back(note("llamacpp_fit_multi", {{"n", std::to_string(r.gpu_count)}}));
    else if (f.outcome == "not_predicted")
        r.notes.push_back(note("llamacpp_fit_moe", {{"ctx", with_commas(f.context)}}));
}

// What a decode step reads from each side of one GPU's placement (a draft model's GPU layers with the GPU's); the
// input layer's table is one row a token.
ReadSplit read_split(const Placement& p, int64_t draft_gpu_weights, int64_t input) {
    return ReadSplit{sat_add(p.gpu_weights, draft_gpu_weights),
                     std::max<int64_t>(0, p.cpu_weights - input),
                     p.gpu_kv,
                     p.cpu_kv,
                     p.cpu_expert_weights,
                     p.expert_weights};
}

}  // namespace

Result<bool> llamacpp(const Ctx& c, BudgetResult& r) {
    // compute_budget gave the target as llama.cpp loads it (llamacpp_target: a config's MTP block
    // appended for draft-mtp).
    const ModelSpec& m = c.m;
    const BudgetInputs& in = c.in;
    const int64_t n = in.gpu_count;
    r.activation_estimated = in.activation_bytes < 0;
    r.overhead_estimated = in.overhead_bytes < 0;
    r.cudagraph_estimated = false;
    r.activation_bytes =
        in.activation_bytes >= 0 ? in.activation_bytes : estimate_llamacpp_compute_bytes(m, in.n_ubatch);
    r.overhead_bytes = in.overhead_bytes >= 0 ? in.overhead_bytes : kRuntimeOverheadBytes;
    r.weights_per_gpu_bytes = cdiv(r.weights.bytes, n);
    r.kv_pool_bytes =
        sat_sub(sat_sub(r.requested_bytes, r.weights_per_gpu_bytes), sat_add(r.activation_bytes, r.overhead_bytes));
    r.kv_cache_dtype = in.kv_cache_dtype.empty() ? "f16" : in.kv_cache_dtype;
    r.kv_cache_dtype_v = in.kv_cache_dtype_v.empty() ? r.kv_cache_dtype : in.kv_cache_dtype_v;
    auto kt = llamacpp_kv_type(r.kv_cache_dtype);
    if (!kt) return kt.error();
    auto vt = llamacpp_kv_type(r.kv_cache_dtype_v);
    if (!vt) return vt.error();
    if (m.max_position_embeddings <= 0 && in.context <= 0)
        return make_error("missing_field", note("no_context_limit", {{"model", m.name}}));
    const int64_t limit = m.max_position_embeddings > 0 ? r.model_max_len : in.context;
    r.context = in.context > 0 ? in.context : limit;
    // llama.cpp runs past the model's limit when asked to (it warns: n_ctx_seq > n_ctx_train), so a
    // context asked beyond it is the cap of the longest context instead (over_model_max). From b6925
    // llama-server gives no slot more than n_ctx_train (r.slot_cap, set by compute_budget): the cache
    // still holds the asked cells, but a request gets at most that.
    int64_t cap = std::max(limit, r.context);
    if (r.slot_cap > 0) cap = std::min(cap, r.slot_cap);

    LlamaOptions o;
    o.kv_unified = false;
    auto build = llama_build(in.engine_version);  // "" = the newest
    if (!build) return build.error();
    apply_llama_build(build.value(), o);
    o.type_k = r.kv_cache_dtype;
    o.type_v = r.kv_cache_dtype_v;
    o.n_ubatch = in.n_ubatch;
    // Speculative decoding (llamacpp_draft.cpp): the target keeps rollback snapshots of its
    // recurrent state, and the draft context's cache sits beside it. The draft's bytes are
    // counted with the target's KV (kv_bytes); the placement puts them with the layers they
    // cache (a -md draft's own layers, an MTP draft's nextn layers: the target's last). A
    // separate draft model's weights are loaded beside the target's (draft_weights below); an
    // MTP draft runs on the target's own.
    LlamaDraftOptions dopt;
    dopt.type = c.llama_spec;
    dopt.n_max = in.spec_draft_n_max;
    dopt.type_k = in.spec_draft_type_k.empty() ? "f16" : in.spec_draft_type_k;
    dopt.type_v = in.spec_draft_type_v.empty() ? "f16" : in.spec_draft_type_v;
    auto dm = llamacpp_draft_model(m, dopt.type, c.draft, in.engine_version);
    if (!dm) return dm.error();
    std::optional<ModelSpec> draft_model = std::move(dm.value());
    o.n_rs_seq = llamacpp_n_rs_seq(dopt);
    // -md's weights: llama-server loads the draft with -ngld (default -1: llama.cpp's own default,
    // every layer) over -devd (default: the target's devices, split by layer as the target is);
    // its token embeddings stay in system RAM as every model's input layer does.
    int64_t draft_gpu_weights = 0, draft_cpu_weights = 0, draft_weight_bytes = 0;
    std::vector<int64_t> draft_slots;  // the draft's GPU slots in load order: its layers, then its output layer
    if (draft_model && dopt.type != LlamaSpecType::DraftMtp) {
        WeightBytes dw;
        if (draft_model->gguf) {
            dw.format.name = "gguf";
            dw.bytes = draft_model->gguf->tensor_bytes - llamacpp_unloaded_nextn_bytes(*draft_model, false);
        } else {
            auto wb = weight_bytes(*draft_model, c.fmt, 0, 1, 1, false);
            if (!wb) return wb.error();
            dw = std::move(wb.value());
        }
        auto dlw = llamacpp_layer_weights(*draft_model, dw);
        if (!dlw) return dlw.error();
        // On the GPU(s): every layer and the output layer (a tied model's a copy of its embeddings,
        // as llama.cpp's loader duplicates token_embd for it); in system RAM: the input layer.
        draft_cpu_weights = dlw->input;
        draft_slots = dlw->layers;
        draft_slots.push_back(dlw->output);
        for (int64_t b : draft_slots) draft_gpu_weights = sat_add(draft_gpu_weights, b);
        draft_weight_bytes = dw.bytes;
        r.notes.push_back(note("llamacpp_draft_weights_counted", {{"bytes", format_bytes(dw.bytes)},
                                                                  {"gpu", format_bytes(draft_gpu_weights)},
                                                                  {"cpu", format_bytes(draft_cpu_weights)}}));
    }
    // The target's layout with the draft context's bytes in total_bytes.
    auto target_layout = [&](const LlamaOptions& p) -> Result<LlamaLayout> {
        auto l = llamacpp_layout(m, p);
        if (!l || !draft_model) return l;
        auto d = llamacpp_draft(*draft_model, l.value(), p, dopt);
        if (!d) return d.error();
        LlamaLayout out = std::move(l.value());
        out.total_bytes = sat_add(out.total_bytes, d->total_bytes);
        return out;
    };
    // An MTP draft context caches the target's nextn layers, its last ones (draft layer j is target
    // layer n_layer - n_mtp + j); llama_kv_cache puts each layer's cells on model.dev_layer(il), so
    // its KV sits with those layers, whatever device or system RAM holds them. Its bytes of the
    // layers first.. at p (0 with no MTP draft).
    const bool mtp_draft = dopt.type == LlamaSpecType::DraftMtp;
    auto mtp_kv_from = [&](const LlamaOptions& p, int64_t first) -> Result<int64_t> {
        if (!mtp_draft) return int64_t(0);
        const auto n_d = static_cast<int64_t>(draft_model->layers.size());
        const int64_t skip = std::clamp<int64_t>(first - (static_cast<int64_t>(m.layers.size()) - n_d), 0, n_d);
        if (skip >= n_d) return int64_t(0);
        ModelSpec sub = *draft_model;
        sub.layers.erase(sub.layers.begin(), sub.layers.begin() + skip);
        auto tl = llamacpp_layout(m, p);
        if (!tl) return tl.error();
        auto d = llamacpp_draft(sub, tl.value(), p, dopt);
        if (!d) return d.error();
        return d->total_bytes;
    };
    auto mtp_kv_at = [&](const LlamaOptions& p) -> KvFrom {
        if (!mtp_draft) return {};
        return [&mtp_kv_from, p](int64_t first) { return mtp_kv_from(p, first); };
    };
    auto layout_at = [&](int64_t ctx, int64_t seqs) -> Result<LlamaLayout> {
        LlamaOptions p = o;
        p.n_seq_max = seqs;
        p.n_ctx = sat_mul(ctx, seqs);
        return target_layout(p);
    };
    auto lay = layout_at(r.context, r.seqs);
    if (!lay) return lay.error();
    r.llama = std::move(lay.value());
    r.kv_total_bytes = r.llama.total_bytes;
    r.log_lines = r.llama.log_lines;
    if (draft_model) {
        LlamaOptions p = o;
        p.n_seq_max = r.seqs;
        p.n_ctx = sat_mul(r.context, r.seqs);
        auto tl = llamacpp_layout(m, p);
        if (!tl) return tl.error();
        auto d = llamacpp_draft(*draft_model, tl.value(), p, dopt);
        if (!d) return d.error();
        r.llama_draft = std::move(d.value());
        for (const std::string& ln : r.llama_draft.layout.log_lines) r.log_lines.push_back(ln);
        r.notes.push_back(note("llamacpp_draft_kv", {{"type", to_string(dopt.type)},
                                                     {"bytes", format_bytes(r.llama_draft.total_bytes)},
                                                     {"contexts", std::to_string(r.llama_draft.contexts)},
                                                     {"layers", std::to_string(draft_model->layers.size())}}));
    }
    r.llama_draft.type = dopt.type;
    if (o.n_rs_seq > 0 && r.llama.recurrent.present)
        r.notes.push_back(
            note("llamacpp_rs_seq", {{"n", std::to_string(o.n_rs_seq)},
                                     {"bytes", format_bytes(r.llama.recurrent.r_bytes + r.llama.recurrent.s_bytes)}}));
    for (const Message& ln : r.llama.notes)
        if (ln.code == "llama_ctx_over_train" || ln.code == "llama_build_newer") r.notes.push_back(ln);
    // server_context::load_model: n_ctx_slot = llama_n_ctx_seq(ctx), capped at n_ctx_train with a warning.
    r.n_ctx_slot = r.slot_cap > 0 ? std::min(r.llama.n_ctx_seq, r.slot_cap) : r.llama.n_ctx_seq;
    r.slot_capped = r.slot_cap > 0 && r.llama.n_ctx_seq > r.slot_cap;
    if (r.slot_capped) {
        const std::string line = llamacpp_slot_cap_line(build.value(), r.llama.n_ctx_seq, r.slot_cap);
        r.log_lines.push_back(line);
        r.notes.push_back(
            note("llamacpp_slot_capped",
                 {{"cells", with_commas(r.llama.n_ctx_seq)}, {"cap", with_commas(r.slot_cap)}, {"line", line}}));
        // A user's YaRN on a build before #28030: the cap is the GGUF's length, not the scaled one.
        if (m.rope_scaling && m.rope_scaling->source == "user" && m.rope_scaling->type == "yarn" &&
            !build->yarn_ctx_train)
            r.notes.push_back(note("llamacpp_slot_cap_yarn", {{"build", "b" + std::to_string(build->build)},
                                                              {"max", with_commas(r.model_max_len)}}));
    }

    const auto n_layer = static_cast<int64_t>(m.layers.size());
    LlamaOffload& off = r.offload;
    off.active = in.n_gpu_layers >= 0 || in.no_kv_offload || in.ram_bytes > 0;
    off.n_layer = n_layer;
    off.n_slots = n_layer + 1;
    off.kv_offload = !in.no_kv_offload;
    off.ram_bytes = in.ram_bytes;
    auto lw = llamacpp_layer_weights(m, r.weights, dopt.type == LlamaSpecType::DraftMtp);
    if (!lw) return lw.error();
    // In all, after the target's layers took their shares of the target's bytes.
    r.weights.bytes = sat_add(r.weights.bytes, draft_weight_bytes);
    off.estimated = lw->estimated;
    const int64_t ngl = in.n_gpu_layers >= 0 ? in.n_gpu_layers : n_layer + 1;
    // One GPU's share of a placement: the offloaded layers' weights and KV spread over the
    // GPUs, plus each GPU's own compute buffer and runtime.
    auto gpu_need = [&](const Placement& p) {
        return sat_add(sat_add(cdiv(sat_add(p.gpu_weights, draft_gpu_weights), n), cdiv(p.gpu_kv, n)),
                       sat_add(r.activation_bytes, r.overhead_bytes));
    };
    auto place_at = [&](int64_t ctx, int64_t seqs, int64_t layers, int64_t kv_total) {
        LlamaOptions p = o;
        p.n_seq_max = seqs;
        p.n_ctx = sat_mul(ctx, seqs);
        return llamacpp_place(m, lw.value(), p, layers, off.kv_offload, kv_total, nullptr, mtp_kv_at(p));
    };
    if (off.active) {
        auto p = place_at(r.context, r.seqs, ngl, r.llama.total_bytes);
        if (!p) return p.error();
        off.n_gpu_layers = p->n_gpu_layers;
        off.gpu_repeating_layers = std::max<int64_t>(0, p->n_gpu_layers - 1);
        off.output_on_gpu = p->output_on_gpu;
        off.gpu_weights_bytes = sat_add(p->gpu_weights, draft_gpu_weights);
        off.cpu_weights_bytes = sat_add(p->cpu_weights, draft_cpu_weights);
        off.cpu_read_weights_bytes = std::max<int64_t>(0, p->cpu_weights - lw->input);
        r.read_split = read_split(p.value(), draft_gpu_weights, lw->input);
        off.gpu_kv_bytes = p->gpu_kv;
        off.cpu_kv_bytes = p->cpu_kv;
        off.ram_need_bytes = sat_add(off.cpu_weights_bytes, p->cpu_kv);
        off.ram_fits = in.ram_bytes <= 0 || off.ram_need_bytes <= in.ram_bytes;
        r.weights_per_gpu_bytes = cdiv(off.gpu_weights_bytes, n);
        r.kv_pool_bytes = r.requested_bytes - r.weights_per_gpu_bytes - r.activation_bytes - r.overhead_bytes;
        fill_per_gpu(r, cdiv(p->gpu_kv, n));
    } else {
        // Every layer on the GPU (-ngl 99) still leaves the input layer (token embeddings) in
        // system RAM: llama.cpp's loader never offloads it ("CPU_Mapped model buffer size").
        auto p = place_at(r.context, r.seqs, n_layer + 1, r.llama.total_bytes);
        if (!p) return p.error();
        r.weights_per_gpu_bytes = cdiv(sat_add(p->gpu_weights, draft_gpu_weights), n);
        r.kv_pool_bytes =
            sat_sub(sat_sub(r.requested_bytes, r.weights_per_gpu_bytes), sat_add(r.activation_bytes, r.overhead_bytes));
        fill_per_gpu(r, cdiv(r.llama.total_bytes, n));
    }
    const PerGpu& g = r.per_gpu;
    r.fits = g.total_bytes <= r.requested_bytes && off.ram_fits;
    r.all_seqs_fit = r.fits;
    if (g.total_bytes > r.requested_bytes)
        r.verdict_reason = note("nofit_llamacpp", {{"need", format_bytes(g.total_bytes)},
                                                   {"weights", format_bytes(g.weights_bytes)},
                                                   {"kv", format_bytes(g.kv_bytes)},
                                                   {"compute", format_bytes(g.activation_bytes)},
                                                   {"runtime", format_bytes(g.overhead_bytes)},
                                                   {"have", format_bytes(r.requested_bytes)}});
    else if (!off.ram_fits)
        r.verdict_reason = note("nofit_ram", {{"need", format_bytes(off.ram_need_bytes)},
                                              {"weights", format_bytes(off.cpu_weights_bytes)},
                                              {"kv", format_bytes(off.cpu_kv_bytes)},
                                              {"have", format_bytes(in.ram_bytes)}});

    // What --fit (on by default) would choose by itself for this GPU, from the same
    // placement arithmetic: free device memory is what is usable after the runtime.
    bool by_fit = false;  // the answer is --fit's offload (r.fits_offload), its numbers already set
    {
        // Streams the placement lambdas measure: the asked sequences, or a count tried for concurrency.
        int64_t seqs_now = r.seqs;
        FitArgs fa;
        // Metal reports recommendedMaxWorkingSetSize as free (an M5's log: 18185 MiB free with
        // recommendedMaxWorkingSetSize = 19069.67 MB), so a Mac's whole wired limit is free.
        fa.free_bytes = r.mac_ram_bytes > 0 ? r.requested_bytes : sat_sub(r.requested_bytes, r.overhead_bytes);
        fa.target_bytes = sat_mul(in.fit_target_mb, MiB);
        fa.n_ctx_user = in.context > 0 ? sat_mul(in.context, r.seqs) : 0;
        fa.n_ctx_train = sat_mul(r.n_ctx_train > 0 ? r.n_ctx_train : limit, r.seqs);
        fa.n_ctx_min = sat_mul(in.fit_ctx, r.seqs);  // n_ctx_min_total: -fitc per stream
        fa.ngl_user = in.n_gpu_layers;
        fa.n_layer = n_layer;
        fa.seqs = r.seqs;
        fa.n_devices = n;
        fa.moe = m.dims.num_experts > 0;
        // GPU bytes --fit would see at n_ctx with `layers` on the GPU (a MoE's split: some
        // expert tensors left in system RAM).
        auto need = [&](int64_t n_ctx, int64_t layers, const MoeSplit* moe) -> int64_t {
            LlamaOptions p = o;
            p.n_seq_max = seqs_now;
            p.n_ctx = n_ctx;
            auto l = target_layout(p);
            if (!l) return INT64_MAX;
            auto pl = llamacpp_place(m, lw.value(), p, layers, off.kv_offload, l->total_bytes, moe, mtp_kv_at(p));
            return pl ? gpu_need(pl.value()) - r.overhead_bytes : INT64_MAX;
        };
        auto used = [&](int64_t n_ctx, int64_t layers) { return need(n_ctx, layers, nullptr); };
        // A GGUF names its expert tensors, so --fit's tensor patterns can be followed; for a
        // config the expert bytes are estimated from its expert counts and FFN sizes.
        // (The fit's callbacks are references: their lambdas live in this scope.)
        auto used_moe_fn = [&](int64_t n_ctx, const MoeSplit& s) { return need(n_ctx, s.n_layer, &s); };
        MoeUse used_moe;
        if (!lw->ffn.empty() && n == 1) used_moe = used_moe_fn;
        // Several GPUs: each device's slots, weights less what its partial layers leave in
        // RAM or pass to the next device, the KV of its layers, and its own compute buffer
        // (the per-GPU estimate of this budget) when it holds a slot or is the first device:
        // the measurements in ggml-org/llama.cpp#25487 (2 x MI60) show 3128 MiB of compute on
        // ROCm0 with no layers and 0 MiB on ROCm1 until it gets some. The KV of layers i..
        // per context is kept, since the searches ask for the same suffixes again.
        DevicesUse devices_use;
        std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> kv_cache;
        // A -md draft model on each device, -ngld (every slot) of it. common_fit_params measures it
        // as its extra model with the params made before fitting (common_base_params_to_speculative
        // copies them, tensor_split still unset), so while --fit searches, the draft's slots split
        // by each device's free memory (llama_model::load_tensors: slot j on the first device whose
        // cumulated share exceeds j / slots). llama-server then loads it with the params --fit wrote
        // its tensor_split into: as loaded, the draft's slots follow the target's per-device slot
        // counts. The draft context's KV lives with its layers, as the target's does.
        bool draft_as_loaded = false;
        std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> draft_kv_cache;
        auto draft_split = [&](const std::vector<MoeSplit>& sp) {
            std::vector<int64_t> share, free_each;
            int64_t total = 0;
            for (size_t i = 0; i < sp.size(); ++i) {
                share.push_back(sp[i].n_layer);
                total += sp[i].n_layer;
                free_each.push_back(i < fa.device_free.size() ? fa.device_free[i] : fa.free_bytes);
            }
            return llamacpp_free_split(draft_as_loaded && total > 0 ? share : free_each,
                                       static_cast<int64_t>(draft_slots.size()));
        };
        // The draft context's KV of its layers first.. at n_ctx (0 when they hold none).
        auto draft_kv_suffix = [&](int64_t n_ctx, int64_t first, bool& bad) -> int64_t {
            const auto n_d = static_cast<int64_t>(draft_model->layers.size());
            if (!off.kv_offload || first >= n_d) return 0;
            const auto key = std::make_tuple(n_ctx, seqs_now, first);
            if (auto it = draft_kv_cache.find(key); it != draft_kv_cache.end()) return it->second;
            ModelSpec sub = *draft_model;
            sub.layers.assign(draft_model->layers.begin() + first, draft_model->layers.end());
            int64_t v = 0;
            if (std::any_of(sub.layers.begin(), sub.layers.end(),
                            [](const Layer& ly) { return ly.kind != LayerKind::None; })) {
                LlamaOptions p = o;
                p.n_seq_max = seqs_now;
                p.n_ctx = n_ctx;
                auto tl = llamacpp_layout(m, p);
                auto d = tl ? llamacpp_draft(sub, tl.value(), p, dopt) : Result<LlamaDraft>(tl.error());
                if (d)
                    v = d->total_bytes;
                else
                    bad = true;
            }
            return draft_kv_cache[key] = v;
        };
        // llama.cpp splits over at most llama_max_devices() (16) devices; past that the split
        // is not predicted (and its cost here grows with the square of the count).
        auto devices_fn = [&](int64_t n_ctx, const std::vector<MoeSplit>& sp,
                              const std::vector<char>& next) -> std::vector<DeviceMem> {
            LlamaOptions p = o;
            p.n_seq_max = seqs_now;
            p.n_ctx = n_ctx;
            bool bad = false;
            auto kv_suffix = [&](int64_t first) -> int64_t {
                if (!off.kv_offload || first >= n_layer) return 0;
                auto key = std::make_tuple(n_ctx, seqs_now, first);
                if (auto it = kv_cache.find(key); it != kv_cache.end()) return it->second;
                ModelSpec sub = m;
                sub.layers.assign(m.layers.begin() + first, m.layers.end());
                const bool cached = std::any_of(sub.layers.begin(), sub.layers.end(),
                                                [](const Layer& ly) { return ly.kind != LayerKind::None; });
                int64_t v = 0;
                if (cached) {
                    // A -md draft's KV is placed with its own layers below.
                    auto l = llamacpp_layout(sub, p);
                    if (l)
                        v = l->total_bytes;
                    else
                        bad = true;
                }
                // An MTP draft's KV: with the nextn layers among these.
                if (auto d = mtp_kv_from(p, first))
                    v = sat_add(v, d.value());
                else
                    bad = true;
                return kv_cache[key] = v;
            };
            int64_t slots = 0;
            for (const MoeSplit& d : sp) slots += d.n_layer;
            std::vector<DeviceMem> draft_on(sp.size());
            if (!draft_slots.empty()) {
                const std::vector<int64_t> counts = draft_split(sp);
                const auto n_d = static_cast<int64_t>(draft_model->layers.size());
                int64_t j = 0;
                for (size_t i = 0; i < sp.size() && i < counts.size(); ++i) {
                    for (int64_t k = 0; k < counts[i]; ++k, ++j)
                        draft_on[i].model = sat_add(draft_on[i].model, draft_slots[static_cast<size_t>(j)]);
                    draft_on[i].total = sat_sub(draft_kv_suffix(n_ctx, j - counts[i], bad),
                                                draft_kv_suffix(n_ctx, std::min(j, n_d), bad));
                }
            }
            std::vector<DeviceMem> out(sp.size());
            int64_t first = n_layer + 1 - slots, spill = 0;
            for (size_t i = 0; i < sp.size(); ++i) {
                const RangeUse u = llamacpp_range(m, lw.value(), first, sp[i], kv_suffix);
                out[i].model = sat_add(sat_add(u.weights, spill), draft_on[i].model);
                const bool computes = i == 0 || sp[i].n_layer > 0;
                out[i].total =
                    sat_add(sat_add(sat_add(out[i].model, u.kv), draft_on[i].total), computes ? r.activation_bytes : 0);
                spill = i < next.size() && next[i] ? u.spill : 0;
                first += sp[i].n_layer;
            }
            if (bad)
                for (DeviceMem& d : out) d = {INT64_MAX, INT64_MAX};
            return out;
        };
        if (n > 1 && n <= kLlamaMaxDevices) devices_use = devices_fn;
        fa.total_bytes = r.gpu_total_bytes;
        // GPUs that differ: each one's free memory, as the backend reports it (a Mac's size is
        // its RAM, never a list).
        for (int64_t each : r.mac_ram_bytes > 0 ? std::vector<int64_t>{} : in.gpu_memory_each) {
            const auto usable = static_cast<int64_t>(std::floor(double(each) * r.gpu_memory_utilization));
            fa.device_total.push_back(each);
            fa.device_free.push_back(sat_sub(usable, r.overhead_bytes));
        }
        r.fit = llamacpp_fit(fa, used, used_moe, devices_use);
        r.fit.slots = r.seqs;
        fit_notes(r, n_layer);
        // What `llama-server -m X` alone picks: no -c (the training context, shrunk to fit)
        // and no -ngl, whatever this answer's context is; from b6925 also no -np, which the server
        // makes 4 slots over one unified cache (tools/server/server.cpp), so the fit measures one
        // stream of n_ctx cells serving 4 sequences (common/fit.cpp: n_streams = 1 when kv_unified).
        const bool auto_slots = build->slot_cap;
        constexpr int64_t kAutoSlots = 4;
        if (fa.n_ctx_user > 0 || fa.ngl_user >= 0 || auto_slots) {
            FitArgs fd = fa;
            fd.n_ctx_user = 0;
            fd.ngl_user = -1;
            if (auto_slots) {
                fd.seqs = 1;
                fd.n_ctx_train = r.n_ctx_train > 0 ? r.n_ctx_train : limit;
                fd.n_ctx_min = in.fit_ctx;
                o.kv_unified = true;
                seqs_now = kAutoSlots;
                kv_cache.clear();  // keyed by cells and sequences, not by the cache's streams
                draft_kv_cache.clear();
            }
            r.fit_default = llamacpp_fit(fd, used, used_moe, devices_use);
            if (auto_slots) {
                o.kv_unified = false;
                seqs_now = r.seqs;
                kv_cache.clear();
                draft_kv_cache.clear();
            }
            r.fit_default.slots = auto_slots ? kAutoSlots : r.seqs;
            r.fit_default.kv_unified = auto_slots;
        } else {
            r.fit_default = r.fit;
        }
        draft_as_loaded = true;  // what follows measures the split --fit chose, as llama-server loads it
        if (fa.moe && lw->estimated && (r.fit.outcome == "layers" || r.fit_default.outcome == "layers"))
            r.notes.push_back(note("llamacpp_fit_estimated", {{"experts", std::to_string(m.dims.num_experts)}}));

        // No -ngl and not all on the GPU: llama-server does not refuse, --fit starts it with layers
        // (a MoE: routed experts) in system RAM. The answer is that placement, held fixed: it fits
        // the asked context, and the longest context and the most sequences are what it holds on
        // the GPU (past them --fit would move still more to system RAM).
        const LlamaFit& f = r.fit;
        // A Mac's answer stays the wired-memory sysctl (its "system RAM" is the same memory), and
        // --fit with no layer left on the GPU runs on the CPU: neither is an offload verdict.
        if (!r.fits && in.n_gpu_layers < 0 && f.outcome == "layers" && !f.device_fraction.empty() &&
            f.n_gpu_layers >= 1 && r.mac_ram_bytes == 0) {
            const auto split_of = [&](size_t i) {
                return MoeSplit{i < f.device_layers.size() ? f.device_layers[i] : f.n_gpu_layers,
                                i < f.device_overflow.size() ? f.device_overflow[i] : f.overflow_layers,
                                static_cast<FitFraction>(f.device_fraction[i])};
            };
            std::vector<MoeSplit> splits;
            for (size_t i = 0; i < f.device_fraction.size(); ++i) splits.push_back(split_of(i));
            // Device bytes of the split at ctx x seqs, each against its own free memory.
            auto split_use = [&](int64_t ctx, int64_t seqs) -> std::vector<DeviceMem> {
                seqs_now = seqs;
                std::vector<DeviceMem> d;
                const int64_t n_ctx = sat_mul(ctx, seqs);
                if (n == 1) {
                    const MoeSplit s = splits[0];
                    const int64_t u = need(n_ctx, s.n_layer, fa.moe && s.n_part > 0 ? &s : nullptr);
                    d.push_back({0, u});
                } else if (devices_use) {
                    d = devices_use(n_ctx, splits, f.device_next);
                }
                seqs_now = r.seqs;
                return d;
            };
            auto split_fits = [&](int64_t ctx, int64_t seqs) {
                const std::vector<DeviceMem> d = split_use(ctx, seqs);
                if (d.empty()) return false;
                for (size_t i = 0; i < d.size(); ++i)
                    if (d[i].total > (i < f.device_free.size() ? f.device_free[i] : fa.free_bytes)) return false;
                return true;
            };
            if (split_fits(r.context, r.seqs)) {
                by_fit = true;
                // What the bar shows: one GPU's share of the placement (several GPUs: the fullest one).
                // System RAM the placement needs: the weights and KV not on a GPU.
                int64_t cpu_weights = 0, cpu_kv = 0;
                if (n == 1) {
                    const MoeSplit s = splits[0];
                    LlamaOptions p = o;
                    p.n_seq_max = r.seqs;
                    p.n_ctx = sat_mul(r.context, r.seqs);
                    auto pl = llamacpp_place(m, lw.value(), p, s.n_layer, off.kv_offload, r.llama.total_bytes,
                                             fa.moe && s.n_part > 0 ? &s : nullptr, mtp_kv_at(p));
                    if (pl) {
                        r.weights_per_gpu_bytes = sat_add(pl->gpu_weights, draft_gpu_weights);
                        fill_per_gpu(r, pl->gpu_kv);
                        cpu_weights = sat_add(pl->cpu_weights, draft_cpu_weights);
                        cpu_kv = pl->cpu_kv;
                        r.read_split = read_split(pl.value(), draft_gpu_weights, lw->input);
                    }
                } else {
                    // Several GPUs: the fullest one; what no GPU holds is in system RAM.
                    DeviceMem top;
                    int64_t gpu_w = 0, gpu_kv = 0;
                    const std::vector<DeviceMem> d = split_use(r.context, r.seqs);
                    for (size_t i = 0; i < d.size(); ++i) {
                        const bool computes = i == 0 || splits[i].n_layer > 0;
                        const int64_t kv =
                            std::max<int64_t>(0, d[i].total - d[i].model - (computes ? r.activation_bytes : 0));
                        gpu_w = sat_add(gpu_w, d[i].model);
                        gpu_kv = sat_add(gpu_kv, kv);
                        if (d[i].total >= top.total) {
                            top = d[i];
                            top.total = d[i].total;
                        }
                    }
                    r.weights_per_gpu_bytes = top.model;
                    fill_per_gpu(r, std::max<int64_t>(0, top.total - top.model - r.activation_bytes));
                    cpu_weights = std::max<int64_t>(0, r.weights.bytes - gpu_w);
                    cpu_kv = off.kv_offload ? std::max<int64_t>(0, r.llama.total_bytes - gpu_kv) : r.llama.total_bytes;
                    // --fit moves a MoE's routed experts to system RAM before anything else.
                    int64_t experts = 0;
                    for (const GgufWeights::BlockFfn& b : lw->ffn) experts = sat_add(experts, b.exps);
                    const int64_t cpu_read = std::max<int64_t>(0, cpu_weights - lw->input);
                    r.read_split = ReadSplit{gpu_w, cpu_read, gpu_kv, cpu_kv, std::min(cpu_read, experts), experts};
                }
                const int64_t cpu_bytes = sat_add(cpu_weights, cpu_kv);
                r.fits = r.all_seqs_fit = in.ram_bytes <= 0 || cpu_bytes <= in.ram_bytes;
                r.fits_offload = r.fits;
                const int64_t part = std::max<int64_t>(0, f.overflow_layers - 1);  // the output slot has no experts
                r.verdict_reason = !r.fits ? note("nofit_ram", {{"need", format_bytes(cpu_bytes)},
                                                                {"weights", format_bytes(cpu_weights)},
                                                                {"kv", format_bytes(cpu_kv)},
                                                                {"have", format_bytes(in.ram_bytes)}})
                                           : note(part > 0 ? "llamacpp_fit_offload_moe" : "llamacpp_fit_offload",
                                                  {{"ngl", std::to_string(f.n_gpu_layers)},
                                                   {"n", std::to_string(n_layer + 1)},
                                                   {"part", std::to_string(part)},
                                                   {"used", format_bytes(r.per_gpu.total_bytes)},
                                                   {"have", format_bytes(r.requested_bytes)},
                                                   {"ram", format_bytes(cpu_bytes)},
                                                   {"flags", f.flags}});
                if (r.fits) {
                    r.max_context_capped = split_fits(cap, r.seqs);
                    r.max_context = r.max_context_capped ? cap : largest_true(1, cap / 256, [&](int64_t x) {
                                                                     return split_fits(x * 256, r.seqs);
                                                                 }) * 256;
                    r.max_context = std::max(r.max_context, std::min(r.context, cap));
                    r.max_context_physical = r.max_context;
                    if (r.max_context_capped)
                        r.max_context_physical =
                            physical_max(cap, 256, [&](int64_t x) { return split_fits(x, r.seqs); });
                    r.max_concurrency = most_that_fit(65536, [&](int64_t x) { return split_fits(r.context, x); });
                }
            }
        }
    }

    // The most layers the GPU(s) hold at this context: -ngl 0 keeps only the buffers there.
    {
        auto fits_layers = [&](int64_t layers) {
            auto p = place_at(r.context, r.seqs, layers, r.llama.total_bytes);
            return p && gpu_need(p.value()) <= r.requested_bytes;
        };
        if (fits_layers(0)) off.max_gpu_layers = largest_true(0, n_layer + 1, fits_layers);
        if (!off.active && !r.fits && off.max_gpu_layers >= 1) {
            auto p = place_at(r.context, r.seqs, off.max_gpu_layers, r.llama.total_bytes);
            if (p)
                r.notes.push_back(note("ngl_fits", {{"ngl", std::to_string(off.max_gpu_layers)},
                                                    {"blocks", std::to_string(off.max_gpu_layers - 1)},
                                                    {"n", std::to_string(n_layer)},
                                                    {"ram", format_bytes(sat_add(p->cpu_weights, p->cpu_kv))}}));
        }
    }

    auto kv_fits = [&](int64_t ctx, int64_t seqs) {
        auto l = layout_at(ctx, seqs);
        if (!l) return false;
        if (!off.active) return cdiv(l->total_bytes, n) <= r.kv_pool_bytes;
        auto p = place_at(ctx, seqs, ngl, l->total_bytes);
        return p && gpu_need(p.value()) <= r.requested_bytes &&
               (in.ram_bytes <= 0 || sat_add(p->cpu_weights, p->cpu_kv) <= in.ram_bytes);
    };
    if (!by_fit && (off.active || r.kv_pool_bytes > 0) && kv_fits(256, r.seqs)) {
        r.max_context_capped = kv_fits(cap, r.seqs);
        // llama.cpp pads the context to 256 cells
        r.max_context = r.max_context_capped
                            ? cap
                            : largest_true(1, cap / 256, [&](int64_t x) { return kv_fits(x * 256, r.seqs); }) * 256;
    }
    if (!by_fit) r.max_context_physical = r.max_context;
    if (!by_fit && r.max_context_capped)
        r.max_context_physical = physical_max(cap, 256, [&](int64_t x) { return kv_fits(x, r.seqs); });
    if (!by_fit && (off.active || r.kv_pool_bytes > 0) && kv_fits(r.context, 1))
        r.max_concurrency = most_that_fit(65536, [&](int64_t x) { return kv_fits(r.context, x); });

    // The verdict says the asked cache fits; beside it, that a request gets less (the page's answer card).
    if (r.fits && r.slot_capped && r.verdict_reason.code.empty())
        for (const Message& note_i : r.notes)
            if (note_i.code == "llamacpp_slot_capped") r.verdict_reason = note_i;
    r.command = command(m, c.fmt, r, vt->block_values > 1, in.hf_ref, build.value());
    if (m.multimodal) r.notes.push_back(note("mmproj"));
    if (n > 1) r.notes.push_back(note("layers_split", {{"n", std::to_string(n)}}));
    KvDtypes kvd = uniform_kv_dtypes(m, kt.value());
    kvd.v = vt.value();
    kvd.conv_state_bytes = kvd.ssm_state_bytes = 4;  // llama.cpp's recurrent state is f32
    if (auto kvb = kv_bytes_at(m, kvd, std::max<int64_t>(1, r.context), 1)) r.decode.kv_bytes_per_token = kvb.value();
    return true;
}

}  // namespace kvb::budget_steps
