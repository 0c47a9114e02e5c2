#include "engines/engine_version.h"

#include <cctype>
#include <string>

#include "base/text.h"

namespace kvb {

namespace {

bool digit(char c) {
    return c >= '0' && c <= '9';
}

// Up to nine digits at s[i]; false when there are none or more follow.
bool read_number(const std::string& s, size_t& i, int64_t& out) {
    size_t n = 0;
    int64_t x = 0;
    while (i < s.size() && n < 9 && digit(s[i])) x = x * 10 + (s[i++] - '0'), ++n;
    out = x;
    return n > 0 && !(i < s.size() && digit(s[i]));
}

Error bad(const std::string& engine, const std::string& value) {
    return make_error("bad_value", note("engine_version_bad",
                                        {{"engine", engine == "vllm" ? "vLLM" : "llama.cpp"}, {"value", value}}));
}

}  // namespace

Result<EngineVersion> parse_engine_version(const std::string& text, const std::string& engine_in) {
    const std::string engine = engine_in == "llama.cpp" ? "llamacpp" : engine_in;
    std::string v = trim(text);
    if (v.size() > 64) v = v.substr(0, 64);
    if (engine != "vllm" && engine != "llamacpp") return bad("vllm", text);
    // "vllm=0.20.1", "llamacpp=b6500", "llama.cpp=b6500": the prefix must name this engine.
    const size_t eq = v.find('=');
    if (eq != std::string::npos) {
        std::string pre = lower(trim(v.substr(0, eq)));
        if (pre == "llama.cpp" || pre == "llama-cpp") pre = "llamacpp";
        if (pre != engine) return bad(engine, text);
        v = trim(v.substr(eq + 1));
    }
    EngineVersion ev;
    ev.engine = engine;
    ev.text = v;
    size_t i = 0;
    if (engine == "llamacpp") {
        // "b6500", "6500", "6500 (c08002a1)": a build number, then nothing that continues it.
        if (i < v.size() && (v[i] == 'b' || v[i] == 'B')) ++i;
        if (!read_number(v, i, ev.build)) return bad(engine, text);
        if (i < v.size() && (std::isalnum(static_cast<unsigned char>(v[i])) || v[i] == '.')) return bad(engine, text);
        return ev;
    }
    // vLLM: "0.20.1", "v0.24.0rc1", "0.9.1.dev705+g01220ce89"; at least major.minor.
    if (i < v.size() && (v[i] == 'v' || v[i] == 'V')) ++i;
    if (!read_number(v, i, ev.major) || i >= v.size() || v[i] != '.') return bad(engine, text);
    ++i;
    if (!read_number(v, i, ev.minor)) return bad(engine, text);
    if (i < v.size() && v[i] == '.' && i + 1 < v.size() && digit(v[i + 1])) {
        ++i;
        if (!read_number(v, i, ev.patch)) return bad(engine, text);
    }
    // "rc1", ".dev93" (what follows them, "+g11a4c9d30" or ".post1", says nothing kvbudget uses).
    auto at = [&](const char* w) { return v.compare(i, std::char_traits<char>::length(w), w) == 0; };
    if (at("rc") && i + 2 < v.size() && digit(v[i + 2])) {
        i += 2;
        if (!read_number(v, i, ev.rc)) return bad(engine, text);
    }
    if (at(".dev") && i + 4 < v.size() && digit(v[i + 4])) {
        i += 4;
        if (!read_number(v, i, ev.dev)) return bad(engine, text);
    }
    return ev;
}

}  // namespace kvb
