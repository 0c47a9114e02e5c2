#include "report/check_json.h"

#include <cmath>

#include "report/json_common.h"

namespace kvb {

using nlohmann::json;
using namespace report_json;

std::string to_json_text(const CheckReport& r) {
    json settings = json::object();
    for (const auto& [k, v] : r.settings) settings[k] = v;
    json lines = json::array();
    for (const CheckLine& c : r.lines) {
        json d = nullptr;
        // Two decimals: the deviation is read by people, and the JSON must not carry a float's noise.
        if (c.deviation_percent && std::isfinite(*c.deviation_percent))
            d = std::round(*c.deviation_percent * 100.0) / 100.0;
        lines.push_back({{"number", c.number},
                         {"kind", c.kind},
                         {"printed", c.printed},
                         {"predicted", c.predicted},
                         {"match", c.match},
                         {"cause", c.cause.code.empty() ? json(nullptr) : message_json(c.cause)},
                         {"more_causes", notes_json(c.more_causes)},
                         {"deviation_percent", d}});
    }
    return dump({
        {"engine", to_string(r.engine)},
        {"version", r.version},
        {"model", r.model},
        {"config", r.config},
        {"config_source", r.config_source},
        {"settings", settings},
        {"lines", lines},
        {"notes", notes_json(r.notes)},
        {"matched", r.matched},
        {"explained", r.explained},
        {"unexplained", r.unexplained},
    });
}

std::string check_error_json(const Error& e) {
    return dump({{"error", error_json(e)}});
}

}  // namespace kvb
