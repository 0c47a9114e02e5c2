#include "model/dtype.h"

#include <algorithm>

namespace kvb {

int dtype_size(const std::string& dtype) {
    static const struct {
        const char* name;
        int bytes;
    } table[] = {
        {"bfloat16", 2},      {"bf16", 2},        {"float16", 2}, {"fp16", 2},  {"half", 2},
        {"f16", 2},           {"float32", 4},     {"fp32", 4},    {"float", 4}, {"f32", 4},
        {"float8_e4m3fn", 1}, {"float8_e5m2", 1}, {"fp8", 1},     {"int8", 1},  {"uint8", 1},
    };
    for (const auto& e : table) {
        if (dtype == e.name) return e.bytes;
    }
    return 0;
}

const std::vector<std::string>& vllm_kv_type_names() {
    static const std::vector<std::string> names = {"auto", "bfloat16", "float16", "float32",
                                                   "fp8",  "fp8_e4m3", "fp8_e5m2"};
    return names;
}

Result<KvType> vllm_kv_type(const std::string& name, const std::string& model_dtype) {
    if (name == "fp8" || name == "fp8_e4m3" || name == "fp8_e5m2") return KvType{name, 1, 1};
    if (name == "bfloat16" || name == "float16") return KvType{name, 1, 2};
    if (name == "float32") return KvType{name, 1, 4};
    if (name == "auto") {
        // vLLM serves float32 checkpoints in 16-bit by default (ModelConfig's dtype
        // "auto" resolution), so the cache follows that, not the checkpoint.
        if (model_dtype == "float16" || model_dtype == "fp16" || model_dtype == "half") return KvType{"float16", 1, 2};
        return KvType{"bfloat16", 1, 2};
    }
    std::string list;
    for (const auto& n : vllm_kv_type_names()) list += (list.empty() ? "" : ", ") + n;
    return make_error("bad_kv_dtype", note("unknown_vllm_kv_dtype", {{"value", name}, {"choices", list}}));
}

const std::vector<std::string>& llamacpp_kv_type_names() {
    static const std::vector<std::string> names = {"f32",  "f16",  "bf16", "q8_0",  "q4_0",
                                                   "q4_1", "q5_0", "q5_1", "iq4_nl"};
    return names;
}

Result<KvType> llamacpp_kv_type(const std::string& name) {
    // ggml type traits: values per block and bytes per block.
    static const KvType table[] = {
        {"f32", 1, 4},    {"f16", 1, 2},    {"bf16", 1, 2},   {"q8_0", 32, 34},   {"q4_0", 32, 18},
        {"q4_1", 32, 20}, {"q5_0", 32, 22}, {"q5_1", 32, 24}, {"iq4_nl", 32, 18},
    };
    for (const auto& t : table) {
        if (t.name == name) return t;
    }
    std::string list;
    for (const auto& n : llamacpp_kv_type_names()) list += (list.empty() ? "" : ", ") + n;
    return make_error("bad_kv_dtype", note("unknown_llamacpp_kv_type", {{"value", name}, {"choices", list}}));
}

}  // namespace kvb
