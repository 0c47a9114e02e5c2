// Typed, error-reporting access to a config.json object. Every accessor names the
// field and the model in its error, so normalization code stays linear.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace kvb {

// Python's json.dumps writes NaN / Infinity / -Infinity (real configs contain them,
// e.g. Nemotron-H's time_step_limit); nlohmann rejects them. Replace them with null
// outside strings. Also refuses nesting deeper than max_depth.
Result<nlohmann::json> parse_json_text(const std::string& text, const std::string& model, int max_depth = 256);
// Any other JSON text (the page's requests): a discarded value when it is not JSON.
// Use this, not json::parse, so the core holds one parser.
nlohmann::json parse_json_dom(const std::string& text);

class ConfigReader {
public:
    // `primary` is the text model (text_config when nested), `root` the whole file.
    ConfigReader(const nlohmann::json& primary, const nlohmann::json& root, std::string model)
        : p_(primary), root_(root), model_(std::move(model)) {}

    const std::string& model() const { return model_; }
    const nlohmann::json& primary() const { return p_; }
    const nlohmann::json& root() const { return root_; }

    // True when the key exists in the text model with a non-null value.
    bool has(const char* key) const;
    // The value of the first listed key that is present and non-null; nullptr if none.
    const nlohmann::json* find(std::initializer_list<const char*> keys, std::string* which = nullptr) const;
    // Looks in the text model first, then in the root (dtype and tie_word_embeddings
    // often live only at the top of multimodal configs).
    const nlohmann::json* find_anywhere(const char* key) const;

    // Integer fields: accept JSON integers and integral floats; anything else is an error.
    // `lo`..`hi` bound absurd values (1e12 layers) before any arithmetic sees them.
    Result<int64_t> required_int(std::initializer_list<const char*> keys, int64_t lo, int64_t hi) const;
    Result<std::optional<int64_t>> optional_int(std::initializer_list<const char*> keys, int64_t lo, int64_t hi) const;
    Result<int64_t> int_value(const nlohmann::json& v, const std::string& field, int64_t lo, int64_t hi) const;
    std::optional<bool> optional_bool(const char* key) const;
    std::optional<std::string> optional_string(const char* key) const;

    Error missing(std::initializer_list<const char*> keys) const;
    // A refusal about this config: `code`'s template gets {model} on top of `params`.
    Error refuse(const char* category, const char* code, MessageParams params = {}) const;

private:
    const nlohmann::json& p_;
    const nlohmann::json& root_;
    std::string model_;
};

// Type-safe lookups in a nested object: a wrong type reads as absent (false / "").
bool bool_at(const nlohmann::json& j, const char* key);
std::string string_at(const nlohmann::json& j, const char* key);

std::string json_type_name(const nlohmann::json& v);
// parse_json_text keeps NaN / Infinity / -Infinity as marker strings (so a field holding
// one is present, not "not set"); this gives the word back, nullopt for anything else.
std::optional<std::string> non_finite_word(const nlohmann::json& v);
std::string short_dump(const nlohmann::json& v);

}  // namespace kvb
