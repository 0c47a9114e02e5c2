#include "model/config_reader.h"

#include <cmath>

namespace kvb {

namespace {

constexpr const char* kNonFiniteMark = "\\u0000";

bool is_ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// One pass over the text that tracks strings, so that "Infinity" inside a string
// value is left alone. Also measures nesting depth so the parser never recurses
// into a hostile document.
Result<std::string> sanitize(const std::string& in, const std::string& model, int max_depth) {
    std::string out;
    out.reserve(in.size());
    bool in_string = false;
    int depth = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        char c = in[i];
        if (in_string) {
            out += c;
            if (c == '\\' && i + 1 < in.size()) {
                out += in[++i];
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) {
                return make_error("not_json",
                                  note("config_too_deep", {{"model", model}, {"depth", std::to_string(max_depth)}}));
            }
        } else if (c == ']' || c == '}') {
            --depth;
        } else if ((c == 'N' || c == 'I' || c == '-') && (i == 0 || !is_ident_char(in[i - 1]))) {
            static const char* const words[] = {"-Infinity", "Infinity", "NaN"};
            bool replaced = false;
            for (const char* w : words) {
                size_t n = std::char_traits<char>::length(w);
                if (in.compare(i, n, w) == 0 && (i + n == in.size() || !is_ident_char(in[i + n]))) {
                    // A marker string, not null: null means "not set" (Python's None), but a
                    // field that holds NaN is set, to something unusable, and must say so.
                    out += std::string("\"") + kNonFiniteMark + w + "\"";
                    i += n - 1;
                    replaced = true;
                    break;
                }
            }
            if (replaced) continue;
        }
        out += c;
    }
    return out;
}

}  // namespace

namespace {

// nlohmann's DOM builder, also noting where the first error is. One SAX type for every
// parse in the core: json::parse would add a second parser (the one with callbacks) and
// a second pass to find the error, code the page's calculator module downloads.
struct DomSax {
    using Json = nlohmann::json;
    nlohmann::detail::json_sax_dom_parser<Json> dom;
    size_t pos = 0;
    std::string too_large;
    explicit DomSax(Json& out) : dom(out, /*allow_exceptions=*/false) {}
    bool null() { return dom.null(); }
    bool boolean(bool v) { return dom.boolean(v); }
    bool number_integer(Json::number_integer_t v) { return dom.number_integer(v); }
    bool number_unsigned(Json::number_unsigned_t v) { return dom.number_unsigned(v); }
    bool number_float(Json::number_float_t v, const Json::string_t& s) { return dom.number_float(v, s); }
    bool string(Json::string_t& v) { return dom.string(v); }
    bool binary(Json::binary_t& v) { return dom.binary(v); }
    bool start_object(std::size_t n) { return dom.start_object(n); }
    bool key(Json::string_t& v) { return dom.key(v); }
    bool end_object() { return dom.end_object(); }
    bool start_array(std::size_t n) { return dom.start_array(n); }
    bool end_array() { return dom.end_array(); }
    template <class Exception>
    bool parse_error(std::size_t p, const std::string& token, const Exception& e) {
        pos = p;
        // out_of_range.406: a number literal beyond double's range (1e999) is valid
        // JSON syntax that no parser can hold: say that, not "syntax error".
        if (e.id == 406) too_large = token;
        return dom.parse_error(p, token, e);
    }
};

// false when the text is not JSON (the DOM is then unspecified).
bool parse_into(const std::string& text, DomSax& sax) {
    return nlohmann::json::sax_parse(text, &sax) && !sax.dom.is_errored();
}

}  // namespace

nlohmann::json parse_json_dom(const std::string& text) {
    nlohmann::json j;
    DomSax sax(j);
    if (!parse_into(text, sax)) return nlohmann::json(nlohmann::json::value_t::discarded);
    return j;
}

Result<nlohmann::json> parse_json_text(const std::string& text, const std::string& model, int max_depth) {
    auto clean = sanitize(text, model, max_depth);
    if (!clean) return clean.error();
    nlohmann::json j;
    DomSax sax(j);
    if (!parse_into(clean.value(), sax)) {
        if (!sax.too_large.empty())
            return make_error("bad_value", note("config_number_too_large", {{"model", model},
                                                                            {"value", sax.too_large.substr(0, 40)},
                                                                            {"byte", std::to_string(sax.pos)}}));
        if (!sax.pos) return make_error("not_json", note("config_not_json", {{"model", model}}));
        return make_error("not_json",
                          note("config_not_json_at", {{"model", model}, {"byte", std::to_string(sax.pos)}}));
    }
    return j;
}

