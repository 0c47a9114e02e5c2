#include "check/log_reader.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "base/text.h"
#include "base/units.h"

namespace kvb {

const char* to_string(LogEngine e) {
    return e == LogEngine::Vllm ? "vllm" : "llamacpp";
}

double LogLine::num(const std::string& k, double def) const {
    for (const auto& [n, v] : nums)
        if (n == k) return v;
    return def;
}

std::string LogLine::str(const std::string& k) const {
    for (const auto& [n, v] : texts)
        if (n == k) return v;
    return {};
}

namespace {

std::string lookup(const std::vector<std::pair<std::string, std::string>>& kv, const std::string& k) {
    for (const auto& [n, v] : kv)
        if (n == k) return v;
    return {};
}

void put(std::vector<std::pair<std::string, std::string>>& kv, const std::string& k, const std::string& v) {
    for (auto& [n, old] : kv)
        if (n == k) {
            old = v;
            return;
        }
    kv.emplace_back(k, v);
}

void put_if_absent(std::vector<std::pair<std::string, std::string>>& kv, const std::string& k, const std::string& v) {
    if (lookup(kv, k).empty() && !v.empty()) kv.emplace_back(k, v);
}

// Drops ANSI colour escapes (ESC [ ... letter) and a trailing CR.
std::string clean(const std::string& raw) {
    std::string s;
    s.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '\x1b' && i + 1 < raw.size() && raw[i + 1] == '[') {
            i += 2;
            while (i < raw.size() && !std::isalpha(static_cast<unsigned char>(raw[i]))) ++i;
            continue;
        }
        if (raw[i] == '\r') continue;
        s += raw[i];
    }
    return s;
}

// A number as the engines print it: "42,656", "6.51", "1/ 1" stops at '/'. Returns false
// when no digit is at `pos` (after spaces); `end` is one past the number.
bool number_at(const std::string& s, size_t pos, double& out, size_t* end = nullptr) {
    while (pos < s.size() && s[pos] == ' ') ++pos;
    std::string digits;
    size_t i = pos;
    bool any = false;
    for (; i < s.size(); ++i) {
        const char c = s[i];
        if (std::isdigit(static_cast<unsigned char>(c))) {
            digits += c;
            any = true;
        } else if (c == ',' && any && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
            continue;
        } else if (c == '.' && any && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
            digits += c;
        } else {
            break;
        }
    }
    if (!any || digits.size() > 24) return false;
    out = std::strtod(digits.c_str(), nullptr);
    if (end) *end = i;
    return true;
}

// The number right after `marker` in `s` (spaces skipped).
bool number_after(const std::string& s, const std::string& marker, double& out, size_t from = 0,
                  size_t* end = nullptr) {
    const size_t p = s.find(marker, from);
    if (p == std::string::npos) return false;
    return number_at(s, p + marker.size(), out, end);
}

// The text of a number right after `marker` as printed ("6.51", "0.2").
std::string number_text_after(const std::string& s, const std::string& marker) {
    const size_t p = s.find(marker);
    if (p == std::string::npos) return {};
    size_t i = p + marker.size();
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && (std::isdigit(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
    return s.substr(i, j - i);
}

// A size as PyTorch prints it ("350.00 MiB", "755.50 KiB", "0 bytes") at `pos`, in bytes.
bool size_at(const std::string& s, size_t pos, double& bytes) {
    double v = 0;
    size_t end = 0;
    if (!number_at(s, pos, v, &end)) return false;
    while (end < s.size() && s[end] == ' ') ++end;
    static const std::pair<const char*, double> units[] = {{"TiB", 1099511627776.0}, {"GiB", 1073741824.0},
                                                           {"MiB", 1048576.0},       {"KiB", 1024.0},
                                                           {"bytes", 1.0},           {"B", 1.0}};
    for (const auto& [u, mult] : units)
        if (s.compare(end, std::char_traits<char>::length(u), u) == 0) {
            bytes = v * mult;
            return true;
        }
    return false;
}

bool size_after(const std::string& s, const std::string& marker, double& bytes) {
    const size_t p = s.find(marker);
    return p != std::string::npos && size_at(s, p + marker.size(), bytes);
}

std::string word_after(const std::string& s, const std::string& marker) {
    const size_t p = s.find(marker);
    if (p == std::string::npos) return {};
    size_t i = p + marker.size();
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j])) && s[j] != ')' && s[j] != ',') ++j;
    return s.substr(i, j - i);
}

std::string unquote(std::string v) {
    v = trim(v);
    if (v.size() >= 2 && (v[0] == '\'' || v[0] == '"') && v.back() == v[0]) return v.substr(1, v.size() - 2);
    return v;
}

// Splits "a=1, b='x, y', c={'k': 2}" (or a Python dict body) at top-level commas.
std::vector<std::string> split_top(const std::string& s) {
    std::vector<std::string> out;
    int depth = 0;
    char quote = 0;
    std::string cur;
    for (char c : s) {
        if (quote) {
            cur += c;
            if (c == quote) quote = 0;
            continue;
        }
        if (c == '\'' || c == '"') quote = c;
        if (c == '{' || c == '[' || c == '(') ++depth;
        if (c == '}' || c == ']' || c == ')') --depth;
        if (c == ',' && depth == 0) {
            out.push_back(trim(cur));
            cur.clear();
            continue;
        }
        cur += c;
    }
    if (!trim(cur).empty()) out.push_back(trim(cur));
    return out;
}

