#include "check/check.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>

#include "base/units.h"
#include "engines/llamacpp.h"

namespace kvb {

namespace {

std::string norm(const std::string& s) {
    std::string o;
    bool space = false;
    for (char c : s) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            space = !o.empty();
            continue;
        }
        if (space) o += ' ';
        space = false;
        o += c;
    }
    return o;
}

const char* kind_name(LogLineKind k) {
    switch (k) {
        case LogLineKind::VllmTokens: return "vllm_tokens";
        case LogLineKind::VllmConcurrency: return "vllm_concurrency";
        case LogLineKind::VllmGpuBlocks: return "vllm_gpu_blocks";
        case LogLineKind::VllmNotEnough: return "vllm_not_enough_memory";
        case LogLineKind::VllmV0TooLong: return "vllm_v0_too_long";
        case LogLineKind::VllmNoMemory: return "vllm_no_memory";
        case LogLineKind::VllmSetBlock: return "vllm_block_size";
        case LogLineKind::VllmPadMamba: return "vllm_mamba_padding";
        case LogLineKind::VllmPadLayers: return "vllm_padding_layers";
        case LogLineKind::TorchOom: return "torch_out_of_memory";
        case LogLineKind::LlamaKvSize: return "llama_kv_cache";
        case LogLineKind::LlamaIswaCreate: return "llama_swa_cache";
        case LogLineKind::LlamaRecurrentSize: return "llama_recurrent";
        case LogLineKind::LlamaCudaOom: return "llama_cuda_out_of_memory";
    }
    return "";
}

// A line as the log printed it; the engine's check fills in the prediction.
CheckLine printed_line(const LogLine& l) {
    CheckLine c;
    c.number = l.number;
    c.kind = kind_name(l.kind);
    c.printed = l.text;
    return c;
}

std::optional<int64_t> to_int(const std::string& s) {
    if (s.empty() || s.size() > 18) return std::nullopt;
    for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    return std::strtoll(s.c_str(), nullptr, 10);
}

bool truthy(const std::string& s) {
    return s == "True" || s == "true" || s == "1" || s == "enabled";
}

// The one engine line a predicted text is, read by the same reader as the log.
std::optional<LogLine> parse_one(const std::string& text) {
    if (text.empty()) return std::nullopt;
    auto r = read_engine_log(text);
    if (!r || r->lines.empty()) return std::nullopt;
    return r->lines[0];
}

std::map<std::string, double> fields(const LogLine& l) {
    std::map<std::string, double> f;
    for (const auto& [k, v] : l.nums) f[k] = v;
    for (const char* k : {"needed_gib", "available_gib"}) {
        const std::string t = l.str(k);
        if (!t.empty()) f[k] = std::strtod(t.c_str(), nullptr);
    }
    return f;
}

struct Cmp {
    bool match = false;
    bool wording = false;  // same numbers, other words
    std::optional<double> deviation;
};

Cmp compare(const LogLine& printed, const std::string& predicted) {
    Cmp c;
    if (predicted.empty()) return c;
    if (norm(printed.text) == norm(predicted)) {
        c.match = true;
        return c;
    }
    auto p = parse_one(predicted);
    if (!p || p->kind != printed.kind) return c;
    for (const char* t : {"type_k", "type_v"})
        if (!printed.str(t).empty() && !p->str(t).empty() && printed.str(t) != p->str(t)) return c;
    const auto a = fields(printed), b = fields(*p);
    bool all = true, any = false;
    for (const auto& [k, v] : a) {
        auto it = b.find(k);
        if (it == b.end()) continue;
        any = true;
        if (std::fabs(v - it->second) > 1e-9 * std::max(1.0, std::fabs(v))) {
            all = false;
            if (!c.deviation && it->second != 0) c.deviation = (v - it->second) / it->second * 100.0;
        }
    }
    c.match = all && any;
    c.wording = c.match;
    return c;
}

// ------------------------------------------------------------------ vLLM

struct Eval {
    bool ok = false;
    std::vector<std::string> predicted;
    std::vector<Cmp> cmp;
    int matched = 0;
    int64_t num_blocks = 0;
    int64_t avail = 0;
    int inferred_line = -1;  // index of the line the memory was taken from
    std::string error;
};

std::string vllm_predicted(const LogLine& l, const VllmCapacity& c) {
    auto first = [&](const char* prefix) -> std::string {
        for (const auto& s : c.log_lines)
            if (s.rfind(prefix, 0) == 0) return s;
        return {};
    };
    switch (l.kind) {
        case LogLineKind::VllmTokens: return first("GPU KV cache size:");
        case LogLineKind::VllmConcurrency: return first("Maximum concurrency for");
        case LogLineKind::VllmGpuBlocks: return first("# GPU blocks:");
        case LogLineKind::VllmNotEnough: return c.error_text.rfind("To serve", 0) == 0 ? c.error_text : std::string();
        case LogLineKind::VllmV0TooLong: return c.error_text.rfind("The model's", 0) == 0 ? c.error_text : "";
        case LogLineKind::VllmNoMemory: return c.error_text.rfind("No available", 0) == 0 ? c.error_text : "";
        case LogLineKind::VllmSetBlock: return first("Setting attention block size");
        case LogLineKind::VllmPadMamba: return first("Padding mamba page size");
        case LogLineKind::VllmPadLayers: return first("Add ");
        default: return {};
    }
}

enum class Memory { FromLog, FromTokens };

