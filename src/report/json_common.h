// Internal to src/report/: the pieces every serializer shares, so a Message, a list
// of notes or an Error has one JSON form whatever answer it sits in.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "engines/llamacpp.h"
#include "model/config_reader.h"
#include "report/json_writer.h"

namespace kvb::report_json {

using nlohmann::json;

// Compact (no spaces), invalid UTF-8 replaced: the text both faces print.
inline std::string dump(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The shared forms as DOM values, for the writers that still build one (check, lab,
// sim): parsed from json_writer's text, so a Message or an Error has one JSON form.
inline json message_json(const Message& m) {
    return parse_json_dom(message_text(m));
}

inline json notes_json(const std::vector<Message>& notes) {
    return parse_json_dom(notes_text(notes));
}

inline json error_json(const Error& e) {
    return parse_json_dom(error_text(e));
}

// llama.cpp's speculative draft context(s), as both `kvbudget llamacpp --json` and the budget's
// llamacpp member carry them (json.cpp).
JsonObject llama_draft_json(const LlamaDraft& d);

// A wrong JSON type for an inputs field, named by its key.
inline Error field_error(const std::string& field, const std::string& want, const json& got) {
    return make_error("bad_value", note("input_wrong_type", {{"field", field}, {"want", want}, {"value", dump(got)}}));
}

// Typed readers of one inputs field `key`: a refusal naming the key, or nullopt with
// `out` set. A whole number may come as 4096 or 4096.0 (JavaScript has one number type).
inline std::optional<Error> read_count(const std::string& key, const json& v, int64_t& out) {
    if (v.is_number_integer()) {
        out = v.get<int64_t>();
        return std::nullopt;
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (d >= -9.0e15 && d <= 9.0e15 && d == static_cast<double>(static_cast<int64_t>(d))) {
            out = static_cast<int64_t>(d);
            return std::nullopt;
        }
    }
    return field_error(key, "whole number", v);
}

inline std::optional<Error> read_number(const std::string& key, const json& v, double& out) {
    if (!v.is_number()) return field_error(key, "number", v);
    out = v.get<double>();
    return std::nullopt;
}

inline std::optional<Error> read_flag(const std::string& key, const json& v, bool& out) {
    if (!v.is_boolean()) return field_error(key, "true or false", v);
    out = v.get<bool>();
    return std::nullopt;
}

inline std::optional<Error> read_text(const std::string& key, const json& v, std::string& out) {
    if (!v.is_string()) return field_error(key, "string", v);
    out = v.get<std::string>();
    return std::nullopt;
}

}  // namespace kvb::report_json
