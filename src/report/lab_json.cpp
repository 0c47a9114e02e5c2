#include "report/lab_json.h"

#include <cmath>

#include "report/json_common.h"

namespace kvb {

using nlohmann::json;
using namespace report_json;

namespace {

// Two decimals: read by people, and no float noise in the bytes both faces print.
json two_decimals(const std::optional<double>& v) {
    if (!v || !std::isfinite(*v)) return nullptr;
    return std::round(*v * 100.0) / 100.0;
}

json opt_int(const std::optional<int64_t>& v) {
    return v ? json(*v) : json(nullptr);
}

}  // namespace

std::string to_json_text(const LabReport& r) {
    json settings = json::object();
    for (const auto& [k, v] : r.settings) settings[k] = v;
    json rows = json::array();
    for (const LabRow& row : r.rows)
        rows.push_back({{"line", row.line},
                        {"context", row.context},
                        {"measured_bytes", row.measured},
                        {"formula_kv_bytes", row.formula_kv},
                        {"increment_bytes", opt_int(row.increment)},
                        {"formula_increment_bytes", opt_int(row.formula_increment)},
                        {"deviation_percent", two_decimals(row.deviation_percent)}});
    const json fit = {
        {"slope_bytes_per_token", two_decimals(r.slope)},
        {"intercept_bytes", std::fabs(r.intercept) < 9.0e18 ? json(std::llround(r.intercept)) : json(nullptr)},
        {"formula_bytes_per_token", two_decimals(r.formula_slope)},
        {"deviation_percent", two_decimals(r.deviation_percent)}};
    return dump({{"engine", r.engine},
                 {"model", r.model},
                 {"measure", r.measure},
                 {"settings", settings},
                 {"rows", rows},
                 {"fit", fit},
                 {"baseline_bytes", opt_int(r.baseline)},
                 {"weights_bytes", opt_int(r.weights)},
                 {"runtime_bytes", opt_int(r.runtime)},
                 {"notes", notes_json(r.notes)}});
}

Result<LabRequest> lab_request_from_json(const std::string& text) {
    const json j = parse_json_dom(text.empty() ? std::string("{}") : text);
    auto bad = [](const std::string& what) { return make_error("bad_value", "lab settings: " + what); };
    if (!j.is_object()) return bad("a JSON object is needed");
    LabRequest q;
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string& k = it.key();
        const json& v = it.value();
        if (k == "engine" || k == "measure" || k == "type_k" || k == "type_v" || k == "dtype") {
            if (!v.is_string()) return bad(k + " must be a string");
            const std::string s = v.get<std::string>();
            if (k == "engine") q.settings.engine = s;
            if (k == "measure") q.measure = s;
            if (k == "type_k") q.settings.llama.type_k = s;
            if (k == "type_v") q.settings.llama.type_v = s;
            if (k == "dtype") q.settings.dtype = s;
        } else if (k == "n_seq_max") {
            if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 4096)
                return bad("n_seq_max must be a whole number from 1 to 4096");
            q.settings.llama.n_seq_max = v.get<int64_t>();
        } else if (k == "kv_unified" || k == "swa_full") {
            if (!v.is_boolean()) return bad(k + " must be true or false");
            (k == "kv_unified" ? q.settings.llama.kv_unified : q.settings.llama.swa_full) = v.get<bool>();
        } else {
            return bad("unknown key " + k);
        }
    }
    return q;
}

}  // namespace kvb