Eval eval_vllm(const ModelSpec& m, const VllmOptions& o, const std::vector<const LogLine*>& lines, Memory mem) {
    Eval best;
    auto lay = vllm_layout(m, o);
    if (!lay) {
        best.error = lay.error().message;
        return best;
    }
    int64_t bpb = 0;
    for (int64_t s : lay->stage_bytes_per_block) bpb = std::max(bpb, s);
    if (bpb <= 0) bpb = lay->bytes_per_block;
    if (bpb <= 0) bpb = 1;

    double center = -1;
    auto run_with = [&](int64_t avail, int inferred) {
        auto cap = vllm_capacity(m, o, avail);
        if (!cap) {
            if (best.error.empty()) best.error = cap.error().message;
            return;
        }
        Eval e;
        e.ok = true;
        e.avail = avail;
        e.num_blocks = cap->num_blocks;
        e.inferred_line = inferred;
        for (const LogLine* l : lines) {
            e.predicted.push_back(vllm_predicted(*l, *cap));
            e.cmp.push_back(compare(*l, e.predicted.back()));
            e.matched += e.cmp.back().match;
        }
        // Ties go to the memory nearest the printed figure (the middle of its rounding range).
        const double cnb = std::floor(center / double(bpb));  // the blocks the printed figure itself holds
        const bool nearer =
            center >= 0 && std::fabs(double(e.num_blocks) - cnb) < std::fabs(double(best.num_blocks) - cnb);
        if (!best.ok || e.matched > best.matched || (e.matched == best.matched && nearer)) best = e;
    };

    // Where the memory comes from: "# GPU blocks" (V0), "Available KV cache memory", the
    // error's "available KV cache memory (X GiB)", or else the token count itself.
    const LogLine* blocks_line = nullptr;
    const LogLine* tokens_line = nullptr;
    std::string avail_text;
    int tokens_index = -1, blocks_index = -1;
    for (size_t i = 0; i < lines.size(); ++i) {
        const LogLine* l = lines[i];
        if (l->kind == LogLineKind::VllmGpuBlocks && !blocks_line) blocks_line = l, blocks_index = int(i);
        if (l->kind == LogLineKind::VllmTokens && !tokens_line) tokens_line = l, tokens_index = int(i);
        if (avail_text.empty()) avail_text = l->available_gib;
        if (avail_text.empty() && l->kind == LogLineKind::VllmNotEnough) avail_text = l->str("available_gib");
    }
    // Numbers from a paste are untrusted: nothing beyond 2^62 bytes of KV memory is tried.
    const double max_blocks = std::ldexp(1.0, 62) / double(bpb);
    if (blocks_line) {
        const double nb = blocks_line->num("gpu_blocks");
        if (nb >= 0 && nb < max_blocks) run_with(static_cast<int64_t>(nb) * bpb, blocks_index);
        return best;
    }
    if (mem == Memory::FromLog && !avail_text.empty() && std::strtod(avail_text.c_str(), nullptr) < 1e9) {
        const double x = std::strtod(avail_text.c_str(), nullptr);
        center = x * double(GiB);
        const int64_t lo = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((x - 0.005) * double(GiB))));
        const int64_t hi = static_cast<int64_t>(std::ceil((x + 0.005) * double(GiB))) - 1;
        int64_t nb_lo = lo / bpb, nb_hi = hi / bpb;
        if (nb_hi - nb_lo > 400) {  // tiny pages: sample around the middle
            const int64_t mid = static_cast<int64_t>(x * double(GiB)) / bpb;
            nb_lo = std::max(nb_lo, mid - 200);
            nb_hi = std::min(nb_hi, mid + 200);
        }
        for (int64_t nb = nb_lo; nb <= nb_hi; ++nb) run_with(std::max(nb * bpb, lo), -1);
        return best;
    }
    if (tokens_line && tokens_line->num("tokens") < max_blocks / 16 && tokens_line->num("tokens") < 1e15) {
        const int64_t want = static_cast<int64_t>(tokens_line->num("tokens"));
        auto tokens_at = [&](int64_t nb) -> int64_t {
            auto cap = vllm_capacity(m, o, nb * bpb);
            return cap ? cap->tokens : -1;
        };
        int64_t lo = 0, hi = std::min<int64_t>(std::max<int64_t>(1024, want * 8 + 1024), int64_t(max_blocks) - 8192);
        while (lo < hi) {  // smallest nb printing at least `want` tokens
            const int64_t mid = lo + (hi - lo) / 2;
            const int64_t t = tokens_at(mid);
            if (t < 0) return best;
            if (t < want)
                lo = mid + 1;
            else
                hi = mid;
        }
        // Every block count printing `want` (legacy counts step by whole groups of blocks).
        int64_t end = lo, top = lo + 4096;
        while (end < top) {
            const int64_t mid = end + (top - end) / 2;
            const int64_t t = tokens_at(mid);
            if (t < 0) return best;
            if (t <= want)
                end = mid + 1;
            else
                top = mid;
        }
        for (int64_t nb = std::max<int64_t>(1, lo - 1); nb <= end && nb <= lo + 400; ++nb)
            run_with(nb * bpb, tokens_index);
        return best;
    }
    run_with(GiB, -1);  // only memory-free lines (block size, padding)
    return best;
}

// Which wording a printed not-enough-memory error is in (VllmErrorWording): "model's" and the CPU
// backend clause are current; "%.2f" shows as a figure ending in 0 ("24.00 GiB"), format_gib's
// str() never prints one ("24.0"); the oldest has no "See ..." sentence.
VllmErrorWording wording_in(const std::string& t) {
    const bool see = t.find("See https://docs.vllm.ai") != std::string::npos;
    if (t.find("also controls CPU memory") != std::string::npos) return VllmErrorWording::Current;
    // Up to 0.8.3 no estimate: "Try" straight after the memory (later ones leave two spaces when it is 0).
    if (!see && t.find(" GiB). Try increasing") != std::string::npos) return VllmErrorWording::NoEstimate2f;
    if (!see) return VllmErrorWording::NoDocs2f;
    for (size_t i = t.find(" GiB"); i != std::string::npos; i = t.find(" GiB", i + 1))
        if (i >= 4 && t[i - 1] == '0' && std::isdigit(static_cast<unsigned char>(t[i - 2])) && t[i - 3] == '.')
            return VllmErrorWording::SeeDocs2f;
    return VllmErrorWording::SeeDocsGib;
}

struct Variant {
    Message cause;
    std::function<void(ModelSpec&, VllmOptions&)> apply;
    Memory mem = Memory::FromLog;
};

const char* format_name(VllmLogFormat f) {
    switch (f) {
        case VllmLogFormat::Current: return "current";
        case VllmLogFormat::Split: return "split";
        case VllmLogFormat::Legacy: return "legacy";
        case VllmLogFormat::V0: return "v0";
    }
    return "";
}

