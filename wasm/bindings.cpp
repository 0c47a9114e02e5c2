// The only file that knows Emscripten: the EMSCRIPTEN_BINDINGS blocks and the
// handles that keep parsed models and simulations between calls. Every entry point
// takes and returns strings, always {"ok":true,"value":...} or {"ok":false,"code",
// "message","detail"}: the values are the core's own JSON (src/report/json.h), the
// same text `kvbudget ... --json` prints. Nothing throws across the boundary (a C++
// exception would reach JS as a bare pointer number); wasm/kvbudget.js turns the error
// objects into JS errors in one place.
#ifndef KVB_WASM_CALC_ONLY
#include <emscripten/bind.h>
#endif
#include <emscripten/emscripten.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/units.h"
#include "budget/gpus.h"
#include "model/config_reader.h"
#include "model/model.h"
#include "report/answer.h"
#include "report/json.h"

using nlohmann::json;

namespace {

std::string ok_raw(const std::string& value_json) {
    return "{\"ok\":true,\"value\":" + value_json + "}";
}

std::string ok(json value) {
    return ok_raw(value.dump());
}

std::string fail(const kvb::Error& e) {
    const std::string err = kvb::to_json_text(e);
    return "{\"ok\":false," + err.substr(1);
}

std::string fail(const std::string& code, const std::string& message) {
    return fail(kvb::make_error(code, message));
}

// Runs `f` and converts anything thrown into an error value.
// The calculator module is built without C++ exceptions (../CMakeLists.txt): there
// nothing throws, and a failed allocation aborts the module, which the JS layer reports.
template <class F>
std::string guarded(F&& f) {
#if defined(__cpp_exceptions)
    try {
        return f();
    } catch (const std::bad_alloc&) {
        return fail("out_of_memory", "kvbudget ran out of memory in the browser");
    } catch (const std::exception& e) {
        return fail("internal", std::string("internal error: ") + e.what());
    } catch (...) {
        return fail("internal", "internal error");
    }
#else
    return f();
#endif
}

// Parsed models live here between calls so a control change does not re-parse the config.
std::map<int, kvb::ModelSpec>& models() {
    static std::map<int, kvb::ModelSpec> m;
    return m;
}
int next_handle = 1;

const kvb::ModelSpec* find_model(int handle) {
    auto it = models().find(handle);
    return it == models().end() ? nullptr : &it->second;
}

// `quant`: the checkpoint's hf_quant_config.json, "" when it has none (kvb::parse_config reads it as vLLM does).
std::string parse_config(const std::string& text, const std::string& name, const std::string& quant) {
    auto r = kvb::parse_config(text, name, quant);
    if (!r) return fail(r.error());
    const int handle = next_handle++;
    const std::string spec = kvb::to_json_text(r.value());
    models().emplace(handle, std::move(r.value()));
    return ok_raw("{\"handle\":" + std::to_string(handle) + ",\"spec\":" + spec + "}");
}

std::string release_model(int handle) {
    return models().erase(handle) ? ok(true)
                                  : fail("bad_handle", "no model loaded under handle " + std::to_string(handle));
}

std::string compute(int handle, const std::string& inputs) {
    const kvb::ModelSpec* m = find_model(handle);
    if (!m) return fail("bad_handle", "no model loaded under handle " + std::to_string(handle));
    auto in = kvb::budget_inputs_from_json(inputs);
    if (!in) return fail(in.error());
    auto a = kvb::compute_answer(*m, in.value());
    if (!a) return fail(a.error());
    return ok_raw(kvb::to_json_text(a.value()));
}

std::string parse_size(const std::string& text) {
    auto r = kvb::parse_size(text);
    return r ? ok(r.value()) : fail(r.error());
}

std::string parse_context(const std::string& text) {
    auto r = kvb::parse_context(text, "context");
    return r ? ok(r.value()) : fail(r.error());
}

// A GPU as the page's address or a user names it ("h100", "RTX 4090", "4090"): the catalog id
// the CLI's --gpu resolves it to, "" when none, so both faces accept the same names.
std::string find_gpu(const std::string& name) {
    const kvb::Gpu* g = kvb::find_gpu(name);
    return ok(g ? g->id : std::string());
}

std::string format_bytes(double bytes) {
    if (!(bytes >= -9.2e18 && bytes <= 9.2e18)) return fail("bad_value", "bytes out of range");
    return ok(kvb::format_bytes(static_cast<int64_t>(bytes)));
}

}  // namespace

