// Shared by the test files: read a real config from tests/fixtures/configs and parse it.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "model/model.h"
#include "report/answer.h"
#include "report/json.h"

namespace kvb::test {

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline std::string fixture_text(const std::string& id) {
    std::string file = id;
    if (auto slash = file.find('/'); slash != std::string::npos) file.replace(slash, 1, "--");
    return read_file(std::string(KVB_FIXTURES) + "/configs/" + file + ".json");
}

// Parses the fixture for a Hub id such as "Qwen/Qwen3-8B"; fails the test if it does not parse.
inline ModelSpec fixture(const std::string& id) {
    auto r = parse_config(fixture_text(id), id);
    if (!r) throw std::runtime_error(r.error().message);
    return r.value();
}

// Path of a fixture config by file stem: config_path("Qwen--Qwen3-8B").
inline std::string config_path(const std::string& stem) {
    return std::string(KVB_FIXTURES) + "/configs/" + stem + ".json";
}

// What an answer's advice changes, as its JSON says it to every face: each field of advice_inputs that
// differs from inputs, with its JSON value ({"kv_cache_dtype": "\"fp8\""}); empty without an advice.
inline std::map<std::string, std::string> advised_changes(const Answer& a) {
    const auto j = nlohmann::json::parse(to_json_text(a));
    std::map<std::string, std::string> out;
    if (j["advice_inputs"].is_null()) return out;
    for (const auto& [k, v] : j["advice_inputs"].items())
        if (j["inputs"][k] != v) out[k] = v.dump();
    return out;
}

struct CliRun {
    int status = -1;  // exit status, -1 when the process did not exit normally
    std::string out;
};

// Runs the built kvbudget CLI with `args` (shell words); stderr is folded into the
// output unless `with_stderr` is false, when it is dropped. The traces of the
// repository are found through KVBUDGET_TRACES wherever the build tree lives.
inline CliRun run_cli(const std::string& args, bool with_stderr = true) {
    const std::string cmd = "KVBUDGET_TRACES='" + std::string(KVB_FIXTURES) + "/../../data/traces' " +
                            std::string(KVB_CLI_PATH) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
    CliRun r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

// Hand-built models for shapes we have no published config of (DeepSeek-V2, Gemma-3-27b,
// the Qwen3.5 sizes in real logs). Each names itself "(hand-built)" where it is used.
inline Layer full(int64_t kv_heads, int64_t head_dim) {
    Layer l;
    l.kind = LayerKind::Full;
    l.kv_heads = kv_heads;
    l.k_head_dim = l.v_head_dim = head_dim;
    return l;
}

// Gated delta net layer: conv kernel K, Hk key heads, Hv value heads, head dims Dk = Dv.
inline Layer gdn(int64_t hk, int64_t hv, int64_t d, int64_t k = 4) {
    Layer l;
    l.kind = LayerKind::Linear;
    l.state.conv_kernel = k;
    l.state.n_groups = hk;
    l.state.d_state = d;
    l.state.d_inner = hv * d;
    l.state.heads = hv;
    return l;
}

inline ModelSpec dense(const std::string& name, int layers, int kv_heads, int head_dim, int heads, int64_t max_pos,
                       const std::string& dtype = "bfloat16") {
    ModelSpec m;
    m.name = name;
    m.dtype = dtype;
    m.max_position_embeddings = max_pos;
    m.dims.num_attention_heads = heads;
    for (int i = 0; i < layers; ++i) m.layers.push_back(full(kv_heads, head_dim));
    return m;
}

// Gemma 3 layer pattern: every 6th layer global, the rest sliding.
inline ModelSpec gemma3(const std::string& name, int layers, int kv_heads, int head_dim, int window, int64_t max_pos) {
    ModelSpec m = dense(name, layers, kv_heads, head_dim, kv_heads * 2, max_pos);
    for (int i = 0; i < layers; ++i) {
        if (i % 6 != 5) {
            m.layers[static_cast<size_t>(i)].kind = LayerKind::Sliding;
            m.layers[static_cast<size_t>(i)].window = window;
        }
    }
    return m;
}

// DeepSeek-V2 attention: latent 512 + rope 64; decompressed, heads x K 192 / V 128.
inline ModelSpec mla(const std::string& name, int layers, int heads) {
    ModelSpec m;
    m.name = name;
    m.dtype = "bfloat16";
    m.max_position_embeddings = 163840;
    m.dims.num_attention_heads = heads;
    for (int i = 0; i < layers; ++i) {
        Layer l;
        l.kind = LayerKind::Mla;
        l.kv_lora_rank = 512;
        l.qk_rope_head_dim = 64;
        l.kv_heads = heads;
        l.k_head_dim = 192;
        l.v_head_dim = 128;
        m.layers.push_back(l);
    }
    return m;
}

}  // namespace kvb::test