void check_vllm_run(const LogFacts& f, const ModelSpec& base_model, const std::vector<const LogLine*>& lines,
                    CheckReport& rep, bool first_run) {
    ModelSpec m = base_model;
    VllmOptions o;
    auto count = [&](const char* k) { return to_int(f.setting(k)); };
    if (auto v = count("tensor_parallel_size")) o.tensor_parallel_size = *v;
    if (auto v = count("pipeline_parallel_size")) o.pipeline_parallel_size = *v;
    o.pp_layer_partition = f.setting("pp_layer_partition");
    if (auto v = count("block_size")) o.block_size = *v;
    if (auto v = count("max_num_batched_tokens")) o.max_num_batched_tokens = *v;
    if (auto v = count("max_model_len")) o.max_model_len = *v;
    if (!f.setting("kv_cache_dtype").empty()) o.kv_cache_dtype = f.setting("kv_cache_dtype");
    if (!f.setting("mamba_cache_mode").empty()) {
        if (auto mm = parse_mamba_cache_mode(f.setting("mamba_cache_mode"))) o.mamba_cache_mode = *mm;
    }
    if (f.setting("enable_prefix_caching") == "False") o.enable_prefix_caching = 0;
    if (f.setting("enable_prefix_caching") == "True") o.enable_prefix_caching = 1;
    if (!f.setting("async_scheduling").empty()) o.async_scheduling = truthy(f.setting("async_scheduling")) ? 1 : 0;
    o.disable_hybrid_kv_cache_manager = truthy(f.setting("disable_hybrid_kv_cache_manager"));
    const std::string dt = f.setting("dtype");
    if (dt == "bfloat16" || dt == "float16" || dt == "float32") m.dtype = dt;
    if (dt == "half") m.dtype = "float16";
    // The request length the lines themselves print wins over the arguments.
    bool combined = false, two_line = false, v0 = false, models_s = false, also_controls = false;
    std::optional<VllmErrorWording> printed_wording;
    for (const LogLine* l : lines) {
        if (l->num("mml") > 0 && l->num("mml") < 1e15) o.max_model_len = static_cast<int64_t>(l->num("mml"));
        if (l->kind == LogLineKind::VllmTokens) (l->str("combined") == "1" ? combined : two_line) = true;
        if (l->kind == LogLineKind::VllmGpuBlocks || l->kind == LogLineKind::VllmV0TooLong) v0 = true;
        if (l->kind == LogLineKind::VllmNotEnough) {
            models_s = l->text.find("models's") != std::string::npos;
            also_controls = l->text.find("(which also controls") != std::string::npos;
        }
        if (l->kind == LogLineKind::VllmNotEnough || l->kind == LogLineKind::VllmNoMemory)
            printed_wording = wording_in(l->text);
    }
    // Speculative decoding: the drafter's layers join the pool, its tokens the mamba slots.
    // The same rule as `kvbudget vllm --speculative-config` (src/engines/vllm.h); a draft model
    // whose config the log does not give counts nothing here (check_drafter_layers may name it).
    VllmSpeculative sp;
    if (auto p = parse_vllm_speculative(f.setting("speculative_config"))) sp = p.value();
    if (sp.num_speculative_tokens > 0) o.num_speculative_tokens = sp.num_speculative_tokens;
    if (auto v = count("num_speculative_tokens")) o.num_speculative_tokens = *v;
    int64_t drafter = 0;
    if (!sp.method.empty())
        if (auto n = vllm_drafter_layers(sp, m, nullptr)) drafter = n.value();
    if (drafter > 0) {
        m = vllm_add_drafter_layers(m, drafter);
        if (first_run)
            rep.notes.push_back(
                note("check_drafter_counted", {{"method", sp.method}, {"layers", std::to_string(drafter)}}));
    }

    std::vector<VllmLogFormat> formats;
    if (v0) {
        formats = {VllmLogFormat::V0};
    } else if (combined) {
        formats = {VllmLogFormat::Current};
    } else if (auto vf = vllm_format_for_version(f.version); vf && *vf != VllmLogFormat::V0) {
        formats = {*vf};
    } else if (models_s) {
        formats = {VllmLogFormat::Legacy};
    } else if (also_controls) {
        formats = {VllmLogFormat::Current};
    } else if (two_line) {
        formats = {VllmLogFormat::Legacy};
    } else {
        formats = {VllmLogFormat::Current};
    }
    o.log_format = formats[0];
    const int shape = combined ? 1 : two_line ? 0 : -1;  // the capacity lines as printed (-1: none)
    // The log's own release gives the line shape, the error wordings and the MLA block sizes, as it
    // does for `kvbudget vllm --engine-version`; without one, they are read off the printed lines.
    if (auto rel = vllm_release_of(f.version)) {
        apply_vllm_release(*rel, o);
    } else {
        // Without a release the capacity is predicted in the shape it was printed in.
        o.one_line_capacity = shape;
        if (printed_wording) o.error_wording = *printed_wording;
    }

    Eval base = eval_vllm(m, o, lines, Memory::FromLog);
    std::vector<CheckLine> out;
    for (size_t i = 0; i < lines.size(); ++i) {
        CheckLine c = printed_line(*lines[i]);
        if (base.ok) {
            c.predicted = base.predicted[i];
            c.match = base.cmp[i].match;
            c.deviation_percent = base.cmp[i].deviation;
            if (c.match && int(i) == base.inferred_line)
                c.cause = note("check_memory_inferred", {{"blocks", with_commas(base.num_blocks)}});
            else if (c.match && base.cmp[i].wording)
                c.cause = note("check_wording");
        }
        out.push_back(std::move(c));
    }
    if (!base.ok) {
        for (auto& c : out) c.cause = note("check_engine_refused", {{"reason", base.error}});
    }

    // Known causes, tried in order on the lines that still differ.
    std::vector<Variant> variants;
    for (VllmLogFormat fm : {VllmLogFormat::Legacy, VllmLogFormat::Split, VllmLogFormat::Current, VllmLogFormat::V0})
        if (fm != o.log_format && !v0)
            variants.push_back(
                {note("check_log_format", {{"format", format_name(fm)}}), [fm, shape](ModelSpec&, VllmOptions& x) {
                     x.log_format = fm;
                     x.one_line_capacity = shape;  // as printed
                 }});
    const bool hybrid = m.has_state();
    if (hybrid)
        for (MambaCacheMode mm : {MambaCacheMode::None, MambaCacheMode::Align, MambaCacheMode::All})
            variants.push_back({note("check_mamba_mode", {{"mode", to_string(mm)}}),
                                [mm](ModelSpec&, VllmOptions& x) { x.mamba_cache_mode = mm; }});
    if (o.block_size == 0)
        for (int64_t b : {16, 32, 64, 128, 256})
            variants.push_back(
                {note("check_block_size", {{"block", std::to_string(b)}}), [b](ModelSpec& mm, VllmOptions& x) {
                     if (mm.has(LayerKind::Mla))
                         x.mla_block_size = b;
                     else
                         x.block_size = b;
                 }});
    if (o.kv_cache_dtype == "auto")
        variants.push_back(
            {note("check_kv_dtype", {{"dtype", "fp8"}}), [](ModelSpec&, VllmOptions& x) { x.kv_cache_dtype = "fp8"; }});
    if (m.has(LayerKind::Sliding) || m.has(LayerKind::Chunked)) {
        for (int64_t t : {2048, 8192, 16384})
            for (int a : {0, 1})
                variants.push_back(
                    {note("check_batched_tokens", {{"tokens", with_commas(t)}, {"async", a ? "on" : "off"}}),
                     [t, a](ModelSpec&, VllmOptions& x) {
                         x.max_num_batched_tokens = t;
                         x.async_scheduling = a;
                     }});
    }
    if (drafter == 0)
        for (int64_t k : {int64_t(1), vllm_nextn_layers(m)})
            variants.push_back({note("check_drafter_layers", {{"layers", std::to_string(k)}}),
                                [k](ModelSpec& mm, VllmOptions&) { mm = vllm_add_drafter_layers(mm, k); }});
    if (o.pipeline_parallel_size > 1 && !o.pp_check_all_layers)
        variants.push_back({note("check_pp_all_layers", {{"layers", std::to_string(m.layers.size())}}),
                            [](ModelSpec&, VllmOptions& x) { x.pp_check_all_layers = true; }});
    if (o.tensor_parallel_size == 1)
        for (int64_t t : {2, 4, 8})
            variants.push_back({note("check_tp", {{"tp", std::to_string(t)}}),
                                [t](ModelSpec&, VllmOptions& x) { x.tensor_parallel_size = t; }});
    variants.push_back({note("check_other_memory"), [](ModelSpec&, VllmOptions&) {}, Memory::FromTokens});

    auto open = [&]() {
        for (const auto& c : out)
            if (!c.match) return true;
        return false;
    };
    // One cause, then two together (an older format and an fp8 cache, say): a combination is
    // named only when it makes every line of the run agree; one that fixes one line by
    // breaking another explains nothing.
    auto try_combo = [&](const std::vector<size_t>& idx) {
        ModelSpec vm = m;
        VllmOptions vo = o;
        Memory mem = Memory::FromLog;
        for (size_t i : idx) {
            variants[i].apply(vm, vo);
            if (variants[i].mem == Memory::FromTokens) mem = Memory::FromTokens;
        }
        Eval e = eval_vllm(vm, vo, lines, mem);
        if (!e.ok || e.matched != static_cast<int>(lines.size())) return false;
        for (auto& c : out) {
            if (c.match || !c.cause.code.empty()) continue;
            for (size_t k = 0; k < idx.size(); ++k) {
                Message cause = variants[idx[k]].cause;
                if (variants[idx[k]].mem == Memory::FromTokens)
                    cause.params = {{"printed", base.avail > 0 ? vllm_format_gib(base.avail) : "?"},
                                    {"gib", vllm_format_gib(e.avail)},
                                    {"blocks", with_commas(e.num_blocks)}};
                (k == 0 ? c.cause : c.more_causes.emplace_back()) = cause;
            }
        }
        return true;
    };
    if (base.ok) {
        for (size_t i = 0; i < variants.size() && open(); ++i) try_combo({i});
        for (size_t i = 0; i < variants.size() && open(); ++i)
            for (size_t j = i + 1; j < variants.size() && open(); ++j) try_combo({i, j});
    }
    for (auto& c : out)
        if (!c.match && c.cause.code.empty())
            c.cause = note(c.predicted.empty() ? "check_not_predicted" : "check_no_known_cause");
    for (auto& c : out) rep.lines.push_back(std::move(c));
}