// The body of the first balanced {...} at or after `from`.
std::string braced(const std::string& s, size_t from) {
    const size_t a = s.find('{', from);
    if (a == std::string::npos) return {};
    int depth = 0;
    char quote = 0;
    for (size_t i = a; i < s.size(); ++i) {
        const char c = s[i];
        if (quote) {
            if (c == quote) quote = 0;
            continue;
        }
        if (c == '\'' || c == '"') quote = c;
        if (c == '{') ++depth;
        if (c == '}' && --depth == 0) return s.substr(a + 1, i - a - 1);
    }
    return s.substr(a + 1);  // cut off: take what is there
}

// vLLM's argument names as kvbudget's settings.
const char* const kVllmKeys[] = {"model",
                                 "max_model_len",
                                 "tensor_parallel_size",
                                 "pipeline_parallel_size",
                                 "data_parallel_size",
                                 "kv_cache_dtype",
                                 "block_size",
                                 "max_num_batched_tokens",
                                 "max_num_seqs",
                                 "enable_prefix_caching",
                                 "gpu_memory_utilization",
                                 "speculative_config",
                                 "mamba_cache_mode",
                                 "dtype",
                                 "quantization",
                                 "async_scheduling",
                                 "enable_chunked_prefill",
                                 "disable_hybrid_kv_cache_manager",
                                 "kv_cache_memory_bytes",
                                 "num_speculative_tokens"};

void take_vllm_pairs(const std::vector<std::string>& items, char sep, LogFacts& f) {
    for (const std::string& it : items) {
        const size_t p = it.find(sep);
        if (p == std::string::npos) continue;
        std::string k = unquote(it.substr(0, p));
        std::string v = unquote(it.substr(p + 1));
        if (k == "max_seq_len") k = "max_model_len";
        if (k == "model_tag") k = "model";
        if (v == "None" || v.empty()) continue;
        if (k == "dtype" && v.rfind("torch.", 0) == 0) v = v.substr(6);
        for (const char* key : kVllmKeys)
            if (k == key) put_if_absent(f.settings, k, v);
    }
}

bool has(const std::string& s, const char* m) {
    return s.find(m) != std::string::npos;
}

// From the first occurrence of `marker` to the end: the engine's message without its prefixes.
std::string from(const std::string& s, const std::string& marker) {
    const size_t p = s.find(marker);
    return trim(p == std::string::npos ? s : s.substr(p));
}

// A launch command pasted with the log: `vllm serve M --tensor-parallel-size 2 ...`,
// `python -m vllm.entrypoints.api_server --model=M ...`, `llama-server -m F -c 8192 -np 4 ...`.
void take_command(const std::string& line, LogFacts& f, bool llama) {
    std::vector<std::string> w;
    std::string cur;
    char quote = 0;
    for (char c : line) {
        if (quote) {
            if (c == quote)
                quote = 0;
            else
                cur += c;
            continue;
        }
        if (c == '"' || c == '\'') {
            quote = c;
            continue;
        }
        if (std::isspace(static_cast<unsigned char>(c))) {
            if (!cur.empty()) w.push_back(cur);
            cur.clear();
            continue;
        }
        cur += c;
    }
    if (!cur.empty()) w.push_back(cur);
    static const std::pair<const char*, const char*> kVllm[] = {{"--tensor-parallel-size", "tensor_parallel_size"},
                                                                {"-tp", "tensor_parallel_size"},
                                                                {"--pipeline-parallel-size", "pipeline_parallel_size"},
                                                                {"-pp", "pipeline_parallel_size"},
                                                                {"--max-model-len", "max_model_len"},
                                                                {"--kv-cache-dtype", "kv_cache_dtype"},
                                                                {"--block-size", "block_size"},
                                                                {"--max-num-batched-tokens", "max_num_batched_tokens"},
                                                                {"--dtype", "dtype"},
                                                                {"--model", "model"},
                                                                {"--gpu-memory-utilization", "gpu_memory_utilization"},
                                                                {"--speculative-config", "speculative_config"},
                                                                {"--speculative_config", "speculative_config"},
                                                                {"--mamba-cache-mode", "mamba_cache_mode"},
                                                                {"--max-num-seqs", "max_num_seqs"}};
    static const std::pair<const char*, const char*> kLlama[] = {{"-c", "n_ctx"},
                                                                 {"--ctx-size", "n_ctx"},
                                                                 {"-np", "n_seq_max"},
                                                                 {"--parallel", "n_seq_max"},
                                                                 {"-ctk", "type_k"},
                                                                 {"--cache-type-k", "type_k"},
                                                                 {"-ctv", "type_v"},
                                                                 {"--cache-type-v", "type_v"},
                                                                 {"-ub", "n_ubatch"},
                                                                 {"--ubatch-size", "n_ubatch"},
                                                                 {"-m", "model"},
                                                                 {"--model", "model"},
                                                                 {"-ngl", "n_gpu_layers"},
                                                                 {"--n-gpu-layers", "n_gpu_layers"},
                                                                 {"--gpu-layers", "n_gpu_layers"}};
    for (size_t i = 0; i < w.size(); ++i) {
        std::string k = w[i], v;
        const size_t eq = k.find('=');
        if (k.rfind("-", 0) == 0 && eq != std::string::npos) {
            v = k.substr(eq + 1);
            k = k.substr(0, eq);
        } else if (i + 1 < w.size()) {
            v = w[i + 1];
        }
        for (char& c : k)
            if (c == '_' && k.rfind("--", 0) == 0) c = '-';
        if (llama) {
            if (k == "-kvu" || k == "--kv-unified") put_if_absent(f.settings, "kv_unified", "true");
            if (k == "--swa-full") put_if_absent(f.settings, "swa_full", "true");
            for (const auto& [flag, name] : kLlama)
                if (k == flag && !v.empty()) put_if_absent(f.settings, name, v);
        } else {
            // VLLM_PP_LAYER_PARTITION=16,32 in front of the command (or exported in the same paste).
            if (k.rfind("VLLM_PP_LAYER_PARTITION=", 0) == 0 && k.size() > 24)
                put_if_absent(f.settings, "pp_layer_partition", k.substr(24));
            if (k == "--enable-prefix-caching") put_if_absent(f.settings, "enable_prefix_caching", "True");
            if (k == "--no-enable-prefix-caching") put_if_absent(f.settings, "enable_prefix_caching", "False");
            if (k == "serve" && i + 1 < w.size() && w[i + 1].rfind("-", 0) != 0 && i > 0 &&
                w[i - 1].find("vllm") != std::string::npos)
                put_if_absent(f.settings, "model", w[i + 1]);
            for (const auto& [flag, name] : kVllm)
                if (k == flag && !v.empty() && v.rfind("--", 0) != 0) put_if_absent(f.settings, name, v);
        }
    }
}

