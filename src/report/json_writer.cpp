#include "report/json_writer.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace kvb::report_json {

std::string jv(const std::string& s) {
    // Plain ASCII is written as it is; anything nlohmann escapes or checks (control
    // characters, quotes, backslashes, UTF-8) goes through its own escaping.
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
            return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    out += s;
    out += '"';
    return out;
}

std::string jv(const char* s) {
    return jv(std::string(s));
}

std::string jv(bool b) {
    return b ? "true" : "false";
}

std::string jv(double d) {
    if (!std::isfinite(d)) return "null";
    char buf[64];
    const char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, d);
    return std::string(buf, static_cast<size_t>(end - buf));
}

std::string jv(std::nullptr_t) {
    return "null";
}

std::string jv_uint(uint64_t v) {
    char buf[24];
    char* p = buf + sizeof buf;
    do {
        *--p = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v);
    return std::string(p, buf + sizeof buf);
}

std::string jv_int(int64_t v) {
    if (v >= 0) return jv_uint(static_cast<uint64_t>(v));
    return "-" + jv_uint(0 - static_cast<uint64_t>(v));
}

std::string jv(const JsonObject& o) {
    return o.text();
}

std::string jv(const JsonArray& a) {
    return a.text();
}

JsonArray& JsonArray::add_raw(const std::string& text) {
    if (out_.size() > 1) out_ += ',';
    out_ += text;
    return *this;
}

JsonObject& JsonObject::set_raw(const char* key, std::string text) {
    for (auto& f : fields_)
        if (f.first == key) {
            f.second = std::move(text);
            return *this;
        }
    fields_.emplace_back(key, std::move(text));
    return *this;
}

std::string JsonObject::text() const {
    std::vector<const std::pair<std::string, std::string>*> order;
    order.reserve(fields_.size());
    size_t n = 2;
    for (const auto& f : fields_) {
        order.push_back(&f);
        n += f.first.size() + f.second.size() + 4;
    }
    std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    std::string out;
    out.reserve(n);
    out += '{';
    for (const auto* f : order) {
        if (out.size() > 1) out += ',';
        out += jv(f->first);
        out += ':';
        out += f->second;
    }
    out += '}';
    return out;
}

std::string message_text(const Message& m) {
    JsonObject params;
    for (const auto& [k, v] : m.params) params.set(k.c_str(), v);
    return JsonObject().set("code", m.code).set("params", params).set("text", render_english(m)).text();
}

std::string notes_text(const std::vector<Message>& notes) {
    JsonArray a;
    for (const Message& n : notes) a.add_raw(message_text(n));
    return a.text();
}

std::string error_text(const Error& e) {
    return JsonObject()
        .set("code", e.code)
        .set("message", e.message)
        .set_raw("detail", e.detail.code.empty() ? jv(nullptr) : message_text(e.detail))
        .text();
}

}  // namespace kvb::report_json