#ifdef KVB_WASM_CALC_ONLY
// The calculator module has no embind: a plain C ABI of the same calls costs the page's
// first answer fewer bytes (embind's registrations and invokers in the .wasm, its type
// machinery in the JS glue, issue 13). Strings come in as (UTF-8 bytes, length) in memory
// the caller allocated and freed, and go out as a NUL-terminated UTF-8 string (a JSON
// text, which never holds a raw NUL) valid until the next call; wasm/kvbudget-calc.js
// gives them the embind module's interface.
namespace {
std::string last_answer;
const char* answer(std::string text) {
    last_answer = std::move(text);
    return last_answer.c_str();
}
std::string str(const char* p, int n) {
    return n > 0 ? std::string(p, static_cast<size_t>(n)) : std::string();
}
}  // namespace

extern "C" {
EMSCRIPTEN_KEEPALIVE const char* kvb_parse_config(const char* text, int text_n, const char* name, int name_n,
                                                  const char* quant, int quant_n) {
    return answer(guarded([&] { return parse_config(str(text, text_n), str(name, name_n), str(quant, quant_n)); }));
}
EMSCRIPTEN_KEEPALIVE const char* kvb_release_model(int handle) {
    return answer(guarded([&] { return release_model(handle); }));
}
EMSCRIPTEN_KEEPALIVE const char* kvb_compute(int handle, const char* inputs, int inputs_n) {
    return answer(guarded([&] { return compute(handle, str(inputs, inputs_n)); }));
}
EMSCRIPTEN_KEEPALIVE const char* kvb_parse_size(const char* text, int n) {
    return answer(guarded([&] { return parse_size(str(text, n)); }));
}
EMSCRIPTEN_KEEPALIVE const char* kvb_parse_context(const char* text, int n) {
    return answer(guarded([&] { return parse_context(str(text, n)); }));
}
EMSCRIPTEN_KEEPALIVE const char* kvb_catalog() {
    return answer(guarded([&] { return ok_raw(kvb::catalog_json_text()); }));
}
EMSCRIPTEN_KEEPALIVE const char* kvb_find_gpu(const char* text, int n) {
    return answer(guarded([&] { return find_gpu(str(text, n)); }));
}
EMSCRIPTEN_KEEPALIVE const char* kvb_format_bytes(double b) {
    return answer(guarded([&] { return format_bytes(b); }));
}
}
#else
EMSCRIPTEN_BINDINGS(kvbudget) {
    emscripten::function(
        "parseConfig", +[](std::string text, std::string name, std::string quant) {
            return guarded([&] { return parse_config(text, name, quant); });
        });
    emscripten::function(
        "releaseModel", +[](int handle) { return guarded([&] { return release_model(handle); }); });
    emscripten::function(
        "compute", +[](int handle, std::string inputs) { return guarded([&] { return compute(handle, inputs); }); });
    emscripten::function(
        "parseSize", +[](std::string text) { return guarded([&] { return parse_size(text); }); });
    emscripten::function(
        "parseContext", +[](std::string text) { return guarded([&] { return parse_context(text); }); });
    emscripten::function(
        "catalog", +[]() { return guarded([&] { return ok_raw(kvb::catalog_json_text()); }); });
    emscripten::function(
        "findGpu", +[](std::string name) { return guarded([&] { return find_gpu(name); }); });
    emscripten::function(
        "formatBytes", +[](double b) { return guarded([&] { return format_bytes(b); }); });
}
#endif  // KVB_WASM_CALC_ONLY