struct Reader {
    LogFacts f;
    int run = 0;
    bool run_has_capacity = false;                         // a capacity line was read in the current run
    std::string avail;                                     // vLLM "Available KV cache memory" of the current run
    std::vector<std::pair<std::string, std::string>> ctx;  // llama_context values of the current run
    int vllm_marks = 0, llama_marks = 0;

    void add(LogLine l, int64_t number) {
        l.number = number;
        l.available_gib = avail;
        l.run = run;
        l.texts.insert(l.texts.end(), ctx.begin(), ctx.end());
        f.lines.push_back(std::move(l));
    }

    void capacity_seen() {
        if (run_has_capacity) {
            ++run;
            avail.clear();
        }
        run_has_capacity = true;
    }

    // PyTorch's out-of-memory error. New wording (PyTorch 2.1 on): "Tried to allocate X. GPU 0 has
    // a total capacity of Y of which Z is free. Including non-PyTorch memory, this process has W
    // memory in use. Of the allocated memory A is allocated by PyTorch, and B is reserved by
    // PyTorch but unallocated." (2.1 spells "capacty"; with NVML it lists "Process N has W memory in
    // use" instead). Old: "Tried to allocate X (GPU 0; Y total capacity; A already allocated; Z
    // free; R reserved in total by PyTorch)".
    bool torch_oom(const std::string& s, int64_t n) {
        LogLine l;
        l.kind = LogLineKind::TorchOom;
        l.text = from(s, "CUDA out of memory");
        double v = 0;
        if (!size_after(s, "Tried to allocate ", v)) return false;
        l.nums.push_back({"tried", v});
        const size_t paren = s.find("(GPU ", s.find("Tried to allocate "));
        if (paren != std::string::npos && paren < s.find("Tried to allocate ") + 40) {
            l.texts.push_back({"wording", "old"});
            if (number_at(s, paren + 5, v)) l.nums.push_back({"gpu", v});
            const size_t close = s.find(')', paren);
            std::string body = s.substr(paren + 1, close == std::string::npos ? std::string::npos : close - paren - 1);
            size_t start = 0;
            while (start <= body.size()) {
                size_t semi = body.find(';', start);
                if (semi == std::string::npos) semi = body.size();
                const std::string part = trim(body.substr(start, semi - start));
                double b = 0;
                if (size_at(part, 0, b)) {
                    if (has(part, "total capacity")) l.nums.push_back({"total", b});
                    if (has(part, "already allocated")) l.nums.push_back({"allocated", b});
                    if (has(part, " free")) l.nums.push_back({"free", b});
                    if (has(part, "reserved in total")) l.nums.push_back({"reserved", b});
                }
                start = semi + 1;
            }
        } else {
            l.texts.push_back({"wording", "new"});
            if (number_after(s, ". GPU ", v)) l.nums.push_back({"gpu", v});
            if (size_after(s, "total capacity of ", v) || size_after(s, "total capacty of ", v))
                l.nums.push_back({"total", v});
            if (size_after(s, " of which ", v)) l.nums.push_back({"free", v});
            if (size_after(s, "this process has ", v)) l.nums.push_back({"process", v});
            if (size_after(s, "Of the allocated memory ", v)) l.nums.push_back({"allocated", v});
            if (size_after(s, "allocated by PyTorch, and ", v)) l.nums.push_back({"cached", v});
        }
        if (l.num("total") < 0 || l.num("free") < 0) return false;  // cut off before the GPU's numbers
        ++vllm_marks;
        add(std::move(l), n);
        return true;
    }