std::optional<std::string> non_finite_word(const nlohmann::json& v) {
    if (!v.is_string()) return std::nullopt;
    const std::string& s = v.get_ref<const std::string&>();
    if (s.empty() || s[0] != '\0') return std::nullopt;
    return s.substr(1);
}

std::string json_type_name(const nlohmann::json& v) {
    switch (v.type()) {
        case nlohmann::json::value_t::null: return "null";
        case nlohmann::json::value_t::boolean: return "a boolean";
        case nlohmann::json::value_t::string: return non_finite_word(v) ? "a non-finite number" : "a string";
        case nlohmann::json::value_t::array: return "an array";
        case nlohmann::json::value_t::object: return "an object";
        case nlohmann::json::value_t::binary: return "binary";
        case nlohmann::json::value_t::discarded: return "invalid";
        default: return "a number";
    }
}

std::string short_dump(const nlohmann::json& v) {
    if (auto w = non_finite_word(v)) return *w;
    std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return s;
}

bool ConfigReader::has(const char* key) const {
    auto it = p_.find(key);
    return it != p_.end() && !it->is_null();
}

const nlohmann::json* ConfigReader::find(std::initializer_list<const char*> keys, std::string* which) const {
    for (const char* k : keys) {
        auto it = p_.find(k);
        if (it != p_.end() && !it->is_null()) {
            if (which) *which = k;
            return &*it;
        }
    }
    return nullptr;
}

const nlohmann::json* ConfigReader::find_anywhere(const char* key) const {
    if (const auto* v = find({key})) return v;
    if (&root_ != &p_) {
        auto it = root_.find(key);
        if (it != root_.end() && !it->is_null()) return &*it;
    }
    return nullptr;
}

Error ConfigReader::missing(std::initializer_list<const char*> keys) const {
    const std::string first = *keys.begin();
    if (keys.size() == 1) return refuse("missing_field", "missing_field", {{"field", first}});
    std::string others;
    for (auto k = keys.begin() + 1; k != keys.end(); ++k) others += (others.empty() ? "" : ", ") + std::string(*k);
    return refuse("missing_field", "missing_field_alternatives", {{"field", first}, {"others", others}});
}

Error ConfigReader::refuse(const char* category, const char* code, MessageParams params) const {
    params.insert(params.begin(), {"model", model_});
    return make_error(category, note(code, std::move(params)));
}

Result<int64_t> ConfigReader::int_value(const nlohmann::json& v, const std::string& field, int64_t lo,
                                        int64_t hi) const {
    auto out_of_range = [&](const std::string& shown) {
        return refuse("out_of_range", "out_of_range",
                      {{"field", field}, {"value", shown}, {"min", std::to_string(lo)}, {"max", std::to_string(hi)}});
    };
    int64_t n = 0;
    if (v.is_number_integer()) {
        if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
            return out_of_range(short_dump(v));
        n = v.get<int64_t>();
    } else if (v.is_number_float()) {
        double d = v.get<double>();
        if (!std::isfinite(d) || d != std::floor(d)) {
            return refuse("bad_value", "not_integer", {{"field", field}, {"value", short_dump(v)}});
        }
        if (d < static_cast<double>(lo) || d > static_cast<double>(hi)) return out_of_range(short_dump(v));
        n = static_cast<int64_t>(d);
    } else if (auto w = non_finite_word(v)) {
        return refuse("bad_value", "not_integer", {{"field", field}, {"value", *w}});
    } else {
        return refuse("bad_value", "not_integer_type",
                      {{"field", field}, {"got", json_type_name(v)}, {"value", short_dump(v)}});
    }
    if (n < lo || n > hi) return out_of_range(std::to_string(n));
    return n;
}

Result<int64_t> ConfigReader::required_int(std::initializer_list<const char*> keys, int64_t lo, int64_t hi) const {
    std::string which;
    const auto* v = find(keys, &which);
    if (!v) return missing(keys);
    return int_value(*v, which, lo, hi);
}

Result<std::optional<int64_t>> ConfigReader::optional_int(std::initializer_list<const char*> keys, int64_t lo,
                                                          int64_t hi) const {
    std::string which;
    const auto* v = find(keys, &which);
    if (!v) return std::optional<int64_t>{};
    auto r = int_value(*v, which, lo, hi);
    if (!r) return r.error();
    return std::optional<int64_t>{r.value()};
}

std::optional<bool> ConfigReader::optional_bool(const char* key) const {
    const auto* v = find({key});
    if (!v || !v->is_boolean()) return std::nullopt;
    return v->get<bool>();
}

bool bool_at(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::string string_at(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<std::string> ConfigReader::optional_string(const char* key) const {
    const auto* v = find({key});
    if (!v || !v->is_string() || non_finite_word(*v)) return std::nullopt;
    return v->get<std::string>();
}

}  // namespace kvb
