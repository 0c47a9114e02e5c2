// Internal to src/report/: JSON text written straight from the core's structs, byte for
// byte what nlohmann's dump() printed for the DOM the writers used to build (compact,
// keys sorted, doubles in nlohmann's shortest round-trip form, strings escaped as its
// dump() with invalid UTF-8 replaced). Why not the DOM: building one inlined nlohmann's
// object and map code into every writer, most of the calculator module's JSON bytes
// that the page downloads before its first answer (issue 13).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/message.h"
#include "base/result.h"

namespace kvb::report_json {

class JsonObject;
class JsonArray;

// The text of one value.
std::string jv(const std::string& s);
std::string jv(const char* s);
std::string jv(bool b);
std::string jv(double d);
std::string jv(std::nullptr_t);
std::string jv_int(int64_t v);
std::string jv_uint(uint64_t v);
std::string jv(const JsonObject& o);
std::string jv(const JsonArray& a);

template <class T, std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value, int> = 0>
std::string jv(T v) {
    if constexpr (std::is_signed<T>::value)
        return jv_int(static_cast<int64_t>(v));
    else
        return jv_uint(static_cast<uint64_t>(v));
}

template <class T>
std::string jv(const std::optional<T>& v) {
    return v ? jv(*v) : jv(nullptr);
}

template <class T>
std::string jv(const std::vector<T>& v);

// An array, written as its elements are added.
class JsonArray {
public:
    template <class T>
    JsonArray& add(const T& v) {
        return add_raw(jv(v));
    }
    JsonArray& add_raw(const std::string& text);
    std::string text() const { return out_ + "]"; }

private:
    std::string out_ = "[";
};

template <class T>
std::string jv(const std::vector<T>& v) {
    JsonArray a;
    for (const auto& x : v) a.add(x);
    return a.text();
}

// An object: members in any order, written with keys sorted; setting a key again
// replaces its value, as nlohmann's j[key] = value did.
class JsonObject {
public:
    template <class T>
    JsonObject& set(const char* key, const T& v) {
        return set_raw(key, jv(v));
    }
    JsonObject& set_raw(const char* key, std::string text);
    std::string text() const;

private:
    std::vector<std::pair<std::string, std::string>> fields_;
};

// The shared forms: {"code", "params", "text"}, a list of them, {"code", "message", "detail"}.
std::string message_text(const Message& m);
std::string notes_text(const std::vector<Message>& notes);
std::string error_text(const Error& e);

}  // namespace kvb::report_json