    void vllm_line(const std::string& s, int64_t n) {
        double a = 0, b = 0;
        if (has(s, "CUDA out of memory") && has(s, "Tried to allocate ") && torch_oom(s, n)) return;
        if (has(s, "GPU KV cache size:") && number_after(s, "GPU KV cache size:", a)) {
            ++vllm_marks;
            capacity_seen();
            LogLine l;
            l.kind = LogLineKind::VllmTokens;
            l.text = from(s, "GPU KV cache size:");
            l.nums = {{"tokens", a}};
            if (has(s, "Maximum concurrency for ")) {
                size_t e = 0;
                if (number_after(s, "Maximum concurrency for ", b, 0, &e)) l.nums.push_back({"mml", b});
                if (number_after(s, "tokens per request:", a)) l.nums.push_back({"concurrency", a});
                l.texts.push_back({"combined", "1"});
            }
            add(std::move(l), n);
            return;
        }
        if (has(s, "Maximum concurrency for ") && number_after(s, "Maximum concurrency for ", b) &&
            number_after(s, "tokens per request:", a)) {
            ++vllm_marks;
            LogLine l;
            l.kind = LogLineKind::VllmConcurrency;
            l.text = from(s, "Maximum concurrency for ");
            l.nums = {{"mml", b}, {"concurrency", a}};
            add(std::move(l), n);
            return;
        }
        if (has(s, "GPU blocks:") && number_after(s, "GPU blocks:", a)) {
            ++vllm_marks;
            capacity_seen();
            LogLine l;
            l.kind = LogLineKind::VllmGpuBlocks;
            l.text = from(s, has(s, "# GPU blocks:") ? "# GPU blocks:" : "GPU blocks:");
            l.nums = {{"gpu_blocks", a}};
            if (number_after(s, "CPU blocks:", b)) l.nums.push_back({"cpu_blocks", b});
            add(std::move(l), n);
            return;
        }
        if (has(s, "To serve at least one request with the model") && number_after(s, "max seq len (", a)) {
            ++vllm_marks;
            capacity_seen();
            LogLine l;
            l.kind = LogLineKind::VllmNotEnough;
            l.text = from(s, "To serve at least one request");
            l.nums = {{"mml", a}};
            const size_t p = s.find(" GiB KV cache is needed");
            if (p != std::string::npos) {
                size_t q = p;
                while (q > 0 && (std::isdigit(static_cast<unsigned char>(s[q - 1])) || s[q - 1] == '.')) --q;
                l.texts.push_back({"needed_gib", s.substr(q, p - q)});
            }
            l.texts.push_back({"available_gib", number_text_after(s, "available KV cache memory (")});
            if (number_after(s, "estimated maximum model length is ", b)) l.nums.push_back({"estimate", b});
            add(std::move(l), n);
            return;
        }
        if (has(s, "is larger than the maximum number of tokens that can be stored in KV cache (") &&
            number_after(s, "max seq len (", a) && number_after(s, "stored in KV cache (", b)) {
            ++vllm_marks;
            LogLine l;
            l.kind = LogLineKind::VllmV0TooLong;
            l.text = from(s, "The model's max seq len");
            l.nums = {{"mml", a}, {"tokens", b}};
            add(std::move(l), n);
            return;
        }
        if (has(s, "No available memory for the cache blocks")) {
            ++vllm_marks;
            capacity_seen();
            LogLine l;
            l.kind = LogLineKind::VllmNoMemory;
            l.text = from(s, "No available memory");
            add(std::move(l), n);
            return;
        }
        if (has(s, "Setting attention block size to ") && number_after(s, "Setting attention block size to ", a)) {
            ++vllm_marks;
            LogLine l;
            l.kind = LogLineKind::VllmSetBlock;
            l.text = from(s, "Setting attention block size to ");
            l.nums = {{"block", a}};
            add(std::move(l), n);
            return;
        }
        if (has(s, "Padding mamba page size by ") && number_after(s, "Padding mamba page size by ", a)) {
            ++vllm_marks;
            LogLine l;
            l.kind = LogLineKind::VllmPadMamba;
            l.text = from(s, "Padding mamba page size by ");
            l.nums = {{"percent", a}};
            add(std::move(l), n);
            return;
        }
        if (has(s, " padding layers, may waste at most ") && number_after(s, "Add ", a) &&
            number_after(s, "may waste at most ", b)) {
            ++vllm_marks;
            LogLine l;
            l.kind = LogLineKind::VllmPadLayers;
            l.text = from(s, "Add ");
            l.nums = {{"layers", a}, {"percent", b}};
            add(std::move(l), n);
            return;
        }
        if (has(s, "Available KV cache memory:")) {
            ++vllm_marks;
            avail = number_text_after(s, "Available KV cache memory:");
            put(f.settings, "available_kv_cache_memory_gib", avail);
            return;
        }
        if (has(s, "kv_cache_size=") && has(s, "Memory profiling")) {  // V0 profiling summary
            ++vllm_marks;
            avail = number_text_after(s, "kv_cache_size=");
            put(f.settings, "available_kv_cache_memory_gib", avail);
            return;
        }
        if (has(s, "Model loading took ")) {
            ++vllm_marks;
            put(f.settings, "model_loading_gib", number_text_after(s, "Model loading took "));
            return;
        }
        if (has(s, "Loading model weights took ")) {
            ++vllm_marks;
            put(f.settings, "model_loading_gib", number_text_after(s, "Loading model weights took "));
            return;
        }
        // MambaModelConfig.verify_and_update_config says which mode it picked (or forced) for a hybrid.
        if (has(s, "Mamba cache mode is set to '")) {
            ++vllm_marks;
            const size_t q = s.find("Mamba cache mode is set to '") + 28;
            const size_t e = s.find('\'', q);
            if (e != std::string::npos) put_if_absent(f.settings, "mamba_cache_mode", s.substr(q, e - q));
            return;
        }
        if (has(s, "non-default args:")) {
            ++vllm_marks;
            take_vllm_pairs(split_top(braced(s, s.find("non-default args:"))), ':', f);
            return;
        }
        if (has(s, "LLM engine") && has(s, "with config:")) {
            ++vllm_marks;
            if (f.version.empty() && has(s, "engine (v")) {
                const std::string v = word_after(s, "engine (v");
                f.version = v;
            }
            take_vllm_pairs(split_top(s.substr(s.find("with config:") + 12)), '=', f);
            return;
        }
        if ((has(s, "vllm serve ") || has(s, "vllm.entrypoints.") || has(s, "benchmark_throughput.py")) &&
            has(s, " --")) {
            ++vllm_marks;
            take_command(s, f, false);
            return;
        }
        if (has(s, "vLLM API server version ")) {
            ++vllm_marks;
            std::string v = word_after(s, "vLLM API server version ");
            if (!v.empty() && v[0] == 'v') v = v.substr(1);
            f.version = v;
            return;
        }
        if (has(s, "[gpu_worker.py") || has(s, "[kv_cache_utils.py") || has(s, "(EngineCore") ||
            has(s, "vllm.entrypoints") || has(s, "[api_server.py") || has(s, "[core.py") || has(s, "(APIServer pid="))
            ++vllm_marks;
    }