// ------------------------------------------------------------------ llama.cpp

struct LEval {
    bool ok = false;
    std::vector<std::string> predicted;
    std::vector<Cmp> cmp;
    int matched = 0;
    std::string error;
};

int bucket(const LogLine& l) {
    if (l.kind == LogLineKind::LlamaIswaCreate) return l.str("role") == "SWA" ? 1 : 0;
    return l.kind == LogLineKind::LlamaRecurrentSize ? 3 : 2;
}

int bucket_of_text(const std::string& s) {
    if (s.find("creating non-SWA") != std::string::npos) return 0;
    if (s.find("SWA KV cache") != std::string::npos) return 1;
    if (s.find("llama_memory_recurrent") != std::string::npos) return 3;
    return 2;
}

LEval eval_llama(const ModelSpec& m, const LlamaOptions& o, const std::vector<const LogLine*>& lines) {
    LEval e;
    auto lay = llamacpp_layout(m, o);
    if (!lay) {
        e.error = lay.error().message;
        return e;
    }
    e.ok = true;
    std::vector<std::vector<std::string>> by(4);
    for (const auto& s : lay->log_lines) by[static_cast<size_t>(bucket_of_text(s))].push_back(s);
    std::vector<size_t> used(4, 0);
    for (const LogLine* l : lines) {
        const auto b = static_cast<size_t>(bucket(*l));
        std::string p = used[b] < by[b].size() ? by[b][used[b]] : std::string();
        ++used[b];
        e.predicted.push_back(p);
        e.cmp.push_back(compare(*l, p));
        e.matched += e.cmp.back().match;
    }
    return e;
}

struct LVariant {
    Message cause;
    std::function<void(LlamaOptions&)> apply;
};

