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
    // float32 is none of them: no release's CacheDType has it (only "auto" can be float32, for a model served in it).
    static const std::vector<std::string> names = {"auto", "bfloat16", "float16", "fp8", "fp8_e4m3", "fp8_e5m2"};
    return names;
}

std::string argparse_choices(const std::vector<std::string>& choices) {
    std::string list;
    for (const auto& n : choices) list += (list.empty() ? "'" : ", '") + n + "'";
    return list;
}

Result<KvType> vllm_kv_type(const std::string& name, const std::string& model_dtype) {
    // fp8_ds_mla's elements are fp8 too; its packed page (656 B/token) is the engine's to lay out.
    if (name == "fp8" || name == "fp8_e4m3" || name == "fp8_e5m2" || name == "fp8_ds_mla") return KvType{name, 1, 1};
    if (name == "bfloat16" || name == "float16") return KvType{name, 1, 2};
    // NVFP4 (torch_utils.nvfp4_kv_cache_full_dim, kv_cache_interface.py's real_page_size_bytes): each head's row is
    // head_size / 2 bytes of packed 4-bit values then head_size / 16 fp8 (E4M3) block scales, so 9 bytes per 16
    // values; the per-tensor k_scale / v_scale are layer parameters, not in the page. nvfp4_4over6 only chooses its
    // scales differently (the store kernel's search), in the same layout.
    if (name == "nvfp4" || name == "nvfp4_4over6") return KvType{name, 16, 9};
    if (name == "auto") {
        // vLLM serves float32 checkpoints in 16-bit by default (ModelConfig's dtype
        // "auto" resolution), so the cache follows that, not the checkpoint.
        if (model_dtype == "float16" || model_dtype == "fp16" || model_dtype == "half") return KvType{"float16", 1, 2};
        return KvType{"bfloat16", 1, 2};
    }
    return make_error("bad_kv_dtype", note("unknown_vllm_kv_dtype",
                                           {{"value", name}, {"choices", argparse_choices(vllm_kv_type_names())}}));
}

KvType vllm_auto_kv_type(const std::string& served_dtype) {
    const int b = dtype_size(served_dtype);
    if (b == 4) return KvType{"float32", 1, 4};
    if (served_dtype == "float16" || served_dtype == "fp16" || served_dtype == "half") return KvType{"float16", 1, 2};
    return KvType{"bfloat16", 1, 2};
}

const std::vector<std::string>& transformers_kv_type_names() {
    static const std::vector<std::string> names = {"auto", "bfloat16", "float16", "float32"};
    return names;
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