    void llama_size_line(const std::string& s, int64_t n, bool recurrent) {
        const size_t sz = s.find(": size =");
        size_t start = sz;
        while (start > 0 && !std::isspace(static_cast<unsigned char>(s[start - 1]))) --start;
        const std::string prefix = s.substr(start, sz - start);
        LogLine l;
        l.kind = recurrent ? LogLineKind::LlamaRecurrentSize : LogLineKind::LlamaKvSize;
        l.text = trim(s.substr(start));
        l.texts.push_back({"prefix", prefix});
        double a = 0, b = 0;
        if (!number_after(s, ": size =", a, start)) return;
        l.nums.push_back({"mib", a});
        if (number_after(s, "(", a, sz)) l.nums.push_back({"cells", a});
        size_t cells_end = s.find("cells,", sz);
        if (cells_end != std::string::npos)
            cells_end += 6;
        else if ((cells_end = s.find("cell,", sz)) != std::string::npos)
            cells_end += 5;
        if (cells_end != std::string::npos && number_at(s, cells_end, a)) l.nums.push_back({"layers", a});
        const size_t layers_end = s.find("layers,", sz);
        if (layers_end != std::string::npos) {
            size_t e = 0;
            if (number_at(s, layers_end + 7, a, &e) && s.find("seqs", e) != std::string::npos) {
                l.nums.push_back({"seqs", a});
                if (e < s.size() && s[e] == '/' && number_at(s, e + 1, b)) l.nums.push_back({"streams", b});
            }
        }
        const char* k_label = recurrent ? "R (" : "K (";
        const char* v_label = recurrent ? "S (" : "V (";
        const std::string tk = word_after(s, k_label), tv = word_after(s, v_label);
        if (!tk.empty()) l.texts.push_back({"type_k", tk});
        if (!tv.empty()) l.texts.push_back({"type_v", tv});
        const size_t kp = s.find(k_label, sz), vp = s.find(v_label, sz);
        if (kp != std::string::npos && number_after(s, "):", a, kp)) l.nums.push_back({"k_mib", a});
        if (vp != std::string::npos && number_after(s, "):", a, vp)) l.nums.push_back({"v_mib", a});
        // 2026 builds: "(%6u cells, %3d layers, %2u seqs %2u rs_seq)", the target's rollback snapshots.
        if (const size_t rs = s.find(" rs_seq", sz); recurrent && rs != std::string::npos) {
            size_t d = rs;
            while (d > sz && s[d - 1] == ' ') --d;
            size_t b0 = d;
            while (b0 > sz && std::isdigit(static_cast<unsigned char>(s[b0 - 1]))) --b0;
            if (b0 < d && d - b0 < 6) l.nums.push_back({"rs_seq", std::stod(s.substr(b0, d - b0))});
        }
        if (l.num("layers") < 0 || l.num("cells") < 0) return;  // cut off mid-line
        ++llama_marks;
        if (!recurrent && lookup(ctx, "iswa").empty()) capacity_seen_llama();
        add(std::move(l), n);
    }