void check_llama_run(const LogFacts& f, const ModelSpec& m, const std::vector<const LogLine*>& lines,
                     CheckReport& rep) {
    LlamaOptions o;
    const LogLine& first = *lines[0];
    // llama_context's own lines first; a pasted launch command fills what they do not say.
    auto ctx = [&](const char* k) {
        const std::string v = first.str(k);
        return v.empty() ? f.setting(k) : v;
    };
    const LogLine* kv = nullptr;
    const LogLine* nonswa = nullptr;
    bool rs_seq = false, p_term = false;
    for (const LogLine* l : lines) {
        if (l->kind == LogLineKind::LlamaKvSize && !kv) kv = l;
        if (l->kind == LogLineKind::LlamaIswaCreate && l->str("role") == "non-SWA" && !nonswa) nonswa = l;
        if (l->kind == LogLineKind::LlamaRecurrentSize) {
            rs_seq = rs_seq || l->text.find("rs_seq") != std::string::npos;
            p_term = p_term || l->text.find(", P (") != std::string::npos;
        }
    }
    if (auto v = to_int(ctx("n_seq_max")))
        o.n_seq_max = *v;
    else if (kv && kv->num("seqs") > 0 && kv->num("seqs") < 1e6)
        o.n_seq_max = static_cast<int64_t>(kv->num("seqs"));
    if (!ctx("kv_unified").empty())
        o.kv_unified = ctx("kv_unified") == "true";
    else if (kv && kv->num("streams") == 1 && o.n_seq_max > 1)
        o.kv_unified = true;
    else if (kv && kv->num("streams") < 0 && o.n_seq_max > 1)
        o.kv_unified = true;  // mid-2025 builds: one stream for every sequence
    if (auto v = to_int(ctx("n_ubatch"))) o.n_ubatch = *v;
    // The target of an MTP / EAGLE-3 draft keeps rollback snapshots (llama_context's n_rs_seq line,
    // or the recurrent line's rs_seq count).
    if (auto v = to_int(ctx("n_rs_seq"))) {
        o.n_rs_seq = *v;
    } else {
        for (const LogLine* l : lines)
            if (l->kind == LogLineKind::LlamaRecurrentSize && l->num("rs_seq") > 0 && l->num("rs_seq") <= 1024)
                o.n_rs_seq = static_cast<int64_t>(l->num("rs_seq"));
    }
    if (ctx("swa_full") == "true" || ctx("swa_full") == "1") o.swa_full = true;
    if (!ctx("type_k").empty()) o.type_k = ctx("type_k");
    if (!ctx("type_v").empty()) o.type_v = ctx("type_v");
    if (kv) {
        if (!kv->str("type_k").empty()) o.type_k = kv->str("type_k");
        if (!kv->str("type_v").empty()) o.type_v = kv->str("type_v");
    }
    // The build (the log's banner, or --engine-version) gives the sizing rules of its time and the
    // wording the lines do not show; what the lines print wins (a fork counts its own commits, so its
    // build number can sit past a change its code lacks).
    const auto build = llama_build(f.version);  // a vLLM release here is no llama.cpp build: the newest
    if (build) apply_llama_build(build.value(), o);
    const LlamaLogFormat by_build = build ? build->log_format : LlamaLogFormat::Current;
    const bool unified_prefix = kv && kv->str("prefix").find("unified") != std::string::npos;
    const bool with_streams = kv && kv->num("streams") >= 0;
    // b5913..b6071 print "%2u/%2u seqs": a space after the slash (" 1/ 1 seqs").
    const bool aligned = with_streams && kv->text.find("/ ") != std::string::npos;
    const bool recurrent_line = std::any_of(
        lines.begin(), lines.end(), [](const LogLine* l) { return l->kind == LogLineKind::LlamaRecurrentSize; });
    const bool newer_than_2025 = by_build == LlamaLogFormat::RsSeq || by_build == LlamaLogFormat::Current;
    o.log_format = unified_prefix                       ? (!with_streams ? LlamaLogFormat::Unified
                                                           : aligned     ? LlamaLogFormat::UnifiedStreamsAligned
                                                                         : LlamaLogFormat::UnifiedStreams)
                   : p_term                             ? LlamaLogFormat::Current
                   : rs_seq                             ? LlamaLogFormat::RsSeq
                   : recurrent_line || !newer_than_2025 ? LlamaLogFormat::Y2025
                                                        : by_build;
    // An MLA line says itself whether V is cached (builds before b7832 cached it).
    if (kv && m.has(LayerKind::Mla) && kv->num("v_mib") >= 0) o.mla_v_cache = kv->num("v_mib") > 0;
    if (auto v = to_int(ctx("n_ctx"))) {
        o.n_ctx = *v;
    } else if (nonswa && nonswa->num("cells") < 1e12) {
        o.n_ctx = static_cast<int64_t>(nonswa->num("cells")) * (o.kv_unified ? 1 : o.n_seq_max);
    } else if (kv && kv->num("cells") < 1e12) {
        o.n_ctx = static_cast<int64_t>(kv->num("cells")) * (o.kv_unified ? 1 : o.n_seq_max);
        rep.notes.push_back(note("check_n_ctx_from_line", {{"n_ctx", with_commas(o.n_ctx)}}));
    }

    LEval base = eval_llama(m, o, lines);
    std::vector<CheckLine> out;
    for (size_t i = 0; i < lines.size(); ++i) {
        CheckLine c = printed_line(*lines[i]);
        if (base.ok) {
            c.predicted = base.predicted[i];
            c.match = base.cmp[i].match;
            c.deviation_percent = base.cmp[i].deviation;
            if (c.match && base.cmp[i].wording) c.cause = note("check_wording");
        } else {
            c.cause = note("check_engine_refused", {{"reason", base.error}});
        }
        out.push_back(std::move(c));
    }
    std::vector<LVariant> variants;
    variants.push_back({note("check_padding", {{"pad", "32"}}), [](LlamaOptions& x) { x.n_pad = 32; }});
    variants.push_back({note("check_unified", {{"unified", o.kv_unified ? "false" : "true"}}),
                        [](LlamaOptions& x) { x.kv_unified = !x.kv_unified; }});
    if (m.has(LayerKind::Sliding)) {
        variants.push_back({note("check_swa_full"), [](LlamaOptions& x) { x.swa_full = true; }});
        for (int64_t u : {256, 1024, 2048, 4096})
            variants.push_back(
                {note("check_ubatch", {{"ubatch", std::to_string(u)}}), [u](LlamaOptions& x) { x.n_ubatch = u; }});
    }
    if (m.has(LayerKind::Mla)) variants.push_back({note("check_mla_v"), [](LlamaOptions& x) { x.mla_v_cache = true; }});
    if (kv && kv->num("cells") < 1e12)
        for (int64_t n : {static_cast<int64_t>(kv->num("cells")), static_cast<int64_t>(kv->num("cells")) * o.n_seq_max})
            if (n != o.n_ctx)
                variants.push_back(
                    {note("check_n_ctx", {{"n_ctx", with_commas(n)}}), [n](LlamaOptions& x) { x.n_ctx = n; }});
    auto open = [&]() {
        for (const auto& c : out)
            if (!c.match) return true;
        return false;
    };
    for (const LVariant& v : variants) {
        if (!open() || !base.ok) break;
        LlamaOptions vo = o;
        v.apply(vo);
        LEval e = eval_llama(m, vo, lines);
        if (!e.ok || e.matched != static_cast<int>(lines.size())) continue;
        for (auto& c : out)
            if (!c.match && c.cause.code.empty()) c.cause = v.cause;
    }
    for (auto& c : out)
        if (!c.match && c.cause.code.empty())
            c.cause = note(c.predicted.empty() ? "check_not_predicted" : "check_no_known_cause");
    for (auto& c : out) rep.lines.push_back(std::move(c));
}

