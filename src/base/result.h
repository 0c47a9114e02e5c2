// Errors are values: nothing in the core throws across its public API, so the
// same code can sit behind embind (where an exception would surface as a bare
// number) and behind the CLI.
#pragma once
#include <string>
#include <utility>
#include <variant>

#include "base/message.h"

namespace kvb {

struct Error {
    std::string code;     // category, stable: missing_field, not_json, bad_value, unsupported_architecture, ...
    std::string message;  // English; names the field and the model
    Message detail;       // the same refusal as a code + parameters for faces in other languages
};

template <class T>
class Result {
public:
    // Two overloads, not one by value: `return m;` of a local then moves it (C++17 moves
    // a returned local only into an rvalue-reference parameter); a 10,000-layer model
    // was copied whole on its way out of the parser.
    Result(const T& value) : v_(value) {}
    Result(T&& value) : v_(std::move(value)) {}
    Result(Error e) : v_(std::move(e)) {}
    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    const T& value() const { return std::get<0>(v_); }
    T& value() { return std::get<0>(v_); }
    const Error& error() const { return std::get<1>(v_); }
    const T* operator->() const { return &value(); }
    const T& operator*() const { return value(); }

private:
    std::variant<T, Error> v_;
};

// A refusal worded once, from its code's template (base/message.cpp).
inline Error make_error(std::string code, Message detail) {
    std::string text = render_english(detail);
    return Error{std::move(code), std::move(text), std::move(detail)};
}

// A refusal with English text only: detail.code is empty, so other faces show the
// English. Kept while call sites move to coded messages; tests list what is left.
inline Error make_error(std::string code, std::string message) {
    return Error{std::move(code), std::move(message), Message{}};
}

}  // namespace kvb