    bool llama_run_has_kv = false;
    void capacity_seen_llama() {
        if (llama_run_has_kv) ++run;
        llama_run_has_kv = true;
    }

    int64_t last_cuda_oom = -1;  // index in f.lines of the last cudaMalloc failure

    // ggml's cudaMalloc failure, then the line naming the buffer: alloc_tensor_range (the
    // weights, at load_tensors), ggml_gallocr_reserve_n / graph_reserve (the compute buffer),
    // llama_kv_cache (the KV cache).
    bool llama_oom(const std::string& s, int64_t n) {
        double a = 0, b = 0;
        if (has(s, "cudaMalloc failed") && number_after(s, "allocating ", a) && number_after(s, " on device ", b)) {
            ++llama_marks;
            LogLine l;
            l.kind = LogLineKind::LlamaCudaOom;
            l.text = from(s, has(s, "ggml_backend_cuda") ? "ggml_backend_cuda" : "allocating ");
            l.nums = {{"mib", a}, {"device", b}};
            add(std::move(l), n);
            last_cuda_oom = static_cast<int64_t>(f.lines.size()) - 1;
            return true;
        }
        // alloc_tensor_range allocates a context's tensors: the weights at load_tensors, or the KV
        // cache, which the line after it names ("failed to allocate buffer for kv cache").
        std::string what;
        bool settled = true;
        if (has(s, "failed to allocate CUDA") && has(s, "buffer of size")) {
            settled = !has(s, "alloc_tensor_range");
            what = !settled ? "weights" : has(s, "kv") ? "kv" : "compute";
        } else if (has(s, "failed to allocate buffer for kv cache")) {
            what = "kv";
        } else if (has(s, "failed to allocate compute buffers")) {
            what = "compute";
        } else if (has(s, "llama_model_load") && has(s, "unable to allocate")) {
            what = "weights";
        }
        if (what.empty()) return false;
        ++llama_marks;
        if (last_cuda_oom >= 0) {
            LogLine& l = f.lines[static_cast<size_t>(last_cuda_oom)];
            put(l.texts, "what", what);
            if (l.num("bytes") < 0 && number_after(s, "buffer of size ", a)) l.nums.push_back({"bytes", a});
            if (settled) last_cuda_oom = -1;
        }
        return true;
    }