// A speculative draft context's lines. An MTP draft caches the target's nextn layers
// (llamacpp_mtp_model; when the model does not say how many, the draft line's layer count, each
// with the target's last full-attention geometry); a separate draft model's config is not the
// target's, so its lines are named, not predicted.
void check_llama_draft_run(const LogFacts& f, const ModelSpec& m, const std::vector<const LogLine*>& lines,
                           CheckReport& rep) {
    if (f.setting("draft_kind") == "mtp") {
        auto mtp = llamacpp_mtp_model(m);
        if (!mtp) {
            int64_t n = 0;
            for (const LogLine* l : lines)
                if (l->kind == LogLineKind::LlamaKvSize && l->num("layers") > 0 && l->num("layers") < 64) {
                    n = static_cast<int64_t>(l->num("layers"));
                    break;
                }
            const Layer* geometry = nullptr;
            for (const Layer& l : m.layers)
                if (l.kind == LayerKind::Full || l.kind == LayerKind::Mla) geometry = &l;
            if (n > 0 && geometry) {
                ModelSpec d = m;
                d.name = m.name + " (MTP)";
                d.layers.assign(static_cast<size_t>(n), *geometry);
                d.gguf.reset();
                mtp = std::move(d);
            }
        }
        if (mtp) {
            rep.notes.push_back(note("check_draft_mtp", {{"layers", std::to_string(mtp.value().layers.size())}}));
            check_llama_run(f, mtp.value(), lines, rep);
            return;
        }
    }
    for (const LogLine* l : lines) {
        CheckLine c = printed_line(*l);
        c.cause =
            note("check_draft_context", {{"model", f.setting("draft_model").empty() ? "?" : f.setting("draft_model")}});
        rep.lines.push_back(std::move(c));
    }
}

std::vector<int64_t> int_list(const std::string& v) {
    std::vector<int64_t> out;
    std::string cur;
    for (char c : v + ",") {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            cur += c;
        } else if (!cur.empty()) {
            if (cur.size() > 12) return {};
            out.push_back(std::strtoll(cur.c_str(), nullptr, 10));
            cur.clear();
        }
    }
    return out;
}

std::string squash(const std::string& s) {
    std::string o;
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c)))
            o += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return o;
}

}  // namespace

std::optional<VllmLogFormat> vllm_format_for_version(const std::string& version) {
    auto r = vllm_release_of(version);
    if (!r) return std::nullopt;
    return r->log_format;
}

std::optional<VllmRelease> vllm_release_of(const std::string& version) {
    if (version.empty()) return std::nullopt;
    auto r = vllm_release(version);  // a llama.cpp build ("b6699") is no vLLM release
    if (!r) return std::nullopt;
    return r.value();
}

Result<ModelSpec> spec_from_print_info(const LogFacts& f) {
    auto num = [&](const char* k) -> int64_t {
        const auto l = int_list(f.hparam(k));
        return l.empty() ? 0 : l[0];
    };
    const std::string arch = f.hparam("arch");
    const int64_t n_layer = num("n_layer");
    if (arch.empty() || n_layer <= 0 || n_layer > 4096) return make_error("bad_value", note("check_no_hparams"));
    if (num("ssm_d_state") > 0 || num("ssm_d_conv") > 0)
        return make_error("bad_value", note("check_recurrent_needs_config", {{"arch", arch}}));
    std::vector<int64_t> kv = int_list(f.hparam("n_head_kv"));
    if (kv.empty()) kv = int_list(f.hparam("n_head"));
    if (kv.size() != 1 && static_cast<int64_t>(kv.size()) != n_layer)
        return make_error("bad_value", note("check_no_hparams"));
    const int64_t hk = num("n_embd_head_k"), hv = num("n_embd_head_v");
    if (hk <= 0) return make_error("bad_value", note("check_no_hparams"));
    ModelSpec m;
    m.name = f.setting("model_name").empty() ? arch : f.setting("model_name");
    m.model_type = arch;
    m.source = "gguf";
    m.max_position_embeddings = num("n_ctx_train");
    m.dims.num_attention_heads = num("n_head");
    const int64_t n_swa = num("n_swa");
    int64_t pattern = num("n_swa_pattern");
    if (n_swa > 0 && pattern == 0) {
        // llama.cpp's set_swa_pattern(n): layer il slides when il % n < n - 1.
        static const std::pair<const char*, int64_t> kPatterns[] = {{"gemma2", 2},  {"gemma3", 6},  {"gpt-oss", 2},
                                                                    {"cohere2", 4}, {"gemma3n", 5}, {"exaone4", 4}};
        for (const auto& [a, p] : kPatterns)
            if (arch == a) pattern = p;
        if (pattern == 0) m.notes.push_back(note("check_swa_pattern_unknown", {{"arch", arch}}));
    }
    const int64_t lora = num("n_lora_kv");
    for (int64_t i = 0; i < n_layer; ++i) {
        Layer l;
        l.kv_heads = kv.size() == 1 ? kv[0] : kv[static_cast<size_t>(i)];
        l.k_head_dim = hk;
        l.v_head_dim = hv > 0 ? hv : hk;
        if (l.kv_heads == 0) l.kind = LayerKind::None;
        if (lora > 0) {
            l.kind = LayerKind::Mla;
            l.kv_lora_rank = lora;
            l.qk_rope_head_dim = num("n_rot");
        } else if (n_swa > 0 && pattern > 1 && i % pattern < pattern - 1 && l.kv_heads > 0) {
            l.kind = LayerKind::Sliding;
            l.window = n_swa;
        }
        m.layers.push_back(l);
    }
    m.notes.push_back(note("check_config_from_log", {{"arch", arch}, {"layers", std::to_string(n_layer)}}));
    return m;
}

std::string match_catalog(const std::string& model_ref, const std::vector<std::string>& ids) {
    std::string ref = model_ref;
    while (!ref.empty() && (ref.back() == '/' || ref.back() == ' ')) ref.pop_back();
    if (ref.empty()) return {};
    auto lower = [](std::string s) {
        for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
    };
    for (const auto& id : ids)
        if (lower(id) == lower(ref)) return id;
    // Hub cache: .../models--Org--Name/snapshots/<hash>
    if (auto p = ref.find("models--"); p != std::string::npos) {
        std::string rest = ref.substr(p + 8);
        rest = rest.substr(0, rest.find('/'));
        if (auto d = rest.find("--"); d != std::string::npos) {
            const std::string id = rest.substr(0, d) + "/" + rest.substr(d + 2);
            for (const auto& i : ids)
                if (lower(i) == lower(id)) return i;
        }
    }
    // A local path or file: its last component names the model (a GGUF name without its quant).
    std::string last = ref.substr(ref.find_last_of('/') == std::string::npos ? 0 : ref.find_last_of('/') + 1);
    if (last.size() > 5 && lower(last.substr(last.size() - 5)) == ".gguf") last.resize(last.size() - 5);
    std::vector<std::string> stems = {last};
    static const char* const quants[] = {"q2_k", "q3_k", "q4_0", "q4_1",  "q4_k", "q5_0", "q5_1",
                                         "q5_k", "q6_k", "q8_0", "iq1",   "iq2",  "iq3",  "iq4",
                                         "f16",  "bf16", "f32",  "mxfp4", "gguf"};
    const std::string ll = lower(last);
    for (const char* q : quants) {
        const size_t p = ll.rfind(q);
        if (p != std::string::npos && p > 0 && (ll[p - 1] == '-' || ll[p - 1] == '.' || ll[p - 1] == '_'))
            stems.push_back(last.substr(0, p - 1));
    }
    std::string found;
    for (const auto& id : ids) {
        const std::string name = id.substr(id.find('/') + 1);
        for (const auto& s : stems)
            if (!s.empty() && squash(name) == squash(s)) {
                if (!found.empty() && found != id) return {};  // two catalog entries share the name
                found = id;
            }
    }
    return found;
}