// The page's calculator module (kvbudget-calc, built for size) stops here: without the
// bindings below the linker drops the simulator, the GGUF reader and the log check from it
// (wasm/CMakeLists.txt); the page loads the whole module for those.
#ifndef KVB_WASM_CALC_ONLY
// ======================================================================
// Paging simulator (issue 4) and the log check (issue 12, below). The session lives in
// the core (src/sim/session.h), its JSON in src/report/sim_json.h; here only the handles. simCreate takes SimInputs as
// JSON (the member names), simRun runs a chunk (a Web Worker calls it between progress
// reports and stops calling to cancel), simResult's "summary" is byte for byte
// `kvbudget simulate --json` for the same settings (tests/node/sim.test.mjs).
// ======================================================================
#include <optional>

#include "check/check.h"
#include "check/lab.h"
#include "check/log_reader.h"
#include "model/gguf.h"
#include "model/gguf_spec.h"
#include "report/check_json.h"
#include "report/lab_json.h"
#include "report/sim_json.h"
#include "sim/session.h"

namespace {

// GGUF headers (only in the whole module: a GGUF link loads it, the first answer from a
// config.json never waits for the reader's bytes) read from a prefix of the file (the page's range requests). A header
// is kept until ggufModel() turns one file, or every shard of a split file, into a model.
std::map<int, kvb::GgufHeader>& gguf_headers() {
    static std::map<int, kvb::GgufHeader> h;
    return h;
}
int next_header = 1;

uint64_t split_key(const kvb::GgufHeader& h, const char* key) {
    const kvb::GgufValue* v = h.find(key);
    return v ? static_cast<uint64_t>(v->as_int().value_or(0)) : 0;
}

// {"status":"need_more","need_total":N} asks for a longer prefix; {"status":"ok","header":id,...}.
std::string gguf_read(const std::string& bytes, const std::string& name, double file_size) {
    const int64_t fs = file_size >= 0 && file_size <= 9.0e15 ? static_cast<int64_t>(file_size) : -1;
    auto p = kvb::parse_gguf(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), name, fs);
    if (p.status == kvb::GgufParse::Status::Error) return fail(p.error);
    if (p.status == kvb::GgufParse::Status::NeedMore)
        return ok(json{{"status", "need_more"}, {"need_total", p.need_total}});
    const int id = next_header++;
    json out = {{"status", "ok"},
                {"header", id},
                {"header_bytes", p.header.header_bytes},
                {"tensor_bytes", p.header.tensor_bytes},
                {"split_count", split_key(p.header, "split.count")},
                {"split_no", split_key(p.header, "split.no")}};
    gguf_headers().emplace(id, std::move(p.header));
    return ok(out);
}

// ids: a JSON array of header ids, shards in order; they are released either way.
std::string gguf_model(const std::string& ids_text, const std::string& name) {
    json ids = kvb::parse_json_dom(ids_text);
    if (!ids.is_array() || ids.empty()) return fail("bad_value", "ggufModel needs a list of header ids");
    std::vector<kvb::GgufHeader> shards;
    std::string missing;
    for (const auto& v : ids) {
        const int id = v.is_number_integer() ? v.get<int>() : 0;
        auto it = gguf_headers().find(id);
        if (it == gguf_headers().end()) {
            missing = std::to_string(id);
            continue;
        }
        shards.push_back(std::move(it->second));
        gguf_headers().erase(it);
    }
    if (!missing.empty()) return fail("bad_handle", "no GGUF header under handle " + missing);
    auto r = shards.size() == 1 ? kvb::spec_from_gguf(shards[0], name) : kvb::spec_from_gguf_shards(shards, name);
    if (!r) return fail(r.error());
    const int handle = next_handle++;
    const std::string spec = kvb::to_json_text(r.value());
    models().emplace(handle, std::move(r.value()));
    return ok_raw("{\"handle\":" + std::to_string(handle) + ",\"spec\":" + spec + "}");
}

std::map<int, kvb::SimSession>& sim_sessions() {
    static std::map<int, kvb::SimSession> s;
    return s;
}
int next_sim_handle = 1;

kvb::SimSession* find_sim(int id) {
    auto it = sim_sessions().find(id);
    return it == sim_sessions().end() ? nullptr : &it->second;
}

std::string no_sim(int id) {
    return fail("bad_handle", "no simulation under handle " + std::to_string(id));
}