    void llama_line(const std::string& s, int64_t n) {
        if (llama_oom(s, n)) return;
        // What each device holds, for an out-of-memory line's advice: "offloaded N/M layers to GPU",
        // "CUDA0 model buffer size = X MiB" (load_tensors), "CUDA0 KV buffer size" (each cache),
        // "CUDA0 compute buffer size" (llama_context / sched_reserve). Read on, not consumed.
        if (has(s, "offloaded ") && has(s, " layers to GPU")) {
            double a = 0, b = 0;
            const size_t p = s.find("offloaded ");
            size_t e = 0;
            if (number_at(s, p + 10, a, &e) && e < s.size() && s[e] == '/' && number_at(s, e + 1, b)) {
                put(f.settings, "ngl_offloaded", std::to_string(static_cast<int64_t>(a)));
                put(f.settings, "ngl_slots", std::to_string(static_cast<int64_t>(b)));
            }
        }
        for (const char* what : {" model buffer size =", " KV buffer size =", " compute buffer size ="}) {
            const size_t p = s.find(what);
            if (p == std::string::npos) continue;
            size_t d0 = p;
            while (d0 > 0 && !std::isspace(static_cast<unsigned char>(s[d0 - 1]))) --d0;
            std::string dev = s.substr(d0, p - d0);
            for (char& c : dev) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            double a = 0;
            if (dev.rfind("cuda", 0) != 0 || dev.size() > 8 || !number_after(s, "=", a, p)) continue;
            const std::string key = dev + (what[1] == 'm' ? "_model_mib" : what[1] == 'K' ? "_kv_mib" : "_compute_mib");
            // A cache in two parts (SWA) prints two KV buffers: their sum.
            const std::string prev = what[1] == 'K' ? lookup(f.settings, key) : std::string();
            const double sum = a + (prev.empty() ? 0.0 : std::strtod(prev.c_str(), nullptr));
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.2f", sum);
            put(f.settings, key, buf);
        }
        // A speculative draft context (common_speculative_init_result; older servers' load_model):
        // the contexts from here on are the draft's, checked against the draft's model. PR-era MTP
        // builds (ggml-org/llama.cpp#22673) say so only after the draft context's own lines.
        if (has(s, "loading draft model") || has(s, "creating MTP draft context") ||
            has(s, "MTP draft head registered")) {
            ++llama_marks;
            const bool after = has(s, "MTP draft head registered");
            if (lookup(f.settings, "draft_from_run").empty())
                put(f.settings, "draft_from_run", std::to_string(after ? run : run + (llama_run_has_kv ? 1 : 0)));
            put(f.settings, "draft_kind", has(s, "loading draft model") ? "model" : "mtp");
            if (has(s, "loading draft model")) {
                const size_t q = s.find('\'');
                const size_t e = q == std::string::npos ? q : s.find('\'', q + 1);
                if (e != std::string::npos) put(f.settings, "draft_model", s.substr(q + 1, e - q - 1));
            }
            return;
        }
        if (has(s, "using device CUDA") && has(s, "MiB free")) {  // llama_model_load_from_file_impl
            ++llama_marks;
            std::string dev = word_after(s, "using device ");
            for (char& c : dev) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            const size_t p = s.rfind(" - ");
            double a = 0;
            if (!dev.empty() && p != std::string::npos && number_at(s, p + 3, a))
                put(f.settings, dev + "_free_mib", number_text_after(s.substr(p), " - "));
            return;
        }
        if (has(s, "KV cache, size =") && has(s, "creating")) {
            double a = 0;
            if (!number_after(s, "KV cache, size =", a)) return;
            ++llama_marks;
            const bool swa = !has(s, "non-SWA");
            if (!swa) {
                capacity_seen_llama();
                put(ctx, "iswa", "1");
            }
            LogLine l;
            l.kind = LogLineKind::LlamaIswaCreate;
            const size_t p = s.find("llama_kv_cache");
            l.text = trim(p == std::string::npos ? s : s.substr(p));
            l.nums = {{"cells", a}};
            l.texts.push_back({"role", swa ? "SWA" : "non-SWA"});
            add(std::move(l), n);
            return;
        }
        if ((has(s, "llama_kv_cache") || has(s, "llama_memory_recurrent") || has(s, "llama_memory_hybrid")) &&
            has(s, "size =") && has(s, " cell")) {
            // Copies re-spaced by hand ("llama_kv_cache:        size = ...") read like the original.
            std::string t = s;
            const size_t sz = t.find("size =");
            size_t c = sz;
            while (c > 0 && t[c - 1] == ' ') --c;
            if (c > 0 && t[c - 1] == ':') t = t.substr(0, c) + " " + t.substr(sz);
            if (t.find(": size =") != std::string::npos)
                llama_size_line(t, n, t.find("llama_memory_recurrent: size") != std::string::npos);
            return;
        }
        if ((has(s, "llama-server ") || has(s, "llama-cli ") || has(s, "llama-completion ")) && has(s, " -")) {
            ++llama_marks;
            take_command(s, f, true);
            return;
        }
        for (const char* pre : {"llama_context:", "llama_new_context_with_model:", "llama_init_from_model:"}) {
            const size_t p = s.find(pre);
            if (p == std::string::npos) continue;
            ++llama_marks;
            const std::string rest = s.substr(p + std::string(pre).size());
            const size_t eq = rest.find('=');
            if (eq == std::string::npos) return;
            std::string k = trim(rest.substr(0, eq));
            const std::string v = trim(rest.substr(eq + 1));
            if (k == "n_ctx_per_seq") k = "n_ctx_seq";
            for (const char* key : {"n_seq_max", "n_ctx", "n_ctx_seq", "n_batch", "n_ubatch", "flash_attn",
                                    "kv_unified", "causal_attn", "swa_full", "n_rs_seq"}) {
                if (k == key) {
                    if (k == "n_ctx" && llama_run_has_kv) {  // a second context (draft model, another load)
                        ++run;
                        llama_run_has_kv = false;
                        ctx.clear();
                    }
                    put(ctx, k, v);
                    put(f.settings, k, v);
                }
            }
            return;
        }
        if (has(s, "print_info:")) {
            ++llama_marks;
            const std::string rest = s.substr(s.find("print_info:") + 11);
            const size_t eq = rest.find('=');
            if (eq == std::string::npos) return;
            const std::string k = trim(rest.substr(0, eq));
            const std::string v = trim(rest.substr(eq + 1));
            put(f.hparams, k, v);
            if (k == "general.name") put_if_absent(f.settings, "model_name", v);
            return;
        }
        if (has(s, "llama_model_loader: loaded meta data") && has(s, " from ")) {
            ++llama_marks;
            std::string path = trim(s.substr(s.rfind(" from ") + 6));
            if (path.size() > 1 && path.rfind(" (version", std::string::npos) != std::string::npos)
                path = path.substr(0, path.rfind(" (version"));
            if (f.model.empty()) f.model = path;
            return;
        }
        if (has(s, "llama_model_loader:") || has(s, "load_tensors:") || has(s, "llama_model_load") ||
            has(s, "ggml_cuda_init") || has(s, "load_hparams:") || has(s, "srv ") || has(s, "llama_kv_cache")) {
            ++llama_marks;
            if (has(s, "general.name") && has(s, "str"))
                put_if_absent(f.settings, "model_name", trim(s.substr(s.find("= ") + 2)));
            if (has(s, "n_parallel is set to auto") || has(s, "setting n_parallel = 4 and kv_unified = true"))
                put(f.settings, "server_auto_slots", "4");
            if (has(s, "Phi SWA is currently disabled")) put(f.settings, "phi_swa_disabled", "true");
            return;
        }
        for (const char* pre : {"main: build = ", "build: ", "version: "}) {
            if (has(s, pre) && s.find(pre) < 40) {
                double a = 0;
                if (number_after(s, pre, a) && f.version.empty()) {
                    ++llama_marks;
                    f.version = "b" + std::to_string(static_cast<int64_t>(a));
                }
                return;
            }
        }
    }
};

