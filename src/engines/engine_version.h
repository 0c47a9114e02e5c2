// An engine's version, read once for every face: `kvbudget vllm|llamacpp|budget|check
// --engine-version`, the page's engine-version field and a log's own banner all go through
// parse_engine_version, and every version-dependent format or number (vLLM's token count and
// error wordings, its MLA block sizes, llama.cpp's KV-cache line) is derived from the result
// (vllm_release in engines/vllm.h, llama_log_format_for_version in engines/llamacpp.h).
#pragma once
#include <cstdint>
#include <string>

#include "base/result.h"

namespace kvb {

struct EngineVersion {
    std::string engine;  // "vllm" or "llamacpp"
    std::string text;    // as given, without an engine prefix ("0.20.1", "b6500")
    // vLLM: the release's first three numbers ("0.9.1.dev705+g01220ce89" -> 0, 9, 1).
    int64_t major = 0, minor = 0, patch = 0;
    // vLLM: the pre-release and dev numbers setuptools-scm writes ("0.15.2rc1.dev93" -> rc 1, dev 93;
    // -1 when absent). A dev build is a commit of vLLM's main branch `dev` commits after the tag
    // before it (rc N - 1, or the previous patch release when there is no rc), which is how
    // vllm_release places it against a change that landed between two releases.
    int64_t rc = -1, dev = -1;
    // llama.cpp: the build number ("b6500", "6500", "version: 6500 (c08002a1)" -> 6500).
    int64_t build = 0;
};

// `text` for `engine` ("vllm" or "llamacpp"; "llama.cpp" is taken too). A vLLM release is numbers
// with dots ("0.20.1", "v0.24.0rc1", "0.9.1.dev705+g01220ce89"); a llama.cpp build is a number,
// optionally after "b" ("b6500", "6500 (c08002a1)"). Either may carry its engine in front,
// "vllm=0.20.1" or "llamacpp=b6500" (how a script or a URL says which engine a version is for);
// a prefix naming the other engine, or a value of the other engine's form, is refused
// (engine_version_bad), as is an empty text.
Result<EngineVersion> parse_engine_version(const std::string& text, const std::string& engine);

}  // namespace kvb