// reader: null, or a JS function (at, n) -> Uint8Array of at most n bytes from byte
// `at` of the trace (empty at the end, null when it cannot be read), so a trace file
// of any size is read in pieces (the worker reads File slices) and never held whole.
std::string sim_create(int handle, const std::string& input_text, emscripten::val reader) {
    const kvb::ModelSpec* m = find_model(handle);
    if (!m) return fail("bad_handle", "no model loaded under handle " + std::to_string(handle));
    kvb::sim::TraceSource source;
    if (!reader.isNull() && !reader.isUndefined()) {
        source = [reader](int64_t at, char* buf, int64_t n) -> int64_t {
            const emscripten::val bytes = reader(static_cast<double>(at), static_cast<double>(n));
            if (bytes.isNull() || bytes.isUndefined()) return -1;
            const auto got = static_cast<int64_t>(bytes["length"].as<double>());
            if (got < 0 || got > n) return -1;
            emscripten::val(emscripten::typed_memory_view(static_cast<size_t>(got), reinterpret_cast<uint8_t*>(buf)))
                .call<void>("set", bytes);
            return got;
        };
    }
    auto in = kvb::sim_inputs_from_json(input_text, std::move(source));
    if (!in) return fail(in.error());
    auto s = kvb::SimSession::create(*m, in.value());
    if (!s) return fail(s.error());
    const int id = next_sim_handle++;
    const std::string run = kvb::to_json_text(s->run_info());
    sim_sessions().emplace(id, std::move(s.value()));
    return ok_raw("{\"sim\":" + std::to_string(id) + ",\"run\":" + run + "}");
}

std::string sim_run(int id, double max_steps) {
    kvb::SimSession* s = find_sim(id);
    if (!s) return no_sim(id);
    if (!(max_steps >= 1 && max_steps <= 1e12)) return fail("bad_value", "maxSteps must be at least 1");
    auto p = s->run(static_cast<int64_t>(max_steps));
    return p ? ok_raw(kvb::to_json_text(p.value())) : fail(p.error());
}

std::string sim_result(int id, const std::string& opts_text) {
    kvb::SimSession* s = find_sim(id);
    if (!s) return no_sim(id);
    auto o = kvb::sim_result_options_from_json(opts_text);
    if (!o) return fail(o.error());
    return ok_raw(kvb::sim_result_json_text(*s, o->series, o->snapshots));
}

std::string sim_release(int id) {
    return sim_sessions().erase(id) ? ok(true) : no_sim(id);
}

// The block maps' packed form (src/report/sim_json.h): simPack() writes it here and
// answers its sizes as usual; simPacked(0 | 1 | 2) then hands its f64 / i32 / u16 array to JS as
// a view of this memory (numbers, not text: the one exception to strings-only, as the
// arrays are millions of numbers), which the wrapper copies out before anything else
// runs, and simPackFree() lets it go.
kvb::SimPackedSnapshots& packed_snapshots() {
    static kvb::SimPackedSnapshots p;
    return p;
}

std::string sim_pack(int id) {
    kvb::SimSession* s = find_sim(id);
    if (!s) return no_sim(id);
    kvb::SimPackedSnapshots& p = packed_snapshots();
    p = kvb::sim_snapshots_packed(*s);
    return ok(json{{"f64", p.f64.size()}, {"i32", p.i32.size()}, {"u16", p.u16.size()}});
}

emscripten::val sim_packed(int which) {
    const kvb::SimPackedSnapshots& p = packed_snapshots();
    if (which == 0) return emscripten::val(emscripten::typed_memory_view(p.f64.size(), p.f64.data()));
    if (which == 1) return emscripten::val(emscripten::typed_memory_view(p.i32.size(), p.i32.data()));
    return emscripten::val(emscripten::typed_memory_view(p.u16.size(), p.u16.data()));
}

void sim_pack_free() {
    packed_snapshots() = {};
}

