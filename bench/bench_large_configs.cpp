// The largest configs kvbudget accepts (issue 14, item 9: "nothing takes more than a
// second for a config of any size"): CPU time of parse + vLLM capacity + KV groups +
// a vLLM budget, for made-up configs at the 10,000-layer limit (num_hidden_layers above
// it is refused as no real model) and Nemotron-Super's block_configs repeated to it.
// Files over the 8 MiB read cap are refused by size before parsing. Prints milliseconds (the median
// of 3 runs, thread CPU time); asserts nothing.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "budget/budget.h"
#include "engines/vllm.h"
#include "kv/kv.h"
#include "kv/tables.h"
#include "model/model.h"

namespace {

double cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Nemotron-Super with its block_configs list repeated to `layers` entries.
std::string nemotron(int layers) {
    const std::string text = read(std::string(KVB_FIXTURES) + "/configs/nvidia--Llama-3_3-Nemotron-Super-49B-v1.json");
    const size_t open = text.find('[', text.find("\"block_configs\""));
    size_t depth = 0, close = open;
    for (size_t i = open; i < text.size(); ++i) {
        if (text[i] == '[' || text[i] == '{') ++depth;
        if (text[i] == ']' || text[i] == '}') --depth;
        if (depth == 0) {
            close = i;
            break;
        }
    }
    // Split the list's objects at depth 1.
    std::vector<std::string> items;
    depth = 0;
    size_t start = open + 1;
    for (size_t i = open + 1; i < close; ++i) {
        if (text[i] == '{' || text[i] == '[') ++depth;
        if (text[i] == '}' || text[i] == ']') --depth;
        if (depth == 0 && text[i] == ',') {
            items.push_back(text.substr(start, i - start));
            start = i + 1;
        }
    }
    items.push_back(text.substr(start, close - start));
    std::string list;
    for (int k = 0; k < layers; ++k) list += (k ? "," : "") + items[static_cast<size_t>(k) % items.size()];
    std::string out = text.substr(0, open + 1) + list + text.substr(close);
    const size_t n = out.find("\"num_hidden_layers\"");
    const size_t v = out.find(':', n) + 1, e = out.find_first_of(",}", v);
    return out.substr(0, v) + " " + std::to_string(layers) + out.substr(e);
}

void run(const char* name, const std::string& text) {
    std::vector<double> t;
    std::string outcome;
    for (int r = 0; r < 3; ++r) {
        const double t0 = cpu_ms();
        auto m = kvb::parse_config(text, name);
        outcome = m ? "ok" : "refused: " + m.error().message.substr(0, 60);
        if (m) {
            kvb::VllmOptions o;
            o.max_model_len = 131072;
            (void)kvb::vllm_capacity(m.value(), o, int64_t(80) << 30);
            if (auto k = kvb::engine_kv(m.value(), "vllm", "auto")) (void)kvb::layer_groups(k->view, k->dtypes);
            kvb::BudgetInputs in;
            in.gpu = "h100";
            in.context = 32768;
            (void)kvb::compute_budget(m.value(), in);
        }
        t.push_back(cpu_ms() - t0);
    }
    std::sort(t.begin(), t.end());
    std::printf("%-44s %10.2f MB %10.1f ms  %s\n", name, double(text.size()) / 1e6, t[1], outcome.c_str());
}

}  // namespace

int main() {
    std::printf("%-44s %13s %13s  %s\n", "config", "size", "CPU", "outcome (goal: every one under 1,000 ms)");
    run("gemma3_text, 10,000 layers (55 bytes)", R"({"model_type":"gemma3_text","num_hidden_layers":10000})");
    std::string distinct = R"({"model_type":"llama","num_hidden_layers":10000,"num_attention_heads":65536,
        "hidden_size":65536,"head_dim":1,"num_key_value_heads":[)";
    for (int i = 0; i < 10000; ++i) distinct += (i ? "," : "") + std::to_string(1 << (i % 17));
    distinct += "]}";
    run("llama, 10,000 distinct KV-head counts", distinct);
    run("Qwen3-8B, 10,000 layers", R"({"model_type":"qwen3","num_hidden_layers":10000,"hidden_size":4096,
        "num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"intermediate_size":12288,
        "vocab_size":151936,"max_position_embeddings":40960,"torch_dtype":"bfloat16"})");
    // As many block_configs as the layer limit and the 8 MiB read cap allow.
    int lo = 80, hi = 10000;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (nemotron(mid).size() <= (size_t{8} << 20))
            lo = mid;
        else
            hi = mid - 1;
    }
    run(("Nemotron-Super, " + std::to_string(lo) + " block_configs").c_str(), nemotron(lo));
    return 0;
}
