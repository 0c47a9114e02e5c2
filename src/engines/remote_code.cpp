#include "engines/remote_code.h"

#include <algorithm>
#include <iterator>

#include "base/text.h"

namespace kvb {

namespace {

// transformers' own model_types by 4.48.2, the oldest transformers any release kvbudget models accepts (0.7.3's
// requirements-common.txt; 0.27.1 asks for 5.5.3): for these AutoConfig reads config.json without the repository's
// code, whatever its auto_map says. Listed from transformers' release history as known, not read from 4.48.2's
// configuration_auto.py; each is in the late-2025 CONFIG_MAPPING the list below was read from. Types transformers added
// later (deepseek_v3) or lacks (nemotron_h) depend on the transformers installed, so the command asks for the flag
// there too.
const char* const kTransformersTypes4482[] = {
    "llama",        "mistral",         "mixtral",   "qwen2",      "qwen2_moe",  "qwen2_vl", "phi",
    "phi3",         "phimoe",          "gemma",     "gemma2",     "jamba",      "mamba",    "mamba2",
    "gpt2",         "falcon",          "bloom",     "mpt",        "starcoder2", "dbrx",     "olmo",
    "olmo2",        "olmoe",           "cohere",    "cohere2",    "gpt_neox",   "gptj",     "granite",
    "granitemoe",   "stablelm",        "persimmon", "nemotron",   "glm",        "opt",      "gpt_bigcode",
    "falcon_mamba", "recurrent_gemma", "llava",     "llava_next", "mllama",     "bamba",    "chameleon",
    "idefics2",     "qwen2_audio",     "code_llama"};

// And the ones transformers added since (its CONFIG_MAPPING in a stored copy of main from late 2025, the causal-LM and
// VLM families): with
// these and the ones above, transformers' own class loads the checkpoint. Passing trust_remote_code=True there would
// swap in the repository's modelling code, whose cache kvbudget does not read, so the snippet asks for it only past
// this list.
const char* const kTransformersTypesLater[] = {"deepseek_v2",
                                               "deepseek_v3",
                                               "qwen3",
                                               "qwen3_moe",
                                               "qwen3_next",
                                               "qwen2_5_vl",
                                               "qwen3_vl",
                                               "qwen3_vl_moe",
                                               "qwen2_5_omni",
                                               "qwen3_omni_moe",
                                               "gemma3",
                                               "gemma3_text",
                                               "gemma3n",
                                               "llama4",
                                               "gpt_oss",
                                               "falcon_h1",
                                               "granitemoehybrid",
                                               "granitemoeshared",
                                               "lfm2",
                                               "lfm2_moe",
                                               "lfm2_vl",
                                               "minimax",
                                               "glm4",
                                               "glm4_moe",
                                               "glm4v",
                                               "glm4v_moe",
                                               "glm46v",
                                               "ernie4_5",
                                               "ernie4_5_moe",
                                               "seed_oss",
                                               "hunyuan_v1_dense",
                                               "hunyuan_v1_moe",
                                               "longcat_flash",
                                               "exaone4",
                                               "dots1",
                                               "smollm3",
                                               "apertus",
                                               "olmo3",
                                               "flex_olmo",
                                               "afmoe",
                                               "arcee",
                                               "internvl",
                                               "mistral3",
                                               "ministral",
                                               "ministral3",
                                               "phi4_multimodal",
                                               "bitnet",
                                               "helium",
                                               "jetmoe",
                                               "zamba",
                                               "zamba2",
                                               "diffllama",
                                               "vaultgemma",
                                               "aria",
                                               "aya_vision",
                                               "deepseek_vl",
                                               "deepseek_vl_hybrid",
                                               "emu3",
                                               "janus",
                                               "jais2",
                                               "nanochat",
                                               "cwm",
                                               "llava_onevision",
                                               "paligemma",
                                               "idefics3",
                                               "smolvlm"};

bool listed(const std::string& type, const char* const* first, const char* const* last) {
    const std::string t = lower(type);
    return std::any_of(first, last, [&](const char* k) { return t == k; });
}

}  // namespace

// The repository's own code (auto_map) is read only with --trust-remote-code: without it, a config whose model_type
// transformers lacks stops vLLM at once ("Failed to load the model config. If the model is a custom model not yet
// available in the HuggingFace transformers library, consider setting `trust_remote_code=True` ..."), and a model_type
// vLLM registers a config class for (kimi_k2, chatglm) still loads the repository's tokenizer class (Kimi-K2's
// TikTokenTokenizer, ChatGLM's) from that code. Asked for wherever the repository has code and transformers might not
// read its config on its own; where it is not needed vLLM just reads the repository's config class instead.
bool vllm_needs_remote_code(const ModelSpec& m) {
    return m.auto_map && !listed(m.config_type, std::begin(kTransformersTypes4482), std::end(kTransformersTypes4482));
}

// transformers without the flag: "The repository ... contains custom code which must be executed to correctly load
// the model" (or, unattended, a ValueError asking for trust_remote_code=True) for a model_type it lacks.
bool transformers_needs_remote_code(const ModelSpec& m) {
    return m.auto_map && !listed(m.config_type, std::begin(kTransformersTypes4482), std::end(kTransformersTypes4482)) &&
           !listed(m.config_type, std::begin(kTransformersTypesLater), std::end(kTransformersTypesLater));
}

}  // namespace kvb