// kvbudget check (issue 12), the page's "Compare with your log". Two steps because the
// config comes from the page: checkLogModel says which bundled config the log names
// (the catalog ids are the page's catalog/index.json), the page fetches it, and
// checkLog answers with exactly what `kvbudget check LOG --json` prints for the same
// log and config, its {"error": ...} for a log it cannot read included.
std::string check_log_model(const std::string& text, const std::string& ids_text) {
    json ids = kvb::parse_json_dom(ids_text);
    if (!ids.is_array()) return fail("bad_value", "checkLogModel needs a list of catalog ids");
    std::vector<std::string> names;
    for (const auto& v : ids)
        if (v.is_string()) names.push_back(v.get<std::string>());
    auto f = kvb::read_engine_log(text);
    const std::string model = f ? f->model : "";
    return ok(json{{"model", model}, {"catalog_id", model.empty() ? "" : kvb::match_catalog(model, names)}});
}

std::string check_log(const std::string& text, const std::string& config_text, const std::string& config_name,
                      const std::string& config_quant, const std::string& config_source) {
    auto f = kvb::read_engine_log(text);
    if (!f) return ok_raw(kvb::check_error_json(f.error()));
    std::optional<kvb::ModelSpec> spec;
    if (!config_text.empty()) {
        auto m = kvb::parse_config(config_text, config_name, config_quant);
        if (!m) return fail(m.error());
        spec = std::move(m.value());
    }
    const kvb::CheckReport r =
        kvb::check_log(*f, spec ? &*spec : nullptr, spec ? config_name : "", spec ? config_source : "");
    return ok_raw(kvb::to_json_text(r));
}

// kvbudget lab (issue 12 item 2), the page's lab panel: the runs pasted, the config of the
// model the page shows, the settings as JSON (lab_request_from_json). The answer is what
// `kvbudget lab RUNS --config CONFIG --json` prints, its {"error": ...} included.
std::string lab_table(const std::string& text, const std::string& config_text, const std::string& config_name,
                      const std::string& config_quant, const std::string& settings_text) {
    auto q = kvb::lab_request_from_json(settings_text);
    if (!q) return fail(q.error());
    auto in = kvb::read_lab_paste(text, q->measure);
    if (!in) return ok_raw(kvb::check_error_json(in.error()));
    auto m = kvb::parse_config(config_text, config_name, config_quant);
    if (!m) return ok_raw(kvb::check_error_json(m.error()));
    auto r = kvb::lab_table(in.value(), m.value(), q->settings);
    return ok_raw(r ? kvb::to_json_text(r.value()) : kvb::check_error_json(r.error()));
}

}  // namespace

EMSCRIPTEN_BINDINGS(kvbudget_gguf) {
    emscripten::function(
        "ggufRead", +[](std::string bytes, std::string name, double file_size) {
            return guarded([&] { return gguf_read(bytes, name, file_size); });
        });
    emscripten::function(
        "ggufModel", +[](std::string ids, std::string name) { return guarded([&] { return gguf_model(ids, name); }); });
}

EMSCRIPTEN_BINDINGS(kvbudget_check) {
    emscripten::function(
        "labTable",
        +[](std::string text, std::string config, std::string name, std::string quant, std::string settings) {
            return guarded([&] { return lab_table(text, config, name, quant, settings); });
        });
    emscripten::function(
        "checkLogModel",
        +[](std::string text, std::string ids) { return guarded([&] { return check_log_model(text, ids); }); });
    emscripten::function(
        "checkLog", +[](std::string text, std::string config, std::string name, std::string quant, std::string source) {
            return guarded([&] { return check_log(text, config, name, quant, source); });
        });
}

EMSCRIPTEN_BINDINGS(kvbudget_sim) {
    emscripten::function(
        "simCreate", +[](int handle, std::string input, emscripten::val reader) {
            return guarded([&] { return sim_create(handle, input, reader); });
        });
    emscripten::function(
        "simRun", +[](int id, double max_steps) { return guarded([&] { return sim_run(id, max_steps); }); });
    emscripten::function(
        "simResult", +[](int id, std::string opts) { return guarded([&] { return sim_result(id, opts); }); });
    emscripten::function(
        "simRelease", +[](int id) { return guarded([&] { return sim_release(id); }); });
    emscripten::function(
        "simPack", +[](int id) { return guarded([&] { return sim_pack(id); }); });
    emscripten::function("simPacked", &sim_packed);
    emscripten::function("simPackFree", &sim_pack_free);
}
#endif  // KVB_WASM_CALC_ONLY
