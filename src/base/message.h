// Notes, warnings and refusals as stable codes with named parameters. The core never
// hands a face a sentence it must parse: each face words a Message in its own
// language (the CLI and the English page from message_templates(), the Chinese page
// from web/i18n/zh-CN.json "msg.<code>"). Parameters are already formatted as the
// engines and the English page print them (42,656; 4.50 GiB; --max-num-seqs).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace kvb {

using MessageParams = std::vector<std::pair<std::string, std::string>>;

struct Message {
    std::string code;      // snake_case, stable once shipped: "mha_assumed", "unknown_gpu", ...
    MessageParams params;  // {name, value}; every {name} in the code's template
    std::string param(const std::string& name) const;
};

struct MessageTemplate {
    const char* code;
    const char* english;  // "{n} layers have no attention (no_op): they hold no KV cache"
};

// Every code the core can emit, with its English wording. Tests check each face's
// catalog against this list, so a new code without a translation fails the suite.
const std::vector<MessageTemplate>& message_templates();

// The English text of a message; an unknown code or a missing parameter is rendered
// visibly ("<code>") rather than dropped, and a test keeps that from shipping.
std::string render_english(const Message& m);

// Builds a message: note("mha_assumed", {{"n", "32"}}).
Message note(std::string code, MessageParams params = {});

}  // namespace kvb