// ------------------------------------------------------------------ out of memory

namespace {

std::string bytes_text(double b) {
    return format_bytes(static_cast<int64_t>(std::llround(std::max(0.0, std::min(b, 9.0e18)))));
}

// The shortfall as a vLLM setting when the log gives gpu_memory_utilization: vLLM takes that
// fraction of the GPU (weights, activations, KV pool), so lowering it by the shortfall's share
// of the GPU leaves the missing bytes to the rest; else the generic advice.
Message vllm_short(const LogFacts& f, double total, double shortfall) {
    const std::string u_text = f.setting("gpu_memory_utilization");
    const double u = u_text.empty() ? 0 : std::strtod(u_text.c_str(), nullptr);
    if (f.engine == LogEngine::Vllm && u > 0 && u <= 1 && total > 0) {
        const double lower = std::floor((u * total - shortfall) / total * 100.0) / 100.0;
        if (lower > 0) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.2f", lower);
            return note("check_oom_short_vllm", {{"short", bytes_text(shortfall)},
                                                 {"util", bytes_text(u * total)},
                                                 {"fraction", u_text},
                                                 {"lower", buf}});
        }
    }
    return note("check_oom_short", {{"short", bytes_text(shortfall)}});
}

// PyTorch's message names the allocation and the GPU's memory: where the rest of the GPU
// went (PyTorch's tensors, its cache, everything outside PyTorch), then the one change that
// would have made room, tried from the cheapest: the allocation cannot fit any GPU of this
// size; the GPU had enough free (pieces); PyTorch's own cache holds enough (fragmentation);
// what is outside PyTorch holds enough (other processes, CUDA context); else the shortfall.
CheckLine explain_torch_oom(const LogLine& l, const LogFacts& f) {
    CheckLine c = printed_line(l);
    const double tried = l.num("tried"), total = l.num("total"), free = l.num("free");
    const bool old = l.str("wording") == "old";
    const double allocated = std::max(0.0, l.num("allocated", 0));
    // Reserved but unallocated: the caching allocator's idle blocks.
    const double cached = old ? std::max(0.0, l.num("reserved", 0) - allocated) : std::max(0.0, l.num("cached", 0));
    const double outside = std::max(0.0, total - free - allocated - cached);
    const double shortfall = tried - free;
    const std::string gpu = l.num("gpu") >= 0 ? std::to_string(static_cast<int64_t>(l.num("gpu"))) : "?";
    c.cause = note("check_torch_oom", {{"tried", bytes_text(tried)},
                                       {"gpu", gpu},
                                       {"total", bytes_text(total)},
                                       {"free", bytes_text(free)},
                                       {"pytorch", bytes_text(allocated)},
                                       {"cached", bytes_text(cached)},
                                       {"outside", bytes_text(outside)}});
    Message fit;
    if (tried > total)
        fit = note("check_oom_larger_than_gpu", {{"tried", bytes_text(tried)}, {"total", bytes_text(total)}});
    else if (shortfall <= 0)
        fit = note("check_oom_free_enough", {{"tried", bytes_text(tried)}, {"free", bytes_text(free)}});
    else if (cached >= shortfall)
        fit = note("check_oom_fragmentation", {{"cached", bytes_text(cached)}, {"short", bytes_text(shortfall)}});
    else if (outside >= shortfall)
        fit = note("check_oom_outside", {{"outside", bytes_text(outside)}, {"short", bytes_text(shortfall)}});
    else
        fit = vllm_short(f, total, shortfall);
    c.more_causes.push_back(fit);
    return c;
}

// Which -ngl or -c would have fit the device, from the log's own numbers: its free memory at
// load, and what the device held or asked for (the weights of the offloaded layers, their KV
// cells, the compute buffer; the failing allocation is one of them). Layers hold weights and
// KV about evenly (a layer's share is their sum over the offloaded slots), so -ngl k needs k
// shares plus the compute buffer; the KV grows with the context, so every layer at -c c needs
// the weights, c cells of KV and the compute buffer. Without the free memory, what to give
// kvbudget budget instead.
Message llama_oom_fit(const LogFacts& f, double size, int64_t dev, const std::string& device, const std::string& what) {
    const std::string d = "cuda" + std::to_string(dev);
    auto mib = [&](const std::string& k) {
        const std::string v = f.setting(d + k);
        return v.empty() ? -1.0 : std::strtod(v.c_str(), nullptr) * 1048576.0;
    };
    const std::string n_ctx_text = f.setting("n_ctx");
    const std::string free_text = f.setting(d + "_free_mib");
    if (free_text.empty())
        return note("check_llama_oom_no_free", {{"device", device}, {"ctx", n_ctx_text.empty() ? "N" : n_ctx_text}});
    const double free = std::strtod(free_text.c_str(), nullptr) * 1048576.0;
    const double weights = what == "weights" ? size : std::max(0.0, mib("_model_mib"));
    const double kv = what == "kv" ? size : std::max(0.0, mib("_kv_mib"));
    const double compute = what == "compute" ? size : std::max(0.0, mib("_compute_mib"));
    // Slots on the device: the offloaded line, else -ngl from the command, else every layer.
    int64_t slots = to_int(f.setting("ngl_slots")).value_or(0);
    if (slots <= 0) {
        const auto n_layer = int_list(f.hparam("n_layer"));
        if (!n_layer.empty()) slots = n_layer[0] + 1;
    }
    int64_t on_gpu = to_int(f.setting("ngl_offloaded")).value_or(slots);
    if (auto ngl = to_int(f.setting("n_gpu_layers")); ngl && *ngl >= 0 && f.setting("ngl_offloaded").empty())
        on_gpu = std::min<int64_t>(*ngl, slots);
    if (free <= compute)
        return note("check_llama_oom_nothing_fits",
                    {{"free", bytes_text(free)}, {"device", device}, {"compute", bytes_text(compute)}});
    std::vector<std::pair<std::string, std::string>> p = {{"free", bytes_text(free)}, {"device", device}};
    int64_t ngl = -1;
    if (on_gpu > 0 && weights + kv > 0) {
        const double per_slot = (weights + kv) / static_cast<double>(on_gpu);
        ngl = std::min<int64_t>(on_gpu - 1, static_cast<int64_t>(std::floor((free - compute) / per_slot)));
        p.push_back({"ngl", std::to_string(std::max<int64_t>(0, ngl))});
        p.push_back({"slots", std::to_string(slots)});
        p.push_back({"per_layer", bytes_text(per_slot)});
    }
    // -c: only when the KV cache's size is known (it failed, or was allocated before the failure).
    const auto n_ctx = to_int(n_ctx_text);
    int64_t ctx = -1;
    if (kv > 0 && n_ctx && *n_ctx > 0 && what != "weights") {
        const double per_cell = kv / static_cast<double>(*n_ctx);
        const double room = free - weights - compute;
        ctx = room <= 0 ? 0 : static_cast<int64_t>(std::floor(room / per_cell)) / 256 * 256;
        ctx = std::min<int64_t>(ctx, (*n_ctx - 1) / 256 * 256);  // below the -c that failed
        p.push_back({"ctx", with_commas(ctx)});
        p.push_back({"per_token", bytes_text(per_cell)});
    }
    const bool ngl_ok = ngl >= 1, ctx_ok = ctx >= 256;
    if (ngl_ok && ctx_ok) return note("check_llama_oom_fit_both", p);
    if (ngl_ok) return note(what == "weights" ? "check_llama_oom_fit_ngl_weights" : "check_llama_oom_fit_ngl", p);
    if (ctx_ok) return note("check_llama_oom_fit_ctx", p);
    if (ngl < 0 && ctx < 0)  // neither the offloaded layers nor the context are in the paste
        return note("check_llama_oom_few_numbers",
                    {{"free", bytes_text(free)}, {"device", device}, {"ctx", n_ctx_text.empty() ? "N" : n_ctx_text}});
    return note("check_llama_oom_nothing_fits",
                {{"free", bytes_text(free)}, {"device", device}, {"compute", bytes_text(compute)}});
}