bool looks_binary(const std::string& t) {
    int64_t ctrl = 0;
    const size_t n = std::min<size_t>(t.size(), 65536);
    for (size_t i = 0; i < n; ++i) {
        const unsigned char c = static_cast<unsigned char>(t[i]);
        if (c == 0) return true;
        if (c < 32 && c != '\n' && c != '\r' && c != '\t' && c != 0x1b) ++ctrl;
    }
    return ctrl * 20 > static_cast<int64_t>(n);
}

bool has_markup(const std::string& s) {
    static const char* const tags[] = {"<html", "<script",  "<div", "<details", "<pre",  "<br",   "<span", "<p>",
                                       "<code", "<summary", "</",   "<!--",     "<?xml", "<body", "<img",  "<a href"};
    std::string low;
    low.reserve(std::min<size_t>(s.size(), 4096));
    for (size_t i = 0; i < s.size() && i < 4096; ++i)
        low += static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    for (const char* t : tags)
        if (low.find(t) != std::string::npos) return true;
    return false;
}

}  // namespace

std::string LogFacts::setting(const std::string& k) const {
    return lookup(settings, k);
}

std::string LogFacts::hparam(const std::string& k) const {
    return lookup(hparams, k);
}

Result<LogFacts> read_engine_log(const std::string& text) {
    if (static_cast<int64_t>(text.size()) > kMaxLogBytes)
        return make_error("bad_value",
                          note("check_too_large", {{"size", format_bytes(static_cast<int64_t>(text.size()))},
                                                   {"limit", format_bytes(kMaxLogBytes)}}));
    if (trim(text).empty()) return make_error("bad_value", note("check_empty"));
    if (looks_binary(text)) return make_error("bad_value", note("check_binary"));

    Reader r;
    int64_t number = 0;
    size_t pos = 0;
    bool markup = false;
    std::string last_nonempty;
    while (pos <= text.size()) {
        if (pos == text.size() && number > 0) break;  // the newline ending the last line starts no line
        size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) nl = text.size();
        // A line longer than any engine prints is read by its first 64 KiB.
        const std::string line = clean(text.substr(pos, std::min<size_t>(nl - pos, 65536)));
        ++number;
        pos = nl + 1;
        if (trim(line).empty()) continue;
        last_nonempty = line;
        if (!markup && has_markup(line)) markup = true;
        const size_t before = r.f.lines.size();
        const int vm = r.vllm_marks, lm = r.llama_marks;
        r.vllm_line(line, number);
        if (r.f.lines.size() == before && r.vllm_marks == vm) r.llama_line(line, number);
        (void)lm;
        if (nl == text.size()) break;
    }
    LogFacts f = std::move(r.f);
    f.line_count = number;
    f.markup = markup;
    if (r.vllm_marks == 0 && r.llama_marks == 0)
        return make_error(
            "bad_value", note(markup ? "check_markup_only" : "check_not_engine_log", {{"lines", with_commas(number)}}));
    f.engine = r.vllm_marks >= r.llama_marks ? LogEngine::Vllm : LogEngine::Llamacpp;
    // Lines of the other engine (a paste of two logs) are not compared.
    f.lines.erase(std::remove_if(f.lines.begin(), f.lines.end(),
                                 [&](const LogLine& l) {
                                     const bool is_llama = l.kind >= LogLineKind::LlamaKvSize;
                                     return is_llama != (f.engine == LogEngine::Llamacpp);
                                 }),
                  f.lines.end());
    if (f.lines.empty()) {
        // The engine spoke but stopped before its memory lines: cut off, or the paste ends early.
        std::string last = trim(last_nonempty);
        if (last.size() > 120) last = last.substr(0, 117) + "...";
        return make_error("bad_value",
                          note("check_truncated", {{"engine", f.engine == LogEngine::Vllm ? "vLLM" : "llama.cpp"},
                                                   {"lines", with_commas(number)},
                                                   {"last", last}}));
    }
    if (f.engine == LogEngine::Vllm && f.model.empty()) f.model = f.setting("model");
    if (f.engine == LogEngine::Llamacpp && f.model.empty()) f.model = f.setting("model_name");
    if (f.engine == LogEngine::Llamacpp && f.model.empty()) f.model = f.setting("model");  // the command's -m FILE
    return f;
}

}  // namespace kvb