// ggml names the buffer's size and device; the next line says which buffer it was. The
// device's free memory, when llama.cpp printed it at load ("using device CUDA0 (...) - N MiB
// free"), gives the shortfall and which -ngl or -c would fit (llama_oom_fit).
CheckLine explain_llama_oom(const LogLine& l, const LogFacts& f) {
    CheckLine c = printed_line(l);
    const double size = l.num("bytes") >= 0 ? l.num("bytes") : l.num("mib") * 1048576.0;
    const int64_t dev = static_cast<int64_t>(std::max(0.0, l.num("device", 0)));
    const std::string device = "CUDA" + std::to_string(dev);
    const std::string what = l.str("what").empty() ? "unknown" : l.str("what");
    c.cause = note("check_llama_oom_" + what, {{"size", bytes_text(size)}, {"device", device}});
    const std::string free_text = f.setting("cuda" + std::to_string(dev) + "_free_mib");
    if (!free_text.empty()) {
        const double free = std::strtod(free_text.c_str(), nullptr) * 1048576.0;
        if (size > free)
            c.more_causes.push_back(
                note("check_oom_device_free",
                     {{"free", bytes_text(free)}, {"device", device}, {"short", bytes_text(size - free)}}));
    }
    c.more_causes.push_back(llama_oom_fit(f, size, dev, device, what));
    return c;
}

}  // namespace

CheckReport check_log(const LogFacts& f, const ModelSpec* spec, const std::string& config_name,
                      const std::string& config_source) {
    CheckReport rep;
    rep.engine = f.engine;
    rep.version = f.version;
    rep.model = f.model;
    rep.settings = f.settings;
    rep.config = config_name;
    rep.config_source = config_source;
    if (f.markup) rep.notes.push_back(note("check_markup_ignored"));

    std::optional<ModelSpec> model;
    if (spec) model = *spec;
    if (!model && f.engine == LogEngine::Llamacpp && !f.hparams.empty()) {
        auto m = spec_from_print_info(f);
        if (m) {
            model = m.value();
            rep.config = "print_info";
            rep.config_source = "log";
        } else {
            rep.notes.push_back(m.error().detail);
        }
    }
    if (model)
        for (const Message& n : model->notes) rep.notes.push_back(n);

    int max_run = 0;
    for (const LogLine& l : f.lines) max_run = std::max(max_run, l.run);
    // Runs from a speculative draft context on (log_reader: "loading draft model", "creating MTP
    // draft context") are the draft's.
    int draft_from = std::numeric_limits<int>::max();
    if (auto v = to_int(f.setting("draft_from_run")); v && *v >= 0 && *v < 1000000) draft_from = static_cast<int>(*v);
    for (int r = 0; r <= max_run; ++r) {
        std::vector<const LogLine*> lines;
        for (const LogLine& l : f.lines)
            if (l.run == r && !l.is_oom()) lines.push_back(&l);
        if (lines.empty()) continue;
        // A separate draft model's context needs the draft's config, not the target's.
        if (f.engine == LogEngine::Llamacpp && r >= draft_from && (!model || f.setting("draft_kind") != "mtp")) {
            check_llama_draft_run(f, model ? *model : ModelSpec{}, lines, rep);
            continue;
        }
        if (!model) {
            for (const LogLine* l : lines) {
                CheckLine c = printed_line(*l);
                c.cause = f.model.empty() ? note("check_no_model", {}) : note("check_no_config", {{"model", f.model}});
                rep.lines.push_back(std::move(c));
            }
            continue;
        }
        if (f.engine == LogEngine::Llamacpp && r >= draft_from) {
            check_llama_draft_run(f, *model, lines, rep);
            continue;
        }
        if (f.engine == LogEngine::Vllm)
            check_vllm_run(f, *model, lines, rep, r == 0);
        else
            check_llama_run(f, *model, lines, rep);
    }
    // Out-of-memory errors are explained from their own numbers: no config needed.
    bool oom = false;
    for (const LogLine& l : f.lines)
        if (l.is_oom()) {
            rep.lines.push_back(l.kind == LogLineKind::TorchOom ? explain_torch_oom(l, f) : explain_llama_oom(l, f));
            oom = true;
        }
    if (oom)
        std::stable_sort(rep.lines.begin(), rep.lines.end(),
                         [](const CheckLine& a, const CheckLine& b) { return a.number < b.number; });
    for (const CheckLine& c : rep.lines) {
        if (c.match)
            ++rep.matched;
        else if (c.cause.code == "check_no_known_cause" || c.cause.code == "check_not_predicted" ||
                 c.cause.code == "check_no_config" || c.cause.code == "check_no_model" ||
                 c.cause.code == "check_engine_refused")
            ++rep.unexplained;
        else
            ++rep.explained;
    }
    return rep;
}

}  // namespace kvb
